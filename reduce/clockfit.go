package reduce

import (
	"cmp"
	"math"
	"slices"
	"sort"
)

// rateScale is the unit of a clock fit's rates: κ counts 1e-12 (parts per
// trillion), fine enough that a rate step moves a point an hour away by
// under 4 ns.
const rateScale = 1_000_000_000_000

// ppbToFit converts ppb to the fit's rate unit.
const ppbToFit = rateScale / nsPerSecond

// A bracket says the instant x on clock X was, on clock Y, within [lo, hi]
// (ns). lo may be math.MinInt64 or hi math.MaxInt64 for a one-sided bound.
// index names the bracket in errors.
type bracket struct {
	x, lo, hi int64
	index     int
}

func (b bracket) hasLo() bool { return b.lo != math.MinInt64 }
func (b bracket) hasHi() bool { return b.hi != math.MaxInt64 }

// refAt is the offset a fit rebases its sides on, from a bracket at
// distance d: its lower side less d, else its upper side less d.
func (b bracket) refAt(d int64) (int64, bool) {
	switch {
	case b.hasLo():
		return b.lo - d, true
	case b.hasHi():
		return b.hi - d, true
	}
	return 0, false
}

// clockFit models the map between two clocks as y = y0 + (x−x0)·(1+κ): κ
// within ±maxRate, moving by at most stability across the brackets. It is
// the one model behind device placement (x a counter's nominal ns, y host
// ns) and remote hosts (x another machine's CLOCK_MONOTONIC). See the
// package documentation, "Anchors as lines".
type clockFit struct {
	maxRate, stability PPB
	// horizon: the stability relates brackets within horizon/2 of the
	// instant mapped; farther ones are carried at any rate within the
	// maximum (0: every bracket).
	horizon int64
	b       []bracket
	// The brackets sorted by x (nil until needed, dropped by add) and
	// scratch for span: a clockFit is not safe for concurrent use.
	byX         []bracket
	lows, highs []fitPoint
}

func newClockFit(maxRate, stability PPB, horizon int64) *clockFit {
	return &clockFit{maxRate: max(maxRate, 0), stability: max(stability, 0), horizon: max(horizon, 0)}
}

// stabilityAt is the stability that relates a bracket at distance d to
// the instant mapped: the fit's within its horizon, twice the maximum
// rate (any rate the model allows) beyond it.
func (f *clockFit) stabilityAt(d int64) PPB {
	if f.horizon > 0 && absU(d) > uint64(f.horizon/2) {
		return max(f.stability, 2*f.maxRate)
	}
	return f.stability
}

// add adds the bracket y(x) ∈ [lo, hi].
func (f *clockFit) add(x, lo, hi int64, index int) {
	f.b = append(f.b, bracket{x: x, lo: lo, hi: hi, index: index})
	f.byX = nil
}

// line returns the central line through every bracket (see fitLine).
func (f *clockFit) line() (clockLine, bool) {
	return fitLine(f.sorted(), f.maxRate)
}

// clockLine is y = y0 + (x−x0) + ⌊(x−x0)·k/1e12⌋.
type clockLine struct {
	x0, y0 int64
	k      int64 // rate, 1e-12
}

// at maps x through the line, exactly; ok is false on overflow.
func (l clockLine) at(x int64) (int64, bool) {
	d, ok := subHost(HostNanos(x), HostNanos(l.x0))
	if !ok {
		return 0, false
	}
	c, ok := mulDiv(int64(d), l.k, rateScale, false)
	if !ok {
		return 0, false
	}
	y, ok := addHost(HostNanos(l.y0), d)
	if !ok {
		return 0, false
	}
	y, ok = addHost(y, HostNanos(c))
	return int64(y), ok
}

// ratePPB returns the line's rate error, rounded to ppb.
func (l clockLine) ratePPB() PPB {
	return PPB(l.k / ppbToFit)
}

// fitPoint is one side of a bracket rebased on the fit's origin: the
// constraint u·1e12 − d·κ ≤ a·1e12 (a lower side) or ≥ (an upper side),
// a = y(x0) − ref.
type fitPoint struct {
	d, u  int64
	index int
}

// cross is (a−o)×(b−o) in 128 bits.
func cross(o, a, b fitPoint) i128 {
	return mul128(a.d-o.d, b.u-o.u).sub(mul128(a.u-o.u, b.d-o.d))
}

