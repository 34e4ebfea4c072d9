package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/phasetrace/phasetrace"
	"github.com/phasetrace/phasetrace/perfetto/check"
	"github.com/phasetrace/phasetrace/strace"
	"github.com/phasetrace/phasetrace/strace/stracetest"
)

func chdir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	t.Chdir(dir)
	return dir
}

// runArgs runs the command with a background context. A nil stdin is a
// terminal: with no LOG, the command converts the embedded sample.
func runArgs(args []string, stdin io.Reader) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	c := &command{stdin: stdin, stdout: &o, stderr: &e, file: phasetrace.File}
	if stdin == nil {
		c.stdin, c.terminal = strings.NewReader(""), func() bool { return true }
	}
	code = c.run(context.Background(), args)
	return code, o.String(), e.String()
}

func decode(t *testing.T, b []byte) *check.Trace {
	t.Helper()
	return logsOnly(decodeWhole(t, b))
}

// decodeWhole reads a trace back whole, failing on anything the trace
// processor would report.
func decodeWhole(t *testing.T, b []byte) *check.Trace {
	t.Helper()
	tr, err := check.ReadBytes(b)
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Err(); err != nil {
		t.Fatal(err)
	}
	return tr
}

// logsOnly is the slices the logs gave, without the trace's own
// conversion instant and the anomalies (tr is left whole).
func logsOnly(tr *check.Trace) *check.Trace {
	tr, _ = tr.WithoutTrack("phasetrace")
	tr, _ = tr.WithoutTrack("anomalies")
	return tr
}

func readTrace(t *testing.T, path string) *check.Trace {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return decode(t, b)
}

// cleanLog is the embedded sample without its last line, a record the
// runtime was killed in the middle of: nothing in it is lost.
func cleanLog() []byte {
	b := bytes.TrimSuffix(sample, []byte("\n"))
	return b[:bytes.LastIndexByte(b, '\n')+1]
}

// names lists the directory's entries.
func names(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var ns []string
	for _, e := range es {
		ns = append(ns, e.Name())
	}
	return ns
}

func TestEmbeddedSample(t *testing.T) {
	chdir(t)
	code, stdout, stderr := runArgs(nil, nil)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if stdout != "" {
		t.Errorf("wrote %d bytes to stdout", len(stdout))
	}
	tr := readTrace(t, sampleOut)
	if len(tr.Slices) == 0 || len(tr.Flows) == 0 {
		t.Errorf("sample trace has %d slices, %d flows", len(tr.Slices), len(tr.Flows))
	}
	for _, want := range []string{"read embedded sample:", "lost 1 record: 1 torn", "pid=4100 dev=0", "aligned", "wall time: known", "trace: " + sampleOut, "ui.perfetto.dev"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("summary lacks %q:\n%s", want, stderr)
		}
	}
}

func TestFlags(t *testing.T) {
	dir := chdir(t)
	// A gzipped log, a log from stdin, a calibration file and the summary
	// as JSON.
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(sample)
	zw.Close()
	os.WriteFile("run.log.gz", gz.Bytes(), 0o644)
	os.WriteFile("cal.json", []byte(`{"device_timestamp_unit": "syscnt_cycles", "raw_device_timestamp_unit": "syscnt_cycles", "samples": [
	  {"position": "pre_host_orchestration", "sample_idx": 0, "host_before_ns": 5000000000, "device_cycles": 1, "host_after_ns": 4000000000}]}`), 0o644)
	code, _, stderr := runArgs([]string{"-calibration", "4100:0=cal.json", "-summary-json", "sum.json", "-q", "run.log.gz"}, strings.NewReader(""))
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if stderr != "" {
		t.Errorf("-q printed %q", stderr)
	}
	readTrace(t, "run.pftrace")
	var sum struct {
		Inputs    []struct{ Name string }
		Artifacts []struct {
			Kind    string
			Skipped int
		}
	}
	b, _ := os.ReadFile("sum.json")
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	if len(sum.Inputs) != 1 || sum.Inputs[0].Name != "run.log.gz" || len(sum.Artifacts) != 1 || sum.Artifacts[0].Skipped != 1 {
		t.Errorf("summary %s", b)
	}

	code, _, stderr = runArgs([]string{"-o", filepath.Join(dir, "in.pftrace"), "-"}, bytes.NewReader(sample))
	if code != exitOK {
		t.Fatalf("stdin: exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "read stdin:") {
		t.Errorf("stdin summary: %s", stderr)
	}
	readTrace(t, "in.pftrace")
}

func TestFlagsAnywhere(t *testing.T) {
	chdir(t)
	os.WriteFile("run.log", sample, 0o644)
	os.WriteFile("-dash.log", sample, 0o644)
	for _, c := range []struct {
		args []string
		out  string
	}{
		{[]string{"run.log", "-o", "x.pftrace", "-q"}, "x.pftrace"},
		{[]string{"-q", "run.log", "-compress", "0", "-o=y.pftrace"}, "y.pftrace"},
		{[]string{"-q", "-o", "z.pftrace", "--", "-dash.log"}, "z.pftrace"},
	} {
		code, _, stderr := runArgs(c.args, strings.NewReader(""))
		if code != exitOK {
			t.Errorf("%q: exit %d: %s", c.args, code, stderr)
			continue
		}
		readTrace(t, c.out)
	}
	for _, n := range names(t, ".") {
		if strings.HasPrefix(n, ".strace2perfetto") || n == "-o" || n == "-q.pftrace" {
			t.Errorf("left %s", n)
		}
	}
}

func TestErrors(t *testing.T) {
	chdir(t)
	os.WriteFile("run.log", sample, 0o644)
	os.Mkdir("adir", 0o755)
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"missing.log"}, exitFail, "missing.log"},
		{[]string{"adir"}, exitFail, "adir: is a directory"},
		{[]string{"-records", "missing.jsonl", "run.log"}, exitFail, "missing.jsonl"},
		{[]string{"-calibration", "1:0=missing.json", "run.log"}, exitFail, "missing.json"},
		{[]string{"-o", "nodir/x.pftrace", "run.log"}, exitFail, "nodir/x.pftrace: directory nodir does not exist"},
		{[]string{"-o", "adir", "run.log"}, exitFail, "adir: is a directory"},
		{[]string{"-calibration", "nope", "run.log"}, exitUsage, "want PID:DEV=FILE"},
		{[]string{"-calibration", "a:0=run.log", "run.log"}, exitUsage, "must be integers"},
		{[]string{"-compress", "99", "run.log"}, exitUsage, "-compress 99"},
		{[]string{"run.log", "-compress", "-1"}, exitUsage, "-compress -1"},
		{[]string{"-", "-"}, exitUsage, "more than once"},
		{[]string{"-o", "-", "-summary-json", "-"}, exitUsage, "both name standard output"},
		{[]string{"-o", "a.pftrace", "-summary-json", "./a.pftrace", "run.log"}, exitUsage, "are the same file"},
		{[]string{"-bogus"}, exitUsage, "flag provided but not defined"},
		{[]string{"-rate-stability", "-1", "run.log"}, exitUsage, "want ppm"},
		{[]string{"-max-rate-error", "lots", "run.log"}, exitUsage, "want ppm"},
		{[]string{"-rate-horizon", "0s", "run.log"}, exitUsage, "want more than 0"},
		{[]string{"run.log", "-o"}, exitUsage, "flag needs an argument"},
	} {
		code, _, stderr := runArgs(c.args, strings.NewReader(""))
		if code != c.code || !strings.Contains(stderr, c.want) {
			t.Errorf("%q: exit %d, stderr %q; want exit %d mentioning %q", c.args, code, stderr, c.code, c.want)
		}
		if strings.Contains(stderr, ".strace2perfetto-") {
			t.Errorf("%q: the message names the hidden file: %s", c.args, stderr)
		}
	}
	if got := names(t, "."); !slices.Equal(got, []string{"adir", "run.log"}) {
		t.Errorf("failed runs left %q", got)
	}
}

