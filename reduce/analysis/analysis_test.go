package analysis

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phasetrace/phasetrace/strace"
	"github.com/phasetrace/phasetrace/strace/stracetest"
)

// rec is one [STRACE] record as the runtime writes it.
func rec(pid, inv int, hid string, depth int, name string, ts, dur int64, attrs string) string {
	if attrs != "" {
		attrs = " " + attrs
	}
	return fmt.Sprintf("[mono_ns=%d][T0x7f00][TIMING] emit_host_span: [STRACE] v=1 pid=%d tid=%d inv=%d hid=%s depth=%d name=%s ts=%d dur=%d%s\n",
		ts+dur, pid, pid, inv, hid, depth, name, ts, dur, attrs)
}

// logOf reads a log from text.
func logOf(t *testing.T, name string, lines ...string) *Log {
	t.Helper()
	l, err := ReadLog(strings.NewReader(strings.Join(lines, "")), WithName(name))
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Stats.Check(); err != nil {
		t.Fatal(err)
	}
	return l
}

// testLog reads a log under testdata, or at a path relative to the reduce
// directory (the goldens print the name as given).
func testLog(t *testing.T, name string) *Log {
	t.Helper()
	path := filepath.Join("..", name)
	if !strings.Contains(name, "/") {
		path = filepath.Join("testdata", name)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	l, err := ReadLog(f, WithName(name))
	if err != nil {
		t.Fatal(err)
	}
	if l.Stats.Lost() != 0 {
		t.Fatalf("%s: %d records lost: %v", name, l.Stats.Lost(), l.Stats.Problems)
	}
	return l
}

// TestGolden renders every analysis of the hand-made logs and of the
// strace package's realistic log. The numbers in these files were checked
// against the runtime's own tools on the same logs.
func TestGolden(t *testing.T) {
	t.Parallel()
	const realistic = "../strace/testdata/realistic.log"
	cases := []struct {
		golden string
		logs   []string
		render func(*testing.T, []*Log) string
	}{
		{"tpot", []string{"tpot.log"}, renderTPOT},
		{"tpot_realistic", []string{realistic}, renderTPOT},
		{"rounds", []string{"rounds.log"}, renderRounds},
		{"rounds_hbg", []string{"rounds_hbg.log"}, renderRounds},
		{"rounds_trim", []string{"rounds_trim.log"}, renderRounds},
		{"rounds_realistic", []string{realistic}, renderRounds},
		{"tree", []string{"tree.log"}, renderTree},
		{"tree_realistic", []string{realistic}, renderTree},
		{"overlap_ok", []string{"overlap_ok.log"}, renderOverlap},
		{"bind", []string{"bind.log"}, renderBinds},
		{"bind_warnings", []string{"bind_warnings.log"}, renderBinds},
		{"bind_realistic", []string{realistic}, renderBinds},
		{"bind_legacy", []string{"bind_legacy.log"}, renderBinds},
		{"bind_records", []string{"bind_records.log"}, renderBindsWithRecords("bind_records.jsonl")},
		{"compare", []string{"compare_base.log", "compare_measure.log"}, renderCompare},
	}
	for _, c := range cases {
		t.Run(c.golden, func(t *testing.T) {
			t.Parallel()
			var logs []*Log
			for _, name := range c.logs {
				logs = append(logs, testLog(t, name))
			}
			checkGolden(t, filepath.Join("testdata", c.golden+".golden"), c.render(t, logs))
		})
	}
}

func checkGolden(t *testing.T, path, got string) {
	t.Helper()
	stracetest.Golden(t, path, []byte(got))
}

func renderTPOT(t *testing.T, logs []*Log) string {
	var b bytes.Buffer
	if err := WriteTPOT(&b, AnalyzeTPOT(logs[0].Spans)); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func renderRounds(t *testing.T, logs []*Log) string {
	var b bytes.Buffer
	if err := WriteRounds(&b, AnalyzeRounds(logs[0].Spans)); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func renderTree(t *testing.T, logs []*Log) string {
	var b bytes.Buffer
	if err := WriteTree(&b, AnalyzeTree(logs[0].Spans)); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func renderOverlap(t *testing.T, logs []*Log) string {
	var b bytes.Buffer
	p, err := ProveOverlap(logs[0].Spans)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteOverlap(&b, p); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func renderBinds(t *testing.T, logs []*Log) string {
	var b bytes.Buffer
	st, err := AnalyzeBinds(logs[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteBinds(&b, st); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// renderBindsWithRecords renders the bind statistics with the passes of a
// host_phase_records.jsonl under testdata.
func renderBindsWithRecords(name string) func(*testing.T, []*Log) string {
	return func(t *testing.T, logs []*Log) string {
		var b bytes.Buffer
		st, err := AnalyzeBinds(logs[0], WithPhaseRecords(testPasses(t, name)))
		if err != nil {
			t.Fatal(err)
		}
		if err := WriteBinds(&b, st); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
}

func testPasses(t *testing.T, name string) []strace.PhasePass {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := strace.NewPhaseRecordsReader(f, strace.WithName(name))
	var passes []strace.PhasePass
	for {
		p, err := r.Read()
		if err == io.EOF {
			return passes
		}
		if err != nil {
			t.Fatal(err)
		}
		passes = append(passes, p)
	}
}

func renderCompare(t *testing.T, logs []*Log) string {
	var b bytes.Buffer
	c, err := CompareBinds(logs[0].Repetitions(), logs[1].Repetitions())
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteComparison(&b, c); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestPythonFormatting pins the rounding the runtime's tools print: the
// value is a binary double and "%.1f" rounds its exact value, ties to even.
func TestPythonFormatting(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		ns   int64
		want string
	}{
		{250, "0.2"},      // 0.25 is exact in binary: a tie, to even
		{350, "0.3"},      // 0.35 is 0.34999999999999997779...
		{1050, "1.1"},     // 1.05 is 1.05000000000000004440...
		{120250, "120.2"}, // 120.25 exact: tie, to even
		{100050, "100.0"}, // 100.05 is 100.04999999999999715...
		{-50, "-0.1"},     // -0.05 is -0.05000000000000000277...
		{0, "0.0"},
	} {
		if got := usText(c.ns); got != c.want {
			t.Errorf("usText(%d) = %q, want %q", c.ns, got, c.want)
		}
	}
	// Python's (a + b) / 2.0 / 1000.0 for a median of two.
	if got := fmtF(medianUS(Median{2500, 5000}), 1); got != "3.8" { // 3.75 exact: tie, to even
		t.Errorf("median 3750 ns = %s µs, want 3.8", got)
	}
	if got := pyHalfSum(1<<62, 1<<62); got != float64(1<<62) {
		t.Errorf("pyHalfSum overflowing int64 = %v", got)
	}
	// Summing in order, as Python's sum() does, is not exact: 0.1+0.2+0.3.
	if got := pySum([]float64{0.1, 0.2, 0.3}); got == 0.6 {
		t.Errorf("pySum rounded like an exact sum: %v", got)
	}
}

func TestMedianAndMean(t *testing.T) {
	t.Parallel()
	if got := spreadOf([]int64{5, 1, 3, 2}); got != (Spread{N: 4, Min: 1, Max: 5, Median: Median{2, 3}}) {
		t.Errorf("spreadOf even = %+v", got)
	}
	if got := spreadOf([]int64{5, 1, 3}); got.Median != (Median{3, 3}) {
		t.Errorf("spreadOf odd = %+v", got)
	}
	if got := spreadOf(nil); got != (Spread{}) {
		t.Errorf("spreadOf(nil) = %+v", got)
	}
	// Exact even past int64: three values near the maximum.
	const big = 1<<63 - 1
	if got := truncMean([]int64{big, big, big - 3}); got != big-1 {
		t.Errorf("truncMean near max = %d, want %d", got, int64(big-1))
	}
	// Truncated toward zero, like Python's int() of the mean.
	if got := truncMean([]int64{-1, -2}); got != -1 {
		t.Errorf("truncMean(-1, -2) = %d, want -1", got)
	}
}

func TestReadLogStampsAndAutoload(t *testing.T) {
	t.Parallel()
	const autoload = `torch_backend_autoload setting=0 raw="0" raw_truncated=false effective=disabled torch_imported=true torch_npu_loaded=false`
	l := logOf(t, "two.log",
		"[stamp] aaaa python main.py\n",
		"[mono_ns=1][T0x1][TIMING] report: "+autoload+"\n",
		rec(1, 1, "a", 0, "chip.run", 0, 10, ""),
		"[stamp] bbbb python main.py\n",
		"[mono_ns=2][T0x1][TIMING] report: torch_backend_autoload setting=1 effective=enabled torch_imported=true torch_npu_loaded=true\n",
		rec(1, 2, "a", 0, "chip.run", 20, 10, ""),
		rec(1, 3, "a", 0, "chip.run", 40, 10, ""),
	)
	if s, ok := l.Stamp(); !ok || s != "aaaa python main.py" {
		t.Errorf("Stamp() = %q, %v", s, ok)
	}
	if got := len(l.AutoloadDistinct()); got != 2 {
		t.Errorf("%d distinct autoload records, want 2", got)
	}
	reps := l.Repetitions()
	if len(reps) != 2 {
		t.Fatalf("%d repetitions, want 2", len(reps))
	}
	for i, want := range []struct {
		stamp    string
		spans    int
		autoload string
	}{{"aaaa python main.py", 1, autoload}, {"bbbb python main.py", 2, "torch_backend_autoload setting=1 effective=enabled torch_imported=true torch_npu_loaded=true"}} {
		r := reps[i]
		s, _ := r.Stamp()
		if s != want.stamp || len(r.Spans) != want.spans || len(r.Autoload) != 1 || r.Autoload[0].Text != want.autoload {
			t.Errorf("repetition %d: stamp %q, %d spans, autoload %v", i+1, s, len(r.Spans), r.Autoload)
		}
	}
	// Concatenation shifts offsets and span positions past the first log.
	c := Concat("both", l, l)
	if len(c.Spans) != 6 || len(c.Stamps) != 4 || c.Stamps[2].Span != 3 || c.Stamps[2].Offset != l.Stats.Bytes {
		t.Errorf("Concat: %d spans, stamps %+v", len(c.Spans), c.Stamps)
	}
	if got := len(c.Repetitions()); got != 4 {
		t.Errorf("Concat: %d repetitions, want 4", got)
	}
	// Spans before the first stamp are a repetition of their own.
	pre := logOf(t, "pre.log", rec(1, 1, "a", 0, "chip.run", 0, 10, ""), "[stamp] c\n", rec(1, 2, "a", 0, "chip.run", 0, 10, ""))
	if reps := pre.Repetitions(); len(reps) != 2 || len(reps[0].Stamps) != 0 || len(reps[1].Spans) != 1 {
		t.Errorf("repetitions of a log with spans before its stamp: %d", len(reps))
	}
}

func TestReadLogError(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	_, err := ReadLog(errReader{boom}, WithName("x.log"))
	if !errors.Is(err, boom) {
		t.Errorf("ReadLog error = %v, want %v", err, boom)
	}
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// TestReadLogReaderOptions: the reader's options reach the autoload records
// too: a record on a line past the default maximum is counted as lost, and
// read with a larger maximum. The name is WithName's.
func TestReadLogReaderOptions(t *testing.T) {
	t.Parallel()
	line := "torch_backend_autoload setting=1 raw=\"" + strings.Repeat("x", strace.DefaultMaxLine) +
		"\" raw_truncated=false effective=enabled torch_imported=true torch_npu_loaded=true\n"
	l, err := ReadLog(strings.NewReader(line), WithName("long.log"))
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Autoload) != 0 || l.Stats.Heads.Autoload != 1 || l.Stats.InLongLines != 1 {
		t.Errorf("default maximum line: %d autoload records, %+v", len(l.Autoload), l.Stats)
	}
	l, err = ReadLog(strings.NewReader(line), WithName("long.log"),
		WithReaderOptions(strace.WithMaxLine(2*strace.DefaultMaxLine), strace.WithName("ignored")))
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Autoload) != 1 || l.Autoload[0].Text != strings.TrimSuffix(line, "\n") || l.Stats.Lost() != 0 {
		t.Errorf("raised maximum line: %d autoload records, %+v", len(l.Autoload), l.Stats)
	}
	if l.Name != "long.log" || len(l.Stats.Problems) != 0 {
		t.Errorf("name %q", l.Name)
	}
}
