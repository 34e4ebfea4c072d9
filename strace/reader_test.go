package strace

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// logOptions are the reader options of a hand-made log.
func logOptions(name string) []Option {
	opts := []Option{WithName(name)}
	if strings.HasPrefix(filepath.Base(name), "long_") {
		opts = append(opts, WithMaxLine(MinMaxLine))
	}
	return opts
}

// readAll reads every record (cloned) and the final stats.
func readAll(t testing.TB, r io.Reader, opts ...Option) ([]Record, Stats) {
	t.Helper()
	rd := NewReader(r, opts...)
	var recs []Record
	for {
		rec, err := rd.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("Read: %v", err)
		}
		recs = append(recs, rec.Clone())
	}
	st := rd.Stats()
	if err := st.Check(); err != nil {
		t.Fatal(err)
	}
	return recs, st
}

// dump renders records and stats as a stable, readable text.
func dump(recs []Record, st Stats) string {
	var b strings.Builder
	for _, r := range recs {
		fmt.Fprintf(&b, "%d@%d %s", r.Pos.Line, r.Pos.Offset, r.Kind)
		if r.Joined {
			b.WriteString(" joined")
		}
		if p := r.Prefix; p.Present {
			fmt.Fprintf(&b, " [mono=%d thread=%#x %s %s]", p.MonoNS, p.Thread, p.Level, p.Func)
		}
		switch r.Kind {
		case KindSpan:
			s := r.Span
			fmt.Fprintf(&b, " pid=%d tid=%d inv=%d hid=%#x depth=%d name=%q ts=%d dur=%d", s.Pid, s.Tid, s.Inv, s.Hid, s.Depth, s.Name, s.TS, s.Dur)
			if s.NameTruncated {
				b.WriteString(" name-truncated")
			}
			if s.AttrsTruncated {
				b.WriteString(" attrs-truncated")
			}
			if s.IsDevice() {
				b.WriteString(" device")
			}
			dumpAttrs(&b, s.Attrs)
		case KindWallAnchor:
			fmt.Fprintf(&b, " %+v", r.WallAnchor)
		case KindDeviceAnchor:
			fmt.Fprintf(&b, " %+v", r.DeviceAnchor)
		case KindBindPhase:
			bp := r.BindPhase
			fmt.Fprintf(&b, " source=%q phase=%q start_ns=%d dur_ns=%d", bp.Source, bp.Phase, bp.StartNS, bp.DurNS)
			dumpAttrs(&b, bp.Attrs)
		case KindStamp:
			fmt.Fprintf(&b, " %q commit=%q", r.Stamp.Text, r.Stamp.Commit())
		case KindAutoload:
			a := r.Autoload
			fmt.Fprintf(&b, " %q\n    setting=%q raw=%q raw_truncated=%v effective=%q torch_imported=%v torch_npu_loaded=%v",
				a.Text, a.Setting, a.Raw, a.RawTruncated, a.Effective, a.TorchImported, a.TorchNPULoaded)
		}
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "-- stats --\nlines=%d bytes=%d long=%d", st.Lines, st.Bytes, st.LongLines)
	if st.Unterminated {
		b.WriteString(" unterminated")
	}
	fmt.Fprintf(&b, "\nheads=%+v\nrecords=%+v\ntorn=%d unknown=%d malformed=%d in-long-lines=%d\n",
		st.Heads, st.Records, st.Torn, st.UnknownVersion, st.Malformed, st.InLongLines)
	if st.Joined+st.MaybeCut > 0 {
		fmt.Fprintf(&b, "joined=%d maybe-cut=%d\n", st.Joined, st.MaybeCut)
	}
	for _, p := range st.Problems {
		fmt.Fprintf(&b, "problem %d@%d: %v: %s\n", p.Line, p.Offset, p.Err, p.Reason)
	}
	return b.String()
}

func dumpAttrs(b *strings.Builder, attrs []Attr) {
	for _, a := range attrs {
		b.WriteString("\n    ")
		switch {
		case a.Bare:
			fmt.Fprintf(b, "bare %q", a.Key)
		case a.Type == TypeInt:
			fmt.Fprintf(b, "%q = int %d", a.Key, a.Int)
		case a.Type == TypeUint:
			fmt.Fprintf(b, "%q = uint %d", a.Key, a.Uint)
		default:
			fmt.Fprintf(b, "%q = %q", a.Key, a.Value)
		}
		if a.Truncated {
			b.WriteString(" truncated")
		}
		if a.MaybeCut {
			b.WriteString(" maybe-cut")
		}
	}
}

