package main

import (
	"testing"

	"github.com/phasetrace/phasetrace/perfetto/check/processor"
)

// TestWriterDemoInTheTraceProcessor loads the demo's trace into Perfetto's
// trace processor: it must load clean, with the slices, flows and counter
// values check reads (TestWriterDemo checks what check reads).
func TestWriterDemoInTheTraceProcessor(t *testing.T) {
	t.Parallel()
	sh, ok := processor.FromEnv()
	if !ok {
		t.Skip("set " + processor.EnvVar + " to a trace_processor_shell to load the demo's trace into Perfetto's trace processor")
	}
	b, tr := demoTrace(t)
	r, err := sh.Load(b)
	if err != nil {
		t.Fatal(err)
	}
	if err := processor.Agree(tr, r); err != nil {
		t.Fatal(err)
	}
}
