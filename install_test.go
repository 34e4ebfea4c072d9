package phasetrace_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestInstallFromAClone does what the README's Install section says, on a
// fresh module: go install ./examples/... from the clone puts the commands
// in GOBIN, and a module of the user's own imports the library through a
// replace directive pointing at the clone, builds and converts a log.
func TestInstallFromAClone(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the commands and a module of its own")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on the PATH")
	}
	clone, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	run := func(dir string, args ...string) string {
		t.Helper()
		cmd := exec.Command(goTool, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOBIN="+bin, "GOFLAGS=", "GOWORK=off")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
		}
		return string(out)
	}
	run(clone, "install", "./examples/...")
	for _, c := range []string{"strace2perfetto", "stracestat", "pftrace", "loggen", "devicebuffer", "writerdemo"} {
		if _, err := os.Stat(filepath.Join(bin, c)); err != nil {
			t.Errorf("go install ./examples/... left no %s: %v", c, err)
		}
	}

	user := t.TempDir()
	if err := os.WriteFile(filepath.Join(user, "go.mod"), []byte("module example.com/mytool\n\ngo 1.26\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	main := `package main

import (
	"bytes"
	"fmt"
	"os"

	"github.com/phasetrace/phasetrace"
)

func main() {
	log, err := os.ReadFile(os.Args[1])
	if err != nil {
		panic(err)
	}
	var out bytes.Buffer
	sum, err := phasetrace.Convert(&out, []phasetrace.Input{phasetrace.Bytes("run.log", log)})
	if err != nil {
		panic(err)
	}
	fmt.Printf("%d spans drawn, %d bytes\n", sum.Spans.Drawn, out.Len())
}
`
	if err := os.WriteFile(filepath.Join(user, "main.go"), []byte(main), 0o644); err != nil {
		t.Fatal(err)
	}
	run(user, "mod", "edit", "-require", "github.com/phasetrace/phasetrace@v0.0.0", "-replace", "github.com/phasetrace/phasetrace="+clone)
	run(user, "mod", "tidy")
	out := run(user, "run", ".", filepath.Join(clone, "examples", "strace2perfetto", "sample.log"))
	if !strings.Contains(out, "656 spans drawn") {
		t.Errorf("the user's module converted the sample to %q, want its 656 spans drawn", out)
	}
}
