package analysis

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/phasetrace/phasetrace/strace"
)

// TestTPOT works through testdata/tpot.log: decode hid d0 has
// three invocations, prefill hid f1 one; a node.submit and an ext. span
// carry no invocation and stay out.
func TestTPOT(t *testing.T) {
	t.Parallel()
	got := AnalyzeTPOT(testLog(t, "tpot.log").Spans)
	want := &TPOT{Callables: []TPOTCallable{{
		Hid: 0xd0, Role: strace.RoleDecode, Invocations: 3,
		// chip.run 1000, 2000, 4001: 7001/3 = 2333.67, truncated to 2333.
		Run: DurStats{N: 3, Mean: 2333, Min: 1000, Max: 4001},
		Stages: []StageStats{
			// Three invocations each, by name:
			{"chip.run.bind", DurStats{N: 3, Mean: 350, Min: 250, Max: 451}},      // 1051/3
			{"chip.run.bind.args", DurStats{N: 3, Mean: 250, Min: 150, Max: 351}}, // 751/3
			// inv 3 logs runner_run twice; the earlier one (3000) counts, not
			// the later 9999: (600+1400+3000)/3 = 1666.67.
			{"chip.run.runner_run", DurStats{N: 3, Mean: 1666, Min: 600, Max: 3000}},
			// Two invocations: listed after the names seen three times.
			{"chip.run.validate", DurStats{N: 2, Mean: 75, Min: 75, Max: 75}},
		},
	}, {
		Hid: 0xf1, Role: strace.RolePrefill, Invocations: 1,
		Run:    DurStats{N: 1, Mean: 5000, Min: 5000, Max: 5000},
		Stages: []StageStats{{"chip.run.bind", DurStats{N: 1, Mean: 300, Min: 300, Max: 300}}},
	}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("AnalyzeTPOT (-want +got):\n%s", diff)
	}
}

// TestBucketTies: two callables invoked equally often are listed in the
// order their first invocation appears by (pid, inv), not by hash, and
// neither is decode's only rival: the first is decode.
func TestBucketTies(t *testing.T) {
	t.Parallel()
	l := logOf(t, "ties.log",
		rec(1, 1, "ff", 0, "chip.run", 0, 10, ""),
		rec(1, 2, "11", 0, "chip.run", 0, 10, ""),
		rec(1, 3, "ff", 0, "chip.run", 0, 10, ""),
		rec(1, 4, "11", 0, "chip.run", 0, 10, ""),
	)
	got := AnalyzeTPOT(l.Spans)
	if got.Callables[0].Hid != 0xff || got.Callables[0].Role != strace.RoleDecode || got.Callables[1].Role != strace.RoleOther {
		t.Errorf("callables %+v", got.Callables)
	}
	if r := AnalyzeRounds(l.Spans); r.Hid != 0xff {
		t.Errorf("rounds of hid %x, want ff", r.Hid)
	}
}

func TestTPOTEmpty(t *testing.T) {
	t.Parallel()
	var b stringsBuilder
	if err := WriteTPOT(&b, AnalyzeTPOT(nil)); err != nil || b.String() != noMarkers+"\n" {
		t.Errorf("empty TPOT = %q, %v", b.String(), err)
	}
}
