package perfetto

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"google.golang.org/protobuf/encoding/protowire"
)

// Defaults of the writer's options.
const (
	// DefaultFlushThreshold is how many encoded bytes the writer buffers
	// before it writes them to the underlying io.Writer.
	DefaultFlushThreshold = 256 << 10
	// DefaultInternLimit is how many interned strings a sequence may hold
	// before the writer clears its incremental state and starts again,
	// which bounds the writer's memory on inputs with unbounded distinct
	// names or values.
	DefaultInternLimit = 1 << 16
	// DefaultBundleSize is how many bytes of packets go into one
	// compressed bundle when compression is on: under 512 KiB, as Perfetto
	// wants them, and large enough that restarting the deflate's window at
	// each bundle costs little (0.3% of a runtime log's trace against
	// 256 KiB bundles).
	DefaultBundleSize = 448 << 10
	// DefaultCompressionLevel is the deflate level to give WithCompression
	// for a small trace at little cost: with the writer's field order,
	// level 6 of the deflate package it uses makes a runtime log's trace a
	// little smaller than compress/zlib's level 5 made it in the schema's
	// order, in a third of the time.
	DefaultCompressionLevel = 6
	// DefaultMaxTracks is how many tracks a Writer declares before it
	// refuses more (WithMaxTracks). A track with a slice costs the writer
	// about 540 bytes, one with 32 slices about 2.1 KB (its state, its
	// packet sequence, a few interned strings, the top-level slices it
	// remembers; see the package documentation), so the default bounds
	// that part of its memory near 35 MB, or 140 MB with 32 slices a
	// track: far above the few thousand threads a real log has, and far
	// below what an input with a corrupt thread id on every line would
	// otherwise cost.
	DefaultMaxTracks = 1 << 16
)

// maxErrors is how many data errors a Writer keeps for Err; later ones are
// only counted in Stats.Errors.
const maxErrors = 16

// Clock ids the writer uses (BuiltinClock and a sequence-scoped clock).
const (
	clockRealtime    = 1  // BUILTIN_CLOCK_REALTIME: wall time, ns since the Unix epoch
	clockMonotonic   = 3  // BUILTIN_CLOCK_MONOTONIC: the trace clock, CLOCK_MONOTONIC ns
	clockBoottime    = 6  // BUILTIN_CLOCK_BOOTTIME: declared equal to MONOTONIC (see Writer)
	clockIncremental = 64 // sequence-scoped: CLOCK_MONOTONIC ns as deltas from the previous packet
)

// globalSequence carries the clock snapshots and track descriptors.
const globalSequence = 1

// Option configures a Writer.
type Option func(*config)

type config struct {
	flushThreshold int
	internLimit    int
	bundleSize     int
	delta          bool
	compress       bool
	level          int
	maxTracks      int
	overflow       func(Overflow)
	refusal        func(Refusal)
	spillAt        int // bundleSize with compression, flushThreshold without
}

// WithFlushThreshold sets how many bytes are buffered before they are
// written to the underlying io.Writer (default DefaultFlushThreshold).
func WithFlushThreshold(n int) Option {
	return func(c *config) {
		if n > 0 {
			c.flushThreshold = n
		}
	}
}

// WithDeltaTimestamps turns delta-encoded timestamps on or off (default on).
// With them on, each track's events are timestamped on an incremental clock
// as the difference from the previous event, which shrinks the trace;
// an event earlier than its predecessor is written with an absolute
// CLOCK_MONOTONIC timestamp instead.
func WithDeltaTimestamps(on bool) Option { return func(c *config) { c.delta = on } }

// WithCompression bundles packets and compresses each bundle as a zlib
// stream at the given level, 1 (fastest) to 9 (smallest); 0 turns
// compression off, the default. The deflate is github.com/klauspost/compress's,
// whose levels trade speed for size differently from compress/zlib's: its
// levels 1 to 6 are fast encoders of their own, 7 to 9 the classic lazy
// matcher (DefaultCompressionLevel is the level to use when in doubt). The
// trace processor and ui.perfetto.dev inflate such bundles
// (TracePacket.compressed_packets) transparently. Bundles are
// compressed and written, in order, by a goroutine of the Writer's own,
// which Close ends: a Writer with compression must be closed, even after an
// error. A panic of the io.Writer on that goroutine is recovered there and
// raised again on the caller's goroutine, by the next call that hands over
// a bundle, by Flush or by Close.
func WithCompression(level int) Option {
	return func(c *config) {
		c.compress = level != 0
		c.level = level
	}
}

