package phasetrace

import (
	"testing"

	"github.com/phasetrace/phasetrace/reduce"
)

// Every cause reduce gives of a run not aligned is counted under a
// declared reason of its own.
func TestEveryCauseHasAReason(t *testing.T) {
	seen := map[Reason]reduce.Cause{}
	for c := reduce.Cause(1); c != 0; c <<= 1 {
		if reduce.AllCauses&c == 0 {
			continue
		}
		var m ReasonCounts
		bumpCauses(&m, c, 1)
		if len(m) != 1 {
			t.Errorf("cause %#x counted under %v, want one reason", c, m)
			continue
		}
		for r := range m {
			if _, ok := reasonTexts[r]; !ok || r == ReasonPlacementUnexplained {
				t.Errorf("cause %#x counted under %q, not a reason of its own", c, r)
			}
			if o, dup := seen[r]; dup {
				t.Errorf("causes %#x and %#x share the reason %q", o, c, r)
			}
			seen[r] = c
		}
	}
	if len(seen) == 0 {
		t.Fatal("reduce declares no causes")
	}
}