func handMadeLogs(t testing.TB) []string {
	t.Helper()
	logs, err := filepath.Glob(filepath.Join("testdata", "logs", "*.log"))
	if err != nil || len(logs) == 0 {
		t.Fatalf("no hand-made logs: %v", err)
	}
	return logs
}

// TestReaderInvariants checks properties that hold for every log: offsets
// point at the record's marker, heads match an independent count of the
// markers, and reading byte by byte or through a one-byte reader changes
// nothing.
func TestReaderInvariants(t *testing.T) {
	t.Parallel()
	logs := append(handMadeLogs(t), filepath.Join("testdata", "realistic.log"))
	for _, path := range logs {
		t.Run(filepath.Base(path), func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			recs, st := readAll(t, bytes.NewReader(data), logOptions(path)...)
			checkInvariants(t, data, recs, st)
			recs2, st2 := readAll(t, iotest.OneByteReader(bytes.NewReader(data)), logOptions(path)...)
			if diff := quickDiff(dump(recs, st), dump(recs2, st2)); diff != "" {
				t.Errorf("one-byte reads differ (-whole +bytewise):\n%s", diff)
			}
		})
	}
}

func checkInvariants(t testing.TB, data []byte, recs []Record, st Stats) {
	t.Helper()
	if err := st.Check(); err != nil {
		t.Fatal(err)
	}
	if st.Bytes != int64(len(data)) {
		t.Errorf("Bytes = %d, want %d", st.Bytes, len(data))
	}
	if n := int64(bytes.Count(data, markStrace)); st.Heads.Strace != n {
		t.Errorf("Heads.Strace = %d, but the input holds %d [STRACE]", st.Heads.Strace, n)
	}
	if n := int64(bytes.Count(data, markAnchor)); st.Heads.ClockAnchor != n {
		t.Errorf("Heads.ClockAnchor = %d, but the input holds %d [CLOCK_ANCHOR]", st.Heads.ClockAnchor, n)
	}
	var lastOff int64 = -1
	for _, r := range recs {
		off := r.Pos.Offset
		if off <= lastOff || off >= int64(len(data)) {
			t.Fatalf("record at offset %d after %d (input %d bytes)", off, lastOff, len(data))
		}
		lastOff = off
		var mark []byte
		switch r.Kind {
		case KindSpan:
			mark = markStrace
		case KindWallAnchor, KindDeviceAnchor:
			mark = markAnchor
		case KindBindPhase:
			mark = markBind
		case KindStamp:
			mark = markStamp
		case KindAutoload:
			mark = markAutoload
		}
		if !bytes.HasPrefix(data[off:], mark) {
			t.Errorf("%s at %v: input there is %q", r.Kind, r.Pos, data[off:min(len(data), int(off)+20)])
		}
	}
}

func TestProblemsArePositionedAndUnwrap(t *testing.T) {
	t.Parallel()
	in := "[STRACE] v=1 pid=1\n" + // torn
		"[STRACE] v=9 pid=1\n" + // unknown version
		"[STRACE] v=1 pid=x\n" + // malformed
		strings.Repeat("x", 300) + "[STRACE]\n" // too long
	_, st := readAll(t, strings.NewReader(in), WithName("f.log"), WithMaxLine(MinMaxLine))
	want := []struct {
		err  error
		line int64
		off  int64
	}{
		{ErrTorn, 1, 0}, {ErrUnknownVersion, 2, 19}, {ErrMalformed, 3, 38}, {ErrLineTooLong, 4, 57},
	}
	if len(st.Problems) != len(want) {
		t.Fatalf("problems: %v", st.Problems)
	}
	for i, w := range want {
		p := st.Problems[i]
		var se *SyntaxError
		if !errors.As(error(p), &se) || !errors.Is(p, w.err) || p.Line != w.line || p.Offset != w.off || p.File != "f.log" {
			t.Errorf("problem %d = %v (line %d, offset %d), want %v at line %d offset %d", i, p, p.Line, p.Offset, w.err, w.line, w.off)
		}
		if !strings.HasPrefix(p.Error(), fmt.Sprintf("f.log:%d: byte %d: strace: ", w.line, w.off)) {
			t.Errorf("Error() = %q", p.Error())
		}
	}
	if st.InLongLines != 1 || st.LongLines != 1 {
		t.Errorf("long lines: %+v", st)
	}
}

func TestMaxProblems(t *testing.T) {
	t.Parallel()
	in := strings.Repeat("[STRACE] v=1 x\n", 10)
	_, st := readAll(t, strings.NewReader(in), WithMaxProblems(3))
	if len(st.Problems) != 3 || st.ProblemsOmitted != 7 || st.Malformed != 10 {
		t.Errorf("problems kept %d, omitted %d, malformed %d", len(st.Problems), st.ProblemsOmitted, st.Malformed)
	}
}