// The placement flags reach the model: a steady clock's assumptions give
// tighter bounds than the default's, a 100 ppm stability (no rate
// estimate) wider ones.
func TestPlacementFlags(t *testing.T) {
	chdir(t)
	os.WriteFile("run.log", sample, 0o644)
	median := func(args ...string) int64 {
		t.Helper()
		code, stdout, stderr := runArgs(append(args, "-q", "-o", "run.pftrace", "-summary-json", "-", "run.log"), strings.NewReader(""))
		if code != exitOK {
			t.Fatalf("%q: exit %d: %s", args, code, stderr)
		}
		var sum phasetrace.Summary
		if err := json.Unmarshal([]byte(stdout), &sum); err != nil || len(sum.Devices) == 0 {
			t.Fatalf("%q: summary %v %+v", args, err, sum)
		}
		return sum.Devices[0].Bound.Median
	}
	def, steady, loose := median(), median("-rate-stability", "0.05", "-rate-horizon", "60s"), median("-rate-stability", "200")
	if !(steady < def && def < loose) {
		t.Errorf("median bounds: steady %d, default %d, no rate estimate %d: want them in that order", steady, def, loose)
	}
}

func TestHelp(t *testing.T) {
	t.Parallel()
	code, _, stderr := runArgs([]string{"-h"}, strings.NewReader(""))
	if code != exitOK {
		t.Errorf("-h: exit %d", code)
	}
	for _, want := range []string{"usage: strace2perfetto", "Exit status: 0", "-strict", "-o - writes the trace to standard output", "-window A:B"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("usage lacks %q:\n%s", want, stderr)
		}
	}
}

