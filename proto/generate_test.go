package proto

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestGeneratedIsCurrent regenerates the Go code from perfetto_trace.proto
// into a temporary directory and fails when it differs from the committed
// perfetto_trace.pb.go. It needs protoc and protoc-gen-go on PATH and says
// that it skipped when they are missing.
func TestGeneratedIsCurrent(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"protoc", "protoc-gen-go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("skipped: %s is not installed, so the committed perfetto_trace.pb.go was not regenerated and compared (see doc.go for the pinned versions)", tool)
		}
	}
	dir := t.TempDir()
	cmd := exec.Command("protoc", "--proto_path=.", "--go_out="+dir, "--go_opt=paths=source_relative", "perfetto_trace.proto")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("protoc: %v\n%s", err, out)
	}
	got, err := os.ReadFile(filepath.Join(dir, "perfetto_trace.pb.go"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("perfetto_trace.pb.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("perfetto_trace.pb.go is stale: run `go generate ./proto` with the pinned protoc and protoc-gen-go versions (doc.go)")
	}
}
