package perfetto

import (
	"encoding/binary"
	"slices"

	"google.golang.org/protobuf/encoding/protowire"
)

// FlowID names a flow: an arrow from one event to the next event carrying
// the same id. Ids are global to the trace; zero is invalid.
type FlowID uint64

// FlowIDOf derives a FlowID from a key (FNV-1a), for callers that identify
// hand-offs by a string such as "pid/run_id/slot".
func FlowIDOf(key string) FlowID {
	h := fnvString(fnvOffset, key)
	if h == 0 {
		h = 1
	}
	return FlowID(h)
}

// Slice is a span of time on a track: [TS, TS+Dur] in CLOCK_MONOTONIC ns.
type Slice struct {
	Name     string
	Category string // optional
	TS, Dur  int64
	// Depth breaks ties between slices with identical start and end on one
	// track: the lower Depth is the outer slice. Among equal intervals of
	// equal Depth, the one given first is outer.
	Depth int32
	Args  []Arg
	// Flows are started (first event with the id) or continued (later
	// events) by this slice; EndFlows are terminated by it.
	Flows    []FlowID
	EndFlows []FlowID
	// Ref is the caller's own: it is never written to the trace, only
	// handed back in an Overflow (say, the input line the slice came
	// from).
	Ref uint64
}

// Instant is a point in time on a track, drawn nested in the slices that
// contain it.
type Instant struct {
	Name     string
	Category string
	TS       int64
	Args     []Arg
	Flows    []FlowID
	EndFlows []FlowID
	Ref      uint64 // the caller's own, as Slice.Ref
}

// pendingSlice is a complete slice or instant waiting for Flush. Its name
// and arguments are already interned and encoded (in the writer's byte
// arena) on its track's sequence; its flows live in the flow arena.
type pendingSlice struct {
	ts, end            int64
	ref                uint64
	label              string // the name, for errors and overflows
	name, cat          uint32 // interned ids; cat 0: none
	depth              int32
	argStart, argEnd   int32 // encoded DebugAnnotations in Writer.waiting.enc
	flowStart, flowMid int32 // flows [flowStart, flowMid) start or continue,
	flowEnd            int32 // [flowMid, flowEnd) terminate
	instant            bool
}

// Slice adds a complete slice to track t. It is written at the next Flush
// or Close, nested by its interval among the slices of t: a slice that lies
// within another (boundaries included) is its child. A slice that cannot
// nest on t — it partially overlaps another, or would be nested deeper than
// MaxDepth, or otherwise cannot be written so that the trace processor
// rebuilds its nesting (see Flush) — is written on an overflow lane of t
// instead. The writer copies s.Args, s.Flows and s.EndFlows, so the caller
// may reuse them.
func (w *Writer) Slice(t Track, s Slice) {
	w.addPending(t, s.Name, s.Category, s.TS, s.Dur, s.Depth, false, s.Ref, s.Args, s.Flows, s.EndFlows)
}

// Instant adds an instant event to track t, written at the next Flush or
// Close like a slice of zero duration.
func (w *Writer) Instant(t Track, e Instant) {
	w.addPending(t, e.Name, e.Category, e.TS, 0, 0, true, e.Ref, e.Args, e.Flows, e.EndFlows)
}

