package reduce

import (
	"cmp"
	"errors"
	"slices"
)

// SetAside is a clock anchor a Placer set aside: the evidence of a run
// conflicted (an *InconsistencyError between anchors), and without this
// anchor it no longer did. A bad anchor (a torn or misread record, a host
// window that does not bracket its read) then costs only itself: the
// domain's other anchors keep placing its runs.
type SetAside struct {
	Domain Domain
	// Index is the anchor's order among those added to its domain
	// (AddAnchor), from 0.
	Index int
	// DevCyc is its counter reading; Lo and Hi its host interval (its
	// window widened by a tick and its quantisation).
	DevCyc Cycles
	Lo, Hi HostNanos
	// Conflict is the evidence it disagreed with.
	Conflict Evidence
	// Runs counts the runs placed after it was set aside whose anchors it
	// would have been among (its counter value between their horizon's
	// first and last anchor), the run that set it aside included.
	Runs int64
}

// maxAside is how many anchors a domain sets aside at most; past it, a run
// whose anchors conflict is an *InconsistencyError, as before any was set
// aside. Each costs a pass over the domain's anchors.
const maxAside = 64

// maxAsideTries is how many anchors one run's placement sets aside at
// most.
const maxAsideTries = 4

// SetAside returns the anchors the Placer has set aside so far, in the
// order it set them aside.
func (p *Placer) SetAside() []SetAside { return slices.Clone(p.aside) }

// SetAsideCount returns how many anchors the Placer has set aside so far:
// len(SetAside()), without a copy.
func (p *Placer) SetAsideCount() int { return len(p.aside) }

// anchorEvidence is what a domain's anchors say of a run: the rate range
// at its origin, the origin's interval and how many anchors it used
// (none: the origin is too far from every anchor), xc the origin's
// nominal ns.
type anchorEvidence struct {
	rate rateRange
	iv   interval
	used int
	xc   DeviceNanos
}

// anchorEvidenceAside is anchorEvidence, setting aside the anchors that
// conflict: where the anchors disagree among themselves, the anchors the
// conflict names are taken out one at a time, and the first without which
// the run's anchors agree is set aside for good (see SetAside); up to
// maxAsideTries times, for a conflict that hides another. A conflict no
// one anchor ends stays an *InconsistencyError.
func (p *Placer) anchorEvidenceAside(ds *domainState, run Run) (anchorEvidence, error) {
	ev, err := p.anchorEvidence(ds, run)
	for tries := 0; err != nil && tries < maxAsideTries && len(ds.aside) < maxAside; tries++ {
		var ie *InconsistencyError
		if !errors.As(err, &ie) {
			break
		}
		cands := conflictAnchors(ie)
		if len(cands) == 0 {
			break
		}
		found := false
		for _, idx := range cands {
			pos := slices.IndexFunc(ds.anchors, func(a anchorRec) bool { return int(a.index) == idx })
			if pos < 0 {
				continue
			}
			a := ds.anchors[pos]
			ds.removeAnchor(pos)
			ev2, err2 := p.anchorEvidence(ds, run)
			if err2 == nil {
				other := ie.High
				if !slices.Contains(evidenceAnchors(ie.Low), idx) {
					other = ie.Low
				}
				ds.aside = append(ds.aside, len(p.aside))
				p.aside = append(p.aside, SetAside{Domain: run.Domain, Index: idx, DevCyc: a.cyc, Lo: a.lo, Hi: a.hi, Conflict: other})
				p.refitAround(ds, a)
				ev, err, found = ev2, err2, true
				break
			}
			ds.insertAnchor(pos, a)
		}
		if !found {
			break
		}
	}
	if err == nil && len(ds.aside) > 0 && ev.used > 0 {
		L, R := ds.horizon(run.Origin)
		lo, hi := ds.anchors[max(L, 0)].cyc, ds.anchors[max(R-1, 0)].cyc
		for _, i := range ds.aside {
			if c := p.aside[i].DevCyc; lo <= c && c <= hi {
				p.aside[i].Runs++
			}
		}
	}
	return ev, err
}

// conflictAnchors returns the anchors a conflict between anchors names,
// the low side's first; none when one side is not an anchor's (a host
// window, the maximum rate error, the joint interval of many).
func conflictAnchors(ie *InconsistencyError) []int {
	lo, hi := evidenceAnchors(ie.Low), evidenceAnchors(ie.High)
	if lo == nil || hi == nil {
		return nil
	}
	var out []int
	for _, i := range append(lo, hi...) {
		if !slices.Contains(out, i) {
			out = append(out, i)
		}
	}
	return out
}

