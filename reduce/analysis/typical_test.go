package analysis

import (
	"testing"
)

// TestTypical: the median and MAD of a histogram are within a bucket of
// the exact ones, and the rule calls slow only what is far above.
func TestTypical(t *testing.T) {
	t.Parallel()
	var ty Typical
	for i := range 1000 {
		ty.Add(1_000_000 + int64(i%21-10)*1_000) // 1 ms ± 10 µs
	}
	if m := ty.Median(); m < 1_000_000-1_000_000/128 || m > 1_000_000+1_000_000/128 {
		t.Errorf("median %d, want 1 ms within 1/128", m)
	}
	if d := ty.MAD(); d > 20_000 {
		t.Errorf("MAD %d, want under 20 µs", d)
	}
	th, ok := ty.Threshold()
	if !ok || th < 1_050_000 || th > 1_200_000 {
		t.Errorf("threshold %d (%v), want between 1.05 and 1.2 ms", th, ok)
	}
	if ty.Slow(1_010_000) || !ty.Slow(2_000_000) {
		t.Error("slow: 1.01 ms or not 2 ms")
	}
	var few Typical
	for range MinRuns - 1 {
		few.Add(100)
	}
	if few.Slow(1 << 40) {
		t.Error("slow among fewer runs than MinRuns")
	}
	var a, b Typical
	for i := range 100 {
		a.Add(int64(i))
		b.Add(int64(i + 100))
	}
	a.Merge(&b)
	if a.Runs() != 200 || a.Median() < 98 || a.Median() > 101 {
		t.Errorf("merged: %d runs, median %d", a.Runs(), a.Median())
	}
	for _, v := range []int64{0, 1, 127, 128, 129, 1 << 40, 1<<63 - 1} {
		if m := mid(bucketOf(v)); max(m-v, v-m) > v/64+1 {
			t.Errorf("bucket of %d has middle %d", v, m)
		}
	}
}
