package phasetrace_test

import (
	"flag"
	"sync"
	"testing"

	"github.com/phasetrace/phasetrace"
	"github.com/phasetrace/phasetrace/perfetto/check"
	"github.com/phasetrace/phasetrace/perfetto/check/processor"
)

var sayNoProcessor sync.Once

// processorAgrees loads a trace into Perfetto's own trace processor, when
// PHASETRACE_TRACE_PROCESSOR names it, and requires it to import the trace
// without an error or data loss and to build what perfetto/check built —
// and, given the conversion's summary, to hold as many slices of spans as
// the summary says were drawn and as many arrows as it says were drawn.
// While fuzzing it leaves that to perfetto/check alone (one process per
// input would slow the fuzzer down a hundredfold).
func processorAgrees(t *testing.T, out []byte, tr *check.Trace, sum *phasetrace.Summary) {
	t.Helper()
	sh := processorShell(t)
	if sh == nil {
		return
	}
	// The trace processor reads the whole trace, its own instant too
	// (stripAbout), as check reads the bytes.
	if raw, err := check.ReadBytes(out); err == nil {
		tr = raw
	}
	processorAgreesWith(t, sh, out, tr, sum)
}

// processorShell returns the trace processor processorAgrees runs, or nil
// (saying why, once) when there is none or while fuzzing.
func processorShell(t *testing.T) *processor.Shell {
	t.Helper()
	sh, ok := processor.FromEnv()
	if !ok {
		sayNoProcessor.Do(func() {
			t.Logf("%s is not set: traces are checked by perfetto/check only, not by Perfetto's trace processor", processor.EnvVar)
		})
		return nil
	}
	if f := flag.Lookup("test.fuzz"); f != nil && f.Value.String() != "" {
		return nil
	}
	return sh
}

// processorAgreesWith is processorAgrees given the trace processor and the
// whole trace as check reads out (its own instant too).
func processorAgreesWith(t *testing.T, sh *processor.Shell, out []byte, tr *check.Trace, sum *phasetrace.Summary) {
	t.Helper()
	r, err := sh.Load(out)
	if err != nil {
		t.Fatalf("trace processor: %v", err)
	}
	if sum != nil && strandedSaid(tr, sum) {
		// perfetto/check counts the stranded flow ids the summary notes;
		// the trace processor reports nothing of them, which is checked.
		alone := *tr
		alone.Problems = nil
		tr = &alone
	}
	if err := processor.Agree(tr, r); err != nil {
		t.Errorf("Perfetto's trace processor disagrees: %v", err)
	}
	if sum == nil {
		return
	}
	// The slices that are not spans of the log (derived windows, bind
	// phase lines, host_phase_records, instants) are told apart in check's
	// reading, which the trace processor's count agrees with in total.
	if n := r.Slices - (int64(len(tr.Slices)) - spanSlices(tr)); n != sum.Spans.Drawn {
		t.Errorf("the trace processor reads %d slices of spans, the summary says %d were drawn", n, sum.Spans.Drawn)
	}
	if n := arrows(sum); r.Flows != n {
		t.Errorf("the trace processor reads %d arrows, the summary says %d were drawn (%v)", r.Flows, n, sum.Flows)
	}
	if r.Counters != sum.Output.Counters {
		t.Errorf("the trace processor reads %d counter values, the summary says %d were written", r.Counters, sum.Output.Counters)
	}
}

// arrows is the number of arrows a summary says were drawn.
func arrows(sum *phasetrace.Summary) int64 {
	var n int64
	for _, v := range sum.Flows {
		n += v
	}
	return n
}

// TestSampleInTheTraceProcessor loads the embedded sample's trace into
// Perfetto's trace processor.
func TestSampleInTheTraceProcessor(t *testing.T) {
	t.Parallel()
	if _, ok := processor.FromEnv(); !ok {
		t.Skipf("%s is not set: Perfetto's trace processor is not run", processor.EnvVar)
	}
	tr, sum, out := convert(t, []phasetrace.Input{sampleInput(t)})
	if n := spanSlices(tr); n != sum.Spans.Drawn {
		t.Errorf("%d span slices, %d drawn", n, sum.Spans.Drawn)
	}
	processorAgrees(t, out, tr, sum)
}
