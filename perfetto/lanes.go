package perfetto

import (
	"errors"
	"math"
	"slices"
)

// MaxDepth is the deepest nesting the trace processor keeps: it drops a
// slice or instant that would be at depth MaxDepth or more on its track
// (counting from 0), logging slice_max_depth_exceeded, and the end of such
// a slice then closes its parent early. The writer puts a slice that would
// be nested that deep on an overflow lane instead (ErrTooDeep).
const MaxDepth = 512

// MaxOverflowLanes is how many overflow lanes a track may have. A slice
// that fits on none of them is refused with ErrTooManyLanes.
const MaxOverflowLanes = 64

// Why a slice is written on an overflow lane rather than on its track
// (Overflow.Err; see Flush), and why one is refused when no lane takes it
// (an *EventError wrapping ErrTooManyLanes, whose Other says why the slice
// did not fit on its track).
var (
	ErrOverlap      = errors.New("slice partially overlaps another slice on the same track")
	ErrOutOfOrder   = errors.New("slice would enclose a slice already flushed on its track that starts at the same instant, or end where one starts")
	ErrTooDeep      = errors.New("slice would be nested deeper than the trace processor keeps (MaxDepth)")
	ErrUnverifiable = errors.New("slice may conflict with slices flushed before that the writer no longer remembers")
	ErrTooManyLanes = errors.New("slice fits on no overflow lane of its track (MaxOverflowLanes)")
)

// overflowReason is the debug annotation that says why a slice is on an
// overflow lane.
const overflowReason = "overflow_reason"

// Overflow is a slice or instant written on an overflow lane of its track
// rather than on the track itself (see Flush).
type Overflow struct {
	Track   string // the original track's label ("thread 12/34", a track name)
	Lane    int    // the overflow lane, from 1
	Name    string
	TS, Dur int64
	Ref     uint64 // the caller's Slice.Ref or Instant.Ref
	Err     error  // why: ErrOverlap, ErrOutOfOrder, ErrTooDeep or ErrUnverifiable
}

// WithOverflowFunc sets a function called once for each slice or instant
// written on an overflow lane, at the end of the Flush or Close that wrote
// it. It must not call the Writer.
func WithOverflowFunc(f func(Overflow)) Option { return func(c *config) { c.overflow = f } }

// An overflow lane is a track of its own beside the track it relieves
// (under a thread's process, under a custom track's parent), named after
// it and never merged with its siblings. Its events stay on the original
// track's packet sequence, where their names and arguments were interned,
// and name the lane with an explicit TrackEvent.track_uuid.
type overflowLane struct {
	uuid uint64
	mem  laneMemory
}

// laneMemory is what a lane remembers of the slices flushed on it, for
// checking the slices of later flushes: its latest-starting maxRemembered
// top-level slices one by one (roots), and the earlier ones as the
// stretches of time they cover (past). Both are exact at the top level: a
// later slice that lies in a gap between top-level slices, or encloses
// some, is decided as if the lane remembered every slice. What the lane no
// longer knows is what lies inside an old top-level slice (see fit).
type laneMemory struct {
	// roots are disjoint but for shared boundaries, so sorted by start
	// they are sorted by end too. They start at or after the end of past.
	roots []root
	hi    int64 // the latest end among roots
	// past are disjoint but for shared boundaries, sorted: each covers
	// top-level slices that abut one another (or, past maxPast, the
	// slices on both sides of the narrowest gaps).
	past []extent
}

// root is a top-level slice flushed on a lane: its extent, how deep its
// subtree is, and the extent its descendants cover, so that a later slice
// lying in it before or after all of them can be verified.
type root struct {
	ts, end        int64
	kidsLo, kidsHi int64 // the earliest start and latest end of its descendants; MaxInt64, MinInt64: none
	loEnd          int64 // the latest end among the descendants that start at kidsLo
	height         int32 // levels of slices in its subtree, itself included
	hiZero         bool  // a descendant of no length lies at kidsHi
}

func newRoot(ts, end int64) root {
	return root{ts: ts, end: end, kidsLo: math.MaxInt64, kidsHi: math.MinInt64}
}

// grow records that the subtree reaches levels deep and that descendants
// cover [lo, hi] (none if lo > hi), the longest of those starting at lo
// ending at loEnd, one of no length at hi if hiZero.
func (r *root) grow(levels int32, lo, loEnd, hi int64, hiZero bool) {
	r.height = max(r.height, levels)
	r.kidsLo, r.loEnd = minStart(r.kidsLo, r.loEnd, lo, loEnd)
	r.kidsHi, r.hiZero = maxEnd(r.kidsHi, r.hiZero, hi, hiZero)
}

