package phasetrace

import (
	"math"

	"github.com/phasetrace/phasetrace/strace"
)

// Remote machines given as values: a Survey learns which machine each
// value came from (RemoteSpan and the anchors' Remote… methods), a Builder
// draws them as Convert draws the logs of several machines. Every pid of a
// remote machine is given a trace pid of its own (the slices keep the OS
// pid as os_pid), since a pid seen on one machine may come later on
// another.

// surveyMachines is what a Survey knows of remote machines: each one's
// index among the "logs" (0 is the dispatching host's values) and its pids'
// trace pids.
type surveyMachines struct {
	index   map[string]int
	names   []string // by index; names[0] is the dispatching host's
	pidMaps []map[int32]int32
	next    int32
}

func (s *Survey) machine(name string) int {
	m := s.machines
	if m == nil {
		m = &surveyMachines{index: map[string]int{}, names: []string{valuesName}, pidMaps: []map[int32]int32{nil}, next: math.MaxInt32}
		s.machines = m
	}
	i, ok := m.index[name]
	if !ok {
		i = len(m.names)
		m.index[name] = i
		m.names = append(m.names, name)
		m.pidMaps = append(m.pidMaps, map[int32]int32{})
		s.scan.remote.grow(i)
		s.scan.remote.banner[i] = name
	}
	return i
}

// tracePid returns the trace pid of pid on machine i.
func (m *surveyMachines) tracePid(i int, pid int32) int32 {
	if v, ok := m.pidMaps[i][pid]; ok {
		return v
	}
	v := m.next
	m.next--
	m.pidMaps[i][pid] = v
	return v
}

// RemoteSpan learns from a span that machine (a remote L3 worker daemon's
// machine, named as its daemon banner names it) logged on its own clock:
// its run, its process and thread. Give every span of a remote machine
// that the Builder will be given by RemoteSpan.
func (s *Survey) RemoteSpan(machine string, sp strace.Span) {
	i := s.machine(machine)
	sp.Pid = s.machines.tracePid(i, sp.Pid)
	s.scan.remote.span(i, &sp)
	s.scan.scanSpan(&sp)
}

// RemoteWallAnchor adds a [CLOCK_ANCHOR] v=1 wall-clock anchor a process
// of machine wrote.
func (s *Survey) RemoteWallAnchor(machine string, a strace.WallAnchor) {
	i := s.machine(machine)
	a.Pid = s.machines.tracePid(i, a.Pid)
	s.scan.remote.pid(i, a.Pid)
	s.n++
	s.scan.input = i
	s.scan.scanRecord(&strace.Record{Kind: strace.KindWallAnchor, WallAnchor: a, Pos: strace.Pos{File: valuesName, Line: s.n}})
	s.scan.input = 0
}

// RemoteDeviceAnchor adds a device clock anchor of a chip of machine,
// its host_ns on that machine's clock.
func (s *Survey) RemoteDeviceAnchor(machine string, a strace.DeviceAnchor) {
	i := s.machine(machine)
	a.Pid = s.machines.tracePid(i, a.Pid)
	s.scan.remote.pid(i, a.Pid)
	s.scan.input = i
	s.scan.scanRecord(&strace.Record{Kind: strace.KindDeviceAnchor, DeviceAnchor: a})
	s.scan.input = 0
}

// planValues plans the remote machines a Survey knows of, and returns the
// shifts for start (nil when there are none).
func (c *converter) planValues(s *Survey) func(int) []int64 {
	m := s.machines
	if m == nil {
		return nil
	}
	c.names = m.names
	c.scan.remote.grow(len(m.names) - 1)
	p := c.planHosts(len(m.names))
	if p == nil {
		return nil
	}
	c.pidMaps = m.pidMaps
	c.settleRemote(p, m.names)
	return c.scan.shifts
}

// RemoteSpan draws a span machine logged on its own clock, placed on the
// dispatching host's axis as Convert places that machine's logs. A machine
// the Survey never heard of is drawn at its own times.
func (b *Builder) RemoteSpan(machine string, sp strace.Span) error {
	if b.closed {
		return ErrBuilderClosed
	}
	b.c.sum.Spans.Read++
	rec := strace.Record{Kind: strace.KindSpan, Span: sp.Clone()}
	if m := b.c.survey.machines; m != nil && b.c.remote != nil {
		if i, ok := m.index[machine]; ok {
			rec.Span.Pid = m.tracePid(i, rec.Span.Pid)
			if i < len(b.c.shift) && !rec.Span.IsDevice() {
				rec.Span.TS += b.c.shift[i]
			}
			if !b.c.remote.adjust(i, &rec, nil) {
				b.c.unmapped(&rec, b.next())
				return nil
			}
		}
	}
	b.c.span(&rec, b.next())
	return nil
}