// hull keeps the points that can be extreme for some rate: the upper
// hull (upper true) or the lower hull of points sorted by d.
func hull(ps []fitPoint, upper bool) []fitPoint {
	out := ps[:0]
	for _, p := range ps {
		if n := len(out); n > 0 && out[n-1].d == p.d {
			if (upper && p.u <= out[n-1].u) || (!upper && p.u >= out[n-1].u) {
				continue
			}
			out = out[:n-1]
		}
		for len(out) >= 2 {
			c := cross(out[len(out)-2], out[len(out)-1], p).sign()
			if (upper && c < 0) || (!upper && c > 0) {
				break
			}
			out = out[:len(out)-1]
		}
		out = append(out, p)
	}
	return out
}

// firstTrue returns the first k in [lo, hi] for which pred holds, hi+1
// when none does; pred must be monotone (false … true).
func firstTrue(lo, hi int64, pred func(int64) bool) int64 {
	for lo <= hi {
		m := lo + (hi-lo)/2
		if pred(m) {
			hi = m - 1
		} else {
			lo = m + 1
		}
	}
	return lo
}

// centralFit is the constant-rate fit of a set of brackets: the lines
// y = y0 + (x−x0)·(1+κ) that pass through every bracket, when there are
// any (feasible), else the line that violates the worst bracket least.
type centralFit struct {
	line     clockLine
	feasible bool
	x0, ref  int64
	// Hulls of the lower and the upper sides (u rebased on ref, ns) and
	// the feasible rates [kL, kR] (1e-12).
	lower, upper []fitPoint
	kL, kR       int64
}

// fitLine returns the central line of brackets sorted by x (see
// fitCentral).
func fitLine(bs []bracket, maxRate PPB) (clockLine, bool) {
	c, ok := fitCentral(bs, maxRate, nil)
	return c.line, ok
}

// fitScratch is storage fitCentral reuses from one fit to the next: the
// sides, and kept, which the hulls a fit keeps are appended to (the fits
// share it; none appends to another's).
type fitScratch struct {
	lower, upper, kept []fitPoint
}

// keep appends h to the kept hulls and returns its copy there.
func (s *fitScratch) keep(h []fitPoint) []fitPoint {
	n := len(s.kept)
	s.kept = append(s.kept, h...)
	return s.kept[n:len(s.kept):len(s.kept)]
}

// fitCentral fits brackets sorted by x at a constant rate (scratch, when
// given, is reused for the sides and holds the copies of the hulls the fit
// keeps). Where rates exist at which a line passes through every bracket,
// its line has the middle of those rates and the middle of the offsets
// that rate allows; where none does, the rate that leaves the violation
// of the worst bracket smallest (the minimax line). ok is false without
// both a lower and an upper side.
func fitCentral(bs []bracket, maxRate PPB, scratch *fitScratch) (centralFit, bool) {
	if len(bs) == 0 {
		return centralFit{}, false
	}
	x0 := bs[len(bs)/2].x
	var ref int64
	haveRef := false
	if scratch == nil {
		scratch = new(fitScratch)
	}
	if cap(scratch.lower) < len(bs) {
		// Each bracket adds at most one side to each.
		scratch.lower, scratch.upper = make([]fitPoint, 0, len(bs)), make([]fitPoint, 0, len(bs))
	}
	lower, upper := scratch.lower[:0], scratch.upper[:0]
	const lim = 1 << 62
	for _, b := range bs {
		if absU(b.x) >= lim || absU(x0) >= lim {
			continue
		}
		d := b.x - x0
		if !haveRef {
			ref, haveRef = b.refAt(d)
		}
		if b.hasLo() {
			if u := b.lo - d - ref; absU(b.lo) < lim && absU(u) < lim {
				lower = append(lower, fitPoint{d: d, u: u, index: b.index})
			}
		}
		if b.hasHi() {
			if v := b.hi - d - ref; absU(b.hi) < lim && absU(v) < lim {
				upper = append(upper, fitPoint{d: d, u: v, index: b.index})
			}
		}
	}
	if len(lower) == 0 || len(upper) == 0 {
		return centralFit{}, false
	}
	// Kept per window: copies of just the hull points.
	lower, upper = scratch.keep(hull(lower, true)), scratch.keep(hull(upper, false))
	lowAt := func(k int64) i128 { v, _ := envAtScaled(lower, k, true, rateScale); return v }
	highAt := func(k int64) i128 { v, _ := envAtScaled(upper, k, false, rateScale); return v }
	gap := func(k int64) i128 { return highAt(k).sub(lowAt(k)) }
	kmax := int64(maxRate) * ppbToFit
	kmin := -kmax
	// gap is concave: its maxima are the plateau [ka, kb].
	ka := firstTrue(kmin, kmax-1, func(k int64) bool { return gap(k+1).cmp(gap(k)) <= 0 })
	kb := firstTrue(ka, kmax-1, func(k int64) bool { return gap(k+1).cmp(gap(k)) < 0 })
	k := ka + (min(kb, kmax)-ka)/2
	c := centralFit{x0: x0, ref: ref, lower: lower, upper: upper}
	if gap(k).sign() >= 0 {
		// Every rate in [kL, kR] admits a line through every bracket: take
		// the middle of them.
		c.feasible = true
		c.kL = firstTrue(kmin, k, func(k int64) bool { return gap(k).sign() >= 0 })
		c.kR = firstTrue(k, kmax, func(k int64) bool { return gap(k).sign() < 0 }) - 1
		k = c.kL + (c.kR-c.kL)/2
	}
	a, ok := highAt(k).add(lowAt(k)).div(2*rateScale, false)
	if !ok {
		return centralFit{}, false
	}
	y0, ok := addHost(HostNanos(ref), HostNanos(a))
	if !ok {
		return centralFit{}, false
	}
	c.line = clockLine{x0: x0, y0: int64(y0), k: k}
	return c, true
}

