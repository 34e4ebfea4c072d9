package stracetest

import (
	"math/rand/v2"
	"testing"
)

// The clock's truth is exact: the host instant hostAt gives for a count is
// the least at which the count reaches it, across segments, steps and
// wander, at both frequencies the runtime's counters run at.
func TestRateClockExact(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	for _, freq := range []uint64{50_000_000, 1_000_000_000} {
		for _, rc := range []RateChange{{StepPPM: 5}, {WanderPPM: 40, WanderPeriod: 7e9}, {StepPPM: 3, StepEvery: 300_000_000, WanderPPM: 2}} {
			clk := newRateClock(freq, 1_700_000_000_000, 15, rc, 9)
			for range 20_000 {
				h := r.Int64N(600e9)
				c := clk.at(h)
				if clk.at(h+1) < c {
					t.Fatalf("%d Hz %+v: the count goes back at %d", freq, rc, h)
				}
				back := clk.hostAt(c)
				if clk.at(back) < c || (back > 0 && clk.at(back-1) >= c) || back > h {
					t.Fatalf("%d Hz %+v: hostAt(at(%d) = %d) = %d, not the least instant the count reaches it", freq, rc, h, c, back)
				}
			}
		}
	}
}

// Steps change the rate only at their boundaries, within ±StepPPM of the
// base; the wander stays within its amplitude; memory stays bounded
// however far the clock runs.
func TestRateClockRates(t *testing.T) {
	t.Parallel()
	clk := newRateClock(50_000_000, 0, 15, RateChange{StepPPM: 5, StepEvery: 2e9}, 3)
	rates := clk.rates(0, 60e9)
	changes := 0
	for i, ppb := range rates {
		if ppb < 10_000 || ppb > 20_000 {
			t.Fatalf("segment %d: %d ppb, want 15 ppm ± 5", i, ppb)
		}
		if i > 0 && ppb != rates[i-1] {
			changes++
			if i%20 != 0 {
				t.Fatalf("segment %d: the rate changes off a step boundary", i)
			}
		}
	}
	if changes < 25 {
		t.Errorf("%d steps in 60 s, want one every 2 s", changes)
	}
	w := newRateClock(50_000_000, 0, 0, RateChange{WanderPPM: 8, WanderPeriod: 10e9}, 3)
	lo, hi := int64(0), int64(0)
	for _, ppb := range w.rates(0, 20e9) {
		lo, hi = min(lo, ppb), max(hi, ppb)
	}
	if lo < -8000 || hi > 8000 || hi-lo < 15_000 {
		t.Errorf("wander within [%d, %d] ppb, want ±8 ppm", lo, hi)
	}
	w.at(10_000 * 1e9) // 10 000 s on
	if len(w.seg) > 2*keptSegments {
		t.Errorf("%d segments kept, want at most %d", len(w.seg), 2*keptSegments)
	}
	if got, want := w.at(3e9), newRateClock(50_000_000, 0, 0, RateChange{WanderPPM: 8, WanderPeriod: 10e9}, 3).at(3e9); got != want {
		t.Errorf("an old instant made again reads %d, want %d", got, want)
	}
}

// rates returns the rate errors (ppb) of the segments over host times
// [from, to), in order, for tests of the generator.
func (r *rateClock) rates(from, to int64) []int64 {
	var out []int64
	for k := from / rateSegment; k*rateSegment < to; k++ {
		out = append(out, r.segment(k).ppb)
	}
	return out
}
