package phasetrace_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/phasetrace/phasetrace"
	"github.com/phasetrace/phasetrace/perfetto/check"
)

// TestGeneratedCases converts a log of every case the generator can make —
// the runtime's truncating ns conversion, exactly abutting and enclosing
// spans, both emission orders, sparse and torn anchors, drift, huge ids,
// two ranks on one line, a log cut at its end, and all of them at once —
// and checks the rule: no error, a trace that reads back clean, every span
// accounted for, and every drawn device span within its published bound of
// where it truly started.
func TestGeneratedCases(t *testing.T) {
	t.Parallel()
	for _, gc := range generatedCases() {
		t.Run(gc.Name, func(t *testing.T) {
			t.Parallel()
			log, truth := generatedWithTruth(gc.Config)
			if !bytes.Equal(log, gc.Log) {
				t.Fatal("the generator is not deterministic")
			}
			var out bytes.Buffer
			sum, err := phasetrace.Convert(&out, []phasetrace.Input{phasetrace.Bytes(gc.Name+".log", log)})
			if err != nil {
				t.Fatalf("Convert: %v", err)
			}
			tr := wholeTrace(t, out.Bytes(), sum)
			checked := boundsHold(t, tr, truth)
			if checked == 0 {
				t.Error("no device span checked against the truth")
			}
			if sum.Incomplete != 0 {
				t.Errorf("%d runs without their root span", sum.Incomplete)
			}
			t.Logf("%d device spans within their bounds; repaired %v, moved %v, not drawn %v", checked, sum.Repaired, sum.Moved, sum.Spans.NotDrawn)
		})
	}
}

// boundsHold checks every drawn device span that has a true start against
// its bound, and returns how many it checked.
func boundsHold(t *testing.T, tr *check.Trace, truth map[truthKey]int64) int {
	t.Helper()
	checked := 0
	for _, s := range tr.Slices {
		if !strings.HasPrefix(s.Name, "chip.run.runner_run.device_wall") {
			continue
		}
		bound, _ := argOf(s, "bound_ns")
		pid, inv, want, ok := deviceTruth(tr, s, truth)
		if !ok {
			continue
		}
		if err := abs(s.TS - want); err > bound.(int64) {
			m, _ := argOf(s, "placement")
			t.Errorf("%s pid %d inv %v drawn at %d, truly at %d: error %d ns exceeds its bound %d ns (%v)", s.Name, pid, inv, s.TS, want, err, bound, m)
		}
		checked++
	}
	return checked
}

// deviceTruth returns a device slice's process (its track's grandparent),
// its inv, and its true start in the generator's truth (ok false without
// one).
func deviceTruth(tr *check.Trace, s check.Slice, truth map[truthKey]int64) (pid int32, inv uint64, want int64, ok bool) {
	v, _ := argOf(s, "inv")
	inv, _ = v.(uint64)
	tk, _ := tr.Track(s.Track)
	parent, _ := tr.Track(tk.Parent)
	proc, _ := tr.Track(parent.Parent)
	want, ok = truth[truthKey{proc.Pid, inv, s.Name}]
	return proc.Pid, inv, want, ok
}
