package analysis

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/phasetrace/phasetrace/strace"
)

// MaxOpenBinds is how many binds a [Binds] keeps open, waiting for more
// of their segments: a bind's segments and its chip.run.bind span are
// written together, a few binds of other ranks in between at most.
const MaxOpenBinds = 512

// maxPendingLines is how many legacy bind lines a [Binds] holds while it
// waits for the chip.run.bind span that holds them; past it the oldest is
// counted as unclaimed.
const maxPendingLines = 1 << 16

// Binds computes the bind statistics ([AnalyzeBinds]) over a stream of
// records in input order ([Binds.Add], [Binds.ReadFrom]), keeping no span.
// What it keeps grows as follows:
//   - per open bind (at most [MaxOpenBinds] of them) its segments with
//     the counters the statistics read, and the legacy bind lines it has
//     claimed; legacy bind lines waiting for their bind (at most 65536);
//   - per bind its key (to tell a late segment) and, once it is closed, its
//     start and each segment's duration and counters, varint-packed (a
//     dozen bytes a segment); at the end, per warm bind its control-plane
//     parts and sum;
//   - every "[stamp]" line and torch_backend_autoload record (few);
//   - the host_phase_records passes given as a slice ([WithPhaseRecords]),
//     or, streamed from their files ([WithPhaseRecordsFrom]), the bind
//     segments of the passes within [PassHorizon] of the bind closing (24
//     bytes each, at most [MaxHeldSegments]).
//
// A bind is closed once [MaxOpenBinds] newer ones have begun; a segment
// arriving after that is counted by [Binds.Late] and left out, and a bind
// line is matched only against the chip.run.bind spans of open binds.
// From a stream, [BindStats.Binds] holds each bind's key, start and
// coldness but not its segments.
type Binds struct {
	cfg  bindConfig
	name string
	seq  int64 // records seen
	base int64 // bytes of the logs before this one

	about   logAbout   // the log's stamps and autoload records
	window  bindWindow // the binds open to segments and lines
	recs    *passWindow
	set     bindSet
	leftOut leftOut // what was left out of the statistics, for the warnings
	done    bool
}

// logAbout is what a log says about itself: its "[stamp]" lines and its
// distinct autoload records, in order.
type logAbout struct {
	stamps   []string
	autoload []string
	autoSeen map[string]bool
}

// bindWindow holds the binds open to segments and bind lines (at most
// MaxOpenBinds), those already closed, and the bind lines waiting for a
// bind whose span holds them.
type bindWindow struct {
	open    map[bindKey]*openBind
	queue   arrivals[bindKey]
	closed  map[bindKey]struct{}
	scopes  []*openBind // open binds with a chip.run.bind span, in its order
	pending []BindLine  // bind lines inside no open bind's span yet
}

// leftOut counts what a Binds leaves out of its statistics, and why.
type leftOut struct {
	late       int64 // segments after their bind was closed (Binds.Late)
	dups       []dupWarning
	unclaimed  int   // bind lines inside no bind's span
	firstOff   int64 // the first of them
	firstLine  string
	impossible int // host_phase_records segments that end before they start
	notBinds   int // segment groups without host_orch
}

type bindOrder struct{ stage, seq int64 }

type dupWarning struct {
	stage, a, b int64
	text        string
}

type openBind struct {
	key      bindKey
	group    bool // a segment was offered: the Log path's group exists
	ts       int64
	order    bindOrder
	segs     []streamSeg
	lines    []BindLine
	scope    bool
	sts, end int64
	thread   uint64
	gone     bool
}

type streamSeg struct {
	src  SegmentSource
	view segView // its name an id of the binds' segment names
}

// NewBinds returns an empty [Binds] for the log named name.
func NewBinds(name string, opts ...BindOption) *Binds {
	b := &Binds{name: name, about: logAbout{autoSeen: make(map[string]bool)},
		window: bindWindow{open: make(map[bindKey]*openBind), closed: make(map[bindKey]struct{})}}
	for _, o := range opts {
		o(&b.cfg)
	}
	b.recs = newPassWindow(&b.cfg, &b.set.names)
	return b
}