// at returns the values the fit's constant-rate lines take at x, [lo,
// hi], and the central line's rate; a fit without such lines gives its
// minimax line's value for both.
func (c *centralFit) at(x int64) (lo, hi, k int64, ok bool) {
	if !c.feasible {
		y, ok := c.line.at(x)
		return y, y, c.line.k, ok
	}
	const lim = 1 << 62
	if absU(x) >= lim {
		return 0, 0, 0, false
	}
	dx := x - c.x0
	// (y(x) − ref − dx)·1e12 = a·1e12 + dx·κ over the feasible (a, κ):
	// the lowest is min over κ of a convex function, the highest max of a
	// concave one, both extreme at the rate where the hull edge that
	// straddles dx changes over, or at an end of [kL, kR].
	low := c.extreme(c.lower, dx, true)
	high := c.extreme(c.upper, dx, false)
	l, ok1 := low.div(rateScale, false)
	h, ok2 := high.div(rateScale, true)
	base, ok3 := addHost(HostNanos(c.ref), HostNanos(dx))
	if !ok1 || !ok2 || !ok3 {
		return 0, 0, 0, false
	}
	lv, ok1 := addHost(base, HostNanos(l))
	hv, ok2 := addHost(base, HostNanos(h))
	return int64(lv), int64(hv), c.line.k, ok1 && ok2
}

// extreme returns the least (with upper) or the greatest (without) value
// over κ in [kL, kR] of f(κ) = env(κ) + dx·κ, env the envelope of hull h
// (envAtScaled(h, κ, upper, rateScale)): the least for the lower hull,
// whose envelope is its upper one, the greatest for the upper hull. f is
// extreme at an end of [kL, kR] or where the hull edge that straddles dx
// changes over.
func (c *centralFit) extreme(h []fitPoint, dx int64, upper bool) i128 {
	// The edge (i, i+1) with d_i ≤ dx < d_{i+1}; the hull's d are
	// strictly increasing.
	j := sort.Search(len(h), func(i int) bool { return h[i].d > dx })
	ks := [4]int64{c.kL, c.kR, c.kL, c.kR}
	if i := j - 1; i >= 0 && i+1 < len(h) {
		// The rates at which its two points tie: (u' − u)·1e12/(d' − d).
		if kb, ok := mul128(h[i+1].u-h[i].u, rateScale).div(h[i+1].d-h[i].d, false); ok {
			ks[2] = min(max(kb, c.kL), c.kR)
			ks[3] = min(max(kb+1, c.kL), c.kR)
		}
	}
	var bv i128
	for n, k := range ks {
		env, _ := envAtScaled(h, k, upper, rateScale)
		if v := env.add(mul128(dx, k)); n == 0 || (!upper && v.cmp(bv) > 0) || (upper && v.cmp(bv) < 0) {
			bv = v
		}
	}
	return bv
}

