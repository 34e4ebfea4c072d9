package phasetrace

import (
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"math"

	"github.com/phasetrace/phasetrace/internal/compareplan"
	"github.com/phasetrace/phasetrace/internal/counters"
	"github.com/phasetrace/phasetrace/internal/firstpass"
	"github.com/phasetrace/phasetrace/internal/handoffs"
	"github.com/phasetrace/phasetrace/internal/held"
	"github.com/phasetrace/phasetrace/internal/passes"
	"github.com/phasetrace/phasetrace/internal/remoteplan"
	"github.com/phasetrace/phasetrace/internal/repeats"
	"github.com/phasetrace/phasetrace/internal/tracks"
	"github.com/phasetrace/phasetrace/perfetto"
	"github.com/phasetrace/phasetrace/strace"
)

// converter runs one conversion. It orders the passes and owns the stages
// (DESIGN.md): prepare runs the survey over every log (firstPass, compareCaptures), the remote plan and the
// artifacts; start opens the writer; secondPass gives every record, in
// the order the logs were written, to takeRecord, which leaves out repeats
// and hands each span to the stage that draws it — a run's spans to the run
// collector and, once the run is whole, to the run drawer (and through it
// the device drawer); node spans to the hand-offs; the rest to the
// slice drawer; close finishes the account.
type converter struct {
	cfg      config
	survey   *Survey // what the first pass learned (its scanResult)
	sum      *Summary
	acct     *account
	progress *progressCounter
	names    []string // the logs' names

	// The stages that draw, through the slice drawer.
	sliceDrawer  *sliceDrawer
	deviceDrawer *deviceDrawer
	runDrawer    *runDrawer
	runs         runCollector
	flows        handoffs.Queue
	arrows       arrowAccount
	now          int64 // the latest end of a host span so far

	// counters draws the counter tracks (internal/counters).
	counters    *counters.Set
	counterSite *counterAccount // what the counters count in

	// Repeated records: the captures that repeat earlier ones, and the
	// recent spans.
	repeated repeats.RepeatedCaptures
	recent   *repeats.RecentSpans

	// Remote machines: how their logs are drawn, and the trace pids given
	// to pids that repeat across machines, per log; shift is added to each
	// log's host timestamps (another host's clock).
	remote       *remoteplan.Plan
	remoteArrows remoteArrows // the arrows it plans, by the spans they start and end at
	pidMaps      []map[int32]int32
	shift        []int64

	// cmp is a comparison's plan (Compare; engine_compare.go), nil
	// otherwise.
	cmp *compareplan.Plan

	// passIndexes are where the passes of each host_phase_records
	// artifact are, learned by the survey for the second pass.
	passIndexes []*passes.Index

	// about is what the trace says of itself (draw_about.go).
	about about
}

// newConverter is the state of one conversion with its options applied.
func newConverter(opts []Option) *converter {
	cfg := config{flowHorizon: DefaultFlowHorizon, flushSlices: defaultFlushSlices, maxPending: defaultMaxPending, maxLine: strace.DefaultMaxLine,
		maxTracks: perfetto.DefaultMaxTracks}
	for _, o := range opts {
		o(&cfg)
	}
	sum := &Summary{}
	c := &converter{cfg: cfg, sum: sum, acct: newAccount(sum), repeated: repeats.RepeatedCaptures{Seed: maphash.MakeSeed()}}
	c.progress = &progressCounter{fn: cfg.progress}
	cv := &sliceDrawer{acct: c.acct, arrows: &c.arrows, flushSlices: cfg.flushSlices, pendingDevice: &pendingDevice{acct: c.acct}}
	c.sliceDrawer = cv
	c.counterSite = &counterAccount{cv: cv}
	c.counters = counters.New(c.counterSite, cfg.flowHorizon, 2*defaultMaxPending)
	links := &runLinks{}
	c.deviceDrawer = &deviceDrawer{sliceDrawer: cv, placement: cfg.placement, counters: c.counters, links: links}
	c.runDrawer = &runDrawer{sliceDrawer: cv, device: c.deviceDrawer, flows: &c.flows, counters: c.counters, links: links}
	if cfg.steps != nil {
		c.runDrawer.steps = newStepObserver(cfg.steps)
	}
	c.runs = runCollector{maxPending: cfg.maxPending, drawer: c.runDrawer}
	c.recent = repeats.NewRecentSpans(&c.runs)
	c.arrows = arrowAccount{acct: c.acct, site: cv}
	c.flows = handoffs.Queue{Horizon: cfg.flowHorizon, Site: c}
	return c
}