// Late returns how many segments arrived after their bind was closed;
// they are in no statistic.
func (b *Binds) Late() int64 { return b.leftOut.late }

// Skip shifts the byte offsets of the records added next by n: they come
// from a log read after n bytes of others, as [Concat] counts them.
func (b *Binds) Skip(n int64) { b.base += n }

// ReadFrom adds every record of rd until io.EOF and returns the reader's
// error otherwise. A log read after it continues its offsets ([Binds.Skip]).
func (b *Binds) ReadFrom(rd *strace.Reader) error {
	if err := eachRecord(rd, b.Add); err != nil {
		return err
	}
	b.Skip(rd.Stats().Bytes)
	return nil
}

// eachRecord hands every record of rd to add until io.EOF, and returns the
// reader's error otherwise. The records are read into one variable: add
// gets its address, so it lives on the heap, once.
func eachRecord(rd *strace.Reader, add func(*strace.Record)) error {
	var rec strace.Record
	for {
		var err error
		rec, err = rd.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		add(&rec)
	}
}

// Add adds a record, in input order: spans, legacy bind lines, stamps and
// autoload records; others are left out. rec is not kept.
func (b *Binds) Add(rec *strace.Record) {
	if b.done {
		panic("analysis: Binds.Add after the statistics were taken")
	}
	b.seq++
	switch rec.Kind {
	case strace.KindSpan:
		b.span(rec)
	case strace.KindBindPhase:
		var thread uint64
		if rec.Prefix.Present {
			thread = rec.Prefix.Thread
		}
		b.line(BindLine{BindPhase: strace.BindPhase{Phase: strings.Clone(rec.BindPhase.Phase), StartNS: rec.BindPhase.StartNS,
			DurNS: rec.BindPhase.DurNS, Attrs: rec.BindPhase.Attrs}, Thread: thread, Offset: b.base + rec.Pos.Offset})
	case strace.KindStamp:
		b.about.stamps = append(b.about.stamps, strings.Clone(rec.Stamp.Text))
	case strace.KindAutoload:
		if t := rec.Autoload.Text; !b.about.autoSeen[t] {
			t = strings.Clone(t)
			b.about.autoSeen[t] = true
			b.about.autoload = append(b.about.autoload, t)
		}
	}
}

// get returns the open bind k, opening it; nil when it was closed.
func (b *Binds) get(k bindKey) *openBind {
	if o := b.window.open[k]; o != nil {
		return o
	}
	if _, ok := b.window.closed[k]; ok {
		return nil
	}
	if len(b.window.open) >= MaxOpenBinds {
		b.closeOldest()
	}
	o := &openBind{key: k}
	b.window.open[k] = o
	b.window.queue.push(k)
	return o
}

func (b *Binds) span(rec *strace.Record) {
	s := &rec.Span
	prefix := strace.SpanBind + "."
	switch {
	case s.IsDevice():
	case s.Name == strace.SpanBind:
		o := b.get(bindKey{s.Pid, s.Inv})
		if o == nil || o.scope {
			return
		}
		o.scope, o.sts, o.end = true, s.TS, s.TS+s.Dur
		if rec.Prefix.Present {
			o.thread = rec.Prefix.Thread
		}
		b.window.scopes = append(b.window.scopes, o)
		// Lines waiting for a bind: this is the first one that holds them.
		kept := b.window.pending[:0]
		for _, l := range b.window.pending {
			if holds(o, &l) {
				o.lines = append(o.lines, l)
			} else {
				kept = append(kept, l)
			}
		}
		clear(b.window.pending[len(kept):])
		b.window.pending = kept
	case strings.HasPrefix(s.Name, prefix):
		seg := s.Name[len(prefix):]
		if seg == "" || strings.Contains(seg, ".") {
			return // an orchestrator operation inside a segment, not a segment
		}
		k := bindKey{s.Pid, s.Inv}
		o := b.get(k)
		if o == nil {
			b.leftOut.late++
			return
		}
		if !o.group {
			o.order = bindOrder{0, b.seq}
		}
		v := segView{dur: s.Dur}
		v.has, v.ctr = countersOf(s.Attrs)
		b.offer(o, s.TS, seg, FromSpan, v, 0, b.seq, 0)
	}
}