// TestOutputIsInput: a file the command would write that is one of the
// files it reads is refused before anything is read, and left as it was.
func TestOutputIsInput(t *testing.T) {
	dir := chdir(t)
	os.WriteFile("run.log", sample, 0o640)
	os.WriteFile("rec.jsonl", nil, 0o600)
	os.WriteFile("cal.json", []byte(`{"samples": []}`), 0o604)
	os.Symlink("run.log", "link.log")
	os.Link("run.log", "hard.log")
	os.Mkdir("sub", 0o755)
	stdoutFile := func() io.Writer {
		f, err := os.OpenFile("run.log", os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	for _, c := range []struct {
		name   string
		args   []string
		stdout func() io.Writer
	}{
		{"same path", []string{"-o", "run.log", "run.log"}, nil},
		{"another path", []string{"-o", "sub/../run.log", "run.log"}, nil},
		{"absolute path", []string{"run.log", "-o", filepath.Join(dir, "run.log")}, nil},
		{"symbolic link", []string{"-o", "link.log", "run.log"}, nil},
		{"hard link", []string{"-o", "hard.log", "run.log"}, nil},
		{"second log", []string{"-o", "run.log", "cal.json", "run.log"}, nil},
		{"records", []string{"-records", "rec.jsonl", "-o", "rec.jsonl", "run.log"}, nil},
		{"calibration", []string{"-calibration", "4100:0=cal.json", "-o", "cal.json", "run.log"}, nil},
		{"summary", []string{"-summary-json", "run.log", "-o", "x.pftrace", "run.log"}, nil},
		{"summary on calibration", []string{"-calibration", "4100:0=cal.json", "-summary-json", "cal.json", "run.log"}, nil},
		{"stdout", []string{"-o", "-", "run.log"}, stdoutFile},
	} {
		t.Run(c.name, func(t *testing.T) {
			type state struct {
				Data string
				Mode os.FileMode
			}
			snap := func() map[string]state {
				m := map[string]state{}
				for _, n := range []string{"run.log", "rec.jsonl", "cal.json"} {
					b, _ := os.ReadFile(n)
					st, _ := os.Stat(n)
					m[n] = state{string(b), st.Mode()}
				}
				return m
			}
			before := snap()
			var stdout, stderr bytes.Buffer
			var out io.Writer = &stdout
			if c.stdout != nil {
				out = c.stdout()
			}
			cmd := &command{stdin: strings.NewReader(""), stdout: out, stderr: &stderr,
				file: func(path string) phasetrace.Input {
					t.Errorf("opened %s", path)
					return phasetrace.File(path)
				}}
			if code := cmd.run(context.Background(), c.args); code != exitUsage || !strings.Contains(stderr.String(), "refusing to overwrite an input") {
				t.Errorf("exit %d, %s; want exit %d, refused", code, stderr.String(), exitUsage)
			}
			if diff := cmp.Diff(before, snap()); diff != "" {
				t.Errorf("inputs changed (-before +after):\n%s", diff)
			}
			if l, err := os.Lstat("link.log"); err != nil || l.Mode()&os.ModeSymlink == 0 {
				t.Errorf("link.log is no longer a link")
			}
			if got := names(t, "."); !slices.Equal(got, []string{"cal.json", "hard.log", "link.log", "rec.jsonl", "run.log", "sub"}) {
				t.Errorf("directory holds %q", got)
			}
		})
	}
}

func TestStdoutOutput(t *testing.T) {
	chdir(t)
	os.WriteFile("run.log", sample, 0o644)
	code, stdout, stderr := runArgs([]string{"run.log", "-o", "-"}, strings.NewReader(""))
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if tr := decode(t, []byte(stdout)); len(tr.Slices) == 0 {
		t.Error("no slices on stdout")
	}
	if !strings.Contains(stderr, "trace: standard output") {
		t.Errorf("stderr: %s", stderr)
	}
	if got := names(t, "."); !slices.Equal(got, []string{"run.log"}) {
		t.Errorf("directory holds %q", got)
	}

	// The summary to stdout, the trace to a file.
	code, stdout, stderr = runArgs([]string{"run.log", "-q", "-summary-json", "-"}, strings.NewReader(""))
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var sum phasetrace.Summary
	if err := json.Unmarshal([]byte(stdout), &sum); err != nil || len(sum.Inputs) != 1 {
		t.Errorf("summary on stdout: %v: %s", err, stdout)
	}
	// It decodes whole: written again, it is the same JSON.
	again, err := json.Marshal(&sum)
	if err != nil {
		t.Fatal(err)
	}
	var want, got any
	if err := json.Unmarshal([]byte(stdout), &want); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(again, &got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("summary decoded and written again (-stdout +again):\n%s", diff)
	}
	readTrace(t, "run.pftrace")
}

func TestDevNullOutput(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("only root could replace /dev/null")
	}
	before, err := os.Lstat("/dev/null")
	if err != nil || before.Mode()&os.ModeCharDevice == 0 {
		t.Skip("no /dev/null character device")
	}
	code, _, stderr := runArgs([]string{"-q", "-o", "/dev/null"}, nil)
	if code != exitOK {
		t.Errorf("exit %d: %s", code, stderr)
	}
	after, err := os.Lstat("/dev/null")
	if err != nil || after.Mode() != before.Mode() || !os.SameFile(before, after) {
		t.Fatalf("/dev/null is now %v (%v), was %v", after.Mode(), err, before.Mode())
	}
	for _, n := range names(t, "/dev") {
		if strings.HasPrefix(n, ".strace2perfetto") {
			t.Errorf("left /dev/%s", n)
		}
	}
}

func TestFIFOOutput(t *testing.T) {
	chdir(t)
	if err := syscall.Mkfifo("trace.fifo", 0o600); err != nil {
		t.Skip("no FIFOs:", err)
	}
	got := make(chan []byte)
	go func() {
		f, err := os.Open("trace.fifo")
		if err != nil {
			t.Error(err)
			got <- nil
			return
		}
		b, err := io.ReadAll(f)
		if err != nil {
			t.Error(err)
		}
		f.Close()
		got <- b
	}()
	code, _, stderr := runArgs([]string{"-q", "-o", "trace.fifo"}, nil)
	b := <-got
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	decode(t, b)
	if st, err := os.Lstat("trace.fifo"); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("trace.fifo is no longer a FIFO: %v %v", st, err)
	}
	if got := names(t, "."); !slices.Equal(got, []string{"trace.fifo"}) {
		t.Errorf("directory holds %q", got)
	}
}