// WithMaxTracks sets how many tracks the Writer declares, counting
// processes, threads, custom and counter tracks and overflow lanes
// (default DefaultMaxTracks). Past the limit, Process, Thread, Track and
// CounterTrack return the zero Track and count the refusal in
// Stats.TracksRefused; the first refusal is a data error wrapping
// ErrTooManyTracks. Events given on the zero Track after a refusal are
// counted in Stats.Dropped without more errors. TracksLeft tells a caller
// how many tracks it may still declare.
func WithMaxTracks(n int) Option {
	return func(c *config) {
		if n > 0 {
			c.maxTracks = n
		}
	}
}

// WithInternLimit sets how many strings one sequence interns before the
// writer clears its incremental state (default DefaultInternLimit).
func WithInternLimit(n int) Option {
	return func(c *config) {
		if n > 0 {
			c.internLimit = n
		}
	}
}

// Writer writes a Perfetto protobuf trace to an io.Writer as a stream of
// TracePackets. Timestamps are CLOCK_MONOTONIC nanoseconds; the trace's
// clock is MONOTONIC, and BOOTTIME is declared equal to it so that the trace
// processor relates every clock the file uses (no event is timestamped in
// BOOTTIME). Wall time is added with WallClock.
//
// Complete slices (Slice) wait per track until Flush or Close, which writes
// them so that the trace processor rebuilds exactly the nesting their
// intervals describe, whatever order they were given in. Begin and End,
// Instant and counter values are written as they come.
//
// A Writer's memory grows with the number of tracks, the distinct interned
// strings (bounded by WithInternLimit) and the slices waiting for Flush —
// not with the number of events written. With compression on, a Writer runs
// a goroutine of its own until Close: it must be closed.
//
// Errors are kept for the whole stream, as encoding/csv's Writer keeps
// them: Err returns the first error of the underlying io.Writer, if any,
// followed by the first data errors (a refused event, a negative
// timestamp, ...), and Flush and Close return Err. Whether something fails
// therefore never depends on when a flush happened. An error of the
// underlying io.Writer wraps ErrWrite and stops the output; data errors
// wrap the other Err* sentinels and only cost the events concerned.
// A Writer is not safe for concurrent use.
type Writer struct {
	cfg    config
	output output // the encoded packets on their way to the io.Writer
	errs   streamErrors
	closed bool

	tracks  map[uint64]*trackState
	seqs    sequencing // the packet sequences: numbering and interning caches
	waiting waiting    // the slices waiting for Flush
	lanes   placement  // Flush's placing of slices on lanes, and its overflows
	refusal refusal    // the slices refused, and their flow ids

	wall  []clockPair
	stats Stats
}

// output is where a Writer's packets go: the buffer of encoded Trace bytes
// and, with compression, the bundle of packets and the compressor.
type output struct {
	dst    io.Writer
	buf    []byte      // encoded Trace bytes waiting for dst
	bundle []byte      // packets waiting to be compressed
	sink   *[]byte     // &bundle with compression, &buf without (Writer.sink)
	comp   *compressor // nil until the first bundle is full
}

// streamErrors are the errors a Writer keeps for the whole stream (Err).
type streamErrors struct {
	io   error   // the first error of the io.Writer or the compressor
	data []error // the first maxErrors data errors
}

// sequencing numbers the packet sequences of a Writer's tracks and counts
// their interning caches.
type sequencing struct {
	started bool   // the global sequence's first packet is written
	next    uint32 // the id of the next sequence
	caches  int    // busy sequences' caches (sequence.caches)
}

// waiting holds what the slices waiting for Flush need beyond their
// tracks' pending lists.
type waiting struct {
	dirty []*trackState // the tracks with slices waiting, in order
	enc   []byte        // encoded arguments of the slices waiting
	flows []FlowID      // their flow ids (pendingSlice.flowStart...)
	// free are the pending buffers quiet tracks let go of at their
	// flushes (smallPending), for the next tracks given a slice: a track
	// flushed after every few slices does not grow a buffer anew each time.
	free [][]pendingSlice
}

