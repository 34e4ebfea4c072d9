package reduce

import "math"

// Rigorous projections work on rate cells of 1 ppb: the true rate κ at the
// query point lies in some cell [k, k+1], and a bracket at distance d is
// taken at the end of the cell (and of the stability band around it) that
// loosens it. The loss against exact rational arithmetic is at most |d|
// times 1 ppb per bracket (30 ns at 30 s), always on the safe side.

// cellSide turns one side of a bracket, rebased so that the side bounds
// a = y(x) − ref by u at distance d = x_side − x, into the line the cell
// projection uses: for rate cell k, a·1e9 ≥ c − d·k (a lower side) or
// a·1e9 ≤ c − d·k (an upper side). With the average rate between the two
// points within s of the cell:
//
//	lower: c = u·1e9 − |d|·s − (d ≥ 0 ? d : 0)
//	upper: c = u·1e9 + |d|·s + (d < 0 ? |d| : 0)
//
// ok is false when c does not fit comfortably in int64; leaving such a far
// side out only widens the result.
func cellSide(u, d int64, s PPB, upper bool) (fitPoint, bool) {
	const lim = 1 << 61
	ad := int64(absU(d))
	if absU(u) >= lim/nsPerSecond || ad >= lim/(int64(s)+2) {
		return fitPoint{}, false
	}
	c := u*nsPerSecond - ad*int64(s)
	if upper {
		c = u*nsPerSecond + ad*int64(s)
		if d < 0 {
			c += ad
		}
	} else if d >= 0 {
		c -= d
	}
	return fitPoint{d: d, u: c}, true
}

// envAt evaluates a hull made by hull(…, upper) at rate cell k: the max
// (upper) or min of c − d·k, and the index of the side that attains it.
func envAt(h []fitPoint, k int64, upper bool) (i128, int) {
	return envAtScaled(h, k, upper, 1)
}

// envAtScaled is envAt of u·scale − d·k.
func envAtScaled(h []fitPoint, k int64, upper bool, scale int64) (i128, int) {
	// Along the hull the better side moves monotonically with k.
	lo, hi := 0, len(h)-1
	for lo < hi {
		m := lo + (hi-lo)/2
		// f(m+1) − f(m) = (c' − c) − (d' − d)·k
		diff := mul128(h[m+1].u-h[m].u, scale).sub(mul128(h[m+1].d-h[m].d, k))
		if (upper && diff.sign() > 0) || (!upper && diff.sign() < 0) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return mul128(h[lo].u, scale).sub(mul128(h[lo].d, k)), h[lo].index
}

// projection is what the brackets allow for a = y(x) − ref.
type projection struct {
	feasible bool
	lo, hi   int64 // ns, floored and ceiled; MinInt64/MaxInt64 when a side is absent
	kLo, kHi int64 // the rate range (ppb) the feasible cells cover
	// When infeasible: the lower and the upper side that conflict most.
	loIndex, hiIndex int
}

// project intersects the lower sides (upper hull of their lines) and the
// upper sides (lower hull) over rate cells [kmin, kmax): for cell k the
// allowed a·1e9 is [L(k), U(k)], L convex and U concave, so the feasible
// cells are one interval around the minimum of L − U and a lies in
// [min L, max U] over it.
func project(lows, highs []fitPoint, kmin, kmax int64) projection {
	kmax-- // the last cell is [kmax−1, kmax]
	L := func(k int64) i128 { v, _ := envAt(lows, k, true); return v }
	U := func(k int64) i128 { v, _ := envAt(highs, k, false); return v }
	pr := projection{feasible: true, lo: math.MinInt64, hi: math.MaxInt64}
	kL, kR := kmin, kmax
	if len(lows) > 0 && len(highs) > 0 {
		h := func(k int64) i128 { return L(k).sub(U(k)) }
		kOpt := firstTrue(kmin, kmax-1, func(k int64) bool { return h(k+1).cmp(h(k)) >= 0 })
		if h(kOpt).sign() > 0 {
			_, i := envAt(lows, kOpt, true)
			_, j := envAt(highs, kOpt, false)
			return projection{loIndex: i, hiIndex: j}
		}
		kL = firstTrue(kmin, kOpt, func(k int64) bool { return h(k).sign() <= 0 })
		kR = firstTrue(kOpt, kmax, func(k int64) bool { return h(k).sign() > 0 }) - 1
	}
	if len(lows) > 0 {
		k := firstTrue(kL, kR-1, func(k int64) bool { return L(k+1).cmp(L(k)) >= 0 })
		pr.lo, _ = L(k).div(nsPerSecond, false)
	}
	if len(highs) > 0 {
		k := firstTrue(kL, kR-1, func(k int64) bool { return U(k+1).cmp(U(k)) <= 0 })
		pr.hi, _ = U(k).div(nsPerSecond, true)
	}
	pr.kLo, pr.kHi = kL, kR+1
	return pr
}