// minStart returns the earlier of two starts, each with the latest end of
// the slices that start there.
func minStart(a, aEnd, b, bEnd int64) (int64, int64) {
	switch {
	case a < b:
		return a, aEnd
	case b < a:
		return b, bEnd
	}
	return a, max(aEnd, bEnd)
}

// maxEnd returns the later of two ends, each with whether a slice of no
// length lies there.
func maxEnd(a int64, aZero bool, b int64, bZero bool) (int64, bool) {
	switch {
	case a > b:
		return a, aZero
	case b > a:
		return b, bZero
	}
	return a, aZero || bZero
}

// endZero reports whether a slice of no length lies at the root's end: the
// root itself, or a descendant.
func (r *root) endZero() bool { return r.ts == r.end || r.kidsHi == r.end && r.hiZero }

// maxRemembered bounds the top-level slices a lane remembers one by one.
const maxRemembered = 64

// extent is a stretch of a lane covered by top-level slices flushed before
// that the lane no longer remembers one by one: their union, which is
// enough to decide exactly a later slice that lies outside it or encloses
// it, and what a later slice that starts or ends at its edges meets there.
type extent struct {
	ts, end  int64
	firstEnd int64 // the end of its first top-level slice, which starts at ts
	height   int32 // levels of its deepest subtree
	endZero  bool  // a slice of no length lies at end
	gaps     bool  // it was merged across a gap between its slices (maxPast)
}

// maxPast bounds the extents a lane keeps: past it, the narrowest gaps
// between them are given up, merging the extents on either side, until
// maxPast/4 are left. A lane that never had more than maxPast gaps between
// its top-level slices is decided exactly at the top level.
const maxPast = 1024

// memory returns what lane l of t remembers.
func (t *trackState) memory(l int) *laneMemory {
	if l == 0 {
		return &t.mem
	}
	return &t.lanes[l-1].mem
}

// laneWork is a lane's state while a flush places a track's slices.
type laneWork struct {
	stack    []int32 // open slices placed on the lane (indices in pending)
	roots    []root  // top-level slices placed on the lane
	enclosed uint64  // remembered roots enclosed by placed slices, a bit each
	// group is where the slice at the bottom of the stack counts the
	// height of its subtree: a remembered root (>= 0) or one of roots (^i).
	group int
	// The trace processor nests instants at one timestamp in one another:
	// chainN instants at chainTS were placed at stack depth chainAt, the
	// first counting its levels in chainG.
	chainTS         int64
	chainN, chainAt int32
	chainG          int
	// What the slices of this flush add to the remembered roots they lie
	// in (those with a bit in grown), applied by remember.
	grown uint64
	grow  [maxRemembered]root
	// gone lists the ranges [lo, hi) of the lane's past that slices of
	// this flush enclose, which remember drops (their heights and extents
	// went into the roots enclosing them).
	gone []int32
	// widths is givePastGaps' scratch.
	widths []int64
}

// Reasons a slice does not fit on a lane.
const (
	fits          = iota
	overlapsNew   // partially overlaps other, of this flush
	overlapsOld   // partially overlaps iv, written before
	enclosesOld   // encloses iv, written before, which starts at the same instant
	endsAtOld     // ends where iv, written before, starts
	tooDeep       // would be nested MaxDepth deep or more
	crossesPast   // starts or ends strictly inside iv, top-level slices written long before that abut one another
	inPast        // lies in iv, top-level slices written long before, or has an end in a gap given up there
	inOldChildren // lies in iv, written before, among its children, which are forgotten
)

// conflict is why a slice does not fit on a lane, and with what.
type conflict struct {
	why   int
	other int32    // overlapsNew: the slice of this flush (index in pending)
	iv    interval // otherwise: the slice written before, if any
}

// interval is a written slice's extent.
type interval struct{ ts, end int64 }

func (c conflict) err() error {
	switch c.why {
	case overlapsNew, overlapsOld, crossesPast:
		return ErrOverlap
	case enclosesOld, endsAtOld:
		return ErrOutOfOrder
	case tooDeep:
		return ErrTooDeep
	}
	return ErrUnverifiable
}

// reason is the text of the overflow_reason annotation.
func (c conflict) reason(ps []pendingSlice) string {
	old := "[" + itoa(c.iv.ts) + ", +" + itoa(c.iv.end-c.iv.ts) + "] written before"
	switch c.why {
	case overlapsNew:
		return "partially overlaps " + describe(&ps[c.other])
	case overlapsOld:
		return "partially overlaps " + old
	case enclosesOld:
		return "encloses " + old + ", which starts at the same instant"
	case endsAtOld:
		return "ends where " + old + " starts"
	case tooDeep:
		return "nested deeper than " + itoa(MaxDepth)
	case crossesPast:
		return "partially overlaps slices written before in [" + itoa(c.iv.ts) + ", +" + itoa(c.iv.end-c.iv.ts) + "]"
	case inPast:
		return "lies in [" + itoa(c.iv.ts) + ", +" + itoa(c.iv.end-c.iv.ts) + "], covered by slices written long before, which the writer no longer remembers one by one"
	}
	return "lies among the children of " + old + ", which the writer no longer remembers"
}