// TestLongLineAcrossChunks puts record heads across the boundaries of the
// pieces an over-long line is read in.
func TestLongLineAcrossChunks(t *testing.T) {
	t.Parallel()
	for shift := range 20 {
		var b strings.Builder
		b.WriteString(strings.Repeat("z", shift))
		for b.Len() < 5000 {
			b.WriteString(" [STRACE] v=1 pid=1 ]bind phase=a [CLOCK_ANCHOR] v=1 xbind phase=b ")
		}
		b.WriteString("\n[STRACE] v=1 pid=1 tid=1 inv=1 hid=1 depth=0 name=a ts=1 dur=1\n")
		in := b.String()
		recs, st := readAll(t, strings.NewReader(in), WithMaxLine(MinMaxLine))
		checkInvariants(t, []byte(in), recs, st)
		line := in[:strings.IndexByte(in, '\n')]
		wantBind := int64(strings.Count(line, " [STRACE] v=1 pid=1 ]bind phase=a"))
		if st.Heads.BindPhase != wantBind || len(recs) != 1 || st.LongLines != 1 {
			t.Errorf("shift %d: bind heads %d, want %d; records %d; %+v", shift, st.Heads.BindPhase, wantBind, len(recs), st)
		}
	}
}

type failingReader struct {
	data []byte
	err  error
}

func (f *failingReader) Read(p []byte) (int, error) {
	if len(f.data) == 0 {
		return 0, f.err
	}
	n := copy(p, f.data)
	f.data = f.data[n:]
	return n, nil
}

// TestIOErrorAfterRecords: a failing reader ends the input like a cut: the
// records before it are returned, the one it stopped inside is not, and the
// error is returned once they are.
func TestIOErrorAfterRecords(t *testing.T) {
	t.Parallel()
	boom := errors.New("disk on fire")
	r := NewReader(&failingReader{data: []byte("[STRACE] v=1 pid=1 tid=1 inv=1 hid=1 depth=0 name=a ts=1 dur=1\n" +
		"[STRACE] v=1 pid=1 tid=1 inv=2 hid=1 depth=0 name=b ts=1 dur=1\n" +
		"[STRACE] v=1 pid=1 tid=1 inv=3 hid=1 depth=0 name=c ts=1 dur=1"), err: boom})
	var names []string
	var err error
	for {
		var rec Record
		rec, err = r.Read()
		if err != nil {
			break
		}
		names = append(names, rec.Span.Name)
	}
	if !errors.Is(err, boom) || !cmp.Equal(names, []string{"a", "b"}) {
		t.Errorf("names %v, err %v", names, err)
	}
	if st := r.Stats(); st.Torn != 1 || !st.Unterminated || len(st.Problems) != 1 || !errors.Is(st.Problems[0], ErrUnterminated) {
		t.Errorf("stats %+v", st)
	}
	if _, err := r.Read(); !errors.Is(err, boom) {
		t.Errorf("second Read: %v", err)
	}
}

// TestAttrsReused documents the aliasing rule: Attrs is reused by the next
// Read, strings are not.
func TestAttrsReused(t *testing.T) {
	t.Parallel()
	r := NewReader(strings.NewReader("[STRACE] v=1 pid=1 tid=1 inv=1 hid=1 depth=0 name=a ts=1 dur=1 k=first\n" +
		"[STRACE] v=1 pid=1 tid=1 inv=1 hid=1 depth=0 name=b ts=1 dur=1 k=second\n"))
	first, _ := r.Read()
	kept := first.Clone()
	name := first.Span.Name
	value := first.Span.Attrs[0].Value
	if _, err := r.Read(); err != nil {
		t.Fatal(err)
	}
	if kept.Span.Attrs[0].Value != "first" || name != "a" || value != "first" {
		t.Errorf("kept %q, name %q, value %q", kept.Span.Attrs[0].Value, name, value)
	}
	if first.Span.Attrs[0].Value != "second" {
		t.Errorf("the uncloned Attrs were expected to be reused")
	}
}

func TestWallAnchorMapping(t *testing.T) {
	t.Parallel()
	a := WallAnchor{Pid: 1, MonoNS: 100, WallNS: 1_767_225_600_000_000_000}
	if w, ok := a.Wall(150); !ok || w != 1_767_225_600_000_000_050 {
		t.Errorf("Wall(150) = %d, %v", w, ok)
	}
	if _, ok := (WallAnchor{MonoNS: -maxInt64 - 1, WallNS: maxInt64}).Wall(maxInt64); ok {
		t.Error("overflow not reported")
	}
	d := DeviceAnchor{HostNS: 1000, WindowNS: 21}
	if mid, half := d.Mid(); mid != 1010 || half != 11 {
		t.Errorf("Mid = %d ± %d", mid, half)
	}
}