// prepare learns what the second pass needs from logs: the first pass,
// again without the records of the captures that repeat earlier ones (byte
// for byte, or in part) if there are any, the remote machines' placement
// and the artifacts.
func (c *converter) prepare(logs []Input) error {
	for _, in := range logs {
		c.names = append(c.names, in.Name)
	}
	if err := c.firstPass(logs, nil); err != nil {
		return err
	}
	if err := c.compareCaptures(logs); err != nil {
		return err
	}
	if c.repeated.Whole != nil || c.repeated.Near != nil {
		if err := c.firstPass(logs, c.repeated.Whole); err != nil {
			return err
		}
	}
	c.repeated.Caps = nil
	if c.cfg.baseLogs > 0 {
		if err := c.planCompare(logs); err != nil {
			return err
		}
	} else if err := c.planRemote(logs); err != nil {
		return err
	}
	return c.loadArtifacts(false)
}

// start opens the trace: lanes decided, the placer built from the
// survey's anchors, the writer opened and the tracks declared. shift moves
// each log's anchors onto the first log's axis (the plan's reference).
func (c *converter) start(w io.Writer, shift bool) {
	c.survey.scan.Decide()
	switch {
	case shift && c.cmp != nil:
		c.shift = c.compareShifts()
	case shift:
		c.shift = c.remote.Shifts(c.survey.scan, len(c.names))
	}
	if c.cmp != nil {
		c.sum.Compare = compareSummary(c.cmp, c.names)
		c.counters.Cmp, c.counters.Deltas = c.cmp, make([]counters.DeltaTrack, len(c.cmp.Pairs))
		c.counterSite.cmp = c.sum.Compare
	}
	c.runDrawer.records = c.survey.records
	c.deviceDrawer.buildPlacer(c.survey.scan, c.survey.cal)
	cv := c.sliceDrawer
	cv.remote, cv.hosts = c.remote, hostSummaries(c.remote, c.names, c.cfg.transport)
	scan := c.survey.scan
	cv.scan = scan
	if w := c.cfg.window; w != nil {
		cv.window = timeWindow{on: true, noStart: w.NoStart, noEnd: w.NoEnd}
		first := c.firstSlice()
		cv.window.start, cv.window.end = w.resolve(first)
		c.sum.Window = &WindowSummary{Start: cv.window.start, End: cv.window.end, FirstSlice: first}
	}
	c.remoteArrows = attachArrows(c.remote, &c.flows, &c.arrows)
	c.about = about{version: libraryVersion(), names: c.names, stamps: scan.Stamps, cmp: c.cmp, compare: c.sum.Compare}
	cv.about = &c.about
	cv.wallClocks((&tracks.TrackSet{Scan: scan}).Declare())
	// The trace's own track (about) and its anomalies track are besides
	// the tracks WithMaxTracks allows the logs.
	maxTracks := c.cfg.maxTracks
	if maxTracks < math.MaxInt-2 {
		maxTracks += 2
	}
	wopts := append([]perfetto.Option{perfetto.WithMaxTracks(maxTracks), perfetto.WithOverflowFunc(cv.overflowed), perfetto.WithRefusalFunc(cv.refused)}, c.cfg.writer...)
	pw := partWriters{opts: wopts, cv: cv, scan: scan}
	if c.cfg.split == nil {
		cv.out = pw.open(w)
		c.counters.W, c.counters.Tracks = cv.out.w, cv.out.tracks
		return
	}
	// A split trace: w is the overview's, where the counters are drawn;
	// the parts are begun as the batches come.
	ow := perfetto.NewWriter(w, append([]perfetto.Option{perfetto.WithMaxTracks(maxTracks)}, c.cfg.writer...)...)
	cv.writeWalls(ow)
	ownTracks(ow)
	ov := &overview{sliceDrawer: &sliceDrawer{out: sink{ow, tracks.NewTrackSet(ow, scan)}, scan: scan, acct: c.acct, window: cv.window}}
	c.counterSite.cv = ov.sliceDrawer
	c.counters.W, c.counters.Tracks = ov.out.w, ov.out.tracks
	cv.parts = newPartSet(*c.cfg.split, 2*c.cfg.flowHorizon, &c.now, pw, ov)
	cv.parts.about = &c.about
	cv.batchIn(noKey, 0, nil, false)
	c.sum.Split = cv.parts.sum
}

