package reduce

// A stand-in for the shared clock fit (reduce/clockfit.go) while it is being
// written: the same contract, the simplest exact method. Removed when the
// shared one lands.

import (
	"math"
)

// clockFit models y = y0 + (x−x0)·(1+κ), |κ| ≤ maxRate (ppb), the rate
// moving by at most stability (ppb) across the brackets.
type clockFit struct {
	maxRate, stability PPB
	br                 []fitBracket
}

type fitBracket struct {
	x, lo, hi int64
	index     int
}

func newClockFit(maxRate, stability PPB) *clockFit {
	return &clockFit{maxRate: maxRate, stability: stability}
}

func (f *clockFit) add(x, lo, hi int64, index int) {
	f.br = append(f.br, fitBracket{x, lo, hi, index})
}

// bounds returns the lower and upper end rate κ allows for Y(x), with the
// brackets that set them; widen adds |x−x_i|·stability.
func (f *clockFit) bounds(x int64, k PPB, widen bool) (lo, hi int64, loI, hiI int) {
	lo, hi = math.MinInt64, math.MaxInt64
	for i, b := range f.br {
		d := x - b.x
		w := int64(0)
		if widen {
			w, _ = mulDiv(absInt(d), int64(f.stability), nsPerSecond, true)
		}
		if b.lo != math.MinInt64 {
			v, _ := mulDiv(d, nsPerSecond+int64(k), nsPerSecond, false)
			if v = b.lo + v - w; v > lo {
				lo, loI = v, i
			}
		}
		if b.hi != math.MaxInt64 {
			v, _ := mulDiv(d, nsPerSecond+int64(k), nsPerSecond, true)
			if v = b.hi + v + w; v < hi {
				hi, hiI = v, i
			}
		}
	}
	return lo, hi, loI, hiI
}

func absInt(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

func (f *clockFit) slack(x int64, k PPB, widen bool) int64 {
	lo, hi, _, _ := f.bounds(x, k, widen)
	if lo == math.MinInt64 || hi == math.MaxInt64 {
		return math.MaxInt64 / 4
	}
	return hi - lo
}

// best finds the rate of largest slack (concave in κ).
func (f *clockFit) best(x int64, widen bool) PPB {
	return argmin(-f.maxRate, f.maxRate, func(k PPB) int64 { return -f.slack(x, k, widen) })
}

// argmin finds the minimum of a convex function on [a, b] by ternary search
// (robust to the ±1 ns of floored terms).
func argmin(a, b PPB, fn func(PPB) int64) PPB {
	for b-a > 8 {
		m1, m2 := a+(b-a)/3, b-(b-a)/3
		if fn(m1) < fn(m2) {
			b = m2
		} else {
			a = m1
		}
	}
	best := a
	for k := a; k <= b; k++ {
		if fn(k) < fn(best) {
			best = k
		}
	}
	return best
}

// feasible returns the rates at which the slack at x is non-negative.
func (f *clockFit) feasible(x int64, widen bool) (lo, hi PPB, ok bool) {
	k := f.best(x, widen)
	if f.slack(x, k, widen) < 0 {
		return 0, 0, false
	}
	a, b := -f.maxRate, k // first feasible in [a, k]
	for a < b {
		m := a + (b-a)/2
		if f.slack(x, m, widen) >= 0 {
			b = m
		} else {
			a = m + 1
		}
	}
	lo = a
	a, b = k, f.maxRate
	for a < b {
		m := b - (b-a)/2
		if f.slack(x, m, widen) >= 0 {
			a = m
		} else {
			b = m - 1
		}
	}
	return lo, a, true
}

type clockLine struct {
	x0, y0 int64
	rate   PPB
}

func (l clockLine) at(x int64) (int64, bool) {
	v, ok := mulDiv(x-l.x0, nsPerSecond+int64(l.rate), nsPerSecond, false)
	if !ok {
		return 0, false
	}
	y := l.y0 + v
	return y, (v >= 0) == (y >= l.y0)
}

func (f *clockFit) line() (clockLine, bool) {
	if len(f.br) == 0 {
		return clockLine{}, false
	}
	x0 := f.br[0].x
	k := f.best(x0, false)
	lo, hi, _, _ := f.bounds(x0, k, false)
	if lo == math.MinInt64 || hi == math.MaxInt64 {
		return clockLine{}, false
	}
	return clockLine{x0: x0, y0: lo + (hi-lo)/2, rate: k}, true
}

func (f *clockFit) span(x int64) (lo, hi int64, err error) {
	klo, khi, ok := f.feasible(x, true)
	if !ok {
		_, _, li, hi := f.bounds(x, f.best(x, true), true)
		return 0, 0, &InconsistencyError{Low: Evidence{Kind: EvidenceAnchor, Index: f.br[li].index}, High: Evidence{Kind: EvidenceAnchor, Index: f.br[hi].index}}
	}
	// L convex, U concave: the extremes over [klo, khi] by search on the
	// discrete slope.
	L := func(k PPB) int64 { l, _, _, _ := f.bounds(x, k, true); return l }
	U := func(k PPB) int64 { _, u, _, _ := f.bounds(x, k, true); return u }
	lo = L(argmin(klo, khi, L)) - 128
	hi = U(argmin(klo, khi, func(k PPB) int64 { return -U(k) })) + 128
	return lo, hi, nil
}

func (f *clockFit) rateRange() (lo, hi PPB, err error) {
	if len(f.br) == 0 {
		return -f.maxRate, f.maxRate, nil
	}
	klo, khi, ok := f.feasible(f.br[0].x, false)
	if !ok {
		return 0, 0, &InconsistencyError{}
	}
	return max(klo-f.stability-1, -f.maxRate), min(khi+f.stability+1, f.maxRate), nil
}
