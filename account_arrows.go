package phasetrace

import (
	"slices"

	"github.com/phasetrace/phasetrace/perfetto"
)

// arrowAccount counts the arrows the trace holds: an arrow is counted (by
// its kind) once both its ends are written — handed to the trace writer,
// and through the flush that writes them without a refusal. An arrow one
// of whose ends is not drawn is counted under a reason instead, and its id
// is left out of the other end if that end is yet to be handed (the writer
// leaves it out of the events it writes after the refusal in the same
// flush). An arrow made before its spans come (a remote machine's) is
// checked when its first end is handed: if either end's thread has no
// track, neither end gets it. Arrows are known from when they are made
// until both ends have come: its memory is the hand-offs in flight.
type arrowAccount struct {
	open map[perfetto.FlowID]arrowState
	both []perfetto.FlowID // arrows whose ends were both handed since the last flush
	acct *account          // counts the arrows drawn (Summary.Flows) and not (Summary.Unlinked)
	site arrowSite         // where the ends are drawn
	// flushes counts the flushes; stranded the arrows whose end the writer
	// refused after a flush had written the other (whose id the trace then
	// holds at one end: the trace processor makes no arrow of it).
	flushes, stranded int64
}

// An arrowSite says where the ends of arrows can be drawn: the slice drawer, or
// a test's stand-in.
type arrowSite interface {
	// drawable reports whether a thread has a track to be drawn on.
	drawable(pid int32, tid int64) bool
	// outside reports whether a slice is outside WithWindow's window: an
	// arrow made before its spans come is not drawn then.
	outside(ts, dur int64) bool
	// part is the part of a split trace the slice being drawn goes to (0:
	// the trace is not split): an arrow whose second end goes to another
	// part than its first is not drawn.
	part() int
}

type arrowState struct {
	kind FlowKind
	ends int8 // ends handed to the writer (and not refused)
	came int8 // ends that came: handed, or left out
	dead bool // an end is not drawn: the arrow is not either
	// handedIn is the flush (arrowAccount.flushes) the first end handed
	// went to the writer in, and part the part it went to.
	handedIn int64
	part     int
	// The threads its ends are drawn on, for an arrow made before its
	// spans came (between), until checked.
	from, to  arrowEnd
	unchecked bool
}

// arrowEnd is the thread an end of an arrow is drawn on, and the extent
// of its span, [ts, end], on the trace's axis.
type arrowEnd struct {
	pid     int32
	tid     int64
	ts, end int64
}

// add makes an arrow of a kind ("node.submit → node.dispatch").
func (a *arrowAccount) add(id perfetto.FlowID, kind FlowKind) {
	if a.open == nil {
		a.open = map[perfetto.FlowID]arrowState{}
	}
	a.open[id] = arrowState{kind: kind}
}

// between says which threads the ends of arrow id are drawn on, for an
// arrow made before its spans come.
func (a *arrowAccount) between(id perfetto.FlowID, from, to arrowEnd) {
	st := a.open[id]
	st.from, st.to, st.unchecked = from, to, true
	a.open[id] = st
}

// live returns ids without the arrows that are not drawn, in place: the
// ids of a slice about to be handed.
func (a *arrowAccount) live(ids []perfetto.FlowID) []perfetto.FlowID {
	out := ids[:0]
	part := a.site.part() // the part the slice goes to, in a split trace
	for _, id := range ids {
		st, ok := a.open[id]
		if ok && st.unchecked {
			st.unchecked = false
			switch {
			case a.site.outside(st.from.ts, st.from.end-st.from.ts) || a.site.outside(st.to.ts, st.to.end-st.to.ts):
				a.acct.unlinked(st.kind.unended())
				st.dead = true
			case !(a.site.drawable(st.from.pid, st.from.tid) && a.site.drawable(st.to.pid, st.to.tid)):
				a.acct.unlinked(ReasonLinkNoTrack)
				st.dead = true
			}
			a.open[id] = st
		}
		if ok && !st.dead && st.ends == 1 && part != st.part {
			a.acct.unlinked(ReasonArrowAcrossParts)
			st.dead = true
		}
		if ok && st.dead {
			a.came(id, st)
			continue
		}
		out = append(out, id)
	}
	return out
}