// firstSlice is where a window's bounds after the first slice count from:
// the earliest start of a host span the first pass read, of the logs on
// the trace's own axis (moved onto it as their spans are: shift), not a
// remote machine's; 0 when there is none.
func (c *converter) firstSlice() int64 {
	first, found := int64(0), false
	for i, ts := range c.survey.scan.FirstTS {
		if c.remote.Input(i) != nil {
			continue
		}
		if i < len(c.shift) {
			ts += c.shift[i]
		}
		if !found || ts < first {
			first, found = ts, true
		}
	}
	return first
}

// secondPass draws. Several logs are read together, record by record in the
// order they were written (by their log prefixes' monotonic time), so that
// logs of different processes merge on one axis as if they were one log,
// and hand-offs across them connect. It returns the readers' statistics of
// the logs it read, and the readers of the logs (nil for one not opened),
// which say whether a log was cut, also when it fails. The
// host_phase_records artifacts the survey indexed are read again as the
// runs are drawn, each opened when a run first needs a pass of it; an error
// reading one ends the pass with it.
func (c *converter) secondPass(logs []Input) (stats []strace.Stats, cuts []*CutReader, err error) {
	defer c.closeRecords(&err)
	c.runDrawer.artifacts = append(c.runDrawer.artifacts, c.passIndexes...)
	srcs := c.openSources(logs)
	defer func() {
		stats, cuts = srcs.close(&err), srcs.rcs
	}()
	if srcs.openErr != nil {
		return nil, nil, srcs.openErr
	}
	for {
		cur, err := srcs.next()
		if err != nil {
			return nil, nil, err
		}
		if cur == nil {
			break
		}
		c.takeRecord(cur)
		if err := c.runDrawer.recordsErr; err != nil {
			return nil, nil, err
		}
	}
	c.drain()
	return nil, nil, c.runDrawer.recordsErr
}

// closeRecords closes the artifacts the second pass opened; an error
// closing one is *err when there was none.
func (c *converter) closeRecords(err *error) {
	for _, x := range c.runDrawer.artifacts {
		if cerr := x.Close(); *err == nil && cerr != nil {
			*err = fmt.Errorf("phasetrace: %s: %w", x.Name(), cerr)
		}
	}
}

// drain draws what still waits once every value has come.
func (c *converter) drain() {
	c.flows.Drain(c.now, true)
	c.runs.flush()
	c.runDrawer.drain()
	c.counters.Drain()
}

// DrawNode draws a node span the hand-offs let go of, with its flows
// and those the remote plan gives it (handoffs.Site).
func (c *converter) DrawNode(n *handoffs.NodeSpan) {
	cv := c.sliceDrawer
	sp := &n.Span
	flows, endFlows := c.remoteArrows.flows(&sp.Span, n.Flows, n.EndFlows)
	out := cv.out
	if cv.parts != nil {
		out = c.nodeBatch(n, flows, endFlows)
	}
	cv.drawSpanWithFlows(out, cv.threadFor(out, sp), sp, nil, false, flows, endFlows)
}

// The conversion is the hand-offs' site: where its spans are drawn is
// the slice drawer's to say; their arrows are the arrow account's, and
// what they cannot link is counted in the account.
func (c *converter) SameHost(a, b int32) bool           { return c.sliceDrawer.remote.SameHost(a, b) }
func (c *converter) Drawable(pid int32, tid int64) bool { return c.sliceDrawer.drawable(pid, tid) }
func (c *converter) Outside(ts, dur int64) bool         { return c.sliceDrawer.outside(ts, dur) }

// handoffFlows are the flow kinds of the hand-offs' arrows.
var handoffFlows = [...]FlowKind{handoffs.SubmitToDispatch: FlowSubmitToDispatch, handoffs.DispatchToRun: FlowDispatchToRun}

func (c *converter) Link(id perfetto.FlowID, kind handoffs.Kind) {
	c.arrows.add(id, handoffFlows[kind])
}

func (c *converter) Unlinked(kind handoffs.Kind, why handoffs.Why) {
	var reason Reason
	switch why {
	case handoffs.NoSubmit:
		reason = ReasonDispatchNoSubmit
	case handoffs.Unended:
		reason = handoffFlows[kind].unended()
	case handoffs.NoTrack:
		reason = ReasonLinkNoTrack
	case handoffs.AcrossParts:
		reason = ReasonArrowAcrossParts
	}
	c.acct.unlinked(reason)
}

