package reduce

import "testing"

// builder assembles device-phase buffers for tests, one stamped record at
// a time, starting from the host's reset state.
type builder struct {
	t *testing.T
	b *Buffer
}

func newBuilder(t *testing.T, threads int, withTail bool) *builder {
	t.Helper()
	b, err := NewBuffer(threads, withTail)
	if err != nil {
		t.Fatal(err)
	}
	return &builder{t: t, b: b}
}

// phase stamps thread th's record for p.
func (bb *builder) phase(th int, p Phase, start, end Cycles) *builder {
	bb.b.Phases[th*NumPhases+int(p)] = Record{Start: start, End: end}
	return bb
}

// slot stamps thread th's task-timing slot s and marks the tail used.
func (bb *builder) slot(th, s int, dispatch, finish Cycles) *builder {
	bb.b.Slots[th*NumSlots+s] = Record{Start: dispatch, End: finish}
	bb.b.Header.TailUsed = 1
	return bb
}

func (bb *builder) bytes() []byte {
	bb.t.Helper()
	out, err := bb.b.AppendBinary(nil)
	if err != nil {
		bb.t.Fatal(err)
	}
	return out
}

// typical is a two-thread run at 50 MHz (20 ns per cycle): thread 0
// orchestrates, thread 1 schedules.
func typical(t *testing.T) *builder {
	return newBuilder(t, 2, true).
		phase(0, RunWall, 1000, 2000).        // whole run, 20 µs
		phase(1, RunWall, 990, 2010).         // the scheduler's wall is wider: min/max wins
		phase(0, Preamble, 1010, 1100).       // origin: earliest sub-phase start
		phase(1, Preamble, 1020, 1090).       //
		phase(0, GraphBuild, 1100, 1900).     //
		phase(0, ConfigValidate, 1110, 1150). //
		phase(0, ArenaWire, 1150, 1200).      //
		phase(0, SmReset, 1200, 1250).        //
		phase(0, OrchWindow, 1250, 1700).     //
		phase(1, SchedWindow, 1251, 1890).    // sched outlasts orch
		phase(1, PostOrch, 1900, 1990).       // last thread only
		slot(1, 3, 1300, 1400).               // slot 3 on the scheduler
		slot(0, 3, 1280, 1350)                // and a merged window on thread 0
}