// TestLinkOutputs: a link to a regular file replaces the file it names;
// a link to an open file descriptor (/dev/fd/N, like /dev/stdout) is
// written in place.
func TestLinkOutputs(t *testing.T) {
	chdir(t)
	os.Mkdir("runs", 0o755)
	os.WriteFile("runs/7.pftrace", []byte("old"), 0o640)
	os.Symlink("runs/7.pftrace", "latest.pftrace")
	if code, _, stderr := runArgs([]string{"-q", "-o", "latest.pftrace"}, nil); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if l, err := os.Lstat("latest.pftrace"); err != nil || l.Mode()&os.ModeSymlink == 0 {
		t.Error("the link was replaced")
	}
	readTrace(t, "runs/7.pftrace")
	if st, _ := os.Stat("runs/7.pftrace"); st.Mode().Perm() != 0o640 {
		t.Errorf("replaced file has mode %v, want 0640", st.Mode())
	}

	f, err := os.Create("fd.pftrace")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	before, _ := f.Stat()
	path := filepath.Join("/dev/fd", strconv.Itoa(int(f.Fd())))
	if _, err := os.Stat(path); err != nil {
		t.Skip("no /dev/fd:", err)
	}
	if code, _, stderr := runArgs([]string{"-q", "-o", path}, nil); code != exitOK {
		t.Fatalf("%s: exit %d: %s", path, code, stderr)
	}
	after, err := os.Stat("fd.pftrace")
	if err != nil || !os.SameFile(before, after) {
		t.Errorf("fd.pftrace was replaced, not written in place")
	}
	readTrace(t, "fd.pftrace")
}

// TestCompressBeforeReading: a bad -compress is refused before any input
// is opened or standard input read.
func TestCompressBeforeReading(t *testing.T) {
	chdir(t)
	os.WriteFile("run.log", sample, 0o644)
	var stderr bytes.Buffer
	cmd := &command{stdin: failReader{t}, stdout: io.Discard, stderr: &stderr,
		file: func(path string) phasetrace.Input {
			return phasetrace.Input{Name: path, Open: func() (io.ReadCloser, error) {
				t.Errorf("opened %s", path)
				return nil, os.ErrInvalid
			}}
		}}
	if code := cmd.run(context.Background(), []string{"run.log", "-", "-compress", "99"}); code != exitUsage {
		t.Errorf("exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "-compress 99: want a zlib level from 0 (off) to 9") {
		t.Errorf("stderr: %s", stderr.String())
	}
	if got := names(t, "."); !slices.Equal(got, []string{"run.log"}) {
		t.Errorf("directory holds %q", got)
	}
}

type failReader struct{ t *testing.T }

func (r failReader) Read([]byte) (int, error) {
	r.t.Error("read standard input")
	return 0, io.EOF
}

// TestSummaryJSONFails: all outputs or none. A summary file that cannot
// be opened (a directory) is refused before the conversion; one that
// cannot be written (a full disk: /dev/full, standard output on it) fails
// the command and leaves no trace, no part, and an earlier trace as it was.
func TestSummaryJSONFails(t *testing.T) {
	chdir(t)
	os.WriteFile("run.log", sample, 0o644)
	os.Mkdir("sum.json", 0o755)
	code, _, stderr := runArgs([]string{"-summary-json", "sum.json", "run.log"}, strings.NewReader(""))
	if code != exitFail || !strings.Contains(stderr, "strace2perfetto: -summary-json: ") || !strings.Contains(stderr, "no trace written") {
		t.Errorf("a directory: exit %d, want %d: %s", code, exitFail, stderr)
	}
	if got := names(t, "."); !slices.Equal(got, []string{"run.log", "sum.json"}) {
		t.Errorf("a directory: the directory holds %q", got)
	}
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skip("no /dev/full:", err)
	}
	defer full.Close()
	os.WriteFile("old.pftrace", []byte("earlier"), 0o644)
	for _, args := range [][]string{
		{"-summary-json", "/dev/full", "-o", "run.pftrace", "run.log"},
		{"-summary-json", "-", "-o", "run.pftrace", "run.log"},
		{"-summary-json", "/dev/full", "-split", "5", "-o", "run.pftrace", "run.log"},
		{"-summary-json", "/dev/full", "-o", "old.pftrace", "run.log"},
	} {
		var stderr bytes.Buffer
		cmd := &command{stdin: strings.NewReader(""), stdout: full, stderr: &stderr, file: phasetrace.File}
		if code := cmd.run(context.Background(), args); code != exitFail || !strings.Contains(stderr.String(), "no trace written") {
			t.Errorf("%q: exit %d, want %d: %s", args, code, exitFail, stderr.String())
		}
		if got := names(t, "."); !slices.Equal(got, []string{"old.pftrace", "run.log", "sum.json"}) {
			t.Errorf("%q: the directory holds %q", args, got)
		}
		if b, _ := os.ReadFile("old.pftrace"); string(b) != "earlier" {
			t.Errorf("%q: old.pftrace became %d bytes", args, len(b))
		}
	}
}

func TestStrict(t *testing.T) {
	chdir(t)
	clean := cleanLog()
	mid := bytes.IndexByte(clean[len(clean)/2:], '\n') + len(clean)/2 + 1
	torn := slices.Concat(clean[:mid], []byte("[STRACE] v=1 pid=1 tid=1 inv=1 hid=1 depth=0 name=chip.run\n"), clean[mid:])
	os.WriteFile("clean.log", clean, 0o644)
	os.WriteFile("torn.log", torn, 0o644)
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"-strict", "clean.log"}, exitOK},
		{[]string{"-strict", "torn.log"}, exitStrict},
		{[]string{"torn.log", "-strict", "-q"}, exitStrict},
		{[]string{"torn.log"}, exitOK},
		{[]string{"-strict"}, exitOK}, // no LOG, stdin not a terminal: stdin
		{[]string{"-strict", "-"}, exitOK},
	} {
		os.Remove("clean.pftrace")
		os.Remove("torn.pftrace")
		os.Remove("stdin.pftrace")
		os.Remove(sampleOut)
		code, _, stderr := runArgs(c.args, bytes.NewReader(clean))
		if code != c.code {
			t.Errorf("%q: exit %d, want %d: %s", c.args, code, c.code, stderr)
		}
		if code == exitStrict && !slices.Contains(c.args, "-q") && !strings.Contains(stderr, "-strict: records were lost, set aside or moved") {
			t.Errorf("%q: stderr %s", c.args, stderr)
		}
		if code == exitStrict && slices.Contains(c.args, "-q") && stderr != "" {
			t.Errorf("%q: -q printed %s", c.args, stderr)
		}
		out := map[bool]string{true: "torn.pftrace", false: "clean.pftrace"}[slices.Contains(c.args, "torn.log")]
		switch {
		case slices.Contains(c.args, "-"), !slices.Contains(c.args, "torn.log") && !slices.Contains(c.args, "clean.log"):
			out = "stdin.pftrace"
		}
		readTrace(t, out) // kept whatever the exit status
	}
}