// lineSpan returns a line's interval, false when it cannot be one.
func lineSpan(l *BindLine) (start, end int64, ok bool) {
	if l.StartNS > math.MaxInt64 || l.DurNS > math.MaxInt64-l.StartNS {
		return 0, 0, false
	}
	return int64(l.StartNS), int64(l.StartNS + l.DurNS), true
}

func holds(o *openBind, l *BindLine) bool {
	start, end, ok := lineSpan(l)
	return ok && start >= o.sts && end <= o.end && (o.thread == 0 || l.Thread == 0 || o.thread == l.Thread)
}

func (b *Binds) line(l BindLine) {
	if _, _, ok := lineSpan(&l); !ok {
		b.unclaim(&l)
		return
	}
	for _, o := range b.window.scopes {
		if !o.gone && holds(o, &l) {
			l.Attrs = slices.Clone(l.Attrs)
			o.lines = append(o.lines, l)
			return
		}
	}
	if len(b.window.pending) == maxPendingLines {
		b.unclaim(&b.window.pending[0])
		b.window.pending = slices.Delete(b.window.pending, 0, 1)
	}
	l.Attrs = slices.Clone(l.Attrs)
	b.window.pending = append(b.window.pending, l)
}

func (b *Binds) unclaim(l *BindLine) {
	if b.leftOut.unclaimed == 0 || l.Offset < b.leftOut.firstOff {
		b.leftOut.firstOff, b.leftOut.firstLine = l.Offset, fmt.Sprintf("%s at byte %d", l.Phase, l.Offset)
	}
	b.leftOut.unclaimed++
}

// offer gives o the segment seg as binder.segment does; (stage, x, y)
// orders its duplicate warning as the Log path would.
func (b *Binds) offer(o *openBind, ts int64, seg string, src SegmentSource, v segView, stage, x, y int64) {
	if !o.group {
		o.group, o.ts = true, ts
	}
	o.ts = min(o.ts, ts)
	id := b.set.names.id(seg)
	v.name = id
	for j := range o.segs {
		old := &o.segs[j]
		if old.view.name != id {
			continue
		}
		switch {
		case src.rank() < old.src.rank():
			return
		case src == old.src:
			b.leftOut.dups = append(b.leftOut.dups, dupWarning{stage, x, y,
				fmt.Sprintf("pid %d inv %d logged %s more than once; the last one is kept", o.key.pid, o.key.inv, seg)})
		}
		*old = streamSeg{src: src, view: v}
		return
	}
	o.segs = append(o.segs, streamSeg{src: src, view: v})
}

func (b *Binds) closeOldest() {
	closeOldest(&b.window.queue, b.window.open, b.closeBind)
	if n := len(b.window.scopes); n > 2*MaxOpenBinds {
		b.window.scopes = slices.DeleteFunc(b.window.scopes, func(o *openBind) bool { return o.gone })
	}
}

