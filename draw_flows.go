package phasetrace

import (
	"github.com/phasetrace/phasetrace/internal/held"
	"github.com/phasetrace/phasetrace/perfetto"
	"github.com/phasetrace/phasetrace/strace"
)

// Hand-offs drawn as flows:
//
//   - node.submit → node.dispatch, matched as the runtime's own tooling
//     matches them: same pid, run_id and task slot (task_slot, or slot),
//     the latest submit that starts before the dispatch;
//   - node.dispatch → the chip.run it launched, where the run's root
//     carries the dispatch's run_id and a non-zero dispatch_id and starts
//     after it.
//
// An arrow's start must be strictly earlier than its end: the trace
// processor orders events by time, and an arrow whose ends share an
// instant may reach its end before its start (and is then lost).
//
// The spans of a hand-off are logged when they end, so either end may come
// first. Node spans therefore wait among the hand-offs until the log has moved
// FlowHorizon past their end, and are drawn with the flows found by then.
//
// A run's own arrow, chip.run.runner_run → device_wall, need not wait:
// both its ends come in the run (runLinks, draw_runlinks.go).

type flowKey struct {
	pid     int32
	runID   int64
	slot    int64
	hasSlot bool
}

type nodeSpan struct {
	span held.Span
	leaf string
	key  flowKey
	// A dispatch's best submit so far, while that submit waits (a submit
	// drawn links the dispatches matched to it and lets go of them).
	match  *nodeSpan
	linked bool // a dispatch's flow is fixed
	// from is the start of the submit a dispatch is linked to (linked).
	from int64
	// promised is the part of a split trace that holds room for it: the
	// part of the run its hand-off launched (nil: none).
	promised *part
	flows    []perfetto.FlowID
	// endFlows end at the span.
	endFlows []perfetto.FlowID
	ids      [2]perfetto.FlowID // room for the flows of a hand-off's usual one arrow
	// The lists of its key and of its launch key (nil: none), and its
	// successors there: next[byKey] and next[byLaunch].
	lists     *keyLists
	launches  *nodeList
	launchKey launchKey
	next      [2]*nodeSpan
	store     held.Store // span's attributes
}

// nodeList is a list of waiting node spans in arrival order, linked
// through the spans: the indexes cost no allocation per span. The hand-offs
// draws its spans in arrival order, so the span it draws is the head of
// each list it is in, and leaves them then.
type nodeList struct{ head, tail *nodeSpan }

// keyLists are the waiting spans of one flow key: its submits, and its
// dispatches (waiting for submits that come after them).
type keyLists struct{ submits, waiting nodeList }

// push appends n to a list linked through n.next[by].
func (l *nodeList) push(n *nodeSpan, by int) {
	if l.tail == nil {
		l.head = n
	} else {
		l.tail.next[by] = n
	}
	l.tail = n
}

// pop removes the head, whose successor is next; it reports whether the
// list is left empty.
func (l *nodeList) pop(next *nodeSpan) bool {
	l.head = next
	if next == nil {
		l.tail = nil
	}
	return next == nil
}

// handoffs holds node spans until their hand-offs are known. It is a
// value of its own: it draws the spans it lets go of through its site,
// makes the arrows in the arrow account and counts what it cannot link in
// the account.
type handoffs struct {
	horizon int64         // log time a span waits for its other end
	site    flowSite      // draws a released node span with its flows
	arrows  *arrowAccount // makes the arrows
	acct    *account      // counts a dispatch drawn without one
	nextID  perfetto.FlowID

	spans []*nodeSpan // spans[head:] wait, in arrival order
	head  int
	keys  map[flowKey]*keyLists // the waiting spans by flow key
	// The key a span was last added under and its lists (nil: none): a
	// hand-off's submit and dispatch often come one after the other.
	lastKey   flowKey
	lastLists *keyLists
	launches  map[launchKey]*nodeList // the waiting dispatches by (run_id, dispatch_id)
	nodes     pool[nodeSpan]
	attrRoom  []strace.Attr // room for new node spans' attributes
	keyPool   pool[keyLists]
	listPool  pool[nodeList]
	runFlow   [1]perfetto.FlowID // linkRun's result, valid until its next call
	// linkedNow are the dispatches a submit being drawn has just been
	// linked to, while draw draws it.
	linkedNow []*nodeSpan
}

// A flowSite is where the hand-offs' spans are drawn: the conversion
// (*converter), or a test's stand-in.
type flowSite interface {
	arrowSite
	// drawNode draws a node span the hand-offs let go of, with its flows.
	drawNode(n *nodeSpan)
	// sameHost reports whether two pids ran on one machine.
	sameHost(a, b int32) bool
}

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
func (f *handoffs) newNode() *nodeSpan {
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
func (f *handoffs) freeNode(n *nodeSpan) {
	n.store.Reset()
	*n = nodeSpan{store: n.store}
	f.nodes.put(n)
}

// nodeAttrs is the room for attributes a node span starts with: a
// hand-off's spans carry eight.
const nodeAttrs = 12

func (f *handoffs) add(sp *strace.Span, at held.Pos) {
	n := f.newNode()
	n.span = held.Span{Span: *sp, At: at}
	n.span.Attrs = n.store.Keep(sp.Attrs)
	n.flows, n.endFlows = n.ids[:0:1], n.ids[1:1:2]
	n.leaf, _ = strace.NodeLeaf(sp.Name)
	h := handOffAttrsOf(&n.span.Span)
	key, hasKey := h.flowKey(n.span.Pid)
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
			if !d.linked && n.span.TS < d.span.TS && (d.match == nil || n.span.TS > d.match.span.TS) {
				d.match = n
			}
		}
		return
	}
	var best *nodeSpan
	for s := l.submits.head; s != nil; s = s.next[byKey] {
		if s.span.TS < n.span.TS && (best == nil || s.span.TS > best.span.TS) {
			best = s
		}
	}
	n.match = best
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

