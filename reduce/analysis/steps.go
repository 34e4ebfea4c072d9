package analysis

import (
	"strconv"

	"github.com/phasetrace/phasetrace/reduce"
	"github.com/phasetrace/phasetrace/strace"
)

// NullInt is an integer column that may be empty: Valid is false where the
// run has no such value (a phase it did not log, wall time without an
// anchor). CSV writes it empty, JSON and Parquet as null.
type NullInt struct {
	Int   int64
	Valid bool
}

// Int returns v as a valid NullInt.
func Int(v int64) NullInt { return NullInt{Int: v, Valid: true} }

// Step is one row of the steps table: one run, the spans sharing a
// (pid, inv) whose root is a chip.run. Host times are trace time
// (CLOCK_MONOTONIC ns, the trace's axis); device durations are the
// device's own (device-domain ns, as logged). [StepColumns] documents each
// field under its column name.
type Step struct {
	Run       int64 // the trace's run number (debug.run), 0 when not drawn through a trace
	Pid       int32
	Tid       int64
	Slot      NullInt // the chip.run's slot_id: its pipeline lane
	Dev       NullInt // device_wall's dev=
	Hid       uint64
	Inv       uint64
	Start     int64   // chip.run's host start
	Wall      NullInt // Start on the trace's wall clock
	ChipRun   int64   // chip.run's duration
	Bind      NullInt // chip.run.bind's duration
	Prep      NullInt // chip.run start → chip.run.runner_run start
	Gap       NullInt // Start − the end of the previous run's chip.run on the lane
	Cold      bool    // its callable's first run in its process
	Phases    [reduce.NumPhases]NullInt
	Effective NullInt // orch ∪ sched
	Bound     NullInt // the widest bound_ns of its drawn device slices
	// Part is the file of the split trace that holds the run; empty for
	// a trace in one piece.
	Part string
	// Binds are its bind's segments, one row each of the binds table.
	Binds []StepSegment
}

// DeviceWall is the run's device_wall duration (device ns).
func (s *Step) DeviceWall() NullInt { return s.Phases[reduce.RunWall] }

// StepSegment is one row of the binds table: a segment of a run's bind as
// the trace draws it, from one source.
type StepSegment struct {
	Segment string // args, arena_build, ... (strace.BindSegments)
	Source  SegmentSource
	Start   int64
	Dur     int64
	// CPU is the bind thread's CPU time within it (cpu_ns), where the
	// segment carries it; off-CPU is Dur − CPU.
	CPU NullInt
}

// OffCPU is the segment's off-CPU time, Dur − CPU, where CPU is known.
func (b *StepSegment) OffCPU() NullInt {
	if !b.CPU.Valid {
		return NullInt{}
	}
	return Int(b.Dur - b.CPU.Int)
}

// String returns the source's name in the binds table: span, bind_phase
// or host_phase_records.
func (s SegmentSource) String() string {
	switch s {
	case FromSpan:
		return "span"
	case FromBindLine:
		return "bind_phase"
	case FromRecords:
		return "host_phase_records"
	}
	return "SegmentSource(" + strconv.Itoa(int(s)) + ")"
}

// Steps computes the rows of the steps table one run at a time: Begin, the
// run's spans (Span) and bind segments (BindSegment), then End. It keeps,
// besides the row being built, the end of the last run of each lane (a
// thread and pipeline slot of a process), for the gap: nothing grows with
// the runs.
type Steps struct {
	cur   Step
	root  bool
	prepA int64 // runner_run's start, when prepB
	prepB bool
	// orch ∪ sched, in device ns, while effOK
	eff   reduce.DeviceWindow
	effOK bool
	lanes map[stepLane]int64 // the chip.run end of each lane's last run
}

type stepLane struct {
	pid  int32
	tid  int64
	slot int64
	has  bool
}

// NewSteps returns an empty [Steps].
func NewSteps() *Steps { return &Steps{lanes: map[stepLane]int64{}} }

// Begin starts the next run; the row of the last is reused.
func (s *Steps) Begin() {
	binds := s.cur.Binds[:0]
	clear(s.cur.Binds)
	s.cur = Step{Binds: binds}
	s.root, s.prepB, s.effOK = false, false, false
}

// Span adds a span of the run: its chip.run root, its bind and
// runner_run, its device_wall and device phases. Other spans, and a second
// span of a name, change nothing. sp is not kept.
func (s *Steps) Span(sp *strace.Span) {
	if sp.IsDevice() {
		s.device(sp)
		return
	}
	switch sp.Name {
	case strace.SpanRun:
		if sp.Depth != 0 || s.root {
			return
		}
		s.root = true
		c := &s.cur
		c.Pid, c.Tid, c.Hid, c.Inv, c.Start, c.ChipRun = sp.Pid, sp.Tid, sp.Hid, sp.Inv, sp.TS, sp.Dur
		if a, ok := sp.Attr("slot_id"); ok && a.Type == strace.TypeInt {
			c.Slot = Int(a.Int)
		}
	case strace.SpanBind:
		if !s.cur.Bind.Valid {
			s.cur.Bind = Int(sp.Dur)
		}
	case strace.SpanRunnerRun:
		if !s.prepB {
			s.prepA, s.prepB = sp.TS, true
		}
	}
}

// device adds a device span: device_wall or one of its phases, whose
// device-domain durations add up when a name is logged twice.
func (s *Steps) device(sp *strace.Span) {
	p, ok := reduce.PhaseNamed(sp.Name)
	if !ok {
		return
	}
	c := &s.cur
	c.Phases[p] = Int(c.Phases[p].Int + sp.Dur)
	switch p {
	case reduce.RunWall:
		if a, ok := sp.Attr("dev"); ok && a.Type == strace.TypeInt && !c.Dev.Valid {
			c.Dev = Int(a.Int)
		}
	case reduce.OrchWindow, reduce.SchedWindow:
		w := reduce.DeviceWindow{Start: reduce.DeviceNanos(sp.TS), End: reduce.DeviceNanos(sp.End())}
		if s.effOK {
			w = reduce.Effective(s.eff, w)
		}
		s.eff, s.effOK = w, true
	}
}

// BindSegment adds a segment of the run's bind.
func (s *Steps) BindSegment(b StepSegment) { s.cur.Binds = append(s.cur.Binds, b) }

// End finishes the run's row, and returns it, valid until the next Begin;
// ok is false for a run without a chip.run root, which has no row.
func (s *Steps) End() (row *Step, ok bool) {
	if !s.root {
		return nil, false
	}
	c := &s.cur
	if s.prepB {
		c.Prep = Int(s.prepA - c.Start)
	}
	if s.effOK {
		c.Effective = Int(int64(s.eff.Len()))
	}
	k := stepLane{pid: c.Pid, tid: c.Tid, slot: c.Slot.Int, has: c.Slot.Valid}
	if last, ok := s.lanes[k]; ok {
		c.Gap = Int(c.Start - last)
	}
	s.lanes[k] = c.Start + c.ChipRun
	return c, true
}
