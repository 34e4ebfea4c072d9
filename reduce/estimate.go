package reduce

import (
	"math"
	"sort"
)

// The anchors of a domain as brackets of one clock fit: x is the nominal
// ns from the domain's first anchor (floored), y host ns.

// estWindow is the constant-rate fit of the anchors whose counter values
// lie in estimate window w of its level: nominal ns [w·step, (w+2)·step)
// from the domain's first anchor.
type estWindow struct {
	w   int64
	n   int // anchors
	fit centralFit
}

// estimateSteps are the estimate's levels, coarsest first: each level's
// windows are two steps long, one starting every step (ns). A run is
// estimated from the coarsest level whose windows around it each admit
// one constant rate through every anchor, so a clock whose rate changes
// is followed by windows short enough to hold one rate, while a steady
// one keeps the long windows' precision.
var estimateSteps = [...]int64{60_000_000_000, 15_000_000_000, 4_000_000_000, 1_000_000_000}

// estLevel is one level of a domain's estimate: its step and the windows
// that have a fit, in order.
type estLevel struct {
	step    int64
	windows []estWindow
	fitted  bool
}

// levels is an estimate's every level, coarsest first.
type levels [len(estimateSteps)]estLevel

// prepareEstimate readies the domain's estimate for its anchors as they
// are: every level is fitted again when a run first needs it (fitLevel;
// see estimateSteps and the package documentation, "Anchors as lines").
func (p *Placer) prepareEstimate(ds *domainState) {
	// The fits of the previous preparation are dropped: their hulls'
	// storage is reused.
	ds.fits.kept = ds.fits.kept[:0]
	for li := range ds.levels {
		ds.levels[li].fitted = false
	}
	if len(ds.anchors) > 0 {
		ds.estBase = ds.anchors[0].cyc
	}
}

// fitLevel fits level li of the domain's estimate if it is not yet: a
// level finer than the coarsest is fitted the first time a run needs it
// (a steady clock never does). Fitting every level up front costs 1.3 %
// of a conversion's instructions where the coarsest serves every run:
// 2,107.1M against 2,079.0M on loggen's first 20 MB (GOGC=off
// GOMAXPROCS=1 valgrind --tool=cachegrind --cache-sim=no on the test
// binary, -test.bench 'ConvertFile$' -test.benchtime 1x -benchfile).
func (p *Placer) fitLevel(ds *domainState, li int) {
	l := &ds.levels[li]
	if l.fitted {
		return
	}
	l.step, l.fitted = estimateSteps[li], true
	l.windows = fitWindows(l.windows[:0], ds.usable(), anchorBracket, l.step, p.cfg.maxRate, &ds.fits, &ds.brackets)
}

// usable returns the anchors a fit takes: sorted by counter value, up to
// the first whose offset does not fit or lies beyond 2^62 ns.
func (ds *domainState) usable() []anchorRec {
	for i, a := range ds.anchors {
		if !a.xok || absU(int64(a.x)) >= 1<<62 {
			return ds.anchors[:i]
		}
	}
	return ds.anchors
}

// anchorBracket is an anchor as a fit's bracket.
func anchorBracket(a *anchorRec) bracket {
	return bracket{x: int64(a.x), lo: int64(a.lo), hi: int64(a.hi), index: int(a.index)}
}

// fitLevels fits every level's windows of ls over items, sorted by their
// brackets' x (get), in scratch and with tmp's storage for one window's
// brackets.
func fitLevels[T any](ls *levels, items []T, get func(*T) bracket, maxRate PPB, scratch *fitScratch, tmp *[]bracket) {
	for li, h := range estimateSteps {
		ls[li].step, ls[li].fitted = h, true
		ls[li].windows = fitWindows(ls[li].windows[:0], items, get, h, maxRate, scratch, tmp)
	}
}

// fitWindow returns window w of step h over items (ok false when it has
// no fit).
func fitWindow[T any](items []T, get func(*T) bracket, h, w int64, maxRate PPB, scratch *fitScratch, tmp *[]bracket) (estWindow, bool) {
	lo, hi := w*h, satAdd(satAdd(w*h, h), h)
	i := sort.Search(len(items), func(i int) bool { return get(&items[i]).x >= lo })
	bs := (*tmp)[:0]
	for ; i < len(items); i++ {
		b := get(&items[i])
		if b.x >= hi {
			break
		}
		bs = append(bs, b)
	}
	*tmp = bs[:0]
	fit, ok := fitCentral(bs, maxRate, scratch)
	return estWindow{w: w, n: len(bs), fit: fit}, ok
}

