package phasetrace_test

import (
	"io"

	"github.com/google/go-cmp/cmp"
	"strconv"
	"testing"

	"github.com/phasetrace/phasetrace"
	"github.com/phasetrace/phasetrace/perfetto"
	"github.com/phasetrace/phasetrace/perfetto/check"
	"github.com/phasetrace/phasetrace/perfetto/check/processor"
	"github.com/phasetrace/phasetrace/strace"
)

// TestWallTimeInTheUI: the UI takes a trace's wall-clock offset from the
// REALTIME row of clock snapshot 0 alone (its trace-loading query, run
// here), and to_realtime() clamps an instant before the first snapshot
// that has REALTIME to that snapshot. The first snapshot carries the wall
// clock of the earliest wall-clock anchor, extrapolated to the trace's
// start: the offset is the anchor's, and the first slice reads the wall
// time the anchor gives it.
func TestWallTimeInTheUI(t *testing.T) {
	t.Parallel()
	sh, ok := processor.FromEnv()
	if !ok {
		t.Skipf("%s is not set: Perfetto's trace processor is not run", processor.EnvVar)
	}
	in := sampleInput(t)
	_, sum, out := convert(t, []phasetrace.Input{in})
	if !sum.WallTime {
		t.Fatal("the sample's wall time is not known")
	}
	// The sample's anchor of least mono (they agree).
	var first *strace.WallAnchor
	for _, rec := range readGenerated(t, mustRead(t, in)).recs {
		if rec.Kind == strace.KindWallAnchor && (first == nil || rec.WallAnchor.MonoNS < first.MonoNS) {
			w := rec.WallAnchor
			first = &w
		}
	}
	offset := first.WallNS - first.MonoNS
	rows, err := sh.Query(out, "select ts, clock_value from clock_snapshot where snapshot_id = 0 and clock_name = 'REALTIME';\n")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 {
		t.Fatalf("snapshot 0 has no REALTIME row: %q", rows)
	}
	ts, err1 := strconv.ParseInt(rows[1][0], 10, 64)
	v, err2 := strconv.ParseInt(rows[1][1], 10, 64)
	if err1 != nil || err2 != nil || v-ts != offset {
		t.Errorf("snapshot 0: REALTIME %q at ts %q, offset %d; want the anchor's %d", rows[1][1], rows[1][0], v-ts, offset)
	}
	rows, err = sh.Query(out, "select ts, to_realtime(ts) from slice order by ts limit 1;\n")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 {
		t.Fatalf("no slice: %q", rows)
	}
	ts, err1 = strconv.ParseInt(rows[1][0], 10, 64)
	rt, err2 := strconv.ParseInt(rows[1][1], 10, 64)
	if err1 != nil || err2 != nil || rt != ts+offset {
		t.Errorf("the first slice at %q reads wall time %q, want %d (the anchor extrapolated)", rows[1][0], rows[1][1], ts+offset)
	}
	if ts >= first.MonoNS {
		t.Errorf("the first slice (%d) is not before the anchor (%d): the test shows nothing", ts, first.MonoNS)
	}
}

func mustRead(t *testing.T, in phasetrace.Input) []byte {
	t.Helper()
	rc, err := in.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestPipelineLanesKeepTheirThread: a pipelined thread's slot lanes are
// children of its thread's track, so the trace processor gives their
// slices the thread: every lane is a thread track of that tid, and every
// slice on them is found through thread (what SQL over thread_track and
// the thread_slice of slices.with_context sees).
func TestPipelineLanesKeepTheirThread(t *testing.T) {
	t.Parallel()
	sh, ok := processor.FromEnv()
	if !ok {
		t.Skipf("%s is not set: Perfetto's trace processor is not run", processor.EnvVar)
	}
	_, _, out := convert(t, []phasetrace.Input{sampleInput(t)})
	rows, err := sh.Query(out, `include perfetto module slices.with_context;
select
  (select count(*) from track where name like 'pipeline slot %'),
  (select count(*) from thread_track tt join thread using(utid) where tt.name like 'pipeline slot %' and thread.tid = 4100),
  (select count(*) from slice s join track t on s.track_id = t.id where t.name like 'pipeline slot %'),
  (select count(*) from thread_slice where tid = 4100);
`)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || len(rows[1]) != 4 {
		t.Fatalf("the trace processor printed %q", rows)
	}
	lanes, threadLanes, onLanes, threadSlices := rows[1][0], rows[1][1], rows[1][2], rows[1][3]
	if lanes == "0" || threadLanes != lanes {
		t.Errorf("%s pipeline lanes, %s of them thread tracks of tid 4100: want every one", lanes, threadLanes)
	}
	if n, _ := strconv.Atoi(threadSlices); onLanes == "0" || n < mustAtoi(t, onLanes) {
		t.Errorf("%s slices on the lanes, %s found through thread_slice: want every one", onLanes, threadSlices)
	}
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("%q is not a number", s)
	}
	return n
}

// TestCategoriesOnEverySlice: every slice carries a category of the
// converter's vocabulary, and the trace processor reads each category on
// as many slices as perfetto/check does.
func TestCategoriesOnEverySlice(t *testing.T) {
	t.Parallel()
	_, _, out := convert(t, []phasetrace.Input{sampleInput(t)})
	tr, err := check.ReadBytes(out)
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{"host": true, "bind": true, "device": true, "device,derived": true, "node": true, "ext": true, "overview": true, "phasetrace": true, "anomaly": true}
	want := map[string]int{}
	for _, s := range tr.Slices {
		if !known[s.Category] {
			t.Errorf("%s at %d: category %q", s.Name, s.TS, s.Category)
		}
		want[s.Category]++
	}
	sh, ok := processor.FromEnv()
	if !ok {
		t.Skipf("%s is not set: Perfetto's trace processor is not run", processor.EnvVar)
	}
	rows, err := sh.Query(out, "select ifnull(category, ''), count(*) from slice group by 1;\n")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, r := range rows[1:] {
		got[r[0]] = mustAtoi(t, r[1])
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("slices by category (-check +trace processor):\n%s", diff)
	}
}

