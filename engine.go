package phasetrace

import (
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"strconv"

	"github.com/phasetrace/phasetrace/perfetto"
	"github.com/phasetrace/phasetrace/reduce"
	"github.com/phasetrace/phasetrace/strace"
)

// converter is the state of one conversion.
type converter struct {
	cfg      config
	survey   *Survey
	scan     *scanResult
	sum      *Summary
	led      *ledger
	notes    map[string]int
	progress *progressCounter
	w        *perfetto.Writer
	names    []string // the logs' names

	// Repeated records: captures left out per log, captures that repeat
	// earlier ones in part per log, and recent spans.
	seed    maphash.Seed
	caps    [][]capture // per log, its captures (until compared)
	repeats [][]repeat
	near    [][]nearRepeat
	recent  *recentSpans
	// recentBinds: the keys of the last bind phase lines, for those given
	// again close to their first (a log given twice, as a second input).
	recentBinds recentKeys

	placer, containOnly *reduce.Placer
	freq                map[reduce.Domain]reduce.Hz
	devices             map[reduce.Domain]*DeviceSummary

	cal         []loadedCalibration
	tracks      *trackSet
	shift       []int64        // per log: added to its host timestamps (another host's clock)
	args        []perfetto.Arg // reused for each slice's arguments
	extra       []perfetto.Arg // reused for a slice's extra arguments
	hids        map[uint64]string
	lastHid     uint64 // the last hid asked for, and its string
	lastHidStr  string
	logThreads  map[uint64]string   // "0x" + hex of log-prefix thread handles
	segNames    map[string]string   // chip.run.bind.<phase> by phase
	devSpans    []reduce.DeviceSpan // reused for each run's device spans
	lanes       []string            // reused for each run's device lanes
	laneOfNames [laneOfNamesSize]laneOfName
	placed      reduce.Placement // reused for each run's placement
	// covered and drawnSegments are run's scratch sets of bind segments.
	covered, drawnSegments nameSet
	records                map[invKey][]strace.PhasePass // host_phase_records by (pid, inv)

	runs       runCollector
	bindLines  []bindLine
	bindStores []spanStore // the stores of bind lines drawn, for the next ones
	flows      flowWindow
	handed     int // slices handed to the writer since the last flush
	arrows     arrowLedger
	refusals   int64 // slices the writer refused (refused)
	now        int64

	// Remote machines (remote.go): how their logs are drawn, and the trace
	// pids given to pids that repeat across machines, per log.
	remote  *remotePlan
	pidMaps []map[int32]int32
}

// newConverter is the state of one conversion with its options applied.
func newConverter(opts []Option) *converter {
	cfg := config{flowHorizon: DefaultFlowHorizon, flushSlices: defaultFlushSlices, maxPending: defaultMaxPending, maxLine: strace.DefaultMaxLine,
		maxTracks: perfetto.DefaultMaxTracks}
	for _, o := range opts {
		o(&cfg)
	}
	sum := &Summary{}
	c := &converter{cfg: cfg, sum: sum, led: newLedger(sum), notes: map[string]int{},
		seed: maphash.MakeSeed()}
	c.progress = &progressCounter{fn: cfg.progress}
	c.runs = runCollector{maxPending: cfg.maxPending, done: c.run}
	c.recent = newRecentSpans(c.runs.rehome)
	c.flows = flowWindow{
		horizon: cfg.flowHorizon,
		draw: func(sp *heldSpan, flows, endFlows []perfetto.FlowID) {
			flows, endFlows = c.remote.flows(&sp.Span, flows, endFlows)
			c.hostFlows(c.tracks.thread(sp.Pid, sp.Tid), sp, nil, false, flows, endFlows)
		},
		linked:   c.arrows.add,
		unlinked: c.led.unlinked,
		sameHost: func(a, b int32) bool { return c.remote.sameHost(a, b) },
		drawable: func(sp *heldSpan) bool { return !c.tracks.thread(sp.Pid, sp.Tid).IsZero() },
	}
	c.arrows.linked, c.arrows.unlinked = sum.flow, c.led.unlinked
	c.arrows.drawable = func(e arrowEnd) bool { return !c.tracks.thread(e.pid, e.tid).IsZero() }
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
	if c.repeats != nil || c.near != nil {
		if err := c.firstPass(logs, c.repeats); err != nil {
			return err
		}
	}
	c.caps = nil
	if err := c.planRemote(logs); err != nil {
		return err
	}
	return c.loadArtifacts()
}

