package phasetrace

import (
	"errors"
	"fmt"
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
	// DefaultFlushSlices is how many slices the converter hands to the
	// trace writer between flushes, which bounds its memory.
	DefaultFlushSlices = 1 << 12
	// DefaultMaxPending bounds the runs whose root span has not come yet;
	// past it the oldest is drawn as found and counted incomplete.
	DefaultMaxPending = 4096
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

// WithProgress calls fn with the number of input bytes read so far (both
// passes count), now and then.
func WithProgress(fn func(read int64)) Option { return func(c *config) { c.progress = fn } }

// ErrNoInput is returned by Convert when it is given no log.
var ErrNoInput = errors.New("phasetrace: no input log")

// Convert reads the runtime logs and writes one Perfetto trace to w: host
// spans on their process and thread tracks (a thread that interleaves runs
// split into pipeline-slot lanes), device phases on device tracks placed on
// the host timeline with a published bound, node.submit → node.dispatch
// hand-offs as flows, the bind stage's segments, and wall time where a
// [CLOCK_ANCHOR] is known. It returns a summary of what was read, written,
// placed and not drawn.
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
	cfg := config{flowHorizon: DefaultFlowHorizon, flushSlices: DefaultFlushSlices, maxPending: DefaultMaxPending, maxLine: strace.DefaultMaxLine}
	for _, o := range opts {
		o(&cfg)
	}
	c := &converter{cfg: cfg, scan: newScan(), sum: &Summary{}, notes: map[string]int{}, lanes: map[laneKey]perfetto.Track{}, devLanes: map[devLane]perfetto.Track{},
		covered: map[string]bool{}, drawnSegments: map[string]bool{}}
	c.progress = &progressCounter{fn: cfg.progress}

	// Pass 1.
	for i, in := range logs {
		c.scan.input = i
		if err := c.withInput(in, func(r io.Reader) error {
			_, err := c.scan.scanLog(r, in.Name, cfg.maxLine)
			return err
		}); err != nil {
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
	c.w = perfetto.NewWriter(w, cfg.writer...)
	c.declareTracks()
	stats, err := c.convertLogs(logs)
	if err != nil {
		return nil, err
	}
	for i, in := range logs {
		c.sum.Inputs = append(c.sum.Inputs, inputSummary(in.Name, stats[i]))
	}
	c.finish()
	err = c.w.Close()
	ws := c.w.Stats()
	c.sum.Output = OutputSummary{Bytes: ws.Bytes, Packets: ws.Packets, Tracks: ws.Tracks, Slices: ws.Slices, Instants: ws.Instants, Flows: ws.Flows, Counters: ws.Counters}
	c.sum.notDrawn("refused by the trace writer (see the error)", ws.Dropped)
	if err != nil {
		return c.sum, fmt.Errorf("phasetrace: writing the trace: %w", err)
	}
	return c.sum, nil
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
	notes    map[string]int
	progress *progressCounter
	w        *perfetto.Writer

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
	order     int64 // arrival counter, for the oldest pending run
	bindLines []bindLine
	flows     flowWindow
	handed    int // slices handed to the writer since the last flush
	now       int64
}

type invKey struct {
	pid int32
	inv uint64
}

// invBuf holds one run's spans until its root comes.
type invBuf struct {
	key   invKey
	first int64         // arrival order of its first span
	host  []strace.Span // its host spans, in log order
	dev   []strace.Span // its device (clk=dev) spans, in log order
	// bindLogT is the log-prefix thread handle of its chip.run.bind: the
	// legacy bind phase lines of that bind carry the same handle.
	bindLogT uint64
}

// bindLine is a legacy "bind phase=" line waiting for the chip.run.bind
// that contains it.
type bindLine struct {
	rec  strace.BindPhase
	logT uint64 // the log prefix's thread handle
}

// maxBindLines bounds the bind-phase lines waiting for their bind.
const maxBindLines = 4096

func (c *converter) note(kind, format string, args ...any) {
	c.sum.note(kind, c.notes, format, args...)
}

// declareTracks writes the process tracks in their order (scheduler parents
// first, then chip children, then external producers, each by pid) and
// every thread's name.
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
		c.procTracks[p.pid] = c.w.Process(perfetto.ProcessSpec{Pid: p.pid, Name: p.label(), SortIndex: int32(i + 1)})
		for _, wa := range p.wall {
			c.w.WallClock(wa.MonoNS, wa.WallNS)
			c.sum.WallAnchors++
		}
	}
	c.sum.WallTime = c.sum.WallAnchors > 0
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

func (c *converter) processTrack(pid int32) perfetto.Track {
	if t, ok := c.procTracks[pid]; ok {
		return t
	}
	p := c.scan.proc(pid)
	t := c.w.Process(perfetto.ProcessSpec{Pid: pid, Name: p.label()})
	c.procTracks[pid] = t
	return t
}

// threadTrack is the real-tid lane of a thread.
func (c *converter) threadTrack(pid int32, tid int64) perfetto.Track {
	k := laneKey{pid: pid, tid: tid, slot: -1}
	if t, ok := c.lanes[k]; ok {
		return t
	}
	c.processTrack(pid)
	t := c.w.Thread(perfetto.ThreadSpec{Pid: pid, Tid: tid, Name: c.scan.thread(pid, tid).threadName()})
	c.lanes[k] = t
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
	name := "pipeline slot " + itoa(slot) + " (tid " + itoa(tid) + ")"
	lane := c.w.Track(c.processTrack(pid), perfetto.TrackSpec{
		Name:        name,
		Key:         "lane " + itoa(tid) + "/" + itoa(slot),
		Description: "runs of thread " + itoa(tid) + " that held pipeline slot " + itoa(slot) + "; the thread drove several runs at once",
		Merge:       perfetto.MergeNone,
	})
	c.lanes[k] = lane
	return lane, true
}

// source is one log of the second pass and its next record. A goroutine
// parses the log ahead of the conversion (on another core) and hands over
// batches of records that own their memory.
type source struct {
	in      Input
	rc      io.ReadCloser
	rd      *strace.Reader
	batches chan recordBatch
	batch   recordBatch
	pos     int
	rec     *strace.Record
	key     int64 // when the record was written (its prefix's mono_ns)
	done    bool
	shift   int64 // added to the log's host times
}

type recordBatch struct {
	recs []strace.Record
	err  error
}

// internTable canonicalises the strings a log repeats (span names,
// attribute keys), up to maxInterned distinct ones.
type internTable struct{ m map[string]string }

const maxInterned = 1 << 14

func (t *internTable) of(s string) string {
	if c, ok := t.m[s]; ok {
		return c
	}
	if len(t.m) < maxInterned {
		t.m[s] = s
	}
	return s
}

// attrArena hands out attribute slices carved from larger blocks.
type attrArena struct{ block []strace.Attr }

const attrBlock = 4096

// copy returns a copy of attrs that no later copy overlaps (its capacity is
// its length).
func (a *attrArena) copy(attrs []strace.Attr) []strace.Attr {
	if len(attrs) == 0 {
		return nil
	}
	if len(a.block)+len(attrs) > cap(a.block) {
		a.block = make([]strace.Attr, 0, max(attrBlock, len(attrs)))
	}
	n := len(a.block)
	a.block = append(a.block, attrs...)
	return a.block[n : n+len(attrs) : n+len(attrs)]
}

// batchSize is how many records a parsing goroutine hands over at once.
const batchSize = 256

// parse runs in its own goroutine: it reads the log and sends its records
// (spans and bind-phase lines, the records the second pass draws) in
// batches, then closes the channel. stop ends it early.
func (s *source) parse(stop <-chan struct{}) {
	defer close(s.batches)
	b := make([]strace.Record, 0, batchSize)
	names := internTable{m: map[string]string{}}
	var arena attrArena
	send := func(err error) bool {
		select {
		case s.batches <- recordBatch{recs: b, err: err}:
			b = make([]strace.Record, 0, batchSize)
			return true
		case <-stop:
			return false
		}
	}
	for {
		rec, err := s.rd.Read()
		if err == io.EOF {
			if len(b) > 0 {
				send(nil)
			}
			return
		}
		if err != nil {
			send(err)
			return
		}
		if rec.Kind != strace.KindSpan && rec.Kind != strace.KindBindPhase {
			continue
		}
		// The record owns its attributes from here: copied into a shared
		// arena (one allocation for many records, not one each).
		rec.Span.Attrs = arena.copy(rec.Span.Attrs)
		rec.BindPhase.Attrs = arena.copy(rec.BindPhase.Attrs)
		if rec.Kind == strace.KindSpan {
			// One string per distinct name and key: the trace writer then
			// knows repeats by their address instead of hashing them again.
			rec.Span.Name = names.of(rec.Span.Name)
			for i := range rec.Span.Attrs {
				a := &rec.Span.Attrs[i]
				a.Key = names.of(a.Key)
				if a.Type == strace.TypeString && len(a.Value) <= 64 {
					a.Value = names.of(a.Value) // short values repeat: roles, clk=dev, ...
				}
			}
		}
		b = append(b, rec)
		if len(b) == batchSize && !send(nil) {
			return
		}
	}
}

func (s *source) next() error {
	for s.pos >= len(s.batch.recs) {
		b, ok := <-s.batches
		if !ok {
			s.done = true
			return nil
		}
		if b.err != nil {
			return fmt.Errorf("phasetrace: %s: %w", s.in.Name, b.err)
		}
		s.batch, s.pos = b, 0
	}
	s.rec = &s.batch.recs[s.pos]
	s.pos++
	if d := s.shift; d != 0 {
		// A log from another host: move its host times onto the first
		// log's axis (device-clock spans keep their device offsets).
		s.rec.Prefix.MonoNS += d
		switch {
		case s.rec.Kind == strace.KindSpan && !s.rec.Span.IsDevice():
			s.rec.Span.TS += d
		case s.rec.Kind == strace.KindBindPhase:
			s.rec.BindPhase.StartNS = uint64(int64(s.rec.BindPhase.StartNS) + d)
		}
	}
	if s.rec.Prefix.Present {
		s.key = s.rec.Prefix.MonoNS // a record without a prefix keeps its place
	}
	return nil
}

// convertLogs is the second pass. Several logs are read together, record by
// record in the order they were written (by their log prefixes' monotonic
// time), so that logs of different processes merge on one axis as if they
// were one log, and hand-offs across them connect.
func (c *converter) convertLogs(logs []Input) ([]strace.Stats, error) {
	srcs := make([]*source, len(logs))
	stop := make(chan struct{})
	defer func() {
		close(stop)
		for _, s := range srcs {
			if s == nil {
				continue
			}
			for range s.batches { // let the parser finish before closing its input
			}
			if s.rc != nil {
				s.rc.Close()
			}
		}
	}()
	for i, in := range logs {
		rc, err := in.Open()
		if err != nil {
			return nil, fmt.Errorf("phasetrace: %s: %w", in.Name, err)
		}
		s := &source{in: in, rc: rc, rd: strace.NewReader(c.progress.wrap(rc), strace.WithName(in.Name), strace.WithMaxLine(c.cfg.maxLine)),
			batches: make(chan recordBatch, 4), shift: c.shift[i]}
		srcs[i] = s
		go s.parse(stop)
	}
	for _, s := range srcs {
		if err := s.next(); err != nil {
			return nil, err
		}
	}
	for {
		var cur *source
		for _, s := range srcs {
			if !s.done && (cur == nil || s.key < cur.key) {
				cur = s
			}
		}
		if cur == nil {
			break
		}
		switch cur.rec.Kind {
		case strace.KindSpan:
			c.span(&cur.rec.Span, cur.rec.Prefix.Thread)
		case strace.KindBindPhase:
			c.bindPhase(cur.rec)
		}
		if err := cur.next(); err != nil {
			return nil, err
		}
	}
	// The logs are over: draw what still waits.
	c.flows.drain(c, true)
	c.flushPending()
	c.sum.notDrawn("bind phase lines outside every chip.run.bind", int64(len(c.bindLines)))
	c.bindLines = nil
	left := 0
	for _, ps := range c.records {
		left += len(ps)
	}
	c.sum.notDrawn("host_phase_records passes without their chip.run.bind", int64(left))
	c.records = nil
	stats := make([]strace.Stats, len(srcs))
	for i, s := range srcs {
		stats[i] = s.rd.Stats() // the parser is done: its channel is closed
		err := s.rc.Close()
		s.rc = nil
		if err != nil {
			return nil, fmt.Errorf("phasetrace: %s: %w", s.in.Name, err)
		}
	}
	return stats, nil
}

// span takes one span; logT is the thread handle of its log prefix (0 when
// it had none).
func (c *converter) span(sp *strace.Span, logT uint64) {
	dev := sp.IsDevice()
	if end := sp.End(); !dev && end > c.now {
		c.now = end
	}
	fam := strace.FamilyOf(sp.Name)
	switch {
	case dev || fam.HasInvocation():
		c.addToRun(sp, dev, logT)
	case fam == strace.FamilyNode:
		c.flows.add(c, *sp)
	default: // ext.: on the thread that emitted it, never grouped into runs
		c.host(c.threadTrack(sp.Pid, sp.Tid), sp, nil, false)
	}
	c.flows.drain(c, false)
	c.maybeFlush()
}

func (c *converter) addToRun(sp *strace.Span, dev bool, logT uint64) {
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
		b.dev = append(b.dev, *sp)
	} else {
		b.host = append(b.host, *sp)
	}
	if sp.Name == bindName && !dev {
		b.bindLogT = logT
	}
	if sp.Depth == 0 && !dev {
		delete(c.pending, k)
		c.run(b, true)
	}
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
		c.run(oldest, false)
	}
}