func describe(p *pendingSlice) string {
	return "\"" + p.label + "\" [" + itoa(p.ts) + ", +" + itoa(p.end-p.ts) + "]"
}

// reloc is a slice placed on an overflow lane, and why it left lane 0.
type reloc struct {
	i int32 // index in pending
	c conflict
}

// noLane marks a slice no lane took.
const noLane = 0xff

// flushTrack writes t's pending slices. It sorts them by start, then
// longest first (then Depth, then given order), places each on a lane
// (place), and writes each lane's slices as begin/end events in an order
// whose stable sort by timestamp (what the trace processor does) replays
// as the nesting the intervals describe: each slice's end is written just
// before the first event at or after it that lies outside it. The events
// come out in timestamp order, so ties keep this order in the trace
// processor.
func (w *Writer) flushTrack(t *trackState) {
	ps := t.pending
	order := w.lanes.order[:0]
	for i := range ps {
		order = append(order, sortKey{ts: ps[i].ts, end: ps[i].end, depth: ps[i].depth, i: int32(i)})
	}
	sortKeys(order)
	w.lanes.order = order
	if lanes := w.place(t, order); lanes > 1 {
		w.writeLanes(t, order, lanes)
	}
	w.lanes.relocs = w.lanes.relocs[:0]
	t.wrote = true
	clear(ps) // drop references to the caller's strings
	t.pending = ps[:0]
	if cap(ps) <= smallPending {
		t.pending = nil // a quiet track keeps no buffer between flushes
		w.waiting.free = append(w.waiting.free, ps[:0])
	}
}

// smallPending is the capacity of pending slices below which a track lets
// its buffer go at each flush, to the writer's free ones (waiting.free):
// busy tracks keep theirs, and the many quiet ones cost nothing between
// flushes. A track given a slice with no buffer takes a free one, or makes
// one of this capacity.
const smallPending = 4

// place puts each slice of order on the first lane of t where it fits,
// creating overflow lanes as needed, writes the slices of lane 0 (the
// track itself) as it goes, and updates what each lane remembers. It
// returns how many lanes hold slices.
func (w *Writer) place(t *trackState, order []sortKey) (lanes int) {
	n := 1 + len(t.lanes)
	w.lanes.work = slices.Grow(w.lanes.work[:0], n)[:n]
	for l := range w.lanes.work {
		w.lanes.work[l].reset()
	}
	w.lanes.laneOf = slices.Grow(w.lanes.laneOf[:0], len(order))[:len(order)]
	ps := t.pending
	lanes = 1
	var noMore error // why no lane can be added in this flush
	for k, o := range order {
		p := &ps[o.i]
		open := w.lanes.work[0].stack
		why, j := w.fit(t, 0, o.i)
		if why == fits {
			// Write lane 0 now: the ends of the slices p pops, then p.
			for x := len(open) - 1; x >= j; x-- {
				w.writeEnd(t, &ps[open[x]], 0)
			}
			w.writeBegin(t, p, 0, "")
			w.lanes.work[0].push(p, o.i)
			w.lanes.laneOf[k] = 0
			continue
		}
		first := w.lanes.conflict
		first.why = why
		l := 1
		for ; ; l++ {
			if l == len(w.lanes.work) {
				if noMore == nil {
					noMore = w.addLane(t)
				}
				if noMore != nil {
					break
				}
			}
			if why, _ := w.fit(t, l, o.i); why == fits {
				w.lanes.work[l].push(p, o.i)
				break
			}
		}
		if l == len(w.lanes.work) {
			w.lanes.laneOf[k] = noLane
			w.refuseUnplaced(t, p, noMore, first.reason(ps))
			continue
		}
		w.lanes.laneOf[k] = uint8(l)
		lanes = max(lanes, l+1)
		w.stats.Overflowed++
		w.lanes.relocs = append(w.lanes.relocs, reloc{i: o.i, c: first})
		if w.cfg.overflow != nil {
			w.lanes.overflows = append(w.lanes.overflows, Overflow{Track: t.label(), Lane: l, Name: p.label, TS: p.ts, Dur: p.end - p.ts, Ref: p.ref, Err: first.err()})
		}
	}
	for open := w.lanes.work[0].stack; len(open) > 0; open = open[:len(open)-1] {
		w.writeEnd(t, &ps[open[len(open)-1]], 0)
	}
	for l := range w.lanes.work {
		w.remember(&w.lanes.work[l], t.memory(l))
	}
	return lanes
}

