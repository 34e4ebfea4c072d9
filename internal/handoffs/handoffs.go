package handoffs

import (
	"github.com/phasetrace/phasetrace/internal/held"
	"github.com/phasetrace/phasetrace/perfetto"
	"github.com/phasetrace/phasetrace/strace"
)

type flowKey struct {
	pid     int32
	runID   int64
	slot    int64
	hasSlot bool
}

type NodeSpan struct {
	Span held.Span
	leaf string
	key  flowKey
	// A dispatch's best submit so far, while that submit waits (a submit
	// drawn links the dispatches matched to it and lets go of them).
	Match  *NodeSpan
	Linked bool // a dispatch's flow is fixed
	// from is the start of the submit a dispatch is linked to (linked).
	from  int64
	Flows []perfetto.FlowID
	// EndFlows end at the span.
	EndFlows []perfetto.FlowID
	ids      [2]perfetto.FlowID // room for the flows of a hand-off's usual one arrow
	// The lists of its key and of its launch key (nil: none), and its
	// successors there: next[byKey] and next[byLaunch].
	lists     *keyLists
	launches  *nodeList
	launchKey launchKey
	next      [2]*NodeSpan
	store     held.Store // span's attributes
	// Part is the number of the part of a split trace that holds room for
	// the span (0: none). The site sets it; it is cleared with the span.
	Part int
}

// nodeList is a list of waiting node spans in arrival order, linked
// through the spans: the indexes cost no allocation per span. The hand-offs
// draws its spans in arrival order, so the span it draws is the head of
// each list it is in, and leaves them then.
type nodeList struct{ head, tail *NodeSpan }

// keyLists are the waiting spans of one flow key: its submits, and its
// dispatches (waiting for submits that come after them).
type keyLists struct{ submits, waiting nodeList }

// push appends n to a list linked through n.next[by].
func (l *nodeList) push(n *NodeSpan, by int) {
	if l.tail == nil {
		l.head = n
	} else {
		l.tail.next[by] = n
	}
	l.tail = n
}

// pop removes the head, whose successor is next; it reports whether the
// list is left empty.
func (l *nodeList) pop(next *NodeSpan) bool {
	l.head = next
	if next == nil {
		l.tail = nil
	}
	return next == nil
}

// Queue holds node spans until their hand-offs are known. It is a
// value of its own: it draws the spans it lets go of through its site,
// makes the arrows in the arrow account and counts what it cannot link in
// the account.
type Queue struct {
	Horizon int64 // log time a span waits for its other end
	Site    Site  // draws the spans let go of, makes their arrows and counts those not made
	nextID  perfetto.FlowID

	spans []*NodeSpan // spans[head:] wait, in arrival order
	head  int
	keys  map[flowKey]*keyLists // the waiting spans by flow key
	// The key a span was last added under and its lists (nil: none): a
	// hand-off's submit and dispatch often come one after the other.
	lastKey   flowKey
	lastLists *keyLists
	launches  map[launchKey]*nodeList // the waiting dispatches by (run_id, dispatch_id)
	nodes     pool[NodeSpan]
	attrRoom  []strace.Attr // room for new node spans' attributes
	keyPool   pool[keyLists]
	listPool  pool[nodeList]
	runFlow   [1]perfetto.FlowID // LinkRun's result, valid until its next call
	// LinkedNow are the dispatches a submit being drawn has just been
	// linked to, while draw draws it.
	LinkedNow []*NodeSpan
}

// A Site is where the hand-offs' spans are drawn: the conversion
// (*converter), or a test's stand-in.
type Site interface {
	// Drawable reports whether a thread has a track to be drawn on.
	Drawable(pid int32, tid int64) bool
	// Outside reports whether a slice is outside WithWindow's window.
	Outside(ts, dur int64) bool
	// SameHost reports whether two pids ran on one machine.
	SameHost(a, b int32) bool
	// DrawNode draws a node span the hand-offs let go of, with its flows.
	DrawNode(n *NodeSpan)
	// Link makes arrow id of a kind; Unlinked counts a hand-off drawn
	// without its arrow, and why.
	Link(id perfetto.FlowID, kind Kind)
	Unlinked(kind Kind, why Why)
}

