package phasetrace

import (
	"fmt"
	"io"
)

// Compare writes one trace of two runs of the runtime, a base run and a
// measure run (before and after a change), on one axis, so that the UI
// shows them one above the other: base's logs and measure's logs, each
// side one log or several (the ranks of one run), converted as Convert
// converts them, with these differences.
//
//   - Each process track is named after its side: "base · simpler chip
//     child (pid=4100)", "measure · …"; base's processes come first. A pid
//     of the measure side that the base side uses too (the same runtime
//     run twice reuses pids) is given a trace pid of its own, as the pids
//     of remote machines are (Summary.Compare.Pids); its track keeps the
//     OS pid in its name.
//   - The measure side is moved in time so that its first decode step
//     starts where base's does: every host time of its logs (and its clock
//     anchors) moves by Summary.Compare.ShiftNs, an exact integer. A
//     side's decode callable is the hid with the most chip.run roots in
//     its logs (ties: the lowest hid), as the TPOT table's decode bucket
//     is, with more than one; its first decode step is the earliest start
//     of such a root. A side without one is aligned by its first chip.run,
//     else by its first host span (CompareSummary.Aligned says which).
//     Should the move put a measure span before 0, both sides move later
//     by the same amount (BaseShiftNs), the alignment kept.
//   - The step-time counters of the two sides' decode callables share one
//     y-axis, whatever their hids.
//   - A delta counter per rank pair (the README's Counters names it), under
//     the measure process: at the start of measure's i-th decode step,
//     the duration of measure's i-th decode chip.run minus that of base's
//     i-th, both of the pair's processes, steps counted from 1 in the order
//     the logs complete them. The k-th rank pair is the k-th process of
//     each side, by OS pid (ranks are forked in order), among those that
//     ran their side's decode callable. Steps one side has and the other
//     has not are counted, not drawn (RankPair).
//   - Wall-clock anchors of the measure side are superseded: the trace's
//     wall clock is the base side's (ReasonCompareWallSuperseded).
//
// Each side is drawn on its own first log's clock: logs of other machines
// within a side are not placed by the tasks they ran (give the dispatching
// host's logs, or compare each machine's). Captures that repeat one another
// are looked for within a side, never across: the measure run may be the
// base run's log again.
//
// The options are Convert's; WithRemoteWorker and WithTransport do not
// apply, and records or calibrations (WithPhaseRecords, WithCalibration)
// are keyed by the pids of the logs as written, base's first.
func Compare(w io.Writer, base, measure []Input, opts ...Option) (*Summary, error) {
	if len(base) == 0 || len(measure) == 0 {
		return nil, fmt.Errorf("%w: a comparison needs a log on each side (%d base, %d measure)", ErrNoInput, len(base), len(measure))
	}
	logs := append(append([]Input(nil), base...), measure...)
	return Convert(w, logs, append(append([]Option(nil), opts...), func(c *config) { c.baseLogs = len(base) })...)
}
