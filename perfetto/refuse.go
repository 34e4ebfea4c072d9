package perfetto

import "slices"

// Refusal is a slice or instant the writer did not write (see
// WithRefusalFunc).
type Refusal struct {
	Track   string // its track's label ("thread 12/34", a track name); "" for a track the writer does not know
	Name    string
	TS, Dur int64
	Ref     uint64 // the caller's Slice.Ref or Instant.Ref
	// Flows are the flow ids it carried (Flows, then EndFlows). The
	// writer leaves them out of every event that carries them too in the
	// Flush that refused it, if written after it; an event given later is
	// the caller's to mend. Alone are those of Flows that an event written
	// before it in the same Flush carries: they stay in the trace with no
	// other end (the trace processor draws no arrow of them).
	Flows, Alone []FlowID
	Err          error  // why: ErrTooManyLanes, ErrTooManyTracks, ErrNegativeTimestamp, ...
	Other        string // for ErrTooManyLanes: why it did not fit on its track
}

// WithRefusalFunc sets a function called once for each slice or instant
// the writer refuses — when it is given (a negative timestamp, an unknown
// or refused track, ...) or when a flush finds no lane for it
// (ErrTooManyLanes, or ErrTooManyTracks for the lane it needed) — at the end
// of the Flush or Close that follows. With it, a caller that counts what it
// gave the writer knows exactly what the trace holds: every slice given is
// written, on its track or an overflow lane (WithOverflowFunc), or refused.
// It must not call the Writer.
func WithRefusalFunc(f func(Refusal)) Option { return func(c *config) { c.refusal = f } }

// LeaveOutFlows leaves ids out of every slice and instant given since the
// last Flush, and of those given until the next: an end of an arrow whose
// other end the caller will not give, after all. The writer holds what it
// is given until a Flush, so an arrow given one end and then abandoned in
// the same Flush leaves no flow id alone in the trace (Begin writes at
// once: its ids are not taken back).
func (w *Writer) LeaveOutFlows(ids []FlowID) {
	if len(ids) == 0 {
		return
	}
	if w.refusal.dead == nil {
		w.refusal.dead = map[FlowID]bool{}
	}
	for _, f := range ids {
		w.refusal.dead[f] = true
	}
}

// refused keeps the report of a refused slice for the caller, and marks the
// flow ids it carried dead for the rest of the flush.
func (w *Writer) refused(st *trackState, name string, ts, dur int64, ref uint64, flows, endFlows []FlowID, err error, other string) {
	w.LeaveOutFlows(flows)
	w.LeaveOutFlows(endFlows)
	if w.cfg.refusal == nil {
		return
	}
	r := Refusal{Name: name, TS: ts, Dur: dur, Ref: ref, Err: err, Other: other}
	if st != nil {
		r.Track = st.label()
	}
	if len(flows)+len(endFlows) > 0 {
		r.Flows = append(append(make([]FlowID, 0, len(flows)+len(endFlows)), flows...), endFlows...)
		for _, f := range r.Flows {
			if w.refusal.written[f] {
				r.Alone = append(r.Alone, f)
			}
		}
	}
	w.refusal.reports = append(w.refusal.reports, r)
}

// refuseUnplaced refuses pending slice p of t, which no lane took: noMore
// says why no lane could be added, other why it did not fit on t.
func (w *Writer) refuseUnplaced(t *trackState, p *pendingSlice, noMore error, other string) {
	w.stats.Dropped++
	if noMore == ErrTooManyTracks {
		w.refuseTrack(t)
	} else {
		w.dataError(&EventError{Track: t.label(), Name: p.label, TS: p.ts, Dur: p.end - p.ts, Other: other, Err: noMore})
	}
	w.refused(t, p.label, p.ts, p.end-p.ts, p.ref, w.waiting.flows[p.flowStart:p.flowMid], w.waiting.flows[p.flowMid:p.flowEnd], noMore, other)
}

// riskyFirst orders the dirty tracks so that those where the flush could
// refuse a slice that carries flow ids come first (stably): the ids are
// then left out of the events of the other tracks. Past the limit on
// tracks every track may refuse, and there is nothing to put first.
func (w *Writer) riskyFirst() {
	need := len(w.waiting.dirty) // a flush adds at most a lane per slice, and a process's track
	for _, t := range w.waiting.dirty {
		need += len(t.pending)
	}
	if need > w.TracksLeft() || len(w.waiting.flows) == 0 {
		return
	}
	ordered := w.refusal.reorder[:0]
	for _, t := range w.waiting.dirty {
		if w.risky(t) {
			ordered = append(ordered, t)
		}
	}
	if len(ordered) == 0 {
		return
	}
	for _, t := range w.waiting.dirty {
		if !slices.Contains(ordered, t) {
			ordered = append(ordered, t)
		}
	}
	w.waiting.dirty, w.refusal.reorder = ordered, w.waiting.dirty
}

// risky reports whether the flush could refuse a slice of t that carries
// flow ids: it could need more overflow lanes than t may have. A slice goes
// on a new lane only when every lane has a slice open at its start, so a
// flush adds at most as many lanes as the most slices open at one instant
// (ends included): a slice goes on a new lane only when each lane the flush
// added has a slice open at its start.
func (w *Writer) risky(t *trackState) bool {
	ps := t.pending
	if len(t.lanes)+len(ps) <= MaxOverflowLanes || !slices.ContainsFunc(ps, func(p pendingSlice) bool { return p.flowEnd > p.flowStart }) {
		return false
	}
	starts, ends := w.refusal.starts[:0], w.refusal.ends[:0]
	for i := range ps {
		starts, ends = append(starts, ps[i].ts), append(ends, ps[i].end)
	}
	slices.Sort(starts)
	slices.Sort(ends)
	w.refusal.starts, w.refusal.ends = starts, ends
	open, j := 0, 0
	for i, s := range starts {
		for ends[j] < s {
			j++
		}
		open = max(open, i+1-j)
	}
	return len(t.lanes)+open > MaxOverflowLanes
}

// reportRefusals calls the function set by WithRefusalFunc for the slices
// refused since the last report, and forgets the flow ids of the flush.
func (w *Writer) reportRefusals() {
	clear(w.refusal.dead)
	clear(w.refusal.written)
	if len(w.refusal.reports) == 0 {
		return
	}
	rs := w.refusal.reports
	w.refusal.reports = nil
	for _, r := range rs {
		w.cfg.refusal(r)
	}
}
