package phasetrace

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/phasetrace/phasetrace/perfetto"
)

// An arrow is counted once both its ends are handed and a flush has written
// them; an arrow with an end not drawn is counted under a reason once, and
// its id is left out of the other end when that is yet to be handed.
func TestArrowAccount(t *testing.T) {
	sum := &Summary{}
	site := &testArrowSite{noTrack: 99}
	a := arrowAccount{acct: newAccount(sum), site: site}
	for id := perfetto.FlowID(1); id <= 5; id++ {
		a.add(id, FlowDispatchToRun)
	}
	a.handed([]perfetto.FlowID{1, 2, 3})
	a.handed([]perfetto.FlowID{1})
	if len(sum.Flows) != 0 {
		t.Errorf("counted before the flush: %v", sum.Flows)
	}
	a.handed([]perfetto.FlowID{2})
	a.refused([]perfetto.FlowID{2}, nil) // the flush refuses an end of 2
	a.flushed()
	a.dropped([]perfetto.FlowID{4}) // 4's first end is left out
	if got := a.live([]perfetto.FlowID{3, 4, 5}); !cmp.Equal(got, []perfetto.FlowID{3, 5}) {
		t.Errorf("live %v, want 4 left out", got)
	}
	a.handed([]perfetto.FlowID{3, 5})
	a.flushed()
	// 6 is planned between threads, one of which (99) has no track:
	// neither end gets it.
	a.add(6, FlowDispatchToRun)
	a.between(6, arrowEnd{pid: 1, tid: 1}, arrowEnd{pid: 1, tid: 99})
	if got := a.live([]perfetto.FlowID{6}); len(got) != 0 {
		t.Errorf("live %v, want 6 left out of its first end", got)
	}
	if got := a.live([]perfetto.FlowID{6}); len(got) != 0 {
		t.Errorf("live %v, want 6 left out of its second end", got)
	}
	if _, ok := a.open[6]; ok {
		t.Error("6 still open once both its ends came")
	}
	// 7's second end is refused by a later flush than the one that wrote
	// its first: the trace keeps the first end's id, and says so.
	a.add(7, FlowDispatchToRun)
	a.handed([]perfetto.FlowID{7})
	a.flushed()
	a.handed([]perfetto.FlowID{7})
	a.refused([]perfetto.FlowID{7}, nil)
	a.flushed()
	// 8's second end is refused by the flush that wrote its first, after
	// writing it.
	a.add(8, FlowDispatchToRun)
	a.handed([]perfetto.FlowID{8})
	a.handed([]perfetto.FlowID{8})
	a.refused([]perfetto.FlowID{8}, []perfetto.FlowID{8})
	a.flushed()
	if a.stranded != 2 {
		t.Errorf("%d arrows stranded, want 2", a.stranded)
	}
	a.close() // 5's other end never came
	if want := (FlowCounts{FlowDispatchToRun: 2}); !cmp.Equal(sum.Flows, want) {
		t.Errorf("linked %v, want %v", sum.Flows, want)
	}
	if want := (ReasonCounts{ReasonDispatchToRunUnended: 5, ReasonLinkNoTrack: 1}); !cmp.Equal(sum.Unlinked, want) {
		t.Errorf("unlinked %v, want %v", sum.Unlinked, want)
	}
}

// An arrow abandoned after one end was handed is counted under the reason
// given, once, and forgotten: also when its first end was not drawn
// (counted then), and whichever end it abandons.
func TestArrowAbandoned(t *testing.T) {
	t.Parallel()
	sum := &Summary{}
	a := arrowAccount{acct: newAccount(sum), site: &testArrowSite{}}
	a.add(1, FlowRunToDevice)
	a.handed(a.live([]perfetto.FlowID{1}))
	a.abandoned([]perfetto.FlowID{1}, ReasonRunToDeviceNotAfter)
	a.add(2, FlowRunToDevice)
	a.dropped(a.live([]perfetto.FlowID{2})) // its runner_run outside the window
	a.abandoned([]perfetto.FlowID{2}, ReasonRunToDeviceUnended)
	a.abandoned([]perfetto.FlowID{1, 2, 3}, ReasonRunToDeviceUnended) // settled already, or never made
	a.flushed()
	if len(a.open) != 0 {
		t.Errorf("%d arrows still open", len(a.open))
	}
	a.close()
	if len(sum.Flows) != 0 {
		t.Errorf("an abandoned arrow counted drawn: %v", sum.Flows)
	}
	if want := (ReasonCounts{ReasonRunToDeviceNotAfter: 1, ReasonRunToDeviceUnended: 1}); !cmp.Equal(sum.Unlinked, want) {
		t.Errorf("unlinked %v, want %v", sum.Unlinked, want)
	}
}

// testArrowSite stands in for the slice drawer around an arrow account:
// every thread has a track but noTrack's, nothing is outside the window
// and the trace is not split.
type testArrowSite struct{ noTrack int64 }

func (s *testArrowSite) drawable(pid int32, tid int64) bool { return tid == 0 || tid != s.noTrack }
func (s *testArrowSite) outside(ts, dur int64) bool         { return false }
func (s *testArrowSite) part() int                          { return 0 }