// push puts p, just placed by fit, on the lane's stack of open slices.
func (lw *laneWork) push(p *pendingSlice, pi int32) {
	if !p.instant {
		lw.stack = append(lw.stack, pi)
	}
}

func (lw *laneWork) reset() {
	lw.stack, lw.roots, lw.gone = lw.stack[:0], lw.roots[:0], lw.gone[:0]
	lw.enclosed, lw.group, lw.chainN, lw.grown = 0, 0, 0, 0
}

// fit places the slice pending[pi] on lane l of t if it fits there: it
// nests among the slices of this flush on the lane and those remembered
// from earlier flushes, and its depth, and the depth it gives the slices
// it encloses, stay below MaxDepth. Otherwise it returns why not, and
// leaves what it conflicts with in w.lanes.conflict. Placed, the slice is its
// lane's, but for being pushed on the lane's stack of open slices (push):
// fit leaves the stack popped to the slice's parent, its first j entries.
// Each rule is a method of its own, applied in turn: fitOpen, fitPast,
// fitRoots, fitChildren, fitDepth; take places the slice.
//
// Against earlier flushes it decides as if it remembered every slice,
// but where a slice lies inside an old top-level slice: among the
// children of one of the latest maxRemembered (inOldChildren), or inside
// an older one, or with an end in a gap given up past maxPast (inPast).
func (w *Writer) fit(t *trackState, l int, pi int32) (why, j int) {
	lw, m, p := &w.lanes.work[l], t.memory(l), &t.pending[pi]
	f := fitting{
		a: p.ts, b: p.end, inside: -1, goneLo: -1, goneHi: -1,
		lo: math.MaxInt64, loEnd: math.MinInt64, hi: math.MinInt64,
	}
	// Among this flush's slices first; then against the slices of earlier
	// flushes, whose events come first in the file among those with equal
	// timestamps; then the depth all that gives it.
	if why = w.fitOpen(lw, t.pending, &f); why != fits {
		return why, 0
	}
	if why = w.fitPast(m, &f); why != fits {
		return why, 0
	}
	if why = w.fitRoots(m, &f); why != fits {
		return why, 0
	}
	if why = w.fitChildren(m, &f); why != fits {
		return why, 0
	}
	if why = lw.fitDepth(p, &f); why != fits {
		return why, 0
	}
	lw.take(p, &f)
	return fits, f.j
}

// fitting is what fit learns of a slice [a, b] on a lane as it checks it
// rule by rule: where it nests, and what it encloses of the slices written
// before, which it adds to the top-level slice it lies in once placed.
type fitting struct {
	a, b           int64
	j              int    // it nests in the first j of the lane's open slices (fitOpen)
	goneLo, goneHi int    // the range of the lane's past it encloses (fitPast)
	inside         int    // the remembered root it lies in, or -1 (fitRoots)
	enclosed       uint64 // the remembered roots it encloses, a bit each (fitRoots)
	depth          int32  // its depth on the lane (fitDepth)
	chained        bool   // an instant nested in instants at its timestamp (fitDepth)
	// What it encloses of the slices written before: the height of the
	// deepest, their extent [lo, hi], the latest end of those that start at
	// lo, and whether one of no length lies at hi.
	deepest       int32
	lo, loEnd, hi int64
	hiZero        bool
}

// enclose records that the slice encloses slices written before that are
// height levels deep and cover [lo, hi], the longest of those starting at
// lo ending at loEnd, one of no length at hi if hiZero.
func (f *fitting) enclose(height int32, lo, loEnd, hi int64, hiZero bool) {
	f.deepest = max(f.deepest, height)
	f.lo, f.loEnd = minStart(f.lo, f.loEnd, lo, loEnd)
	f.hi, f.hiZero = maxEnd(f.hi, f.hiZero, hi, hiZero)
}

// fitOpen applies the rule among this flush's slices on the lane: sorted,
// p starts at or after each, so it pops those that end before it, as
// writeLane does, and must nest in the first that does not
// (overlapsNew).
func (w *Writer) fitOpen(lw *laneWork, ps []pendingSlice, f *fitting) int {
	j := len(lw.stack)
	for ; j > 0; j-- {
		top := &ps[lw.stack[j-1]]
		if f.b <= top.end {
			break // p nests in top
		}
		if f.a < top.end {
			w.lanes.conflict.other = lw.stack[j-1]
			return overlapsNew
		}
	}
	f.j = j
	return fits
}

