package phasetrace

import (
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"slices"
	"strconv"
	"sync"

	"github.com/phasetrace/phasetrace/perfetto"
	"github.com/phasetrace/phasetrace/reduce"
	"github.com/phasetrace/phasetrace/strace"
)

// Defaults of the converter's options.
const (
	// DefaultFlowHorizon is how long, in log time, a node.submit or
	// node.dispatch waits for the other end of its hand-off before it is
	// drawn: 10 s.
	DefaultFlowHorizon int64 = 10_000_000_000
)

const (
	// defaultFlushSlices is how many slices the converter hands to the
	// trace writer between flushes, which bounds its memory.
	defaultFlushSlices = 1 << 12
	// defaultMaxPending bounds the runs whose root span has not come yet;
	// past it the oldest is drawn as found and counted incomplete.
	defaultMaxPending = 4096
)

// Option configures Convert and NewBuilder.
type Option func(*config)

type config struct {
	records     []Input
	calibration []calibrationInput
	placement   []reduce.PlacerOption
	writer      []perfetto.Option
	flowHorizon int64
	flushSlices int
	maxPending  int
	maxLine     int
	maxTracks   int
	progress    func(read int64)

	// Remote workers (remote.go).
	transport     Transport
	remoteWorkers map[string]int64
	hostFit       []reduce.HostFitOption
}

type calibrationInput struct {
	pid int32
	dev int64
	in  Input
}

// WithPhaseRecords adds a host_phase_records.jsonl artifact: its records are
// drawn inside the chip.run.bind of their (pid, inv), and where they cover a
// bind the log's own bind segments for it are not drawn a second time.
func WithPhaseRecords(in Input) Option {
	return func(c *config) { c.records = append(c.records, in) }
}

// WithCalibration adds the runtime's clock-calibration artifact for the
// device clock domain (pid, dev); its valid samples are clock anchors.
func WithCalibration(pid int32, dev int64, in Input) Option {
	return func(c *config) { c.calibration = append(c.calibration, calibrationInput{pid, dev, in}) }
}

// WithPlacement passes options to the placement model (reduce.NewPlacer),
// such as reduce.WithMaxRateError.
func WithPlacement(opts ...reduce.PlacerOption) Option {
	return func(c *config) { c.placement = append(c.placement, opts...) }
}

// WithWriterOptions passes options to the trace writer (perfetto.NewWriter),
// such as perfetto.WithCompression.
func WithWriterOptions(opts ...perfetto.Option) Option {
	return func(c *config) { c.writer = append(c.writer, opts...) }
}

// WithFlowHorizon sets how long (log time, ns) hand-off spans wait for their
// other end (default DefaultFlowHorizon).
func WithFlowHorizon(ns int64) Option {
	return func(c *config) {
		if ns > 0 {
			c.flowHorizon = ns
		}
	}
}

// WithMaxLine sets the longest log line read (default strace.DefaultMaxLine).
func WithMaxLine(n int) Option { return func(c *config) { c.maxLine = n } }

// WithMaxTracks sets how many tracks the trace may have (default
// perfetto.DefaultMaxTracks). A track is spent when the first slice is
// drawn on it (a process's with the first of its tracks): the spans of
// the threads, lanes and devices first drawn on are drawn, those of the
// others past the limit are not, and are counted. That bounds the memory
// a log with very many distinct pids and tids can take: a track costs the
// conversion about 570 bytes with a run of two spans, 1.5 KB with 16
// such runs (TestMemoryPerTrack, the converter's and the writer's state
// together). The first pass learns of as many threads and processes at
// most, the first it reads: one past them is drawn as a Builder draws
// what its Survey does not know.
func WithMaxTracks(n int) Option {
	return func(c *config) {
		if n > 0 {
			c.maxTracks = n
		}
	}
}

// WithProgress calls fn with the number of input bytes read so far (both
// passes count), now and then.
func WithProgress(fn func(read int64)) Option { return func(c *config) { c.progress = fn } }

