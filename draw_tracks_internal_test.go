package phasetrace

import (
	"bytes"
	"io"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/phasetrace/phasetrace/internal/firstpass"
	"github.com/phasetrace/phasetrace/internal/held"
	"github.com/phasetrace/phasetrace/internal/tracks"
	"github.com/phasetrace/phasetrace/perfetto"
	"github.com/phasetrace/phasetrace/perfetto/check"
	"github.com/phasetrace/phasetrace/strace"
)

// The track set alone: a thread the survey split gets a lane per pipeline
// slot, under its own track; a thread it did not split keeps its own track; no track is
// declared before something is drawn on it, its process's with the first
// of them; past the writer's track limit the set hands out the zero Track.
func TestTrackSet(t *testing.T) {
	scan := firstpass.NewScan()
	for _, sp := range []strace.Span{
		{Pid: 1, Tid: 10, Inv: 1, Name: "chip.run", TS: 100, Dur: 100, Attrs: []strace.Attr{strace.Int("slot_id", 0)}},
		{Pid: 1, Tid: 10, Inv: 2, Name: "chip.run", TS: 150, Dur: 100, Attrs: []strace.Attr{strace.Int("slot_id", 1)}},
		{Pid: 1, Tid: 11, Inv: 3, Name: "chip.run", TS: 150, Dur: 100},
	} {
		scan.ScanSpan(&sp)
	}
	scan.Decide()
	var b bytes.Buffer
	w := perfetto.NewWriter(&b, perfetto.WithMaxTracks(7))
	ts := tracks.NewTrackSet(w, scan)
	ts.Declare()
	if n := w.Stats().Tracks; n != 0 {
		t.Fatalf("%d tracks declared before anything is drawn", n)
	}
	slot0, split := ts.Lane(1, 10, 0, true)
	slot1, _ := ts.Lane(1, 10, 1, true)
	plain, split11 := ts.Lane(1, 11, 0, true)
	if !split || split11 || slot0 == slot1 || slot0.IsZero() || plain.IsZero() {
		t.Fatalf("lanes: split %v/%v, slot lanes %v %v, thread 11 %v", split, split11, slot0, slot1, plain)
	}
	group := ts.DeviceGroup(1, 0)
	phases := ts.Device(1, 0, group, tracks.DeviceLane("chip.run.runner_run.device_wall.preamble"))
	if group.IsZero() || phases.IsZero() {
		t.Fatal("device tracks within the limit")
	}
	if over := ts.Device(1, 0, group, "orch"); !over.IsZero() {
		t.Errorf("an eighth track past a limit of 7: %v", over)
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
	want := "[simpler chip child (pid=1) chip child pipeline slot 0 pipeline slot 1 chip child device 0 phases]"
	if got := fmtNames(names); got != want {
		t.Errorf("tracks %s, want %s", got, want)
	}
}

// Near the track limit no track is spent on one that cannot be drawn: a
// thread needs its process's track too, a device group the track of a
// lane in it.
func TestTrackSetSpendsNothingInVain(t *testing.T) {
	w := perfetto.NewWriter(io.Discard, perfetto.WithMaxTracks(2))
	if g := tracks.NewTrackSet(w, firstpass.NewScan()).DeviceGroup(1, 0); !g.IsZero() || w.Stats().Tracks != 0 {
		t.Fatalf("a device group with no room for its process and a lane: %v, %d tracks", g, w.Stats().Tracks)
	}
	w.Close()
	w = perfetto.NewWriter(io.Discard, perfetto.WithMaxTracks(3))
	ts := tracks.NewTrackSet(w, firstpass.NewScan())
	ts.Declare()
	if th := ts.Thread(1, 10); th.IsZero() || w.Stats().Tracks != 2 {
		t.Fatalf("thread 10 and its process: %v, %d tracks", th, w.Stats().Tracks)
	}
	if g := ts.DeviceGroup(1, 0); !g.IsZero() || w.Stats().Tracks != 2 {
		t.Errorf("a device group with no room for a lane: %v, %d tracks", g, w.Stats().Tracks)
	}
	if th := ts.Thread(2, 20); !th.IsZero() || w.Stats().Tracks != 2 {
		t.Errorf("a thread with no room for its process: %v, %d tracks", th, w.Stats().Tracks)
	}
	if th := ts.Thread(1, 11); th.IsZero() || w.Stats().Tracks != 3 {
		t.Errorf("a thread of a process declared: %v, %d tracks", th, w.Stats().Tracks)
	}
	w.Close()
}

// The survey learns of at most known threads and processes: past them it
// learns only of those it knows, so that a log with a new thread on every
// line does not grow it.
func TestSurveyKnowsAtMost(t *testing.T) {
	scan := firstpass.NewScan()
	scan.Known = 4
	for th := range 10 {
		for r := range 3 {
			sp := strace.Span{Pid: int32(1 + th%2), Tid: int64(10 + th), Inv: uint64(r), Name: "chip.run", TS: int64(r * 100), Dur: 50}
			scan.ScanSpan(&sp)
		}
	}
	dev := strace.Span{Pid: 9, Tid: 9, Inv: 1, Depth: 2, Name: strace.SpanDeviceWall, Dur: 5, Attrs: []strace.Attr{strace.String("clk", "dev")}}
	scan.ScanSpan(&dev)
	if len(scan.Threads) != 4 || len(scan.Procs) != 2 {
		t.Fatalf("%d threads and %d processes known, want 4 and 2", len(scan.Threads), len(scan.Procs))
	}
	for k, th := range scan.Threads {
		if k.Tid >= 14 || th.Roots != 3 {
			t.Errorf("thread %d known with %d roots, want one of the first four, with 3", k.Tid, th.Roots)
		}
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

// What the track set remembers of the device lanes asked for last answers
// as its maps do, and so do its threads: asked in turns of fewer and of more keys
// than it remembers, each thread and device lane is the track its map
// holds.
func TestTrackSetRemembers(t *testing.T) {
	ts := tracks.NewTrackSet(perfetto.NewWriter(&bytes.Buffer{}), firstpass.NewScan())
	lanes := []string{"phases", "orch", "sched", "effective", "task_slot_0", "task_slot_1"}
	for _, n := range []int{1, 2, 4, 5, tracks.DevMemo - 1, tracks.DevMemo, tracks.DevMemo + 1, 3 * tracks.DevMemo} {
		for round := range 3 {
			for i := range n {
				// Neighbours share a pid, a device or a lane.
				pid, tid, dev, lane := int32(1+i/5%2), int64(10+i), int32(i%2), lanes[i/2%len(lanes)]
				th := ts.Thread(pid, tid)
				if want := ts.Lanes[tracks.LaneKey{Pid: pid, Tid: tid, Slot: -1}]; th.IsZero() || th != want {
					t.Fatalf("%d keys, round %d: thread %d/%d is %v, want %v", n, round, pid, tid, th, want)
				}
				d := ts.Device(pid, dev, ts.DeviceGroup(pid, dev), lane)
				if want := ts.DevLanes[tracks.DevLane{Pid: pid, Dev: dev, Lane: lane}]; d.IsZero() || d != want {
					t.Fatalf("%d keys, round %d: device %d/%d %s is %v, want %v", n, round, pid, dev, lane, d, want)
				}
			}
		}
	}
	// The same tid under two pids (two machines' logs), and the keys of a
	// memo's empty entries, asked of a fresh set.
	ts = tracks.NewTrackSet(perfetto.NewWriter(&bytes.Buffer{}), firstpass.NewScan())
	for round := range 3 {
		for _, k := range []tracks.LaneKey{{Pid: 0, Tid: 0, Slot: -1}, {Pid: 1, Tid: 7, Slot: -1}, {Pid: 2, Tid: 7, Slot: -1}, {Pid: 1, Tid: 7, Slot: -1}, {Pid: 0, Tid: 0, Slot: -1}, {Pid: 2, Tid: 7, Slot: -1}} {
			th := ts.Thread(k.Pid, k.Tid)
			if want := ts.Lanes[k]; th.IsZero() || th != want {
				t.Fatalf("round %d: thread %d/%d is %v, want %v", round, k.Pid, k.Tid, th, want)
			}
			d := ts.Device(k.Pid, 0, ts.DeviceGroup(k.Pid, 0), "")
			if want := ts.DevLanes[tracks.DevLane{Pid: k.Pid, Dev: 0, Lane: ""}]; d.IsZero() || d != want {
				t.Fatalf("round %d: device %d/0 \"\" is %v, want %v", round, k.Pid, d, want)
			}
		}
	}
	// Past the track limit: no track, nothing remembered, and the tracks
	// made before it still given.
	ts = tracks.NewTrackSet(perfetto.NewWriter(&bytes.Buffer{}, perfetto.WithMaxTracks(8)), firstpass.NewScan())
	made := map[int64]perfetto.Track{}
	for round := range 2 {
		for tid := range int64(12) {
			th := ts.Thread(1, tid)
			if was, ok := made[tid]; ok && th != was || round == 0 && tid < 7 && th.IsZero() {
				t.Fatalf("round %d: thread 1/%d is %v, was %v", round, tid, th, was)
			}
			if !th.IsZero() {
				made[tid] = th
			}
		}
	}
	if len(made) == 12 {
		t.Error("no thread past the track limit")
	}
}

// deviceLanes gives every span deviceLane's lane, whether its name is a
// canonical string, a copy of one, or empty.
func TestDeviceLanes(t *testing.T) {
	c := &deviceDrawer{}
	names := []string{strace.SpanDeviceWall, strace.SpanDeviceWall + ".orch", strace.SpanDeviceWall + ".sched",
		strace.SpanDeviceWall + ".task_slot_3", strace.SpanDeviceWall + ".preamble", "", "x"}
	rng := rand.New(rand.NewPCG(5, 6))
	for round := range 200 {
		spans := make([]held.Span, rng.IntN(12))
		for i := range spans {
			name := names[rng.IntN(len(names))]
			if rng.IntN(3) == 0 {
				name = strings.Clone(name) // the same name elsewhere
			}
			spans[i].Name = name
		}
		for i, lane := range c.deviceLanes(spans) {
			if want := tracks.DeviceLane(spans[i].Name); lane != want {
				t.Fatalf("round %d: %q in lane %q, want %q", round, spans[i].Name, lane, want)
			}
		}
	}
}
