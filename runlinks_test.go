package phasetrace_test

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/phasetrace/phasetrace"
	"github.com/phasetrace/phasetrace/perfetto/check"
	"github.com/phasetrace/phasetrace/perfetto/check/processor"
)

// runArrows counts the trace's arrows from a chip.run.runner_run to a
// device_wall, and reports the first that joins slices of two runs (by the
// run key) or does not go forward in time.
func runArrows(t *testing.T, tr *check.Trace) int64 {
	t.Helper()
	var n int64
	for _, f := range tr.Flows {
		from, to := tr.Slices[f.From], tr.Slices[f.To]
		if from.Name != "chip.run.runner_run" || to.Name != "chip.run.runner_run.device_wall" {
			continue
		}
		n++
		a, _ := argOf(from, "run")
		b, _ := argOf(to, "run")
		if a == nil || a != b || from.TS >= to.TS {
			t.Errorf("arrow from runner_run (run %v at %d) to device_wall (run %v at %d)", a, from.TS, b, to.TS)
		}
	}
	return n
}

// Each run's runner_run → device_wall arrow is drawn when both ends are,
// and otherwise counted under the reason its end is not: the trace never
// holds a flow id without its other end, and the trace processor reads as
// many arrows as the summary says were drawn.
func TestRunToDeviceArrows(t *testing.T) {
	t.Parallel()
	rr := int64(1_400_000) // chipRun(4100, 1, 1_000_000)'s runner_run
	filled := spanLine(1_300_000, 4100, 4100, 1, 1, "chip.run.bind", 1_000_000, 300_000, "") +
		spanLine(21_400_000, 4100, 4100, 1, 1, "chip.run.runner_run", rr, 20_000_000, "") +
		spanLine(21_500_000, 4100, 4100, 1, 2, "chip.run.runner_run.device_wall", 0, 20_000_000, "clk=dev dev=0") +
		spanLine(21_600_000, 4100, 4100, 1, 0, "chip.run", 1_000_000, 20_700_000, "")
	tooLong := spanLine(21_400_000, 4100, 4100, 1, 1, "chip.run.runner_run", rr, 20_000_000, "") +
		spanLine(21_500_000, 4100, 4100, 1, 2, "chip.run.runner_run.device_wall", 0, 30_000_000, "clk=dev dev=0") +
		spanLine(21_600_000, 4100, 4100, 1, 0, "chip.run", 1_000_000, 20_700_000, "")
	for _, tc := range []struct {
		name     string
		log      string
		opts     []phasetrace.Option
		drawn    int64
		unlinked phasetrace.ReasonCounts
	}{
		{"two runs", chipRun(4100, 1, 1_000_000) + chipRun(4100, 2, 30_000_000), nil, 2, nil},
		{"a run without device spans", spanLine(2, 4100, 4100, 1, 1, "chip.run.runner_run", 100, 50, "") +
			spanLine(3, 4100, 4100, 1, 0, "chip.run", 90, 70, ""), nil, 0, nil},
		{"the window ends between runner_run's start and device_wall's", chipRun(4100, 1, 1_000_000),
			[]phasetrace.Option{phasetrace.WithWindow(0, rr+1000)}, 0, phasetrace.ReasonCounts{phasetrace.ReasonRunToDeviceUnended: 1}},
		{"the window holds neither end", chipRun(4100, 1, 1_000_000) + chipRun(4100, 2, 30_000_000),
			[]phasetrace.Option{phasetrace.WithWindow(21_500_000, 21_600_000)}, 0, phasetrace.ReasonCounts{phasetrace.ReasonRunToDeviceUnended: 2}},
		{"device_wall over the track limit", chipRun(4100, 1, 1_000_000),
			[]phasetrace.Option{phasetrace.WithMaxTracks(3)}, 0, phasetrace.ReasonCounts{phasetrace.ReasonRunToDeviceUnended: 1}},
		{"device_wall longer than its runner_run", tooLong, nil, 0, phasetrace.ReasonCounts{phasetrace.ReasonRunToDeviceNotAfter: 1}},
		{"device_wall fills its runner_run", filled, nil, 0, phasetrace.ReasonCounts{phasetrace.ReasonRunToDeviceNotAfter: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tr, sum, out := convert(t, []phasetrace.Input{phasetrace.Bytes("run.log", []byte(tc.log))}, tc.opts...)
			if n := runArrows(t, tr); n != tc.drawn || sum.Flows[phasetrace.FlowRunToDevice] != tc.drawn {
				t.Errorf("%d arrows in the trace, %d in the summary: want %d", n, sum.Flows[phasetrace.FlowRunToDevice], tc.drawn)
			}
			if diff := gocmp.Diff(tc.unlinked, sum.Unlinked); diff != "" {
				t.Errorf("unlinked (-want +got):\n%s", diff)
			}
			processorAgrees(t, out, tr, sum)
		})
	}
}