func (w *Writer) addPending(t Track, name, cat string, ts, dur int64, depth int32, instant bool, ref uint64, args []Arg, flows, endFlows []FlowID) {
	var st *trackState
	var why error
	switch {
	case w.closed:
		why = ErrClosed
	default:
		if st = w.track(t, name, ts); st == nil {
			// Counted, and an error, in track.
			why = ErrUnknownTrack
			if t.uuid == 0 && w.stats.TracksRefused > 0 {
				why = ErrTooManyTracks // the zero Track of a refused track
			}
			w.refused(nil, name, ts, dur, ref, flows, endFlows, why, "")
			return
		}
		switch {
		case ts < 0 || dur < 0 || ts+dur < ts:
			why = ErrNegativeTimestamp
		case st.kind == trackCounter:
			why = ErrWrongTrackKind
		case st.stream:
			why = ErrMixedTrack
		}
	}
	if why != nil {
		w.refuse(st, name, ts, dur, why)
		w.refused(st, name, ts, dur, ref, flows, endFlows, why, "")
		return
	}
	// Intern and encode now, on the track's sequence: the caller's
	// arguments need not outlive the call, and the flush only copies bytes.
	// The sequence restarts (clearing its interning) only while nothing
	// encoded against it waits. The slice is built in its place among the
	// track's pending ones.
	seq := w.sequenceFor(st, len(st.pending) == 0)
	if st.pending == nil {
		st.pending = w.freePending()
	}
	st.pending = append(st.pending, pendingSlice{ts: ts, end: ts + dur, ref: ref, label: name, depth: depth, instant: instant})
	p := &st.pending[len(st.pending)-1]
	p.name = uint32(seq.internName(name))
	if cat != "" {
		p.cat = uint32(seq.internCategory(cat))
	}
	p.argStart = int32(len(w.waiting.enc))
	w.waiting.enc = appendAnnotations(w.waiting.enc, seq, args, fEventAnnotations, true, seq.argMemo(uint64(p.name)))
	p.argEnd = int32(len(w.waiting.enc))
	p.flowStart = int32(len(w.waiting.flows))
	if len(flows) > 0 {
		w.waiting.flows = append(w.waiting.flows, flows...)
	}
	p.flowMid = int32(len(w.waiting.flows))
	if len(endFlows) > 0 {
		w.waiting.flows = append(w.waiting.flows, endFlows...)
	}
	p.flowEnd = int32(len(w.waiting.flows))
	if !st.dirty {
		st.dirty = true
		w.waiting.dirty = append(w.waiting.dirty, st)
	}
}

func (w *Writer) refuse(st *trackState, name string, ts, dur int64, err error) {
	w.stats.Dropped++
	label := ""
	if st != nil {
		label = st.label()
	}
	w.dataError(&EventError{Track: label, Name: name, TS: ts, Dur: dur, Err: err})
}

// Flush writes every slice and instant waiting since the last Flush and
// returns Err: the errors of the whole stream so far.
//
// Slices given after a Flush may lie before, after or inside slices already
// written on their track, or enclose them, because the trace processor
// orders everything by timestamp, keeping file order for equal ones. What
// it cannot do is put a later slice outside an earlier one that starts at
// the same instant, end a later slice before an earlier one that starts
// where it ends, or mend a partial overlap. To see such conflicts the
// writer remembers, for each lane of a track, the latest 64 top-level
// slices of earlier flushes, each with the span its descendants cover,
// and the earlier ones as the stretches of time they cover (see the
// package doc, Memory). A slice is written on the first lane — the track
// itself, then its overflow lanes — where it nests without conflict and within
// MaxDepth, so nothing is refused for its nesting:
//
//   - it partially overlaps a slice (ErrOverlap);
//   - it would enclose a slice written before that starts at the same
//     instant, or end where one starts (ErrOutOfOrder);
//   - it would be nested at depth MaxDepth or more (ErrTooDeep), counting
//     the slices written before that enclose it or that it encloses;
//   - the writer cannot verify it (ErrUnverifiable): it lies in one of the
//     latest 64 top-level slices written before, among that slice's
//     descendants (the writer remembers the span they cover, so a slice
//     before or after them all, or enclosing them all, is decided), or
//     within a stretch covered by older ones, or it has an end in a gap
//     given up past the bound on a lane's memory.
//
// Flushing where each track's open work is complete keeps slices on their
// own track. The function set by WithOverflowFunc is called at the end of
// Flush, once for each slice written on an overflow lane.
func (w *Writer) Flush() error {
	w.flushSlices()
	w.repanic()
	return w.Err()
}

func (w *Writer) flushSlices() {
	w.riskyFirst()
	for _, t := range w.waiting.dirty {
		w.flushTrack(t)
		t.dirty = false
	}
	w.waiting.dirty = w.waiting.dirty[:0]
	w.waiting.enc = w.waiting.enc[:0]
	w.waiting.flows = w.waiting.flows[:0]
	w.reportOverflows()
	w.reportRefusals()
}

// sortKey orders a track's pending slices for flushTrack.
type sortKey struct {
	ts, end int64
	depth   int32
	i       int32
}

