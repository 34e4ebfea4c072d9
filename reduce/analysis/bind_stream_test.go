package analysis

import (
	"bytes"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/phasetrace/phasetrace/strace"
)

// streamBinds computes the bind statistics of a log while reading it.
func streamBinds(t testing.TB, name string, data []byte, opts ...BindOption) (*Binds, *BindStats, error) {
	t.Helper()
	b := NewBinds(name, opts...)
	if err := b.ReadFrom(strace.NewReader(bytes.NewReader(data))); err != nil {
		t.Fatal(err)
	}
	st, err := b.Stats()
	return b, st, err
}

// withoutSegments is st with its binds' segments left out, as a stream
// gives them.
func withoutSegments(st *BindStats) *BindStats {
	out := *st
	out.Binds = nil
	for _, b := range st.Binds {
		b.Segments = nil
		out.Binds = append(out.Binds, b)
	}
	return &out
}

// TestBindsMatchLog checks that the streamed statistics are those of the
// whole log, with every option and every kind of segment source.
func TestBindsMatchLog(t *testing.T) {
	t.Parallel()
	logs := map[string][]byte{"generated": generated(200)}
	for _, name := range []string{"bind.log", "bind_cold.log", "bind_legacy.log", "bind_warnings.log", "bind_records.log", "compare_base.log", "rounds.log"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		logs[name] = data
	}
	passes := testPasses(t, "bind_records.jsonl")
	for name, data := range logs {
		l, err := ReadLog(bytes.NewReader(data), WithName(name))
		if err != nil {
			t.Fatal(err)
		}
		for _, opts := range [][]BindOption{nil, {WithKeepFirst()}, {WithRanks(1)}, {WithRounds(3)}, {WithPhaseRecords(passes)}} {
			want, werr := AnalyzeBinds(l, opts...)
			b, got, gerr := streamBinds(t, name, data, opts...)
			if b.Late() != 0 {
				t.Errorf("%s: %d late segments", name, b.Late())
			}
			if (werr == nil) != (gerr == nil) || werr != nil && werr.Error() != gerr.Error() {
				t.Errorf("%s: error %v, want %v", name, gerr, werr)
			}
			if diff := quickDiff(withoutSegments(want), got); diff != "" {
				t.Errorf("%s %d options: stats (-log +stream):\n%s", name, len(opts), diff)
			}
			var w, g bytes.Buffer
			_ = WriteBinds(&w, want)
			_ = WriteBinds(&g, got)
			if w.String() != g.String() {
				t.Errorf("%s: printed\n%s\nwant\n%s", name, g.String(), w.String())
			}
		}
	}
}

// TestBindsFlatHeap checks what the doc says grows with the log: the peak
// heap of a log 4× as long grows by no more than, per bind, its key, its
// packed segments, its entry in the result and its control-plane total,
// plus a fixed allowance.
func TestBindsFlatHeap(t *testing.T) {
	if testing.Short() {
		t.Skip("reads logs of 8 and 32 MB")
	}
	small, large := smallAndLargeLogs(t)
	type run struct {
		heap        uint64
		binds, segs int64
	}
	measure := func(path string) run {
		var r run
		r.heap = peakHeapReading(t, path, func(f *os.File) {
			b := NewBinds(path)
			if err := b.ReadFrom(strace.NewReader(f)); err != nil {
				t.Error(err)
			}
			st, _ := b.Stats()
			r.binds = int64(len(st.Binds))
			for _, s := range st.Segments {
				r.segs += int64(s.N)
			}
		})
		return r
	}
	const allowance = 4 << 20
	s, l := measure(small), measure(large)
	grew := int64(l.heap) - int64(s.heap)
	// per bind: its key in a map (~50), the packed bind (~64), its Bind
	// (~48) and control-plane total (~80), 300 bytes in all; per segment
	// about a dozen packed bytes, and 8 bytes of minflt sequence or of
	// duration while a spread is computed.
	limit := 300*(l.binds-s.binds) + 24*(l.segs-s.segs) + allowance
	t.Logf("bind: peak heap %d → %d bytes for %d → %d binds, %d → %d segments (grew %d, allowed %d)",
		s.heap, l.heap, s.binds, l.binds, s.segs, l.segs, grew, limit)
	if grew > limit {
		t.Errorf("peak heap grew by %d bytes for a log 4× as long, allowed %d", grew, limit)
	}
}

