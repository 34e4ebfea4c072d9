package phasetrace_test

import (
	"bytes"
	"io"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/phasetrace/phasetrace"
	"github.com/phasetrace/phasetrace/perfetto/check"
	"github.com/phasetrace/phasetrace/strace"
	"github.com/phasetrace/phasetrace/strace/stracetest"
)

// slowerBy is how much longer the measure run's sm_reset phase is than the
// base run's in the generated pair of logs.
const slowerBy = 1_000_000

// comparedLogs are a base run and a measure run of the same seed: the
// measure run a minute later on the same host, its sm_reset phase slowerBy
// longer in every run, everything else the same (its pids too).
func comparedLogs(t testing.TB) (base, measure []byte) {
	t.Helper()
	cfg := stracetest.Config{Seed: 11, Rounds: 14, AnchorPerLaunch: true, Ranks: 3}
	var b, m bytes.Buffer
	if err := stracetest.Generate(&b, cfg); err != nil {
		t.Fatal(err)
	}
	cfg.Slower = stracetest.Slower{Phase: "sm_reset", Ns: slowerBy}
	cfg.Start = 65_000_000_000
	if err := stracetest.Generate(&m, cfg); err != nil {
		t.Fatal(err)
	}
	return b.Bytes(), m.Bytes()
}

// logRuns are the chip.run roots of a log, read independently of the
// converter: per pid, in the order the log writes them.
type logRuns map[int32][]strace.Span

func readRuns(t *testing.T, log []byte) logRuns {
	t.Helper()
	rd := strace.NewReader(bytes.NewReader(log), strace.WithKinds(strace.KindSpan))
	runs := logRuns{}
	for {
		rec, err := rd.Read()
		if err == io.EOF {
			return runs
		}
		if err != nil {
			t.Fatal(err)
		}
		if sp := rec.Span; sp.Name == strace.SpanRun && sp.Depth == 0 {
			sp.Attrs = nil
			runs[sp.Pid] = append(runs[sp.Pid], sp)
		}
	}
}

// decode is the hid with the most chip.run roots, and the first one's start.
func (r logRuns) decode() (hid uint64, first int64) {
	n := map[uint64]int{}
	for _, runs := range r {
		for _, sp := range runs {
			n[sp.Hid]++
		}
	}
	for h, c := range n {
		if c > n[hid] || c == n[hid] && h < hid {
			hid = h
		}
	}
	first = -1
	for _, runs := range r {
		for _, sp := range runs {
			if sp.Hid == hid && (first < 0 || sp.TS < first) {
				first = sp.TS
			}
		}
	}
	return hid, first
}

// procOf is the process track a track is under.
func procOf(tr *check.Trace, uuid uint64) check.Track {
	for {
		tk, ok := tr.Track(uuid)
		if !ok || tk.Kind == "process" || tk.Parent == 0 {
			return tk
		}
		uuid = tk.Parent
	}
}

