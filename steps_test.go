package phasetrace_test

import (
	"bytes"
	"encoding/csv"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/phasetrace/phasetrace"
	"github.com/phasetrace/phasetrace/perfetto/check/processor"
	"github.com/phasetrace/phasetrace/reduce/analysis"
	"github.com/phasetrace/phasetrace/strace/stracetest"
)

// sqlPackage is the Perfetto SQL package of the steps table.
const sqlPackage = "reduce/analysis/sql/phasetrace"

// stepsOf converts in to a trace and returns it with the steps and binds
// tables WithSteps handed over, as CSV.
func stepsOf(t *testing.T, in phasetrace.Input, opts ...phasetrace.Option) (trace []byte, steps, binds [][]string) {
	t.Helper()
	var sb, bb bytes.Buffer
	sw := analysis.NewStepWriter(&sb, analysis.TableSteps, analysis.FormatCSV)
	bw := analysis.NewStepWriter(&bb, analysis.TableBinds, analysis.FormatCSV)
	var out bytes.Buffer
	opts = append(opts, phasetrace.WithSteps(func(s *analysis.Step) {
		sw.Write(s)
		bw.Write(s)
	}))
	if _, err := phasetrace.Convert(&out, []phasetrace.Input{in}, opts...); err != nil {
		t.Fatal(err)
	}
	if err := sw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := bw.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes(), readCSV(t, sb.Bytes()), readCSV(t, bb.Bytes())
}

