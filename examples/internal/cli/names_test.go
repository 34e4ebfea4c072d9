package cli

import (
	"os"
	"path/filepath"
	"testing"
)

func TestTraceName(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"run.log": "run.pftrace", "a/b.log.gz": "a/b.pftrace", "x.txt": "x.pftrace", "noext": "noext.pftrace", "-": "stdin.pftrace"} {
		if got := TraceName(in); got != want {
			t.Errorf("TraceName(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestRecordsBeside: the artifact beside a log is taken when it is a
// regular file, not a directory of its name, nor for standard input.
func TestRecordsBeside(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	log := filepath.Join(dir, "run.log")
	if got := RecordsBeside(log); got != "" {
		t.Errorf("no artifact: %q", got)
	}
	if err := os.Mkdir(filepath.Join(dir, RecordsFile), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := RecordsBeside(log); got != "" {
		t.Errorf("a directory named as the artifact: %q", got)
	}
	other := t.TempDir()
	path := filepath.Join(other, RecordsFile)
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := RecordsBeside(filepath.Join(other, "run.log")); got != path {
		t.Errorf("beside the log: %q, want %q", got, path)
	}
	if got := RecordsBeside("-"); got != "" {
		t.Errorf("standard input: %q", got)
	}
}
