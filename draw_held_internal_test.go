package phasetrace

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/phasetrace/phasetrace/internal/held"
	"github.com/phasetrace/phasetrace/strace"
)

// TestSpanStoreMatchesPlainCopies checks spanStore, whose long values are
// string views of its own buffers (unsafe.String), against the plain path:
// a deep copy made with ordinary string conversions. Every copy it kept
// since the last reset must still equal its plain copy after many more are
// kept (a full buffer is replaced, never moved), whatever the reader does
// with its own memory meanwhile.
func TestSpanStoreMatchesPlainCopies(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var st held.Store
	type kept struct{ got, want []strace.Attr }
	var all []kept
	reader := make([]byte, 0, 4096) // the reader's recycled memory
	for round := range 2000 {
		if round%300 == 0 {
			st.Reset()
			all = all[:0]
		}
		reader = reader[:0]
		var attrs []strace.Attr
		for range rng.IntN(5) {
			switch rng.IntN(3) {
			case 0:
				attrs = append(attrs, strace.Int("n", rng.Int64()))
			case 1:
				attrs = append(attrs, strace.String("k", "short"))
			default:
				n := strace.CanonicalValueLen + 1 + rng.IntN(200)
				start := len(reader)
				reader = append(reader, strings.Repeat(string(rune('a'+rng.IntN(26))), n)...)
				attrs = append(attrs, strace.String("long", string(reader[start:])))
			}
		}
		want := make([]strace.Attr, len(attrs))
		for i, a := range attrs {
			want[i] = a
			if a.Type != strace.TypeString {
				want[i].Value = ""
			} else {
				want[i].Value = string([]byte(a.Value)) // the plain copy
			}
		}
		all = append(all, kept{st.Keep(attrs), want})
		clear(reader[:cap(reader)]) // the reader reuses its memory at once
		check := all[len(all)-1:]
		if round%25 == 0 {
			check = all
		}
		for i, k := range check {
			if d := cmp.Diff(k.want, k.got, cmpopts.EquateEmpty()); d != "" {
				t.Fatalf("round %d: copy %d changed (-plain +store):\n%s", round, i, d)
			}
		}
	}
}