// blockingLog is a log whose reads wait until ctx is done and then never
// end: a conversion of it ends only by being interrupted.
type blockingLog struct {
	ctx     context.Context
	started chan struct{}
	once    sync.Once
}

func newBlockingLog(ctx context.Context) *blockingLog {
	return &blockingLog{ctx: ctx, started: make(chan struct{})}
}

func (b *blockingLog) Read(p []byte) (int, error) {
	b.once.Do(func() { close(b.started) })
	<-b.ctx.Done()
	return copy(p, "[STRACE] v=1 pid=1 tid=1 inv=1 hid=1 depth=0 name=chip.run ts=1 dur=1\n"), nil
}

func (b *blockingLog) input(name string) phasetrace.Input {
	return phasetrace.Input{Name: name, Open: func() (io.ReadCloser, error) { return io.NopCloser(b), nil }}
}

// interruptTest runs args, where block.log or stdin is b, and calls
// interrupt once b is read; it checks that the run exits 1 and leaves no
// partial output or copy of standard input.
func interruptTest(t *testing.T, ctx context.Context, b *blockingLog, stdin io.Reader, args []string, interrupt func()) {
	t.Helper()
	dir := chdir(t)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	os.WriteFile("block.log", nil, 0o644)
	if stdin == nil {
		stdin = b
	}
	var stderr bytes.Buffer
	cmd := &command{stdin: stdin, stdout: io.Discard, stderr: &stderr,
		file: func(path string) phasetrace.Input {
			if path == "block.log" {
				return b.input(path)
			}
			return phasetrace.File(path)
		}}
	done := make(chan int)
	go func() { done <- cmd.run(ctx, args) }()
	<-b.started
	hidden := 0
	for _, n := range names(t, dir) {
		if strings.HasPrefix(n, ".strace2perfetto-") {
			hidden++
		}
	}
	if hidden != 1 {
		t.Errorf("%d hidden outputs while converting, want 1", hidden)
	}
	if slices.Contains(args, "-") && len(names(t, tmp)) != 1 {
		t.Errorf("TMPDIR holds %q while converting, want the copy of stdin", names(t, tmp))
	}
	interrupt()
	if code := <-done; code != exitFail {
		t.Errorf("exit %d, want %d", code, exitFail)
	}
	if !strings.Contains(stderr.String(), "interrupted") {
		t.Errorf("stderr: %s", stderr.String())
	}
	if got := names(t, dir); !slices.Equal(got, []string{"block.log"}) {
		t.Errorf("directory holds %q after the interruption", got)
	}
	if got := names(t, tmp); len(got) != 0 {
		t.Errorf("TMPDIR holds %q after the interruption", got)
	}
}

func TestInterrupted(t *testing.T) {
	for _, c := range []struct {
		name  string
		args  []string
		stdin bool // stdin blocks, not block.log
	}{
		{"log", []string{"-o", "out.pftrace", "block.log"}, false},
		{"stdin copied, then log", []string{"-o", "out.pftrace", "-", "block.log"}, false},
		{"while copying stdin", []string{"-o", "out.pftrace", "-"}, true},
		{"records", []string{"-o", "out.pftrace", "-records", "block.log", "-"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			b := newBlockingLog(ctx)
			var stdin io.Reader = bytes.NewReader(sample)
			if c.stdin {
				stdin = nil
			}
			interruptTest(t, ctx, b, stdin, c.args, cancel)
		})
	}
}

// TestSIGINT sends SIGINT to the test process while the signal is caught
// by the command's own handler.
func TestSIGINT(t *testing.T) {
	ctx, stop := signalContext()
	defer stop()
	b := newBlockingLog(ctx)
	interruptTest(t, ctx, b, bytes.NewReader(sample), []string{"-q", "-o", "out.pftrace", "-", "block.log"}, func() {
		if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
	})
}

// The command as main wires it: once the conversion is over, the signal
// handling is released without ending the context, so the summary file is
// still written.
func TestMainWiringWritesTheSummary(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "run.log")
	if err := os.WriteFile(log, cleanLog(), 0o644); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	c, ctx, stop := mainCommand(strings.NewReader(""), io.Discard, &stderr)
	defer stop()
	if code := c.run(ctx, []string{"-q", "-summary-json", filepath.Join(dir, "s.json"), log}); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "s.json")); err != nil {
		t.Errorf("no summary file: %v", err)
	}
}

