package perfetto

import "slices"

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
}

// pendingSlice is a complete slice or instant waiting for Flush. Its name
// and arguments are already interned and encoded (in the writer's byte
// arena) on its track's sequence; its flows live in the flow arena.
type pendingSlice struct {
	ts, end            int64
	name, cat          uint64 // interned ids; cat 0: none
	depth              int32
	instant            bool
	argStart, argEnd   int32 // encoded DebugAnnotations in Writer.enc
	flowStart, flowMid int32 // flows [flowStart, flowMid) start or continue,
	flowEnd            int32 // [flowMid, flowEnd) terminate
	label              string
}

// Slice adds a complete slice to track t. It is written at the next Flush
// or Close, nested by its interval among the slices of t: a slice that lies
// within another (boundaries included) is its child. A slice that partially
// overlaps another is refused with ErrOverlap. The writer copies s.Args,
// s.Flows and s.EndFlows, so the caller may reuse them.
func (w *Writer) Slice(t Track, s Slice) {
	w.addPending(t, s.Name, s.Category, s.TS, s.Dur, s.Depth, false, s.Args, s.Flows, s.EndFlows)
}

// Instant adds an instant event to track t, written at the next Flush or
// Close like a slice of zero duration.
func (w *Writer) Instant(t Track, e Instant) {
	w.addPending(t, e.Name, e.Category, e.TS, 0, 0, true, e.Args, e.Flows, e.EndFlows)
}

