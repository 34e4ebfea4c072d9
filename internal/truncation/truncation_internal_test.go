package truncation

import (
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/phasetrace/phasetrace/internal/held"
)

// A run whose spans do not partly overlap on a lane is left as it is: the
// repair, run anyway, changes nothing; and Repair, which runs it only where
// they do (and on every run longer than maxSpans), repairs as it does.
func TestRepairOnlyWherePartlyOverlapping(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 8))
	lanesOf := []string{"phases", "orch", "task_slot_0"}
	partly := 0
	for round := range 5000 {
		n := 2 + rng.IntN(8)
		if round%50 == 0 {
			n = maxSpans - 5 + rng.IntN(100)
		}
		spans := make([]held.Span, n)
		lanes := make([]string, len(spans))
		for i := range spans {
			spans[i].Name = "s" + strconv.Itoa(i)
			spans[i].TS, spans[i].Dur = rng.Int64N(40), rng.Int64N(40)
			lanes[i] = lanesOf[rng.IntN(len(lanesOf))]
		}
		before := slices.Clone(spans)
		again := slices.Clone(spans)
		fixes := repairOverlaps(spans, lanes)
		if got := Repair(again, lanes); !maps.EqualFunc(got, fixes, func(a, b Fix) bool { return a == b }) ||
			!slices.EqualFunc(again, spans, func(a, b held.Span) bool { return a.TS == b.TS && a.Dur == b.Dur }) {
			t.Fatalf("round %d (%d spans): Repair repaired %v, the full repair %v", round, n, got, fixes)
		}
		if !partlyOverlap(before, lanes) {
			if fixes != nil || !slices.EqualFunc(spans, before, func(a, b held.Span) bool { return a.TS == b.TS && a.Dur == b.Dur }) {
				t.Fatalf("round %d: spans with no partial overlap on a lane repaired: %v", round, fixes)
			}
			continue
		}
		partly++
	}
	if partly < 100 {
		t.Fatalf("only %d runs with a partial overlap", partly)
	}
}