// before reports whether a comes before b: by start, then longest first,
// then by Depth, then in the order given.
func (a *sortKey) before(b *sortKey) bool {
	switch {
	case a.ts != b.ts:
		return a.ts < b.ts
	case a.end != b.end:
		return a.end > b.end
	case a.depth != b.depth:
		return a.depth < b.depth
	}
	return a.i < b.i
}

// sortKeys sorts keys (sortKey.before). A track's slices come almost in
// order — a log gives a parent just after its few children — so an
// insertion sort does it in about one move per slice; past a budget of
// moves, the keys are far from sorted and a general sort takes over. The
// keys are all different (sortKey.i), so every sort gives the same order.
func sortKeys(keys []sortKey) {
	budget := 4*len(keys) + 64
	for i := 1; i < len(keys); i++ {
		k := keys[i]
		j := i
		for ; j > 0 && k.before(&keys[j-1]); j-- {
			keys[j] = keys[j-1]
		}
		keys[j] = k
		if budget -= i - j; budget < 0 {
			slices.SortFunc(keys, func(a, b sortKey) int {
				switch {
				case a.i == b.i:
					return 0
				case a.before(&b):
					return -1
				}
				return 1
			})
			return
		}
	}
}

// writeBegin writes the begin event of p (or the instant), on the lane
// whose uuid is lane (zero: the track itself, the sequence's default),
// with the reason it was relocated there, if any.
//
// The sequence is t's, started when p was added. Unless the packet defines
// interned data or the overflow reason, its size is known before it is
// written, so it is written in one pass, with no lengths to patch, in
// eventStart and eventEnd's layout.
func (w *Writer) writeBegin(t *trackState, p *pendingSlice, lane uint64, reason string) {
	if s := t.seq; reason == "" && !s.fresh() && (len(w.refusal.dead) == 0 || p.flowEnd == p.flowStart) {
		enc := w.waiting.enc[p.argStart:p.argEnd]
		te := len(enc) + 1 + protowire.SizeVarint(uint64(p.name)) + 2 + 10*int(p.flowEnd-p.flowStart)
		if p.cat != 0 {
			te += 1 + protowire.SizeVarint(uint64(p.cat))
		}
		if lane != 0 {
			te += 1 + protowire.SizeVarint(lane)
		}
		st := w.stamp(s, p.ts)
		b := w.sink()
		b = appendVarint(append(b, fTracePacket<<3|byte(protowire.BytesType)), uint64(eventHeaderSize(s.id)+protowire.SizeVarint(uint64(te))+te+st.size()))
		b = appendVarint(appendEventHeader(b, s.id), uint64(te))
		b = w.appendBeginFields(append(b, enc...), p, lane)
		w.finish(appendStamp(b, st))
		return
	}
	e := w.eventStart(t, p.ts)
	e.b = append(e.b, w.waiting.enc[p.argStart:p.argEnd]...)
	if reason != "" {
		var m message
		e.b, m = begin(e.b, fEventAnnotations)
		e.b = appendStringField(e.b, fAnnString, reason)
		e.b = appendVarintField(e.b, fAnnNameIID, e.s.internAnnName(overflowReason))
		e.b = m.end(e.b)
	}
	e.b = w.appendBeginFields(e.b, p, lane)
	w.eventEnd(e)
}

// appendBeginFields appends what the begin event of p (or the instant)
// carries after its arguments: its name, category, lane, type and flows.
func (w *Writer) appendBeginFields(b []byte, p *pendingSlice, lane uint64) []byte {
	b = appendVarintField(b, fEventNameIID, uint64(p.name))
	if p.cat != 0 {
		b = appendVarintField(b, fEventCategoryIIDs, uint64(p.cat))
	}
	if lane != 0 {
		b = appendVarintField(b, fEventTrackUUID, lane)
	}
	if p.instant {
		b = appendVarintField(b, fEventType, typeInstant)
		w.stats.Instants++
	} else {
		b = appendVarintField(b, fEventType, typeSliceBegin)
		w.stats.Slices++
	}
	if p.flowEnd > p.flowStart {
		b = w.appendFlows(b, w.waiting.flows[p.flowStart:p.flowMid], w.waiting.flows[p.flowMid:p.flowEnd])
	}
	return b
}