// nodeBatch begins the batch of a node span of a split trace, drawn with
// flows and endFlows: in the part promised to it, or in the part where an
// arrow of it was begun, while that part is open and has room; else by its
// key, with room promised to the dispatches it was just linked to (their
// arrows in one part), or, when those do not fit in a part, with its
// arrows across parts.
func (c *converter) nodeBatch(n *handoffs.NodeSpan, flows, endFlows []perfetto.FlowID) sink {
	cv := c.sliceDrawer
	if p := cv.parts.promisedTo(n); p != nil {
		return cv.batchIn(n.PartKey(), 1, p, true)
	}
	waiting := 0
	for _, d := range c.flows.LinkedNow {
		if d.Part == 0 {
			waiting++
		}
	}
	var to *part
	if k := c.arrows.begunIn(flows, endFlows); k > 0 {
		to = cv.parts.liveAt(k)
	}
	out := cv.batchIn(n.PartKey(), 1+waiting, to, false)
	if cv.parts.cur.solo {
		c.arrows.across(n.Flows)
		return out
	}
	for _, d := range c.flows.LinkedNow {
		cv.parts.promise(d)
	}
	return out
}

// takeRecord takes the record the source holds: it is left out when it repeats
// an earlier one, else drawn (or held until its run is complete).
func (c *converter) takeRecord(s *source) {
	rec := s.rec
	at := held.PosAt(s.file, rec.Pos.Line)
	if c.repeated.Whole != nil {
		if r, ok := repeats.RepeatOf(c.repeated.Whole[s.index], &s.repeat, rec.Pos.Line); ok {
			detail := "lines " + itoa(r.First) + "–" + itoa(r.Last) + " repeat " + r.Of
			if rec.Kind == strace.KindSpan {
				c.acct.dropSpan(ReasonRepeatedCapture, at, detail, 1)
			} else {
				c.acct.notDrawn(ReasonRepeatedCapture, at, detail, 1)
			}
			return
		}
	}
	if c.repeated.Near != nil {
		if n := repeats.NearRepeatOf(c.repeated.Near[s.index], &s.near, rec.Pos.Line); n != nil {
			if of, ok := n.Repeated(s.key); ok {
				if rec.Kind == strace.KindSpan {
					c.acct.dropSpan(ReasonRepeatedSpan, at, rec.Span.Name+" (as in "+of+")", 1)
				} else {
					c.acct.notDrawn(ReasonRepeatedRecord, at, "phase="+rec.BindPhase.Phase+" (as in "+of+")", 1)
				}
				return
			}
		}
	}
	switch rec.Kind {
	case strace.KindSpan:
		c.takeSpan(rec, at)
	case strace.KindBindPhase:
		c.runDrawer.takeBindLine(rec, at)
	}
}

// spanFaultReasons says, for each way a span's interval is not one, why the
// span is not drawn.
var spanFaultReasons = [...]Reason{
	firstpass.SpanNegativeDuration: ReasonNegativeDuration,
	firstpass.SpanNegativeHostTS:   ReasonNegativeHostTS,
	firstpass.SpanTSDurOverflow:    ReasonTSDurOverflow,
}

// takeSpan takes one span: left out when it is not an interval or repeats
// a recent one, else given to its run, to the hand-offs or drawn.
func (c *converter) takeSpan(rec *strace.Record, at held.Pos) {
	sp := &rec.Span
	dev := sp.IsDevice()
	if fault, detail := firstpass.CheckSpan(sp, dev); fault != firstpass.SpanSound {
		c.acct.dropSpan(spanFaultReasons[fault], at, detail, 1)
		return
	}
	l, repeated := c.recent.Admit(sp)
	if repeated {
		c.acct.dropSpan(ReasonRepeatedSpan, at, sp.Name, 1)
		return
	}
	if end := sp.End(); !dev && end > c.now {
		c.now = end
	}
	fam := strace.FamilyOf(sp.Name)
	switch {
	case dev || fam.HasInvocation():
		c.runs.add(l, at, dev, rec.Prefix.Thread)
		if !dev && sp.Depth == 0 {
			c.counters.Root(sp.Pid, sp.TS, sp.End(), at, c.now)
		}
	case fam == strace.FamilyNode:
		c.flows.Add(sp, at)
	default: // ext.: on the thread that emitted it, never grouped into runs
		h := held.Span{Span: *sp, At: at}
		out := c.sliceDrawer.batch(sp.TS, 1)
		c.sliceDrawer.drawSpan(out, c.sliceDrawer.threadFor(out, &h), &h, nil, false)
	}
	c.flows.Drain(c.now, false)
	c.sliceDrawer.maybeFlush()
}