// start opens the trace: lanes decided, the placer built from the
// survey's anchors, the writer opened and the tracks declared. shift, when
// not nil, moves each log's anchors onto the first log's axis.
func (c *converter) start(w io.Writer, shift func(n int) []int64) {
	c.scan.decide()
	if shift != nil {
		c.shift = shift(len(c.names))
	}
	c.records = c.survey.records
	c.cal = c.survey.cal
	c.buildPlacer()
	wopts := append([]perfetto.Option{perfetto.WithMaxTracks(c.cfg.maxTracks), perfetto.WithOverflowFunc(c.overflowed), perfetto.WithRefusalFunc(c.refused)}, c.cfg.writer...)
	c.w = perfetto.NewWriter(w, wopts...)
	c.tracks = newTrackSet(c.w, c.scan)
	c.remote.attachArrows(&c.flows, &c.arrows)
	c.wallClocks(c.tracks.declare())
}

// secondPass draws. Several logs are read together, record by record in the
// order they were written (by their log prefixes' monotonic time), so that
// logs of different processes merge on one axis as if they were one log,
// and hand-offs across them connect. It returns the readers' statistics of
// the logs it read, and the readers of the logs (nil for one not opened),
// which say whether a log was cut, also when it fails.
func (c *converter) secondPass(logs []Input) (stats []strace.Stats, cuts []*cutInput, err error) {
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
		c.record(cur)
	}
	c.drain()
	return nil, nil, nil
}

// drain draws what still waits once every value has come.
func (c *converter) drain() {
	c.flows.drain(c.now, true)
	c.runs.flush()
	for _, l := range c.bindLines {
		c.led.notDrawn(ReasonBindOutsideBind, l.at, "phase="+l.rec.Phase, 1)
	}
	c.bindLines = nil
	for _, ps := range c.records {
		for _, p := range ps {
			c.led.notDrawn(ReasonPassesWithoutBind, c.led.where(p.Pos), "pid="+itoa(int64(p.Pid))+" inv="+strconv.FormatUint(p.Inv, 10), 1)
		}
	}
	c.records = nil
}

// record takes the record the source holds: it is left out when it repeats
// an earlier one, else drawn (or held until its run is complete).
func (c *converter) record(s *source) {
	rec := s.rec
	at := line(s.file, rec.Pos.Line)
	if c.repeats != nil {
		if r, ok := repeatOf(c.repeats[s.index], &s.repeat, rec.Pos.Line); ok {
			detail := "lines " + itoa(r.first) + "–" + itoa(r.last) + " repeat " + r.of
			if rec.Kind == strace.KindSpan {
				c.led.dropSpan(ReasonRepeatedCapture, at, detail, 1)
			} else {
				c.led.notDrawn(ReasonRepeatedCapture, at, detail, 1)
			}
			return
		}
	}
	if c.near != nil {
		if n := nearRepeatOf(c.near[s.index], &s.near, rec.Pos.Line); n != nil {
			if of, ok := n.repeated(s.key); ok {
				if rec.Kind == strace.KindSpan {
					c.led.dropSpan(ReasonRepeatedSpan, at, rec.Span.Name+" (as in "+of+")", 1)
				} else {
					c.led.notDrawn(ReasonRepeatedRecord, at, "phase="+rec.BindPhase.Phase+" (as in "+of+")", 1)
				}
				return
			}
		}
	}
	switch rec.Kind {
	case strace.KindSpan:
		c.span(rec, at)
	case strace.KindBindPhase:
		c.bindPhase(rec, at)
	}
}