// fitPast applies the rule against the lane's past (fitExtents) to a slice
// that reaches back into it, and counts what it encloses there.
func (w *Writer) fitPast(m *laneMemory, f *fitting) int {
	n := len(m.past)
	if n == 0 || f.a > m.past[n-1].end {
		return fits
	}
	why, lo, hi := w.fitExtents(m.past, f.a, f.b)
	f.goneLo, f.goneHi = lo, hi
	if why != fits {
		return why
	}
	for x := lo; x < hi; x++ {
		e := &m.past[x]
		f.enclose(e.height, e.ts, e.firstEnd, e.end, e.endZero)
	}
	return fits
}

// fitRoots applies the rule against the lane's remembered roots (fitRoot)
// to each that the slice meets.
func (w *Writer) fitRoots(m *laneMemory, f *fitting) int {
	if len(m.roots) == 0 || f.b < m.roots[0].ts || f.a > m.hi {
		return fits
	}
	for r := range m.roots {
		rt := &m.roots[r]
		if rt.end < f.a {
			continue
		}
		if rt.ts > f.b {
			break
		}
		if why := w.fitRoot(rt, r, f); why != fits {
			return why
		}
	}
	return fits
}

// fitRoot checks the slice against remembered root r, which it meets: it
// encloses r, or lies in it (then fitChildren decides), or starts where r
// ends; otherwise it partially overlaps r (overlapsOld), or would begin
// inside r (enclosesOld), or its end would come after r's begin
// (endsAtOld).
func (w *Writer) fitRoot(rt *root, r int, f *fitting) int {
	a, b, s, e := f.a, f.b, rt.ts, rt.end
	w.lanes.conflict.iv = interval{s, e}
	switch {
	case a < s:
		switch {
		case b == s && s < e:
			return endsAtOld // its end would come after r's begin
		case b < e:
			return overlapsOld
		}
		f.enclosed |= 1 << r
		f.enclose(rt.height, s, e, e, rt.endZero())
	case a == s:
		if b > e {
			return enclosesOld // it would begin inside r
		}
		f.inside = r
	case a == e:
		// It starts where r ends: r's end comes first, but for a
		// descendant of no length there, which it would enclose (or, of
		// no length itself, nest in).
		if rt.kidsHi == e && rt.hiZero {
			if b > a {
				w.lanes.conflict.iv = interval{e, e}
				return enclosesOld
			}
			return inOldChildren
		}
	case b > e:
		return overlapsOld
	default:
		f.inside = r
	}
	return fits
}

// fitChildren applies the rule inside the remembered root the slice lies
// in, if any. It nests in the root directly if it lies before or after all
// of the root's descendants, or encloses them all; among them, it would
// nest in whichever are open at its start, which the writer does not know
// (inOldChildren). Where the first of them starts, or the last ends, it
// may conflict with one exactly (enclosesOld, endsAtOld).
func (w *Writer) fitChildren(m *laneMemory, f *fitting) int {
	if f.inside < 0 {
		return fits
	}
	rt, a, b := &m.roots[f.inside], f.a, f.b
	switch {
	case b < rt.kidsLo || a > rt.kidsHi || a == rt.kidsHi && !rt.hiZero:
	case a < rt.kidsLo && b >= rt.kidsHi:
		f.enclose(rt.height-1, rt.kidsLo, rt.loEnd, rt.kidsHi, rt.hiZero)
	case a == rt.kidsLo && b > rt.loEnd:
		w.lanes.conflict.iv = interval{a, rt.loEnd}
		return enclosesOld
	case a == rt.kidsHi && b > a:
		w.lanes.conflict.iv = interval{a, a}
		return enclosesOld
	case a < rt.kidsLo && b == rt.kidsLo && rt.loEnd > b:
		w.lanes.conflict.iv = interval{b, rt.loEnd}
		return endsAtOld
	default:
		w.lanes.conflict.iv = interval{rt.ts, rt.end}
		return inOldChildren
	}
	return fits
}

// fitDepth applies the depth rule: the slice's depth, and the depth it
// gives the slices it encloses, stay below MaxDepth (tooDeep). Instants at
// one timestamp count as nested in one another, as the trace processor
// nests them.
func (lw *laneWork) fitDepth(p *pendingSlice, f *fitting) int {
	f.depth = int32(f.j)
	if f.inside >= 0 {
		f.depth++
	}
	f.chained = p.instant && lw.chainN > 0 && lw.chainTS == f.a && lw.chainAt == int32(f.j)
	if f.chained {
		f.depth += lw.chainN
	}
	if f.depth >= MaxDepth || f.depth+f.deepest >= MaxDepth {
		return tooDeep
	}
	return fits
}