// placement is the scratch of Flush's placing of a track's slices on its
// lanes (flushTrack), and the overflows it reports (WithOverflowFunc).
type placement struct {
	order     []sortKey
	stack     []int32
	work      []laneWork
	laneOf    []uint8 // lane of each slice in order
	relocs    []reloc
	conflict  conflict // what fit met
	part      []sortKey
	merged    []root
	overflows []Overflow
}

// refusal is what a flush keeps of the slices it refuses: the reports for
// WithRefusalFunc, the flow ids to leave out, and riskyFirst's scratch.
type refusal struct {
	reports []Refusal
	dead    map[FlowID]bool // flow ids of slices refused in this flush, or left out (LeaveOutFlows)
	written map[FlowID]bool // flow ids written in this flush (wrote)
	reorder []*trackState   // riskyFirst's
	starts  []int64         // risky's
	ends    []int64
}

type clockPair struct{ mono, wall int64 }

// Stats counts what a Writer wrote and what it refused.
type Stats struct {
	Packets       int64 // TracePackets written (compressed bundles count their contents)
	Bytes         int64 // bytes written to the underlying io.Writer
	Tracks        int   // track descriptors written
	TracksRefused int64 // tracks refused past the limit (WithMaxTracks)
	Slices        int64 // slices written (complete and Begin/End pairs)
	Instants      int64
	Overflowed    int64 // slices and instants written on an overflow lane (see Flush)
	Counters      int64 // counter values
	Flows         int64 // flow ids attached to events (starts, steps and ends)
	Dropped       int64 // events refused because of an error in the data
	Errors        int64 // data errors, including those Err no longer lists
}

// NewWriter returns a Writer that writes a trace to w.
func NewWriter(w io.Writer, opts ...Option) *Writer {
	c := config{
		flushThreshold: DefaultFlushThreshold,
		internLimit:    DefaultInternLimit,
		bundleSize:     DefaultBundleSize,
		maxTracks:      DefaultMaxTracks,
		delta:          true,
	}
	for _, o := range opts {
		o(&c)
	}
	c.spillAt = c.flushThreshold
	if c.compress {
		c.spillAt = c.bundleSize
	}
	wr := &Writer{cfg: c, output: output{dst: w}, tracks: make(map[uint64]*trackState), seqs: sequencing{next: globalSequence + 1}}
	wr.output.sink = &wr.output.buf
	if c.compress {
		wr.output.sink = &wr.output.bundle
	}
	return wr
}

// Stats returns the counts so far. With compression on, Bytes counts what
// was written when the Writer was closed.
func (w *Writer) Stats() Stats { return w.stats }

// ErrWrite is wrapped by every error of the underlying io.Writer and of
// compression, so that errors.Is(err, ErrWrite) tells a failed output from
// errors in the data. The underlying error is wrapped too.
var ErrWrite = errors.New("perfetto: writing the trace")

// Sentinel errors of the data, wrapped in *EventError (ErrTooManyLanes,
// with the other errors of overflow lanes, is declared with them).
var (
	ErrNegativeTimestamp = errors.New("negative timestamp or duration")
	ErrUnmatchedEnd      = errors.New("end without a matching begin")
	ErrMixedTrack        = errors.New("track mixes Begin/End with complete slices")
	ErrUnknownTrack      = errors.New("unknown track")
	ErrWrongTrackKind    = errors.New("event on a track of the wrong kind")
	ErrClosed            = errors.New("writer is closed")
	ErrTooManyTracks     = errors.New("too many tracks (WithMaxTracks)")
)

// EventError is an event the writer refused, with where it was headed.
type EventError struct {
	Track string // the track's label ("thread 12/34", a track name)
	Name  string // the event's name, if any
	TS    int64
	Dur   int64
	Other string // for ErrTooManyLanes: why the slice did not fit on its track
	Err   error  // one of the Err* sentinels
}

func (e *EventError) Error() string {
	s := fmt.Sprintf("perfetto: %s: %v", e.Track, e.Err)
	if e.Name != "" {
		s += fmt.Sprintf(": %q [%d, +%d]", e.Name, e.TS, e.Dur)
	}
	if e.Other != "" {
		s += " vs " + e.Other
	}
	return s
}

func (e *EventError) Unwrap() error { return e.Err }

func (w *Writer) dataError(e *EventError) {
	w.stats.Errors++
	if len(w.errs.data) < maxErrors {
		w.errs.data = append(w.errs.data, e)
	}
}

