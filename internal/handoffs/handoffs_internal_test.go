package handoffs

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/phasetrace/phasetrace/perfetto"
	"github.com/phasetrace/phasetrace/strace"
)

// The flow matcher alone: submits and dispatches in either order, matched
// by run_id and task slot to the latest submit that starts strictly before
// the dispatch; a dispatch with no submit is drawn without an arrow.
func TestHandoffs(t *testing.T) {
	var drawn []string
	site := &testSite{draw: func(n *NodeSpan) {
		sp := &n.Span
		drawn = append(drawn, sp.Name+" "+strconv.FormatInt(sp.TS, 10)+" flows="+strconv.Itoa(len(n.Flows))+" ends="+strconv.Itoa(len(n.EndFlows)))
	}}
	f := Queue{Horizon: 1000, Site: site}
	node := func(leaf string, ts int64, run, slot int64) *strace.Span {
		return &strace.Span{Pid: 1, Tid: 1, Name: "node." + leaf, TS: ts, Dur: 10,
			Attrs: []strace.Attr{strace.Int("run_id", run), strace.Int("task_slot", slot)}}
	}
	f.Add(node("dispatch", 120, 1, 0), 0) // logged before its submit
	f.Add(node("submit", 100, 1, 0), 0)
	f.Add(node("submit", 200, 1, 1), 0)
	f.Add(node("dispatch", 200, 1, 1), 0) // same instant as its submit: no arrow
	f.Add(node("dispatch", 300, 2, 0), 0) // no submit of run 2
	f.Drain(10_000, false)
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
	if want := map[Kind]int{SubmitToDispatch: 1}; !cmp.Equal(site.made, want) {
		t.Errorf("arrows made %v, want %v", site.made, want)
	}
	if want := map[Why]int{NoSubmit: 2}; !cmp.Equal(site.not, want) {
		t.Errorf("hand-offs without an arrow %v, want %v", site.not, want)
	}
}

// The indexes hold exactly the waiting spans, in arrival order, whatever
// order their hand-offs come in; a drained window leaves them empty.
func TestHandoffsIndexes(t *testing.T) {
	f := Queue{Horizon: 500, Site: &testSite{}}
	leaves := []string{"submit", "dispatch", "complete"}
	check := func(step int) {
		t.Helper()
		want := map[flowKey][2][]*NodeSpan{}
		wantLaunch := map[launchKey][]*NodeSpan{}
		// What each waiting span is indexed under, from the attributes it
		// was given: a submit or dispatch by its run and slot, a dispatch
		// of a launch also by its run and dispatch id.
		for _, n := range f.spans[f.head:] {
			if n.Span.Name == "node.complete" {
				continue
			}
			run, slot, did := n.Span.Attrs[0].Int, n.Span.Attrs[1].Int, n.Span.Attrs[2].Int
			k := flowKey{pid: 1, runID: run, slot: slot, hasSlot: true}
			w := want[k]
			if n.Span.Name == "node.submit" {
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
		list := func(l nodeList, by int) []*NodeSpan {
			var got []*NodeSpan
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
		f.Add(&strace.Span{Pid: 1, Tid: 1, Name: "node." + leaf, TS: now - rng.Int64N(300), Dur: 10, Attrs: attrs}, 0)
		if step%7 == 0 {
			root := &strace.Span{Pid: 2, Name: "chip.run", TS: now, Attrs: attrs}
			f.LinkRun(root, f.Launcher(root), true, false)
		}
		f.Drain(now, false)
		check(step)
	}
	f.Drain(now, true)
	check(-1)
	if f.head != 0 || len(f.spans) != 0 {
		t.Errorf("%d spans wait after the last drain", len(f.spans)-f.head)
	}
}

// testSite stands in for the conversion around the hand-offs: every
// thread has a track, nothing is outside the window and every pid runs on
// one machine; it counts the arrows made and those not, by kind and why.
type testSite struct {
	draw func(n *NodeSpan) // nil: drawing does nothing
	made map[Kind]int
	not  map[Why]int
}

func (s *testSite) DrawNode(n *NodeSpan) {
	if s.draw != nil {
		s.draw(n)
	}
}
func (s *testSite) SameHost(a, b int32) bool           { return true }
func (s *testSite) Drawable(pid int32, tid int64) bool { return true }
func (s *testSite) Outside(ts, dur int64) bool         { return false }

func (s *testSite) Link(id perfetto.FlowID, kind Kind) {
	if s.made == nil {
		s.made = map[Kind]int{}
	}
	s.made[kind]++
}

func (s *testSite) Unlinked(kind Kind, why Why) {
	if s.not == nil {
		s.not = map[Why]int{}
	}
	s.not[why]++
}
