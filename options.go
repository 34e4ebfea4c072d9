package phasetrace

import (
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/phasetrace/phasetrace/perfetto"
	"github.com/phasetrace/phasetrace/reduce"
	"github.com/phasetrace/phasetrace/reduce/analysis"
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
	window      *Window
	split       *split
	steps       func(*analysis.Step) // WithSteps

	// Remote workers (WithTransport, WithRemoteWorker, WithHostClock).
	transport     Transport
	remoteWorkers map[string]int64
	hostFit       []reduce.HostFitOption

	// baseLogs is, in a comparison (Compare), how many of the logs are the
	// base side's (the first ones); 0 otherwise.
	baseLogs int
}

type calibrationInput struct {
	pid int32
	dev int64
	in  Input
}

// WithPhaseRecords adds a host_phase_records.jsonl artifact: its records are
// drawn inside the chip.run.bind of their (pid, inv), and where they cover a
// bind the log's own bind segments for it are not drawn a second time.
// Convert reads it in each pass: the first notes where each pass is (24
// bytes a pass), and the second reads, as each run is drawn, the passes of
// its (pid, inv) where they are, in whatever order the artifact was
// written (an input that cannot seek, a .gz, keeps the last 8192 passes it
// read past, and reads again from its start for one behind them: time,
// not memory). A pass that no run took once every run is drawn — its run
// has no chip.run.bind, or is not in the logs — is counted under
// ReasonPassesWithoutBind. A Builder (NewBuilder) reads the artifact whole
// and holds each pass until its run is drawn, as it does those given to a
// Survey.
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
// such as perfetto.WithCompression: Convert and Builder write uncompressed
// without it, strace2perfetto at perfetto.DefaultCompressionLevel.
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
// perfetto.DefaultMaxTracks), besides its own "phasetrace" track. A track is spent when the first slice is
// drawn on it (a process's with the first of its tracks): the spans of
// the threads, lanes and devices first drawn on are drawn, those of the
// others past the limit are not, and are counted. That bounds the memory
// a log with very many distinct pids and tids can take: a track costs the
// conversion about 530 bytes with a run of two spans, 1.7 KB with 16
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

// Window is the interval of trace time a conversion draws (WithWindow,
// WithWindowFromStart, WithWindowOf; ParseWindow reads one), [Start, End):
// each bound a trace time (CLOCK_MONOTONIC ns, the trace's timestamps)
// or, with StartFromFirst or EndFromFirst, a duration after the first
// slice. The first slice is the earliest start of a host span the first
// pass reads (every depth-0 span, and every node. and ext. span; for a
// Builder, every host span given to Survey.Span) of the logs on the
// trace's own axis (a remote machine's logs, drawn on the dispatching
// host's axis, do not count); 0 when there is none. NoStart and NoEnd
// leave the window open on that side; the zero Window draws nothing.
//
// A conversion given a window reads every log whole — every clock anchor,
// run and hand-off counts as in the conversion without it — and writes
// only the slices that meet the window: the trace holds exactly the slices
// of the whole conversion's trace that meet it, at the same times, with
// the same arguments, on the same tracks and at the same depths, on no
// track but those drawn on. A slice [ts, ts+dur], its end included, meets
// [Start, End) when ts < End and ts+dur >= Start: a slice that ends where
// the window starts is drawn, one that starts where it ends is not, and a
// slice of no length is drawn when Start <= ts < End. (A slice holds its
// children, ends included, so every ancestor of a slice drawn is drawn
// too.) An arrow is drawn when both its ends are; one with an end outside
// the window is counted in Summary.Unlinked under the reason its end is
// not drawn. Every other span is counted under ReasonOutsideWindow, and
// every other bind phase line, host_phase_records entry and derived
// effective slice under ReasonBindPhaseOutsideWindow,
// ReasonHostPhaseOutsideWindow and ReasonEffectiveOutsideWindow: none of
// them is a loss (Summary.Clean).
// The counters hold their values whose time is in [Start, End), as the
// whole trace holds them (a process's runs in flight at each change
// inside the window). Summary.Window says the window in trace ns. A
// window writes and holds
// only what it draws, and allocates nothing per span. Two things may
// differ from the whole trace, in logs that reach its overflow lanes or
// its track limit: a slice moved to an overflow lane by a slice outside
// the window stays on its track, and the track limit counts only the
// tracks the window draws on.
type Window struct {
	Start, End                   int64
	StartFromFirst, EndFromFirst bool
	NoStart, NoEnd               bool
}

