package analysis

import (
	"bytes"
	"errors"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/phasetrace/phasetrace/reduce"
	"github.com/phasetrace/phasetrace/strace"
	"github.com/phasetrace/phasetrace/strace/stracetest"
)

// stepLog is two runs of one lane (slot 0) and one of another (slot 1),
// roots last as the runtime writes them.
const stepLog = `[mono_ns=1][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=7 tid=70 inv=1 hid=abc depth=1 name=chip.run.bind ts=1000 dur=300
[mono_ns=1][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=7 tid=70 inv=1 hid=abc depth=1 name=chip.run.runner_run ts=1400 dur=5000
[mono_ns=1][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=7 tid=70 inv=1 hid=abc depth=2 name=chip.run.runner_run.device_wall ts=0 dur=4000 clk=dev dev=3
[mono_ns=1][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=7 tid=70 inv=1 hid=abc depth=3 name=chip.run.runner_run.device_wall.orch ts=100 dur=2000 clk=dev
[mono_ns=1][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=7 tid=70 inv=1 hid=abc depth=3 name=chip.run.runner_run.device_wall.sched ts=150 dur=2500 clk=dev
[mono_ns=1][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=7 tid=70 inv=1 hid=abc depth=3 name=chip.run.runner_run.device_wall.task_slot_0 ts=150 dur=500 clk=dev
[mono_ns=1][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=7 tid=70 inv=1 hid=abc depth=0 name=chip.run ts=1000 dur=6000 slot_id=0
[mono_ns=1][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=7 tid=70 inv=2 hid=abc depth=0 name=chip.run ts=7500 dur=1000 slot_id=1
[mono_ns=1][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=7 tid=70 inv=3 hid=abc depth=0 name=chip.run ts=9000 dur=1000 slot_id=0
`

// stepsOfLog computes the rows of a log whose runs' spans come together,
// each ending with its root.
func stepsOfLog(t testing.TB, log []byte, f func(*Step)) {
	t.Helper()
	st := NewSteps()
	st.Begin()
	rd := strace.NewReader(bytes.NewReader(log), strace.WithKinds(strace.KindSpan))
	for {
		rec, err := rd.Read()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		st.Span(&rec.Span)
		if rec.Span.Depth == 0 && rec.Span.Name == strace.SpanRun {
			if row, ok := st.End(); ok {
				f(row)
			}
			st.Begin()
		}
	}
}

func TestStepsRows(t *testing.T) {
	t.Parallel()
	var got []Step
	stepsOfLog(t, []byte(stepLog), func(s *Step) {
		row := *s
		row.Binds = nil
		got = append(got, row)
	})
	first := Step{Pid: 7, Tid: 70, Slot: Int(0), Dev: Int(3), Hid: 0xabc, Inv: 1, Start: 1000, ChipRun: 6000,
		Bind: Int(300), Prep: Int(400), Effective: Int(2550)}
	first.Phases[reduce.RunWall] = Int(4000)
	first.Phases[reduce.OrchWindow] = Int(2000)
	first.Phases[reduce.SchedWindow] = Int(2500)
	want := []Step{
		first,
		{Pid: 7, Tid: 70, Slot: Int(1), Hid: 0xabc, Inv: 2, Start: 7500, ChipRun: 1000},
		// Its lane's previous run ended at 7000.
		{Pid: 7, Tid: 70, Slot: Int(0), Hid: 0xabc, Inv: 3, Start: 9000, ChipRun: 1000, Gap: Int(2000)},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
}

// TestREADMEColumns checks the README's table of the steps and binds
// columns against StepColumns (which the phases of package reduce make)
// and BindColumns: every column named once, the binds' in order.
func TestREADMEColumns(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	const head = "| column (ns; empty/null where the run has none) |"
	_, table, ok := strings.Cut(string(b), head)
	if !ok {
		t.Fatalf("README.md has no %q table", head)
	}
	table, _, _ = strings.Cut(table, "\n\n")
	name := regexp.MustCompile("`([a-z_]+)`")
	var steps, binds []string
	for _, row := range strings.Split(table, "\n")[2:] {
		cell := strings.Split(row, "|")[1]
		for _, m := range name.FindAllStringSubmatch(cell, -1) {
			if strings.HasPrefix(strings.TrimSpace(cell), "binds:") {
				binds = append(binds, m[1])
			} else {
				steps = append(steps, m[1])
			}
		}
	}
	names := func(cols []Column) (out []string) {
		for _, c := range cols {
			out = append(out, c.Name)
		}
		return out
	}
	slices.Sort(steps)
	want := slices.Sorted(slices.Values(names(StepColumns)))
	if diff := cmp.Diff(want, steps); diff != "" {
		t.Errorf("README.md's steps columns (-StepColumns +README):\n%s", diff)
	}
	if diff := cmp.Diff(names(BindColumns), binds); diff != "" {
		t.Errorf("README.md's binds columns (-BindColumns +README):\n%s", diff)
	}
}

// TestStepColumnsAgree checks the Parquet schemas against the columns,
// name for name in order, and the column list against the Step's phases.
func TestStepColumnsAgree(t *testing.T) {
	t.Parallel()
	names := func(cols []Column) (out []string) {
		for _, c := range cols {
			out = append(out, c.Name)
		}
		return out
	}
	var sf, bf []string
	for _, f := range stepSchema.Fields() {
		sf = append(sf, f.Name())
	}
	for _, f := range bindSchema.Fields() {
		bf = append(bf, f.Name())
	}
	if diff := cmp.Diff(names(StepColumns), sf); diff != "" {
		t.Errorf("steps: columns (-) and Parquet schema (+):\n%s", diff)
	}
	if diff := cmp.Diff(names(BindColumns), bf); diff != "" {
		t.Errorf("binds: columns (-) and Parquet schema (+):\n%s", diff)
	}
	for _, c := range append(StepColumns, BindColumns...) {
		if c.Doc == "" {
			t.Errorf("column %s has no doc", c.Name)
		}
	}
}

func TestParseStepFormat(t *testing.T) {
	t.Parallel()
	for f := FormatText; f <= FormatParquet; f++ {
		if got, err := ParseStepFormat(f.String()); err != nil || got != f {
			t.Errorf("%v: %v, %v", f, got, err)
		}
	}
	if _, err := ParseStepFormat("xml"); !errors.Is(err, ErrStepFormat) {
		t.Errorf("xml: %v, want ErrStepFormat", err)
	}
}

func FuzzParseStepFormat(f *testing.F) {
	for _, s := range []string{"text", "csv", "json", "parquet", "", "CSV"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseStepFormat(s)
		if err != nil {
			if !errors.Is(err, ErrStepFormat) {
				t.Fatalf("%q: %v does not unwrap to ErrStepFormat", s, err)
			}
			return
		}
		if got.String() != s {
			t.Fatalf("%q read as %v", s, got)
		}
	})
}