// A Kind is the kind of arrow the hand-offs make.
type Kind uint8

const (
	SubmitToDispatch Kind = iota // node.submit → node.dispatch
	DispatchToRun                // node.dispatch → chip.run
)

// A Why says why a hand-off is drawn without its arrow.
type Why uint8

const (
	Unended     Why = iota // an end is outside the window: the other would dangle
	NoTrack                // an end has no track
	AcrossParts            // its ends would be in different parts of a split trace
	NoSubmit               // a dispatch whose submit never came
)

// pool hands out values a slab at a time and takes them back for reuse.
type pool[T any] struct {
	free []*T
	slab []T
}

// get returns a value from the pool: a free one, as it was put back, when
// there is one; else a zero one.
func (p *pool[T]) get() *T {
	if k := len(p.free); k > 0 {
		v := p.free[k-1]
		p.free = p.free[:k-1]
		return v
	}
	if len(p.slab) == 0 {
		p.slab = make([]T, nodeSlab)
	}
	v := &p.slab[0]
	p.slab = p.slab[1:]
	return v
}

// put gives v back to the pool.
func (p *pool[T]) put(v *T) { p.free = append(p.free, v) }

// nodeSlab is how many node spans (and index entries) are allocated at
// once.
const nodeSlab = 64

type launchKey struct{ runID, dispatchID int64 }

// newNode returns a cleared node span. A new one takes its first room for
// attributes from attrRoom, a slab at a time.
func (f *Queue) newNode() *NodeSpan {
	n := f.nodes.get()
	if cap(n.store.Attrs) == 0 {
		if len(f.attrRoom) < nodeAttrs {
			f.attrRoom = make([]strace.Attr, nodeSlab*nodeAttrs)
		}
		n.store.Attrs = f.attrRoom[:0:nodeAttrs]
		f.attrRoom = f.attrRoom[nodeAttrs:]
	}
	return n
}

// freeNode clears a drawn node span, out of every index, and gives it back
// for reuse.
func (f *Queue) freeNode(n *NodeSpan) {
	n.store.Reset()
	*n = NodeSpan{store: n.store}
	f.nodes.put(n)
}

// nodeAttrs is the room for attributes a node span starts with: a
// hand-off's spans carry eight.
const nodeAttrs = 12

func (f *Queue) Add(sp *strace.Span, at held.Pos) {
	n := f.newNode()
	n.Span = held.Span{Span: *sp, At: at}
	n.Span.Attrs = n.store.Keep(sp.Attrs)
	n.Flows, n.EndFlows = n.ids[:0:1], n.ids[1:1:2]
	n.leaf, _ = strace.NodeLeaf(sp.Name)
	h := handOffAttrsOf(&n.Span.Span)
	key, hasKey := h.flowKey(n.Span.Pid)
	n.key = key
	if len(f.spans) == cap(f.spans) && f.head > 0 && f.head >= len(f.spans)/2 {
		k := copy(f.spans, f.spans[f.head:]) // the waiting spans move to the front
		clear(f.spans[k:])
		f.spans, f.head = f.spans[:k], 0
	}
	f.spans = append(f.spans, n)
	if !hasKey || n.leaf != "submit" && n.leaf != "dispatch" {
		return
	}
	if f.keys == nil {
		f.keys, f.launches = map[flowKey]*keyLists{}, map[launchKey]*nodeList{}
	}
	l := f.lastLists
	if l == nil || f.lastKey != n.key {
		if l = f.keys[n.key]; l == nil {
			l = f.keyPool.get()
			f.keys[n.key] = l
		}
		f.lastKey, f.lastLists = n.key, l
	}
	n.lists = l
	if n.leaf == "submit" {
		l.submits.push(n, byKey)
		// A dispatch logged before this submit may belong to it.
		for d := l.waiting.head; d != nil; d = d.next[byKey] {
			if !d.Linked && n.Span.TS < d.Span.TS && (d.Match == nil || n.Span.TS > d.Match.Span.TS) {
				d.Match = n
			}
		}
		return
	}
	var best *NodeSpan
	for s := l.submits.head; s != nil; s = s.next[byKey] {
		if s.Span.TS < n.Span.TS && (best == nil || s.Span.TS > best.Span.TS) {
			best = s
		}
	}
	n.Match = best
	l.waiting.push(n, byKey)
	if did := h.dispatch; did != nil && did.Type == strace.TypeInt && did.Int != 0 {
		lk := launchKey{n.key.runID, did.Int}
		ll := f.launches[lk]
		if ll == nil {
			ll = f.listPool.get()
			f.launches[lk] = ll
		}
		ll.push(n, byLaunch)
		n.launches, n.launchKey = ll, lk
	}
}