// linkRun draws an arrow from best, the node.dispatch that launched the
// run whose root is root (launcher; nil: none), to the root, and returns
// the flow ids that end at the root (valid until the next call). A root
// that is not drawn (drawn false) gets no arrow, nor does one in a part
// of its own of a split trace (cut: its arrow would cross parts).
func (f *handoffs) linkRun(root *strace.Span, best *nodeSpan, drawn, cut bool) []perfetto.FlowID {
	if best == nil {
		return nil
	}
	if f.site.outside(root.TS, root.Dur) || f.site.outside(best.span.TS, best.span.Dur) {
		f.acct.unlinked(FlowDispatchToRun.unended()) // not drawn: an end would dangle
		return nil
	}
	if !drawn || !f.site.drawable(best.span.Pid, best.span.Tid) {
		f.acct.unlinked(ReasonLinkNoTrack)
		return nil
	}
	if cut {
		f.acct.unlinked(ReasonArrowAcrossParts)
		return nil
	}
	id := f.id()
	best.flows = append(best.flows, id)
	f.arrows.add(id, FlowDispatchToRun)
	f.runFlow[0] = id
	return f.runFlow[:]
}

// launcher is the waiting node.dispatch that launched the run whose root
// is root (nil: none): the latest of its run_id and dispatch_id, of
// another process on the same machine, that starts before the root.
func (f *handoffs) launcher(root *strace.Span) *nodeSpan {
	h := handOffAttrsOf(root)
	run, did := h.run, h.dispatch
	if run == nil || did == nil || run.Type != strace.TypeInt || did.Type != strace.TypeInt || did.Int == 0 {
		return nil
	}
	l := f.launches[launchKey{run.Int, did.Int}]
	if l == nil {
		return nil
	}
	var best *nodeSpan
	for n := l.head; n != nil; n = n.next[byLaunch] {
		if n.span.Pid == root.Pid || n.span.TS >= root.TS || !f.site.sameHost(n.span.Pid, root.Pid) {
			continue
		}
		if best == nil || n.span.TS > best.span.TS {
			best = n
		}
	}
	return best
}

// id returns a fresh flow id: ids count up, so no two hand-offs share one
// whatever their spans hold.
func (f *handoffs) id() perfetto.FlowID {
	f.nextID++
	return f.nextID
}

// drain draws the node spans the log has moved the horizon past (all of
// them at the end of the log), in arrival order. now is the latest host
// time the log has reached.
func (f *handoffs) drain(now int64, all bool) {
	if f.head == len(f.spans) || !all && f.spans[f.head].span.End() > now-f.horizon {
		return
	}
	waiting := f.spans[f.head:]
	n := 0
	for _, s := range waiting {
		if !all && s.span.End() > now-f.horizon {
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
func (f *handoffs) release(s *nodeSpan) {
	switch {
	case s.leaf == "submit" && s.lists != nil:
		for d := s.lists.waiting.head; d != nil; d = d.next[byKey] {
			if d.match != s {
				continue
			}
			if !d.linked && f.link(s, d) {
				f.linkedNow = append(f.linkedNow, d)
			}
			d.match = nil
		}
	case s.leaf == "dispatch" && s.lists != nil && !s.linked:
		if s.match != nil {
			f.link(s.match, s)
		} else {
			f.acct.unlinked(ReasonDispatchNoSubmit)
		}
	}
	f.unindex(s)
	f.site.drawNode(s)
	clear(f.linkedNow)
	f.linkedNow = f.linkedNow[:0]
}

// partKey is the start a node span goes by in a split trace (WithSplit),
// the same for every span of its hand-off, so that they are drawn in one
// part: its submit's start — a dispatch's linked or best matched submit's,
// else its own.
func (n *nodeSpan) partKey() int64 {
	switch {
	case n.leaf != "dispatch":
		return n.span.TS
	case n.linked:
		return n.from
	case n.match != nil:
		return n.match.span.TS
	}
	return n.span.TS
}

// unindex takes s, the head of each list it is in, out of the indexes.
func (f *handoffs) unindex(s *nodeSpan) {
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
func (f *handoffs) link(submit, dispatch *nodeSpan) bool {
	dispatch.linked, dispatch.from = true, submit.span.TS
	if f.site.outside(submit.span.TS, submit.span.Dur) || f.site.outside(dispatch.span.TS, dispatch.span.Dur) {
		f.acct.unlinked(FlowSubmitToDispatch.unended()) // not drawn: an end would dangle
		return false
	}
	if !(f.site.drawable(submit.span.Pid, submit.span.Tid) && f.site.drawable(dispatch.span.Pid, dispatch.span.Tid)) {
		f.acct.unlinked(ReasonLinkNoTrack)
		return false
	}
	id := f.id()
	submit.flows = append(submit.flows, id)
	dispatch.endFlows = append(dispatch.endFlows, id)
	f.arrows.add(id, FlowSubmitToDispatch)
	return true
}

// The lists a node span is in, by the index of its successor there.
const (
	byKey = iota
	byLaunch
)