// came counts an end of arrow id that came, and forgets the arrow once
// both have and it is not drawn.
func (a *arrowAccount) came(id perfetto.FlowID, st arrowState) {
	st.came++
	if st.dead && st.came >= 2 {
		delete(a.open, id)
		return
	}
	a.open[id] = st
}

// handed counts an end of each arrow of ids handed to the writer.
func (a *arrowAccount) handed(ids []perfetto.FlowID) {
	for _, id := range ids {
		st, ok := a.open[id]
		if !ok {
			continue
		}
		st.ends++
		switch st.ends {
		case 1:
			st.handedIn = a.flushes
			st.part = a.site.part()
		case 2:
			a.both = append(a.both, id)
		}
		a.came(id, st)
	}
}

// dropped settles the arrows of ids whose end the converter left out.
func (a *arrowAccount) dropped(ids []perfetto.FlowID) {
	for _, id := range ids {
		st, ok := a.open[id]
		if !ok {
			continue
		}
		a.kill(&st)
		a.came(id, st)
	}
}

// abandoned settles the arrows of ids whose end the converter will not
// hand after all, counted under reason unless counted already.
func (a *arrowAccount) abandoned(ids []perfetto.FlowID, reason Reason) {
	for _, id := range ids {
		st, ok := a.open[id]
		if !ok {
			continue
		}
		if !st.dead {
			a.acct.unlinked(reason)
			st.dead = true
		}
		a.came(id, st)
	}
}

// refused settles the arrows of a slice the writer refused: its ends came
// when they were handed. Those of alone kept their other end, written
// before it in the same flush.
func (a *arrowAccount) refused(ids, alone []perfetto.FlowID) {
	for _, id := range ids {
		st, ok := a.open[id]
		if !ok {
			continue
		}
		st.ends--
		if st.ends > 0 && !st.dead && (st.handedIn < a.flushes || slices.Contains(alone, id)) {
			// The refused end is this flush's; the other was written by
			// an earlier one, or earlier in this one.
			a.stranded++
		}
		a.kill(&st)
		st.came-- // came already, when handed
		a.came(id, st)
	}
}

// begunIn is the part of a split trace where the first of the arrows of
// flows and endFlows with one end handed was begun (0: none).
func (a *arrowAccount) begunIn(flows, endFlows []perfetto.FlowID) int {
	for _, ids := range [2][]perfetto.FlowID{flows, endFlows} {
		for _, id := range ids {
			if st, ok := a.open[id]; ok && !st.dead && st.ends == 1 {
				return st.part
			}
		}
	}
	return 0
}

// across settles the arrows of ids, whose ends are in different parts of a
// split trace: they are not drawn.
func (a *arrowAccount) across(ids []perfetto.FlowID) {
	for _, id := range ids {
		if st, ok := a.open[id]; ok && !st.dead {
			a.acct.unlinked(ReasonArrowAcrossParts)
			st.dead = true
			a.open[id] = st
		}
	}
}

// kill counts an arrow not drawn, once.
func (a *arrowAccount) kill(st *arrowState) {
	if !st.dead {
		a.acct.unlinked(st.kind.unended())
		st.dead = true
	}
}

// flushed counts the arrows whose ends were both handed before a flush
// that refused neither.
func (a *arrowAccount) flushed() {
	a.flushes++
	for _, id := range a.both {
		if st, ok := a.open[id]; ok && !st.dead && st.ends == 2 {
			a.acct.flow(st.kind)
			delete(a.open, id)
		}
	}
	a.both = a.both[:0]
}

// close settles, once the trace is written, the arrows whose other end
// never came.
func (a *arrowAccount) close() {
	for _, st := range a.open {
		if !st.dead {
			a.acct.unlinked(st.kind.unended())
		}
	}
	a.open = nil
}