// handOffAttrs are the attributes that match the spans of a hand-off, each
// the first of its name, as Span.Attr finds it (nil: none).
type handOffAttrs struct {
	run, taskSlot, slot, dispatch *strace.Attr
}

// handOffAttrsOf finds sp's hand-off attributes in one pass.
func handOffAttrsOf(sp *strace.Span) handOffAttrs {
	var h handOffAttrs
	for i := range sp.Attrs {
		a := &sp.Attrs[i]
		if a.Bare {
			continue
		}
		var p **strace.Attr
		switch a.Key {
		case strace.AttrRunID:
			p = &h.run
		case "task_slot":
			p = &h.taskSlot
		case "slot":
			p = &h.slot
		case strace.AttrDispatchID:
			p = &h.dispatch
		default:
			continue
		}
		if *p == nil {
			*p = a
		}
	}
	return h
}

// flowKey returns the flow key of a node span of process pid: its run_id
// and task slot (task_slot, or slot), both integers.
func (h *handOffAttrs) flowKey(pid int32) (flowKey, bool) {
	slot := h.taskSlot
	if slot == nil {
		slot = h.slot
	}
	if h.run == nil || h.run.Type != strace.TypeInt || slot == nil || slot.Type != strace.TypeInt {
		return flowKey{}, false
	}
	return flowKey{pid: pid, runID: h.run.Int, slot: slot.Int, hasSlot: true}, true
}

// LinkRun draws an arrow from best, the node.dispatch that launched the
// run whose root is root (launcher; nil: none), to the root, and returns
// the flow ids that end at the root (valid until the next call). A root
// that is not drawn (drawn false) gets no arrow, nor does one in a part
// of its own of a split trace (cut: its arrow would cross parts).
func (f *Queue) LinkRun(root *strace.Span, best *NodeSpan, drawn, cut bool) []perfetto.FlowID {
	if best == nil {
		return nil
	}
	if f.Site.Outside(root.TS, root.Dur) || f.Site.Outside(best.Span.TS, best.Span.Dur) {
		f.Site.Unlinked(DispatchToRun, Unended) // not drawn: an end would dangle
		return nil
	}
	if !drawn || !f.Site.Drawable(best.Span.Pid, best.Span.Tid) {
		f.Site.Unlinked(DispatchToRun, NoTrack)
		return nil
	}
	if cut {
		f.Site.Unlinked(DispatchToRun, AcrossParts)
		return nil
	}
	id := f.NextID()
	best.Flows = append(best.Flows, id)
	f.Site.Link(id, DispatchToRun)
	f.runFlow[0] = id
	return f.runFlow[:]
}

// Launcher is the waiting node.dispatch that launched the run whose root
// is root (nil: none): the latest of its run_id and dispatch_id, of
// another process on the same machine, that starts before the root.
func (f *Queue) Launcher(root *strace.Span) *NodeSpan {
	h := handOffAttrsOf(root)
	run, did := h.run, h.dispatch
	if run == nil || did == nil || run.Type != strace.TypeInt || did.Type != strace.TypeInt || did.Int == 0 {
		return nil
	}
	l := f.launches[launchKey{run.Int, did.Int}]
	if l == nil {
		return nil
	}
	var best *NodeSpan
	for n := l.head; n != nil; n = n.next[byLaunch] {
		if n.Span.Pid == root.Pid || n.Span.TS >= root.TS || !f.Site.SameHost(n.Span.Pid, root.Pid) {
			continue
		}
		if best == nil || n.Span.TS > best.Span.TS {
			best = n
		}
	}
	return best
}

// NextID returns a fresh flow id: ids count up, so no two hand-offs share one
// whatever their spans hold.
func (f *Queue) NextID() perfetto.FlowID {
	f.nextID++
	return f.nextID
}

