package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/phasetrace/phasetrace"
	"github.com/phasetrace/phasetrace/strace/stracetest"
)

// Both commands read a damaged .gz the same way: on a .gz cut in half, cut
// in its trailer (whole or in half), with a wrong checksum or with corrupt
// compressed data, strace2perfetto and stracestat read the same bytes (the
// same cut, after the same number of bytes, said in the same words), keep
// the same records (the same spans, of the same invocations), say the log
// was cut and exit 3 under -strict.
func TestCutGzipBothCommands(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build stracestat:", err)
	}
	stracestat := filepath.Join(t.TempDir(), "stracestat")
	if out, err := exec.Command(gobin, "build", "-o", stracestat, "github.com/phasetrace/phasetrace/examples/stracestat").CombinedOutput(); err != nil {
		t.Fatalf("building stracestat: %v\n%s", err, out)
	}
	var log bytes.Buffer
	stracetest.Generate(&log, stracetest.Config{Seed: 3, Rounds: 8})
	chdir(t)
	invocations := regexp.MustCompile(`(?m)^callable hid=\S+ — (\d+) invocation\(s\)$`)
	for _, d := range stracetest.DamagedGzips(log.Bytes()) {
		c := struct {
			name string
			z    []byte
		}{d.Name, d.Gz}
		t.Run(c.name, func(t *testing.T) {
			if err := os.WriteFile("run.log.gz", c.z, 0o644); err != nil {
				t.Fatal(err)
			}
			read := stracetest.Gunzipped(c.z)
			code, _, stderr := runArgs([]string{"-strict", "-summary-json", "s.json", "-o", "run.pftrace", "run.log.gz"}, strings.NewReader(""))
			var sum phasetrace.Summary
			b, _ := os.ReadFile("s.json")
			if err := json.Unmarshal(b, &sum); err != nil {
				t.Fatal(err)
			}
			in := sum.Inputs[0]
			if code != exitStrict || in.Cut == "" || in.CutAfter != int64(len(read)) || !strings.Contains(stderr, "; cut: "+in.Cut) {
				t.Errorf("strace2perfetto -strict: exit %d, cut %q after %d of the %d bytes gzip gives:\n%s", code, in.Cut, in.CutAfter, len(read), stderr)
			}
			if want := spansIn(t, read); sum.Spans.Read != want || want == 0 {
				t.Errorf("strace2perfetto read %d spans, want the %d of what gzip gives", sum.Spans.Read, want)
			}
			if tr := readTrace(t, "run.pftrace"); int64(len(tr.Slices)) < sum.Spans.Drawn {
				t.Errorf("the trace holds %d slices, the summary says %d spans drawn", len(tr.Slices), sum.Spans.Drawn)
			}

			cmd := exec.Command(stracestat, "tpot", "-strict", "run.log.gz")
			var out, errs bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errs
			err := cmd.Run()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != exitStrict {
				t.Errorf("stracestat -strict: %v, want exit %d:\n%s", err, exitStrict, errs.String())
			}
			if !strings.Contains(errs.String(), "run.log.gz: "+in.Cut+";") {
				t.Errorf("stracestat does not say the cut strace2perfetto says (%q):\n%s", in.Cut, errs.String())
			}
			var n int64
			for _, m := range invocations.FindAllStringSubmatch(out.String(), -1) {
				v, _ := strconv.ParseInt(m[1], 10, 64)
				n += v
			}
			if n != sum.Invocations || n == 0 {
				t.Errorf("stracestat counts %d invocations, strace2perfetto %d:\n%s", n, sum.Invocations, out.String())
			}
		})
	}
}
