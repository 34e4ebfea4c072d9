package phasetrace_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/phasetrace/phasetrace"
	"github.com/phasetrace/phasetrace/perfetto/check"
	"github.com/phasetrace/phasetrace/perfetto/check/processor"
	"github.com/phasetrace/phasetrace/reduce/analysis"
	"github.com/phasetrace/phasetrace/strace/stracetest"
)

// TestAnomaliesTrack: twenty runs of one callable, 1 ms each but one of
// 3 ms: the anomalies track holds a "slow run" instant at that run's
// chip.run and a "cold bind" at the first run's bind, each saying why,
// and the summary counts them as the trace processor reads them.
func TestAnomaliesTrack(t *testing.T) {
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

// TestSlowRunsAreTheRule: on a realistic log, the slow-run instants are
// exactly the warm chip.run slices the rule calls slow against their
// callable's runs (analysis.Typical over the trace's own chip.run slices).
func TestSlowRunsAreTheRule(t *testing.T) {
	log := generated(stracetest.Realistic(1 << 20))
	_, sum, out := convert(t, []phasetrace.Input{phasetrace.Bytes("gen.log", log)})
	tr, err := check.ReadBytes(out)
	if err != nil {
		t.Fatal(err)
	}
	typical := map[string]*analysis.Typical{}
	key := func(s check.Slice) string {
		hid, _ := argOf(s, "hid")
		t, _ := tr.Track(s.Track)
		return strconv.Itoa(int(t.Pid)) + "/" + hid.(string)
	}
	for _, s := range tr.Slices {
		if s.Name == "chip.run" && s.Depth == 0 {
			if typical[key(s)] == nil {
				typical[key(s)] = &analysis.Typical{}
			}
			typical[key(s)].Add(s.Dur)
		}
	}
	want := map[string]bool{}
	for _, s := range tr.Slices {
		if _, cold := argOf(s, "cold"); s.Name == "chip.run" && s.Depth == 0 && !cold && typical[key(s)].Slow(s.Dur) {
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
	if int64(len(got)) != sum.Anomalies.SlowRuns {
		t.Errorf("%d slow runs in the trace, the summary says %d", len(got), sum.Anomalies.SlowRuns)
	}
}