// evidenceAnchors returns the anchors a piece of evidence comes from: one
// anchor's, a rate pair's two, none for the joint interval of the nearest
// anchors; nil for evidence of no anchor.
func evidenceAnchors(e Evidence) []int {
	switch {
	case e.Kind == EvidenceAnchor:
		return []int{e.Index}
	case e.Kind == EvidenceRate && e.Index >= 0:
		return []int{e.Index, e.Other}
	case e.Kind == EvidenceJoint || e.Kind == EvidenceJointRate:
		return []int{}
	}
	return nil
}

// anchorEvidence computes what the domain's anchors say of run (see
// the package documentation, "Placement" and "Anchors as lines"). A
// conflict among them is an *InconsistencyError naming two of them.
func (p *Placer) anchorEvidence(ds *domainState, run Run) (anchorEvidence, error) {
	var ev anchorEvidence
	if len(ds.anchors) == 0 {
		return ev, nil
	}
	L, R := ds.horizon(run.Origin)
	r, err := p.rate(ds, L, R)
	if err != nil {
		return ev, err
	}
	ev.rate = r
	xc, ok := nominal(ds.base, run.Origin, ds.freq)
	if !ok {
		return ev, nil
	}
	ev.xc = xc
	q := ratiosOf(ev.rate)
	ev.iv, ev.used = p.anchorInterval(ds, run.Origin, xc, &q, L, R)
	ev.used += p.farInterval(ds, xc, L, R, &ev.iv)
	if ev.used == 0 {
		return ev, nil
	}
	if ev.iv.empty() {
		return ev, &InconsistencyError{Low: ev.iv.loSrc, High: ev.iv.hiSrc}
	}
	// The joint intersection pays where the anchors are few and leave the
	// origin loose; where they already pin it within polygonFrom, or the
	// horizon holds more than polygonAnchors, it adds a few percent at
	// most (see polygonAnchors).
	if ev.iv.hi-ev.iv.lo > polygonFrom && R-L <= polygonAnchors {
		if err := p.polygon(ds, run.Origin, xc, L, R, &ev.rate, &ev.iv); err != nil {
			return ev, err
		}
	}
	return ev, nil
}

// removeAnchor takes the anchor at position pos out of the domain's
// evidence, and insertAnchor puts one back: the anchors stay sorted, and
// what depends on their positions (nominal ns, scan keys)
// is remade.
func (ds *domainState) removeAnchor(pos int) {
	ds.anchors = slices.Delete(ds.anchors, pos, pos+1)
	ds.reindex()
}

func (ds *domainState) insertAnchor(pos int, a anchorRec) {
	ds.anchors = slices.Insert(ds.anchors, pos, a)
	ds.reindex()
}

// reindex remakes what depends on the anchors' positions, the anchors
// being sorted.
func (ds *domainState) reindex() {
	base := ds.base
	if len(ds.anchors) > 0 {
		ds.base = ds.anchors[0].cyc
	}
	if ds.base != base {
		for i := range ds.anchors {
			a := &ds.anchors[i]
			a.x, a.xok = nominal(ds.base, a.cyc, ds.freq)
		}
	}
	n := len(ds.anchors)
	ds.keys = slices.Grow(ds.keys[:0], n)[:n]
	nb := (n + keyBlock - 1) / keyBlock
	ds.keyBlocks = slices.Grow(ds.keyBlocks[:0], nb)[:nb]
	ds.keyGen++
	ds.keyLo, ds.keyHi = 1, 0
}

// refitAround refits the estimate's windows that held anchor a, now set
// aside (all of them when the domain's first anchor changed).
func (p *Placer) refitAround(ds *domainState, a anchorRec) {
	if len(ds.anchors) == 0 || !a.xok || ds.anchors[0].cyc != ds.estBase {
		p.prepareEstimate(ds)
		return
	}
	items := ds.usable()
	x := int64(a.x)
	for li := range ds.levels {
		l := &ds.levels[li]
		j := floorDiv(x, l.step)
		for _, w := range []int64{j - 1, j} {
			i, ok := slices.BinarySearchFunc(l.windows, w, func(e estWindow, w int64) int { return cmp.Compare(e.w, w) })
			win, fok := fitWindow(items, anchorBracket, l.step, w, p.cfg.maxRate, &ds.fits, &ds.brackets)
			switch {
			case ok && fok:
				l.windows[i] = win
			case ok:
				l.windows = slices.Delete(l.windows, i, i+1)
			case fok:
				l.windows = slices.Insert(l.windows, i, win)
			}
		}
	}
}
