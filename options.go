package phasetrace

import (
	"github.com/phasetrace/phasetrace/perfetto"
	"github.com/phasetrace/phasetrace/reduce"
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
