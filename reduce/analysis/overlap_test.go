package analysis

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// nativeRun returns one phased native run's spans: prepare and device are
// (ts, dur); the root carries the identity and spans the whole lifetime.
func nativeRunLines(pid, inv int, identity string, prepare, device [2]int64, release int64) []string {
	return []string{
		rec(pid, inv, "a5", 1, "chip.run.bind", prepare[0], prepare[1], ""),
		rec(pid, inv, "a5", 1, "chip.run.runner_run", device[0], device[1], ""),
		rec(pid, inv, "a5", 1, "chip.run.claim_release", release, 5, ""),
		rec(pid, inv, "a5", 0, "chip.run", prepare[0], release+10-prepare[0], identity),
	}
}

func epoch(e int) string {
	return fmt.Sprintf("run_id=0 dispatch_id=0 run_epoch=%d slot_id=0 generation=1", e)
}

func TestOverlapVerified(t *testing.T) {
	t.Parallel()
	// Lane 7: three runs, each bind inside the previous runner_run; lane 8:
	// a bind [190,230) that outlasts runner_run [100,200) still overlaps it.
	// inv 99 has no identity and is skipped.
	p, err := ProveOverlap(testLog(t, "overlap_ok.log").Spans)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Pairs) != 3 || p.Verified() != 3 {
		t.Fatalf("pairs %+v", p.Pairs)
	}
	first := p.Pairs[0]
	if first.Predecessor.Sequence() != 1 || first.Successor.Sequence() != 2 ||
		first.SuccessorPrepare != (Interval{150, 180}) || first.PredecessorDevice != (Interval{100, 200}) || first.PredecessorRelease != 200 {
		t.Errorf("first pair %+v", first)
	}
	// Fully hidden is stricter: lane 8's bind ends at 230, after 200.
	p, err = ProveOverlap(testLog(t, "overlap_ok.log").Spans, WithRequireHidden())
	if !errors.Is(err, ErrPrepareNotHidden) || !errors.Is(err, ErrOverlap) || p.Verified() != 2 {
		t.Fatalf("require hidden: %v, %d verified", err, p.Verified())
	}
	var oe *OverlapError
	if !errors.As(err, &oe) || oe.Pid != 8 || oe.Sequence != 2 || oe.Predecessor != 1 {
		t.Errorf("error %+v", oe)
	}
	if !strings.Contains(err.Error(), "prepare_end=230") || !strings.Contains(err.Error(), "predecessor_device_end=200") {
		t.Errorf("message %q", err)
	}
}