func (w *Writer) addPending(t Track, name, cat string, ts, dur int64, depth int32, instant bool, args []Arg, flows, endFlows []FlowID) {
	if w.closed {
		w.refuse(nil, name, ts, dur, ErrClosed)
		return
	}
	st := w.track(t, name, ts)
	if st == nil {
		return
	}
	switch {
	case ts < 0 || dur < 0 || ts+dur < ts:
		w.refuse(st, name, ts, dur, ErrNegativeTimestamp)
		return
	case st.kind == trackCounter:
		w.refuse(st, name, ts, dur, ErrWrongTrackKind)
		return
	case st.stream:
		w.refuse(st, name, ts, dur, ErrMixedTrack)
		return
	}
	if r, err := st.conflict(ts, ts+dur); err != nil {
		w.stats.Dropped++
		w.dataError(&EventError{Track: st.label(), Name: name, TS: ts, Dur: dur, Other: describeInterval(r), Err: err})
		return
	}
	// Intern and encode now, on the track's sequence: the caller's
	// arguments need not outlive the call, and the flush only copies bytes.
	// The sequence restarts (clearing its interning) only while nothing
	// encoded against it waits.
	seq := w.sequenceFor(st, len(st.pending) == 0)
	p := pendingSlice{ts: ts, end: ts + dur, depth: depth, instant: instant, label: name}
	p.name = seq.internName(name)
	if cat != "" {
		p.cat = seq.internCategory(cat)
	}
	p.argStart = int32(len(w.enc))
	w.enc = appendAnnotations(w.enc, seq, args, fEventAnnotations, true)
	p.argEnd = int32(len(w.enc))
	p.flowStart = int32(len(w.flows))
	w.flows = append(w.flows, flows...)
	p.flowMid = int32(len(w.flows))
	w.flows = append(w.flows, endFlows...)
	p.flowEnd = int32(len(w.flows))
	st.pending = append(st.pending, p)
	if !st.dirty {
		st.dirty = true
		w.dirty = append(w.dirty, st)
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
// orders everything by timestamp. What it cannot do is put a later slice
// outside an earlier one that starts at the same instant (equal timestamps
// keep file order), or mend a partial overlap: flush at points where each
// track's open work is complete. The writer refuses such slices when it can
// see them — against the top-level slices of each track's last flush — with
// ErrOutOfOrder or ErrOverlap.
func (w *Writer) Flush() error {
	w.flushSlices()
	w.repanic()
	return w.Err()
}

func (w *Writer) flushSlices() {
	for _, t := range w.dirty {
		w.flushTrack(t)
		t.dirty = false
	}
	w.dirty = w.dirty[:0]
	w.enc = w.enc[:0]
	w.flows = w.flows[:0]
}

// flushTrack writes t's pending slices as begin/end events in an order whose
// stable sort by timestamp (what the trace processor does) replays as the
// nesting the intervals describe: sorted by start, then longest first, each
// slice's end is written just before the first event at or after it that
// lies outside it. The events come out in timestamp order, so ties keep
// this order in the trace processor.
func (w *Writer) flushTrack(t *trackState) {
	ps := t.pending
	order := w.order[:0]
	for i := range ps {
		order = append(order, sortKey{ts: ps[i].ts, end: ps[i].end, depth: ps[i].depth, i: int32(i)})
	}
	slices.SortFunc(order, func(a, b sortKey) int {
		switch {
		case a.ts != b.ts:
			return cmpInt64(a.ts, b.ts)
		case a.end != b.end:
			return cmpInt64(b.end, a.end)
		case a.depth != b.depth:
			return cmpInt64(int64(a.depth), int64(b.depth))
		}
		return cmpInt64(int64(a.i), int64(b.i))
	})
	stack := w.stack[:0]
	roots := t.flushed[:0]
	for _, k := range order {
		i := k.i
		p := &ps[i]
		ok := true
		for len(stack) > 0 {
			top := &ps[stack[len(stack)-1]]
			if p.end <= top.end { // p.ts >= top.ts by the sort: p nests in top
				break
			}
			if p.ts < top.end {
				w.stats.Dropped++
				w.dataError(&EventError{Track: t.label(), Name: p.label, TS: p.ts, Dur: p.end - p.ts, Other: describe(top), Err: ErrOverlap})
				ok = false
				break
			}
			w.writeEnd(t, top)
			stack = stack[:len(stack)-1]
		}
		if !ok {
			continue
		}
		if len(stack) == 0 {
			roots = append(roots, interval{p.ts, p.end})
		}
		w.writeBegin(t, p)
		if !p.instant {
			stack = append(stack, i)
		}
	}
	for len(stack) > 0 {
		w.writeEnd(t, &ps[stack[len(stack)-1]])
		stack = stack[:len(stack)-1]
	}
	w.order, w.stack = order, stack
	if len(roots) > maxRemembered {
		roots = append(roots[:0], roots[len(roots)-maxRemembered:]...)
	}
	t.flushed = roots
	if len(roots) > 0 {
		t.flushedLo, t.flushedHi = roots[0].ts, roots[0].end
		for _, r := range roots[1:] {
			t.flushedLo, t.flushedHi = min(t.flushedLo, r.ts), max(t.flushedHi, r.end)
		}
	}
	t.wrote = true
	clear(ps) // drop references to the caller's strings
	t.pending = ps[:0]
	if cap(ps) <= smallPending {
		t.pending = nil // a quiet track keeps no buffer between flushes
	}
}

// smallPending is the capacity of pending slices below which a track lets
// its buffer go at each flush: busy tracks keep theirs, and the many quiet
// ones cost nothing between flushes.
const smallPending = 4

// interval is a written slice's extent.
type interval struct{ ts, end int64 }

// maxRemembered bounds the top-level slices of a track's last flush that
// later slices are checked against.
const maxRemembered = 64

// conflict checks a slice [ts, end] given after a flush against the
// top-level slices that flush wrote on the track.
func (t *trackState) conflict(ts, end int64) (interval, error) {
	if len(t.flushed) == 0 || end < t.flushedLo || ts > t.flushedHi {
		return interval{}, nil
	}
	for _, r := range t.flushed {
		switch {
		case ts == r.ts && end > r.end:
			return r, ErrOutOfOrder
		case ts < r.ts && end > r.ts && end < r.end, ts > r.ts && ts < r.end && end > r.end:
			return r, ErrOverlap
		}
	}
	return interval{}, nil
}

func describeInterval(r interval) string {
	return "[" + itoa(r.ts) + ", +" + itoa(r.end-r.ts) + "] written before"
}

// sortKey orders a track's pending slices for flushTrack.
type sortKey struct {
	ts, end int64
	depth   int32
	i       int32
}

func describe(p *pendingSlice) string {
	return "\"" + p.label + "\" [" + itoa(p.ts) + ", +" + itoa(p.end-p.ts) + "]"
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func (w *Writer) writeBegin(t *trackState, p *pendingSlice) {
	e := w.eventStart(t, p.ts)
	if p.instant {
		e.b = appendVarintField(e.b, fEventType, typeInstant)
		w.stats.Instants++
	} else {
		e.b = appendVarintField(e.b, fEventType, typeSliceBegin)
		w.stats.Slices++
	}
	e.b = appendVarintField(e.b, fEventNameIID, p.name)
	if p.cat != 0 {
		e.b = appendVarintField(e.b, fEventCategoryIIDs, p.cat)
	}
	e.b = append(e.b, w.enc[p.argStart:p.argEnd]...)
	if p.flowEnd > p.flowStart {
		e.b = w.appendFlows(e.b, w.flows[p.flowStart:p.flowMid], w.flows[p.flowMid:p.flowEnd])
	}
	w.eventEnd(e)
}

func (w *Writer) appendFlows(b []byte, flows, endFlows []FlowID) []byte {
	for _, f := range flows {
		b = appendFixed64Field(b, fEventFlowIDs, uint64(f))
	}
	for _, f := range endFlows {
		b = appendFixed64Field(b, fEventTermFlowIDs, uint64(f))
	}
	w.stats.Flows += int64(len(flows) + len(endFlows))
	return b
}

func (w *Writer) writeEnd(t *trackState, p *pendingSlice) {
	e := w.eventStart(t, p.end)
	e.b = appendVarintField(e.b, fEventType, typeSliceEnd)
	w.eventEnd(e)
}

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
	e.b = appendVarintField(e.b, fEventType, typeSliceBegin)
	e.b = appendVarintField(e.b, fEventNameIID, e.s.internName(s.Name))
	if s.Category != "" {
		e.b = appendVarintField(e.b, fEventCategoryIIDs, e.s.internCategory(s.Category))
	}
	e.b = appendAnnotations(e.b, e.s, s.Args, fEventAnnotations, true)
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