func (w *Writer) track(t Track, name string, ts int64) *trackState {
	ts0 := t.st
	if ts0 == nil || ts0.w != w {
		ts0 = w.tracks[t.uuid]
	}
	if ts0 == nil && t.uuid == 0 && w.stats.TracksRefused > 0 {
		w.stats.Dropped++ // on a track refused past the limit: already an error
		return nil
	}
	if ts0 == nil {
		w.stats.Dropped++
		w.dataError(&EventError{Track: "uuid " + strconv.FormatUint(t.uuid, 10), Name: name, TS: ts, Err: ErrUnknownTrack})
	}
	return ts0
}

// WallClock records that CLOCK_MONOTONIC read mono when CLOCK_REALTIME read
// wall (both ns), so the UI can show wall time. Pairs are written at Close
// as REALTIME clock snapshots in MONOTONIC order; the trace processor uses
// the nearest one. The pair of least mono given before the first event is
// also in the trace's first clock snapshot, extrapolated to MONOTONIC 0:
// the UI takes its wall-clock offset from that snapshot alone, and
// to_realtime of an instant before the pair's mono reads it too.
func (w *Writer) WallClock(mono, wall int64) {
	w.wall = append(w.wall, clockPair{mono, wall})
}

// wallAtZero is what CLOCK_REALTIME read at MONOTONIC 0 by the pair of
// least mono given so far; ok is false without a pair or when that is
// before 1970.
func (w *Writer) wallAtZero() (int64, bool) {
	if len(w.wall) == 0 {
		return 0, false
	}
	p := w.wall[0]
	for _, q := range w.wall[1:] {
		if q.mono < p.mono {
			p = q
		}
	}
	rt := p.wall - p.mono
	if (p.mono >= 0) != (rt <= p.wall) || rt < 0 {
		return 0, false // overflowed, or before 1970
	}
	return rt, true
}

// sink is the buffer packets are appended to: the output buffer, or the
// compression bundle.
func (w *Writer) sink() []byte { return *w.output.sink }

// open starts a packet directly in the sink — the output buffer, or the
// compression bundle — so that no packet is copied once built. Nothing else
// may be written to the sink until close.
func (w *Writer) open() ([]byte, message) { return begin(w.sink(), fTracePacket) }

// close finishes the packet opened by open and writes out or compresses
// what has accumulated past the thresholds.
func (w *Writer) close(b []byte, m message) { w.finish(m.end(b)) }

// finish takes the sink back with one more packet, written in full, and
// writes out or compresses what has accumulated past the thresholds.
// It is short enough to be inlined in the writing of each event.
func (w *Writer) finish(b []byte) {
	w.stats.Packets++
	*w.output.sink = b
	if len(b) >= w.cfg.spillAt {
		w.spill()
	}
}

// spill writes out the output buffer, or compresses the bundle, past its
// threshold.
func (w *Writer) spill() {
	if w.cfg.compress {
		w.sendBundle()
	} else {
		w.writeOut()
	}
}

// globalPacketStart opens a packet on the global sequence, writing its first
// packet (the trace's clock declaration) if needed.
func (w *Writer) globalPacketStart() ([]byte, message) {
	if !w.seqs.started {
		w.seqs.started = true
		b, pm := w.open()
		var m message
		b, m = begin(b, fPacketClockSnapshot)
		b = appendClock(b, clockBoottime, 0, false)
		b = appendClock(b, clockMonotonic, 0, false)
		if rt, ok := w.wallAtZero(); ok {
			b = appendClock(b, clockRealtime, rt, false)
		}
		b = appendVarintField(b, fSnapshotPrimary, clockMonotonic)
		b = m.end(b)
		b = appendVarintField(b, fPacketSequenceID, globalSequence)
		b = appendVarintField(b, fPacketSequenceFlags, seqIncrementalStateCleared)
		b = appendVarintField(b, fPacketFirstOnSequence, 1)
		w.close(b, pm)
	}
	return w.open()
}

func (w *Writer) globalPacketEnd(b []byte, pm message) {
	b = appendVarintField(b, fPacketSequenceID, globalSequence)
	w.close(b, pm)
}

func appendClock(b []byte, id uint32, ts int64, incremental bool) []byte {
	var m message
	b, m = begin(b, fSnapshotClocks)
	b = appendVarintField(b, fClockID, uint64(id))
	b = appendVarintField(b, fClockTimestamp, uint64(ts))
	if incremental {
		b = appendVarintField(b, fClockIncrement, 1)
	}
	return m.end(b)
}

