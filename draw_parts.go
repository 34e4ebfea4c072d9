package phasetrace

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/phasetrace/phasetrace/internal/firstpass"
	"github.com/phasetrace/phasetrace/internal/handoffs"
	"github.com/phasetrace/phasetrace/internal/held"
	"github.com/phasetrace/phasetrace/internal/tracks"
	"github.com/phasetrace/phasetrace/perfetto"
)

// noKey is the start of a batch that has none to go by (a run of device
// spans only): it goes to the head part.
const noKey = math.MinInt64

// partSet writes a split trace's parts (WithSplit). The slice drawer hands it
// batches — a whole run, or one slice — each with the start it goes by (its
// key: a run's root's start) and the most slices it can draw (its bound),
// and draws the batch in the part route returns.
//
// The parts follow one another in trace time: each takes the batches whose
// key is in its stretch [lo, hi), the last one's (the head's) open above.
// Batches come in the order the log ends them, not the order they start, so a
// part keeps taking batches after its stretch is closed: a run ends after it
// starts, a node span is drawn a flow horizon after it ends. The head's
// stretch is therefore closed before it is full, leaving room (reserve) for
// what comes late, twice the most any part has taken late so far (an eighth
// of a part at first, between a sixteenth and a half); and a part is
// written out once the log's time is lag (twice the flow horizon) past its
// stretch, or when maxOpenParts older parts are open. A batch whose part is
// full or written out goes to the head, outside its stretch; so may a span
// drawn in the part where its arrow was begun or that holds room for it
// (promise). A part never holds more than max slices:
// a batch goes to a part only when its bound fits, and one whose bound is
// over max is a part of its own (solo).
type partSet struct {
	split
	writers partWriters // opens a part's writer
	ov      *overview
	sum     *SplitSummary
	lag     int64
	now     *int64  // the log's time (converter.now)
	live    []*part // parts not yet written out, by stretch; the last is the head
	solo    []*part // parts of one invocation, written out before the next batch
	cur     *part   // the part of the batch being drawn
	reserve int
	maxLate int // the most slices a part took after its stretch was closed
	begun   int
	err     error  // the first error opening or closing a part
	dropped int64  // events the parts' writers dropped
	about   *about // what each part says of itself as it is written out
}

// part is one part of a split trace.
type part struct {
	n      int
	name   string
	out    io.WriteCloser // nil when open failed (its writer then fails every write)
	sink                  // its writer and tracks
	lo, hi int64          // the keys it takes, [lo, hi); hi is math.MaxInt64 for the head
	maxKey int64          // the greatest key it took in its stretch (lo−1, saturating, before any)
	handed int            // slices handed to w
	// afterCut counts the slices handed after its stretch was closed.
	afterCut    int
	invocations int64
	first, last int64 // the extent of its slices (handed > 0)
	solo        bool
	// promised counts the slices it holds room for (promise); done says
	// it is written out.
	promised int
	done     bool
}

// promise holds room in the current part for node span n, which will be
// drawn there (route) if the part is still open then: the dispatch that
// launched a run drawn in it, or that dispatch's submit, so that their
// arrows are drawn in one part. The batch that promises counts the room in
// its bound.
func (ps *partSet) promise(n *handoffs.NodeSpan) {
	if p := ps.cur; n != nil && n.Part == 0 && !p.solo {
		n.Part = p.n
		p.promised++
	}
}

// promisedTo returns the part that holds room for node span n while it is
// open (promise), or nil.
func (ps *partSet) promisedTo(n *handoffs.NodeSpan) *part {
	if n.Part == 0 {
		return nil
	}
	if p := ps.liveAt(n.Part); p != nil && p.promised > 0 && !p.done {
		return p
	}
	return nil
}

// partWriters opens the writers of a trace's parts (or of the whole trace,
// when it is not split): each with the writer's options, its wall clocks
// written, its own tracks declared and a track set of its own.
type partWriters struct {
	opts []perfetto.Option
	cv   *sliceDrawer // writes the wall clocks
	scan *firstpass.ScanResult
}