// Errors of Convert that mean the API was misused. Everything wrong with
// the data is counted in the Summary instead; every other error Convert
// returns is an I/O error of an input or of w.
var (
	ErrNoInput      = errors.New("phasetrace: no input log")
	ErrInvalidInput = errors.New("phasetrace: input has no Open function")
)

// Convert reads the runtime logs and writes one Perfetto trace to w: host
// spans on their process and thread tracks (a thread that interleaves runs
// split into pipeline-slot lanes), device phases on device tracks placed on
// the host timeline with a published bound, node.submit → node.dispatch
// hand-offs as flows, the bind stage's segments, and wall time where a
// [CLOCK_ANCHOR] is known. It returns a summary of what was read, written,
// placed, repaired, moved and not drawn.
//
// Bad data never fails a conversion: a record that cannot be drawn as
// logged is repaired (only where the repair is exact and small: the
// runtime's own ns truncation), moved to an overflow lane beside its track,
// or left out — and counted in the Summary with the reason and where it
// is, and marked on the slice where one is drawn. Convert returns an error
// only when an input cannot be read or w cannot be written (once drawing
// has begun, the summary returned with it says what was done so far), or
// for misuse (ErrNoInput, ErrInvalidInput). No goroutine of Convert outlives it; a panic of the
// caller's own code (an input's reader, w, a progress function) is raised
// again on the caller's goroutine.
//
// Every log is read twice: a first pass learns lanes, labels and clock
// anchors (the Survey), the second draws (the Builder); the first pass is
// made again, leaving them out, when captures repeat earlier ones. Memory grows with the number of processes,
// threads, tracks and clock anchors, and with the runs in flight at once —
// not with the number of runs converted. The same inputs give the same
// bytes.
func Convert(w io.Writer, logs []Input, opts ...Option) (*Summary, error) {
	if len(logs) == 0 {
		return nil, ErrNoInput
	}
	for i, in := range logs {
		if in.Open == nil {
			return nil, fmt.Errorf("%w: input %d (%q)", ErrInvalidInput, i, in.Name)
		}
	}
	c := newConverter(opts)
	for _, in := range append(append([]Input(nil), c.cfg.records...), calibrationInputs(c.cfg.calibration)...) {
		if in.Open == nil {
			return nil, fmt.Errorf("%w: artifact %q", ErrInvalidInput, in.Name)
		}
	}
	if err := c.prepare(logs); err != nil {
		return nil, err
	}

	// Pass 2: the logs' records, merged in the order they were written,
	// drawn by the same converter a Builder feeds.
	c.start(w, c.scan.shifts)
	// The placer holds the clock anchors now: the survey's copies, which
	// grow with the log, would only weigh on the second pass.
	c.scan.anchors, c.scan.anchorInput = nil, nil
	closed := false
	defer func() {
		if !closed { // a panic of the caller's reader: stop the writer's goroutine too
			c.w.Close()
		}
	}()
	stats, cuts, err := c.secondPass(logs)
	for i, st := range stats {
		c.sum.Inputs = append(c.sum.Inputs, inputSummary(logs[i].Name, st, cuts[i]))
		c.sum.Spans.Read += st.Records.Spans
	}
	sum, werr := c.close()
	closed = true
	if err != nil {
		return sum, err
	}
	return sum, werr
}

func calibrationInputs(cs []calibrationInput) []Input {
	out := make([]Input, len(cs))
	for i, c := range cs {
		out[i] = c.in
	}
	return out
}

// firstPass scans every log, leaving out the lines of skip and the
// repeated records of the captures that repeat earlier ones in part
// (c.near, once known), and finds the captures that repeat earlier ones.
func (c *converter) firstPass(logs []Input, skip [][]repeat) error {
	c.survey = NewSurvey()
	c.scan = c.survey.scan
	c.scan.known = c.cfg.maxTracks
	c.scan.pidMaps = c.pidMaps
	c.scan.remote.single = len(logs) == 1
	caps := make([][]capture, len(logs))
	for i, in := range logs {
		c.scan.input = i
		var sk []repeat
		if skip != nil {
			sk = skip[i]
		}
		c.scan.near = nil
		if c.near != nil {
			c.scan.near = c.near[i]
		}
		if err := c.withInput(in, func(r io.Reader) error {
			var err error
			caps[i], err = c.scan.scanLog(r, in.Name, c.cfg.maxLine, c.seed, sk)
			return err
		}); err != nil {
			return err
		}
	}
	if skip == nil {
		c.repeats = repeats(c.names, caps)
		c.caps = caps
	}
	return nil
}