// WithWindow draws only the slices that meet [start, end) of trace time
// (ns): see Window.
func WithWindow(start, end int64) Option { return WithWindowOf(Window{Start: start, End: end}) }

// WithWindowFromStart draws only the slices that meet [from, to) after the
// first slice (see Window).
func WithWindowFromStart(from, to time.Duration) Option {
	return WithWindowOf(Window{Start: int64(from), End: int64(to), StartFromFirst: true, EndFromFirst: true})
}

// WithWindowOf draws only the slices that meet w (see Window).
func WithWindowOf(w Window) Option { return func(c *config) { c.window = &w } }

// ErrWindowSyntax is wrapped by the errors of ParseWindow.
var ErrWindowSyntax = errors.New("phasetrace: bad window")

// ErrWindowEmpty is wrapped, with ErrWindowSyntax, by ParseWindow's error
// for a window whose end is not after its start when both count alike
// (both ns, or both after the first slice): "2s:1s", "5s:5s". A window
// whose bounds count differently ("-5:1m") is resolved against the first
// slice; empty there, it draws no slice.
var ErrWindowEmpty = errors.New("empty: its end is not after its start")

// ParseWindow reads a window written "A:B": each of A and B is a trace time
// in ns (an integer: "1200000000") or a duration after the first slice in
// Go's syntax ("12.5s", "500ms", "1m2s"); either may be empty, leaving the
// window open on that side (":14s", "12s:"). A window that holds no time
// ("2s:1s", "5s:5s") is an error wrapping ErrWindowEmpty.
func ParseWindow(s string) (Window, error) {
	a, b, ok := strings.Cut(s, ":")
	if !ok {
		return Window{}, fmt.Errorf("%w %q: want A:B", ErrWindowSyntax, s)
	}
	var w Window
	var err error
	if w.Start, w.StartFromFirst, w.NoStart, err = parseBound(a); err != nil {
		return Window{}, fmt.Errorf("%w %q: start: %v", ErrWindowSyntax, s, err)
	}
	if w.End, w.EndFromFirst, w.NoEnd, err = parseBound(b); err != nil {
		return Window{}, fmt.Errorf("%w %q: end: %v", ErrWindowSyntax, s, err)
	}
	if !w.NoStart && !w.NoEnd && w.StartFromFirst == w.EndFromFirst && w.End <= w.Start {
		return Window{}, fmt.Errorf("%w %q: %w", ErrWindowSyntax, s, ErrWindowEmpty)
	}
	return w, nil
}

// parseBound reads one bound of a window: empty, an integer (ns) or a
// duration.
func parseBound(s string) (ns int64, fromFirst, none bool, err error) {
	if s == "" {
		return 0, false, true, nil
	}
	if v, err := strconv.ParseInt(s, 10, 64); err == nil {
		return v, false, false, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, false, false, fmt.Errorf("%q is neither ns nor a duration", s)
	}
	return int64(d), true, false, nil
}

// String writes the window as ParseWindow reads it.
func (w Window) String() string {
	bound := func(v int64, fromFirst, none bool) string {
		switch {
		case none:
			return ""
		case fromFirst:
			return time.Duration(v).String()
		}
		return strconv.FormatInt(v, 10)
	}
	return bound(w.Start, w.StartFromFirst, w.NoStart) + ":" + bound(w.End, w.EndFromFirst, w.NoEnd)
}