// take places the slice f describes, which fits, on the lane: it pops the
// lane's stack to the slice's parent, and records what the slice adds to
// the top-level slice it lies in: levels, and descendants (itself, unless
// it is that top-level slice, and the remembered ones it encloses).
func (lw *laneWork) take(p *pendingSlice, f *fitting) {
	a, b, j := f.a, f.b, f.j
	lw.stack = lw.stack[:j]
	lw.enclosed |= f.enclosed
	if f.goneLo < f.goneHi {
		lw.gone = append(lw.gone, int32(f.goneLo), int32(f.goneHi))
	}
	g := lw.group
	switch {
	case f.chained:
		g = lw.chainG
	case j > 0:
	case f.inside >= 0:
		g = f.inside
	default:
		lw.roots = append(lw.roots, newRoot(a, b))
		g = ^(len(lw.roots) - 1)
	}
	if g >= 0 || j > 0 || f.chained {
		f.lo, f.loEnd = minStart(f.lo, f.loEnd, a, b)
		f.hi, f.hiZero = maxEnd(f.hi, f.hiZero, b, a == b)
	}
	levels := f.depth + 1 + f.deepest
	if g >= 0 {
		if lw.grown&(1<<g) == 0 {
			lw.grown |= 1 << g
			lw.grow[g] = newRoot(0, 0)
		}
		lw.grow[g].grow(levels, f.lo, f.loEnd, f.hi, f.hiZero)
	} else {
		lw.roots[^g].grow(levels, f.lo, f.loEnd, f.hi, f.hiZero)
	}
	lw.chain(p, f, g)
}

// chain keeps count of the instants placed at one timestamp at one stack
// depth, which the trace processor nests in one another (fitDepth), and of
// the group the slice at the bottom of the stack counts its height in.
func (lw *laneWork) chain(p *pendingSlice, f *fitting, g int) {
	switch {
	case f.chained:
		lw.chainN++
	case p.instant:
		lw.chainTS, lw.chainN, lw.chainAt, lw.chainG = f.a, 1, int32(f.j), g
	default:
		lw.chainN = 0
		if f.j == 0 {
			lw.group = g
		}
	}
}

// fitExtents checks [a, b] against the extents of a lane's past, as if
// against every slice they cover, and returns the range [lo, hi) of those
// it encloses. Each extent's top-level slices abut one another (unless it
// has gaps), so a slice that has one end strictly inside an extent and
// the other outside it crosses a boundary of a slice there: it partially
// overlaps that slice, or encloses one that starts with it, or ends where
// one starts. At an extent's start begins its first slice, which the
// writer knows, and a slice of no length at its end is remembered. What
// lies inside an extent the writer no longer knows.
func (w *Writer) fitExtents(past []extent, a, b int64) (why, lo, hi int) {
	// The first extent that ends at or after a.
	i, k := 0, len(past)
	for i < k {
		h := int(uint(i+k) >> 1)
		if past[h].end < a {
			i = h + 1
		} else {
			k = h
		}
	}
	lo, hi = -1, -1
	for ; i < len(past) && past[i].ts <= b; i++ {
		x := &past[i]
		s, e := x.ts, x.end
		w.lanes.conflict.iv = interval{s, e}
		switch {
		case a < s:
			switch {
			case b == s && x.firstEnd > s:
				w.lanes.conflict.iv = interval{s, x.firstEnd}
				return endsAtOld, 0, 0
			case b == s && e > s:
				// It would enclose the slices of no length at s, and not
				// the rest, which the writer no longer tells apart.
				return inPast, 0, 0
			case b < e && x.gaps:
				return inPast, 0, 0
			case b < e:
				return crossesPast, 0, 0
			}
			if lo < 0 {
				lo = i
			}
			hi = i + 1
		case a == s:
			if b > x.firstEnd {
				w.lanes.conflict.iv = interval{s, x.firstEnd}
				return enclosesOld, 0, 0
			}
			return inPast, 0, 0
		case a == e:
			if x.endZero {
				if b > a {
					w.lanes.conflict.iv = interval{e, e}
					return enclosesOld, 0, 0
				}
				return inPast, 0, 0
			}
		case b > e && !x.gaps:
			return crossesPast, 0, 0
		default:
			return inPast, 0, 0
		}
	}
	return fits, lo, hi
}