// span returns the interval the brackets allow for y(x) under the model
// (see project), and the rate range (ppb) its cells cover. An empty
// intersection is an *InconsistencyError naming the two brackets that
// conflict; without brackets it is ErrUnaligned.
func (f *clockFit) span(x int64) (lo, hi int64, rlo, rhi PPB, err error) {
	const lim = 1 << 62
	if absU(x) >= lim {
		return 0, 0, 0, 0, ErrRange
	}
	bs := f.sorted()
	var ref int64
	haveRef := false
	lows, highs := f.lows[:0], f.highs[:0]
	defer func() { f.lows, f.highs = lows[:0], highs[:0] }()
	for _, b := range bs {
		if absU(b.x) >= lim {
			continue
		}
		d := b.x - x
		if !haveRef {
			ref, haveRef = b.refAt(d)
		}
		if b.hasLo() && absU(b.lo) < lim {
			if p, ok := cellSide(b.lo-d-ref, d, f.stabilityAt(d), false); ok {
				p.index = b.index
				lows = append(lows, p)
			}
		}
		if b.hasHi() && absU(b.hi) < lim {
			if p, ok := cellSide(b.hi-d-ref, d, f.stabilityAt(d), true); ok {
				p.index = b.index
				highs = append(highs, p)
			}
		}
	}
	if len(lows) == 0 && len(highs) == 0 {
		return 0, 0, 0, 0, ErrUnaligned
	}
	pr := project(hull(lows, true), hull(highs, false), -int64(f.maxRate), int64(f.maxRate))
	if !pr.feasible {
		return 0, 0, 0, 0, &InconsistencyError{
			Low:  Evidence{Kind: EvidenceBracket, Index: pr.loIndex, Lo: f.byIndex(pr.loIndex).lo, Hi: math.MaxInt64},
			High: Evidence{Kind: EvidenceBracket, Index: pr.hiIndex, Lo: math.MinInt64, Hi: f.byIndex(pr.hiIndex).hi},
		}
	}
	lo, hi = math.MinInt64, math.MaxInt64
	if len(lows) > 0 {
		l, ok := addHost(HostNanos(ref), HostNanos(pr.lo))
		if !ok {
			return 0, 0, 0, 0, ErrRange
		}
		lo = int64(l)
	}
	if len(highs) > 0 {
		u, ok := addHost(HostNanos(ref), HostNanos(pr.hi))
		if !ok {
			return 0, 0, 0, 0, ErrRange
		}
		hi = int64(u)
	}
	return lo, hi, PPB(pr.kLo), PPB(pr.kHi), nil
}

// sorted returns the brackets sorted by x.
func (f *clockFit) sorted() []bracket {
	if f.byX != nil {
		return f.byX
	}
	bs := slices.Clone(f.b)
	slices.SortStableFunc(bs, func(a, b bracket) int { return cmp.Compare(a.x, b.x) })
	f.byX = bs
	return bs
}

// byIndex returns the bracket with the given index.
func (f *clockFit) byIndex(index int) bracket {
	for _, b := range f.b {
		if b.index == index {
			return b
		}
	}
	return bracket{lo: math.MinInt64, hi: math.MaxInt64}
}

// rateRange returns the rate errors (ppb) the brackets allow, taking the
// stability about the middle bracket. With a horizon, the brackets are
// also taken about up to rangeChecks others spread among them: a conflict
// of brackets far from the middle is an error too.
func (f *clockFit) rateRange() (lo, hi PPB, err error) {
	if len(f.b) == 0 {
		return -f.maxRate, f.maxRate, nil
	}
	bs := f.sorted()
	if f.horizon > 0 {
		step := max(len(bs)/rangeChecks, 1)
		for i := 0; i < len(bs); i += step {
			if _, _, _, _, err := f.span(bs[i].x); err != nil {
				return 0, 0, err
			}
		}
	}
	_, _, lo, hi, err = f.span(bs[len(bs)/2].x)
	return lo, hi, err
}

// rangeChecks is how many brackets rateRange takes the brackets about at
// most, with a horizon.
const rangeChecks = 64

// floorDiv is ⌊a/b⌋ for b > 0.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}