func TestOverlapFailures(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		lines []string
		want  error
		text  string
	}{{
		name:  "bind after the device window",
		lines: append(nativeRunLines(7, 1, epoch(1), [2]int64{50, 20}, [2]int64{100, 100}, 200), nativeRunLines(7, 2, epoch(2), [2]int64{210, 20}, [2]int64{240, 100}, 340)...),
		want:  ErrPrepareNotOverlapped,
		text:  "sequence=2 prepare=[210,230] predecessor=1 predecessor_device=[100,200]",
	}, {
		name:  "device before the release",
		lines: append(nativeRunLines(7, 1, epoch(1), [2]int64{50, 20}, [2]int64{100, 100}, 250), nativeRunLines(7, 2, epoch(2), [2]int64{150, 30}, [2]int64{240, 100}, 400)...),
		want:  ErrDeviceBeforeRelease,
		text:  "sequence=2 device_start=240 predecessor=1 predecessor_release=250",
	}, {
		name: "launch order",
		// By device start, epoch 5 runs before epoch 4.
		lines: append(nativeRunLines(7, 1, epoch(5), [2]int64{50, 20}, [2]int64{100, 100}, 200), nativeRunLines(7, 2, epoch(4), [2]int64{150, 30}, [2]int64{240, 100}, 340)...),
		want:  ErrLaunchOrder,
		text:  "predecessor=5 successor=4",
	}, {
		name:  "one run",
		lines: nativeRunLines(7, 1, epoch(1), [2]int64{50, 20}, [2]int64{100, 100}, 200),
		want:  ErrTooFewRuns,
	}, {
		name: "runs on different lanes",
		lines: append(nativeRunLines(7, 1, epoch(1), [2]int64{50, 20}, [2]int64{100, 100}, 200),
			nativeRunLines(8, 1, epoch(2), [2]int64{150, 30}, [2]int64{240, 100}, 340)...),
		want: ErrTooFewRuns,
	}, {
		name:  "no native runs",
		lines: []string{rec(7, 1, "a", 0, "chip.run", 0, 5, "")},
		want:  ErrTooFewRuns,
	}, {
		name:  "missing identity fields",
		lines: nativeRunLines(7, 1, "run_epoch=1 slot_id=0 generation=0", [2]int64{50, 20}, [2]int64{100, 100}, 200),
		want:  ErrRunIdentity,
		text:  "chip.run (pid=7 inv=1) is missing identity field(s): run_id, dispatch_id",
	}, {
		name:  "non-integer identity",
		lines: nativeRunLines(7, 1, "run_id=x dispatch_id=0 run_epoch=1 slot_id=0 generation=0", [2]int64{50, 20}, [2]int64{100, 100}, 200),
		want:  ErrRunIdentity,
		text:  "non-integer identity: run_id=x",
	}, {
		name:  "duplicate identity",
		lines: append(nativeRunLines(7, 1, epoch(1), [2]int64{50, 20}, [2]int64{100, 100}, 200), nativeRunLines(7, 2, epoch(1), [2]int64{150, 30}, [2]int64{240, 100}, 340)...),
		want:  ErrRunIdentity,
		text:  "duplicate identity for pid=7 sequence=1",
	}, {
		name:  "missing claim_release",
		lines: append(nativeRunLines(7, 1, epoch(1), [2]int64{50, 20}, [2]int64{100, 100}, 200)[:2], nativeRunLines(7, 1, epoch(1), [2]int64{50, 20}, [2]int64{100, 100}, 200)[3]),
		want:  ErrRunIncomplete,
		text:  "sequence=1 is missing span(s): chip.run.claim_release",
	}} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ProveOverlap(logOf(t, c.name, c.lines...).Spans)
			if !errors.Is(err, c.want) || !errors.Is(err, ErrOverlap) {
				t.Fatalf("err = %v, want %v", err, c.want)
			}
			if !strings.Contains(err.Error(), c.text) {
				t.Errorf("err = %q, want it to contain %q", err, c.text)
			}
		})
	}
}

// TestOverlapSequence: the scheduler's dispatch_id orders runs when set;
// run_epoch orders the direct-chip lane, which allocates none. Leading
// zeros are integers.
func TestOverlapSequence(t *testing.T) {
	t.Parallel()
	lines := append(nativeRunLines(7, 1, "run_id=5 dispatch_id=10 run_epoch=9 slot_id=0 generation=1", [2]int64{50, 20}, [2]int64{100, 100}, 200),
		nativeRunLines(7, 2, "run_id=6 dispatch_id=011 run_epoch=1 slot_id=1 generation=1", [2]int64{150, 30}, [2]int64{240, 100}, 340)...)
	p, err := ProveOverlap(logOf(t, "seq", lines...).Spans)
	if err != nil {
		t.Fatal(err)
	}
	if p.Pairs[0].Predecessor.Sequence() != 10 || p.Pairs[0].Successor.Sequence() != 11 || p.Pairs[0].Successor.RunID != 6 {
		t.Errorf("pair %+v", p.Pairs[0])
	}
	// Every failed pair is reported, not only the first.
	lines = nil
	for i, dev := range []int64{100, 240, 380} {
		lines = append(lines, nativeRunLines(9, i+1, epoch(i+1), [2]int64{dev + 110, 10}, [2]int64{dev, 100}, dev+100)...)
	}
	p, err = ProveOverlap(logOf(t, "all", lines...).Spans)
	if n := strings.Count(err.Error(), "preparation did not overlap"); n != 2 || p.Verified() != 0 {
		t.Errorf("%d failures reported: %v", n, err)
	}
	var b strings.Builder
	_ = WriteOverlap(&b, p)
	if !strings.HasPrefix(b.String(), "Native overlap failed for 2 of 2 adjacent dispatch pair(s):\n") {
		t.Errorf("WriteOverlap:\n%s", b.String())
	}
}
