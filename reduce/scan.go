package reduce

import "math"

// The anchor scan intersects, for a run's origin, the intervals the
// anchors on each side of it allow, nearest first, as far as
// Placer.cfg.neighbours anchors a side or until an anchor's rate term
// alone is wider than the intersection so far (farther ones are wider
// still). Each anchor tried costs two conversions, and most change
// nothing: past the first few, an anchor's interval holds the
// intersection. Whether one does is decided without converting.
//
// At the ratios of a rate range [ε_lo, ε_hi] (den = 1e9+ε), an anchor a
// at distance d = x_c − x_a behind the origin (d ≥ 1) allows
//
//	lo = a.lo + ⌊(d−1)·1e9/den_hi⌋ = ⌊(a.lo·den_hi − x_a·1e9 + (x_c−1)·1e9) / den_hi⌋
//	hi = a.hi + ⌈(d+1)·1e9/den_lo⌉ + tick = ⌈(a.hi·den_lo − x_a·1e9 + (x_c+1)·1e9) / den_lo⌉ + tick
//
// and one ahead of it (d ≤ −1) the same with den_lo and den_hi swapped
// (at d = −1 the high end's term is 0 at either). So lo > iv.lo exactly
// when the anchor's key a.lo·den − x_a·1e9 is at least (iv.lo+1)·den −
// (x_c−1)·1e9, and hi < iv.hi exactly when a.hi·den − x_a·1e9 is at most
// (iv.hi−tick−1)·den − (x_c+1)·1e9: an anchor's keys depend on the rate
// range alone, the thresholds on the run and the intersection. The
// keys are kept per anchor and per block of keyBlock anchors (the
// largest low key and the smallest high key of each side), so a block
// that holds no anchor able to move an end is passed with two
// comparisons.
//
// Passing an anchor is exact only if the scan would not have stopped at
// it either. Its rate term is r(e) = ⌈(e+1)·1e9/den_lo⌉ − ⌊(e−1)·1e9/den_hi⌋
// at e = |d| ≥ 1 on either side, which is less than e·(a−b) + a + b + 2
// (a = 1e9/den_lo ≥ b = 1e9/den_hi): increasing in e, so below a distance
// found once per intersection (safeDistance) no anchor's rate term can
// exceed the intersection's width. Anchors the keys do not decide (the
// first ones, those at d = 0, those past the safe distance, a block whose
// keys are not exact) are tried as before, so the intervals, their
// evidence and where the scan stops are the same.

// keyBlock is the number of anchors whose keys are bounded together.
const keyBlock = 8

// The scan's sides: anchors behind the origin (smaller counter values,
// scanned downwards) and ahead of it.
const (
	behind = 0
	ahead  = 1
)

// maxSafe is the largest safe distance: every |d| up to it converts by
// ratio.fastAt (try's condition, |d±1| < 2^44).
const maxSafe = 1<<44 - 2

// anchorKeys are one anchor's keys for each side (lo of a.lo, hi of
// a.hi), less its block's base.
type anchorKeys [2]struct{ lo, hi int64 }

// keyBounds are a block's base, the x of its first and last anchors, and
// the largest lo key and the smallest hi key of each side (less the
// base); ok is false when some anchor's keys are not exact (its x
// unknown, or a host end beyond ±2^62, where try's sums could saturate)
// or do not lie within ±2^62 of the base.
type keyBounds struct {
	gen          uint64
	base         i128
	x0, x1       DeviceNanos
	maxLo, minHi [2]int64
	ok           bool
}

// anchorInterval intersects the intervals the domain's anchors near c
// allow for the host instant at which the counter read c, xc nominal ns
// from the domain's first anchor: up to the neighbours on each side,
// among the anchors [L, R) of c's horizon.
func (p *Placer) anchorInterval(ds *domainState, c Cycles, xc DeviceNanos, q *rateRatios, L, R int) (interval, int) {
	as := ds.anchors
	s := anchorScan{as: as, xc: xc, tick: ds.tick, q: q, fast: q.fast(), iv: unbounded()}
	pos := lowerBound(as, c)
	if s.fast && q.lo.den <= q.hi.den && len(ds.keys) == len(as) {
		s.keyed(ds)
	}
	s.side(behind, pos-1, min(pos-L, p.cfg.neighbours))
	s.side(ahead, pos, min(R-pos, p.cfg.neighbours))
	return s.iv, s.used
}

// farSide is how many anchors on each side beyond a run's rate horizon
// farInterval takes.
const farSide = 2

