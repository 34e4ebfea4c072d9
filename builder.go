package phasetrace

import (
	"errors"
	"fmt"
	"hash/maphash"
	"io"

	"github.com/phasetrace/phasetrace/perfetto"
	"github.com/phasetrace/phasetrace/reduce"
	"github.com/phasetrace/phasetrace/strace"
)

// Survey is what a Builder must know before it draws anything: which
// threads interleave runs (and are split into pipeline-slot lanes), what to
// call each process and thread, every clock anchor, and the
// host_phase_records and calibration artifacts. Convert fills one from a
// first pass over the logs; a Go program that holds its values in memory
// gives them to a Survey first, then to the Builder.
//
// What a Survey does not know is drawn all the same, only less well: a
// thread whose runs overlap but that the Survey never saw is not split
// (its overlapping runs go to an overflow lane), a process it never saw is
// labelled from what is drawn first, and a device run is placed with the
// anchors known when it is drawn.
type Survey struct {
	scan    *scanResult
	records map[invKey][]strace.PhasePass
	cal     []loadedCalibration
	n       int64 // values given, for positions
	// machines are the remote machines values came from (remote_values.go).
	machines *surveyMachines
}

// NewSurvey returns an empty Survey.
func NewSurvey() *Survey {
	return &Survey{scan: newScan(), records: map[invKey][]strace.PhasePass{}}
}

// Span learns from a span: its process and thread (named by the families
// and roles of what they emit) and, for a run's root, whether its thread
// interleaves runs. Give every span the Builder will be given (or at least
// every depth-0, node., ext. and device_wall span: those are the ones it
// learns from).
func (s *Survey) Span(sp strace.Span) {
	s.scan.remote.span(0, &sp) // the tasks sent to remote workers, if any
	s.scan.scanSpan(&sp)
}

// WallAnchor adds a [CLOCK_ANCHOR] v=1 wall-clock anchor.
func (s *Survey) WallAnchor(a strace.WallAnchor) {
	s.n++
	s.scan.scanRecord(&strace.Record{Kind: strace.KindWallAnchor, WallAnchor: a, Pos: strace.Pos{File: valuesName, Line: s.n}})
}

// DeviceAnchor adds a [CLOCK_ANCHOR] v=2 device clock anchor.
func (s *Survey) DeviceAnchor(a strace.DeviceAnchor) {
	s.scan.scanRecord(&strace.Record{Kind: strace.KindDeviceAnchor, DeviceAnchor: a})
}

// PhasePass adds one pass of the runtime's host_phase_records artifact:
// its records are drawn inside the chip.run.bind of its (pid, inv), and the
// threads that recorded them are named after them.
func (s *Survey) PhasePass(p strace.PhasePass) {
	k := invKey{p.Pid, p.Inv}
	s.records[k] = append(s.records[k], p)
	if s.scan.recordPids == nil {
		s.scan.recordPids = map[int32]bool{}
	}
	s.scan.recordPids[p.Pid] = true
	for _, r := range p.Records {
		s.scan.markRecordThread(p.Pid, r)
	}
}

// Calibration adds the runtime's clock-calibration samples of device dev
// of process pid: its valid samples are clock anchors.
func (s *Survey) Calibration(pid int32, dev int64, c *strace.Calibration) {
	s.cal = append(s.cal, loadedCalibration{pid: pid, dev: dev, cal: c, summary: -1})
}

// valuesName is the name positions of values given to a Builder or a
// Survey are reported under: "values:N" is the N-th value given.
const valuesName = "values"

// Builder writes one Perfetto trace from Go values — host and device spans,
// legacy bind phase lines, raw device-phase buffers — exactly as Convert
// writes it from logs: Convert is a Builder fed by the log readers. Give it
// values in the order the runtime wrote them (a span when it ended, a run's
// spans before its root, as the runtime logs them; a root given before its
// run's other spans keeps the run open until the next root of its thread).
// Every bad value is counted in the Summary, never an error; positions of
// values are "values:N", the N-th value given. A Builder is not safe for
// concurrent use, and must be closed.
type Builder struct {
	c      *converter
	file   uint64
	n      int64
	closed bool
}

// ErrBuilderClosed is returned for values given to a closed Builder.
var ErrBuilderClosed = errors.New("phasetrace: builder is closed")

// NewBuilder returns a Builder that writes to w what survey s says (nil: an
// empty Survey) and the values it is given. The options are Convert's;
// those that name inputs (WithPhaseRecords, WithCalibration) are read
// now, and an error reading them is returned.
func NewBuilder(w io.Writer, s *Survey, opts ...Option) (*Builder, error) {
	c := newConverter(opts)
	if s == nil {
		s = NewSurvey()
	}
	c.survey = s
	c.scan = s.scan
	shift := c.planValues(s)
	if err := c.loadArtifacts(); err != nil {
		return nil, err
	}
	c.start(w, shift)
	return &Builder{c: c, file: c.led.file(valuesName)}, nil
}

func (b *Builder) next() where {
	b.n++
	return line(b.file, b.n)
}

// Span draws a host span, or a device span (clk=dev) of its run. The
// Builder copies what it keeps.
func (b *Builder) Span(sp strace.Span) error {
	if b.closed {
		return ErrBuilderClosed
	}
	b.c.sum.Spans.Read++
	rec := strace.Record{Kind: strace.KindSpan, Span: sp.Clone()}
	b.c.span(&rec, b.next())
	return nil
}