// closeBind adds the bind's lines and passes, as the Log path does after
// every span, and packs it.
func (b *Binds) closeBind(o *openBind) {
	delete(b.window.open, o.key)
	b.window.closed[o.key] = struct{}{}
	o.gone = true
	slices.SortFunc(o.lines, func(x, y BindLine) int { return cmp.Compare(x.Offset, y.Offset) })
	for _, l := range o.lines {
		if !o.group {
			o.order = bindOrder{1, l.Offset}
		}
		v := segView{dur: int64(l.DurNS)}
		v.has, v.ctr = countersOf(l.Attrs)
		b.offer(o, int64(l.StartNS), l.Phase, FromBindLine, v, 1, l.Offset, 0)
	}
	if o.scope || o.group {
		start := o.ts
		if o.scope {
			start = o.sts
		}
		if b.recs.stream {
			b.recs.fill(start+PassHorizon, &b.set.names)
		}
		for _, h := range b.recs.take(o.key) {
			for i, r := range h.segs {
				if r.end < r.start || r.end > math.MaxInt64 {
					b.leftOut.impossible++
					continue
				}
				if !o.group {
					o.order = bindOrder{2, h.seq}
				}
				b.offer(o, int64(r.start), b.set.names.names[r.phase], FromRecords, segView{dur: int64(r.end - r.start)}, 2, h.seq, int64(i))
			}
		}
		if b.recs.stream {
			b.recs.expire(start - PassHorizon)
		}
	}
	if !o.group {
		return
	}
	names := b.set.names.names
	if !slices.ContainsFunc(o.segs, func(s streamSeg) bool { return names[s.view.name] == "host_orch" }) {
		b.leftOut.notBinds++
		return
	}
	slices.SortStableFunc(o.segs, func(x, y streamSeg) int {
		switch {
		case segmentLess(names[x.view.name], names[y.view.name]):
			return -1
		case segmentLess(names[y.view.name], names[x.view.name]):
			return 1
		}
		return 0
	})
	p := packedBind{pid: o.key.pid, inv: o.key.inv, ts: o.ts}
	for i := range o.segs {
		p.data = appendSeg(p.data, &o.segs[i].view)
	}
	p.data = bytes.Clone(p.data)
	p.order = o.order
	b.set.binds = append(b.set.binds, p)
}

// Stats closes every open bind and returns the statistics of the records
// added (see [AnalyzeBinds]). No record can be added after it.
func (b *Binds) Stats() (*BindStats, error) {
	b.finish()
	return b.stats()
}

// finish closes every open bind and drops what only reading needs.
func (b *Binds) finish() {
	if !b.done {
		b.done = true
		closeAll(&b.window.queue, b.window.open, b.closeBind)
		b.recs.drain()
		for i := range b.window.pending {
			b.unclaim(&b.window.pending[i])
		}
		b.window.open, b.window.scopes, b.window.pending = nil, nil, nil
		b.window.closed = nil
		b.set.binds = slices.Clip(b.set.binds)
		slices.SortFunc(b.set.binds, func(x, y packedBind) int {
			return cmp.Or(cmp.Compare(x.pid, y.pid), cmp.Compare(x.ts, y.ts),
				cmp.Compare(x.order.stage, y.order.stage), cmp.Compare(x.order.seq, y.order.seq))
		})
	}
}

func (b *Binds) stats() (*BindStats, error) {
	cfg := b.cfg
	st := &BindStats{Name: b.name, KeepFirst: cfg.keepFirst, Autoload: b.about.autoload}
	if len(b.about.stamps) > 0 {
		st.Stamp, st.HasStamp = b.about.stamps[0], true
	} else {
		st.warn(WarnNoStamp, "no `[stamp]` line: the command and commit behind these numbers have to be established by hand before comparing them to anything")
	}
	if len(st.Autoload) == 0 {
		st.warn(WarnNoAutoload, "no `torch_backend_autoload` record: backend-autoload state must be established before comparing this log")
	}
	slices.SortStableFunc(b.leftOut.dups, func(x, y dupWarning) int {
		return cmp.Or(cmp.Compare(x.stage, y.stage), cmp.Compare(x.a, y.a), cmp.Compare(x.b, y.b))
	})
	dups := b.leftOut.dups
	flush := func(stage int64) {
		for len(dups) > 0 && dups[0].stage == stage {
			st.Warnings = append(st.Warnings, BindWarning{Kind: WarnDuplicateSegment, Text: dups[0].text})
			dups = dups[1:]
		}
	}
	flush(0)
	flush(1)
	if b.leftOut.unclaimed > 0 {
		st.warn(WarnUnclaimed, "%d bind phase line(s) lie inside no chip.run.bind of their log thread and were left out (first: %s)", b.leftOut.unclaimed, b.leftOut.firstLine)
	}
	flush(2)
	if n := b.recs.unmatched; n > 0 {
		st.warn(WarnUnclaimed, "%d host_phase_records pass(es) match no bind in the log and were left out (first: %s)", n, b.recs.first)
	}
	if b.leftOut.impossible > 0 {
		st.warn(WarnUnclaimed, "%d host_phase_records segment(s) end before they start and were left out", b.leftOut.impossible)
	}
	if b.leftOut.notBinds > 0 {
		st.warn(WarnNotABind, "%d segment group(s) without host_orch are not binds and were left out", b.leftOut.notBinds)
	}
	if b.recs.err != nil {
		return st, fmt.Errorf("%s: host_phase_records: %w", b.name, b.recs.err)
	}
	if len(b.set.binds) == 0 {
		return st, fmt.Errorf("%s: %w", b.name, ErrNoBinds)
	}
	for i := range b.set.binds {
		b.set.binds[i].cold = false
	}
	err := b.set.stats(st, cfg, b.name)
	st.Binds = make([]Bind, len(b.set.binds))
	for i, p := range b.set.binds {
		st.Binds[i] = Bind{Pid: p.pid, Inv: p.inv, TS: p.ts, Cold: p.cold}
	}
	return st, err
}

