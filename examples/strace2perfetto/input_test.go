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
	"syscall"
	"testing"

	"github.com/phasetrace/phasetrace"
	"github.com/phasetrace/phasetrace/strace"
)

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

// gzipped is log compressed.
func gzipped(log []byte) []byte {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write(log)
	zw.Close()
	return b.Bytes()
}

// gunzipped is what a gzip reader gives of z before it fails.
func gunzipped(z []byte) []byte {
	zr, err := gzip.NewReader(bytes.NewReader(z))
	if err != nil {
		return nil
	}
	b, _ := io.ReadAll(zr)
	return b
}

// A .gz cut in half, cut in its trailer, or with a wrong checksum: the
// records before the damage make the trace, the summary says the log was
// cut, and -strict exits 3. Read from a file and from standard input alike.
func TestCutGzip(t *testing.T) {
	chdir(t)
	log := cleanLog()
	z := gzipped(log)
	badCRC := bytes.Clone(z)
	badCRC[len(badCRC)-8] ^= 0xff
	for _, c := range []struct {
		name string
		z    []byte
		want string
	}{
		{"half", z[:len(z)/2], "the gzip stream is cut"},
		{"no trailer", z[:len(z)-8], "the gzip stream is cut"},
		{"half a trailer", z[:len(z)-3], "the gzip stream is cut"},
		{"bad checksum", badCRC, "checksum does not match"},
	} {
		t.Run(c.name, func(t *testing.T) {
			os.WriteFile("run.log.gz", c.z, 0o644)
			want := spansIn(t, gunzipped(c.z))
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
				if sum.Spans.Read != want || !slices.ContainsFunc(sum.Notes, func(n string) bool { return strings.Contains(n, c.want) }) {
					t.Errorf("%q: %d spans read, want %d; notes %q", args, sum.Spans.Read, want, sum.Notes)
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
	os.Exit(m.Run())
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
