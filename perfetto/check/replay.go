package check

import (
	"fmt"
	"slices"

	pb "github.com/phasetrace/phasetrace/proto"
)

// MaxDepth is the deepest nesting the trace processor keeps: a slice or
// instant that would be at depth MaxDepth or more on its track (counting
// from 0) is dropped and counted as slice_max_depth_exceeded. Its end
// event then closes the slice it would have been nested in, as any end
// closes the innermost slice open.
const MaxDepth = 512

// replay builds the slices of every track from the events in timestamp
// order, with the trace processor's stack: a begin opens a slice nested in
// the innermost one open, an end closes the innermost one (an end with
// nothing open is reported as misplaced_end_event, which the trace
// processor ignores silently), and an instant nests like a slice but stays
// open only for instants at the same timestamp, so that those nest in one
// another. It connects flows and collects counters, and hands each over as
// a record as soon as it is complete. It keeps each track's open slices
// and the open flows.
type replay struct {
	p       *parser
	out     *outbox
	stacks  map[uint64]*stack
	open    map[uint64]flowEnd // flow id → its last slice
	stepped map[uint64]bool    // flow id → has reached a second slice
	unknown map[uint64]bool
	n       int // slices so far: the next slice's index
	ev      event
}

// stack is a track's open slices, innermost last, and their arguments.
type stack struct {
	open []openSlice
	args []byte // each open slice's encoded arguments, in its order
}

// openSlice is a slice begun and not yet ended, or an instant that later
// instants at its timestamp nest in.
type openSlice struct {
	index int
	s     Slice // without its arguments
	args  int   // where its arguments start in stack.args
}

// flowEnd is the slice a flow last reached.
type flowEnd struct {
	index int
	track uint64
	name  string
}

func newReplay(p *parser, out *outbox) *replay {
	return &replay{p: p, out: out, stacks: map[uint64]*stack{}, open: map[uint64]flowEnd{}, stepped: map[uint64]bool{}, unknown: map[uint64]bool{}}
}

func (r *replay) problem(name string, packet int, format string, args ...any) {
	r.out.problem(name, packet, format, args...)
}

// popInstants pops the instants at the top of a track's stack as the trace
// processor does before an event at ts: an instant stays open only for
// instants at its own timestamp (keepSame), which nest in it.
func (st *stack) popInstants(ts int64, keepSame bool) {
	for len(st.open) > 0 {
		top := &st.open[len(st.open)-1]
		if !top.s.Instant || keepSame && top.s.TS == ts {
			break
		}
		st.pop()
	}
}

func (st *stack) pop() openSlice {
	top := st.open[len(st.open)-1]
	st.open = st.open[:len(st.open)-1]
	st.args = st.args[:top.args]
	return top
}

// event replays one event, its encoding enc at trace time ts.
func (r *replay) event(ts int64, packet int, enc []byte) error {
	ev := &r.ev
	if !decodeEvent(enc, &r.p.dict, ev) {
		return fmt.Errorf("%w: an event does not decode", ErrTemp)
	}
	ev.ts, ev.packet = ts, packet
	ti, ok := r.p.tracks[ev.track]
	if !ok {
		if !r.unknown[ev.track] {
			r.unknown[ev.track] = true
			r.problem("track_event_unknown_track", ev.packet, "event %q on track %d, which has no TrackDescriptor", ev.name, ev.track)
		}
		return nil
	}
	tr := &r.p.t.Tracks[ti]
	st := r.stacks[ev.track]
	if st == nil {
		st = &stack{}
		r.stacks[ev.track] = st
	}
	switch ev.typ {
	case pb.TrackEvent_TYPE_SLICE_BEGIN, pb.TrackEvent_TYPE_INSTANT:
		if tr.Kind == "counter" {
			r.problem("track_event_slice_on_counter_track", ev.packet, "slice %q on counter track %q", ev.name, tr.Name)
			return nil
		}
		r.begin(st, tr)
	case pb.TrackEvent_TYPE_SLICE_END:
		st.popInstants(ev.ts, false)
		if len(st.open) == 0 {
			r.problem("misplaced_end_event", ev.packet, "end at %d on track %q with no open slice", ev.ts, tr.Name)
			return nil
		}
		top := st.open[len(st.open)-1]
		top.s.Dur = ev.ts - top.s.TS
		r.emit(top, st.args[top.args:])
		st.pop()
	case pb.TrackEvent_TYPE_COUNTER:
		r.counter(tr)
	default:
		r.problem("track_event_parser_errors", ev.packet, "track event %q without a type", ev.name)
	}
	return nil
}

