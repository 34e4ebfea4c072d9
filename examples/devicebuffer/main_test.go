package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/phasetrace/phasetrace/reduce"
	"github.com/phasetrace/phasetrace/strace"
	"github.com/phasetrace/phasetrace/strace/stracetest"
)

// sample builds the buffer of one a2a3 run (50 MHz, 20 ns a cycle) on two
// AICPU threads: thread 0 orchestrates, thread 1 schedules and finishes
// last.
func sample(t *testing.T) []byte {
	t.Helper()
	b, err := reduce.NewBuffer(2, true)
	if err != nil {
		t.Fatal(err)
	}
	const base = reduce.Cycles(1_000_000_000) // counter value when the run started
	set := func(th int, p reduce.Phase, start, end reduce.Cycles) {
		b.Phases[th*reduce.NumPhases+int(p)] = reduce.Record{Start: base + start, End: base + end}
	}
	set(0, reduce.RunWall, 0, 5000)
	set(1, reduce.RunWall, 2, 5100)
	set(0, reduce.Preamble, 10, 60)       // origin: the earliest sub-phase start
	set(1, reduce.Preamble, 12, 70)       // max(end) over threads
	set(0, reduce.GraphBuild, 70, 4000)   //
	set(0, reduce.ConfigValidate, 70, 90) // prep, orchestrator thread only
	set(0, reduce.ArenaWire, 90, 100)
	set(0, reduce.SmReset, 100, 120)
	set(0, reduce.OrchWindow, 120, 2000)
	set(1, reduce.SchedWindow, 121, 3990)
	set(1, reduce.PostOrch, 4000, 4100)
	set(1, reduce.SoLoad, 60, 60) // zero length: not emitted
	b.Header.TailUsed = 1
	b.Slots[1*reduce.NumSlots+3] = reduce.Record{Start: base + 200, End: base + 900}
	raw, err := b.AppendBinary(nil)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func TestConvert(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	o := options{threads: 2, freq: 50_000_000, pid: 4100, tid: 4100, inv: 12, hid: "9f3c", dev: 1, perThread: true, mono: 7_000_000_000}
	if err := convert(&out, "run.bin", sample(t), o); err != nil {
		t.Fatal(err)
	}
	golden(t, "sample.golden", out.Bytes())

	// What it printed reads back as the runtime's device spans.
	r := strace.NewReader(&out)
	type got struct {
		Name      string
		Depth     int32
		TS, Dur   int64
		OriginCyc string
	}
	var spans []got
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if rec.Kind != strace.KindSpan || !rec.Span.IsDevice() {
			t.Fatalf("unexpected record %+v", rec)
		}
		g := got{Name: rec.Span.Name, Depth: rec.Span.Depth, TS: rec.Span.TS, Dur: rec.Span.Dur}
		if a, ok := rec.Span.Attr("origin_cyc"); ok {
			g.OriginCyc = a.Value
		}
		spans = append(spans, g)
	}
	const w = "chip.run.runner_run.device_wall"
	want := []got{
		{Name: w, Depth: 2, TS: 0, Dur: 5100 * 20, OriginCyc: "1000000010"},
		{Name: w + ".preamble", Depth: 3, TS: 0, Dur: 60 * 20},
		{Name: w + ".graph_build", Depth: 3, TS: 60 * 20, Dur: 3930 * 20},
		{Name: w + ".config_validate", Depth: 3, TS: 60 * 20, Dur: 20 * 20},
		{Name: w + ".arena_wire", Depth: 3, TS: 80 * 20, Dur: 10 * 20},
		{Name: w + ".sm_reset", Depth: 3, TS: 90 * 20, Dur: 20 * 20},
		{Name: w + ".post_orch", Depth: 3, TS: 3990 * 20, Dur: 100 * 20},
		{Name: w + ".orch", Depth: 3, TS: 110 * 20, Dur: 1880 * 20},
		{Name: w + ".sched", Depth: 3, TS: 111 * 20, Dur: 3869 * 20},
		{Name: w + ".task_slot_3", Depth: 3, TS: 190 * 20, Dur: 700 * 20},
	}
	if diff := cmp.Diff(want, spans); diff != "" {
		t.Errorf("spans read back (-want +got):\n%s", diff)
	}
	if st := r.Stats(); st.Torn != 0 || st.Malformed != 0 {
		t.Errorf("reading back lost records: %+v", st)
	}
}

func TestBadBuffers(t *testing.T) {
	t.Parallel()
	raw := sample(t)
	o := options{threads: 2, freq: 50_000_000, pid: 1, inv: 1, hid: "1", mono: 0}
	for _, c := range []struct {
		name    string
		raw     []byte
		threads int
		want    error
	}{
		{"truncated", raw[:100], 2, reduce.ErrTruncated},
		{"tail cut", raw[:len(raw)-8], 2, reduce.ErrTruncatedTail},
		{"wrong thread count", raw, 3, reduce.ErrTruncatedTail},
		{"no threads", raw, 0, reduce.ErrThreads},
	} {
		o.threads = c.threads
		err := convert(io.Discard, "run.bin", c.raw, o)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: error %v, want %v", c.name, err, c.want)
			continue
		}
		var de *reduce.DecodeError
		if !errors.As(err, &de) || !strings.HasPrefix(err.Error(), "run.bin: ") || !strings.Contains(err.Error(), "offset") {
			t.Errorf("%s: error %q does not name the file and byte offset", c.name, err)
		}
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	stracetest.Golden(t, filepath.Join("testdata", name), got)
}

// goldenArgs are the flags sample.golden was written with.
var goldenArgs = []string{"-threads", "2", "-freq", "50000000", "-pid", "4100", "-tid", "4100", "-inv", "12", "-hid", "9f3c", "-dev", "1", "-per-thread", "-mono", "7000000000"}

func TestRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	raw := sample(t)
	bin := filepath.Join(dir, "run.bin")
	dash := filepath.Join(dir, "-run.bin")
	os.WriteFile(bin, raw, 0o644)
	os.WriteFile(dash, raw, 0o644)
	for _, args := range [][]string{
		append(slices.Clone(goldenArgs), bin),
		append([]string{bin}, goldenArgs...),                         // flags after the file
		slices.Concat(goldenArgs[:6], []string{bin}, goldenArgs[6:]), // and around it
		slices.Concat(goldenArgs, []string{"--", dash}),              // -- ends the flags
	} {
		var stdout, stderr bytes.Buffer
		if code := run(args, &stdout, &stderr); code != exitOK {
			t.Errorf("%q: exit %d: %s", args, code, stderr.String())
			continue
		}
		golden(t, "sample.golden", stdout.Bytes())
	}
}

func TestRunErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	raw := sample(t)
	bin := filepath.Join(dir, "run.bin")
	os.WriteFile(bin, raw, 0o644)
	short := filepath.Join(dir, "short.bin")
	os.WriteFile(short, raw[:100], 0o644)
	huge := filepath.Join(dir, "huge.bin")
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(5 << 30); err != nil { // sparse: nothing is written
		t.Fatal(err)
	}
	f.Close()
	req := []string{"-threads", "2", "-freq", "50000000"}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"-h"}, exitOK, "Exit status: 0"},
		{req, exitUsage, "want one FILE, have 0"},
		{append(slices.Clone(req), bin, bin), exitUsage, "want one FILE, have 2"},
		{[]string{bin, "-freq", "1"}, exitUsage, "-threads missing: give the number of AICPU threads"},
		{[]string{bin, "-freq", "1", "-threads", "0"}, exitUsage, "-threads 0: want 1 to 65536"},
		{[]string{bin, "-freq", "1", "-threads", "65537"}, exitUsage, "-threads 65537"},
		{[]string{bin, "-threads", "2"}, exitUsage, "-freq missing: give the device counter frequency in Hz"},
		{[]string{bin, "-threads", "2", "-freq", "0"}, exitUsage, "-freq 0: the device counter frequency must be positive"},
		{[]string{bin, "-threads", "2", "-freq", "-5"}, exitUsage, `invalid value "-5" for flag -freq`},
		{append(slices.Clone(req), bin, "-mono", "-1"), exitUsage, `invalid value "-1" for flag -mono: want 0 or more`},
		{append(slices.Clone(req), bin, "-tid", "x"), exitUsage, `invalid value "x" for flag -tid: want an integer`},
		{append(slices.Clone(req), bin, "-hid", "xyz"), exitUsage, `-hid "xyz"`},
		{append(slices.Clone(req), bin, "-pid", "-1"), exitUsage, "-pid -1"},
		{append(slices.Clone(req), bin, "-bogus"), exitUsage, "flag provided but not defined"},
		{append(slices.Clone(req), bin, "-threads"), exitUsage, "flag needs an argument"},
		{append(slices.Clone(req), filepath.Join(dir, "missing.bin")), exitFail, "missing.bin"},
		{append(slices.Clone(req), dir), exitFail, "is a directory"},
		{append(slices.Clone(req), short), exitFail, "short.bin: reduce: device-phase buffer: offset 96: truncated buffer"},
		{append(slices.Clone(req), huge), exitFail, "huge.bin: reduce: device-phase buffer: offset 848: wrong buffer size: want end of buffer (2 threads: 336 or 848 bytes); have 5368709120 bytes"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(c.args, &stdout, &stderr)
		if code != c.code || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%q: exit %d, stderr %q; want exit %d mentioning %q", c.args, code, stderr.String(), c.code, c.want)
		}
		if code != exitOK && stdout.Len() != 0 {
			t.Errorf("%q: printed %q", c.args, stdout.String())
		}
	}
}

// TestReadBufferLimit: a pipe is read no further than the largest valid
// buffer (an endless one included); one that size or smaller is read
// whole.
func TestReadBufferLimit(t *testing.T) {
	t.Parallel()
	raw := sample(t)
	if len(raw) != reduce.FullSize(2) {
		t.Fatalf("sample is %d bytes, want the full size %d", len(raw), reduce.FullSize(2))
	}
	for _, c := range []struct {
		name string
		data []byte
		want error
	}{
		{"full buffer", raw, nil},
		{"one byte more", append(slices.Clone(raw), 0), reduce.ErrSize},
		{"endless", nil, reduce.ErrSize},
	} {
		fifo := filepath.Join(t.TempDir(), "buf.fifo")
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Skip("no FIFOs:", err)
		}
		wrote := make(chan struct{})
		go func() {
			defer close(wrote)
			w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
			if err != nil {
				t.Error(err)
				return
			}
			defer w.Close()
			if c.data != nil {
				w.Write(c.data) // fails once the reader stops: a broken pipe
				return
			}
			for chunk := make([]byte, 4096); ; { // until the reader stops
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		}()
		got, err := readBuffer(fifo, 2)
		<-wrote
		if !errors.Is(err, c.want) {
			t.Errorf("%s: error %v, want %v", c.name, err, c.want)
		}
		if c.want == nil && !bytes.Equal(got, raw) {
			t.Errorf("%s: read %d bytes, want %d", c.name, len(got), len(raw))
		}
		if c.want != nil && !strings.Contains(fmt.Sprint(err), "have more bytes") {
			t.Errorf("%s: error %v does not say the buffer has more bytes", c.name, err)
		}
	}
}

// TestHelp: every flag's default is said once, -mono's is the monotonic
// clock.
func TestHelp(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-h"}, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d", code)
	}
	help := stderr.String()
	for _, line := range strings.Split(help, "\n") {
		if strings.Count(line, "(default") > 1 {
			t.Errorf("default said twice: %q", line)
		}
	}
	for _, want := range []string{"-mono ns\n", "(default: CLOCK_MONOTONIC now)", "-tid tid\n", "-version", "Exit status: 0"} {
		if !strings.Contains(help, want) {
			t.Errorf("help lacks %q:\n%s", want, help)
		}
	}
	if strings.Contains(help, "(default -1)") {
		t.Errorf("help shows the unset sentinel:\n%s", help)
	}
}

// TestDefaultMono: without -mono the prefixes carry the strace writer's
// CLOCK_MONOTONIC reading, not Unix-epoch time (which is past 1e18 ns).
func TestDefaultMono(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bin := filepath.Join(dir, "run.bin")
	os.WriteFile(bin, sample(t), 0o644)
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-threads", "2", "-freq", "50000000", bin}, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	r := strace.NewReader(&stdout)
	rec, err := r.Read()
	if err != nil {
		t.Fatal(err)
	}
	if !rec.Prefix.Present || rec.Prefix.MonoNS < 0 || rec.Prefix.MonoNS >= 1e18 {
		t.Errorf("prefix %+v: want a CLOCK_MONOTONIC reading", rec.Prefix)
	}
}

func TestVersion(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-version"}, &stdout, &stderr); code != exitOK || !strings.HasPrefix(stdout.String(), "devicebuffer ") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout.String(), stderr.String())
	}
}