// TestUnterminatedLastLine: the runtime ends every line it writes, so a last
// line without a line end was cut while it was written. Its last record is
// counted as torn, at its position, with ErrUnterminated, when one of its
// fixed fields may be cut (dur=62 of dur=62850 would be a 62 ns span); a
// span or bind phase line with attribute text after its fixed fields is
// returned, its last attribute marked as possibly cut, and counted. Records
// that the next record head ends on that line are complete.
func TestUnterminatedLastLine(t *testing.T) {
	t.Parallel()
	const (
		pfx    = "[mono_ns=9][T0x1][TIMING] emit_host_span: "
		apfx   = "[mono_ns=9][T0x1][TIMING] clock_anchor: "
		span   = "[STRACE] v=1 pid=1 tid=1 inv=1 hid=1 depth=0 name=a ts=1 dur=62850"
		wall   = "[CLOCK_ANCHOR] v=1 pid=1 mono_ns=5 wall_ns=1767225600000000000"
		device = "[CLOCK_ANCHOR] v=2 pid=1 tid=1 dev=0 host_ns=5 window_ns=20 dev_cyc=5000000 dev_freq=50000000"
		bind   = "[hbg_bind.cpp:88] bind phase=host_orch start_ns=1010 dur_ns=40 tasks=47"
	)
	type want struct {
		recs    int
		torn    int64
		other   int64 // malformed + unknown + in long lines
		line    int64 // of the torn record
		off     int64 // of the torn record's marker
		reason  string
		cutOpen bool // Stats.Unterminated
		// maybeCut: the last record is returned with its last attribute
		// marked as possibly cut, this one.
		maybeCut string
	}
	for _, tc := range []struct {
		name string
		in   string
		want want
	}{
		{"cut mid-number", pfx + span + "\n" + pfx + span[:len(span)-3],
			want{1, 1, 0, 2, int64(len(pfx + span + "\n" + pfx)), "dur: no line end after it", true, ""}},
		{"cut after the attributes", pfx + span + " clk=dev",
			want{1, 0, 0, 0, 0, "", true, "clk"}},
		{"cut in an attribute's key", pfx + span + " clk=dev ntens",
			want{1, 0, 0, 0, 0, "", true, "ntens"}},
		{"two records on the last line, the second with attributes", pfx + span + " k=v" + pfx + span + " clk=dev",
			want{2, 0, 0, 0, 0, "", true, "clk"}},
		{"blanks after the attributes", pfx + span + " clk=dev  ",
			want{1, 0, 0, 0, 0, "", true, "clk"}},
		{"blanks after dur", pfx + span + " ",
			want{0, 1, 0, 1, int64(len(pfx)), "dur: no line end after it", true, ""}},
		{"cut in a key", pfx + span[:len(span)-8],
			want{0, 1, 0, 1, int64(len(pfx)), "dur: cut in its key", true, ""}},
		{"two records on the last line", pfx + span + " " + pfx + span[:len(span)-3],
			want{1, 1, 0, 1, int64(len(pfx + span + " " + pfx)), "dur: no line end after it", true, ""}},
		{"two records, no prefix between", pfx + span + " k=v" + span,
			want{1, 1, 0, 1, int64(len(pfx + span + " k=v")), "dur: no line end after it", true, ""}},
		{"CRLF lines, the last cut", pfx + span + "\r\n" + pfx + span[:len(span)-1],
			want{1, 1, 0, 2, int64(len(pfx + span + "\r\n" + pfx)), "dur: no line end after it", true, ""}},
		{"CRLF complete", pfx + span + "\r\n" + pfx + span + "\r\n", want{2, 0, 0, 0, 0, "", false, ""}},
		{"cut between CR and LF", pfx + span + "\r\n" + pfx + span + "\r", want{2, 0, 0, 0, 0, "", true, ""}},
		{"complete last line", pfx + span + "\n" + pfx + span + "\n", want{2, 0, 0, 0, 0, "", false, ""}},
		{"text after the last record's prefix", pfx + span + " [mono_ns=10][T0x1][INFO] main: done",
			want{1, 0, 0, 0, 0, "", true, ""}},
		{"text only", pfx + span + "\nsome log text without [STRACE markers", want{1, 0, 0, 0, 0, "", true, ""}},
		{"wall anchor", apfx + wall, want{0, 1, 0, 1, int64(len(apfx)), "wall_ns: no line end after it", true, ""}},
		{"device anchor", pfx + span + "\n" + apfx + device,
			want{1, 1, 0, 2, int64(len(pfx + span + "\n" + apfx)), "dev_freq: no line end after it", true, ""}},
		{"bind phase", pfx + span + "\n" + pfx + bind,
			want{2, 0, 0, 0, 0, "", true, "tasks"}},
		{"bind phase without attributes", "bind phase=a start_ns=1 dur_ns=4",
			want{0, 1, 0, 1, 0, "dur_ns: no line end after it", true, ""}},
		{"stamp", "[stamp] 4d31f482 python main.py --rounds", want{0, 1, 0, 1, 0, "stamp: no line end after it", true, ""}},
		{"malformed stays malformed", pfx + "[STRACE] v=1 pid=x", want{0, 0, 1, 0, 0, "", true, ""}},
		{"unknown version stays unknown", pfx + "[STRACE] v=7 pid=1", want{0, 0, 1, 0, 0, "", true, ""}},
		{"over-long last line", pfx + span + "\n" + strings.Repeat("x", 300) + pfx + span, want{1, 0, 1, 0, 0, "", true, ""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			recs, st := readAll(t, strings.NewReader(tc.in), WithName("cut.log"), WithMaxLine(MinMaxLine))
			checkInvariants(t, []byte(tc.in), recs, st)
			w := tc.want
			if len(recs) != w.recs || st.Torn != w.torn || st.Malformed+st.UnknownVersion+st.InLongLines != w.other || st.Unterminated != w.cutOpen {
				t.Fatalf("%d records, stats %+v; want %+v", len(recs), st, w)
			}
			var cut []string
			for _, r := range recs {
				for _, a := range append(r.Span.Attrs, r.BindPhase.Attrs...) {
					if a.MaybeCut {
						cut = append(cut, a.Key)
					}
				}
			}
			if w.maybeCut != "" {
				last := recs[len(recs)-1]
				attrs := append(last.Span.Attrs, last.BindPhase.Attrs...)
				if st.MaybeCut != 1 || len(cut) != 1 || attrs[len(attrs)-1].Key != w.maybeCut || !attrs[len(attrs)-1].MaybeCut || last.Pos.Line != st.Lines {
					t.Errorf("maybe cut: %d, attributes %v; want the last record's last, %q", st.MaybeCut, cut, w.maybeCut)
				}
			} else if st.MaybeCut != 0 || len(cut) != 0 {
				t.Errorf("maybe cut: %d, attributes %v; want none", st.MaybeCut, cut)
			}
			for _, r := range recs {
				if r.Kind == KindSpan && r.Span.Dur != 62850 {
					t.Errorf("span read with dur %d", r.Span.Dur)
				}
			}
			if w.torn == 0 {
				for _, p := range st.Problems {
					if errors.Is(p, ErrUnterminated) {
						t.Errorf("unexpected %v", p)
					}
				}
				return
			}
			p := st.Problems[len(st.Problems)-1]
			if !errors.Is(p, ErrUnterminated) || !errors.Is(p, ErrTorn) || p.Line != w.line || p.Offset != w.off || p.Reason != w.reason {
				t.Errorf("problem %v (line %d, byte %d, reason %q); want line %d, byte %d, reason %q", p, p.Line, p.Offset, p.Reason, w.line, w.off, w.reason)
			}
			if !strings.Contains(p.Error(), "the log ends inside this record, which may be cut") {
				t.Errorf("Error() = %q", p.Error())
			}
			// The same input with its line end: the cut record is the only
			// difference.
			full, st2 := readAll(t, strings.NewReader(tc.in+"\n"), WithMaxLine(MinMaxLine))
			if diff := quickDiff(full[:len(recs)], recs, ignorePos, cmpopts.EquateEmpty()); diff != "" || st2.Unterminated || st2.Torn+int64(len(full)) != st.Torn+int64(len(recs)) {
				t.Errorf("with a line end: %d records, stats %+v; diff %s", len(full), st2, diff)
			}
		})
	}
}