// An input with no records: said plainly, exit 1.
func TestEmptyInput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, content := range map[string]string{"empty.log": "", "text.log": "hello\nworld\n"} {
		log := filepath.Join(dir, name)
		os.WriteFile(log, []byte(content), 0o644)
		var stderr bytes.Buffer
		c := &command{stdin: strings.NewReader(""), stdout: io.Discard, stderr: &stderr, file: phasetrace.File}
		code := c.run(context.Background(), []string{log})
		if code != exitFail || !strings.Contains(stderr.String(), "held no [STRACE]") || strings.Contains(stderr.String(), "open it in") {
			t.Errorf("%s: exit %d: %s", name, code, stderr.String())
		}
	}
}

// The host_phase_records.jsonl beside the log is used, and said so, unless
// -no-records-beside.
func TestRecordsBeside(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	log := filepath.Join(dir, "run.log")
	os.WriteFile(log, cleanLog(), 0o644)
	os.WriteFile(filepath.Join(dir, "host_phase_records.jsonl"), []byte(`{"pid": 4100, "inv": 99, "records": []}`+"\n"), 0o644)
	for _, tc := range []struct {
		args []string
		used bool
	}{{[]string{log}, true}, {[]string{log, "-no-records-beside"}, false}} {
		var stderr bytes.Buffer
		c := &command{stdin: strings.NewReader(""), stdout: io.Discard, stderr: &stderr, file: phasetrace.File}
		if code := c.run(context.Background(), tc.args); code != exitOK {
			t.Fatalf("%v: exit %d: %s", tc.args, code, stderr.String())
		}
		if got := strings.Contains(stderr.String(), "using "+filepath.Join(dir, "host_phase_records.jsonl")) && strings.Contains(stderr.String(), "(host_phase_records)"); got != tc.used {
			t.Errorf("%v: records used %v, want %v:\n%s", tc.args, got, tc.used, stderr.String())
		}
	}
}

// An output that resolves to the file standard input is — the log "-", or
// standard input read for want of a LOG — through /proc/self/fd/N,
// /dev/fd/N or standard output itself is refused before anything is opened
// for writing, and the log is left as it was.
func TestOutputIsStdin(t *testing.T) {
	chdir(t)
	os.WriteFile("run.log", sample, 0o644)
	for _, c := range []struct {
		name string
		args func(fd string) []string
		// stdoutIsLog: standard output is the log too (opened to append).
		stdoutIsLog bool
	}{
		{"summary on /proc/self/fd", func(fd string) []string {
			return []string{"-summary-json", "/proc/self/fd/" + fd, "-o", "x.pftrace", "-"}
		}, false},
		{"trace on /proc/self/fd", func(fd string) []string { return []string{"-o", "/proc/self/fd/" + fd, "-"} }, false},
		{"trace on /dev/fd", func(fd string) []string { return []string{"-o", "/dev/fd/" + fd, "-"} }, false},
		{"no LOG, trace on /dev/fd", func(fd string) []string { return []string{"-o", "/dev/fd/" + fd} }, false},
		{"no LOG, summary on /dev/fd", func(fd string) []string { return []string{"-summary-json", "/dev/fd/" + fd} }, false},
		{"trace on the log by name", func(string) []string { return []string{"-o", "run.log", "-"} }, false},
		{"trace to standard output", func(string) []string { return []string{"-o", "-", "-"} }, true},
		{"summary to standard output", func(string) []string { return []string{"-summary-json", "-", "-"} }, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			stdin, err := os.Open("run.log")
			if err != nil {
				t.Fatal(err)
			}
			defer stdin.Close()
			fd := strconv.Itoa(int(stdin.Fd()))
			if _, err := os.Stat("/proc/self/fd/" + fd); err != nil {
				t.Skip("no /proc/self/fd:", err)
			}
			var stdout io.Writer = io.Discard
			if c.stdoutIsLog {
				f, err := os.OpenFile("run.log", os.O_WRONLY|os.O_APPEND, 0)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				stdout = f
			}
			var stderr bytes.Buffer
			cmd := &command{stdin: stdin, stdout: stdout, stderr: &stderr, file: phasetrace.File}
			if code := cmd.run(context.Background(), c.args(fd)); code != exitUsage || !strings.Contains(stderr.String(), "refusing to overwrite an input") {
				t.Errorf("exit %d, %s; want exit %d, refused", code, stderr.String(), exitUsage)
			}
			if b, _ := os.ReadFile("run.log"); !bytes.Equal(b, sample) {
				t.Errorf("run.log changed: %d bytes", len(b))
			}
			if got := names(t, "."); !slices.Equal(got, []string{"run.log"}) {
				t.Errorf("directory holds %q", got)
			}
		})
	}
}

// The command as a user runs it, with the shell's redirections: -o
// /dev/stdin and -summary-json /dev/stdin never touch the log.
func TestOutputIsStdinBuilt(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command")
	}
	if _, err := os.Stat("/dev/stdin"); err != nil {
		t.Skip("no /dev/stdin")
	}
	bin := buildCommand(t)
	dir := chdir(t)
	log := filepath.Join(dir, "run.log")
	os.WriteFile(log, sample, 0o644)
	for _, args := range [][]string{
		{"-summary-json", "/dev/stdin", "-o", "x.pftrace", "-"},
		{"-o", "/dev/stdin", "-"},
		{"-o", "/dev/stdin"},
	} {
		stdin, err := os.Open(log)
		if err != nil {
			t.Fatal(err)
		}
		code, stderr := runBuilt(t, bin, args, stdin)
		stdin.Close()
		if code != exitUsage || !strings.Contains(stderr, "refusing to overwrite an input") {
			t.Errorf("%q: exit %d, %s", args, code, stderr)
		}
		if b, _ := os.ReadFile(log); !bytes.Equal(b, sample) {
			t.Errorf("%q: run.log changed: %d bytes", args, len(b))
		}
		if got := names(t, dir); !slices.Equal(got, []string{"run.log"}) {
			t.Errorf("%q: directory holds %q", args, got)
		}
	}
}