// BindPhase draws a legacy "bind phase=" line inside the chip.run.bind
// that contains it, written by the thread whose log-prefix handle is
// thread (0: any).
func (b *Builder) BindPhase(p strace.BindPhase, thread uint64) error {
	if b.closed {
		return ErrBuilderClosed
	}
	rec := strace.Record{Kind: strace.KindBindPhase, BindPhase: p.Clone(), Prefix: strace.Prefix{Thread: thread}}
	b.c.bindPhase(&rec, b.next())
	return nil
}

// DeviceAnchor adds a device clock anchor now: runs drawn after it are
// placed with it.
func (b *Builder) DeviceAnchor(a strace.DeviceAnchor) error {
	if b.closed {
		return ErrBuilderClosed
	}
	b.c.addAnchor(a)
	return nil
}

// Close draws what still waits (runs whose root never came, hand-offs
// waiting for their other end), writes the rest of the trace and returns
// the summary. The error is an I/O error of w; a second Close returns
// ErrBuilderClosed.
func (b *Builder) Close() (*Summary, error) {
	if b.closed {
		return nil, ErrBuilderClosed
	}
	b.closed = true
	b.c.drain()
	return b.c.close()
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
			flows, endFlows = c.remoteFlows(&sp.Span, flows, endFlows)
			c.hostFlows(c.tracks.thread(sp.Pid, sp.Tid), sp, nil, false, flows, endFlows)
		},
		linked:   c.arrows.add,
		unlinked: c.led.unlinked,
		sameHost: c.sameHost,
		drawable: func(sp *heldSpan) bool { return !c.tracks.thread(sp.Pid, sp.Tid).IsZero() },
	}
	c.arrows.linked, c.arrows.unlinked = sum.flow, c.led.unlinked
	c.arrows.drawable = func(e arrowEnd) bool { return !c.tracks.thread(e.pid, e.tid).IsZero() }
	return c
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
	c.wallClocks(c.tracks.declare())
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

// DeviceBuffer is one run's raw device-phase buffer as the host reads it
// back from the device (package reduce documents the layout), with what
// the buffer itself does not say: how many AICPU threads wrote it, the
// counter's frequency, and the run it belongs to.
type DeviceBuffer struct {
	Data    []byte
	Threads int    // AICPU threads the buffer was written for
	Freq    uint64 // device counter frequency in Hz
	Pid     int32  // the chip child that ran it
	Tid     int64  // the thread that logs its spans (0: Pid)
	Inv     uint64 // the run's invocation id
	Hid     uint64 // its callable hash
	Dev     int32  // the device it ran on
}

// DeviceBuffer reduces a raw device-phase buffer across its threads and
// draws the run's device phases, placed like the device spans the runtime
// logs — with one difference: from a buffer, RunWall's true start is
// known, so device_wall is drawn where it really began rather than as the
// runtime's bracket at the origin. Give a run's buffer before its root
// span, as the runtime logs device spans before chip.run. A buffer that
// does not decode or reduce is counted in the summary (NotDrawn), not
// returned: the error is only for misuse (no data, no thread count, no
// frequency).
func (b *Builder) DeviceBuffer(db DeviceBuffer) error {
	switch {
	case b.closed:
		return ErrBuilderClosed
	case len(db.Data) == 0 || db.Threads <= 0 || db.Freq == 0:
		return fmt.Errorf("%w: a device buffer needs its data, thread count and frequency", ErrInvalidInput)
	}
	at := b.next()
	spans, wall, err := reduceBuffer(db)
	if err != nil {
		b.c.led.notDrawn(ReasonDeviceBuffers, at, err.Error(), 1)
		return nil
	}
	for _, sp := range spans {
		b.c.sum.Spans.Read++
		rec := strace.Record{Kind: strace.KindSpan, Span: sp}
		b.c.span(&rec, at)
	}
	if wall != nil {
		if run := b.c.runs.waiting(invKey{db.Pid, db.Inv}); run != nil {
			run.wall = wall
		}
	}
	return nil
}

// reduceBuffer turns a raw buffer into the device spans the runtime would
// log for it, and RunWall's true extent.
func reduceBuffer(db DeviceBuffer) ([]strace.Span, *reduce.DeviceWindow, error) {
	buf, err := reduce.DecodeBuffer(db.Data, db.Threads)
	if err != nil {
		return nil, nil, err
	}
	red, err := reduce.Reduce(buf, reduce.Hz(db.Freq))
	if err != nil {
		return nil, nil, err
	}
	ds, err := red.Spans()
	if err != nil {
		return nil, nil, err
	}
	tid := db.Tid
	if tid == 0 {
		tid = int64(db.Pid)
	}
	out := make([]strace.Span, len(ds))
	for i, s := range ds {
		attrs := []strace.Attr{strace.String("clk", "dev")}
		if s.Name == strace.SpanDeviceWall {
			attrs = append(attrs, strace.Uint("origin_cyc", uint64(red.Origin)), strace.Int("dev", int64(db.Dev)))
		}
		out[i] = strace.Span{Pid: db.Pid, Tid: tid, Inv: db.Inv, Hid: db.Hid, Depth: int32(s.Depth), Name: s.Name, TS: int64(s.TS), Dur: int64(s.Dur), Attrs: attrs}
	}
	var wall *reduce.DeviceWindow
	if s, e, ok, err := red.WallOffset(); err == nil && ok {
		wall = &reduce.DeviceWindow{Start: s, End: e}
	}
	return out, wall, nil
}