// resolve returns the window in trace ns, [start, end), its bounds after
// the first slice counted from first (saturating).
func (w Window) resolve(first int64) (start, end int64) {
	at := func(v int64, fromFirst, none bool, open int64) int64 {
		switch {
		case none:
			return open
		case !fromFirst:
			return v
		case v > 0 && first > math.MaxInt64-v:
			return math.MaxInt64
		case v < 0 && first < math.MinInt64-v:
			return math.MinInt64
		}
		return first + v
	}
	return at(w.Start, w.StartFromFirst, w.NoStart, math.MinInt64), at(w.End, w.EndFromFirst, w.NoEnd, math.MaxInt64)
}

// Split traces. A log of a few GB makes a trace the UI cannot load: its
// trace processor needs some 20 times the trace's size in memory. WithSplit
// writes such a conversion as parts the UI can load one at a time, and an
// overview to find the part to load.

// WithSplit writes the trace as parts of at most maxSlices slices each (a
// run larger than that gets a part of its own, see below), and
// writes to Convert's (or NewBuilder's) io.Writer the overview instead of
// the whole trace. open is called for each part as the conversion begins
// it, numbered from 1, and returns where the part is written and the name
// the overview gives it (a file name: PartName); the converter closes what
// open returns once the part is whole. An error of open or of Close is an
// I/O error of Convert.
//
// A part holds whole invocations: each run — its host spans, its device
// phases, its bind segments and records — is drawn in one part, and so is
// every other slice (a hand-off's node span, an ext. span). A part takes
// the invocations and slices that start in its stretch of trace time, the
// stretches following one another: each is closed once its part is nearly
// full, leaving room for the slices the log writes late (a hand-off's node
// spans are drawn up to the flow horizon after they end), and a part is
// written out once the log's time is twice the flow horizon past its
// stretch, or when 64 older parts are open (so that the open parts, each
// with its writer, do not grow with the log). A slice
// that comes later than that, or finds its part full, is drawn in the
// newest part instead (so a part may hold a few slices outside its
// stretch; PartSummary says the stretch). An invocation too large
// for a part — more than maxSlices slices, counting room for the two
// spans of the hand-off that launched it — is a part of its own.
//
// Each part is a trace of its own: its tracks' descriptors (only those it
// draws on), the clock snapshot and the wall clock, its slices with their
// arguments, and the arrows whose ends are both in it. A hand-off's spans
// go by the start of its first (a run by that of the hand-off that
// launched it), a run holds room in its part for the hand-off's spans
// still to come, and a span whose arrow was begun in a part still open
// goes there when it has room: an arrow crosses parts only when they are
// too small for a run and its hand-off, or full or written out when its
// second end comes. Such an arrow is in
// neither part, and counted in Summary.Unlinked under
// ReasonArrowAcrossParts; its end drawn first may keep its flow id, alone
// in its part (the trace processor ignores it, perfetto/check reports
// it). A slice's depth is among the slices of its part. Every slice of the conversion is in exactly one
// part, so the parts' slices add up to the slices of the trace Convert
// writes without WithSplit (the placement of each is the same; which
// overflow lane a slice that cannot nest on its track lands on may
// differ, as may what the track limit refuses: it counts each part's
// tracks).
//
// The overview holds, per invocation, one slice — its root, on its lane —
// whose part argument names the part that holds the invocation (and
// part_number says its number), the counters (which are not in the
// parts), and a track named PartsTrack with one slice per part, named
// after it, over its stretch of time as far as its slices reach.
// Summary.Split says what each part holds.
func WithSplit(maxSlices int, open func(part int) (w io.WriteCloser, name string, err error)) Option {
	return func(c *config) {
		if maxSlices < 1 {
			maxSlices = 1
		}
		c.split = &split{max: maxSlices, open: open}
	}
}

// split is WithSplit's request: parts of at most max slices, each opened
// by open.
type split struct {
	max  int
	open func(part int) (io.WriteCloser, string, error)
}