// With no LOG and standard input not a terminal, standard input is the
// log: `cat run.log | strace2perfetto -o run.pftrace` converts run.log,
// not the embedded sample.
func TestNoLogReadsStdin(t *testing.T) {
	chdir(t)
	log := cleanLog()
	var stdout, stderr bytes.Buffer
	cmd := &command{stdin: bytes.NewReader(log), stdout: &stdout, stderr: &stderr, file: phasetrace.File}
	if code := cmd.run(context.Background(), []string{"-o", "run.pftrace", "-summary-json", "s.json"}); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "read stdin:") || strings.Contains(stderr.String(), "embedded sample") {
		t.Errorf("did not read stdin:\n%s", stderr.String())
	}
	var sum phasetrace.Summary
	b, _ := os.ReadFile("s.json")
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	if want := spansIn(t, log); sum.Spans.Read != want || !sum.Lossless() {
		t.Errorf("read %d spans (lossless %v), want %d of stdin, none lost", sum.Spans.Read, sum.Lossless(), want)
	}
	readTrace(t, "run.pftrace")
}

// spansIn counts the complete spans the reader reads in log.
func spansIn(t *testing.T, log []byte) int64 {
	t.Helper()
	rd := strace.NewReader(bytes.NewReader(log))
	for {
		if _, err := rd.Read(); err == io.EOF {
			break
		}
	}
	st := rd.Stats()
	return st.Records.Spans
}

// Every signal that ends a process and can be caught stops a conversion
// and removes the partial trace and the copy of standard input.
func TestTerminatingSignals(t *testing.T) {
	for _, sig := range terminating {
		t.Run(sig.String(), func(t *testing.T) {
			ctx, stop := signalContext()
			defer stop()
			b := newBlockingLog(ctx)
			interruptTest(t, ctx, b, bytes.NewReader(sample), []string{"-q", "-o", "out.pftrace", "-", "block.log"}, func() {
				if err := syscall.Kill(os.Getpid(), sig.(syscall.Signal)); err != nil {
					t.Fatal(err)
				}
			})
		})
	}
}

// A .gz cut in half, cut in its trailer, or with a wrong checksum: the
// records before the damage make the trace, the summary counts the cut on
// the log (InputSummary.Cut, not lossless), and -strict exits 3. Read from a file and from standard input alike.
func TestCutGzip(t *testing.T) {
	chdir(t)
	log := cleanLog()
	want := map[string]string{"half": "the compressed stream is cut", "no trailer": "the compressed stream is cut", "half a trailer": "the compressed stream is cut",
		"bad checksum": "checksum does not match", "corrupt data": "compressed data is damaged"}
	for _, d := range stracetest.DamagedGzips(log) {
		c := struct {
			name string
			z    []byte
			want string
		}{d.Name, d.Gz, want[d.Name]}
		t.Run(c.name, func(t *testing.T) {
			os.WriteFile("run.log.gz", c.z, 0o644)
			want := spansIn(t, stracetest.Gunzipped(c.z))
			if want == 0 {
				t.Fatal("nothing readable")
			}
			for _, args := range [][]string{
				{"-summary-json", "s.json", "run.log.gz"},
				{"-summary-json", "s.json", "-strict", "run.log.gz"},
				{"-summary-json", "s.json", "-strict", "-o", "run.pftrace", "-"},
			} {
				os.Remove("run.pftrace")
				var stderr bytes.Buffer
				cmd := &command{stdin: bytes.NewReader(c.z), stdout: io.Discard, stderr: &stderr, file: phasetrace.File}
				code := cmd.run(context.Background(), args)
				wantCode := exitOK
				if slices.Contains(args, "-strict") {
					wantCode = exitStrict
				}
				if code != wantCode || !strings.Contains(stderr.String(), c.want) {
					t.Errorf("%q: exit %d, want %d saying %q:\n%s", args, code, wantCode, c.want, stderr.String())
				}
				var sum phasetrace.Summary
				b, _ := os.ReadFile("s.json")
				if err := json.Unmarshal(b, &sum); err != nil {
					t.Fatal(err)
				}
				if sum.Spans.Read != want || len(sum.Inputs) != 1 || !strings.Contains(sum.Inputs[0].Cut, c.want) || sum.Lossless() {
					t.Errorf("%q: %d spans read, want %d; inputs %+v", args, sum.Spans.Read, want, sum.Inputs)
				}
				if tr := readTrace(t, "run.pftrace"); int64(len(tr.Slices)) < sum.Spans.Drawn {
					t.Errorf("%q: trace holds %d slices, the summary says %d spans drawn", args, len(tr.Slices), sum.Spans.Drawn)
				}
			}
		})
	}
}

// One rule: logs with no record the reader can read whole — empty, a
// binary with record heads in it, random bytes, text — exit 1 and leave no
// trace and no summary file.
func TestNoRecordsNoOutput(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	random := make([]byte, 1<<16)
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	binary := slices.Concat([]byte("\x7fELF\x02\x01\x01\x00"), random[:4096],
		[]byte("[STRACE] v=1 pid=\x00\x01\n[CLOCK_ANCHOR] v=\x02\x00"), random[4096:8192])
	for name, content := range map[string][]byte{
		"empty.log":  nil,
		"binary.log": binary,
		"random.log": random,
		"text.log":   []byte("hello\nworld\n"),
		"torn.log":   []byte("[STRACE] v=1 pid=1 tid=1 inv=1 hid=1 depth=0 name=chip.run\n"),
	} {
		t.Run(name, func(t *testing.T) {
			dir := chdir(t)
			os.WriteFile(name, content, 0o644)
			for _, args := range [][]string{{name}, {"-strict", "-summary-json", "s.json", "-o", "x.pftrace", name}} {
				var stderr bytes.Buffer
				cmd := &command{stdin: strings.NewReader(""), stdout: io.Discard, stderr: &stderr, file: phasetrace.File}
				if code := cmd.run(context.Background(), args); code != exitFail || !strings.Contains(stderr.String(), "no trace written") {
					t.Errorf("%q: exit %d: %s", args, code, stderr.String())
				}
				if got := names(t, dir); !slices.Equal(got, []string{name}) {
					t.Errorf("%q: directory holds %q", args, got)
				}
			}
		})
	}
}