// remember merges the top-level slices placed on the lane into what it
// remembers: the remembered roots and extents of the past they enclose
// go, the roots keep what the flush added to them, and past maxRemembered
// the earliest roots, and any that lie before the end of the past, join
// the past.
func (w *Writer) remember(lw *laneWork, m *laneMemory) {
	if len(lw.roots) == 0 && lw.enclosed == 0 && lw.grown == 0 && len(lw.gone) == 0 {
		return
	}
	if len(lw.gone) > 0 {
		m.dropPast(lw.gone)
	}
	old := m.roots
	merged := w.lanes.merged[:0]
	i := 0
	for r := range old {
		if lw.enclosed&(1<<r) != 0 {
			continue
		}
		o := old[r]
		if lw.grown&(1<<r) != 0 {
			g := &lw.grow[r]
			o.grow(g.height, g.kidsLo, g.loEnd, g.kidsHi, g.hiZero)
		}
		for i < len(lw.roots) && lw.roots[i].ts < o.ts {
			merged = append(merged, lw.roots[i])
			i++
		}
		merged = append(merged, o)
	}
	merged = append(merged, lw.roots[i:]...)
	w.lanes.merged = merged
	n := len(merged) - maxRemembered
	if k := len(m.past); k > 0 {
		// Slices of this flush that lie in gaps of the past join it.
		end := m.past[k-1].end
		c := 0
		for c < len(merged) && merged[c].ts < end {
			c++
		}
		n = max(n, c)
	}
	if n > 0 {
		for r := range merged[:n] {
			m.forget(&merged[r])
		}
		merged = merged[n:]
		if len(m.past) > maxPast {
			lw.widths = m.givePastGaps(maxPast/4, lw.widths)
		}
	}
	m.roots = append(old[:0], merged...)
	m.hi = 0
	for _, r := range m.roots {
		m.hi = max(m.hi, r.end)
	}
}

// dropPast removes the extents of the ranges [lo, hi) listed in gone,
// which are in order of lo.
func (m *laneMemory) dropPast(gone []int32) {
	out, next := 0, 0
	for i := range m.past {
		for next < len(gone) && int(gone[next+1]) <= i {
			next += 2
		}
		if next < len(gone) && int(gone[next]) <= i {
			continue
		}
		m.past[out] = m.past[i]
		out++
	}
	clear(m.past[out:])
	m.past = m.past[:out]
}

// forget adds a top-level slice to the past, merged into the extents it
// abuts.
func (m *laneMemory) forget(r *root) {
	x := extent{ts: r.ts, end: r.end, firstEnd: r.end, height: r.height, endZero: r.endZero()}
	past := m.past
	i, k := 0, len(past)
	if k > 0 && past[k-1].ts <= x.ts {
		i = k // after them all, as a slice forgotten in time order is
		if past[k-1].end < x.ts {
			m.past = append(past, x)
			return
		}
	}
	for i < k { // the first extent that starts after x
		h := int(uint(i+k) >> 1)
		if past[h].ts <= x.ts {
			i = h + 1
		} else {
			k = h
		}
	}
	switch {
	case i > 0 && past[i-1].end == x.ts && i < len(past) && x.end == past[i].ts:
		past[i-1] = joinExtents(joinExtents(past[i-1], x), past[i])
		m.past = slices.Delete(past, i, i+1)
	case i > 0 && past[i-1].end == x.ts:
		past[i-1] = joinExtents(past[i-1], x)
	case i < len(past) && x.end == past[i].ts:
		past[i] = joinExtents(x, past[i])
	default:
		m.past = slices.Insert(past, i, x)
	}
}

// joinExtents returns the extent covering l and r, which follows l.
func joinExtents(l, r extent) extent {
	return extent{
		ts: l.ts, end: r.end, firstEnd: l.firstEnd,
		height:  max(l.height, r.height),
		endZero: r.endZero || r.end == l.end && l.endZero,
		gaps:    l.gaps || r.gaps || l.end < r.ts,
	}
}

// givePastGaps merges the extents of the past across their narrowest gaps
// until keep are left; widths is scratch, returned grown. The edges of the
// whole past, and of every gap kept, stay exact.
func (m *laneMemory) givePastGaps(keep int, widths []int64) []int64 {
	past := m.past
	merges := len(past) - keep
	widths = widths[:0]
	for i := 1; i < len(past); i++ {
		widths = append(widths, past[i].ts-past[i-1].end)
	}
	narrow := nth(widths, merges-1) // the widest gap given up
	ties := merges                  // gaps as wide as narrow to give up
	for _, w := range widths {
		if w < narrow {
			ties--
		}
	}
	out := 0
	for i := 1; i < len(past); i++ {
		if w := past[i].ts - past[out].end; w < narrow || w == narrow && ties > 0 {
			if w == narrow {
				ties--
			}
			o, x := &past[out], &past[i]
			o.height = max(o.height, x.height)
			o.end, o.endZero, o.gaps = x.end, x.endZero, true
			continue
		}
		out++
		past[out] = past[i]
	}
	clear(past[out+1:])
	m.past = past[:out+1]
	return widths
}