// fitWindows appends to ws the fits of the windows of step h that hold
// some of items.
func fitWindows[T any](ws []estWindow, items []T, get func(*T) bracket, h int64, maxRate PPB, scratch *fitScratch, tmp *[]bracket) []estWindow {
	bs := (*tmp)[:0]
	defer func() { *tmp = bs[:0] }()
	n := len(items)
	start, last := 0, int64(-1)
	for start < n {
		// The first window after the last one tried that holds
		// items[start]: it lies in windows ⌊x/h⌋−1 and ⌊x/h⌋.
		w := max(floorDiv(get(&items[start]).x, h)-1, last+1)
		last = w
		lo, mid, hi := w*h, satAdd(w*h, h), satAdd(satAdd(w*h, h), h)
		bs = bs[:0]
		next := n
		for i := start; i < n; i++ {
			b := get(&items[i])
			if b.x >= hi {
				break
			}
			if b.x < lo {
				continue
			}
			if b.x >= mid && next == n {
				next = i // the first item of window w+1
			}
			bs = append(bs, b)
		}
		if fit, ok := fitCentral(bs, maxRate, scratch); ok {
			ws = append(ws, estWindow{w: w, n: len(bs), fit: fit})
		}
		// The next window starts at the first item in [(w+1)·h,
		// (w+2)·h), or at the next item beyond this window.
		if next == n {
			next = start
			for next < n && get(&items[next]).x < hi {
				next++
			}
		}
		start = next
	}
	return ws
}

// window returns window w of level l, if it has a fit.
func (l *estLevel) window(w int64) (*estWindow, bool) {
	i := sort.Search(len(l.windows), func(i int) bool { return l.windows[i].w >= w })
	if i < len(l.windows) && l.windows[i].w == w {
		return &l.windows[i], true
	}
	return nil, false
}

// levelEst is what one level's fits allow at a counter value: host
// instants [lo, hi], and the central lines' value y and host rate k
// (1e-12).
type levelEst struct{ lo, hi, y, k int64 }

// minFit is how many anchors a window below the coarsest level holds at
// least to be taken: fewer admit a constant rate whatever the clock did.
const minFit = 4

// at returns level l's estimate at x: the fits of the two windows around
// it, blended by x's position between their centres, or the one of them
// that has a fit. ok is false when neither has one; feasible says whether
// every fit taken admits a constant rate through all its anchors, and
// least is the fewest anchors of a window taken.
func (l *estLevel) at(x int64) (e levelEst, ok, feasible bool, least int) {
	get := func(w int64) (levelEst, bool, bool, int) {
		win, ok := l.window(w)
		if !ok {
			return levelEst{}, false, false, 0
		}
		lo, hi, k, ok := win.fit.at(x)
		y, ok2 := win.fit.line.at(x)
		if !ok || !ok2 {
			return levelEst{}, false, false, 0
		}
		return levelEst{lo: lo, hi: hi, y: y, k: k}, true, win.fit.feasible, win.n
	}
	h := l.step
	j := floorDiv(x, h) // x lies in windows j−1 and j
	e1, ok1, f1, n1 := get(j - 1)
	e2, ok2, f2, n2 := get(j)
	switch {
	case ok1 && ok2:
		// Window j−1 is centred on j·h, window j on (j+1)·h.
		f := x - j*h
		blend := func(a, b int64, ceil bool) (int64, bool) {
			d, ok := mulDiv(b-a, f, h, ceil)
			v, ok2 := addHost(HostNanos(a), HostNanos(d))
			return int64(v), ok && ok2
		}
		var oks [4]bool
		e.lo, oks[0] = blend(e1.lo, e2.lo, false)
		e.hi, oks[1] = blend(e1.hi, e2.hi, true)
		e.k, oks[2] = blend(e1.k, e2.k, false)
		e.y, oks[3] = blend(e1.y, e2.y, false)
		return e, oks == [4]bool{true, true, true, true}, f1 && f2, min(n1, n2)
	case ok1:
		return e1, true, f1, n1
	case ok2:
		return e2, true, f2, n2
	}
	return levelEst{}, false, false, 0
}