func (c *converter) withInput(in Input, fn func(io.Reader) error) error {
	_, err := c.withInputCut(in, fn)
	return err
}

// withInputCut is withInput that also says why the input ended early when
// its stream was cut or damaged ("" when it was not): fn reads the bytes
// before the cut.
func (c *converter) withInputCut(in Input, fn func(io.Reader) error) (cut string, err error) {
	rc, err := openInput(in)
	if err != nil {
		return "", fmt.Errorf("phasetrace: %s: %w", in.Name, err)
	}
	err = fn(c.progress.wrap(rc))
	if cerr := rc.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return rc.cut, fmt.Errorf("phasetrace: %s: %w", in.Name, err)
	}
	return rc.cut, nil
}

func inputSummary(name string, st strace.Stats, cut *cutInput) InputSummary {
	s := InputSummary{
		Name: name, Bytes: st.Bytes, Lines: st.Lines,
		Records: map[string]int64{
			"span": st.Records.Spans, "wall-anchor": st.Records.WallAnchors, "device-anchor": st.Records.DeviceAnchors,
			"bind-phase": st.Records.BindPhases, "stamp": st.Records.Stamps, "autoload": st.Records.Autoloads,
		},
		Torn: st.Torn, UnknownVersion: st.UnknownVersion, Malformed: st.Malformed, LongLines: st.LongLines, InLongLines: st.InLongLines,
		Joined: st.Joined, MaybeCut: st.MaybeCut,
	}
	for _, p := range st.Problems {
		s.Problems = append(s.Problems, p.Error())
	}
	s.ProblemsOmitted = st.ProblemsOmitted
	if cut != nil && cut.cut != "" {
		s.Cut, s.CutAfter = cut.cut, cut.read
	}
	return s
}

// progressCounter counts the bytes read through the readers it wraps
// (from several goroutines in the second pass) and reports now and then.
type progressCounter struct {
	fn   func(int64)
	mu   sync.Mutex
	n    int64
	last int64
}

func (p *progressCounter) wrap(r io.Reader) io.Reader {
	if p.fn == nil {
		return r
	}
	return &countingReader{r: r, p: p}
}

type countingReader struct {
	r io.Reader
	p *progressCounter
}

func (c *countingReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	p := c.p
	p.mu.Lock()
	p.n += int64(n)
	if p.n-p.last >= 4<<20 || err == io.EOF {
		p.last = p.n
		p.fn(p.n)
	}
	p.mu.Unlock()
	return n, err
}

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

// heldSpan is a span waiting to be drawn, with where it was read.
type heldSpan struct {
	strace.Span
	at where
}

// bindLine is a legacy "bind phase=" line waiting for the chip.run.bind
// that contains it.
type bindLine struct {
	rec   strace.BindPhase
	at    where
	logT  uint64    // the log prefix's thread handle
	store spanStore // rec's attributes
}

// maxBindLines bounds the bind-phase lines waiting for their bind.
const maxBindLines = 4096

func (c *converter) note(kind, format string, args ...any) {
	c.sum.note(kind, c.notes, format, args...)
}

// wallTolerance is how far apart two wall-clock anchors' offsets (wall −
// mono) may be and still describe one clock: NTP slews the wall clock by far
// less; a larger gap means a clock that was set, or a log from another boot.
const wallTolerance = hostGap