// appendFlows appends the flow ids of an event, but for those of slices
// refused in this flush (Refusal.Flows).
func (w *Writer) appendFlows(b []byte, flows, endFlows []FlowID) []byte {
	n := len(flows) + len(endFlows)
	for _, f := range flows {
		if len(w.refusal.dead) > 0 && w.refusal.dead[f] {
			n--
			continue
		}
		b = appendFixed64Field(b, fEventFlowIDs, uint64(f))
		w.wrote(f)
	}
	for _, f := range endFlows {
		if len(w.refusal.dead) > 0 && w.refusal.dead[f] {
			n--
			continue
		}
		b = appendFixed64Field(b, fEventTermFlowIDs, uint64(f))
		w.wrote(f)
	}
	w.stats.Flows += int64(n)
	return b
}

// wrote remembers, for the rest of the flush, a flow id written, so that a
// slice refused later in the flush can say which of its ids stay alone
// (Refusal.Alone). Only a caller that hears of refusals needs it.
func (w *Writer) wrote(f FlowID) {
	if w.cfg.refusal == nil {
		return
	}
	if w.refusal.written == nil {
		w.refusal.written = map[FlowID]bool{}
	}
	w.refusal.written[f] = true
}

// writeEnd writes the end event of p, on lane as writeBegin, in one pass
// like writeBegin.
func (w *Writer) writeEnd(t *trackState, p *pendingSlice, lane uint64) {
	if s := t.seq; lane == 0 && s.id < 0x80 && !s.fresh() {
		// The most frequent packet of all: eight bytes that depend only
		// on the sequence, stored at once, then the timestamp.
		st := w.stamp(s, p.end)
		b := w.sink()
		n := len(b)
		if cap(b)-n < maxEndPacket {
			b = slices.Grow(b, maxEndPacket)
		}
		d := b[n : n+maxEndPacket]
		d[0] = fTracePacket<<3 | byte(protowire.BytesType)
		binary.LittleEndian.PutUint64(d[2:], endEventFields|uint64(s.id)<<8)
		d[10] = fPacketTimestamp << 3
		k := 11 + putVarint(d[11:], st.v)
		if st.abs {
			d[k], d[k+1], d[k+2] = fPacketTimestampClockID<<3&0x7f|0x80, fPacketTimestampClockID<<3>>7, clockMonotonic
			k += 3
		}
		d[1] = byte(k - 2)
		w.finish(b[:n+k])
		return
	}
	if s := t.seq; !s.fresh() {
		te := 2
		if lane != 0 {
			te += 1 + protowire.SizeVarint(lane)
		}
		st := w.stamp(s, p.end)
		b := w.sink()
		b = append(b, fTracePacket<<3|byte(protowire.BytesType), byte(eventHeaderSize(s.id)+1+te+st.size()))
		b = append(appendEventHeader(b, s.id), byte(te), fEventType<<3, typeSliceEnd)
		if lane != 0 {
			b = appendVarint(append(b, fEventTrackUUID<<3), lane)
		}
		w.finish(appendStamp(b, st))
		return
	}
	e := w.eventStart(t, p.end)
	e.b = appendVarintField(e.b, fEventType, typeSliceEnd)
	if lane != 0 {
		e.b = appendVarintField(e.b, fEventTrackUUID, lane)
	}
	w.eventEnd(e)
}

// endEventFields are the fields of an end event on lane 0 of a sequence
// whose id is under 128, as eventStart and writeEnd write them, but for
// the id (in the second byte, zero here): the sequence id,
// SEQ_NEEDS_INCREMENTAL_STATE, and the TrackEvent (two bytes long) whose
// type is TYPE_SLICE_END.
const endEventFields = fPacketSequenceID<<3 |
	fPacketSequenceFlags<<3<<16 | seqNeedsIncrementalState<<24 |
	(fPacketTrackEvent<<3|uint64(protowire.BytesType))<<32 | 2<<40 |
	fEventType<<3<<48 | typeSliceEnd<<56