// farInterval intersects iv with what the nearest farSide anchors on each
// side beyond the horizon [L, R) allow through the maximum rate error
// alone (the stability says nothing of the rate that far), and returns
// how many it used.
func (p *Placer) farInterval(ds *domainState, xc DeviceNanos, L, R int, iv *interval) int {
	rho := p.cfg.maxRate
	q := ratiosOf(rateRange{lo: -rho, hi: rho})
	s := anchorScan{as: ds.anchors, xc: xc, tick: ds.tick, q: &q, fast: q.fast(), iv: *iv}
	for i := L - 1; i >= max(L-farSide, 0) && s.try(&ds.anchors[i]); i-- {
	}
	for i := R; i < min(R+farSide, len(ds.anchors)) && s.try(&ds.anchors[i]); i++ {
	}
	*iv = s.iv
	return s.used
}

// anchorScan is anchorInterval's intersection so far.
type anchorScan struct {
	as   []anchorRec
	xc   DeviceNanos
	tick HostNanos
	q    *rateRatios
	fast bool // q.fast()
	iv   interval
	used int

	// The keys (ds set when the scan uses them): the dens of the
	// range's ends, (x_c∓1)·1e9, the thresholds of side tSide (each
	// when its ok is set), and the safe distance (eOK).
	ds       *domainState
	den      [2]int64 // [0] of the range's low end, [1] of its high end
	cLo, cHi i128
	tLo, tHi i128
	tSide    int
	tLoOK    bool
	tHiOK    bool
	safe     DeviceNanos
	eOK      bool
}

// keyed makes the scan use ds's keys, made for the scan's rate range.
func (s *anchorScan) keyed(ds *domainState) {
	dl, dh := int64(s.q.lo.den), int64(s.q.hi.den)
	if ds.keyLo != s.q.lo.e || ds.keyHi != s.q.hi.e {
		ds.keyLo, ds.keyHi = s.q.lo.e, s.q.hi.e
		ds.keyGen++
		ds.keySlope = math.MaxInt64
		if dh != dl {
			ds.keySlope = dl * dh / (nsPerSecond * (dh - dl))
		}
	}
	s.ds = ds
	s.den = [2]int64{dl, dh}
	xs := mul128(int64(s.xc), nsPerSecond)
	s.cLo, s.cHi = xs.sub(i128{lo: nsPerSecond}), xs.add(i128{lo: nsPerSecond})
}

// side tries up to n anchors from as[i] outwards on side sd.
func (s *anchorScan) side(sd, i, n int) {
	step := 1
	if sd == behind {
		step = -1
	}
	ds := s.ds
	// bounded: block b's bounds were compared with the thresholds as they
	// are now, tl and th being the thresholds less the block's base.
	bounded, b := false, -1
	var tl, th int64
	for n > 0 {
		a := &s.as[i]
		if ds != nil {
			if i/keyBlock != b {
				b, bounded = i/keyBlock, false
				if ds.keyBlocks[b].gen != ds.keyGen {
					s.fill(b)
				}
			}
			kb := &ds.keyBlocks[b]
			d := s.xc - a.x
			if kb.ok && (sd == behind && d >= 1 || sd == ahead && d <= -1) {
				if !bounded {
					s.ready(sd)
					tl, th = s.tLo.sub(kb.base).clamp(), s.tHi.sub(kb.base).clamp()
					bounded = true
					// The rest of the block, as far as the scan goes: the
					// block's bounds hold for it, and its farthest anchor
					// is at most as far as the block's end.
					far := kb.x1
					if sd == behind {
						far = kb.x0
					}
					m := keyBlock - i%keyBlock
					if sd == behind {
						m = i%keyBlock + 1
					}
					m = min(m, n)
					if abs(s.xc-far) <= s.safe && kb.maxLo[sd] < tl && kb.minHi[sd] > th {
						s.used += m
						i, n = i+step*m, n-m
						continue
					}
				}
				if k := &ds.keys[i][sd]; abs(d) <= s.safe && k.lo < tl && k.hi > th {
					s.used++
					i, n = i+step, n-1
					continue
				}
			}
		}
		lo, hi := s.iv.lo, s.iv.hi
		goOn := s.try(a)
		if s.iv.lo != lo {
			s.tLoOK, s.eOK, bounded = false, false, false
		}
		if s.iv.hi != hi {
			s.tHiOK, s.eOK, bounded = false, false, false
		}
		if !goOn {
			return
		}
		i, n = i+step, n-1
	}
}

