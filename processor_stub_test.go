package phasetrace_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/phasetrace/phasetrace/perfetto/check"
)

func processorAgrees(t *testing.T, out []byte, tr *check.Trace) {
	tp := os.Getenv("PHASETRACE_TRACE_PROCESSOR")
	if tp == "" {
		return
	}
	f := filepath.Join(t.TempDir(), "t.pftrace")
	os.WriteFile(f, out, 0o644)
	b, err := exec.Command(tp, "-q", "/tmp/stats.sql", f).Output()
	t.Logf("tp: %s %v (check: %d slices, %d flows)", b, err, len(tr.Slices), len(tr.Flows))
}
