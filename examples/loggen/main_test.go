package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/phasetrace/phasetrace"
	"github.com/phasetrace/phasetrace/strace/stracetest"
)

// run runs the command with a background context and standard output not
// a terminal.
func run(args ...string) (code int, stdout, stderr string) {
	return runCtx(context.Background(), args...)
}

func runCtx(ctx context.Context, args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	c := &command{stdout: &o, stderr: &e, terminal: func() bool { return false }}
	code = c.run(ctx, args)
	return code, o.String(), e.String()
}

func chdir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	t.Chdir(dir)
	return dir
}

// convert converts the files named with the library, as strace2perfetto
// does, and returns the summary.
func convert(t *testing.T, opts []phasetrace.Option, files ...string) *phasetrace.Summary {
	t.Helper()
	var in []phasetrace.Input
	for _, f := range files {
		in = append(in, phasetrace.File(f))
	}
	var out bytes.Buffer
	sum, err := phasetrace.Convert(&out, in, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

func TestParseSize(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]int64{"100MB": 100 << 20, "1GB": 1 << 30, "512KiB": 512 << 10, "1048576": 1 << 20,
		"0.5GB": 1 << 29, "2m": 2 << 20, "3 MiB": 3 << 20, "10B": 10, "1T": 1 << 40} {
		if got, err := parseSize(in); err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "MB", "-1MB", "1XB", "1iB", "1e6", "99999999999TB"} {
		if got, err := parseSize(in); err == nil {
			t.Errorf("parseSize(%q) = %d, want an error", in, got)
		}
	}
}

func TestFlags(t *testing.T) {
	t.Parallel()
	cfg, code := parse(nil, &bytes.Buffer{})
	if cfg == nil {
		t.Fatalf("no flags: exit %d", code)
	}
	want := config{size: 100 << 20, ranks: 2, seed: 99, anchors: 100 * time.Millisecond, pipelined: true}
	if diff := cmp.Diff(want, *cfg, cmp.AllowUnexported(config{}, damage{}), cmp.Comparer(func(a, b func(*stracetest.Config)) bool { return true })); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
	cfg, _ = parse([]string{"-o", "x.log", "-f", "-size", "1GB", "-ranks", "4", "-seed", "7", "-anchors", "1s", "-sparse-anchors",
		"-drift-ppm", "50", "-pipelined=false", "-damage", "joined,cut-at-end", "-gz"}, &bytes.Buffer{})
	if cfg == nil {
		t.Fatal("every flag: usage error")
	}
	gen := logConfig(&config{size: 1 << 20, ranks: cfg.ranks, seed: cfg.seed, anchors: cfg.anchors, sparse: cfg.sparse,
		driftPPM: cfg.driftPPM, pipelined: cfg.pipelined, damage: cfg.damage})
	wantGen := stracetest.Realistic(0)
	wantGen.Ranks, wantGen.Seed, wantGen.AnchorEvry, wantGen.SparseAnchors, wantGen.DriftPPM, wantGen.Pipelined = 4, 7, 1e9, true, 50, false
	wantGen.JoinRate, wantGen.CutAtEnd = 0.01, true
	wantGen.Rounds = gen.Rounds
	if diff := cmp.Diff(wantGen, gen); diff != "" {
		t.Errorf("generator's configuration (-want +got):\n%s", diff)
	}
	if cfg.out != "x.log" || !cfg.force || cfg.size != 1<<30 || !cfg.gz {
		t.Errorf("-o, -f, -size, -gz: %+v", cfg)
	}
	if cfg, _ := parse([]string{"-gz", "-damage", "corrupt-data"}, &bytes.Buffer{}); cfg == nil || cfg.gzDamage != "corrupt data" {
		t.Errorf("-damage corrupt-data: %+v", cfg)
	}
	// A clock whose rate changes, read before every launch.
	cfg, _ = parse([]string{"-ranks", "4", "-anchors", "launch", "-rate-steps", "5", "-rate-step-every", "3s", "-rate-wander", "2", "-rate-wander-period", "20s"}, &bytes.Buffer{})
	if cfg == nil {
		t.Fatal("rate flags: usage error")
	}
	gen = logConfig(cfg)
	if !gen.AnchorPerLaunch || gen.AnchorEvry != 0 || gen.Rate != (stracetest.RateChange{StepPPM: 5, StepEvery: 3e9, WanderPPM: 2, WanderPeriod: 20e9}) {
		t.Errorf("-anchors launch and the rate flags: %+v", gen)
	}
}

// Usage errors exit 2 and write nothing; -h exits 0 and lists every kind.
func TestUsageErrors(t *testing.T) {
	dir := chdir(t)
	for _, args := range [][]string{
		{"-damage", "nope"}, {"-damage", "joined,nope"}, {"-damage", "half"}, {"-gz", "-damage", "half,joined"},
		{"-o", "out.log", "-damage", "nope"}, {"-size", "lots"}, {"-size", "-1"}, {"-ranks", "1"}, {"-anchors", "-1s"}, {"-anchors", "often"}, {"-bogus"}, {"extra"},
		{"-drift-ppm", "101"}, {"-rate-steps", "41"}, {"-rate-steps", "30", "-rate-wander", "11"}, {"-drift-ppm", "80", "-rate-steps", "21"}, {"-rate-steps", "-1"},
		{"-rate-step-every", "0s"}, {"-rate-wander-period", "-1s"},
		{"-remote", "2"}, {"-remote", "2", "-o", "-"}, {"-remote", "2", "-o", "r.log", "-ranks", "3"},
		{"-remote", "2", "-o", "r.log", "-damage", "joined"}, {"-remote", "-1", "-o", "r.log"},
		// What cannot be made in bounded time and memory, and a -size
		// below the first round.
		{"-ranks", "65"}, {"-ranks", "1000"}, {"-anchors", "1ns"}, {"-anchors", "9ms"}, {"-remote", "65", "-o", "r.log"},
		{"-remote", "2", "-o", "r.log", "-size", "65MB"}, {"-gz", "-damage", "half", "-o", "z.log.gz", "-size", "513MB"},
		{"-size", "1KB", "-o", "x.log"}, {"-ranks", "256", "-size", "1KB"}, {"-ranks", "64", "-anchors", "10ms", "-size", "100KB", "-o", "x.log"},
	} {
		if code, _, stderr := run(args...); code != exitUsage {
			t.Errorf("%q: exit %d, want %d: %s", args, code, exitUsage, stderr)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("usage errors left %v", ents)
	}
	code, _, stderr := run("-h")
	if code != exitOK {
		t.Errorf("-h: exit %d", code)
	}
	for _, d := range damages {
		if !strings.Contains(stderr, "  "+d.name+" ") {
			t.Errorf("-h lacks -damage %s:\n%s", d.name, stderr)
		}
	}
	// Standard output a terminal.
	var e bytes.Buffer
	c := &command{stdout: &bytes.Buffer{}, stderr: &e, terminal: func() bool { return true }}
	if code := c.run(context.Background(), []string{"-size", "16KB"}); code != exitUsage {
		t.Errorf("stdout a terminal: exit %d, want %d: %s", code, exitUsage, e.String())
	}
}

// The default log is stracetest.Realistic's at the size asked, on
// standard output as in a file, and converts clean.
func TestDefaultLog(t *testing.T) {
	chdir(t)
	var want bytes.Buffer
	if err := stracetest.Generate(&want, stracetest.Realistic(1<<20)); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := run("-size", "1MB")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if stdout != want.String() {
		t.Errorf("standard output: %d bytes, not Realistic(1 MiB)'s %d", len(stdout), want.Len())
	}
	if n := int64(want.Len()); n < 1<<20 || n > 1<<20+64<<10 {
		t.Errorf("Realistic(1 MiB) is %d bytes", n)
	}
	if code, _, stderr := run("-size", "1MB", "-o", "mid.log"); code != exitOK {
		t.Fatalf("-o: exit %d: %s", code, stderr)
	}
	if got, _ := os.ReadFile("mid.log"); !bytes.Equal(got, want.Bytes()) {
		t.Errorf("-o mid.log: %d bytes, not Realistic(1 MiB)'s %d", len(got), want.Len())
	}
	if sum := convert(t, nil, "mid.log"); !sum.Clean() || sum.Spans.Read == 0 {
		t.Errorf("mid.log does not convert clean (%d spans read)", sum.Spans.Read)
	}
	if code, _, _ := run("-size", "1MB", "-o", "mid.log.gz", "-gz"); code != exitOK {
		t.Fatal("-gz failed")
	}
	if got, _ := os.ReadFile("mid.log.gz"); !bytes.Equal(got, stracetest.Gzip(want.Bytes())) {
		t.Error("-gz is not the log compressed as stracetest.Gzip does")
	}
}

// Every -damage kind converts; the kinds the reader recovers read clean,
// the others not.
func TestDamage(t *testing.T) {
	chdir(t)
	clean := map[string]bool{"joined": true, "shared-line": true, "unterminated": true}
	for _, d := range damages {
		name := d.name + ".log"
		args := []string{"-size", "256KiB", "-damage", d.name, "-o", name}
		if d.gz != "" {
			name += ".gz"
			args = append(args[:len(args)-1], name, "-gz")
		}
		if code, _, stderr := run(args...); code != exitOK {
			t.Fatalf("-damage %s: exit %d: %s", d.name, code, stderr)
		}
		sum := convert(t, nil, name)
		if sum.Spans.Read == 0 {
			t.Errorf("-damage %s: no span read", d.name)
		}
		if sum.Clean() != clean[d.name] {
			t.Errorf("-damage %s: Clean() = %v, want %v", d.name, sum.Clean(), clean[d.name])
		}
	}
}

// -remote writes the logs the command it prints converts, every machine
// placed by the tasks it ran, and the logs convert clean.
func TestRemote(t *testing.T) {
	chdir(t)
	code, _, stderr := run("-size", "1MB", "-remote", "2", "-o", "l4.log")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := "go run ./examples/strace2perfetto -o l4.pftrace l4.log l4.remote1.log l4.remote2.log"
	if !strings.Contains(stderr, "\n  "+want+"\n") {
		t.Fatalf("prints no %q:\n%s", want, stderr)
	}
	args := strings.Fields(want)[3:]
	if args[0] != "-o" {
		t.Fatalf("the command's flags are %q", args)
	}
	// The command takes no flag but -o: Convert with no option is what it
	// does with the logs.
	sum := convert(t, nil, args[2:]...)
	if len(sum.Hosts) != 2 {
		t.Fatalf("%d remote machines, want 2", len(sum.Hosts))
	}
	for _, h := range sum.Hosts {
		if h.Method != "causal" || h.Drawn == 0 {
			t.Errorf("%s: %s, %d spans drawn: %s", h.Machine, h.Method, h.Drawn, h.Note)
		}
	}
	if !sum.Clean() {
		t.Error("the remote logs do not convert clean")
	}
	var total int64
	for _, f := range args[2:] {
		st, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		total += st.Size()
	}
	if total < 1<<20 || total > 1<<20+64<<10 {
		t.Errorf("the logs are %d bytes in all, want about 1 MiB", total)
	}

	if code, _, stderr := run("-size", "64KB", "-remote", "1", "-gz", "-o", "z.log.gz"); code != exitOK {
		t.Fatalf("-gz: exit %d: %s", code, stderr)
	} else if !strings.Contains(stderr, "-o z.pftrace z.log.gz z.remote1.log.gz\n") {
		t.Errorf("-gz: %s", stderr)
	}
	if sum := convert(t, nil, "z.log.gz", "z.remote1.log.gz"); len(sum.Hosts) != 1 || sum.Hosts[0].Method != "causal" {
		t.Errorf("-gz: hosts %+v", sum.Hosts)
	}
	// A remote log in the way: nothing is written, nothing removed but
	// what the command created.
	os.WriteFile("w.remote2.log", []byte("mine"), 0o644)
	if code, _, _ := run("-size", "64KB", "-remote", "2", "-o", "w.log"); code != exitFail {
		t.Errorf("an existing remote log: exit %d, want %d", code, exitFail)
	}
	for f, want := range map[string]bool{"w.log": false, "w.remote1.log": false, "w.remote2.log": true} {
		if _, err := os.Stat(f); (err == nil) != want {
			t.Errorf("%s exists: %v, want %v", f, err == nil, want)
		}
	}
}

func TestRemoteNames(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		out  string
		gz   bool
		want []string
	}{
		{"run.log", false, []string{"run.log", "run.remote1.log", "run.remote2.log"}},
		{"run", false, []string{"run", "run.remote1.log", "run.remote2.log"}},
		{"d/run.log.gz", true, []string{"d/run.log.gz", "d/run.remote1.log.gz", "d/run.remote2.log.gz"}},
	} {
		if diff := cmp.Diff(c.want, remoteNames(c.out, 2, c.gz)); diff != "" {
			t.Errorf("%s: %s", c.out, diff)
		}
	}
	if got := strings.Join(convertCommand([]string{"my run.log", "my run.remote1.log"}), " "); got != `go run ./examples/strace2perfetto -o 'my run.pftrace' 'my run.log' 'my run.remote1.log'` {
		t.Errorf("quoted: %s", got)
	}
}

// An existing file is refused without -f and kept; -f overwrites it.
func TestOverwrite(t *testing.T) {
	chdir(t)
	os.WriteFile("mine.log", []byte("mine"), 0o644)
	code, _, stderr := run("-size", "16KB", "-o", "mine.log")
	if code != exitFail || !strings.Contains(stderr, "exists") {
		t.Errorf("exit %d, want %d: %s", code, exitFail, stderr)
	}
	if b, _ := os.ReadFile("mine.log"); string(b) != "mine" {
		t.Errorf("the existing file became %d bytes", len(b))
	}
	if code, _, stderr := run("-size", "16KB", "-o", "mine.log", "-f"); code != exitOK {
		t.Errorf("-f: exit %d: %s", code, stderr)
	}
	if b, _ := os.ReadFile("mine.log"); len(b) < 1<<10 {
		t.Errorf("-f: the file is %d bytes", len(b))
	}
}

// An interrupted or failed write leaves no file.
func TestFailureRemovesFile(t *testing.T) {
	dir := chdir(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if code, _, stderr := runCtx(ctx, "-size", "4MB", "-o", "x.log"); code != exitFail || !strings.Contains(stderr, "interrupted") {
		t.Errorf("interrupted: exit %d, want %d: %s", code, exitFail, stderr)
	}
	if code, _, _ := runCtx(ctx, "-size", "1MB", "-remote", "1", "-o", "r.log"); code != exitFail {
		t.Errorf("-remote interrupted: exit %d, want %d", code, exitFail)
	}
	if code, _, stderr := run("-size", "16KB", "-o", filepath.Join(dir, "no", "such", "x.log")); code != exitFail {
		t.Errorf("no such directory: exit %d, want %d: %s", code, exitFail, stderr)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("failures left %v", ents)
	}
	// A device is written in place and never removed.
	if code, _, stderr := run("-size", "16KB", "-o", os.DevNull, "-f"); code != exitOK {
		t.Errorf("-o %s: exit %d: %s", os.DevNull, code, stderr)
	}
}

// -size is honoured: a log is whole rounds, up to two rounds past the size,
// whatever the ranks and anchors; the smallest -size is the first round,
// which the refusal names.
func TestSizeHonoured(t *testing.T) {
	chdir(t)
	for _, args := range [][]string{{"-ranks", "64"}, {"-ranks", "8", "-anchors", "10ms"}, {"-anchors", "launch"}, {}} {
		cfg, _ := parse(args, &bytes.Buffer{})
		first := firstRound(logConfig(cfg))
		for _, size := range []int64{first, 3 * first} {
			code, _, stderr := run(append([]string{"-size", fmt.Sprint(size), "-o", "x.log", "-f"}, args...)...)
			if code != exitOK {
				t.Fatalf("%q -size %d: exit %d: %s", args, size, code, stderr)
			}
			st, err := os.Stat("x.log")
			if err != nil {
				t.Fatal(err)
			}
			if n := st.Size(); n < size || n > size+2*first {
				t.Errorf("%q -size %d: %d bytes, not within two rounds (%d bytes each) past it", args, size, n, first)
			}
		}
		code, _, stderr := run(append([]string{"-size", fmt.Sprint(first - 1), "-o", "x.log", "-f"}, args...)...)
		if code != exitUsage || !strings.Contains(stderr, formatSize(first)) {
			t.Errorf("%q -size %d, below the first round (%d bytes): exit %d: %s", args, first-1, first, code, stderr)
		}
	}
}