// open begins a writer on out.
func (pw partWriters) open(out io.Writer) sink {
	w := perfetto.NewWriter(out, pw.opts...)
	pw.cv.writeWalls(w)
	ownTracks(w)
	return sink{w, tracks.NewTrackSet(w, pw.scan)}
}

func newPartSet(s split, lag int64, now *int64, writers partWriters, ov *overview) *partSet {
	ps := &partSet{split: s, lag: lag, now: now, writers: writers, ov: ov, sum: &SplitSummary{MaxSlices: s.max}}
	ps.reserve = s.max / 8
	return ps
}

// begin opens the next part, taking keys from lo on.
func (ps *partSet) begin(lo int64, solo bool) *part {
	ps.begun++
	p := &part{n: ps.begun, lo: lo, hi: math.MaxInt64, maxKey: lo, solo: solo}
	if lo > math.MinInt64 {
		p.maxKey = lo - 1
	}
	var out io.Writer
	w, name, err := ps.open(p.n)
	switch {
	case err != nil:
		ps.fail(fmt.Errorf("phasetrace: opening part %d: %w", p.n, err))
		out = failedPart{err}
		if w != nil {
			w.Close()
		}
	case w == nil:
		ps.fail(fmt.Errorf("phasetrace: opening part %d: no writer", p.n))
		out = failedPart{errors.New("no writer")}
	default:
		p.out, out = w, w
	}
	if name == "" {
		name = "part " + itoa(int64(p.n))
	}
	p.name = name
	p.sink = ps.writers.open(out)
	if solo {
		ps.solo = append(ps.solo, p)
	} else {
		ps.live = append(ps.live, p)
	}
	return p
}

// failedPart is the output of a part that could not be opened.
type failedPart struct{ err error }

func (f failedPart) Write([]byte) (int, error) { return 0, f.err }

func (ps *partSet) fail(err error) {
	if ps.err == nil {
		ps.err = err
	}
}

// head is the newest part, whose stretch is open above; the first is
// begun on the first batch.
func (ps *partSet) head() *part {
	if len(ps.live) == 0 {
		return ps.begin(math.MinInt64, false)
	}
	return ps.live[len(ps.live)-1]
}

// route picks the part a batch is drawn in: key is the start it goes by
// (noKey: none), bound the most slices it can draw. to (nil: none) is the
// part it should go to, while that part is open and has room: the part
// that holds room for it (promised: promise), or the part an arrow it ends
// or continues was begun in.
func (ps *partSet) route(key int64, bound int, to *part, promised bool) *part {
	if to != nil && !to.done && !to.solo && (promised && to.promised > 0 || to.handed+to.promised+bound <= ps.max) {
		if promised && to.promised > 0 {
			to.promised--
		}
		ps.cur = to
		return to
	}
	if bound > ps.max {
		ps.cur = ps.begin(key, true)
		return ps.cur
	}
	head := ps.head()
	p := head
	late := false // key outside the stretch of the part it goes to
	if key != noKey {
		for _, q := range ps.live[:len(ps.live)-1] {
			if key >= q.lo && key < q.hi {
				p = q
				break
			}
		}
		if p != head && p.handed+p.promised+bound > ps.max {
			p = head // its part is full
		}
		late = key < p.lo || key >= p.hi
	}
	if p == head && head.handed+head.promised > 0 && head.handed+head.promised+bound > ps.max-ps.reserve {
		// Close the head's stretch after the greatest key it took (or at
		// this batch's, when greater), and begin the next part there.
		cut := head.maxKey
		if cut < math.MaxInt64 {
			cut++
		}
		if key != noKey && key > cut {
			cut = key
		}
		head.hi = max(cut, head.lo)
		next := ps.begin(head.hi, false)
		p = next
		if key != noKey && key < head.hi && !late && head.handed+head.promised+bound <= ps.max {
			p = head // a late batch of the head's stretch, with room for it
		}
		late = key != noKey && (key < p.lo || key >= p.hi)
	}
	if key != noKey && !late && key > p.maxKey {
		p.maxKey = key
	}
	ps.cur = p
	return p
}