// PartsTrack is the name of the overview's track that lists the parts
// (WithSplit): one slice per part, named as the part, with arguments
// part (its number), slices and invocations.
const PartsTrack = "parts"

// PartName is the file name the commands give part n of a split trace
// whose overview is the file overview: run.pftrace's part 3 is
// run.part003.pftrace (at least three digits).
func PartName(overview string, n int) string {
	base := strings.TrimSuffix(overview, ".pftrace")
	return fmt.Sprintf("%s.part%03d.pftrace", base, n)
}

// PartNumber reports whether name, a file name without its directory, is
// the name PartName gives a part of overview, and which part.
func PartNumber(overview, name string) (int, bool) {
	digits, ok1 := strings.CutPrefix(name, strings.TrimSuffix(filepath.Base(overview), ".pftrace")+".part")
	digits, ok2 := strings.CutSuffix(digits, ".pftrace")
	if !ok1 || !ok2 || len(digits) < 3 || strings.Trim(digits, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.Atoi(digits)
	if err != nil || n < 1 || filepath.Base(PartName(overview, n)) != name {
		return 0, false
	}
	return n, true
}

// WithProgress calls fn with the number of input bytes read so far (both
// passes count), now and then.
func WithProgress(fn func(read int64)) Option { return func(c *config) { c.progress = fn } }

// Remote workers. An L4 process (network1) on the dispatching host sends
// tasks to L3 worker daemons on other machines; each machine logs on its own
// CLOCK_MONOTONIC. The first pass learns, from the dispatching log, every
// task's network1.dispatch and network1.complete per worker, and from each
// remote machine's logs its daemon's runs; the k-th task sent to a worker
// is the k-th run of its session. Package reduce decides which session
// served which worker and fits each machine's clock to the brackets the
// tasks make (reduce.FitHost); here the logs are only grouped into machines
// and every remote record is drawn through its machine's mapping, with the
// bound reduce gives, flows joining the dispatch, the remote run and the
// complete. A remote machine whose tasks are not in the logs, or do not
// prove that its runs served them (reduce.HostFit.Proves: a match of a few
// run counts or of evenly spaced tasks, a rate at the edge of the allowed
// range, a run outside its task, a wall clock that disagrees), is moved by
// its wall-clock anchor, marked so, with no bound; one without either, or
// whose anchor would move its spans outside the trace's time range, keeps
// its own times, marked unplaced. Pids that repeat across machines are given trace pids of
// their own (the slices keep the OS pid).

// Transport is how the dispatching host's frames reach remote workers; it
// decides which instant of network1.dispatch the remote run is known to
// follow.
type Transport uint8

// Transports.
const (
	// TransportSocket (the default): the frame is sent after
	// network1.dispatch ends.
	TransportSocket Transport = iota
	// TransportMPI: the frame may leave while network1.dispatch runs; only
	// its start precedes the remote run.
	TransportMPI
)

func (t Transport) String() string {
	if t == TransportMPI {
		return "mpi"
	}
	return "socket"
}

// WithTransport says how frames reached the remote workers (default
// TransportSocket).
func WithTransport(t Transport) Option { return func(c *config) { c.transport = t } }

// WithRemoteWorker names the worker_id whose tasks a remote machine's logs
// served, where the logs do not determine it. name is the machine (as its
// daemon banner names it) or the name of one of its logs.
func WithRemoteWorker(name string, workerID int64) Option {
	return func(c *config) {
		if c.remoteWorkers == nil {
			c.remoteWorkers = map[string]int64{}
		}
		c.remoteWorkers[name] = workerID
	}
}

// WithHostClock passes options to the remote hosts' clock model
// (reduce.FitHost), such as reduce.WithHostMaxRate.
func WithHostClock(opts ...reduce.HostFitOption) Option {
	return func(c *config) { c.hostFit = append(c.hostFit, opts...) }
}