// close finishes the trace and the summary. The account is settled once
// every slice is written (a flush), so that the trace can say it (about);
// closing the writer then adds only that.
func (c *converter) close() (*Summary, error) {
	ps := c.sliceDrawer.parts
	var werr, perr error
	var ws perfetto.Stats
	if ps == nil {
		c.sliceDrawer.flush()
	} else {
		perr = ps.close()
	}
	c.arrows.flushed()
	c.arrows.close()
	c.sliceDrawer.pendingDevice.commit()
	c.finish()
	if n := c.arrows.stranded; n > 0 {
		c.note("stranded", "%s lost an end to the trace writer after the other end was written: the trace holds that end's flow id alone (the trace processor draws no arrow for it)", count(n, "arrow"))
	}
	c.acct.finish()
	if ps == nil {
		c.about.write(c.sliceDrawer.out.w, c.aboutAt(), c.sum)
		werr = c.sliceDrawer.out.w.Close()
		ws = c.sliceDrawer.out.w.Stats()
		c.sum.Output = outputOf(ws)
	} else {
		ws.Dropped = ps.dropped
		c.sum.Output = ps.output()
		c.about.write(ps.ov.out.w, c.aboutAt(), c.sum)
		werr = ps.ov.out.w.Close()
		ps.sum.Overview = outputOf(ps.ov.out.w.Stats())
	}
	if errors.Is(werr, perfetto.ErrWrite) {
		return c.sum, fmt.Errorf("phasetrace: writing the trace: %w", werr)
	}
	if perr != nil {
		return c.sum, perr
	}
	// Every slice the writer refused is counted under its reason
	// (refused); should it drop another event all the same, the trace is
	// still whole otherwise, and the drop is reported.
	if n := ws.Dropped - c.sliceDrawer.refusals; n > 0 {
		switch {
		case ps != nil:
			c.acct.notDrawn(ReasonWriterRefused, 0, "the parts' writers dropped "+count(n, "event")+" they did not report", n)
		case werr != nil:
			c.acct.notDrawn(ReasonWriterRefused, 0, werr.Error(), n)
		}
	}
	return c.sum, nil
}

// aboutAt is where the trace's own instant goes (about): at the earliest
// slice drawn, so that it does not stretch the trace's extent (at 0 when
// none was).
func (c *converter) aboutAt() int64 {
	return c.sliceDrawer.firstHanded
}

// abandon closes the writers after a panic, so that no goroutine of theirs
// outlives the conversion.
func (c *converter) abandon() {
	if ps := c.sliceDrawer.parts; ps != nil {
		ps.abandon()
		return
	}
	c.sliceDrawer.out.w.Close()
}

func (c *converter) finish() {
	c.sum.Hosts = finishHosts(c.sliceDrawer.hosts)
	c.sum.Devices = c.deviceDrawer.summaries()
}

func calibrationInputs(cs []calibrationInput) []Input {
	out := make([]Input, len(cs))
	for i, c := range cs {
		out[i] = c.in
	}
	return out
}

func (c *converter) note(kind, format string, args ...any) {
	c.acct.note(kind, format, args...)
}

// planRemote decides, after the first pass, how each log is drawn: it
// groups the logs into machines, gives repeated pids trace pids of their
// own (scanning again if it must), matches sessions to workers and fits
// every machine's clock.
func (c *converter) planRemote(logs []Input) error {
	pl := c.planner()
	p := pl.Group(len(logs))
	if p == nil {
		return nil
	}
	if pm := p.PidMaps(&c.survey.scan.Remote, len(logs)); pm != nil && c.pidMaps == nil {
		// Scan again, the repeated pids given their trace pids.
		c.pidMaps = pm
		if err := c.firstPass(logs, c.repeated.Whole); err != nil {
			return err
		}
		pl = c.planner()
		p = pl.Group(len(logs))
	}
	c.settle(pl, p)
	return nil
}

// planFromSurvey plans the remote machines a Survey knows of (none: nothing
// to plan).
func (c *converter) planFromSurvey(s *Survey) {
	m := s.machines
	if m == nil {
		return
	}
	c.names = m.names
	c.survey.scan.Remote.Grow(len(m.names) - 1)
	pl := c.planner()
	p := pl.Group(len(m.names))
	if p == nil {
		return
	}
	c.pidMaps = m.pidMaps
	c.settle(pl, p)
}

func (c *converter) planner() *remoteplan.Planner {
	return &remoteplan.Planner{Scan: c.survey.scan, Names: c.names,
		Options: remoteplan.Options{MPI: c.cfg.transport == TransportMPI, Workers: c.cfg.remoteWorkers, Fit: c.cfg.hostFit}}
}

// settle settles plan p, notes what it notes, and draws by it.
func (c *converter) settle(pl *remoteplan.Planner, p *remoteplan.Plan) {
	for _, n := range pl.Settle(p, c.pidMaps) {
		c.note(n.Kind, "%s", n.Text)
	}
	c.remote = p
}
