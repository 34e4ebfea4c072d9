package phasetrace

import (
	"errors"
	"fmt"
	"io"
)

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
// only when an input cannot be read or w cannot be written — or, split
// (WithSplit), a part cannot be opened, written or closed — (once drawing
// has begun, the summary returned with it says what was done so far), or
// for misuse (ErrNoInput, ErrInvalidInput). No goroutine of Convert outlives it; a panic of the
// caller's own code (an input's reader, w, a progress function) is raised
// again on the caller's goroutine.
//
// Every log is read twice: a first pass learns lanes, labels and clock
// anchors (the Survey), the second draws (the Builder); the first pass is
// made again, leaving them out, when captures repeat earlier ones. Memory
// grows with the number of processes, threads, tracks and clock anchors,
// with the distinct strings, and with the runs in flight and the hand-offs
// held for their other end (WithFlowHorizon) at once — not with the number
// of runs converted. A log cut into several captures is read once more,
// to sketch them: 24 KiB a capture, 64 captures at most. The same inputs
// give the same bytes.
//
// The trace is written uncompressed unless the writer is told otherwise:
// strace2perfetto deflates at level 6, which a library caller gets with
// WithWriterOptions(perfetto.WithCompression(perfetto.DefaultCompressionLevel))
// — a realistic log's trace is then about a quarter of its uncompressed
// size.
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
	if err := c.cfg.check(); err != nil {
		return nil, err
	}
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
	c.start(w, true)
	// The placer holds the clock anchors now: the survey's copies, which
	// grow with the log, would only weigh on the second pass.
	c.survey.scan.Anchors, c.survey.scan.AnchorInput, c.survey.scan.AnchorAt = nil, nil, nil
	closed := false
	defer func() {
		if !closed { // a panic of the caller's reader: stop the writers' goroutines too
			c.abandon()
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

// check reports the misuse of options.
func (c *config) check() error {
	if c.split != nil && c.split.open == nil {
		return fmt.Errorf("%w: WithSplit needs a function that opens the parts", ErrInvalidInput)
	}
	if c.baseLogs > 0 && (len(c.records) > 0 || len(c.calibration) > 0 || len(c.remoteWorkers) > 0) {
		return fmt.Errorf("%w: a comparison takes no WithPhaseRecords, WithCalibration or WithRemoteWorker (their pids and machines are one run's)", ErrInvalidInput)
	}
	return nil
}