// span takes one span.
func (c *converter) span(rec *strace.Record, at where) {
	sp := &rec.Span
	dev := sp.IsDevice()
	if reason, detail := checkSpan(sp, dev); reason != "" {
		c.led.dropSpan(reason, at, detail, 1)
		return
	}
	kept, lent, repeated := c.recent.remember(sp)
	if repeated {
		c.led.dropSpan(ReasonRepeatedSpan, at, sp.Name, 1)
		return
	}
	if end := sp.End(); !dev && end > c.now {
		c.now = end
	}
	fam := strace.FamilyOf(sp.Name)
	switch {
	case dev || fam.HasInvocation():
		c.runs.add(kept, lent, at, dev, rec.Prefix.Thread)
	case fam == strace.FamilyNode:
		c.flows.add(sp, at)
	default: // ext.: on the thread that emitted it, never grouped into runs
		c.host(c.tracks.thread(sp.Pid, sp.Tid), &heldSpan{*sp, at}, nil, false)
	}
	c.flows.drain(c.now, false)
	c.maybeFlush()
}

// checkSpan says why a span cannot be drawn at all: its interval is not one.
// A device span's ts may be negative (an offset before the run's origin);
// a host span's may not.
func checkSpan(sp *strace.Span, dev bool) (reason Reason, detail string) {
	switch {
	case sp.Dur < 0:
		return ReasonNegativeDuration, "dur=" + itoa(sp.Dur)
	case !dev && sp.TS < 0:
		return ReasonNegativeHostTS, "ts=" + itoa(sp.TS)
	case sp.TS+sp.Dur < sp.TS:
		return ReasonTSDurOverflow, "ts=" + itoa(sp.TS) + " dur=" + itoa(sp.Dur)
	}
	return "", ""
}

// close finishes the trace and the summary.
func (c *converter) close() (*Summary, error) {
	c.finish()
	werr := c.w.Close()
	c.arrows.flushed()
	c.arrows.close()
	if n := c.arrows.stranded; n > 0 {
		c.note("stranded", "%s lost an end to the trace writer after the other end was written: the trace holds that end's flow id alone (the trace processor draws no arrow for it)", count(n, "arrow"))
	}
	c.led.finish()
	ws := c.w.Stats()
	c.sum.Output = OutputSummary{Bytes: ws.Bytes, Packets: ws.Packets, Tracks: ws.Tracks, Slices: ws.Slices, Instants: ws.Instants, Flows: ws.Flows, Counters: ws.Counters}
	if errors.Is(werr, perfetto.ErrWrite) {
		return c.sum, fmt.Errorf("phasetrace: writing the trace: %w", werr)
	}
	// Every slice the writer refused is counted under its reason
	// (refused); should it drop another event all the same, the trace is
	// still whole otherwise, and the drop is reported.
	if n := ws.Dropped - c.refusals; n > 0 && werr != nil {
		c.led.notDrawn(ReasonWriterRefused, 0, werr.Error(), n)
	}
	return c.sum, nil
}

func (c *converter) finish() {
	c.finishHosts()
	c.sum.Devices = c.sum.Devices[:0]
	for _, d := range sortedDomains(c.devices) {
		ds := c.devices[d]
		ds.Bound.finish()
		ds.WallBound.finish()
		c.sum.Devices = append(c.sum.Devices, *ds)
	}
}

func calibrationInputs(cs []calibrationInput) []Input {
	out := make([]Input, len(cs))
	for i, c := range cs {
		out[i] = c.in
	}
	return out
}

// heldSpan is a span waiting to be drawn, with where it was read.
type heldSpan struct {
	strace.Span
	at where
}

func (c *converter) note(kind, format string, args ...any) {
	c.sum.note(kind, c.notes, format, args...)
}
