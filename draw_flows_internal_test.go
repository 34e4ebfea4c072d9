package phasetrace

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/phasetrace/phasetrace/perfetto"
	"github.com/phasetrace/phasetrace/strace"
)

// The flow matcher alone: submits and dispatches in either order, matched
// by run_id and task slot to the latest submit that starts strictly before
// the dispatch; a dispatch with no submit is drawn without an arrow.
func TestFlowWindow(t *testing.T) {
	var drawn []string
	sum := &Summary{}
	led := newAccount(sum)
	f := handoffs{
		horizon: 1000,
		site: &testSite{draw: func(n *nodeSpan) {
			sp := &n.span
			drawn = append(drawn, sp.Name+" "+itoa(sp.TS)+" flows="+itoa(int64(len(n.flows)))+" ends="+itoa(int64(len(n.endFlows))))
		}},
		arrows: &arrowAccount{acct: led},
		acct:   led,
	}
	node := func(leaf string, ts int64, run, slot int64) *strace.Span {
		return &strace.Span{Pid: 1, Tid: 1, Name: "node." + leaf, TS: ts, Dur: 10,
			Attrs: []strace.Attr{strace.Int("run_id", run), strace.Int("task_slot", slot)}}
	}
	f.add(node("dispatch", 120, 1, 0), 0) // logged before its submit
	f.add(node("submit", 100, 1, 0), 0)
	f.add(node("submit", 200, 1, 1), 0)
	f.add(node("dispatch", 200, 1, 1), 0) // same instant as its submit: no arrow
	f.add(node("dispatch", 300, 2, 0), 0) // no submit of run 2
	f.drain(10_000, false)
	want := []string{
		"node.dispatch 120 flows=0 ends=1",
		"node.submit 100 flows=1 ends=0",
		"node.submit 200 flows=0 ends=0",
		"node.dispatch 200 flows=0 ends=0",
		"node.dispatch 300 flows=0 ends=0",
	}
	if diff := cmp.Diff(want, drawn); diff != "" {
		t.Errorf("drawn (-want +got):\n%s", diff)
	}
	made, unlinked := 0, int64(0)
	for _, st := range f.arrows.open {
		if st.kind == FlowSubmitToDispatch {
			made++
		}
	}
	for _, n := range sum.Unlinked {
		unlinked += n
	}
	if made != 1 || unlinked != 2 {
		t.Errorf("%d arrows made, %d unlinked", made, unlinked)
	}
}

// The indexes hold exactly the waiting spans, in arrival order, whatever
// order their hand-offs come in; a drained window leaves them empty.
func TestFlowWindowIndexes(t *testing.T) {
	led := newAccount(&Summary{})
	f := handoffs{horizon: 500, site: &testSite{}, arrows: &arrowAccount{acct: led}, acct: led}
	leaves := []string{"submit", "dispatch", "complete"}
	check := func(step int) {
		t.Helper()
		want := map[flowKey][2][]*nodeSpan{}
		wantLaunch := map[launchKey][]*nodeSpan{}
		// What each waiting span is indexed under, from the attributes it
		// was given: a submit or dispatch by its run and slot, a dispatch
		// of a launch also by its run and dispatch id.
		for _, n := range f.spans[f.head:] {
			if n.span.Name == "node.complete" {
				continue
			}
			run, slot, did := n.span.Attrs[0].Int, n.span.Attrs[1].Int, n.span.Attrs[2].Int
			k := flowKey{pid: 1, runID: run, slot: slot, hasSlot: true}
			w := want[k]
			if n.span.Name == "node.submit" {
				w[0] = append(w[0], n)
			} else {
				w[1] = append(w[1], n)
				if did != 0 {
					lk := launchKey{run, did}
					wantLaunch[lk] = append(wantLaunch[lk], n)
				}
			}
			want[k] = w
		}
		list := func(l nodeList, by int) []*nodeSpan {
			var got []*nodeSpan
			for n := l.head; n != nil; n = n.next[by] {
				got = append(got, n)
			}
			if len(got) > 0 && l.tail != got[len(got)-1] || len(got) == 0 && l.tail != nil {
				t.Errorf("step %d: a list's tail is not its last span", step)
			}
			return got
		}
		if f.lastLists != nil && f.keys[f.lastKey] != f.lastLists {
			t.Fatalf("step %d: the last key's lists are not those the index holds for it", step)
		}
		if len(f.keys) != len(want) || len(f.launches) != len(wantLaunch) {
			t.Fatalf("step %d: %d keys and %d launch keys indexed, want %d and %d", step, len(f.keys), len(f.launches), len(want), len(wantLaunch))
		}
		for k, w := range want {
			l := f.keys[k]
			if l == nil || !slices.Equal(list(l.submits, byKey), w[0]) || !slices.Equal(list(l.waiting, byKey), w[1]) {
				t.Fatalf("step %d: key %v does not list its waiting spans", step, k)
			}
		}
		for k, w := range wantLaunch {
			if l := f.launches[k]; l == nil || !slices.Equal(list(*l, byLaunch), w) {
				t.Fatalf("step %d: launch key %v does not list its waiting dispatches", step, k)
			}
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	now := int64(0)
	for step := range 5000 {
		now += rng.Int64N(100)
		leaf := leaves[rng.IntN(len(leaves))]
		attrs := []strace.Attr{strace.Int("run_id", rng.Int64N(4)), strace.Int("task_slot", rng.Int64N(2)), strace.Int("dispatch_id", rng.Int64N(3))}
		f.add(&strace.Span{Pid: 1, Tid: 1, Name: "node." + leaf, TS: now - rng.Int64N(300), Dur: 10, Attrs: attrs}, 0)
		if step%7 == 0 {
			root := &strace.Span{Pid: 2, Name: "chip.run", TS: now, Attrs: attrs}
			f.linkRun(root, f.launcher(root), true, false)
		}
		f.drain(now, false)
		check(step)
	}
	f.drain(now, true)
	check(-1)
	if f.head != 0 || len(f.spans) != 0 {
		t.Errorf("%d spans wait after the last drain", len(f.spans)-f.head)
	}
}

// An arrow is counted once both its ends are handed and a flush has written
// them; an arrow with an end not drawn is counted under a reason once, and
// its id is left out of the other end when that is yet to be handed.
func TestArrowLedger(t *testing.T) {
	sum := &Summary{}
	site := &testSite{noTrack: 99}
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
	a := arrowAccount{acct: newAccount(sum), site: &testSite{}}
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

// testSite stands in for the conversion around a hand-offs or an arrow
// account: every thread has a track but noTrack's, nothing is outside the
// window, the trace is not split and every pid runs on one machine.
type testSite struct {
	draw    func(n *nodeSpan) // nil: drawing does nothing
	noTrack int64
}

func (s *testSite) drawNode(n *nodeSpan) {
	if s.draw != nil {
		s.draw(n)
	}
}
func (s *testSite) sameHost(a, b int32) bool           { return true }
func (s *testSite) drawable(pid int32, tid int64) bool { return tid == 0 || tid != s.noTrack }
func (s *testSite) outside(ts, dur int64) bool         { return false }
func (s *testSite) part() int                          { return 0 }