// readmeQuery is the SQL query the README shows: its one sql block.
func readmeQuery(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	const open, end = "```sql\n", "```\n"
	doc := string(b)
	i := strings.Index(doc, open)
	if i < 0 || strings.Count(doc, open) != 1 {
		t.Fatalf("README.md holds %d sql blocks, want one", strings.Count(doc, open))
	}
	q := doc[i+len(open):]
	j := strings.Index(q, end)
	if j < 0 {
		t.Fatal("README.md's sql block does not end")
	}
	return q[:j]
}

// TestRunQuery runs the README's query, each run's device phases joined to
// its runner_run through the arrow and the run key, in the trace
// processor on the sample's trace, and requires exactly the rows the
// trace holds: per arrow from a runner_run, every device slice of its run
// with its start after runner_run's and its duration. It checks the
// arrows there too: each starts at a runner_run and ends at the
// device_wall of the same run, after it.
func TestRunQuery(t *testing.T) {
	sh, ok := processor.FromEnv()
	if !ok {
		t.Skipf("%s is not set: Perfetto's trace processor is not run", processor.EnvVar)
	}
	_, sum, out := convert(t, []phasetrace.Input{sampleInput(t)})
	tr, err := check.ReadBytes(out) // the slices by their labels, as the query reads them
	if err != nil {
		t.Fatal(err)
	}
	rows, err := sh.Query(out, readmeQuery(t))
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		run            int64
		name           string
		afterNs, durNs int64
	}
	runOf := func(s check.Slice) int64 {
		v, _ := argOf(s, "run")
		n, _ := v.(int64)
		return n
	}
	runner := map[int64]check.Slice{} // by run, the runner_run an arrow starts at
	for _, f := range tr.Flows {
		if s := tr.Slices[f.From]; s.Name == "runner_run" {
			runner[runOf(s)] = s
		}
	}
	var want []row
	for _, s := range tr.Slices {
		r, ok := runner[runOf(s)]
		if ok && strings.HasPrefix(s.Category, "device") {
			want = append(want, row{runOf(s), s.Name, s.TS - r.TS, s.Dur})
		}
	}
	slices.SortFunc(want, func(a, b row) int {
		return cmp.Or(cmp.Compare(a.run, b.run), cmp.Compare(a.afterNs, b.afterNs), cmp.Compare(a.name, b.name))
	})
	if int64(len(runner)) != sum.Invocations || len(want) == 0 {
		t.Fatalf("%d runs with an arrow from their runner_run, %d device slices; the sample has %d runs", len(runner), len(want), sum.Invocations)
	}
	var got []row
	for _, r := range rows[1:] {
		if len(r) != 4 {
			t.Fatalf("row %q: want run, name, after_ns, dur", r)
		}
		g := row{name: r[1]}
		_, err1 := fmt.Sscan(r[0], &g.run)
		_, err2 := fmt.Sscan(r[2], &g.afterNs)
		_, err3 := fmt.Sscan(r[3], &g.durNs)
		if err := errors.Join(err1, err2, err3); err != nil {
			t.Fatalf("row %q: %v", r, err)
		}
		got = append(got, g)
	}
	if diff := gocmp.Diff(want, got, gocmp.AllowUnexported(row{})); diff != "" {
		t.Errorf("the README's query (-want +got):\n%s", diff)
	}

	rows, err = sh.Query(out, `select count(*), sum(extract_arg(i.arg_set_id, 'debug.full_name') = 'chip.run.runner_run.device_wall' and o.ts < i.ts
	  and extract_arg(o.arg_set_id, 'debug.run') = extract_arg(i.arg_set_id, 'debug.run'))
	from flow f join slice o on o.id = f.slice_out join slice i on i.id = f.slice_in
	where extract_arg(o.arg_set_id, 'debug.full_name') = 'chip.run.runner_run';`+"\n")
	if err != nil {
		t.Fatal(err)
	}
	n := fmt.Sprint(sum.Flows[phasetrace.FlowRunToDevice])
	if len(rows) != 2 || rows[1][0] != n || rows[1][1] != n {
		t.Errorf("arrows from a runner_run, and of them those to its run's device_wall: %q; the summary says %s were drawn", rows, n)
	}
}
