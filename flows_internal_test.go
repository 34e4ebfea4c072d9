package phasetrace

import (
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
	linked := map[string]int{}
	unlinked := 0
	f := flowWindow{
		horizon: 1000,
		draw: func(sp *heldSpan, flows, endFlows []perfetto.FlowID) {
			drawn = append(drawn, sp.Name+" "+itoa(sp.TS)+" flows="+itoa(int64(len(flows)))+" ends="+itoa(int64(len(endFlows))))
		},
		linked:   func(kind string) { linked[kind]++ },
		unlinked: func(string) { unlinked++ },
	}
	node := func(leaf string, ts int64, run, slot int64) heldSpan {
		return heldSpan{Span: strace.Span{Pid: 1, Tid: 1, Name: "node." + leaf, TS: ts, Dur: 10,
			Attrs: []strace.Attr{strace.Int("run_id", run), strace.Int("task_slot", slot)}}}
	}
	f.add(node("dispatch", 120, 1, 0)) // logged before its submit
	f.add(node("submit", 100, 1, 0))
	f.add(node("submit", 200, 1, 1))
	f.add(node("dispatch", 200, 1, 1)) // same instant as its submit: no arrow
	f.add(node("dispatch", 300, 2, 0)) // no submit of run 2
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
	if linked["node.submit → node.dispatch"] != 1 || unlinked != 2 {
		t.Errorf("linked %v, unlinked %d", linked, unlinked)
	}
}