// readEvery reads rd to its end, returning the records (cloned), the final
// stats and the error that ended reading.
func readEvery(rd *Reader) ([]Record, Stats, error) {
	var recs []Record
	for {
		rec, err := rd.Read()
		if err != nil {
			return recs, rd.Stats(), err
		}
		recs = append(recs, rec.Clone())
	}
}

// TestBytesReaderReadsAsReader: a Reader of bytes reads exactly what a
// Reader of the same bytes through an io.Reader reads: records, positions,
// stats and problems, with lines around the longest read, cut last lines,
// CRLF and no input at all.
func TestBytesReaderReadsAsReader(t *testing.T) {
	t.Parallel()
	const span = "[mono_ns=9][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=1 tid=1 inv=1 hid=1 depth=0 name=a ts=1 dur=62850"
	var gen bytes.Buffer
	if _, err := generateLog(&gen, 1<<20, 5); err != nil {
		t.Fatal(err)
	}
	realistic := readFile(t, "testdata/realistic.log")
	inputs := map[string]string{
		"empty":           "",
		"line end only":   "\n",
		"blank lines":     "\n\n\r\n\n",
		"one line":        span + "\n",
		"no line end":     span + "\n" + span,
		"CRLF":            span + "\r\n" + span + "\r\n",
		"cut inside CRLF": span + "\r\n" + span + "\r",
		"lone CR":         "\r",
		"generated":       gen.String(),
		"realistic":       string(realistic),
		"realistic, cut":  string(realistic[:len(realistic)-17]),
	}
	// Lines of every length around the longest a reader of MinMaxLine
	// reads (and its buffer), ended or not, with record heads in them.
	for n := MinMaxLine - 2; n <= MinMaxLine+4; n++ {
		line := (span + strings.Repeat(" [STRACE] x", n))[:n]
		name := "line of " + strconv.Itoa(n)
		inputs[name] = span + "\n" + line + "\n" + span + "\n"
		inputs[name+", last, no line end"] = span + "\n" + line
		inputs[name+", CRLF"] = line + "\r\n" + span + "\r\n"
		inputs[name+" x5"] = strings.Repeat(line+"\n", 5) + line
	}
	long := strings.Repeat(span+" ", 50)
	inputs["long line first"] = long + "\n" + span + "\n"
	inputs["long line last, no line end"] = span + "\n" + long
	inputs["long lines"] = strings.Repeat(long+"\n"+span+"\n", 3)
	for name, in := range inputs {
		for _, opts := range [][]Option{
			{WithName("a.log")},
			{WithMaxLine(MinMaxLine), WithMaxProblems(1000)},
			{WithMaxLine(MinMaxLine), WithKinds(KindSpan), WithSpanFilter(func(depth int32, name string) bool { return depth == 0 })},
		} {
			want, wantSt, wantErr := readEvery(NewReader(strings.NewReader(in), opts...))
			got, gotSt, gotErr := readEvery(NewBytesReader([]byte(in), opts...))
			if diff := quickDiff(want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s: records (-NewReader +NewBytesReader):\n%s", name, diff)
			}
			if diff := quickDiff(wantSt, gotSt, cmp.Comparer(func(a, b *SyntaxError) bool { return *a == *b })); diff != "" {
				t.Errorf("%s: stats (-NewReader +NewBytesReader):\n%s", name, diff)
			}
			if wantErr != gotErr {
				t.Errorf("%s: ended with %v, want %v", name, gotErr, wantErr)
			}
		}
	}
}

