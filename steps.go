package phasetrace

import "github.com/phasetrace/phasetrace/reduce/analysis"

// WithSteps hands f, as each run is drawn, its row of the steps table
// (analysis.Step): the run's columns as package analysis computes them
// from its spans, with what the conversion decides filled in — the run's
// number in the trace (Run), whether it is its callable's cold run (Cold,
// the run marked cold=true), the widest bound_ns of its device slices
// drawn (Bound), its start on the trace's wall clock (Wall) and, in a
// split trace (WithSplit), the part that holds it (Part). The row and its
// Binds are valid until f returns; nothing of them is kept.
//
// A run is the spans of one (pid, inv) whose root is a chip.run; runs
// come in the order the conversion draws them (Run ascending). Its Binds
// are its bind's segments as the trace draws them: a host_phase_records
// pass wins over a chip.run.bind.<segment> span, which wins over a legacy
// bind phase line. The phases are device-domain durations as logged
// (before a truncation repair of at most 2 ns, which the trace keeps in
// logged_device_dur).
//
// Converting to io.Discard with WithSteps is how "stracestat steps"
// makes the table.
func WithSteps(f func(*analysis.Step)) Option { return func(c *config) { c.steps = f } }