// BindRepetitions computes the bind statistics of each repetition of a
// stream of records, split at its "[stamp]" lines as [Log.Repetitions]
// splits a log, with a [Binds] per repetition: what it keeps is what
// those keep once closed, and one repetition's open binds.
type BindRepetitions struct {
	name   string
	opts   []BindOption
	cur    *Binds
	reps   []*Binds
	before bool // the first repetition is the part before the first stamp
	stamps int
	spans  bool // a span came before the first stamp
	done   bool
}

// NewBindRepetitions returns an empty [BindRepetitions] for the log named
// name; the options apply to every repetition.
func NewBindRepetitions(name string, opts ...BindOption) *BindRepetitions {
	return &BindRepetitions{name: name, opts: opts, cur: NewBinds(name, opts...)}
}

// Add adds a record, in input order; a "[stamp]" line begins a repetition.
func (r *BindRepetitions) Add(rec *strace.Record) {
	if r.done {
		panic("analysis: BindRepetitions.Add after the statistics were taken")
	}
	switch rec.Kind {
	case strace.KindStamp:
		switch {
		case r.stamps > 0:
			r.cur.finish()
			r.reps = append(r.reps, r.cur)
		case r.spans:
			r.cur.finish()
			r.reps = append(r.reps, r.cur)
			r.before = true
		}
		r.stamps++
		r.cur = NewBinds(r.name, r.opts...)
	case strace.KindSpan:
		r.spans = r.spans || r.stamps == 0
	}
	r.cur.Add(rec)
}

// ReadFrom adds every record of rd until io.EOF and returns the reader's
// error otherwise.
func (r *BindRepetitions) ReadFrom(rd *strace.Reader) error { return eachRecord(rd, r.Add) }

// Late returns how many segments arrived after their bind was closed.
func (r *BindRepetitions) Late() int64 {
	var n int64
	if r.cur != nil {
		n = r.cur.Late()
	}
	for _, b := range r.reps {
		n += b.Late()
	}
	return n
}

// Stats returns the statistics of every repetition in order, named as
// [Log.Repetitions] names them. No record can be added after it.
func (r *BindRepetitions) Stats() []RepStats {
	if !r.done {
		r.done = true
		r.cur.finish()
		r.reps = append(r.reps, r.cur)
		r.cur = nil
	}
	out := make([]RepStats, len(r.reps))
	for i, b := range r.reps {
		switch k := i; {
		case r.before && i == 0:
			b.name = fmt.Sprintf("%s (before its first stamp)", r.name)
		case r.stamps > 1:
			if r.before {
				k--
			}
			b.name = fmt.Sprintf("%s (repetition %d)", r.name, k+1)
		}
		out[i].Stats, out[i].Err = b.stats()
	}
	return out
}