// sequenceFor returns t's sequence, starting it with a packet that clears
// incremental state and declares the sequence's defaults and incremental
// clock — or restarting it so when its interning tables are full and
// restart allows (nothing encoded against the current tables waits).
func (w *Writer) sequenceFor(t *trackState, restart bool) *sequence {
	s := t.seq
	if s == nil {
		s = &sequence{id: w.seqs.next, caches: &w.seqs.caches}
		w.seqs.next++
		s.resetInterning()
		t.seq = s
	} else if s.started && (s.count < w.cfg.internLimit || !restart) {
		return s
	} else {
		s.resetInterning()
	}
	b, pm := w.open()
	var m, dm, tm message
	b, dm = begin(b, fPacketDefaults)
	if w.cfg.delta {
		b = appendVarintField(b, fDefaultsClockID, clockIncremental)
	} else {
		b = appendVarintField(b, fDefaultsClockID, clockMonotonic)
	}
	b, tm = begin(b, fDefaultsTrackEvent)
	b = appendVarintField(b, fTEDefaultsTrack, t.uuid)
	b = tm.end(b)
	b = dm.end(b)
	if w.cfg.delta {
		b, m = begin(b, fPacketClockSnapshot)
		b = appendClock(b, clockIncremental, s.lastTS, true)
		b = appendClock(b, clockMonotonic, s.lastTS, false)
		b = appendVarintField(b, fSnapshotPrimary, clockMonotonic)
		b = m.end(b)
	}
	b = appendVarintField(b, fPacketSequenceID, uint64(s.id))
	b = appendVarintField(b, fPacketSequenceFlags, seqIncrementalStateCleared)
	if !s.started {
		b = appendVarintField(b, fPacketFirstOnSequence, 1)
	}
	s.started = true
	w.close(b, pm)
	return s
}

// event is a TrackEvent packet under construction.
type event struct {
	b             []byte
	s             *sequence
	ts            int64
	packet, track message
}

// eventStart opens the packet of an event at ts on t and its TrackEvent.
// Events of slices waiting for a flush were encoded against the sequence's
// current interning, so the sequence restarts only on tracks that stream
// (Begin/End, counters), where nothing waits.
//
// The fields of an event's packet go from what repeats most to what
// changes most — the sequence fields, then the TrackEvent (its arguments,
// each value before its name, then its name and type), then the timestamp
// — so that consecutive events of a kind share long runs of bytes (see the
// package documentation).
func (w *Writer) eventStart(t *trackState, ts int64) event {
	s := w.sequenceFor(t, len(t.pending) == 0)
	b, pm := w.open()
	b = appendVarintField(b, fPacketSequenceID, uint64(s.id))
	b = appendVarintField(b, fPacketSequenceFlags, seqNeedsIncrementalState)
	var tm message
	b, tm = begin(b, fPacketTrackEvent)
	return event{b: b, s: s, ts: ts, packet: pm, track: tm}
}

// eventEnd closes the TrackEvent, adds the interned data it defined and the
// timestamp, and closes the packet.
func (w *Writer) eventEnd(e event) {
	b := e.track.end(e.b)
	if e.s.fresh() {
		b = e.s.appendInterned(b)
	}
	b = appendStamp(b, w.stamp(e.s, e.ts))
	w.close(b, e.packet)
}

// eventHeaderSize is the size of appendEventHeader's bytes for sequence id.
func eventHeaderSize(id uint32) int { return 1 + protowire.SizeVarint(uint64(id)) + 3 }

// appendEventHeader appends what eventStart writes first in an event's
// packet, without a message to patch: the sequence id, the sequence flags
// and the TrackEvent's tag (its length comes next).
func appendEventHeader(b []byte, id uint32) []byte {
	b = appendVarint(append(b, fPacketSequenceID<<3), uint64(id))
	return append(b, fPacketSequenceFlags<<3, seqNeedsIncrementalState, fPacketTrackEvent<<3|byte(protowire.BytesType))
}

// A stamp is the timestamp field of an event on a sequence: the value, and
// whether it is an absolute CLOCK_MONOTONIC time on a sequence whose
// default clock is the incremental one.
type stamp struct {
	v   uint64
	abs bool
}