// wallClocks writes the wall-clock anchors as REALTIME snapshots. The
// anchors that agree form the trace's wall clock: the largest set whose
// offsets (wall − mono) lie within wallTolerance of one of theirs (agreeing;
// of sets as large, the one whose centre comes first by pid, then log
// order). An anchor outside it, one before 1970 (wall_ns < 0) and one of a
// remote machine drawn at its own times are set aside and counted, and a
// process that wrote more than one anchor is noted (the runtime writes one
// per process).
func (c *converter) wallClocks(procs []*procInfo) {
	type anchor struct {
		p   *procInfo
		j   int
		off int64
	}
	var as []anchor
	for _, p := range procs {
		// An anchor written again (a log given twice) is the same anchor.
		seen := make(map[strace.WallAnchor]bool, len(p.wall))
		var distinct []int
		for j, w := range p.wall {
			if seen[w] {
				c.led.notDrawn(ReasonRepeatedWall, c.led.where(p.wallAt[j]), "pid "+itoa(int64(p.pid)), 1)
				continue
			}
			seen[w] = true
			distinct = append(distinct, j)
		}
		if len(distinct) > 1 {
			c.note("wall", "%s", SeveralWallAnchors(p.pid, len(distinct), c.led.at(c.led.where(p.wallAt[distinct[0]])), c.led.at(c.led.where(p.wallAt[distinct[1]]))))
		}
		for _, j := range distinct {
			switch {
			case c.remoteWallAnchor(p.pid):
				// Its wall clock agrees with this host's only to NTP grade.
				c.led.superseded(ReasonRemoteWallSuperseded, 1)
			case c.wallOffAxis(p.pid):
				c.led.notDrawn(ReasonWallOffAxis, c.led.where(p.wallAt[j]), "pid "+itoa(int64(p.pid)), 1)
			case p.wall[j].WallNS < 0:
				c.led.notDrawn(ReasonWallBefore1970, c.led.where(p.wallAt[j]), "pid "+itoa(int64(p.pid))+": wall_ns="+itoa(p.wall[j].WallNS), 1)
			default:
				as = append(as, anchor{p, j, wallOffset(&p.wall[j])})
			}
		}
	}
	offs := make([]int64, len(as))
	for i, a := range as {
		offs[i] = a.off
	}
	if r := agreeing(offs, wallTolerance); r >= 0 {
		ref := as[r]
		for _, a := range as {
			if d, ok := wallAgrees(a.off, ref.off); !ok {
				c.led.notDrawn(ReasonWallDisagrees, c.led.where(a.p.wallAt[a.j]),
					"pid "+itoa(int64(a.p.pid))+": wall − mono differs by "+itoa(d)+" ns from the anchor of pid "+itoa(int64(ref.p.pid))+" at "+c.led.at(c.led.where(ref.p.wallAt[ref.j])), 1)
				continue
			}
			wa := &a.p.wall[a.j]
			c.w.WallClock(wa.MonoNS, wa.WallNS)
			c.sum.WallAnchors++
		}
	}
	c.sum.WallTime = c.sum.WallAnchors > 0
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

// Reasons a span is not drawn.
const ()

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

func (c *converter) bindPhase(rec *strace.Record, at where) {
	if key, _ := recordKey(rec); c.recentBinds.repeated(key) {
		c.led.notDrawn(ReasonRepeatedRecord, at, "phase="+rec.BindPhase.Phase, 1)
		return
	}
	if len(c.bindLines) >= maxBindLines {
		l := &c.bindLines[0]
		c.led.notDrawn(ReasonBindOutsideBind, l.at, "phase="+l.rec.Phase, 1)
		c.letGo(l)
		c.bindLines = c.bindLines[1:]
	}
	l := bindLine{rec: rec.BindPhase, at: at, logT: rec.Prefix.Thread}
	if n := len(c.bindStores); n > 0 {
		l.store = c.bindStores[n-1]
		c.bindStores = c.bindStores[:n-1]
	}
	l.rec.Attrs = l.store.keep(l.rec.Attrs) // its Phase and Source are canonical
	c.bindLines = append(c.bindLines, l)
}

// letGo keeps the store of a bind line that is drawn or given up, for the
// next line.
func (c *converter) letGo(l *bindLine) {
	l.store.reset()
	c.bindStores = append(c.bindStores, l.store)
	l.store = spanStore{}
}

// host draws one host span on track t, with its identity and every
// attribute as typed arguments.
func (c *converter) host(t perfetto.Track, sp *heldSpan, extra []perfetto.Arg, laneSplit bool) {
	c.hostFlows(t, sp, extra, laneSplit, nil, nil)
}

// hostFlows is host with flows attached: flows start or continue at the
// span, endFlows end there.
func (c *converter) hostFlows(t perfetto.Track, sp *heldSpan, extra []perfetto.Arg, laneSplit bool, flows, endFlows []perfetto.FlowID) {
	args := c.args[:0]
	args = append(args, perfetto.Uint("inv", sp.Inv), perfetto.String("hid", c.hidString(sp.Hid)), perfetto.Int("depth", int64(sp.Depth)))
	if laneSplit {
		args = append(args, perfetto.Int("os_tid", sp.Tid))
	}
	args = appendAttrs(args, sp.Attrs)
	args = c.remoteArgs(args, sp.Pid, sp.TS, sp.End(), true)
	if sp.NameTruncated || sp.AttrsTruncated {
		args = append(args, perfetto.Bool("truncated_by_emitter", true))
	}
	if len(extra) > 0 {
		args = append(args, extra...)
	}
	arrows := len(flows)+len(endFlows) > 0
	if arrows {
		flows, endFlows = c.arrows.live(flows), c.arrows.live(endFlows)
	}
	drawn := c.slice(t, &perfetto.Slice{Name: sp.Name, TS: sp.TS, Dur: sp.Dur, Depth: sp.Depth, Args: args, Flows: flows, EndFlows: endFlows, Ref: uint64(sp.at)}, sp.at)
	if drawn {
		c.led.drawn()
		c.drawnOn(sp.Pid)
	}
	if arrows {
		if drawn {
			c.arrows.handed(flows)
			c.arrows.handed(endFlows)
		} else {
			c.arrows.dropped(flows)
			c.arrows.dropped(endFlows)
		}
	}
}

// slice hands one slice to the writer, unless its track is over the track
// limit or its interval is not one after placement (a device span mapped
// outside the int64 range); it reports whether it did. Callers count the
// slices of spans as drawn; the reasons it refuses are counted here.
func (c *converter) slice(t perfetto.Track, s *perfetto.Slice, p where) bool {
	switch {
	case t.IsZero():
		c.led.dropSpan(ReasonTrackLimit, p, s.Name, 1)
		return false
	case s.TS < 0 || s.Dur < 0 || s.TS+s.Dur < s.TS:
		c.led.dropSpan(ReasonOutsideTimeRange, p, s.Name+" at "+itoa(s.TS)+" +"+itoa(s.Dur), 1)
		return false
	}
	c.w.Slice(t, *s)
	c.handed++
	if cap(s.Args) > cap(c.args) {
		c.args = s.Args[:0] // the writer copied the arguments: reuse the buffer
	}
	return true
}

// refused takes back a slice the writer refused: a span counted as drawn
// is counted under the reason instead, once per track when its overflow
// lanes ran out; its arrows are not drawn.
func (c *converter) refused(r perfetto.Refusal) {
	c.refusals++
	c.arrows.refused(r.Flows, r.Alone)
	what, at := c.led.fromRef(r.Ref)
	if what != "" {
		c.led.notDrawn(otherReasons[what][2], at, r.Name+" on "+r.Track+": "+r.Err.Error(), 1)
		return
	}
	c.sum.Spans.Drawn--
	switch {
	case errors.Is(r.Err, perfetto.ErrTooManyLanes):
		c.led.dropOnTrack(ReasonLanesFull, r.Track, at)
	case errors.Is(r.Err, perfetto.ErrTooManyTracks) && r.Track != "":
		c.led.dropOnTrack(ReasonLanesLimit, r.Track, at)
	case errors.Is(r.Err, perfetto.ErrTooManyTracks):
		c.led.dropSpan(ReasonTrackLimit, at, r.Name, 1)
	default:
		c.led.dropSpan(ReasonWriterRefused, at, r.Name+" on "+r.Track+": "+r.Err.Error(), 1)
	}
}

// overflowed counts a slice the writer moved to an overflow lane.
func (c *converter) overflowed(o perfetto.Overflow) {
	reason := ReasonCouldNotNest
	switch {
	case errors.Is(o.Err, perfetto.ErrOverlap):
		reason = ReasonPartialOverlap
	case errors.Is(o.Err, perfetto.ErrTooDeep):
		reason = ReasonTooDeep
	case errors.Is(o.Err, perfetto.ErrOutOfOrder), errors.Is(o.Err, perfetto.ErrUnverifiable):
		reason = ReasonTimeBackwards
	}
	what, at := c.led.fromRef(o.Ref)
	c.led.moved(reason, at, o.Name+" on "+o.Track+": "+o.Err.Error())
	if what == "" { // a span of the log
		bump(&c.sum.Spans.Moved, reason, 1)
	}
}

// maybeFlush lets the writer write what it holds once enough has been
// handed to it. It is called only between whole runs, so a run's tree is
// always resolved in one flush. An I/O error stops nothing here: the
// writer keeps it, and Convert returns it at the end.
func (c *converter) maybeFlush() {
	if c.handed >= c.cfg.flushSlices {
		c.handed = 0
		c.w.Flush()
		c.arrows.flushed()
	}
}

// appendAttrs adds a span's attributes as typed arguments, in order.
func appendAttrs(args []perfetto.Arg, attrs []strace.Attr) []perfetto.Arg {
	n := len(args)
	args = slices.Grow(args, len(attrs))[:n+len(attrs)]
	out := args[n:]
	for i := range out {
		switch a := &attrs[i]; {
		case a.Bare:
			out[i] = perfetto.Bool(a.Key, true)
		case a.Type == strace.TypeInt:
			out[i] = perfetto.Int(a.Key, a.Int)
		case a.Type == strace.TypeUint:
			out[i] = perfetto.Uint(a.Key, a.Uint)
		default:
			out[i] = perfetto.String(a.Key, a.Value)
		}
	}
	if n := len(attrs); n > 0 && attrs[n-1].MaybeCut {
		// The log ended inside the record's attributes, without a line end.
		args = append(args, perfetto.String("maybe_cut_by_log_end", attrs[n-1].Key))
	}
	return args
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

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

func hex(v uint64) string { return strconv.FormatUint(v, 16) }

// hidString is hex(hid), remembered: a run's spans share their hid, and a
// log has few callables.
func (c *converter) hidString(h uint64) string {
	// A run's spans share one hid: the last one answers most calls.
	if h == c.lastHid && c.lastHidStr != "" {
		return c.lastHidStr
	}
	c.lastHid, c.lastHidStr = h, remembered(&c.hids, h, hex)
	return c.lastHidStr
}

// logThread is "0x" + hex of a log-prefix thread handle, remembered.
func (c *converter) logThread(t uint64) string {
	return remembered(&c.logThreads, t, func(v uint64) string { return "0x" + hex(v) })
}

// segmentName is the name of the bind segment drawn for phase, remembered.
func (c *converter) segmentName(phase string) string {
	return remembered(&c.segNames, phase, func(p string) string { return strace.SpanBind + "." + p })
}

// maxRemembered bounds each table of remembered strings.
const maxRemembered = 1 << 10

// remembered returns format(v), kept in *m (up to maxRemembered entries)
// so that a value seen again costs a lookup.
func remembered[K comparable](m *map[K]string, v K, format func(K) string) string {
	if s, ok := (*m)[v]; ok {
		return s
	}
	s := format(v)
	if *m == nil {
		*m = map[K]string{}
	}
	if len(*m) < maxRemembered {
		(*m)[v] = s
	}
	return s
}
