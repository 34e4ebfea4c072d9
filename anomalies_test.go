package phasetrace_test

import (
	"bytes"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/phasetrace/phasetrace"
	"github.com/phasetrace/phasetrace/perfetto/check"
	"github.com/phasetrace/phasetrace/perfetto/check/processor"
	"github.com/phasetrace/phasetrace/reduce/analysis"
	"github.com/phasetrace/phasetrace/strace"
	"github.com/phasetrace/phasetrace/strace/stracetest"
)

// TestAnomaliesTrack: twenty runs of one callable, 1 ms each but one of
// 3 ms: the anomalies track holds a "slow run" instant at that run's
// chip.run and a "cold bind" at the first run's bind, each saying why,
// and the summary counts them as the trace processor reads them.
func TestAnomaliesTrack(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	const pid = 4242
	for i := range 20 {
		ts := int64(5_000_000_000 + i*2_000_000)
		dur := int64(1_000_000 + (i%3)*1_000)
		if i == 10 {
			dur = 3_000_000
		}
		inv := uint64(i + 1)
		b.WriteString(spanLine(ts+dur/2, pid, pid, inv, 1, "chip.run.bind", ts+10, dur/4, ""))
		b.WriteString(spanLine(ts+dur, pid, pid, inv, 0, "chip.run", ts, dur, ""))
	}
	_, sum, out := convert(t, []phasetrace.Input{phasetrace.Bytes("runs.log", []byte(b.String()))})
	want := phasetrace.AnomalyCounts{SlowRuns: 1, ColdBinds: 1}
	if sum.Anomalies != want {
		t.Errorf("anomalies %+v, want %+v", sum.Anomalies, want)
	}
	tr, err := check.ReadBytes(out)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range tr.Slices {
		if s.Category != "anomaly" {
			continue
		}
		inv, _ := argOf(s, "inv")
		why, _ := argOf(s, "why")
		if why == "" {
			t.Errorf("%s at %d says no why", s.Name, s.TS)
		}
		got = append(got, s.Name+" inv="+strconv.FormatUint(inv.(uint64), 10)+" at "+strconv.FormatInt(s.TS, 10))
	}
	wantAt := []string{"cold bind inv=1 at 5000000010", "slow run inv=11 at 5020000000"}
	if diff := cmp.Diff(wantAt, got); diff != "" {
		t.Errorf("anomalies (-want +got):\n%s", diff)
	}
	var text strings.Builder
	sum.WriteText(&text)
	if !strings.Contains(text.String(), "anomalies: 1 slow run, 1 cold bind, 0 wide bounds") {
		t.Errorf("the summary does not count the anomalies:\n%s", text.String())
	}
	sh, ok := processor.FromEnv()
	if !ok {
		t.Skipf("%s is not set: Perfetto's trace processor is not run", processor.EnvVar)
	}
	rows, err := sh.Query(out, "select name, count(*) from slice where category = 'anomaly' group by name order by name;\n")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([][]string{{"name", "count(*)"}, {"cold bind", "1"}, {"slow run", "1"}}, rows); diff != "" {
		t.Errorf("the trace processor's anomalies (-want +got):\n%s", diff)
	}
}

