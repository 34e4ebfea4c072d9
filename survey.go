package phasetrace

import (
	"math"

	"github.com/phasetrace/phasetrace/internal/firstpass"
	"github.com/phasetrace/phasetrace/strace"
)

// Survey is what a Builder must know before it draws anything: which
// threads interleave runs (and are split into pipeline-slot lanes), what to
// call each process and thread, every clock anchor, and the
// host_phase_records and calibration artifacts. Convert fills one from a
// first pass over the logs; a Go program that holds its values in memory
// gives them to a Survey first, then to the Builder.
//
// What a Survey does not know is drawn all the same, only less well: a
// thread whose runs overlap but that the Survey never saw is not split
// (its overlapping runs go to an overflow lane), a process it never saw is
// labelled from what is drawn first, and a device run is placed with the
// anchors known when it is drawn.
type Survey struct {
	scan    *firstpass.ScanResult
	records map[firstpass.InvKey][]strace.PhasePass
	cal     []firstpass.LoadedCalibration
	n       int64 // values given, for positions
	// machines are the remote machines values came from (remote_values.go).
	machines *surveyMachines
}

// NewSurvey returns an empty Survey.
func NewSurvey() *Survey {
	return &Survey{scan: firstpass.NewScan(), records: map[firstpass.InvKey][]strace.PhasePass{}}
}

// Span learns from a span: its process and thread (named by the families
// and roles of what they emit) and, for a run's root, whether its thread
// interleaves runs. Give every span the Builder will be given (or at least
// every depth-0, node., ext. and device_wall span: those are the ones it
// learns from).
func (s *Survey) Span(sp strace.Span) {
	s.scan.Remote.Span(0, &sp) // the tasks sent to remote workers, if any
	s.scan.First(0, &sp)
	s.scan.ScanSpan(&sp)
}

// WallAnchor adds a [CLOCK_ANCHOR] v=1 wall-clock anchor.
func (s *Survey) WallAnchor(a strace.WallAnchor) {
	s.n++
	s.scan.ScanRecord(&strace.Record{Kind: strace.KindWallAnchor, WallAnchor: a, Pos: strace.Pos{File: valuesName, Line: s.n}})
}

// DeviceAnchor adds a [CLOCK_ANCHOR] v=2 device clock anchor.
func (s *Survey) DeviceAnchor(a strace.DeviceAnchor) {
	s.scan.ScanRecord(&strace.Record{Kind: strace.KindDeviceAnchor, DeviceAnchor: a})
}

// PhasePass adds one pass of the runtime's host_phase_records artifact:
// its records are drawn inside the chip.run.bind of its (pid, inv), and the
// threads that recorded them are named after them.
func (s *Survey) PhasePass(p strace.PhasePass) {
	k := firstpass.InvKey{Pid: p.Pid, Inv: p.Inv}
	s.records[k] = append(s.records[k], p)
	s.scan.PhasePass(&p)
}

// Calibration adds the runtime's clock-calibration samples of device dev
// of process pid: its valid samples are clock anchors.
func (s *Survey) Calibration(pid int32, dev int64, c *strace.Calibration) {
	s.cal = append(s.cal, firstpass.LoadedCalibration{Pid: pid, Dev: dev, Cal: c, Summary: -1})
}

// valuesName is the name positions of values given to a Builder or a
// Survey are reported under: "values:N" is the N-th value given.
const valuesName = "values"

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
		s.scan.Remote.Grow(i)
		s.scan.Remote.Banner[i] = name
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
	s.scan.Remote.Span(i, &sp)
	s.scan.ScanSpan(&sp)
}

// RemoteWallAnchor adds a [CLOCK_ANCHOR] v=1 wall-clock anchor a process
// of machine wrote.
func (s *Survey) RemoteWallAnchor(machine string, a strace.WallAnchor) {
	i := s.machine(machine)
	a.Pid = s.machines.tracePid(i, a.Pid)
	s.scan.Remote.Pid(i, a.Pid)
	s.n++
	s.scan.Input = i
	s.scan.ScanRecord(&strace.Record{Kind: strace.KindWallAnchor, WallAnchor: a, Pos: strace.Pos{File: valuesName, Line: s.n}})
	s.scan.Input = 0
}

// RemoteDeviceAnchor adds a device clock anchor of a chip of machine,
// its host_ns on that machine's clock.
func (s *Survey) RemoteDeviceAnchor(machine string, a strace.DeviceAnchor) {
	i := s.machine(machine)
	a.Pid = s.machines.tracePid(i, a.Pid)
	s.scan.Remote.Pid(i, a.Pid)
	s.scan.Input = i
	s.scan.ScanRecord(&strace.Record{Kind: strace.KindDeviceAnchor, DeviceAnchor: a})
	s.scan.Input = 0
}
