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
	// Runs counts the run that set it aside and the runs placed after
	// whose anchors it would have been among (its counter value between
	// the first and the last anchor that placed them).
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
// the run's anchors agree is set aside for good (see SetAside). Where none
// ends it alone, the first whose absence leaves a conflict of other
// anchors is taken out and the search goes on, up to maxAsideTries
// anchors: a conflict can hide another. Where that does not end it either,
// every anchor taken out is put back and the first conflict stands.
func (p *Placer) anchorEvidenceAside(ds *domainState, run Run) (anchorEvidence, error) {
	ev, err := p.anchorEvidence(ds, run)
	if err == nil {
		p.countAside(ds, run, ev, len(ds.aside))
		return ev, nil
	}
	type removal struct {
		pos      int
		a        anchorRec
		conflict Evidence
	}
	var removed []removal
	cur := err
	for len(removed) < maxAsideTries && len(ds.aside)+len(removed) < maxAside {
		var ie *InconsistencyError
		if !errors.As(cur, &ie) {
			break
		}
		var next *removal
		var nextErr error
		for _, idx := range conflictAnchors(ie) {
			pos := slices.IndexFunc(ds.anchors, func(a anchorRec) bool { return int(a.index) == idx })
			if pos < 0 {
				continue
			}
			r := removal{pos: pos, a: ds.anchors[pos], conflict: ie.High}
			if !slices.Contains(evidenceAnchors(ie.Low), idx) {
				r.conflict = ie.Low
			}
			ds.removeAnchor(pos)
			ev2, err2 := p.anchorEvidence(ds, run)
			if err2 == nil {
				removed = append(removed, r)
				for _, r := range removed {
					p.commitAside(ds, run, r.a, r.conflict)
				}
				p.countAside(ds, run, ev2, len(ds.aside)-len(removed))
				return ev2, nil
			}
			var ie2 *InconsistencyError
			if next == nil && errors.As(err2, &ie2) && len(conflictAnchors(ie2)) > 0 && (ie2.Low != ie.Low || ie2.High != ie.High) {
				next, nextErr = &r, err2
			}
			ds.insertAnchor(pos, r.a)
		}
		if next == nil {
			break
		}
		ds.removeAnchor(next.pos)
		removed = append(removed, *next)
		cur = nextErr
	}
	for i := len(removed) - 1; i >= 0; i-- {
		ds.insertAnchor(removed[i].pos, removed[i].a)
	}
	return ev, err
}

// commitAside records anchor a, taken out of the domain's anchors for
// conflicting with c, as set aside by run, and refits the estimate
// without it.
func (p *Placer) commitAside(ds *domainState, run Run, a anchorRec, c Evidence) {
	ds.aside = append(ds.aside, len(p.aside))
	p.aside = append(p.aside, SetAside{Domain: run.Domain, Index: int(a.index), DevCyc: a.cyc, Lo: a.lo, Hi: a.hi, Conflict: c, Runs: 1})
	p.refitAround(ds, a)
}

// countAside counts run, placed, among the runs placed without each of the
// domain's first n anchors set aside whose counter value lies among the
// anchors it was placed by (its horizon and the farSide beyond it).
func (p *Placer) countAside(ds *domainState, run Run, ev anchorEvidence, n int) {
	if n == 0 || ev.used == 0 || len(ds.anchors) == 0 {
		return
	}
	L, R := ds.horizon(run.Origin)
	lo, hi := ds.anchors[max(L-farSide, 0)].cyc, ds.anchors[min(R+farSide, len(ds.anchors))-1].cyc
	for _, i := range ds.aside[:n] {
		if c := p.aside[i].DevCyc; lo <= c && c <= hi {
			p.aside[i].Runs++
		}
	}
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
	ds.reindex(false)
}

func (ds *domainState) insertAnchor(pos int, a anchorRec) {
	ds.anchors = slices.Insert(ds.anchors, pos, a)
	ds.reindex(false)
}

// reindex remakes what depends on the anchors' positions, the anchors
// being sorted: the nominal ns (of all when all is set, else only if the
// first anchor changed) and the scan keys' storage, every block stale.
func (ds *domainState) reindex(all bool) {
	base := ds.base
	if len(ds.anchors) > 0 {
		ds.base = ds.anchors[0].cyc
	}
	if all || ds.base != base {
		for i := range ds.anchors {
			a := &ds.anchors[i]
			a.x, a.xok = nominal(ds.base, a.cyc, ds.freq)
		}
	}
	n := len(ds.anchors)
	ds.keys = slices.Grow(ds.keys[:0], n)[:n]
	nb := (n + keyBlock - 1) / keyBlock
	ds.keyBlocks = slices.Grow(ds.keyBlocks[:0], nb)[:nb]
	ds.keyGen++               // every block is stale
	ds.keyLo, ds.keyHi = 1, 0 // no range's: the next scan sets its own
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
		if !l.fitted {
			continue // fitted without it when a run needs it
		}
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