// ready makes the thresholds of side sd and the safe distance those of the
// intersection so far.
func (s *anchorScan) ready(sd int) {
	if !s.eOK {
		s.safe, s.eOK = s.safeDistance(), true
	}
	if s.tSide != sd {
		s.tSide, s.tLoOK, s.tHiOK = sd, false, false
	}
	if !s.tLoOK {
		dl := s.den[1-sd] // behind: lo at den_hi
		if lo := int64(s.iv.lo); lo < math.MaxInt64 {
			s.tLo = mul128(lo+1, dl).sub(s.cLo)
		} else {
			s.tLo = mul128(lo, dl).add(i128{lo: uint64(dl)}).sub(s.cLo)
		}
		s.tLoOK = true
	}
	if !s.tHiOK {
		dh, t := s.den[sd], int64(s.tick)+1
		if hi := int64(s.iv.hi); hi >= math.MinInt64+t {
			s.tHi = mul128(hi-t, dh).sub(s.cHi)
		} else {
			s.tHi = mul128(hi, dh).sub(mul128(t, dh)).sub(s.cHi)
		}
		s.tHiOK = true
	}
}

// safeDistance returns a distance e ≤ maxSafe (−1 for none) up to which the
// rate term is at most the intersection's width W as try computes it:
// e·(a−b) + a + b + 2 ≤ W + 1. As a + b + 2 < 4.001, e·(a−b) ≤ W − 4
// suffices: e ≤ (W−4)·den_lo·den_hi/(1e9·(den_hi−den_lo)), of which
// keySlope is the factor, floored (MaxInt64 for a range of one rate,
// whose rate term does not grow).
func (s *anchorScan) safeDistance() DeviceNanos {
	w := int64(s.iv.hi - s.iv.lo)
	if s.iv.empty() || w < 4 {
		return -1
	}
	k := s.ds.keySlope
	if k == 0 {
		return -1
	}
	if w-4 > maxSafe/k {
		return maxSafe
	}
	return DeviceNanos((w - 4) * k)
}

// fill makes block b's keys for the scan's rate range.
func (s *anchorScan) fill(b int) {
	ds := s.ds
	kb := &ds.keyBlocks[b]
	*kb = keyBounds{gen: ds.keyGen}
	dl, dh := s.den[0], s.den[1]
	first, end := b*keyBlock, min((b+1)*keyBlock, len(ds.anchors))
	for i := first; i < end; i++ {
		a := &ds.anchors[i]
		if !a.xok || absU(int64(a.lo)) >= 1<<62 || absU(int64(a.hi)) >= 1<<62 {
			return
		}
		xs := mul128(int64(a.x), nsPerSecond)
		k := [2][2]i128{
			behind: {mul128(int64(a.lo), dh).sub(xs), mul128(int64(a.hi), dl).sub(xs)},
			ahead:  {mul128(int64(a.lo), dl).sub(xs), mul128(int64(a.hi), dh).sub(xs)},
		}
		if i == first {
			kb.base, kb.x0 = k[behind][0], a.x
		}
		kb.x1 = a.x
		for sd := range 2 {
			lo, ok1 := k[sd][0].sub(kb.base).small()
			hi, ok2 := k[sd][1].sub(kb.base).small()
			if !ok1 || !ok2 {
				return
			}
			ds.keys[i][sd].lo, ds.keys[i][sd].hi = lo, hi
			if i == first || lo > kb.maxLo[sd] {
				kb.maxLo[sd] = lo
			}
			if i == first || hi < kb.minHi[sd] {
				kb.minHi[sd] = hi
			}
		}
	}
	kb.ok = true
}

// try intersects the interval anchor a allows and reports whether the
// anchors beyond it can still narrow the intersection.
func (s *anchorScan) try(a *anchorRec) bool {
	if !a.xok {
		return false
	}
	// x_c and x_a are floored: the exact distance lies in (d−1, d+1).
	d := s.xc - a.x
	var hlo, hhi HostNanos
	if s.fast && absU(int64(d)) < 1<<44-1 {
		// hostLo(d−1) and hostHi(d+1), without their checks.
		hlo, hhi = s.q.end(d-1, false).fastAt(d-1, false), s.q.end(d+1, true).fastAt(d+1, true)
	} else {
		hlo, hhi = s.q.hostLo(d-1), s.q.hostHi(d+1)
		if hlo == math.MinInt64 || hhi == math.MaxInt64 {
			return false
		}
	}
	// The target instant lies in [T(c), T(c)+tick).
	lo, hi := satAdd(a.lo, hlo), satAdd(satAdd(a.hi, hhi), s.tick)
	iv := &s.iv
	if lo > iv.lo {
		iv.lo, iv.loSrc = lo, Evidence{Kind: EvidenceAnchor, Index: int(a.index), Lo: int64(lo), Hi: int64(hi)}
	}
	if hi < iv.hi {
		iv.hi, iv.hiSrc = hi, Evidence{Kind: EvidenceAnchor, Index: int(a.index), Lo: int64(lo), Hi: int64(hi)}
	}
	s.used++
	// Stop once the rate term alone makes this anchor's interval wider
	// than what is already known: farther ones are wider still.
	return !iv.empty() && hhi-hlo <= iv.hi-iv.lo
}