// TestSlowRunsAreTheRule: on a realistic log where every 16th chip.run
// lasted twice as long (its root's dur doubled, so its own lane holds it),
// the slow-run instants are exactly the warm chip.run slices the rule
// calls slow against their callable's runs (analysis.Typical over the
// trace's own chip.run slices).
func TestSlowRunsAreTheRule(t *testing.T) {
	t.Parallel()
	log := slowerEvery(t, generated(stracetest.Realistic(1<<20)), 16)
	_, sum, out := convert(t, []phasetrace.Input{phasetrace.Bytes("gen.log", log)})
	tr, err := check.ReadBytes(out)
	if err != nil {
		t.Fatal(err)
	}
	typical := map[string]*analysis.Typical{}
	key := func(s check.Slice) string {
		hid, _ := argOf(s, "hid")
		return strconv.Itoa(int(pidOf(tr, s.Track))) + "/" + hid.(string)
	}
	isRun := func(s check.Slice) bool {
		depth, _ := argOf(s, "depth") // the runtime's depth, not the track's
		return s.Name == "chip.run" && depth == int64(0)
	}
	for _, s := range tr.Slices {
		if isRun(s) {
			if typical[key(s)] == nil {
				typical[key(s)] = &analysis.Typical{}
			}
			typical[key(s)].Add(s.Dur)
		}
	}
	want := map[string]bool{}
	for _, s := range tr.Slices {
		if _, cold := argOf(s, "cold"); isRun(s) && !cold && typical[key(s)].Slow(s.Dur) {
			inv, _ := argOf(s, "inv")
			want[strconv.FormatUint(inv.(uint64), 10)+"@"+strconv.FormatInt(s.TS, 10)] = true
		}
	}
	got := map[string]bool{}
	for _, s := range tr.Slices {
		if s.Name == "slow run" {
			inv, _ := argOf(s, "inv")
			got[strconv.FormatUint(inv.(uint64), 10)+"@"+strconv.FormatInt(s.TS, 10)] = true
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("slow runs (-rule +trace):\n%s", diff)
	}
	if len(got) == 0 {
		t.Error("no slow run in a log with runs twice as long")
	}
	if int64(len(got)) != sum.Anomalies.SlowRuns {
		t.Errorf("%d slow runs in the trace, the summary says %d", len(got), sum.Anomalies.SlowRuns)
	}
}

// TestStepTimeAroundTheMedian: each callable run more than once has a
// second step-time counter, its runs' durations less the callable's
// median (analysis.Typical over the same runs), one value at each run's
// start; the trace processor reads as many values.
func TestStepTimeAroundTheMedian(t *testing.T) {
	t.Parallel()
	log := generated(stracetest.Realistic(1 << 20))
	_, sum, out := convert(t, []phasetrace.Input{phasetrace.Bytes("gen.log", log)})
	tr, err := check.ReadBytes(out)
	if err != nil {
		t.Fatal(err)
	}
	typical := map[string]*analysis.Typical{}
	type run struct{ ts, dur int64 }
	runs := map[string][]run{}
	for _, s := range tr.Slices {
		if depth, _ := argOf(s, "depth"); s.Name != "chip.run" || depth != int64(0) { // the runtime's depth, not the track's
			continue
		}
		hid, _ := argOf(s, "hid")
		k := strconv.Itoa(int(pidOf(tr, s.Track))) + " " + hid.(string)
		if typical[k] == nil {
			typical[k] = &analysis.Typical{}
		}
		typical[k].Add(s.Dur)
		runs[k] = append(runs[k], run{s.TS, s.Dur})
	}
	want := map[string]int64{} // "pid hid ts" → value
	for k, rs := range runs {
		if len(rs) < 2 {
			continue
		}
		for _, r := range rs {
			want[k+" "+strconv.FormatInt(r.ts, 10)] = r.dur - typical[k].Median()
		}
	}
	got := map[string]int64{}
	for _, c := range tr.Counters {
		track, _ := tr.Track(c.Track)
		hid, ok := strings.CutPrefix(track.Name, "chip.run − median ns · hid 0x")
		if !ok {
			continue
		}
		got[strconv.Itoa(int(pidOf(tr, c.Track)))+" "+hid+" "+strconv.FormatInt(c.TS, 10)] = c.Int
	}
	if len(want) == 0 {
		t.Fatal("no callable run twice")
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("step time less the median (-want +got):\n%s", diff)
	}
	sh, ok := processor.FromEnv()
	if !ok {
		t.Skipf("%s is not set: Perfetto's trace processor is not run", processor.EnvVar)
	}
	rows, err := sh.Query(out, "select count(*) from counter join counter_track t on counter.track_id = t.id where t.name glob 'chip.run − median ns*';\n")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[1][0] != strconv.Itoa(len(got)) {
		t.Errorf("the trace processor reads %q values, want %d (summary: %d counter values in all)", rows, len(want), sum.Output.Counters)
	}
}

// slowerEvery doubles the dur of every n-th chip.run root of log.
func slowerEvery(t *testing.T, log []byte, n int) []byte {
	t.Helper()
	var out bytes.Buffer
	r := strace.NewReader(bytes.NewReader(log))
	k := 0
	for {
		rec, err := r.Read()
		if err == io.EOF {
			return out.Bytes()
		}
		if err != nil {
			t.Fatal(err)
		}
		if rec.Kind == strace.KindSpan && rec.Span.Name == "chip.run" && rec.Span.Depth == 0 {
			if k++; k%n == 0 {
				rec.Span.Dur *= 2
			}
		}
		line, err := strace.AppendRecord(nil, &rec)
		if err != nil {
			t.Fatal(err)
		}
		out.Write(line)
	}
}
