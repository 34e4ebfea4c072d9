package stracetest

import (
	"math"
	"math/bits"
	"math/rand/v2"
)

// RateChange says how a simulated clock's rate error changes with host
// time, around its base rate, as real clocks' do: NTP slews the host's
// CLOCK_MONOTONIC, a crystal warms up. The rate is constant over each
// rateSegment (100 ms) of host time, an integer count of ppb, and the
// counter it drives is exact integer arithmetic, so the truth a test
// measures against is exact: the host instant at which the counter first
// reads a value is the least one whose count reaches it.
type RateChange struct {
	// StepPPM: every StepEvery ns of host time (rounded to whole
	// segments; 0: 2 s) the rate error is drawn anew, uniformly within
	// ±StepPPM ppm of the base.
	StepPPM   float64
	StepEvery int64
	// WanderPPM: the rate error wanders slowly along a sine of this
	// amplitude (ppm) and period WanderPeriod ns (0: 60 s).
	WanderPPM    float64
	WanderPeriod int64
}

// On says whether the rate changes at all.
func (rc RateChange) On() bool { return rc.StepPPM != 0 || rc.WanderPPM != 0 }

// MaxPPM is the most the rate error moves from the base: the sum of the
// two amplitudes.
func (rc RateChange) MaxPPM() float64 { return math.Abs(rc.StepPPM) + math.Abs(rc.WanderPPM) }

const (
	rateSegment       = 100_000_000    // ns of host time of one constant rate
	defaultStepEvery  = 2_000_000_000  // ns
	defaultWanderTime = 60_000_000_000 // ns
	keptSegments      = 4096           // segments a rateClock keeps, the newest
)

// rateClock is a counter of freq Hz that read offset at host time 0 and
// whose rate error (ppb) is base plus the RateChange's, constant over each
// segment of host time [k·rateSegment, (k+1)·rateSegment). Segments are
// made as host time advances, each from the seed and its index alone;
// the newest keptSegments are kept (an older one is made again from the
// first).
type rateClock struct {
	freq   uint64
	offset uint64
	base   float64 // ppm
	change RateChange
	seed   uint64
	first  int64      // index of seg[0]
	seg    []clockSeg // consecutive segments from first
}

type clockSeg struct {
	c   uint64 // the count at the segment's start
	ppb int64  // its rate error
}

func newRateClock(freq, offset uint64, basePPM float64, change RateChange, seed uint64) *rateClock {
	if change.StepEvery <= 0 {
		change.StepEvery = defaultStepEvery
	}
	change.StepEvery = max(change.StepEvery/rateSegment, 1) * rateSegment
	if change.WanderPeriod <= 0 {
		change.WanderPeriod = defaultWanderTime
	}
	return &rateClock{freq: freq, offset: offset, base: basePPM, change: change, seed: seed}
}

// ratePPB is segment k's rate error.
func (r *rateClock) ratePPB(k int64) int64 {
	ppm := r.base
	if rc := r.change; rc.StepPPM != 0 {
		step := k * rateSegment / rc.StepEvery
		rnd := rand.New(rand.NewPCG(r.seed, uint64(step)))
		ppm += (rnd.Float64()*2 - 1) * rc.StepPPM
	}
	if rc := r.change; rc.WanderPPM != 0 {
		mid := (float64(k) + 0.5) * rateSegment
		ppm += rc.WanderPPM * math.Sin(2*math.Pi*mid/float64(rc.WanderPeriod))
	}
	return int64(math.Round(ppm * 1000))
}

// count is the counter's advance over d ns (0 ≤ d ≤ rateSegment) at rate
// error ppb: ⌊d·freq·(1e9+ppb)/1e18⌋.
func (r *rateClock) count(d int64, ppb int64) uint64 {
	hi, lo := bits.Mul64(uint64(d)*r.freq, uint64(1_000_000_000+ppb))
	q, _ := bits.Div64(hi, lo, 1_000_000_000_000_000_000)
	return q
}

// segment returns segment k (k ≥ 0), making the segments up to it.
func (r *rateClock) segment(k int64) clockSeg {
	if len(r.seg) == 0 || k < r.first {
		r.first, r.seg = 0, append(r.seg[:0], clockSeg{c: r.offset, ppb: r.ratePPB(0)})
	}
	for r.first+int64(len(r.seg)) <= k {
		last := r.seg[len(r.seg)-1]
		n := r.first + int64(len(r.seg))
		r.seg = append(r.seg, clockSeg{c: last.c + r.count(rateSegment, last.ppb), ppb: r.ratePPB(n)})
		if len(r.seg) > 2*keptSegments {
			drop := len(r.seg) - keptSegments
			r.seg = append(r.seg[:0], r.seg[drop:]...)
			r.first += int64(drop)
		}
	}
	return r.seg[k-r.first]
}

// at is the count at host time h (h ≥ 0).
func (r *rateClock) at(h int64) uint64 {
	h = max(h, 0)
	k := h / rateSegment
	s := r.segment(k)
	return s.c + r.count(h-k*rateSegment, s.ppb)
}

// hostAt is the least host time at which the count reaches c (c at or
// after the count at host time 0).
func (r *rateClock) hostAt(c uint64) int64 {
	// Find the segment by advancing from an estimate at the nominal rate.
	k := int64(0)
	if c > r.offset {
		k = max(int64(float64(c-r.offset)/float64(r.freq)*1e9/rateSegment)-2, 0)
	}
	for r.segment(k).c > c && k > 0 {
		k--
	}
	for r.segment(k+1).c <= c {
		k++
	}
	s := r.segment(k)
	// Least d with ⌊d·freq·(1e9+ppb)/1e18⌋ ≥ c − s.c:
	// d = ⌈(c − s.c)·1e18 / (freq·(1e9+ppb))⌉.
	den := r.freq * uint64(1_000_000_000+s.ppb)
	hi, lo := bits.Mul64(c-s.c, 1_000_000_000_000_000_000)
	q, rem := bits.Div64(hi, lo, den)
	if rem != 0 {
		q++
	}
	return k*rateSegment + int64(q)
}