// splitAttrs, the attributes of text with nothing to decode, reads what
// decodeAttrs reads: keys, values, bare keys and typed integers at every
// edge of the integer ranges.
func TestSplitAttrsAsDecoded(t *testing.T) {
	t.Parallel()
	texts := []string{"", " ", "a", "a=", "=", "=b", "a==b", "a=b=c", "a=1 b=-1 c=0 d=-0 e=00 f=01 g=- h=1x i=x1", "\ta=1\t\tb  c=2 ",
		"u=9223372036854775807 v=9223372036854775808 w=-9223372036854775808 x=-9223372036854775809",
		"y=18446744073709551615 z=18446744073709551616 m=999999999999999999 n=1000000000000000000 o=-999999999999999999",
		"p=99999999999999999999 q=123456789012345678901 r=-18446744073709551615 s=~ t=1~"}
	rng := rand.New(rand.NewPCG(1, 2))
	const alphabet = "0123456789-=ab \t~"
	for range 5000 {
		b := make([]byte, rng.IntN(40))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		texts = append(texts, string(b))
	}
	r := NewBytesReader(nil)
	for _, text := range texts {
		want := r.decodeAttrs(nil, []byte(text), true)
		got := splitAttrs(nil, []byte(text), text)
		if diff := quickDiff(want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%q: (-decodeAttrs +splitAttrs)\n%s", text, diff)
		}
	}
}

// typeValue types canonical integers by their range, as strconv reads them.
func TestTypeValueRanges(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"0", "-0", "01", "1", "-1", "9223372036854775807", "9223372036854775808", "-9223372036854775808",
		"-9223372036854775809", "18446744073709551615", "18446744073709551616", "18446744073709551619", "18446744073709551620",
		"28446744073709551615", "99999999999999999999", "-18446744073709551616", "1844674407370955161", "184467440737095516150"} {
		wantType, wantInt, wantUint := TypeString, int64(0), uint64(0)
		canonical := !strings.HasPrefix(strings.TrimPrefix(s, "-"), "0") || s == "0"
		if i, err := strconv.ParseInt(s, 10, 64); err == nil && canonical {
			wantType, wantInt = TypeInt, i
		} else if u, err := strconv.ParseUint(s, 10, 64); err == nil && canonical {
			wantType, wantUint = TypeUint, u
		}
		if typ, i, u := typeValue([]byte(s)); typ != wantType || i != wantInt || u != wantUint {
			t.Errorf("%s: %v %d %d, want %v %d %d", s, typ, i, u, wantType, wantInt, wantUint)
		}
	}
}

