package phasetrace

import (
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"sort"
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

// Option configures Convert.
type Option func(*config)

type config struct {
	records     []Input
	calibration []calibrationInput
	placement   []reduce.Option
	writer      []perfetto.Option
	flowHorizon int64
	flushSlices int
	maxPending  int
	maxLine     int
	maxTracks   int
	progress    func(read int64)
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
func WithPlacement(opts ...reduce.Option) Option {
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
// perfetto.DefaultMaxTracks). The spans of threads, lanes and devices past
// the limit are not drawn and are counted, which bounds the memory a log
// with very many distinct pids and tids can take.
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
// only when an input cannot be read or w cannot be written (the summary
// then says what was done so far), or for misuse (ErrNoInput,
// ErrInvalidInput). No goroutine of Convert outlives it; a panic of the
// caller's own code (an input's reader, w, a progress function) is raised
// again on the caller's goroutine.
//
// Every log is read twice: a first pass learns lanes, labels and clock
// anchors, the second draws. Memory grows with the number of processes,
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
	cfg := config{flowHorizon: DefaultFlowHorizon, flushSlices: defaultFlushSlices, maxPending: defaultMaxPending, maxLine: strace.DefaultMaxLine,
		maxTracks: perfetto.DefaultMaxTracks}
	for _, o := range opts {
		o(&cfg)
	}
	for _, in := range append(append([]Input(nil), cfg.records...), calibrationInputs(cfg.calibration)...) {
		if in.Open == nil {
			return nil, fmt.Errorf("%w: artifact %q", ErrInvalidInput, in.Name)
		}
	}
	sum := &Summary{}
	c := &converter{cfg: cfg, sum: sum, led: newLedger(sum), notes: map[string]int{}, lanes: map[laneKey]perfetto.Track{}, devLanes: map[devLane]perfetto.Track{},
		covered: map[string]bool{}, drawnSegments: map[string]bool{}, seed: maphash.MakeSeed()}
	c.progress = &progressCounter{fn: cfg.progress}
	c.recent = newRecentSpans(c.seed)
	for _, in := range logs {
		c.names = append(c.names, in.Name)
	}

	// Pass 1, again without the captures that repeat earlier ones if there
	// are any.
	if err := c.firstPass(logs, nil); err != nil {
		return nil, err
	}
	if c.repeats != nil {
		if err := c.firstPass(logs, c.repeats); err != nil {
			return nil, err
		}
	}
	c.scan.decide()
	c.shift = c.scan.shifts(len(logs))
	if err := c.loadArtifacts(); err != nil {
		return nil, err
	}
	c.buildPlacer()

	// Pass 2.
	wopts := append([]perfetto.Option{perfetto.WithMaxTracks(cfg.maxTracks), perfetto.WithOverflowFunc(c.overflowed)}, cfg.writer...)
	c.w = perfetto.NewWriter(w, wopts...)
	closed := false
	defer func() {
		if !closed { // a panic of the caller's reader: stop the writer's goroutine too
			c.w.Close()
		}
	}()
	stats, err := c.secondPass(logs)
	for i, st := range stats {
		c.sum.Inputs = append(c.sum.Inputs, inputSummary(logs[i].Name, st))
		c.sum.Spans.Read += st.Records.Spans
	}
	c.finish()
	werr := c.w.Close()
	closed = true
	ws := c.w.Stats()
	c.sum.Output = OutputSummary{Bytes: ws.Bytes, Packets: ws.Packets, Tracks: ws.Tracks, Slices: ws.Slices, Instants: ws.Instants, Flows: ws.Flows, Counters: ws.Counters}
	if err != nil {
		return c.sum, err
	}
	if werr != nil {
		if errors.Is(werr, perfetto.ErrWrite) {
			return c.sum, fmt.Errorf("phasetrace: writing the trace: %w", werr)
		}
		// The converter hands the writer nothing it refuses; should it
		// refuse something all the same, the trace is still whole
		// otherwise, and the refusal is reported.
		c.led.notDrawn("refused by the trace writer", 0, werr.Error(), ws.Dropped)
	}
	return c.sum, nil
}

func calibrationInputs(cs []calibrationInput) []Input {
	out := make([]Input, len(cs))
	for i, c := range cs {
		out[i] = c.in
	}
	return out
}

// firstPass scans every log, leaving out the lines of skip, and finds the
// captures that repeat earlier ones.
func (c *converter) firstPass(logs []Input, skip [][]repeat) error {
	c.scan = newScan()
	caps := make([][]capture, len(logs))
	for i, in := range logs {
		c.scan.input = i
		var sk []repeat
		if skip != nil {
			sk = skip[i]
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
	}
	return nil
}

func (c *converter) withInput(in Input, fn func(io.Reader) error) error {
	rc, err := in.Open()
	if err != nil {
		return fmt.Errorf("phasetrace: %s: %w", in.Name, err)
	}
	err = fn(c.progress.wrap(rc))
	if cerr := rc.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("phasetrace: %s: %w", in.Name, err)
	}
	return nil
}

func inputSummary(name string, st strace.Stats) InputSummary {
	s := InputSummary{
		Name: name, Bytes: st.Bytes, Lines: st.Lines,
		Records: map[string]int64{
			"span": st.Records.Spans, "wall-anchor": st.Records.WallAnchors, "device-anchor": st.Records.DeviceAnchors,
			"bind-phase": st.Records.BindPhases, "stamp": st.Records.Stamps,
		},
		Torn: st.Torn, UnknownVersion: st.UnknownVersion, Malformed: st.Malformed, LongLines: st.LongLines, InLongLines: st.InLongLines,
	}
	for _, p := range st.Problems {
		s.Problems = append(s.Problems, p.Error())
	}
	if st.ProblemsOmitted > 0 {
		s.Problems = append(s.Problems, fmt.Sprintf("... and %d more", st.ProblemsOmitted))
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
	scan     *scanResult
	sum      *Summary
	led      *ledger
	notes    map[string]int
	progress *progressCounter
	w        *perfetto.Writer
	names    []string // the logs' names

	// Repeated records: captures left out per log, and recent spans.
	seed    maphash.Seed
	repeats [][]repeat
	recent  *recentSpans

	placer, containOnly *reduce.Placer
	freq                map[reduce.Domain]reduce.Hz
	devices             map[reduce.Domain]*DeviceSummary

	cal        []loadedCalibration
	procTracks map[int32]perfetto.Track
	lanes      map[laneKey]perfetto.Track
	devLanes   map[devLane]perfetto.Track
	shift      []int64        // per log: added to its host timestamps (another host's clock)
	args       []perfetto.Arg // reused for each slice's arguments
	lastHid    uint64
	lastHidStr string
	// covered and drawnSegments are run's scratch sets of bind segments.
	covered, drawnSegments map[string]bool
	records                map[invKey][]strace.PhasePass // host_phase_records by (pid, inv)

	pending   map[invKey]*invBuf
	openRoots map[laneKey]*invBuf // per thread and slot, its run whose root came first
	order     int64               // arrival counter, for the oldest pending run
	bindLines []bindLine
	flows     flowWindow
	nextFlow  perfetto.FlowID
	handed    int // slices handed to the writer since the last flush
	now       int64
}

type invKey struct {
	pid int32
	inv uint64
}

// heldSpan is a span waiting to be drawn, with where it was read.
type heldSpan struct {
	strace.Span
	at where
}

// invBuf holds one run's spans until its root comes.
type invBuf struct {
	key   invKey
	first int64      // arrival order of its first span
	host  []heldSpan // its host spans, in log order
	dev   []heldSpan // its device (clk=dev) spans, in log order
	// bindLogT is the log-prefix thread handle of its chip.run.bind: the
	// legacy bind phase lines of that bind carry the same handle.
	bindLogT uint64
	// openOn is the thread and slot whose open root this run is, when its
	// root came first.
	openOn *laneKey
}

// bindLine is a legacy "bind phase=" line waiting for the chip.run.bind
// that contains it.
type bindLine struct {
	rec  strace.BindPhase
	at   where
	logT uint64 // the log prefix's thread handle
}

// maxBindLines bounds the bind-phase lines waiting for their bind.
const maxBindLines = 4096

func (c *converter) note(kind, format string, args ...any) {
	c.sum.note(kind, c.notes, format, args...)
}

// flowID returns a fresh flow id: ids count up, so no two hand-offs share
// one whatever their spans hold.
func (c *converter) flowID() perfetto.FlowID {
	c.nextFlow++
	return c.nextFlow
}

// declareTracks writes the process tracks in their order (scheduler parents
// first, then chip children, then external producers, each by pid), the
// wall-clock anchors that agree, and every thread's name.
func (c *converter) declareTracks() {
	c.procTracks = map[int32]perfetto.Track{}
	procs := make([]*procInfo, 0, len(c.scan.procs))
	for _, p := range c.scan.procs {
		procs = append(procs, p)
	}
	sort.Slice(procs, func(i, j int) bool {
		if a, b := procs[i].rank(), procs[j].rank(); a != b {
			return a < b
		}
		return procs[i].pid < procs[j].pid
	})
	for i, p := range procs {
		if t, ok := c.newTrack(func() perfetto.Track {
			return c.w.Process(perfetto.ProcessSpec{Pid: p.pid, Name: p.label(), SortIndex: int32(i + 1)})
		}); ok {
			c.procTracks[p.pid] = t
		}
	}
	c.wallClocks(procs)
	threads := make([]*threadInfo, 0, len(c.scan.threads))
	for _, t := range c.scan.threads {
		threads = append(threads, t)
	}
	sort.Slice(threads, func(i, j int) bool {
		if threads[i].key.pid != threads[j].key.pid {
			return threads[i].key.pid < threads[j].key.pid
		}
		return threads[i].key.tid < threads[j].key.tid
	})
	for _, t := range threads {
		if t.split {
			continue // its runs go to slot lanes; its own track appears only if something lands on it
		}
		c.threadTrack(t.key.pid, t.key.tid)
	}
}

// wallTolerance is how far apart two wall-clock anchors' offsets (wall −
// mono) may be and still describe one clock: NTP slews the wall clock by far
// less; a larger gap means a clock that was set, or a log from another boot.
const wallTolerance = hostGap

// wallClocks writes the wall-clock anchors as REALTIME snapshots. The first
// anchor (by pid, then log order) sets the wall clock's offset; an anchor
// whose offset disagrees with it by more than wallTolerance is set aside
// and counted, and a process that wrote more than one anchor is noted (the
// runtime writes one per process).
func (c *converter) wallClocks(procs []*procInfo) {
	var ref *strace.WallAnchor
	for _, p := range procs {
		if len(p.wall) > 1 {
			c.note("wall", "pid %d wrote %d wall-clock anchors ([CLOCK_ANCHOR] v=1; one per process is expected): %s and %s", p.pid, len(p.wall), c.led.at(c.led.where(p.wallAt[0])), c.led.at(c.led.where(p.wallAt[1])))
		}
		for j, wa := range p.wall {
			if ref == nil {
				ref = &p.wall[j]
			}
			d, ok1 := subInt64(wa.WallNS-wa.MonoNS, ref.WallNS-ref.MonoNS)
			if !ok1 || d > wallTolerance || d < -wallTolerance {
				c.led.notDrawn("wall-clock anchors that disagree with the first by more than 1 s", c.led.where(p.wallAt[j]),
					"pid "+itoa(int64(p.pid))+": wall − mono differs by "+itoa(d)+" ns from the anchor of pid "+itoa(int64(ref.Pid)), 1)
				continue
			}
			c.w.WallClock(wa.MonoNS, wa.WallNS)
			c.sum.WallAnchors++
		}
	}
	c.sum.WallTime = c.sum.WallAnchors > 0
}

func subInt64(a, b int64) (int64, bool) {
	d := a - b
	return d, (d < a) == (b > 0)
}

// newTrack creates a track unless the trace's track limit is reached.
func (c *converter) newTrack(mk func() perfetto.Track) (perfetto.Track, bool) {
	if c.w.TracksLeft() <= 0 {
		return perfetto.Track{}, false
	}
	t := mk()
	return t, !t.IsZero()
}

func (c *converter) processTrack(pid int32) (perfetto.Track, bool) {
	if t, ok := c.procTracks[pid]; ok {
		return t, true
	}
	p := c.scan.proc(pid)
	t, ok := c.newTrack(func() perfetto.Track { return c.w.Process(perfetto.ProcessSpec{Pid: pid, Name: p.label()}) })
	if ok {
		c.procTracks[pid] = t
	}
	return t, ok
}

// threadTrack is the real-tid lane of a thread (the zero Track past the
// track limit).
func (c *converter) threadTrack(pid int32, tid int64) perfetto.Track {
	k := laneKey{pid: pid, tid: tid, slot: -1}
	if t, ok := c.lanes[k]; ok {
		return t
	}
	if _, ok := c.processTrack(pid); !ok {
		return perfetto.Track{}
	}
	info := c.scan.thread(pid, tid)
	name := info.threadName()
	if info.split && len(info.producers) > 0 {
		// A split thread's runs are on slot lanes: what lands on its own
		// track is what it emitted outside them.
		name = "ext " + joinSorted(info.producers, "/")
	}
	t, ok := c.newTrack(func() perfetto.Track { return c.w.Thread(perfetto.ThreadSpec{Pid: pid, Tid: tid, Name: name}) })
	if ok {
		c.lanes[k] = t
	}
	return t
}

// laneKey names a lane: a thread's real-tid lane (slot -1) or one of its
// pipeline-slot lanes.
type laneKey struct {
	pid  int32
	tid  int64
	slot int64
}

// laneTrack is the lane of a run on thread (pid, tid) holding pipeline slot
// slot, when the thread is split; else its real-tid lane.
func (c *converter) laneTrack(pid int32, tid int64, slot int64, hasSlot bool) (perfetto.Track, bool) {
	t := c.scan.thread(pid, tid)
	if !t.split || !hasSlot || slot < 0 {
		return c.threadTrack(pid, tid), false
	}
	k := laneKey{pid: pid, tid: tid, slot: slot}
	if t, ok := c.lanes[k]; ok {
		return t, true
	}
	proc, ok := c.processTrack(pid)
	if !ok {
		return perfetto.Track{}, true
	}
	name := "pipeline slot " + itoa(slot) + " (tid " + itoa(tid) + ")"
	lane, ok := c.newTrack(func() perfetto.Track {
		return c.w.Track(proc, perfetto.TrackSpec{
			Name:        name,
			Key:         "lane " + itoa(tid) + "/" + itoa(slot),
			Description: "runs of thread " + itoa(tid) + " that held pipeline slot " + itoa(slot) + "; the thread drove several runs at once",
			Merge:       perfetto.MergeNone,
		})
	})
	if ok {
		c.lanes[k] = lane
	}
	return lane, true
}

// secondPass draws. Several logs are read together, record by record in the
// order they were written (by their log prefixes' monotonic time), so that
// logs of different processes merge on one axis as if they were one log,
// and hand-offs across them connect. It returns the readers' statistics of
// the logs it read, also when it fails.
func (c *converter) secondPass(logs []Input) (stats []strace.Stats, err error) {
	c.declareTracks()
	srcs := c.openSources(logs)
	defer func() {
		stats = srcs.close(&err)
	}()
	if srcs.openErr != nil {
		return nil, srcs.openErr
	}
	for {
		cur, err := srcs.next()
		if err != nil {
			return nil, err
		}
		if cur == nil {
			break
		}
		c.record(cur)
	}
	// The logs are over: draw what still waits.
	c.flows.drain(c, true)
	c.flushPending()
	for _, l := range c.bindLines {
		c.led.notDrawn("bind phase lines outside every chip.run.bind", l.at, "phase="+l.rec.Phase, 1)
	}
	c.bindLines = nil
	for _, ps := range c.records {
		for _, p := range ps {
			c.led.notDrawn("host_phase_records passes without their chip.run.bind", c.led.where(p.Pos), "pid="+itoa(int64(p.Pid))+" inv="+strconv.FormatUint(p.Inv, 10), 1)
		}
	}
	c.records = nil
	return nil, nil
}

// record takes the record the source holds: it is left out when it repeats
// an earlier one, else drawn (or held until its run is complete).
func (c *converter) record(s *source) {
	rec := s.rec
	at := line(s.file, rec.Pos.Line)
	if c.repeats == nil {
		// Nothing repeats.
	} else if r, ok := repeatOf(c.repeats[s.index], &s.repeat, rec.Pos.Line); ok {
		detail := "lines " + itoa(r.first) + "–" + itoa(r.last) + " repeat " + r.of
		if rec.Kind == strace.KindSpan {
			c.led.dropSpan(reasonRepeatedCapture, at, detail, 1)
		} else {
			c.led.notDrawn(reasonRepeatedCapture, at, detail, 1)
		}
		return
	}
	switch rec.Kind {
	case strace.KindSpan:
		c.span(rec, at)
	case strace.KindBindPhase:
		c.bindPhase(rec, at)
	}
}

// Reasons a span is not drawn.
const (
	reasonRepeatedCapture = "duplicate: a capture that repeats an earlier one byte for byte"
	reasonRepeatedSpan    = "duplicate: the same span again"
	reasonTrackLimit      = "over the trace's track limit"
)

// span takes one span.
func (c *converter) span(rec *strace.Record, at where) {
	sp := &rec.Span
	dev := sp.IsDevice()
	if reason, detail := checkSpan(sp, dev); reason != "" {
		c.led.dropSpan(reason, at, detail, 1)
		return
	}
	if c.recent.repeated(sp) {
		c.led.dropSpan(reasonRepeatedSpan, at, sp.Name, 1)
		return
	}
	if end := sp.End(); !dev && end > c.now {
		c.now = end
	}
	fam := strace.FamilyOf(sp.Name)
	switch {
	case dev || fam.HasInvocation():
		c.addToRun(rec, at, dev)
	case fam == strace.FamilyNode:
		c.flows.add(c, heldSpan{*sp, at})
	default: // ext.: on the thread that emitted it, never grouped into runs
		c.host(c.threadTrack(sp.Pid, sp.Tid), &heldSpan{*sp, at}, nil, false)
	}
	c.flows.drain(c, false)
	c.maybeFlush()
}

// checkSpan says why a span cannot be drawn at all: its interval is not one.
// A device span's ts may be negative (an offset before the run's origin);
// a host span's may not.
func checkSpan(sp *strace.Span, dev bool) (reason, detail string) {
	switch {
	case sp.Dur < 0:
		return "negative duration", "dur=" + itoa(sp.Dur)
	case !dev && sp.TS < 0:
		return "negative host timestamp", "ts=" + itoa(sp.TS)
	case sp.TS+sp.Dur < sp.TS:
		return "ts + dur beyond the int64 range", "ts=" + itoa(sp.TS) + " dur=" + itoa(sp.Dur)
	}
	return "", ""
}

func (c *converter) addToRun(rec *strace.Record, at where, dev bool) {
	sp := &rec.Span
	k := invKey{sp.Pid, sp.Inv}
	b := c.pending[k]
	if b == nil {
		if c.pending == nil {
			c.pending = map[invKey]*invBuf{}
		}
		if len(c.pending) >= c.cfg.maxPending {
			c.flushOldest()
		}
		c.order++
		b = &invBuf{key: k, first: c.order}
		c.pending[k] = b
	}
	// The record owns its attributes.
	if dev {
		b.dev = append(b.dev, heldSpan{*sp, at})
	} else {
		b.host = append(b.host, heldSpan{*sp, at})
	}
	if sp.Name == bindName && !dev {
		b.bindLogT = rec.Prefix.Thread
	}
	if sp.Depth != 0 || dev {
		return
	}
	// A root closes its run: the runtime writes a span when its scope
	// ends, so the root comes last. A root that comes first (a producer
	// that writes parents before children) keeps its run open for the
	// spans that follow, until the next root of its thread and pipeline
	// slot comes, or the log ends.
	tk := laneKey{sp.Pid, sp.Tid, -1}
	if a, ok := sp.Attr("slot_id"); ok && a.Type == strace.TypeInt {
		tk.slot = a.Int
	}
	if open := c.openRoots[tk]; open != nil && open != b {
		delete(c.pending, open.key)
		c.run(open)
	}
	if len(b.host) == 1 && len(b.dev) == 0 {
		if c.openRoots == nil {
			c.openRoots = map[laneKey]*invBuf{}
		}
		c.openRoots[tk] = b
		b.openOn = &tk
		return
	}
	delete(c.pending, k)
	c.run(b)
}

func (c *converter) flushOldest() {
	var oldest *invBuf
	for _, b := range c.pending {
		if oldest == nil || b.first < oldest.first {
			oldest = b
		}
	}
	if oldest != nil {
		delete(c.pending, oldest.key)
		c.run(oldest)
	}
}

// flushPending draws the runs still waiting (whose root never came, or
// came first), oldest first.
func (c *converter) flushPending() {
	bufs := make([]*invBuf, 0, len(c.pending))
	for _, b := range c.pending {
		bufs = append(bufs, b)
	}
	sort.Slice(bufs, func(i, j int) bool { return bufs[i].first < bufs[j].first })
	for _, b := range bufs {
		delete(c.pending, b.key)
		c.run(b)
	}
}

func (c *converter) bindPhase(rec *strace.Record, at where) {
	if len(c.bindLines) >= maxBindLines {
		l := c.bindLines[0]
		c.led.notDrawn("bind phase lines outside every chip.run.bind", l.at, "phase="+l.rec.Phase, 1)
		c.bindLines = c.bindLines[1:]
	}
	c.bindLines = append(c.bindLines, bindLine{rec: rec.BindPhase, at: at, logT: rec.Prefix.Thread})
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
	if sp.NameTruncated || sp.AttrsTruncated {
		args = append(args, perfetto.Bool("truncated_by_emitter", true))
	}
	args = append(args, extra...)
	if c.slice(t, perfetto.Slice{Name: sp.Name, TS: sp.TS, Dur: sp.Dur, Depth: sp.Depth, Args: args, Flows: flows, EndFlows: endFlows, Ref: uint64(sp.at)}, sp.at) {
		c.led.drawn()
	}
}

// slice hands one slice to the writer, unless its track is over the track
// limit or its interval is not one after placement (a device span mapped
// outside the int64 range); it reports whether it did. Callers count the
// slices of spans as drawn; the reasons it refuses are counted here.
func (c *converter) slice(t perfetto.Track, s perfetto.Slice, p where) bool {
	switch {
	case t.IsZero():
		c.led.dropSpan(reasonTrackLimit, p, s.Name, 1)
		return false
	case s.TS < 0 || s.Dur < 0 || s.TS+s.Dur < s.TS:
		c.led.dropSpan("placed outside the trace's time range", p, s.Name+" at "+itoa(s.TS)+" +"+itoa(s.Dur), 1)
		return false
	}
	c.w.Slice(t, s)
	c.handed++
	if cap(s.Args) > cap(c.args) {
		c.args = s.Args[:0] // the writer copied the arguments: reuse the buffer
	}
	return true
}

// overflowed counts a slice the writer moved to an overflow lane.
func (c *converter) overflowed(o perfetto.Overflow) {
	reason := "could not nest on its track"
	switch {
	case errors.Is(o.Err, perfetto.ErrOverlap):
		reason = "partially overlaps another slice on its track"
	case errors.Is(o.Err, perfetto.ErrTooDeep):
		reason = "nested deeper than the trace processor keeps (" + itoa(perfetto.MaxDepth) + " levels)"
	case errors.Is(o.Err, perfetto.ErrOutOfOrder), errors.Is(o.Err, perfetto.ErrUnverifiable):
		reason = "lies among slices drawn long before (time runs backwards)"
	}
	c.led.moved(reason, where(o.Ref), o.Name+" on "+o.Track+": "+o.Err.Error())
}

// maybeFlush lets the writer write what it holds once enough has been
// handed to it. It is called only between whole runs, so a run's tree is
// always resolved in one flush. An I/O error stops nothing here: the
// writer keeps it, and Convert returns it at the end.
func (c *converter) maybeFlush() {
	if c.handed >= c.cfg.flushSlices {
		c.handed = 0
		c.w.Flush()
	}
}

// appendAttrs adds a span's attributes as typed arguments, in order.
func appendAttrs(args []perfetto.Arg, attrs []strace.Attr) []perfetto.Arg {
	for _, a := range attrs {
		if a.Bare {
			args = append(args, perfetto.Bool(a.Key, true))
			continue
		}
		switch a.Type {
		case strace.TypeInt:
			args = append(args, perfetto.Int(a.Key, a.Int))
		case strace.TypeUint:
			args = append(args, perfetto.Uint(a.Key, a.Uint))
		default:
			args = append(args, perfetto.String(a.Key, a.Value))
		}
	}
	return args
}

func (c *converter) finish() {
	c.sum.Devices = c.sum.Devices[:0]
	for _, d := range sortedDomains(c.devices) {
		ds := c.devices[d]
		ds.Bound.finish()
		c.sum.Devices = append(c.sum.Devices, *ds)
	}
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

func hex(v uint64) string { return strconv.FormatUint(v, 16) }

// hidString is hex(hid), remembered: a run's spans share their hid, and a
// log has few callables.
func (c *converter) hidString(h uint64) string {
	if h == c.lastHid && c.lastHidStr != "" {
		return c.lastHidStr
	}
	c.lastHid, c.lastHidStr = h, hex(h)
	return c.lastHidStr
}
