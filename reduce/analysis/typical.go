package analysis

import (
	"cmp"
	"math/bits"
	"slices"
)

// The rule that calls a run slow (Typical.Slow): its duration is more
// than SlowMADs median absolute deviations above its callable's median,
// the deviation taken as at least MinMADFraction of the median (so a
// callable whose runs barely vary calls a run slow 10 % above its median,
// not 1 ns above it), among at least MinRuns runs.
const (
	SlowMADs       = 5
	MinMADFraction = 50 // the deviation is at least median/MinMADFraction
	MinRuns        = 8
)

// Typical learns a callable's typical run time from its runs' durations,
// in memory that does not grow with the runs: a histogram whose buckets
// are 1/64 of a power of two wide (exact below 128 ns), so its median and
// median absolute deviation (MAD) are within 1/128 of their value plus
// half a bucket. The zero Typical is empty and ready to use.
type Typical struct {
	counts map[uint32]int64 // by bucket (bucketOf)
	n      int64
}

// bucketOf is the bucket of ns ≥ 0: its top 7 bits and their shift, so
// that buckets order as their values do.
func bucketOf(ns int64) uint32 {
	v := uint64(max(ns, 0))
	e := max(bits.Len64(v)-7, 0)
	return uint32(e)<<7 | uint32(v>>e)
}

// mid is the middle of bucket b.
func mid(b uint32) int64 {
	e, top := b>>7, int64(b&127)
	return top<<e + (int64(1)<<e)/2
}

// Add counts a run of ns.
func (t *Typical) Add(ns int64) {
	if t.counts == nil {
		t.counts = map[uint32]int64{}
	}
	t.counts[bucketOf(ns)]++
	t.n++
}

// Merge adds o's runs to t.
func (t *Typical) Merge(o *Typical) {
	for b, c := range o.counts {
		if t.counts == nil {
			t.counts = map[uint32]int64{}
		}
		t.counts[b] += c
	}
	t.n += o.n
}

// Runs is how many runs t counted.
func (t *Typical) Runs() int64 { return t.n }

// Median is the median run time (0 for none), as its bucket's middle.
func (t *Typical) Median() int64 {
	if t.n == 0 {
		return 0
	}
	keys := t.keys()
	return weightedMedian(len(keys), t.n, func(i int) (int64, int64) { return mid(keys[i]), t.counts[keys[i]] })
}

// MAD is the median of the runs' absolute deviations from Median.
func (t *Typical) MAD() int64 { return t.mad(t.Median()) }

// mad is MAD for the median m.
func (t *Typical) mad(m int64) int64 {
	if t.n == 0 {
		return 0
	}
	type dev struct{ d, c int64 }
	devs := make([]dev, 0, len(t.counts))
	for b, c := range t.counts {
		d := mid(b) - m
		devs = append(devs, dev{max(d, -d), c})
	}
	slices.SortFunc(devs, func(a, b dev) int { return cmp.Compare(a.d, b.d) })
	return weightedMedian(len(devs), t.n, func(i int) (int64, int64) { return devs[i].d, devs[i].c })
}

// Threshold is the duration above which a run is slow, and whether there
// are runs enough (MinRuns) to say.
func (t *Typical) Threshold() (ns int64, ok bool) {
	r := t.Summary()
	return r.Threshold, r.Enough
}

// Slow reports whether a run of ns is slow for its callable (the rule
// above).
func (t *Typical) Slow(ns int64) bool { return t.Summary().Slow(ns) }

// TypicalRuns is what Typical says of a callable's runs once they are all
// counted: how many, their median and MAD, and the threshold past which
// one is slow (Enough: there are runs enough to say).
type TypicalRuns struct {
	Runs, Median, MAD, Threshold int64
	Enough                       bool
}

// Summary says what t has learned, for runs to be judged by.
func (t *Typical) Summary() TypicalRuns {
	m := t.Median()
	r := TypicalRuns{Runs: t.n, Median: m, MAD: t.mad(m), Enough: t.n >= MinRuns}
	if r.Enough {
		r.Threshold = m + SlowMADs*max(r.MAD, m/MinMADFraction)
	}
	return r
}

// Slow reports whether a run of ns is slow for the callable (the rule
// above).
func (r TypicalRuns) Slow(ns int64) bool { return r.Enough && ns > r.Threshold }

func (t *Typical) keys() []uint32 {
	keys := make([]uint32, 0, len(t.counts))
	for b := range t.counts {
		keys = append(keys, b)
	}
	slices.Sort(keys)
	return keys
}

// weightedMedian is the value at which half of n counted values are
// reached, of k (value, count) pairs in ascending order.
func weightedMedian(k int, n int64, at func(int) (v, c int64)) int64 {
	half := (n + 1) / 2
	var seen int64
	var v int64
	for i := 0; i < k; i++ {
		var c int64
		v, c = at(i)
		if seen += c; seen >= half {
			return v
		}
	}
	return v
}