// spanFields, the span's fixed fields in the form the runtime writes them,
// reads what the grammar reads, and declines the rest.
func TestSpanFieldsAsGrammar(t *testing.T) {
	t.Parallel()
	seeds := []string{
		"[STRACE] v=1 pid=4100 tid=4100 inv=1 hid=51a7c0de42f00d17 depth=2 name=chip.run.bind.args ts=5000015202 dur=163328 cpu_ns=155161",
		"[STRACE] v=1 pid=-2147483648 tid=-9 inv=0 hid=0 depth=2147483647 name= ts=-1 dur=0",
		"[STRACE] v=1 pid=2147483648 tid=1 inv=999999999999999999 hid=FFFFFFFFFFFFFFFF depth=-2147483649 name=a ts=1 dur=1\t\tk",
		"[STRACE] v=1 pid=1 tid=1 inv=1 hid=00000000000000001 depth=0 name=a ts=123456789012345678 dur=1234567890123456789",
		"[STRACE]  v=1\tpid=1 tid=1 inv=-1 hid=1 depth=0 name=a\tts=1 dur=1x",
		"[STRACE] v=1 pid=1 tid=9999999999999999999 inv=18446744073709551615 hid=1 depth=0 name=a ts=-9223372036854775808 dur=9223372036854775807",
	}
	rng := rand.New(rand.NewPCG(3, 4))
	mutations(t, seeds, rng, 200000, len("[STRACE]"), "0123456789- \tafAFx=~:/\xfa\xff", 20000, func(b []byte) bool {
		b = trimRight(b)
		fast := parser{b: b, i: len("[STRACE]")}
		var got Span
		if !fast.spanFields(&got) {
			if fast.i != len("[STRACE]") {
				t.Fatalf("%q: declined after reading to %d", b, fast.i)
			}
			return false
		}
		slow := parser{b: b, i: len("[STRACE]")}
		var want Span
		slow.spanGrammar(&want)
		if slow.st != stOK || !cmp.Equal(want, got) || slow.i != fast.i || slow.nameAt != fast.nameAt || slow.nameEnd != fast.nameEnd {
			t.Fatalf("%q: read %+v to %d (name %d-%d); the grammar reads %+v to %d (name %d-%d), %q",
				b, got, fast.i, fast.nameAt, fast.nameEnd, want, slow.i, slow.nameAt, slow.nameEnd, slow.reasonText())
		}
		return true
	})
}

// prefixTimes, a log prefix's times in the form the runtime writes them,
// reads what the grammar reads, and declines the rest.
func TestPrefixTimesAsGrammar(t *testing.T) {
	t.Parallel()
	seeds := []string{
		"[mono_ns=5000003346][T0x7f3a10c00740][TIMING] emit_host_span: ",
		"[mono_ns=-9223372036854775808][T0xFFFFFFFFFFFFFFFF][INFO] f: ",
		"[mono_ns=999999999999999999][T0x00000000000000001][INFO] f: ",
		"[mono_ns=9223372036854775808][T0x1][INFO] f: ",
	}
	rng := rand.New(rand.NewPCG(5, 6))
	mutations(t, seeds, rng, 100000, len(markMono), "0123456789-[]TxafAF :/\xfa", 10000, func(b []byte) bool {
		fast := parser{b: b, i: len(markMono)}
		var got Prefix
		if !fast.prefixTimes(&got) {
			if fast.i != len(markMono) {
				t.Fatalf("%q: declined after reading to %d", b, fast.i)
			}
			return false
		}
		slow := parser{b: b, i: len(markMono)}
		var want Prefix
		if !slow.i64(&want.MonoNS, "mono_ns") || !slow.lit("][T0x") || !slow.hex(&want.Thread, "thread") || !slow.lit("][") || want != got || slow.i != fast.i {
			t.Fatalf("%q: read %+v to %d; the grammar reads %+v to %d, %q", b, got, fast.i, want, slow.i, slow.reasonText())
		}
		return true
	})
}

