package analysis

import (
	"io"
	"strings"

	"github.com/phasetrace/phasetrace/strace"
)

// TPOT is the per-callable table: for each hid bucket, its invocation
// count, the duration of each invocation's root (chip.run) and the mean of
// every sub-stage across invocations.
type TPOT struct {
	Callables []TPOTCallable // most invoked first
}

// TPOTCallable is one hid bucket of a [TPOT] table.
type TPOTCallable struct {
	Hid         uint64
	Role        strace.Role // decode: the busiest bucket (more than one invocation); prefill: invoked once
	Invocations int
	// Run summarises the root span of each invocation (its first depth-0
	// span, chip.run). Run.N is 0 when no invocation has one.
	Run DurStats
	// Stages are the other span names, most often seen first (then by
	// name). Each invocation contributes its earliest-starting span of the
	// name, skipped when that span is at depth 0.
	Stages []StageStats
}

// DurStats summarises durations in ns. Mean is the exact mean truncated
// toward zero (what the runtime's table prints).
type DurStats struct {
	N              int
	Mean, Min, Max int64
}

// StageStats is a span name's durations across invocations.
type StageStats struct {
	Name string
	DurStats
}

// AnalyzeTPOT builds the per-callable table from spans (each owning its
// Attrs). Node-family and ext. spans carry no invocation and are left out.
func AnalyzeTPOT(spans []strace.Span) *TPOT {
	t := NewTables(WithTables(TableTPOT), WithMaxOpen(len(spans)))
	t.AddAll(spans)
	return t.TPOT()
}

// WriteTPOT prints the table in the runtime tool's layout:
//
//	callable hid=9f3c — 4 invocation(s)
//	  chip.run: mean=72.9us min=70.0us max=75.2us
//	      chip.run.bind: mean=1.9us (n=4)
func WriteTPOT(w io.Writer, t *TPOT) error {
	ew := &errWriter{w: w}
	if t == nil || len(t.Callables) == 0 {
		ew.println(noMarkers)
		return ew.err
	}
	for _, c := range t.Callables {
		ew.printf("callable hid=%s — %d invocation(s)\n", hidText(c.Hid), c.Invocations)
		if c.Run.N > 0 {
			ew.printf("  chip.run: mean=%sus min=%sus max=%sus\n", usText(c.Run.Mean), usText(c.Run.Min), usText(c.Run.Max))
		}
		for _, s := range c.Stages {
			indent := "  " + strings.Repeat("  ", strings.Count(s.Name, "."))
			ew.printf("%s%s: mean=%sus (n=%d)\n", indent, s.Name, usText(s.Mean), s.N)
		}
		ew.println("")
	}
	return ew.err
}