// Drain draws the node spans the log has moved the horizon past (all of
// them at the end of the log), in arrival order. now is the latest host
// time the log has reached.
func (f *Queue) Drain(now int64, all bool) {
	if f.head == len(f.spans) || !all && f.spans[f.head].Span.End() > now-f.Horizon {
		return
	}
	waiting := f.spans[f.head:]
	n := 0
	for _, s := range waiting {
		if !all && s.Span.End() > now-f.Horizon {
			break
		}
		f.release(s)
		f.freeNode(s)
		n++
	}
	if n == 0 {
		return
	}
	clear(waiting[:n])
	f.head += n
	if all || f.head == len(f.spans) {
		f.spans, f.head = f.spans[:0], 0
	}
}

// release draws one node span and takes it out of the indexes. A submit
// takes the flows of the dispatches matched to it so far; a dispatch
// released before its submit gives the submit its flow; a dispatch whose
// submit was already drawn, or never came, is drawn without one and
// counted.
func (f *Queue) release(s *NodeSpan) {
	switch {
	case s.leaf == "submit" && s.lists != nil:
		for d := s.lists.waiting.head; d != nil; d = d.next[byKey] {
			if d.Match != s {
				continue
			}
			if !d.Linked && f.link(s, d) {
				f.LinkedNow = append(f.LinkedNow, d)
			}
			d.Match = nil
		}
	case s.leaf == "dispatch" && s.lists != nil && !s.Linked:
		if s.Match != nil {
			f.link(s.Match, s)
		} else {
			f.Site.Unlinked(SubmitToDispatch, NoSubmit)
		}
	}
	f.unindex(s)
	f.Site.DrawNode(s)
	clear(f.LinkedNow)
	f.LinkedNow = f.LinkedNow[:0]
}

// PartKey is the start a node span goes by in a split trace (WithSplit),
// the same for every span of its hand-off, so that they are drawn in one
// part: its submit's start — a dispatch's linked or best matched submit's,
// else its own.
func (n *NodeSpan) PartKey() int64 {
	switch {
	case n.leaf != "dispatch":
		return n.Span.TS
	case n.Linked:
		return n.from
	case n.Match != nil:
		return n.Match.Span.TS
	}
	return n.Span.TS
}

// unindex takes s, the head of each list it is in, out of the indexes.
func (f *Queue) unindex(s *NodeSpan) {
	if l := s.lists; l != nil {
		list := &l.waiting
		if s.leaf == "submit" {
			list = &l.submits
		}
		if list.pop(s.next[byKey]) && l.submits.head == nil && l.waiting.head == nil {
			delete(f.keys, s.key)
			if f.lastLists == l {
				f.lastLists = nil
			}
			*l = keyLists{}
			f.keyPool.put(l)
		}
	}
	if l := s.launches; l != nil && l.pop(s.next[byLaunch]) {
		delete(f.launches, s.launchKey)
		f.listPool.put(l)
	}
}

// link draws a flow from submit to dispatch.
// An arrow is only made between spans that both have a track and are
// both inside the window: one end drawn and the other not would leave the
// trace a dangling flow id.
// It reports whether it made an arrow.
func (f *Queue) link(submit, dispatch *NodeSpan) bool {
	dispatch.Linked, dispatch.from = true, submit.Span.TS
	if f.Site.Outside(submit.Span.TS, submit.Span.Dur) || f.Site.Outside(dispatch.Span.TS, dispatch.Span.Dur) {
		f.Site.Unlinked(SubmitToDispatch, Unended) // not drawn: an end would dangle
		return false
	}
	if !(f.Site.Drawable(submit.Span.Pid, submit.Span.Tid) && f.Site.Drawable(dispatch.Span.Pid, dispatch.Span.Tid)) {
		f.Site.Unlinked(SubmitToDispatch, NoTrack)
		return false
	}
	id := f.NextID()
	submit.Flows = append(submit.Flows, id)
	dispatch.EndFlows = append(dispatch.EndFlows, id)
	f.Site.Link(id, SubmitToDispatch)
	return true
}

// The lists a node span is in, by the index of its successor there.
const (
	byKey = iota
	byLaunch
)