func TestCompare(t *testing.T) {
	t.Parallel()
	b, m := comparedLogs(t)
	var out bytes.Buffer
	sum, err := phasetrace.Compare(&out, []phasetrace.Input{phasetrace.Bytes("base.log", b)}, []phasetrace.Input{phasetrace.Bytes("measure.log", m)})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := check.ReadBytes(out.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if err := raw.Err(); err != nil {
		t.Fatalf("the trace processor would report: %v", err)
	}
	about := stripAboutCopy(raw)
	tr, _ := readTrace(out.Bytes())
	processorAgrees(t, out.Bytes(), tr, sum)
	if err := sum.Spans.Check(); err != nil {
		t.Error(err)
	}
	if n := spanSlices(tr); n != sum.Spans.Drawn || !sum.Clean() {
		t.Errorf("%d slices of spans in the trace, the summary says %d drawn; clean %v", n, sum.Spans.Drawn, sum.Clean())
	}
	c := sum.Compare
	if c == nil {
		t.Fatal("no Summary.Compare")
	}
	sideOf := comparedProcesses(t, tr, c)

	// The shift: measure's first decode chip.run starts at base's.
	baseRuns, measureRuns := readRuns(t, b), readRuns(t, m)
	hid, baseFirst := baseRuns.decode()
	mhid, measureFirst := measureRuns.decode()
	if c.Aligned != "decode" || c.BaseHid != hid || c.MeasureHid != mhid || c.BaseStart != baseFirst || c.MeasureStart != measureFirst ||
		c.ShiftNs != baseFirst-measureFirst || c.BaseShiftNs != 0 {
		t.Errorf("compare summary %+v; want decode hid %#x / %#x, starts %d / %d", c, hid, mhid, baseFirst, measureFirst)
	}
	first := map[string]int64{}
	for _, s := range tr.Slices {
		if s.Name != "chip.run" {
			continue
		}
		side := sideOf[procOf(tr, s.Track).Pid]
		if h, _ := argOf(s, "hid"); h != strconv.FormatUint(hid, 16) {
			continue
		}
		if f, ok := first[side]; !ok || s.TS < f {
			first[side] = s.TS
		}
	}
	if first["base"] != baseFirst || first["measure"] != baseFirst {
		t.Errorf("first decode chip.run: base at %d, measure at %d; want both at %d", first["base"], first["measure"], baseFirst)
	}

	pids, wantDeltas := comparedPairs(t, c, baseRuns, measureRuns, hid, mhid)
	comparedCounters(t, tr, c, sideOf, pids, wantDeltas)

	// The conversion instant says each input's side and the shift.
	args := flatArgs(about.Args)
	for k, v := range map[string]string{"inputs[0].side": "base", "inputs[1].side": "measure", "compare.shift_ns": strconv.FormatInt(c.ShiftNs, 10), "compare.aligned": "decode"} {
		if args[k] != v {
			t.Errorf("conversion instant %s = %v, want %v", k, args[k], v)
		}
	}
}

// comparedProcesses checks both sides' processes in a comparison's trace,
// named by their side, the measure side's pids (the same as base's) given
// trace pids of their own; it returns each trace pid's side.
func comparedProcesses(t *testing.T, tr *check.Trace, c *phasetrace.CompareSummary) map[int32]string {
	t.Helper()
	var procs []string
	sideOf := map[int32]string{}
	for _, tk := range tr.Tracks {
		if tk.Kind != "process" {
			continue
		}
		side, _, _ := strings.Cut(tk.Name, " · ")
		sideOf[tk.Pid] = side
		procs = append(procs, tk.Name)
	}
	slices.Sort(procs)
	want := []string{
		"base · simpler chip child (pid=4100)", "base · simpler chip child (pid=4200)", "base · simpler chip child (pid=4400)", "base · simpler node (pid=4000)",
		"measure · simpler chip child (pid=4100)", "measure · simpler chip child (pid=4200)", "measure · simpler chip child (pid=4400)", "measure · simpler node (pid=4000)",
	}
	if diff := cmp.Diff(want, procs); diff != "" {
		t.Errorf("processes (-want +got):\n%s", diff)
	}
	if len(c.Pids) != 4 {
		t.Errorf("trace pids given to the measure side: %v, want its 4 pids", c.Pids)
	}
	return sideOf
}

// comparedPairs checks a comparison's rank pairs against the logs' runs
// of the decode callable (hid in base, mhid in measure), and returns the
// base pids that run it and, by measure OS pid, the deltas its delta
// counter must hold: measure's i-th decode chip.run minus base's i-th.
func comparedPairs(t *testing.T, c *phasetrace.CompareSummary, baseRuns, measureRuns logRuns, hid, mhid uint64) ([]int32, map[int32][]int64) {
	t.Helper()
	pids := slices.Sorted(func(yield func(int32) bool) {
		for pid, runs := range baseRuns {
			if slices.ContainsFunc(runs, func(s strace.Span) bool { return s.Hid == hid }) && !yield(pid) {
				return
			}
		}
	})
	var wantPairs []phasetrace.RankPair
	wantDeltas := map[int32][]int64{} // by measure OS pid
	for _, pid := range pids {
		var bs, ms []strace.Span
		for _, s := range baseRuns[pid] {
			if s.Hid == hid {
				bs = append(bs, s)
			}
		}
		for _, s := range measureRuns[pid] {
			if s.Hid == mhid {
				ms = append(ms, s)
			}
		}
		for i := range min(len(bs), len(ms)) {
			d := ms[i].Dur - bs[i].Dur
			wantDeltas[pid] = append(wantDeltas[pid], d)
			// The device phase is slowerBy longer on the device's clock,
			// which drifts from the host's by at most 100 ppm.
			if d < slowerBy-100 || d > slowerBy+100 {
				t.Errorf("pid %d step %d: measure − base %d ns, not %d within the clocks' drift", pid, i+1, d, slowerBy)
			}
		}
		wantPairs = append(wantPairs, phasetrace.RankPair{Base: pid, Measure: pid, Deltas: int64(len(wantDeltas[pid]))})
	}
	if diff := cmp.Diff(wantPairs, c.Pairs); diff != "" {
		t.Errorf("rank pairs (-want +got):\n%s", diff)
	}
	return pids, wantDeltas
}

// comparedCounters checks a comparison's counters: the delta counter of
// each rank pair holds wantDeltas (by measure OS pid), under a measure
// process, and both sides' decode callables share a y-axis.
func comparedCounters(t *testing.T, tr *check.Trace, c *phasetrace.CompareSummary, sideOf map[int32]string, pids []int32, wantDeltas map[int32][]int64) {
	t.Helper()
	gotDeltas := map[int32][]int64{}
	shared := map[string][]string{}
	for _, tk := range tr.Tracks {
		if tk.Kind != "counter" {
			continue
		}
		if strings.HasPrefix(tk.Name, "chip.run ns · hid ") {
			shared[tk.YAxisShareKey] = append(shared[tk.YAxisShareKey], sideOf[procOf(tr, tk.UUID).Pid]+" "+tk.Name)
		}
		if tk.Name != "decode Δ ns (measure − base)" {
			continue
		}
		p := procOf(tr, tk.UUID)
		if sideOf[p.Pid] != "measure" {
			t.Errorf("delta counter under %q, not a measure process", p.Name)
		}
		os := c.Pids[0]
		for o, tp := range c.Pids {
			if tp == p.Pid {
				os = o
			}
		}
		for _, v := range tr.Counters {
			if v.Track == tk.UUID {
				gotDeltas[os] = append(gotDeltas[os], v.Int)
			}
		}
	}
	if diff := cmp.Diff(wantDeltas, gotDeltas); diff != "" {
		t.Errorf("delta counter values (-want +got):\n%s", diff)
	}
	if len(shared["chip.run ns · decode"]) != 2*len(pids) {
		t.Errorf("counter tracks by y-axis: %v; want the decode callable's of both sides on one", shared)
	}
}

// stripAboutCopy returns the conversion instant of tr, leaving tr whole.
func stripAboutCopy(tr *check.Trace) check.Slice {
	cp := *tr
	if s := stripAbout(&cp); s != nil {
		return *s
	}
	return check.Slice{}
}