// TestRanksWhereTheUIReadsThem: a track carries a sibling rank only where
// its parent orders its children by rank (the UI reads it nowhere else
// below a process): a device group under its process has none.
func TestRanksWhereTheUIReadsThem(t *testing.T) {
	t.Parallel()
	tr, _, _ := convert(t, []phasetrace.Input{sampleInput(t)})
	for _, tk := range tr.Tracks {
		if tk.Rank == 0 {
			continue
		}
		parent, ok := tr.Track(tk.Parent)
		if !ok || parent.ChildOrder != int32(perfetto.ChildOrderExplicit) {
			t.Errorf("track %q has rank %d under %q (child order %d), which does not order by rank", tk.Name, tk.Rank, parent.Name, parent.ChildOrder)
		}
	}
}

// TestCallableCountersShareAnAxisInTheUI: the UI (v58.2, its TrackEvent
// plugin) draws a counter track on the y-range it shares with every track
// of the same "trackEvent-<parent_id>-<y_axis_share_key>", read from
// viz.summary.track_event's _track_event_tracks_ordered_groups; a counter
// track under a process has no parent_id there. A callable's tracks in
// every process it ran in get one such key, each callable its own.
func TestCallableCountersShareAnAxisInTheUI(t *testing.T) {
	t.Parallel()
	sh, ok := processor.FromEnv()
	if !ok {
		t.Skipf("%s is not set: Perfetto's trace processor is not run", processor.EnvVar)
	}
	_, _, out := convert(t, []phasetrace.Input{sampleInput(t)})
	rows, err := sh.Query(out, `include perfetto module viz.summary.track_event;
select name, count(*), count(distinct upid), group_concat(distinct 'trackEvent-' || ifnull(parent_id, 'null') || '-' || y_axis_share_key)
from _track_event_tracks_ordered_groups
where is_counter and name glob 'chip.run ns · hid 0x*'
group by name order by name;
`)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][3]string{}
	for _, r := range rows[1:] {
		got[r[0]] = [3]string{r[1], r[2], r[3]}
	}
	want := map[string][3]string{}
	for _, hid := range []string{"0x51a7c0de42f00d17", "0x9f3c2a11d00db1e5"} { // the sample's callables, each run on both ranks
		name := "chip.run ns · hid " + hid
		want[name] = [3]string{"2", "2", "trackEvent-null-" + name}
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("the callables' counter tracks as the UI groups them (-want +got: tracks, processes, y-range keys):\n%s", d)
	}
}

// TestCallableRunOnceCounterEnds: the UI draws a counter's last value to
// the end of the trace, so a callable run once in a process gets a second
// value, 0, at its run's end. Read with the UI's own query of a counter
// track (its counter mipmap over the whole trace), the track holds the
// run's duration from the start of its chip.run to its end, then 0 (in
// buckets of a 2048th of the trace, as on a screen 1024 pixels wide); a
// callable run more than once has no 0.
func TestCallableRunOnceCounterEnds(t *testing.T) {
	t.Parallel()
	sh, ok := processor.FromEnv()
	if !ok {
		t.Skipf("%s is not set: Perfetto's trace processor is not run", processor.EnvVar)
	}
	_, _, out := convert(t, []phasetrace.Input{sampleInput(t)})
	tracks, err := sh.Query(out, `include perfetto module slices.with_context;
with callable as (
  select t.id, pt.upid, substr(t.name, length('chip.run ns · hid 0x') + 1) as hid
  from counter_track t join process_counter_track pt using(id) where t.name glob 'chip.run ns · hid 0x*'
)
select id, upid, hid,
  (select count(*) from thread_slice s where s.upid = callable.upid
    and extract_arg(s.arg_set_id, 'debug.full_name') = 'chip.run' and extract_arg(s.arg_set_id, 'debug.hid') = hid),
  (select count(*) from counter c where c.track_id = callable.id and c.value = 0)
from callable order by id;
`)
	if err != nil {
		t.Fatal(err)
	}
	once := 0
	for _, tk := range tracks[1:] {
		id, upid, hid, runs, zeros := tk[0], tk[1], tk[2], tk[3], tk[4]
		if runs != "1" {
			if zeros != "0" {
				t.Errorf("track %s (hid %s) of %s runs has %s zeros: want none for a callable run more than once", id, hid, runs, zeros)
			}
			continue
		}
		once++
		rows, err := sh.Query(out, `include perfetto module slices.with_context;
create virtual table ui using __intrinsic_counter_mipmap((select ts, value from counter where track_id = `+id+`));
select
  (select group_concat(last_ts || ' ' || cast(last_value as int), ', ') from (select * from ui(trace_start(), trace_end() + 1, trace_dur() / 2048 + 1) order by last_ts)),
  (select group_concat(ts || ' ' || dur || ', ' || (ts + dur) || ' 0') from thread_slice
   where upid = `+upid+` and extract_arg(arg_set_id, 'debug.full_name') = 'chip.run' and extract_arg(arg_set_id, 'debug.hid') = '`+hid+`');
`)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 2 || len(rows[1]) != 2 || rows[1][0] != rows[1][1] || rows[1][0] == "" {
			t.Fatalf("track %s (hid %s): the UI reads and the run wants %q: want its run's duration at its start, then 0 at its end", id, hid, rows[1:])
		}
	}
	if once == 0 {
		t.Error("no callable run once: the test shows nothing")
	}
}