// maxEndPacket is the size of the longest end event packet writeEnd
// writes in one store: the packet's tag and length, endEventFields, and a
// timestamp field of eleven bytes with its clock id of three.
const maxEndPacket = 2 + 8 + 11 + 3

// Begin opens a slice on t at s.TS (s.Dur is ignored) and writes it at
// once; End closes the innermost open one. The caller orders Begin and End
// as they should nest; equal timestamps keep the call order. A track takes
// either Begin/End or complete slices, not both.
func (w *Writer) Begin(t Track, s Slice) {
	if w.closed {
		w.refuse(nil, s.Name, s.TS, 0, ErrClosed)
		return
	}
	st := w.track(t, s.Name, s.TS)
	if st == nil {
		return
	}
	switch {
	case s.TS < 0:
		w.refuse(st, s.Name, s.TS, 0, ErrNegativeTimestamp)
		return
	case st.kind == trackCounter:
		w.refuse(st, s.Name, s.TS, 0, ErrWrongTrackKind)
		return
	case len(st.pending) > 0 || st.wrote:
		w.refuse(st, s.Name, s.TS, 0, ErrMixedTrack)
		return
	}
	st.stream = true
	st.open++
	e := w.eventStart(st, s.TS)
	e.b = appendAnnotations(e.b, e.s, s.Args, fEventAnnotations, true, nil)
	e.b = appendVarintField(e.b, fEventNameIID, e.s.internName(s.Name))
	if s.Category != "" {
		e.b = appendVarintField(e.b, fEventCategoryIIDs, e.s.internCategory(s.Category))
	}
	e.b = appendVarintField(e.b, fEventType, typeSliceBegin)
	e.b = w.appendFlows(e.b, s.Flows, s.EndFlows)
	w.eventEnd(e)
	w.stats.Slices++
}

// End closes the innermost slice opened by Begin on t, at ts.
func (w *Writer) End(t Track, ts int64) {
	if w.closed {
		w.refuse(nil, "", ts, 0, ErrClosed)
		return
	}
	st := w.track(t, "", ts)
	if st == nil {
		return
	}
	switch {
	case ts < 0:
		w.refuse(st, "", ts, 0, ErrNegativeTimestamp)
		return
	case st.open == 0:
		w.refuse(st, "", ts, 0, ErrUnmatchedEnd)
		return
	}
	st.open--
	e := w.eventStart(st, ts)
	e.b = appendVarintField(e.b, fEventType, typeSliceEnd)
	w.eventEnd(e)
}

// Counter writes an integer value of counter track t at ts.
func (w *Writer) Counter(t Track, ts int64, v int64) {
	if e, ok := w.counterStart(t, ts); ok {
		e.b = appendVarintField(e.b, fEventCounterValue, uint64(v))
		w.eventEnd(e)
	}
}

// CounterFloat writes a floating-point value of counter track t at ts.
func (w *Writer) CounterFloat(t Track, ts int64, v float64) {
	if e, ok := w.counterStart(t, ts); ok {
		e.b = appendDoubleField(e.b, fEventDoubleCounter, v)
		w.eventEnd(e)
	}
}

func (w *Writer) counterStart(t Track, ts int64) (event, bool) {
	if w.closed {
		w.refuse(nil, "", ts, 0, ErrClosed)
		return event{}, false
	}
	st := w.track(t, "", ts)
	if st == nil {
		return event{}, false
	}
	if ts < 0 {
		w.refuse(st, "", ts, 0, ErrNegativeTimestamp)
		return event{}, false
	}
	if st.kind != trackCounter {
		w.refuse(st, "", ts, 0, ErrWrongTrackKind)
		return event{}, false
	}
	e := w.eventStart(st, ts)
	e.b = appendVarintField(e.b, fEventType, typeCounter)
	w.stats.Counters++
	return e, true
}

// freePending returns a pending buffer for a track that has none: one a
// quiet track let go of, or a new one of smallPending slices.
func (w *Writer) freePending() []pendingSlice {
	f := w.waiting.free
	if n := len(f); n > 0 {
		ps := f[n-1]
		f[n-1] = nil
		w.waiting.free = f[:n-1]
		return ps
	}
	return make([]pendingSlice, 0, smallPending)
}