// failWriter fails every write.
type failWriter struct{ n int }

var errDisk = errors.New("disk full")

func (w *failWriter) Write(p []byte) (int, error) { w.n++; return 0, errDisk }

// TestStepWriterKeepsItsFirstError: once a write failed, nothing more is
// written and every call returns that error.
func TestStepWriterKeepsItsFirstError(t *testing.T) {
	t.Parallel()
	w := &failWriter{}
	sw := NewStepWriter(w, TableSteps, FormatCSV)
	s := &Step{Pid: 1}
	for range 3 {
		if err := sw.Write(s); !errors.Is(err, errDisk) {
			t.Fatalf("Write: %v", err)
		}
	}
	if err := sw.Close(); !errors.Is(err, errDisk) || w.n != 1 {
		t.Errorf("Close: %v after %d writes; want the first error after one", err, w.n)
	}
}

func TestSlowExcess(t *testing.T) {
	t.Parallel()
	sl := NewSlow(1, false)
	for i, d := range []int64{100, 110, 90, 300} {
		s := &Step{Run: int64(i + 1), Hid: 1, ChipRun: d * 1000, Bind: Int(10), Cold: i == 0}
		s.Phases[reduce.OrchWindow] = Int(d * 1000 / 2)
		sl.Add(s)
	}
	res := sl.Result()
	if len(res) != 1 || len(res[0].Slowest) != 1 {
		t.Fatalf("%+v", res)
	}
	r := res[0].Slowest[0]
	// Warm runs 110, 90, 300 µs: median 110; orch 55, 45, 150: median 55.
	want := SlowRun{Step: Step{Run: 4, Hid: 1, ChipRun: 300_000, Bind: Int(10)}, Excess: Int(190_000),
		Stages: []StageExcess{{Name: "orch", Dur: 150_000, Median: 55_000}}}
	want.Step.Phases[reduce.OrchWindow] = Int(150_000)
	if diff := cmp.Diff(want, r); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	var b strings.Builder
	if err := WriteSlow(&b, res, false); err != nil || !strings.Contains(b.String(), "+190.0  orch +95.0\n") {
		t.Errorf("%v:\n%s", err, b.String())
	}
}

// BenchmarkSteps computes the rows of a generated log read from memory.
func BenchmarkSteps(b *testing.B) {
	cfg := stracetest.Realistic(16 << 20)
	log, _ := stracetest.GenerateTruth(cfg)
	b.SetBytes(int64(len(log)))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		n := 0
		stepsOfLog(b, log, func(*Step) { n++ })
		if n == 0 {
			b.Fatal("no row")
		}
	}
}