// nearest returns the estimate at x of level l's window nearest to it,
// extrapolated (ok false when the level has none).
func (l *estLevel) nearest(x int64) (levelEst, bool) {
	if len(l.windows) == 0 {
		return levelEst{}, false
	}
	j := floorDiv(x, l.step)
	i := sort.Search(len(l.windows), func(i int) bool { return l.windows[i].w >= j })
	switch {
	case i == len(l.windows):
		i--
	case i > 0 && absU(l.windows[i-1].w-j) <= absU(l.windows[i].w-j):
		i--
	}
	lo, hi, k, ok := l.windows[i].fit.at(x)
	y, ok2 := l.windows[i].fit.line.at(x)
	return levelEst{lo: lo, hi: hi, y: y, k: k}, ok && ok2
}

// estimateAt returns, for the counter value xd nominal ns from the
// domain's first anchor, the host instants [lo, hi] at which the
// constant-rate fits around it allow the counter to have read it, and the
// counter rate error (ppb) of their central lines (see levels.at). ok is
// false when no window has a fit.
func (p *Placer) estimateAt(ds *domainState, xd DeviceNanos) (lo, hi HostNanos, rate PPB, ok bool) {
	e, ok := ds.levels.at(int64(xd), func(li int) { p.fitLevel(ds, li) })
	if !ok {
		return 0, 0, 0, false
	}
	// Host rate error κ (1e-12) to counter rate error ε (ppb):
	// ε = −κ/(1+κ).
	r, ok := mulDiv(-e.k, nsPerSecond, rateScale+e.k, false)
	if !ok {
		return 0, 0, 0, false
	}
	return HostNanos(e.lo), HostNanos(e.hi), PPB(r), true
}

// at returns what the levels' fits allow at x: from the coarsest level
// whose fits there each admit one rate through all their brackets (below
// the coarsest, windows of minFit brackets or more); where none does, from
// the finest level whose windows there hold minFit brackets, through their
// minimax lines, else from the coarsest level with a fit there; else
// extrapolated from the coarsest level's nearest window. ok is false when
// no window has a fit.
func (ls *levels) at(x int64, fit func(li int)) (levelEst, bool) {
	var e, coarse levelEst
	found, haveCoarse := false, false
	for li := range ls {
		if fit != nil {
			fit(li)
		}
		le, ok, feasible, least := ls[li].at(x)
		if !ok {
			continue
		}
		if !haveCoarse {
			coarse, haveCoarse = le, true
		}
		if li > 0 && least < minFit {
			continue
		}
		e, found = le, true
		if feasible {
			break
		}
	}
	if !found {
		e, found = coarse, haveCoarse
	}
	if !found {
		e, found = ls[0].nearest(x)
	}
	return e, found
}

// at's levels are fitted before they are read: ls.at(x, fit) calls fit
// for each level it reads, coarsest first.

// hostRate converts a counter rate error ε (ppb) to the host rate error κ
// (host ns per nominal device ns, minus one, in ppb): κ = −ε·1e9/(1e9+ε),
// rounded down or up. The map is its own inverse: it converts κ to ε too.
func hostRate(e PPB, ceil bool) (int64, bool) {
	return mulDiv(-int64(e), nsPerSecond, nsPerSecond+int64(e), ceil)
}