func readCSV(t *testing.T, b []byte) [][]string {
	t.Helper()
	rows, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// shell returns the trace processor, or skips the test.
func shell(t *testing.T) *processor.Shell {
	t.Helper()
	sh, ok := processor.FromEnv()
	if !ok {
		t.Skipf("%s is not set: the trace processor is not run", processor.EnvVar)
	}
	return sh
}

// querySQLPackage runs sql on trace in the trace processor with the
// package loaded and returns its rows (the header first) as the Go tables
// print them: NULL empty, booleans true and false.
func querySQLPackage(t *testing.T, sh *processor.Shell, trace []byte, sql string, bools ...string) [][]string {
	t.Helper()
	dir := t.TempDir()
	tracePath, queryPath := filepath.Join(dir, "trace.pftrace"), filepath.Join(dir, "q.sql")
	if err := os.WriteFile(tracePath, trace, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(queryPath, []byte(sql), 0o600); err != nil {
		t.Fatal(err)
	}
	pkg, err := filepath.Abs(sqlPackage)
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(sh.Path, "--add-sql-package", pkg, "-q", queryPath, tracePath)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %s", err, stderr.String())
	}
	rows := readCSV(t, stdout.Bytes())
	if len(rows) == 0 {
		t.Fatal("the trace processor printed nothing")
	}
	for c, name := range rows[0] {
		isBool := false
		for _, b := range bools {
			isBool = isBool || b == name
		}
		for _, r := range rows[1:] {
			switch {
			case r[c] == "[NULL]":
				r[c] = ""
			case isBool:
				r[c] = strconv.FormatBool(r[c] == "1")
			}
		}
	}
	return rows
}

// TestStepsSQLPackage runs the SQL package in the trace processor on the
// traces of the sample log and a generated one (pipelined lanes, legacy
// bind lines, wall-clock anchors) and compares phasetrace_steps and
// phasetrace_binds with the Go tables, row for row.
func TestStepsSQLPackage(t *testing.T) {
	t.Parallel()
	sh := shell(t)
	cfg := stracetest.Realistic(0)
	cfg.Rounds, cfg.WallNS = 40, []int64{1_767_225_600_000_000_000}
	for _, in := range []phasetrace.Input{
		phasetrace.File("examples/strace2perfetto/sample.log"),
		phasetrace.Bytes("gen.log", generated(cfg)),
	} {
		t.Run(in.Name, func(t *testing.T) {
			t.Parallel()
			trace, steps, binds := stepsOf(t, in)
			if len(steps) < 10 {
				t.Fatalf("%d rows: want a log of many runs", len(steps)-1)
			}
			got := querySQLPackage(t, sh, trace, "include perfetto module phasetrace.steps;\nselect * from phasetrace_steps;", "cold")
			if diff := quickDiff(steps, got); diff != "" {
				t.Errorf("phasetrace_steps (-Go +SQL):\n%s", diff)
			}
			got = querySQLPackage(t, sh, trace, "include perfetto module phasetrace.bind_warm;\nselect * from phasetrace_binds;")
			if diff := quickDiff(sortRows(binds), sortRows(got)); diff != "" {
				t.Errorf("phasetrace_binds (-Go +SQL):\n%s", diff)
			}
			// The other modules load and hold rows.
			for _, q := range []string{
				"include perfetto module phasetrace.host_gaps;\nselect count(*) from phasetrace_host_gaps;",
				"include perfetto module phasetrace.device_busy;\nselect count(*) from phasetrace_device_busy;",
				"include perfetto module phasetrace.bind_warm;\nselect count(*) from phasetrace_bind_warm;",
			} {
				if r := querySQLPackage(t, sh, trace, q); len(r) != 2 || r[1][0] == "0" {
					t.Errorf("%s: %v, want rows", q, r)
				}
			}
		})
	}
}

// sortRows sorts rows after the header, as text: the binds of a run come
// in the order their sources are drawn, not by time.
func sortRows(rows [][]string) [][]string {
	out := append([][]string{rows[0]}, rows[1:]...)
	body := out[1:]
	key := func(r []string) string { return strings.Join(r, "\x00") }
	for i := 1; i < len(body); i++ {
		for j := i; j > 0 && key(body[j]) < key(body[j-1]); j-- {
			body[j], body[j-1] = body[j-1], body[j]
		}
	}
	return out
}

// TestSlowNamesTheRunSQLFinds ranks a generated log's runs with
// analysis.Slow and checks its slowest warm run of the most run callable
// against a plain SQL search of the trace, and the part it names against
// the part the split trace's overview gives that run.
func TestSlowNamesTheRunSQLFinds(t *testing.T) {
	t.Parallel()
	sh := shell(t)
	cfg := stracetest.Realistic(0)
	cfg.Rounds = 120
	log := generated(cfg)
	slow := analysis.NewSlow(1, false)
	var trace, overview bytes.Buffer
	steps := phasetrace.WithSteps(slow.Add)
	if _, err := phasetrace.Convert(&trace, []phasetrace.Input{phasetrace.Bytes("gen.log", log)}, steps); err != nil {
		t.Fatal(err)
	}
	res := slow.Result()
	if len(res) == 0 || len(res[0].Slowest) == 0 {
		t.Fatal("no slow run")
	}
	top := res[0].Slowest[0].Step
	rows, err := sh.Query(trace.Bytes(), `
with runs as (
  select s.ts, s.dur, process.pid,
    extract_arg(s.arg_set_id, 'debug.run') as run,
    extract_arg(s.arg_set_id, 'debug.inv') as inv,
    extract_arg(s.arg_set_id, 'debug.hid') as hid,
    extract_arg(s.arg_set_id, 'debug.cold') as cold
  from slice s join thread_track tt on s.track_id = tt.id join thread using (utid) join process using (upid)
  where s.name = 'chip.run' and s.depth = 0)
select run, pid, inv, ts from runs
where cold is null and hid = (select hid from runs group by hid order by count(*) desc, min(run) limit 1)
order by dur desc, run limit 1;`)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{strconv.FormatInt(top.Run, 10), strconv.Itoa(int(top.Pid)), strconv.FormatUint(top.Inv, 10), strconv.FormatInt(top.Start, 10)}
	if len(rows) != 2 {
		t.Fatalf("SQL found %v", rows)
	}
	if diff := cmp.Diff(want, rows[1]); diff != "" {
		t.Errorf("the slowest warm decode run: Slow (-) and SQL (+):\n%s", diff)
	}

	// Split: the part Slow names holds the run, as the overview says.
	slow = analysis.NewSlow(1, false)
	open := func(n int) (io.WriteCloser, string, error) {
		return nopCloser{io.Discard}, "gen.part" + strconv.Itoa(n) + ".pftrace", nil
	}
	if _, err := phasetrace.Convert(&overview, []phasetrace.Input{phasetrace.Bytes("gen.log", log)}, phasetrace.WithSteps(slow.Add), phasetrace.WithSplit(2000, open)); err != nil {
		t.Fatal(err)
	}
	top = slow.Result()[0].Slowest[0].Step
	rows, err = sh.Query(overview.Bytes(), "select extract_arg(arg_set_id, 'debug.part') from slice where extract_arg(arg_set_id, 'debug.run') = "+strconv.FormatInt(top.Run, 10)+";")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[1][0] != top.Part || !strings.HasPrefix(top.Part, "gen.part") {
		t.Errorf("run %d: Slow names part %q, the overview %v", top.Run, top.Part, rows)
	}
}

// TestStepsMemoryIsFlat converts a generated log of 4 MB and one twice as
// long with WithSteps writing every row: the peak of live heap (sampled at
// the trace's writes) grows by no more than it does without the rows.
func TestStepsMemoryIsFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("converts 12 MB of logs")
	}
	peak := func(log []byte) (uint64, int) {
		h := &heapSampler{}
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		base := ms.HeapAlloc
		rows := 0
		sw := analysis.NewStepWriter(io.Discard, analysis.TableSteps, analysis.FormatCSV)
		opts := []phasetrace.Option{phasetrace.WithFlowHorizon(1_000_000_000), phasetrace.WithSteps(func(s *analysis.Step) {
			rows++
			sw.Write(s)
		})}
		if _, err := phasetrace.Convert(h, []phasetrace.Input{phasetrace.Bytes("gen.log", log)}, opts...); err != nil {
			t.Fatal(err)
		}
		runtime.KeepAlive(log)
		return h.peak - base, rows
	}
	small, large := doublingLogs()
	p1, n1 := peak(small)
	p2, n2 := peak(large)
	t.Logf("peak live heap %d B with %d rows, %d B with %d rows", p1, n1, p2, n2)
	if n2 < 2*n1-8 {
		t.Fatalf("%d and %d rows: the test wants twice the runs", n1, n2)
	}
	if int64(p2)-int64(p1) > 1<<20 {
		t.Errorf("the peak of live heap grows by %d B with the log: want at most 1 MiB", int64(p2)-int64(p1))
	}
}
