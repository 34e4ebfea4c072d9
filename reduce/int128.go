package reduce

import (
	"math"
	"math/bits"
)

// i128 is a signed 128-bit integer (two's complement), enough for the
// clock fits' exact sums of ns·1e12 and ns·rate products.
type i128 struct {
	hi int64
	lo uint64
}

// mul128 returns a·b exactly.
func mul128(a, b int64) i128 {
	h, l := bits.Mul64(absU(a), absU(b))
	r := i128{int64(h), l}
	if (a < 0) != (b < 0) {
		r = r.neg()
	}
	return r
}

func (a i128) neg() i128 {
	lo := ^a.lo + 1
	hi := ^a.hi
	if lo == 0 {
		hi++
	}
	return i128{hi, lo}
}

func (a i128) add(b i128) i128 {
	lo, c := bits.Add64(a.lo, b.lo, 0)
	return i128{a.hi + b.hi + int64(c), lo}
}

func (a i128) sub(b i128) i128 { return a.add(b.neg()) }

func (a i128) cmp(b i128) int {
	switch {
	case a.hi < b.hi:
		return -1
	case a.hi > b.hi:
		return 1
	case a.lo < b.lo:
		return -1
	case a.lo > b.lo:
		return 1
	}
	return 0
}

func (a i128) sign() int { return a.cmp(i128{}) }

// div returns ⌊a/d⌋ (or ⌈a/d⌉ with ceil) for d > 0; ok is false when the
// result does not fit int64.
func (a i128) div(d int64, ceil bool) (int64, bool) {
	if d <= 0 {
		return 0, false
	}
	neg := a.hi < 0
	m := a
	if neg {
		m = a.neg()
	}
	uh := uint64(m.hi)
	if uh >= uint64(d) {
		return 0, false
	}
	return quotient(uh, m.lo, uint64(d), neg, ceil)
}

// small returns a when it lies within ±2^62.
func (a i128) small() (int64, bool) {
	v := int64(a.lo)
	return v, a.hi == v>>63 && absU(v) < 1<<62
}

// clamp returns a, or the int64 nearest to it.
func (a i128) clamp() int64 {
	v := int64(a.lo)
	switch {
	case a.hi == v>>63:
		return v
	case a.hi < 0:
		return math.MinInt64
	}
	return math.MaxInt64
}
