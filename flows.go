package phasetrace

import (
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
// first. Node spans therefore wait in a window until the log has moved
// FlowHorizon past their end, and are drawn with the flows found by then.

type flowKey struct {
	pid     int32
	runID   int64
	slot    int64
	hasSlot bool
}

type nodeSpan struct {
	span   heldSpan
	leaf   string
	key    flowKey
	hasKey bool
	// A dispatch's best submit so far: match, while that submit is in the
	// window (a released one is let go at the next prune), and its start.
	match    *nodeSpan
	matched  bool
	matchTS  int64
	linked   bool // a dispatch's flow is fixed
	flows    []perfetto.FlowID
	endFlows []perfetto.FlowID
	released bool
	ids      [2]perfetto.FlowID // room for the flows of a hand-off's usual one arrow
	// The next span of its submits or waiting list, and of its launches list.
	nextKey, nextLaunch *nodeSpan
	store               spanStore // span's attributes
}

// nodeList is a list of node spans in arrival order, linked through the
// spans (next gives a span's successor): the indexes cost no allocation per
// span.
type nodeList struct{ head, tail *nodeSpan }

func (l *nodeList) push(n *nodeSpan, next func(*nodeSpan) **nodeSpan) {
	if l.tail == nil {
		l.head = n
	} else {
		*next(l.tail) = n
	}
	l.tail = n
}

// prune unlinks the released spans; it reports whether any span is left.
func (l *nodeList) prune(next func(*nodeSpan) **nodeSpan) bool {
	var head, tail *nodeSpan
	for s := l.head; s != nil; {
		after := *next(s)
		*next(s) = nil
		if !s.released {
			if tail == nil {
				head = s
			} else {
				*next(tail) = s
			}
			tail = s
		}
		s = after
	}
	l.head, l.tail = head, tail
	return head != nil
}

func nextKey(n *nodeSpan) **nodeSpan    { return &n.nextKey }
func nextLaunch(n *nodeSpan) **nodeSpan { return &n.nextLaunch }

// flowWindow holds node spans until their hand-offs are known. It is a
// value of its own: what it draws and counts goes through its functions.
type flowWindow struct {
	horizon  int64                                                 // log time a span waits for its other end
	draw     func(sp *heldSpan, flows, endFlows []perfetto.FlowID) // draws a released node span
	linked   func(kind string)                                     // counts an arrow drawn
	unlinked func(reason string)                                   // counts a dispatch drawn without one
	sameHost func(a, b int32) bool                                 // whether two pids ran on one machine (nil: all do)
	nextID   perfetto.FlowID

	spans    []*nodeSpan // spans[head:] wait, in arrival order
	head     int
	submits  map[flowKey]nodeList
	waiting  map[flowKey]nodeList   // dispatches, for submits that come after them
	launches map[launchKey]nodeList // dispatches by (run_id, dispatch_id)
	released int                    // released spans still in the indexes
	retired  []*nodeSpan            // released spans, free once no index or match holds them
	free     []*nodeSpan            // node spans to reuse
	slab     []nodeSpan             // node spans are allocated a slab at a time
	runFlow  [1]perfetto.FlowID     // linkRun's result, valid until its next call
}

// nodeSlab is how many node spans are allocated at once.
const nodeSlab = 64

type launchKey struct{ runID, dispatchID int64 }

// newNode returns a cleared node span: a free one when there is one.
func (f *flowWindow) newNode() *nodeSpan {
	if k := len(f.free); k > 0 {
		n := f.free[k-1]
		f.free = f.free[:k-1]
		n.store.reset()
		*n = nodeSpan{store: n.store}
		return n
	}
	if len(f.slab) == 0 {
		f.slab = make([]nodeSpan, nodeSlab)
		attrs := make([]strace.Attr, nodeSlab*nodeAttrs)
		for i := range f.slab {
			f.slab[i].store.attrs = attrs[i*nodeAttrs : i*nodeAttrs : (i+1)*nodeAttrs]
		}
	}
	n := &f.slab[0]
	f.slab = f.slab[1:]
	return n
}

// nodeAttrs is the room for attributes a node span starts with: a
// hand-off's spans carry eight.
const nodeAttrs = 12

func (f *flowWindow) add(sp heldSpan) {
	n := f.newNode()
	n.span = sp
	n.span.Attrs = n.store.keep(sp.Attrs)
	n.flows, n.endFlows = n.ids[:0:1], n.ids[1:1:2]
	n.leaf, _ = strace.NodeLeaf(sp.Name)
	n.key, n.hasKey = nodeFlowKey(&n.span.Span)
	if len(f.spans) == cap(f.spans) && f.head > 0 && f.head >= len(f.spans)/2 {
		k := copy(f.spans, f.spans[f.head:]) // the waiting spans move to the front
		clear(f.spans[k:])
		f.spans, f.head = f.spans[:k], 0
	}
	f.spans = append(f.spans, n)
	if !n.hasKey {
		return
	}
	if f.submits == nil {
		f.submits, f.waiting, f.launches = map[flowKey]nodeList{}, map[flowKey]nodeList{}, map[launchKey]nodeList{}
	}
	switch n.leaf {
	case "submit":
		l := f.submits[n.key]
		l.push(n, nextKey)
		f.submits[n.key] = l
		// A dispatch logged before this submit may belong to it.
		for d := f.waiting[n.key].head; d != nil; d = d.nextKey {
			if !d.released && !d.linked && n.span.TS < d.span.TS && (!d.matched || n.span.TS > d.matchTS) {
				d.match, d.matched, d.matchTS = n, true, n.span.TS
			}
		}
	case "dispatch":
		var best *nodeSpan
		for s := f.submits[n.key].head; s != nil; s = s.nextKey {
			if !s.released && s.span.TS < n.span.TS && (best == nil || s.span.TS > best.span.TS) {
				best = s
			}
		}
		if best != nil {
			n.match, n.matched, n.matchTS = best, true, best.span.TS
		}
		l := f.waiting[n.key]
		l.push(n, nextKey)
		f.waiting[n.key] = l
		if did, ok := n.span.Attr("dispatch_id"); ok && did.Type == strace.TypeInt && did.Int != 0 {
			lk := launchKey{n.key.runID, did.Int}
			l := f.launches[lk]
			l.push(n, nextLaunch)
			f.launches[lk] = l
		}
	}
}

func nodeFlowKey(sp *strace.Span) (flowKey, bool) {
	run, ok := sp.Attr("run_id")
	if !ok || run.Type != strace.TypeInt {
		return flowKey{}, false
	}
	slot, ok := sp.Attr("task_slot")
	if !ok {
		slot, ok = sp.Attr("slot")
	}
	if !ok || slot.Type != strace.TypeInt {
		return flowKey{}, false
	}
	return flowKey{pid: sp.Pid, runID: run.Int, slot: slot.Int, hasSlot: true}, true
}

// linkRun finds the node.dispatch that launched the run whose root is
// root, and returns the flow ids that end at the root (valid until the next
// call).
func (f *flowWindow) linkRun(root *strace.Span) []perfetto.FlowID {
	run, ok1 := root.Attr("run_id")
	did, ok2 := root.Attr("dispatch_id")
	if !ok1 || !ok2 || run.Type != strace.TypeInt || did.Type != strace.TypeInt || did.Int == 0 {
		return nil
	}
	var best *nodeSpan
	for n := f.launches[launchKey{run.Int, did.Int}].head; n != nil; n = n.nextLaunch {
		if n.released || n.span.Pid == root.Pid || n.span.TS >= root.TS || f.sameHost != nil && !f.sameHost(n.span.Pid, root.Pid) {
			continue
		}
		if best == nil || n.span.TS > best.span.TS {
			best = n
		}
	}
	if best == nil {
		return nil
	}
	id := f.id()
	best.flows = append(best.flows, id)
	f.linked("node.dispatch → chip.run")
	f.runFlow[0] = id
	return f.runFlow[:]
}

// id returns a fresh flow id: ids count up, so no two hand-offs share one
// whatever their spans hold.
func (f *flowWindow) id() perfetto.FlowID {
	f.nextID++
	return f.nextID
}

// drain draws the node spans the log has moved the horizon past (all of
// them at the end of the log), in arrival order. now is the latest host
// time the log has reached.
func (f *flowWindow) drain(now int64, all bool) {
	waiting := f.spans[f.head:]
	n := 0
	for _, s := range waiting {
		if !all && s.span.End() > now-f.horizon {
			break
		}
		f.release(s)
		n++
	}
	if n == 0 {
		return
	}
	f.retired = append(f.retired, waiting[:n]...)
	clear(waiting[:n])
	f.head += n
	if all || f.head == len(f.spans) {
		f.spans, f.head = f.spans[:0], 0
		clear(f.submits)
		clear(f.waiting)
		clear(f.launches)
		f.released = 0
		f.recycle()
		return
	}
	// Forget released spans in the indexes, now and then.
	f.released += n
	if f.released < 256 || f.released < len(f.spans)-f.head {
		return
	}
	f.released = 0
	pruneLists(f.launches, nextLaunch)
	pruneLists(f.submits, nextKey)
	pruneLists(f.waiting, nextKey)
	for _, s := range f.spans[f.head:] {
		if s.match != nil && s.match.released {
			s.match = nil // matched and matchTS keep what it was
		}
	}
	f.recycle()
}

// recycle makes the retired spans free: nothing refers to them any more
// (the indexes are pruned, and no waiting span's match is released).
func (f *flowWindow) recycle() {
	f.free = append(f.free, f.retired...)
	clear(f.retired)
	f.retired = f.retired[:0]
}

func pruneLists[K comparable](m map[K]nodeList, next func(*nodeSpan) **nodeSpan) {
	for k, l := range m {
		if l.prune(next) {
			m[k] = l
		} else {
			delete(m, k)
		}
	}
}

// release draws one node span. A submit takes the flows of the dispatches
// matched to it so far; a dispatch released before its submit gives the
// submit its flow; a dispatch whose submit was already drawn, or never
// came, is drawn without one and counted.
func (f *flowWindow) release(s *nodeSpan) {
	switch {
	case s.leaf == "submit" && s.hasKey:
		for d := f.waiting[s.key].head; d != nil; d = d.nextKey {
			if !d.released && !d.linked && d.match == s {
				f.link(s, d)
			}
		}
	case s.leaf == "dispatch" && s.hasKey && !s.linked:
		if s.match != nil && !s.match.released {
			f.link(s.match, s)
		} else {
			f.unlinked("node.dispatch with no node.submit of its run_id and task slot within the flow horizon")
		}
	}
	s.released = true
	f.draw(&s.span, s.flows, s.endFlows)
}

// link draws a flow from submit to dispatch.
func (f *flowWindow) link(submit, dispatch *nodeSpan) {
	id := f.id()
	submit.flows = append(submit.flows, id)
	dispatch.endFlows = append(dispatch.endFlows, id)
	dispatch.linked = true
	f.linked("node.submit → node.dispatch")
}