// begin opens a slice or places an instant.
func (r *replay) begin(st *stack, tr *Track) {
	ev := &r.ev
	instant := ev.typ == pb.TrackEvent_TYPE_INSTANT
	st.popInstants(ev.ts, instant)
	if len(st.open) >= MaxDepth {
		r.problem("slice_max_depth_exceeded", ev.packet, "%q at %d on track %q would be at depth %d", ev.name, ev.ts, tr.Name, len(st.open))
		return
	}
	o := openSlice{index: r.n, args: len(st.args)}
	r.n++
	o.s = Slice{Track: ev.track, Name: ev.name, Category: ev.cat, TS: ev.ts, Depth: len(st.open), Parent: -1, Instant: instant}
	if len(st.open) > 0 {
		o.s.Parent = st.open[len(st.open)-1].index
	}
	if instant {
		r.emit(o, ev.args) // complete already
	} else {
		o.s.Dur = -1
		st.args = append(st.args, ev.args...)
	}
	st.open = append(st.open, o)
	r.flows(o.index, ev.track)
}

// emit hands over a complete slice.
func (r *replay) emit(o openSlice, args []byte) {
	o.s.Args = decodeArgs(args, &r.p.dict)
	r.out.push(Record{Kind: KindSlice, Slice: o.s, Index: o.index})
}

// flows connects the flows of the event, placed as slice index on track.
func (r *replay) flows(index int, track uint64) {
	ev := &r.ev
	for _, id := range ev.flows {
		if id == 0 {
			r.problem("flow_invalid_id", ev.packet, "flow id 0 on %q", ev.name)
			continue
		}
		if from, ok := r.open[id]; ok {
			r.out.push(Record{Kind: KindFlow, Flow: Flow{ID: id, From: from.index, To: index}, FromTrack: from.track, ToTrack: track})
			r.stepped[id] = true
		}
		r.open[id] = flowEnd{index: index, track: track, name: ev.name}
	}
	for _, id := range ev.tflows {
		from, ok := r.open[id]
		if !ok {
			r.problem("flow_end_without_start", ev.packet, "flow %d terminated on %q without a start", id, ev.name)
			continue
		}
		r.out.push(Record{Kind: KindFlow, Flow: Flow{ID: id, From: from.index, To: index}, FromTrack: from.track, ToTrack: track})
		delete(r.open, id)
		delete(r.stepped, id)
	}
}

// counter collects a counter value.
func (r *replay) counter(tr *Track) {
	ev := &r.ev
	if tr.Kind != "counter" {
		r.problem("track_event_counter_invalid_track_uuid", ev.packet, "counter value on track %q, which is not a counter track", tr.Name)
		return
	}
	c := Counter{Track: ev.track, TS: ev.ts}
	switch ev.counter {
	case counterInt:
		c.Int, c.Value = ev.counterInt, float64(ev.counterInt)
	case counterDouble:
		c.Value, c.Float = ev.counterFloat, true
	default:
		r.problem("track_event_counter_missing_value", ev.packet, "counter event without a value on %q", tr.Name)
		return
	}
	r.out.push(Record{Kind: KindCounter, Counter: c})
}

// finish hands over what is left open at the end of the trace, in a
// stable order: the slices never ended, by track, and the flows never
// terminated, by id.
func (r *replay) finish() {
	var uuids []uint64
	for u, st := range r.stacks {
		if len(st.open) > 0 {
			uuids = append(uuids, u)
		}
	}
	slices.Sort(uuids)
	for _, u := range uuids {
		st := r.stacks[u]
		for i, o := range st.open {
			if o.s.Instant {
				continue // handed over when placed
			}
			end := len(st.args)
			if i+1 < len(st.open) {
				end = st.open[i+1].args
			}
			r.emit(o, st.args[o.args:end])
			r.problem("slice_not_ended", -1, "slice %q at %d never ended", o.s.Name, o.s.TS)
		}
	}
	var ids []uint64
	for id := range r.open {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		if r.stepped[id] {
			r.problem("flow_unterminated", -1, "flow %d, last on %q, was never terminated", id, r.open[id].name)
		} else {
			r.problem("flow_without_destination", -1, "flow %d starts on %q and reaches no other event", id, r.open[id].name)
		}
	}
}
