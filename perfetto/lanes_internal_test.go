package perfetto

import (
	"errors"
	"io"
	"math/rand/v2"
	"slices"
	"testing"
)

// nth selects as a sort would, on distinct, repeated and ordered values.
func TestNth(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 4))
	for iter := range 2000 {
		n := 1 + r.IntN(300)
		x := make([]int64, n)
		for i := range x {
			switch iter % 3 {
			case 0:
				x[i] = r.Int64N(1000)
			case 1:
				x[i] = r.Int64N(4)
			default:
				x[i] = int64(i)
			}
		}
		sorted := slices.Clone(x)
		slices.Sort(sorted)
		k := r.IntN(n)
		if got := nth(x, k); got != sorted[k] {
			t.Fatalf("nth(%v, %d) = %d, want %d", sorted, k, got, sorted[k])
		}
	}
}

// A lane's memory is bounded by maxRemembered top-level slices and maxPast
// extents, however many top-level slices, and gaps between them, it has
// had; what it gives up are the narrowest gaps. Slices given late around
// them all, before them all or in a wide gap are still decided exactly;
// one in a gap given up is not (ErrUnverifiable).
func TestLaneMemoryBounded(t *testing.T) {
	t.Parallel()
	var ovs []Overflow
	w := NewWriter(io.Discard, WithOverflowFunc(func(o Overflow) { ovs = append(ovs, o) }))
	th := w.Thread(ThreadSpec{Pid: 1, Tid: 2, Name: "main"})
	st := w.tracks[th.UUID()]
	const n = 20_000
	ts := int64(1_000)
	gapAt := map[int64]int64{} // start of each gap → its width
	maxCap := 0
	for i := range n {
		// A root with a child; every 7th abuts the next root, the others
		// leave a gap 3 to 99 ns wide.
		w.Slice(th, Slice{Name: "child", TS: ts + 1, Dur: 5, Depth: 1})
		w.Slice(th, Slice{Name: "root", TS: ts, Dur: 10})
		ts += 10
		if i%7 != 0 {
			g := 3 + int64(i*7919%97)
			gapAt[ts] = g
			ts += g
		}
		if i%50 == 49 {
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			m := &st.mem
			if len(m.roots) > maxRemembered || len(m.past) > maxPast {
				t.Fatalf("after %d roots: %d roots and %d extents remembered", i+1, len(m.roots), len(m.past))
			}
			maxCap = max(maxCap, cap(m.past))
		}
	}
	if maxCap > 2*maxPast {
		t.Errorf("the past grew to a capacity of %d extents", maxCap)
	}
	// The widest and the narrowest gaps, among those forgotten.
	m := &st.mem
	var wide, narrow int64 = -1, -1
	for at, g := range gapAt {
		if at >= m.roots[0].ts {
			continue
		}
		if g == 99 && (wide < 0 || at < wide) {
			wide = at
		}
		if g == 3 && (narrow < 0 || at < narrow) {
			narrow = at
		}
	}
	w.Slice(th, Slice{Name: "before", TS: 0, Dur: 900, Ref: 1})
	w.Slice(th, Slice{Name: "wide gap", TS: wide + 1, Dur: 97, Ref: 2})
	w.Slice(th, Slice{Name: "narrow gap", TS: narrow + 1, Dur: 1, Ref: 3})
	w.Slice(th, Slice{Name: "around", TS: 950, Dur: ts, Ref: 4})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if len(ovs) != 1 || ovs[0].Ref != 3 || !errors.Is(ovs[0].Err, ErrUnverifiable) {
		t.Errorf("overflows %+v, want only the slice in a narrow gap, unverifiable", ovs)
	}
}