// BenchmarkBinds reads a generated log and computes the bind statistics.
func BenchmarkBinds(b *testing.B) {
	data := generated(3000)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		_, _, _ = streamBinds(b, "generated", data)
	}
}

// TestBindRepetitionsMatchLog checks that the streamed repetitions'
// statistics are those of Log.Repetitions, and their comparison the same.
func TestBindRepetitionsMatchLog(t *testing.T) {
	t.Parallel()
	read := func(name string) []byte {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	base, measure := read("compare_base.log"), read("compare_measure.log")
	noStamp := read("bind.log")
	logs := map[string][]byte{
		"base":        base,
		"measure":     measure,
		"twice":       append(append([]byte{}, base...), base...),
		"before":      append(append([]byte{}, noStamp...), measure...),
		"no stamp":    noStamp,
		"generated":   generated(50),
		"three times": bytes.Repeat(measure, 3),
	}
	streamed := make(map[string][]RepStats)
	fromLog := make(map[string][]RepStats)
	for name, data := range logs {
		l, err := ReadLog(bytes.NewReader(data), WithName(name))
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range l.Repetitions() {
			st, err := AnalyzeBinds(r)
			fromLog[name] = append(fromLog[name], RepStats{withoutSegments(st), err})
		}
		br := NewBindRepetitions(name)
		if err := br.ReadFrom(strace.NewReader(bytes.NewReader(data))); err != nil {
			t.Fatal(err)
		}
		streamed[name] = br.Stats()
		if br.Late() != 0 {
			t.Errorf("%s: %d late", name, br.Late())
		}
		want, got := fromLog[name], streamed[name]
		if len(want) != len(got) {
			t.Fatalf("%s: %d repetitions, want %d", name, len(got), len(want))
		}
		for i := range want {
			if (want[i].Err == nil) != (got[i].Err == nil) || want[i].Err != nil && want[i].Err.Error() != got[i].Err.Error() {
				t.Errorf("%s %d: error %v, want %v", name, i, got[i].Err, want[i].Err)
			}
			if diff := quickDiff(want[i].Stats, got[i].Stats); diff != "" {
				t.Errorf("%s %d: stats (-log +stream):\n%s", name, i, diff)
			}
		}
	}
	for _, pair := range [][2]string{{"base", "measure"}, {"twice", "three times"}, {"twice", "twice"}} {
		want, werr := CompareRepetitions(fromLog[pair[0]], fromLog[pair[1]])
		got, gerr := CompareRepetitions(streamed[pair[0]], streamed[pair[1]])
		if (werr == nil) != (gerr == nil) {
			t.Errorf("%v: error %v, want %v", pair, gerr, werr)
			continue
		}
		var w, g bytes.Buffer
		if werr == nil {
			_ = WriteComparison(&w, want)
			_ = WriteComparison(&g, got)
		}
		if w.String() != g.String() {
			t.Errorf("%v: printed\n%s\nwant\n%s", pair, g.String(), w.String())
		}
	}
}

// passSlice reads passes from a slice.
type passSlice []strace.PhasePass

func (p *passSlice) Read() (strace.PhasePass, error) {
	if len(*p) == 0 {
		return strace.PhasePass{}, io.EOF
	}
	pass := (*p)[0]
	*p = (*p)[1:]
	return pass, nil
}

// passesFor makes a pass for every chip.run.bind span of a log, in the
// log's order, plus one for a bind the log does not have, after every
// tenth.
func passesFor(t *testing.T, data []byte) []strace.PhasePass {
	t.Helper()
	l, err := ReadLog(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	var passes []strace.PhasePass
	for i, s := range l.Spans {
		if s.Name != strace.SpanBind || s.IsDevice() {
			continue
		}
		ts := uint64(s.TS)
		passes = append(passes, strace.PhasePass{Pid: s.Pid, Inv: s.Inv, Pos: strace.Pos{Line: int64(i)}, Records: []strace.PhaseRecord{
			{Phase: "args", StartNS: ts, EndNS: ts + 1000},
			{Phase: "host_orch", StartNS: ts + 1000, EndNS: ts + 50_000},
			{Phase: "submit_task", StartNS: ts + 2000, EndNS: ts + 3000},
			{Phase: "graph_pack", StartNS: ts + 50_000, EndNS: ts + 90_000},
		}})
		if len(passes)%11 == 10 {
			passes = append(passes, strace.PhasePass{Pid: s.Pid, Inv: s.Inv + 1<<40, Records: []strace.PhaseRecord{{Phase: "args", StartNS: ts, EndNS: ts + 5}}})
		}
	}
	return passes
}

// TestBindsStreamedRecords checks that passes streamed from their files
// give the statistics of the passes held whole, while a Binds holds only
// the passes within the horizon of the binds it closes.
func TestBindsStreamedRecords(t *testing.T) {
	t.Parallel()
	data := generated(3000)
	passes := passesFor(t, data)
	l, err := ReadLog(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	want, werr := AnalyzeBinds(l, WithPhaseRecords(passes))
	src := passSlice(passes)
	b := NewBinds("", WithPhaseRecordsFrom(&src))
	rd := strace.NewReader(bytes.NewReader(data))
	maxHeld := 0
	for {
		rec, err := rd.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b.Add(&rec)
		maxHeld = max(maxHeld, len(b.recs.held)-b.recs.head)
	}
	got, gerr := b.Stats()
	if (werr == nil) != (gerr == nil) {
		t.Fatalf("error %v, want %v", gerr, werr)
	}
	if diff := quickDiff(withoutSegments(want), got); diff != "" {
		t.Errorf("stats (-held +streamed):\n%s", diff)
	}
	if !slices.ContainsFunc(got.Warnings, func(w BindWarning) bool { return strings.Contains(w.Text, "pass(es) match no bind") }) {
		t.Errorf("no warning for the passes of binds the log does not have: %v", got.Warnings)
	}
	// The generated log spans two minutes; the horizon is 10 s each way.
	t.Logf("%d passes, at most %d held", len(passes), maxHeld)
	if maxHeld >= len(passes)/2 {
		t.Errorf("held %d of %d passes at once", maxHeld, len(passes))
	}
}

// TestBindsRecordsWindowBound checks MaxHeldSegments: a window reads no
// further once it holds that many, and reads on once binds let go of the
// passes it holds.
func TestBindsRecordsWindowBound(t *testing.T) {
	t.Parallel()
	var w passWindow
	w.byKey = map[bindKey][]*heldPass{}
	var names segNames
	const per = MaxHeldSegments/4 + 1
	src := passSlice{}
	for i := range 8 {
		many := make([]strace.PhaseRecord, per)
		for j := range many {
			many[j] = strace.PhaseRecord{Phase: "args", StartNS: uint64(10 * i), EndNS: uint64(10*i + 1)}
		}
		src = append(src, strace.PhasePass{Pid: 1, Inv: uint64(i), Records: many})
	}
	w.srcs = []passSource{{rd: &src, frontier: math.MinInt64}}
	w.stream = true
	w.fill(100, &names)
	if n := len(w.held); n != 4 {
		t.Errorf("read %d passes of %d segments, want 4", n, per)
	}
	if ps := w.take(bindKey{1, 0}); len(ps) != 1 {
		t.Errorf("the first pass is not held")
	}
	w.expire(10)
	w.fill(100, &names)
	if n := len(w.held) - w.head; n != 4 || w.unmatched != 0 {
		t.Errorf("after the first pass was used: %d passes held, %d unmatched; want 4 and 0", n, w.unmatched)
	}
	if ps := w.take(bindKey{1, 4}); len(ps) != 1 {
		t.Errorf("the fifth pass was not read")
	}
}