// stamp returns the timestamp field of an event at ts on s, advancing the
// sequence's incremental clock: a delta from the previous event, or the
// absolute time for an event earlier than it (or without delta
// timestamps).
func (w *Writer) stamp(s *sequence, ts int64) stamp {
	if w.cfg.delta && ts >= s.lastTS {
		d := ts - s.lastTS
		s.lastTS = ts
		return stamp{v: uint64(d)}
	}
	return stamp{v: uint64(ts), abs: w.cfg.delta}
}

// size is the size of the fields appendStamp writes.
func (st stamp) size() int {
	n := 1 + protowire.SizeVarint(st.v)
	if st.abs {
		n += 3
	}
	return n
}

// appendStamp appends the timestamp field, and the clock id of an absolute
// time on a sequence with delta timestamps.
func appendStamp(b []byte, st stamp) []byte {
	b = appendVarint(append(b, fPacketTimestamp<<3), st.v)
	if st.abs {
		b = appendVarintField(b, fPacketTimestampClockID, clockMonotonic)
	}
	return b
}

// compressor deflates bundles of packets on a goroutine of its own, in
// order, and writes them: with compression on, the goroutine that calls the
// Writer only encodes, and it never touches the underlying io.Writer.
//
// Nothing escapes that goroutine: an error stops the output (the remaining
// bundles are drained unwritten), and a panic of the io.Writer is recovered
// there and handed to the caller's goroutine (Writer.repanic), so that it
// reaches the caller instead of crashing the process.
type compressor struct {
	in    chan []byte // full bundles, in order
	free  chan []byte // emptied bundle buffers, to reuse
	done  chan struct{}
	bytes atomic.Int64

	mu       sync.Mutex
	err      error // the first compression or write error
	panicked bool  // the io.Writer panicked with value
	value    any
}

// sendBundle hands the bundle to the compressor and takes a fresh buffer.
// A panic the io.Writer raised on the compressor's goroutine is raised
// again here, on the caller's, before anything more is handed over.
func (w *Writer) sendBundle() {
	if len(w.output.bundle) == 0 {
		return
	}
	if w.output.comp == nil {
		w.output.comp = &compressor{in: make(chan []byte, 2), free: make(chan []byte, 4), done: make(chan struct{})}
		go w.output.comp.run(w.output.dst, w.cfg.level)
	} else if !w.closed {
		w.repanic()
	}
	w.output.comp.in <- w.output.bundle
	select {
	case b := <-w.output.comp.free:
		w.output.bundle = b[:0]
	default:
		w.output.bundle = make([]byte, 0, w.cfg.bundleSize+w.cfg.bundleSize/4)
	}
}

func (c *compressor) run(dst io.Writer, level int) {
	defer close(c.done)
	var zbuf bytes.Buffer
	zw, err := newZlibWriter(level)
	if err != nil {
		c.fail(fmt.Errorf("%w: compression: %w", ErrWrite, err))
	}
	var out []byte
	for b := range c.in {
		if !c.failed() { // after an error, drain: nothing more is written
			out = c.write(dst, zw, &zbuf, b, out)
		}
		select {
		case c.free <- b:
		default:
		}
	}
}

// write compresses one bundle and writes it as a TracePacket; it recovers
// a panic of dst (or of compression) and keeps it for the caller.
func (c *compressor) write(dst io.Writer, zw *zlibWriter, zbuf *bytes.Buffer, b, out []byte) []byte {
	defer func() {
		if v := recover(); v != nil {
			c.mu.Lock()
			if c.err == nil {
				c.err = fmt.Errorf("%w: the io.Writer panicked: %v", ErrWrite, v)
			}
			c.panicked, c.value = true, v
			c.mu.Unlock()
		}
	}()
	zbuf.Reset()
	if err := zw.compress(zbuf, b); err != nil {
		c.fail(fmt.Errorf("%w: compression: %w", ErrWrite, err))
		return out
	}
	out = protowire.AppendTag(out[:0], fTracePacket, protowire.BytesType)
	out = protowire.AppendVarint(out, uint64(protowire.SizeTag(fPacketCompressed)+protowire.SizeBytes(zbuf.Len())))
	out = appendBytesField(out, fPacketCompressed, zbuf.Bytes())
	n, err := dst.Write(out)
	c.bytes.Add(int64(n))
	if err == nil && n < len(out) {
		err = io.ErrShortWrite
	}
	if err != nil {
		c.fail(fmt.Errorf("%w: %w", ErrWrite, err))
	}
	return out
}