// polygon intersects iv and r with what the anchors in the rate horizon
// of c allow jointly, taken as brackets of one clock fit: each anchor
// bounds the host instant at its counter value, the rate between it and c
// lies within the stability of the rate at c, and the rate at c within r
// (see the package documentation, "Anchors as lines"). xc is c's nominal ns
// from the domain's first anchor, [L, R) its horizon (see horizon).
func (p *Placer) polygon(ds *domainState, c Cycles, xc DeviceNanos, L, R int, r *rateRange, iv *interval) error {
	if R-L < 2 {
		return nil
	}
	kmin, ok1 := hostRate(r.hi, false)
	kmax, ok2 := hostRate(r.lo, true)
	// A move of ε by the stability moves κ by at most
	// stability·(1e9/(1e9+ε))², ε ≥ −(ρ + stability).
	den := nsPerSecond - int64(p.cfg.maxRate) - int64(p.cfg.stability)
	if !ok1 || !ok2 || den <= 0 {
		return nil
	}
	x, ok1 := mulDiv(int64(p.cfg.stability), nsPerSecond, den, true)
	sh, ok2 := mulDiv(x, nsPerSecond, den, true)
	if !ok1 || !ok2 {
		return nil
	}
	pos := L + lowerBound(ds.anchors[L:R], c)
	first, last := max(L, pos-polyNeighbours), min(R, pos+polyNeighbours)
	if cap(ds.lows) < 2*polyNeighbours {
		// Each anchor taken adds at most one side to each.
		ds.lows, ds.highs = make([]fitPoint, 0, 2*polyNeighbours), make([]fitPoint, 0, 2*polyNeighbours)
	}
	lows, highs := ds.lows[:0], ds.highs[:0]
	var ref int64
	haveRef := false
	for i := first; i < last; i++ {
		a := ds.anchors[i]
		if !a.xok {
			continue
		}
		// Both are floored: the exact distance lies within 1 ns of d, so
		// the host time within 2 ns.
		d := a.x - xc
		lo, hi := int64(satAdd(a.lo, -2)), int64(satAdd(a.hi, 2))
		if lo == math.MinInt64 || hi == math.MaxInt64 {
			continue // a window without end bounds nothing here
		}
		if !haveRef {
			ref, haveRef = lo-int64(d), true
		}
		if lp, ok := cellSide(lo-int64(d)-ref, int64(d), PPB(sh), false); ok {
			lp.index = int(a.index)
			lows = append(lows, lp)
		}
		if hp, ok := cellSide(hi-int64(d)-ref, int64(d), PPB(sh), true); ok {
			hp.index = int(a.index)
			highs = append(highs, hp)
		}
	}
	ds.lows, ds.highs = lows, highs
	if len(lows) < 2 || len(highs) < 2 {
		return nil
	}
	pr := project(hull(lows, true), hull(highs, false), kmin, kmax+1)
	if !pr.feasible {
		return &InconsistencyError{
			Low:  Evidence{Kind: EvidenceAnchor, Index: pr.loIndex, Lo: math.MinInt64, Hi: math.MaxInt64},
			High: Evidence{Kind: EvidenceAnchor, Index: pr.hiIndex, Lo: math.MinInt64, Hi: math.MaxInt64},
		}
	}
	lo, ok1 := addHost(HostNanos(ref), HostNanos(pr.lo))
	hi, ok2 := addHost(HostNanos(ref), HostNanos(pr.hi))
	if !ok1 || !ok2 {
		return nil // out of range: the per-anchor intervals stand
	}
	ev := Evidence{Kind: EvidenceJoint, Lo: int64(lo), Hi: int64(hi)}
	iv.intersect(lo, hi, ev)
	if iv.empty() {
		return &InconsistencyError{Low: iv.loSrc, High: iv.hiSrc}
	}
	// The rate at c, widened by the stability for the run's own span.
	// The map between ε and κ is its own inverse.
	elo, ok1 := hostRate(PPB(pr.kHi), false)
	ehi, ok2 := hostRate(PPB(pr.kLo), true)
	if ok1 && ok2 {
		elo, ehi = elo-int64(p.cfg.stability), ehi+int64(p.cfg.stability)
		rev := Evidence{Kind: EvidenceJointRate, Lo: elo, Hi: ehi}
		if PPB(elo) > r.lo {
			r.lo, r.loSrc = PPB(elo), rev
		}
		if PPB(ehi) < r.hi {
			r.hi, r.hiSrc = PPB(ehi), rev
		}
		if r.lo > r.hi {
			return &InconsistencyError{Low: r.loSrc, High: r.hiSrc}
		}
	}
	return nil
}

// polyNeighbours is how many anchors on each side of the mapped counter
// value the joint intersection takes (the farther ones enter through the
// per-anchor intervals and the rate estimate).
const polyNeighbours = 8

// polygonFrom is the width of the per-anchor intersection above which the
// joint one is computed.
const polygonFrom HostNanos = 1000

// polygonAnchors is the most anchors a horizon holds for the joint
// intersection to be computed. With more, the per-anchor intersection is
// within 4 % of it (the median bound with anchors every 100 ms is 4.18 µs
// without it, 4.05 µs with it: go test ./reduce -run TestAccuracyTable
// -v), while it costs 8 % of a whole conversion's CPU time
// (BenchmarkConvertFile on loggen's 100 MB log, -cpuprofile).
const polygonAnchors = 2 * polyNeighbours

// lowerBound returns the first index of as with cyc ≥ c.
func lowerBound(as []anchorRec, c Cycles) int {
	lo, hi := 0, len(as)
	for lo < hi {
		m := lo + (hi-lo)/2
		if as[m].cyc < c {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}
