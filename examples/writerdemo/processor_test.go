package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/phasetrace/phasetrace/perfetto/check"
	"github.com/phasetrace/phasetrace/perfetto/check/processor"
)

// TestWriterDemoInTheTraceProcessor loads the demo's trace into Perfetto's
// trace processor: it must load clean, with the slices, flows and counter
// values check reads (TestWriterDemo checks what check reads).
func TestWriterDemoInTheTraceProcessor(t *testing.T) {
	sh, ok := processor.FromEnv()
	if !ok {
		t.Skip("set " + processor.EnvVar + " to a trace_processor_shell to load the demo's trace into Perfetto's trace processor")
	}
	out := filepath.Join(t.TempDir(), "demo.pftrace")
	if err := run(out, false); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := check.ReadBytes(b)
	if err != nil {
		t.Fatal(err)
	}
	r, err := sh.Load(b)
	if err != nil {
		t.Fatal(err)
	}
	if err := processor.Agree(tr, r); err != nil {
		t.Fatal(err)
	}
}
