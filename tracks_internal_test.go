package phasetrace

import (
	"bytes"
	"testing"

	"github.com/phasetrace/phasetrace/perfetto"
	"github.com/phasetrace/phasetrace/perfetto/check"
	"github.com/phasetrace/phasetrace/strace"
)

// The track set alone: a thread the survey split gets a lane per pipeline
// slot; a thread it did not split keeps its own track; past the writer's
// track limit the set hands out the zero Track.
func TestTrackSet(t *testing.T) {
	scan := newScan()
	for _, sp := range []strace.Span{
		{Pid: 1, Tid: 10, Inv: 1, Name: "chip.run", TS: 100, Dur: 100, Attrs: []strace.Attr{strace.Int("slot_id", 0)}},
		{Pid: 1, Tid: 10, Inv: 2, Name: "chip.run", TS: 150, Dur: 100, Attrs: []strace.Attr{strace.Int("slot_id", 1)}},
		{Pid: 1, Tid: 11, Inv: 3, Name: "chip.run", TS: 150, Dur: 100},
	} {
		scan.scanSpan(&sp)
	}
	scan.decide()
	var b bytes.Buffer
	w := perfetto.NewWriter(&b, perfetto.WithMaxTracks(6))
	ts := newTrackSet(w, scan)
	ts.declare() // the process and the unsplit thread 11
	slot0, split := ts.lane(1, 10, 0, true)
	slot1, _ := ts.lane(1, 10, 1, true)
	plain, split11 := ts.lane(1, 11, 0, true)
	if !split || split11 || slot0 == slot1 || slot0.IsZero() || plain.IsZero() {
		t.Fatalf("lanes: split %v/%v, slot lanes %v %v, thread 11 %v", split, split11, slot0, slot1, plain)
	}
	group := ts.deviceGroup(1, 0)
	phases := ts.device(1, 0, group, deviceLane("chip.run.runner_run.device_wall.preamble"))
	if group.IsZero() || phases.IsZero() {
		t.Fatal("device tracks within the limit")
	}
	if over := ts.device(1, 0, group, "orch"); !over.IsZero() {
		t.Errorf("a seventh track past a limit of 6: %v", over)
	}
	w.Close()
	tr, err := check.ReadBytes(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tk := range tr.Tracks {
		names = append(names, tk.Name)
	}
	want := "[simpler chip child (pid=1) chip child pipeline slot 0 (tid 10) pipeline slot 1 (tid 10) device 0 phases]"
	if got := fmtNames(names); got != want {
		t.Errorf("tracks %s, want %s", got, want)
	}
}

func fmtNames(n []string) string {
	s := "["
	for i, x := range n {
		if i > 0 {
			s += " "
		}
		s += x
	}
	return s + "]"
}