// flushPending draws the runs whose root never came, oldest first.
func (c *converter) flushPending() {
	bufs := make([]*invBuf, 0, len(c.pending))
	for _, b := range c.pending {
		bufs = append(bufs, b)
	}
	sort.Slice(bufs, func(i, j int) bool { return bufs[i].first < bufs[j].first })
	for _, b := range bufs {
		delete(c.pending, b.key)
		c.run(b, false)
	}
}

func (c *converter) bindPhase(rec *strace.Record) {
	if len(c.bindLines) >= maxBindLines {
		c.sum.notDrawn("bind phase lines outside every chip.run.bind", 1)
		c.bindLines = c.bindLines[1:]
	}
	c.bindLines = append(c.bindLines, bindLine{rec: rec.BindPhase, logT: rec.Prefix.Thread})
}

// host hands one host span to the writer on track t, with its identity and
// every attribute as typed arguments.
func (c *converter) host(t perfetto.Track, sp *strace.Span, extra []perfetto.Arg, laneSplit bool) {
	c.hostFlows(t, sp, extra, laneSplit, nil, nil)
}

// hostFlows is host with flows attached: flows start or continue at the
// span, endFlows end there.
func (c *converter) hostFlows(t perfetto.Track, sp *strace.Span, extra []perfetto.Arg, laneSplit bool, flows, endFlows []perfetto.FlowID) {
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
	c.slice(t, perfetto.Slice{Name: sp.Name, TS: sp.TS, Dur: sp.Dur, Depth: sp.Depth, Args: args, Flows: flows, EndFlows: endFlows})
}

func (c *converter) slice(t perfetto.Track, s perfetto.Slice) {
	c.w.Slice(t, s)
	c.handed++
	if cap(s.Args) > cap(c.args) {
		c.args = s.Args[:0] // the writer copied the arguments: reuse the buffer
	}
}

// maybeFlush lets the writer write what it holds once enough has been
// handed to it. It is called only between whole runs, so a run's tree is
// always resolved in one flush.
func (c *converter) maybeFlush() {
	if c.handed >= c.cfg.flushSlices {
		c.handed = 0
		if err := c.w.Flush(); err != nil {
			c.note("writer", "%v", err)
		}
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