// nth returns the k-th smallest of x (from 0), reordering x: a quickselect,
// linear on average (sorting the thousand gaps of a lane's past each time
// took over 1 % of a conversion's CPU).
func nth(x []int64, k int) int64 {
	lo, hi := 0, len(x)-1
	for lo < hi {
		p := x[lo+(hi-lo)/2]
		i, j := lo, hi
		for i <= j {
			for x[i] < p {
				i++
			}
			for x[j] > p {
				j--
			}
			if i <= j {
				x[i], x[j] = x[j], x[i]
				i, j = i+1, j-1
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return x[k]
		}
	}
	return x[k]
}

// writeLane writes the slices of overflow lane l (order, sorted) as begin
// and end events, as place writes those of lane 0, each with the reason it
// is there.
func (w *Writer) writeLane(t *trackState, order []sortKey, l int) {
	ps := t.pending
	uuid := t.lanes[l-1].uuid
	rel := 0 // w.lanes.relocs lists the slices of every lane in the same order
	stack := w.lanes.stack[:0]
	for _, k := range order {
		p := &ps[k.i]
		for len(stack) > 0 {
			top := &ps[stack[len(stack)-1]]
			if p.end <= top.end { // p.ts >= top.ts by the sort: p nests in top
				break
			}
			w.writeEnd(t, top, uuid)
			stack = stack[:len(stack)-1]
		}
		for w.lanes.relocs[rel].i != k.i {
			rel++
		}
		w.writeBegin(t, p, uuid, w.lanes.relocs[rel].c.reason(ps))
		if !p.instant {
			stack = append(stack, k.i)
		}
	}
	for len(stack) > 0 {
		w.writeEnd(t, &ps[stack[len(stack)-1]], uuid)
		stack = stack[:len(stack)-1]
	}
	w.lanes.stack = stack
}

// writeLanes writes the slices of order placed on overflow lanes, lane by
// lane, keeping their order within each lane.
func (w *Writer) writeLanes(t *trackState, order []sortKey, lanes int) {
	var count [MaxOverflowLanes + 2]int
	for _, l := range w.lanes.laneOf {
		if l != noLane && l > 0 {
			count[l+1]++
		}
	}
	for l := 1; l <= lanes; l++ {
		count[l] += count[l-1]
	}
	part := slices.Grow(w.lanes.part[:0], count[lanes])[:count[lanes]]
	at := count
	for k, l := range w.lanes.laneOf {
		if l != noLane && l > 0 {
			part[at[l]] = order[k]
			at[l]++
		}
	}
	for l := 1; l < lanes; l++ {
		w.writeLane(t, part[count[l]:count[l+1]], l)
	}
	w.lanes.part = part
}

// addLane adds an overflow lane to t, declaring its track (and, for a
// thread whose process has no track yet, the process's, without a name).
func (w *Writer) addLane(t *trackState) error {
	n := len(t.lanes) + 1
	if n > MaxOverflowLanes {
		return ErrTooManyLanes
	}
	parent, need := t.parent, 1
	switch t.kind {
	case trackProcess:
		parent = t.uuid
	case trackThread:
		if _, ok := w.tracks[parent]; !ok {
			need++
		}
	}
	if w.TracksLeft() < need {
		return ErrTooManyTracks
	}
	if need > 1 {
		w.Process(ProcessSpec{Pid: t.pid})
	}
	uuid := trackUUID(trackLane, t.uuid, int64(n), 0, "", "")
	name := t.laneName(n)
	w.writeDescriptor(uuid, parent, func(b []byte) []byte {
		b = appendStringField(b, fTrackName, name)
		return appendVarintField(b, fTrackSiblingMerge, uint64(MergeNone))
	})
	t.lanes = append(t.lanes, overflowLane{uuid: uuid})
	w.lanes.work = append(w.lanes.work, laneWork{})
	w.lanes.work[len(w.lanes.work)-1].reset()
	return nil
}

// laneName names overflow lane n of t after t: "main 34 (overflow 1)" for
// thread 34 named main, "device 0 (overflow 2)" for a custom track.
func (t *trackState) laneName(n int) string {
	base := t.name
	switch t.kind {
	case trackThread:
		if base == "" {
			base = "thread"
		}
		base += " " + itoa(t.tid)
	case trackProcess:
		if base == "" {
			base = processLabel(t.pid)
		}
	}
	return base + " (overflow " + itoa(int64(n)) + ")"
}

// reportOverflows calls the function set by WithOverflowFunc for the
// slices relocated by the flush that ends.
func (w *Writer) reportOverflows() {
	if len(w.lanes.overflows) == 0 {
		return
	}
	ovs := w.lanes.overflows
	w.lanes.overflows = nil
	for _, o := range ovs {
		w.cfg.overflow(o)
	}
	clear(ovs)
	if w.lanes.overflows == nil {
		w.lanes.overflows = ovs[:0]
	}
}