// liveAt returns part n while it is open and takes batches (nil: it is
// written out, or a part of one invocation).
func (ps *partSet) liveAt(n int) *part {
	for _, p := range ps.live {
		if p.n == n {
			return p
		}
	}
	return nil
}

// took counts a slice handed to the current part's writer.
func (ps *partSet) took(ts, dur int64) {
	p := ps.cur
	p.handed++
	if p.hi != math.MaxInt64 {
		p.afterCut++
	}
	end := ts + dur
	if p.handed == 1 {
		p.first, p.last = ts, end
		return
	}
	p.first, p.last = min(p.first, ts), max(p.last, end)
}

// flush flushes every part still open, and the overview.
func (ps *partSet) flush() {
	for _, p := range ps.solo {
		p.w.Flush()
	}
	for _, p := range ps.live {
		p.w.Flush()
	}
	ps.ov.out.w.Flush()
}

// maxOpenParts bounds the parts open at once besides the head: past it
// the oldest is written out early (its late slices go to the head), so
// that the open files and the writers' memory (some 0.6 MB a part) do not
// grow with the parts a flow horizon of log time holds.
const maxOpenParts = 64

// writeOut writes out, between two batches, the parts of one invocation and
// the oldest parts past maxOpenParts. A part written out between flushes
// is whole: an arrow it begins has its other end in it, or is across
// parts (arrowAccount.live), so no later refusal in another part concerns
// its arrows.
func (ps *partSet) writeOut() {
	ps.finishWhile(func(_ *part, open int) bool { return open > maxOpenParts })
}

// expire writes out, right after a flush, the parts of one invocation and
// the parts whose stretch the log's time has left lag behind.
func (ps *partSet) expire() {
	now := *ps.now
	limit := now - ps.lag
	if limit > now { // wrapped
		limit = math.MinInt64
	}
	ps.finishWhile(func(oldest *part, _ int) bool { return oldest.hi <= limit })
}

// finishWhile writes out the parts of one invocation, then the oldest
// open parts but the head while gone says so of the oldest, given how
// many are open besides the head.
func (ps *partSet) finishWhile(gone func(oldest *part, open int) bool) {
	for _, p := range ps.solo {
		ps.finish(p)
	}
	clear(ps.solo)
	ps.solo = ps.solo[:0]
	k := 0
	for k < len(ps.live)-1 && gone(ps.live[k], len(ps.live)-1-k) {
		ps.finish(ps.live[k])
		k++
	}
	if k > 0 {
		ps.live = slices.Delete(ps.live, 0, k)
	}
}

// finish writes out part p: its writer closed, its output closed, its
// summary kept and its slice drawn on the overview's parts track.
func (ps *partSet) finish(p *part) {
	p.done = true
	if p.out != nil {
		defer func() { // also when the writer's output panics
			if err := p.out.Close(); err != nil {
				ps.fail(fmt.Errorf("phasetrace: closing part %d (%s): %w", p.n, p.name, err))
			}
		}()
	}
	if p.handed > 0 && ps.about != nil {
		ps.about.write(p.w, p.first, nil)
	}
	err := p.w.Close()
	if errors.Is(err, perfetto.ErrWrite) {
		ps.fail(fmt.Errorf("phasetrace: writing part %d (%s): %w", p.n, p.name, err))
	}
	if !p.solo {
		ps.maxLate = max(ps.maxLate, p.afterCut)
		ps.reserve = min(max(2*ps.maxLate, ps.max/16), ps.max/2)
	}
	st := p.w.Stats()
	ps.dropped += st.Dropped
	s := PartSummary{Part: p.n, Name: p.name, Slices: st.Slices, Invocations: p.invocations, Output: outputOf(st)}
	if p.handed > 0 {
		// The part covers its stretch of time, as far as its slices reach:
		// the parts' stretches do not overlap. A part of late slices only
		// covers them.
		s.Start, s.End = max(p.first, p.lo), min(p.last, p.hi)
		if s.End < s.Start {
			s.Start, s.End = p.first, p.last
		}
	}
	ps.sum.Parts = append(ps.sum.Parts, s)
	ps.ov.part(s)
}