// mainEnv, set in the environment of the test binary, makes it the
// command: TestMain runs main with the arguments it was given.
const mainEnv = "STRACE2PERFETTO_TEST_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(mainEnv) == "1" {
		main()
	}
	if os.Getenv(pipeEnv) == "1" {
		writeToBrokenPipe()
	}
	os.Exit(m.Run())
}

// pipeEnv makes the test binary, run as a process, release the command's
// signal handling and then write to its standard output, a pipe whose
// reader is gone.
const pipeEnv = "STRACE2PERFETTO_TEST_BROKEN_PIPE"

func writeToBrokenPipe() {
	_, stop, release := releasableSignalContext()
	release() // as after a first signal, or once the conversion is over
	for range 100 {
		os.Stdout.Write([]byte("trace bytes\n"))
	}
	stop()
	os.Stderr.WriteString("survived\n")
	os.Exit(0)
}

// After the command stops treating signals as interruptions (its first
// signal, or its conversion over), a write to a reader gone fails with
// EPIPE rather than ending the process with SIGPIPE before it can clean up
// (strace2perfetto -o - | head used to leave its stdin copy behind).
func TestBrokenPipeAfterRelease(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the test binary")
	}
	cmd := exec.Command(buildCommand(t), "-test.run", "^$")
	cmd.Env = append(os.Environ(), pipeEnv+"=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out.Close() // the reader gone before the first write
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil || !strings.Contains(stderr.String(), "survived") {
		t.Errorf("writing to a broken pipe after release: %v, %q", err, stderr.String())
	}
}

// buildCommand is the command as a process: the test binary, run as main.
func buildCommand(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Skip("no executable:", err)
	}
	return exe
}

// runBuilt runs the command bin with args and stdin, in the current
// directory, and returns its exit status and standard error.
func runBuilt(t *testing.T, bin string, args []string, stdin *os.File) (int, string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), mainEnv+"=1")
	cmd.Stdin = stdin
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, stderr.String()
	case errors.As(err, &ee):
		return ee.ExitCode(), stderr.String()
	}
	t.Fatal(err)
	return 0, ""
}

// A -records file that can be read only once (a FIFO) is copied first,
// since the converter reads the artifact twice: every pass is drawn in its
// bind, as from a regular file.
func TestRecordsFromFIFO(t *testing.T) {
	chdir(t)
	os.WriteFile("run.log", sample, 0o644)
	var lines bytes.Buffer
	rd := strace.NewReader(bytes.NewReader(sample))
	passes := 0
	for {
		rec, err := rd.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if sp := &rec.Span; rec.Kind == strace.KindSpan && sp.Name == strace.SpanBind && !sp.IsDevice() {
			lines.WriteString(`{"pid": ` + strconv.Itoa(int(sp.Pid)) + `, "inv": ` + strconv.FormatUint(sp.Inv, 10) + `, "records": [{"phase": "graph_submit", "start_ns": ` +
				strconv.FormatInt(sp.TS, 10) + `, "end_ns": ` + strconv.FormatInt(sp.TS+sp.Dur, 10) + "}]}\n")
			passes++
		}
	}
	if passes == 0 {
		t.Fatal("no bind in the sample")
	}
	if err := syscall.Mkfifo("rec.fifo", 0o600); err != nil {
		t.Skip("no FIFOs:", err)
	}
	go func() {
		f, err := os.OpenFile("rec.fifo", os.O_WRONLY, 0)
		if err != nil {
			t.Error(err)
			return
		}
		f.Write(lines.Bytes())
		f.Close()
	}()
	code, _, stderr := runArgs([]string{"-q", "-no-records-beside", "-records", "rec.fifo", "-summary-json", "sum.json", "-o", "out.pftrace", "run.log"}, nil)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile("sum.json")
	if err != nil {
		t.Fatal(err)
	}
	var sum phasetrace.Summary
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	if n := sum.NotDrawn[phasetrace.ReasonPassesWithoutBind]; n != 0 || len(sum.Artifacts) != 1 || sum.Artifacts[0].Items != int64(passes) {
		t.Errorf("%d of %d passes not drawn, artifacts %+v", n, passes, sum.Artifacts)
	}
	tb, err := os.ReadFile("out.pftrace")
	if err != nil {
		t.Fatal(err)
	}
	drawn := 0
	for _, s := range decode(t, tb).Slices {
		for _, a := range s.Args {
			if a.Name == "full_name" && a.Value == strace.SpanBind+".host_orch.graph_submit" {
				drawn++
			}
		}
	}
	if drawn != passes {
		t.Errorf("%d passes drawn, want %d", drawn, passes)
	}
	if got := names(t, "."); !slices.Equal(got, []string{"out.pftrace", "rec.fifo", "run.log", "sum.json"}) {
		t.Errorf("directory holds %q", got)
	}
}