// skimWritten, the span filter's skim of the form the runtime writes,
// reads what skimGrammar reads, and declines the rest.
func TestSkimWrittenAsSkim(t *testing.T) {
	t.Parallel()
	seeds := []string{
		"[STRACE] v=1 pid=4100 tid=4100 inv=1 hid=51a7c0de42f00d17 depth=2 name=chip.run.bind.args ts=5000015202 dur=163328",
		"[STRACE] v=1 pid=x tid=- inv=a hid=b depth=-2147483648 name= ts=1",
		"[STRACE] v=1 pid=1 tid=1 inv=1 hid=1 depth=2147483648 name=a",
		"[STRACE] v=1 pid=1 tid=1 inv=1 hid=1 depth=00000000001 name=a",
		"[STRACE] v=1 pid=1 tid=1 inv=1 hid=1 depth=0000000001 name=a",
	}
	rng := rand.New(rand.NewPCG(7, 8))
	mutations(t, seeds, rng, 100000, len("[STRACE]"), "0123456789- \tax=v", 10000, func(b []byte) bool {
		depth, at, end, ok := skimWritten(b)
		if !ok {
			return false
		}
		if d, a, e, ok := skimGrammar(b); !ok || d != depth || a != at || e != end {
			t.Fatalf("%q: skimmed depth %d, name at %d-%d; the grammar's skim: depth %d, name at %d-%d (%v)", b, depth, at, end, d, a, e, ok)
		}
		return true
	})
}

// mutations calls check with n mutations of the seeds (taken in turn, each
// changed after its first from bytes with bytes of alphabet, see mutate):
// check fails the test if a fast reading reads other than the grammar, and
// reports whether it accepted the text. At least minAccepted must be, or the
// mutations test too little of the fast path.
func mutations(t *testing.T, seeds []string, rng *rand.Rand, n, from int, alphabet string, minAccepted int, check func(b []byte) bool) {
	t.Helper()
	accepted := 0
	for i := range n {
		if check(mutate(rng, []byte(seeds[i%len(seeds)]), from, alphabet)) {
			accepted++
		}
	}
	if accepted < minAccepted {
		t.Errorf("only %d texts accepted", accepted)
	}
}

// mutate changes up to two bytes of b after its first from bytes: each a
// byte of alphabet put in place of one, inserted, or a byte deleted.
func mutate(rng *rand.Rand, b []byte, from int, alphabet string) []byte {
	for range rng.IntN(3) {
		i := from + rng.IntN(len(b)-from)
		switch c := alphabet[rng.IntN(len(alphabet))]; rng.IntN(3) {
		case 0:
			b[i] = c
		case 1:
			b = append(b[:i], append([]byte{c}, b[i:]...)...)
		default:
			b = append(b[:i], b[i+1:]...)
		}
	}
	return b
}

// TestTwoRecordsSharingOnePhysicalLine is the runtime's own reader case:
// two spans on one physical line, the second ending the file (no line
// end). Both are read, whether the second follows the first directly (a
// join) or after a blank; the second's last attribute is marked as
// possibly cut, and nothing is lost.
func TestTwoRecordsSharingOnePhysicalLine(t *testing.T) {
	t.Parallel()
	const (
		first  = "[mono_ns=1300][T0x7f3a][TIMING] emit_host_span: [STRACE] v=1 pid=4242 tid=4242 inv=7 hid=9f3c depth=0 name=chip.run ts=900 dur=400 ntensor=4"
		second = "[mono_ns=1301][T0x7f3b][TIMING] emit_host_span: [STRACE] v=1 pid=4243 tid=4243 inv=3 hid=9f3c depth=1 name=chip.run.bind ts=950 dur=62850 ntensor=26"
	)
	for _, sep := range []string{"", " "} {
		recs, st := readAll(t, strings.NewReader(first+sep+second))
		type got struct {
			Name     string
			TS, Dur  int64
			Last     Attr
			Joined   bool
			Line     int64
			Prefixed bool
		}
		var gots []got
		for _, r := range recs {
			gots = append(gots, got{r.Span.Name, r.Span.TS, r.Span.Dur, r.Span.Attrs[len(r.Span.Attrs)-1], r.Joined, r.Pos.Line, r.Prefix.Present})
		}
		want := []got{
			{"chip.run", 900, 400, Int("ntensor", 4), sep == "", 1, true},
			{"chip.run.bind", 950, 62850, Attr{Key: "ntensor", Value: "26", Type: TypeInt, Int: 26, MaybeCut: true}, false, 1, true},
		}
		if diff := cmp.Diff(want, gots); diff != "" {
			t.Errorf("separated by %q (-want +got):\n%s", sep, diff)
		}
		if st.Lost() != 0 || st.MaybeCut != 1 || !st.Unterminated || st.Joined != boolInt(sep == "") {
			t.Errorf("separated by %q: stats %+v", sep, st)
		}
	}
}
