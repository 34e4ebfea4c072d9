package reduce

import (
	"math"
	"math/bits"
)

// ratio converts device-domain ns to host ns at one rate error ε:
// v·1e9/(1e9+ε), exactly what atRate returns. A run's spans are all
// converted at the same few rates, so the division by 1e9+ε is done by a
// multiplication by its reciprocal, computed once, and an exact correction
// (a 64-bit division costs several multiplications).
type ratio struct {
	e    PPB
	den  uint64 // 1e9+ε when fast
	inv  uint64 // ⌊(2^64−1)/den⌋ when fast
	fast bool   // |ε| < 2^18: the range of atRate's 64-bit form
}

func newRatio(e PPB) ratio {
	if absU(int64(e)) >= 1<<18 {
		return ratio{e: e}
	}
	den := uint64(nsPerSecond + int64(e))
	return ratio{e: e, den: den, inv: math.MaxUint64 / den, fast: true}
}

// at is atRate(v, q.e, ceil).
func (q *ratio) at(v DeviceNanos, ceil bool) (HostNanos, bool) {
	if !q.fast || absU(int64(v)) >= 1<<44 {
		return atRate(v, q.e, ceil)
	}
	return q.fastAt(v, ceil), true
}

// fastAt is at for a fast ratio and |v| < 2^44. As atRate: ⌊v − y⌋ =
// v − ⌈y⌉ and ⌈v − y⌉ = v − ⌊y⌋, y = v·ε/(1e9+ε). |v·ε| < 2^62, so the
// reciprocal leaves t = ⌊|v·ε|/den⌋ at most one short (inv > 2^64/den − 2,
// and |v·ε|·2/2^64 < 1/2): the remainder corrects it. The magnitude of
// the rounded y is t, plus one when there is a remainder and y is rounded
// away from zero (up and positive for ⌈y⌉, negative for ⌊y⌋).
func (q *ratio) fastAt(v DeviceNanos, ceil bool) HostNanos {
	num := int64(v) * int64(q.e)
	neg := num < 0
	n := uint64(num)
	if neg {
		n = -n
	}
	t, _ := bits.Mul64(n, q.inv)
	r := n - t*q.den
	if r >= q.den {
		t++
		r -= q.den
	}
	if r != 0 && ceil == neg {
		t++
	}
	if neg {
		return HostNanos(int64(v) + int64(t))
	}
	return HostNanos(int64(v) - int64(t))
}

// rateRatios are the ratios of a rateRange's ends: the interval of host ns
// a device-domain duration v (nominal ns, may be negative) takes when the
// rate error lies in the range is [lo(v), hi(v)]. An end that does not fit
// int64 is returned as math.MinInt64 or math.MaxInt64.
type rateRatios struct {
	lo, hi ratio // of the range's low and high ends
	set    bool  // made by ratiosOf (the zero value is no range's)
}

func ratiosOf(r rateRange) rateRatios {
	q := rateRatios{lo: newRatio(r.lo), set: true}
	if r.hi == r.lo {
		q.hi = q.lo
	} else {
		q.hi = newRatio(r.hi)
	}
	return q
}

// of reports whether q are the ratios of r's ends.
func (q *rateRatios) of(r rateRange) bool {
	return q.set && q.lo.e == r.lo && q.hi.e == r.hi
}

// fast reports whether every v with |v| < 2^44 is converted by fastAt.
func (q *rateRatios) fast() bool { return q.lo.fast && q.hi.fast }

// hostLo is the low end: at the highest rate error for a positive v.
func (q *rateRatios) hostLo(v DeviceNanos) HostNanos {
	h, ok := q.end(v, false).at(v, false)
	if !ok {
		return math.MinInt64
	}
	return h
}

// hostHi is the high end.
func (q *rateRatios) hostHi(v DeviceNanos) HostNanos {
	h, ok := q.end(v, true).at(v, true)
	if !ok {
		return math.MaxInt64
	}
	return h
}

// end is the ratio giving the low (or, with upper, the high) end for v.
func (q *rateRatios) end(v DeviceNanos, upper bool) *ratio {
	if (v < 0) != upper {
		return &q.lo
	}
	return &q.hi
}