// close writes out every part, and returns the first error of opening,
// writing or closing one.
func (ps *partSet) close() error {
	for _, p := range ps.solo {
		ps.finish(p)
	}
	for _, p := range ps.live {
		ps.finish(p)
	}
	ps.solo, ps.live = nil, nil
	slices.SortFunc(ps.sum.Parts, func(a, b PartSummary) int { return a.Part - b.Part })
	return ps.err
}

// abandon closes every writer and part after a panic, so that no writer's
// goroutine outlives the conversion: each is closed even if closing
// another panics again (the first panic goes on).
func (ps *partSet) abandon() {
	defer ps.ov.out.w.Close()
	for _, p := range append(ps.solo, ps.live...) {
		if p.out != nil {
			defer p.out.Close()
		}
		defer p.w.Close()
	}
}

// output is the parts together, as Summary.Output counts them.
func (ps *partSet) output() OutputSummary {
	var o OutputSummary
	for _, p := range ps.sum.Parts {
		q := p.Output
		o.Bytes += q.Bytes
		o.Packets += q.Packets
		o.Tracks += q.Tracks
		o.Slices += q.Slices
		o.Instants += q.Instants
		o.Flows += q.Flows
		o.Counters += q.Counters
	}
	return o
}

// outputOf is a writer's statistics as the summary says them.
func outputOf(ws perfetto.Stats) OutputSummary {
	return OutputSummary{Bytes: ws.Bytes, Packets: ws.Packets, Tracks: ws.Tracks, Slices: ws.Slices, Instants: ws.Instants, Flows: ws.Flows, Counters: ws.Counters}
}

// overview is a split trace's overview: a slice drawer of its own (the counters
// draw on it) where every invocation's root is drawn once more, naming
// its part, and every part once, on the parts track.
type overview struct {
	*sliceDrawer
	parts perfetto.Track
}

// root draws a run's root, drawn in part p, on its lane, with the run's
// key.
func (ov *overview) root(root *held.Span, slot int64, hasSlot bool, p *part, key perfetto.Arg) {
	lane, _ := ov.out.tracks.Lane(root.Pid, root.Tid, slot, hasSlot)
	if lane.IsZero() {
		return
	}
	ov.args = append(ov.args[:0], perfetto.String("part", p.name), perfetto.Int("part_number", int64(p.n)),
		perfetto.Uint("inv", root.Inv), perfetto.String("hid", ov.hidString(root.Hid)), key)
	s := perfetto.Slice{Name: root.Name, Category: categoryOverview, TS: root.TS, Dur: root.Dur, Args: ov.args}
	writeLabelled(ov.out.w, lane, &s)
	ov.args = s.Args[:0] // grown to hold full_name
}

// part draws a part written out on the parts track, over [s.Start,
// s.End].
func (ov *overview) part(s PartSummary) {
	if s.Slices == 0 {
		return
	}
	if ov.parts.IsZero() {
		ov.parts = ov.out.w.Track(perfetto.Track{}, perfetto.TrackSpec{Name: PartsTrack, Rank: -1,
			Description: "the parts of this split trace: each slice is a part, over the time its slices cover, named as its file"})
	}
	ov.out.w.Slice(ov.parts, perfetto.Slice{Name: s.Name, Category: categoryOverview, TS: s.Start, Dur: s.End - s.Start, Args: []perfetto.Arg{
		perfetto.Int("part", int64(s.Part)), perfetto.Int("slices", s.Slices), perfetto.Int("invocations", s.Invocations)}})
}