func (c *compressor) fail(err error) {
	c.mu.Lock()
	if c.err == nil {
		c.err = err
	}
	c.mu.Unlock()
}

func (c *compressor) failed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err != nil
}

// takePanic returns the io.Writer's panic, once.
func (c *compressor) takePanic() (any, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.value, c.panicked
	c.panicked, c.value = false, nil
	return v, ok
}

// repanic raises, on the caller's goroutine, a panic of the io.Writer that
// the compressor recovered on its own; each panic is raised once.
func (w *Writer) repanic() {
	if w.output.comp == nil {
		return
	}
	if v, ok := w.output.comp.takePanic(); ok {
		panic(v)
	}
}

// stopCompressor waits for the compressor to write every bundle sent and
// ends its goroutine. It keeps the compressor's error, and returns the
// panic of the io.Writer not yet raised on the caller's goroutine, if any.
func (w *Writer) stopCompressor() (any, bool) {
	c := w.output.comp
	if c == nil {
		return nil, false
	}
	w.output.comp = nil
	close(c.in)
	<-c.done
	if c.err != nil && w.errs.io == nil {
		w.errs.io = c.err
	}
	w.stats.Bytes += c.bytes.Load()
	return c.takePanic()
}

// writeOut writes the output buffer to the underlying writer.
func (w *Writer) writeOut() {
	if len(w.output.buf) == 0 {
		return
	}
	if w.errs.io == nil {
		n, err := w.output.dst.Write(w.output.buf)
		w.stats.Bytes += int64(n)
		if err == nil && n < len(w.output.buf) {
			err = io.ErrShortWrite
		}
		if err != nil {
			w.errs.io = fmt.Errorf("%w: %w", ErrWrite, err)
		}
	}
	w.output.buf = w.output.buf[:0]
}

// Err returns the errors of the whole stream so far, or nil: the first error
// of the underlying io.Writer (wrapping ErrWrite), if any, followed by the
// first data errors, joined with errors.Join. Nothing clears them; Flush and
// Close return Err. With compression on, an error of the io.Writer shows
// once the Writer's goroutine has met it, at the latest at Close.
func (w *Writer) Err() error {
	if w.errs.io == nil && w.output.comp != nil {
		w.output.comp.mu.Lock()
		w.errs.io = w.output.comp.err
		w.output.comp.mu.Unlock()
	}
	if w.errs.io == nil && len(w.errs.data) == 0 {
		return nil
	}
	errs := make([]error, 0, 1+len(w.errs.data))
	if w.errs.io != nil {
		errs = append(errs, w.errs.io)
	}
	return errors.Join(append(errs, w.errs.data...)...)
}

// Close writes the slices still waiting, the wall-clock snapshots and every
// buffered byte, and returns Err. It does not close the underlying
// io.Writer. A closed Writer refuses further events; closing it again
// returns ErrClosed.
//
// With compression on, Close always ends the Writer's goroutine, even
// after an error or a panic. A panic of the io.Writer on that goroutine
// that no earlier call has raised again is raised by Close, once the
// goroutine has ended.
func (w *Writer) Close() error {
	if w.closed {
		return ErrClosed
	}
	w.closed = true
	defer w.stopCompressor() // also when a panic unwinds Close
	w.flushSlices()
	if len(w.wall) > 0 {
		slices.SortStableFunc(w.wall, func(a, b clockPair) int {
			switch {
			case a.mono < b.mono:
				return -1
			case a.mono > b.mono:
				return 1
			}
			return 0
		})
		w.wall = slices.Compact(w.wall)
		for _, p := range w.wall {
			b, pm := w.globalPacketStart()
			var m message
			b, m = begin(b, fPacketClockSnapshot)
			b = appendClock(b, clockMonotonic, p.mono, false)
			b = appendClock(b, clockRealtime, p.wall, false)
			b = appendVarintField(b, fSnapshotPrimary, clockMonotonic)
			b = m.end(b)
			w.globalPacketEnd(b, pm)
		}
	}
	if !w.seqs.started {
		b, pm := w.globalPacketStart() // an empty trace still declares its clock
		w.globalPacketEnd(b, pm)
	}
	if w.cfg.compress {
		w.sendBundle()
		if v, ok := w.stopCompressor(); ok {
			panic(v)
		}
	}
	w.writeOut()
	return w.Err()
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }
