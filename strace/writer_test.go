package strace

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// countingBuffer counts Write calls.
type countingBuffer struct {
	bytes.Buffer
	writes int
}

func (c *countingBuffer) Write(p []byte) (int, error) {
	c.writes++
	return c.Buffer.Write(p)
}

func fixedWriter(out *countingBuffer, now *int64) *Writer {
	return NewWriter(out, WithProcess(4242, 4243), WithThread(0x7f3a2d5ff640),
		WithClock(func() int64 { return *now }, func() int64 { return 1_767_225_600_000_000_000 + *now }))
}

// The expected lines follow the runtime's format string
// "[STRACE] v=1 pid=%d tid=%ld inv=%PRIu64 hid=%PRIx64 depth=%d name=%s ts=%PRId64 dur=%PRId64 %s"
// behind its "[mono_ns=%lld][T0x%lx][%s] %s: " prefix: a blank after dur
// even without attributes, hid in lower-case hex.
func TestWriterExactLines(t *testing.T) {
	t.Parallel()
	var out countingBuffer
	now := int64(5000)
	w := fixedWriter(&out, &now)
	if inv := w.BeginInvocation(0x9F3C2A11D00DB1E5); inv != 1 {
		t.Fatalf("first invocation id %d", inv)
	}
	steps := []func() error{
		func() error { return w.HostSpan("chip.run.bind", 1000, 150, 1, Int("ntensor", 4)) },
		func() error { return w.HostSpan("chip.run.validate", 1200, 7, 1) },
		func() error {
			return w.DeviceSpan("chip.run.runner_run.device_wall", 0, 71000000, 2, Uint("origin_cyc", 123456789), Int("dev", 0))
		},
		func() error { return w.WallAnchor() },
		func() error {
			return w.DeviceAnchor(DeviceAnchor{Dev: 1, HostNS: 880, WindowNS: 20, DevCyc: 1<<64 - 1, DevFreq: 50_000_000})
		},
		func() error {
			return w.Write(Record{Kind: KindBindPhase, Prefix: Prefix{Present: true, MonoNS: 2000, Thread: 0x7f, Level: "TIMING", Func: "host_phase_trace_end"},
				BindPhase: BindPhase{Source: "[host_phase_trace.cpp:393]", Phase: "host_orch", StartNS: 1010, DurNS: 40, Attrs: []Attr{Int("tasks", 47)}}})
		},
		func() error {
			return w.Write(Record{Kind: KindStamp, Stamp: Stamp{Text: "4d31f482 env A=1 python main.py"}})
		},
		func() error { return w.HostSpan("neg", -5, -1, -1, Int("n", -9223372036854775808)) },
	}
	for i, step := range steps {
		if err := step(); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	want := "" +
		"[mono_ns=5000][T0x7f3a2d5ff640][TIMING] emit_host_span: [STRACE] v=1 pid=4242 tid=4243 inv=1 hid=9f3c2a11d00db1e5 depth=1 name=chip.run.bind ts=1000 dur=150 ntensor=4\n" +
		"[mono_ns=5000][T0x7f3a2d5ff640][TIMING] emit_host_span: [STRACE] v=1 pid=4242 tid=4243 inv=1 hid=9f3c2a11d00db1e5 depth=1 name=chip.run.validate ts=1200 dur=7 \n" +
		"[mono_ns=5000][T0x7f3a2d5ff640][TIMING] emit_host_span: [STRACE] v=1 pid=4242 tid=4243 inv=1 hid=9f3c2a11d00db1e5 depth=2 name=chip.run.runner_run.device_wall ts=0 dur=71000000 clk=dev origin_cyc=123456789 dev=0\n" +
		"[mono_ns=5000][T0x7f3a2d5ff640][TIMING] clock_anchor: [CLOCK_ANCHOR] v=1 pid=4242 mono_ns=5000 wall_ns=1767225600000005000\n" +
		"[mono_ns=5000][T0x7f3a2d5ff640][TIMING] clock_anchor: [CLOCK_ANCHOR] v=2 pid=4242 tid=4243 dev=1 host_ns=880 window_ns=20 dev_cyc=18446744073709551615 dev_freq=50000000\n" +
		"[mono_ns=2000][T0x7f][TIMING] host_phase_trace_end: [host_phase_trace.cpp:393] bind phase=host_orch start_ns=1010 dur_ns=40 tasks=47\n" +
		"[stamp] 4d31f482 env A=1 python main.py\n" +
		"[mono_ns=5000][T0x7f3a2d5ff640][TIMING] emit_host_span: [STRACE] v=1 pid=4242 tid=4243 inv=1 hid=9f3c2a11d00db1e5 depth=-1 name=neg ts=-5 dur=-1 n=-9223372036854775808\n"
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
	if out.writes != len(steps) {
		t.Errorf("%d Write calls for %d records", out.writes, len(steps))
	}
}

// TestScopes: spans are written on scope exit, so children come before
// their parents, each at the depth it was opened at.
func TestScopes(t *testing.T) {
	t.Parallel()
	var out countingBuffer
	now := int64(100)
	w := fixedWriter(&out, &now)
	w.SetInvocation(7, 0xabc)
	run := w.Start("chip.run", Int("run_epoch", 7))
	now = 110
	bind := w.Start("chip.run.bind")
	now = 130
	args := w.Start("chip.run.bind.args", Int("ntensor", 2))
	now = 135
	if err := args.End(Int("bytes", 64)); err != nil {
		t.Fatal(err)
	}
	now = 150
	if err := bind.End(); err != nil {
		t.Fatal(err)
	}
	now = 400
	if err := run.End(); err != nil {
		t.Fatal(err)
	}
	if err := run.End(); err == nil {
		t.Error("a second End succeeded")
	}
	want := "" +
		"[mono_ns=135][T0x7f3a2d5ff640][TIMING] emit_host_span: [STRACE] v=1 pid=4242 tid=4243 inv=7 hid=abc depth=2 name=chip.run.bind.args ts=130 dur=5 ntensor=2 bytes=64\n" +
		"[mono_ns=150][T0x7f3a2d5ff640][TIMING] emit_host_span: [STRACE] v=1 pid=4242 tid=4243 inv=7 hid=abc depth=1 name=chip.run.bind ts=110 dur=40 \n" +
		"[mono_ns=400][T0x7f3a2d5ff640][TIMING] emit_host_span: [STRACE] v=1 pid=4242 tid=4243 inv=7 hid=abc depth=0 name=chip.run ts=100 dur=300 run_epoch=7\n"
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
}

// TestEncodingAndCaps works through the emitter's encoding rules and its
// caps, where a %XX escape is dropped as one unit.
func TestEncodingAndCaps(t *testing.T) {
	t.Parallel()
	s61, s62, s64 := strings.Repeat("n", 61), strings.Repeat("n", 62), strings.Repeat("n", 64)
	tests := []struct {
		name, gotName, wantName string
		attrs                   []Attr
		wantAttrs               string
	}{
		{"delimiters in a name", "a b=c[d]%e\n\x7f\xc3", "a%20b%3Dc%5Bd%5D%25e%0A%7F%C3", nil, ""},
		{"attribute text keeps blanks and =", "x", "x",
			[]Attr{String("k", "v=w"), String("note", "[x]%"), String("sp ace", "a b"), String("k=ey", "1")},
			"k=v=w note=%5Bx%5D%25 sp%20ace=a%20b k%3Dey=1"},
		{"name exactly at the cap", s64, s64, nil, ""},
		{"name one over the cap drops a byte", s64 + "x", s64[:63] + "~", nil, ""},
		{"escape that does not fit leaves room", s62 + "\n", s62 + "~", nil, ""},
		{"escape filling the cap is dropped whole", s61 + "\nx", s61 + "~", nil, ""},
		{"bare token", "x", "x", []Attr{{Key: "flag", Bare: true}, Int("a", 1)}, "flag a=1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := appendName(nil, tc.gotName)
			if string(b) != tc.wantName {
				t.Errorf("name %q encoded %q, want %q", tc.gotName, b, tc.wantName)
			}
			if len(b) > NameCap {
				t.Errorf("encoded name is %d bytes", len(b))
			}
			if a := appendAttrText(nil, tc.attrs); string(a) != tc.wantAttrs {
				t.Errorf("attrs encoded %q, want %q", a, tc.wantAttrs)
			}
		})
	}
	// The attribute text is one capped field.
	long := []Attr{String("a", strings.Repeat("v", 100)), String("b", strings.Repeat("w", 100))}
	got := string(appendAttrText(nil, long))
	want := "a=" + strings.Repeat("v", 100) + " b=" + strings.Repeat("w", 191-105) + "~"
	if got != want || len(got) != AttrsCap {
		t.Errorf("capped attrs (%d bytes):\n got %q\nwant %q", len(got), got, want)
	}
	// A %XX straddling the attrs cap.
	got = string(appendAttrText(nil, []Attr{String("k", strings.Repeat("v", 188)+"[")}))
	if want := "k=" + strings.Repeat("v", 188) + "~"; got != want {
		t.Errorf("escape over the attrs cap: got %q want %q", got, want)
	}
	got = string(appendAttrText(nil, []Attr{String("k", strings.Repeat("v", 187)+"[x")}))
	if want := "k=" + strings.Repeat("v", 187) + "~"; got != want {
		t.Errorf("escape filling the attrs cap: got %q want %q", got, want)
	}
}

// TestWriteThenRead reads back what the writer wrote, for every hand-made
// log: records equal, and writing them again gives the same bytes.
func TestWriteThenRead(t *testing.T) {
	t.Parallel()
	for _, path := range append(handMadeLogs(t), "testdata/realistic.log") {
		recs, _ := readAll(t, openFile(t, path), logOptions(path)...)
		var out countingBuffer
		w := NewWriter(&out)
		for _, r := range recs {
			if err := w.Write(r); err != nil {
				t.Fatal(err)
			}
		}
		first := out.String()
		back, st := readAll(t, strings.NewReader(first))
		if st.Lost() != 0 {
			t.Errorf("%s: written records lost on reading: %+v", path, st.Problems)
		}
		if diff := quickDiff(recs, back, ignorePos); diff != "" {
			t.Errorf("%s: round trip (-read +reread):\n%s", path, diff)
		}
		var again countingBuffer
		w2 := NewWriter(&again)
		for _, r := range back {
			if err := w2.Write(r); err != nil {
				t.Fatal(err)
			}
		}
		if again.String() != first {
			t.Errorf("%s: second write differs", path)
		}
	}
}

// ignorePos ignores where a record was read: its position, and whether it
// was joined to the next record or may be cut by the end of the log (a
// record written again is neither).
var ignorePos = cmp.FilterPath(func(p cmp.Path) bool {
	switch p.Last().String() {
	case ".Pos", ".Joined", ".MaybeCut":
		return true
	}
	return false
}, cmp.Ignore())

func TestRealisticSampleIsWhatTheWriterWrites(t *testing.T) {
	t.Parallel()
	data := readFile(t, "testdata/realistic.log")
	recs, _ := readAll(t, bytes.NewReader(data))
	var out bytes.Buffer
	w := NewWriter(&out)
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	// Every line but the generator's own INFO lines comes back byte for byte.
	var kept []string
	for _, l := range strings.SplitAfter(string(data), "\n") {
		if l != "" && !strings.Contains(l, "[INFO]") {
			kept = append(kept, l)
		}
	}
	if diff := cmp.Diff(strings.Join(kept, ""), out.String()); diff != "" {
		t.Errorf("(-sample +rewritten):\n%s", diff)
	}
}
