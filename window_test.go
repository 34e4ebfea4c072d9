package phasetrace_test

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/phasetrace/phasetrace"
	"github.com/phasetrace/phasetrace/perfetto/check"
	"github.com/phasetrace/phasetrace/perfetto/check/processor"
	"github.com/phasetrace/phasetrace/strace/stracetest"
)

// windowCase is a window and what it is for.
type windowCase struct {
	name string
	w    phasetrace.Window
}

// TestWindowDrawsTheSlicesThatMeetIt converts a generated log (two ranks,
// one pipelined, device phases, hand-offs, legacy bind lines, an external
// producer, host_phase_records) whole and through windows — cutting
// through runs, on a slice's edges, empty, the whole log — and requires
// each window's trace to hold exactly the whole trace's slices that meet
// it (the closed slice [ts, ts+dur] meets [A, B) when ts < B and ts+dur >=
// A) on the same tracks with the same arguments, exactly its arrows with
// both ends drawn, no track without a slice on it or under it, and an
// account that adds up: every span drawn or outside the window, nothing
// lost.
func TestWindowDrawsTheSlicesThatMeetIt(t *testing.T) {
	t.Parallel()
	log := generated(stracetest.Realistic(400 << 10))
	logs := []phasetrace.Input{phasetrace.Bytes("run.log", log)}
	full0, _, _ := convert(t, logs)
	records := phasetrace.WithPhaseRecords(phasetrace.Bytes("host_phase_records.jsonl", windowRecords(t, full0)))
	full, fullSum, fullOut := convert(t, logs, records)
	if len(fullSum.Spans.NotDrawn) != 0 || len(fullSum.Moved) != 0 || !fullSum.Clean() {
		t.Fatalf("the whole log does not convert clean: %+v %v %v %+v", fullSum.Spans, fullSum.NotDrawn, fullSum.Moved, fullSum.Inputs)
	}
	first, lo, hi := bounds(full)
	runs := slicesNamed(full, "chip.run")
	cut := func(i int) int64 { r := runs[i*len(runs)/10]; return r.TS + r.Dur/2 } // inside a run
	edge := runs[len(runs)/2]
	cases := []windowCase{
		{"cuts through runs", phasetrace.Window{Start: cut(3), End: cut(4)}},
		{"cuts through one run", phasetrace.Window{Start: cut(6), End: cut(6) + 1}},
		{"from a run's end to another's start", phasetrace.Window{Start: edge.TS + edge.Dur, End: runs[len(runs)/2+3].TS}},
		{"open start", phasetrace.Window{NoStart: true, End: cut(2)}},
		{"open end", phasetrace.Window{Start: cut(8), NoEnd: true}},
		{"after the first slice", phasetrace.Window{Start: int64(300 * time.Millisecond), End: int64(700 * time.Millisecond), StartFromFirst: true, EndFromFirst: true}},
		{"empty: before", phasetrace.Window{Start: lo - 100, End: lo - 1}},
		{"empty: after", phasetrace.Window{Start: hi + 1, End: hi + 100}},
		{"empty: no length", phasetrace.Window{Start: cut(5), End: cut(5)}},
		{"whole log", phasetrace.Window{Start: lo, End: hi + 1}},
		{"whole log, open", phasetrace.Window{NoStart: true, NoEnd: true}},
	}
	seen := phasetrace.ReasonCounts{} // what the windows left out, over all
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr, sum, out := convert(t, logs, records, phasetrace.WithWindowOf(c.w))
			for r, n := range sum.NotDrawn {
				seen[r] += n
			}
			if c.name == "cuts through runs" && (len(tr.Slices) == 0 || len(tr.Flows) == 0) {
				t.Errorf("%d slices, %d arrows: the window misses the log", len(tr.Slices), len(tr.Flows))
			}
			a, b := c.w.Start, c.w.End
			if c.w.StartFromFirst {
				a += first
			}
			if c.w.EndFromFirst {
				b += first
			}
			if c.w.NoStart {
				a = math.MinInt64
			}
			if c.w.NoEnd {
				b = math.MaxInt64
			}
			meets := func(s check.Slice) bool { return s.TS < b && s.TS+s.Dur >= a }
			want, got := sliceSet(full, meets), sliceSet(tr, nil)
			if diff := quickDiff(want, got); diff != "" {
				t.Errorf("the window's slices differ from the whole trace's that meet [%d, %d) (-want +got):\n%s", a, b, diff)
			}
			if diff := quickDiff(flowSet(full, meets), flowSet(tr, nil)); diff != "" {
				t.Errorf("the window's arrows differ from the whole trace's with both ends in it (-want +got):\n%s", diff)
			}
			if diff := quickDiff(counterSet(full, a, b), counterSet(tr, math.MinInt64, math.MaxInt64)); diff != "" {
				t.Errorf("the window's counter values differ from the whole trace's in [%d, %d) (-want +got):\n%s", a, b, diff)
			}
			if n := arrows(sum); n != int64(len(tr.Flows)) {
				t.Errorf("the summary says %d arrows, the trace holds %d", n, len(tr.Flows))
			}
			if n, m := handOffs(sum), handOffs(fullSum); n != m {
				t.Errorf("%d hand-offs drawn or counted without an arrow (%v, %v), the whole log %d", n, sum.Flows, sum.Unlinked, m)
			}
			if bare := tracksWithout(tr); len(bare) > 0 {
				t.Errorf("tracks with nothing drawn on them: %q", bare)
			}
			if err := sum.Spans.Check(); err != nil {
				t.Error(err)
			}
			outside := sum.Spans.NotDrawn[phasetrace.ReasonOutsideWindow]
			if n := spanSlices(tr); n != sum.Spans.Drawn || sum.Spans.Drawn+outside != fullSum.Spans.Drawn || len(sum.Spans.NotDrawn) > 1 {
				t.Errorf("%d span slices; the summary says %d drawn, %v not drawn; the whole log %d drawn", n, sum.Spans.Drawn, sum.Spans.NotDrawn, fullSum.Spans.Drawn)
			}
			if !sum.Clean() {
				t.Error("a window is not clean")
			}
			if c.name == "whole log" || c.name == "whole log, open" {
				if !bytes.Equal(out, fullOut) {
					t.Error("a window holding the whole log does not give the whole trace's bytes")
				}
			}
			processorAgrees(t, out, tr, sum)
			processorCountsTheWindow(t, fullOut, out, a, b)
		})
	}
	for _, r := range []phasetrace.Reason{phasetrace.ReasonBindPhaseOutsideWindow, phasetrace.ReasonHostPhaseOutsideWindow, phasetrace.ReasonEffectiveOutsideWindow} {
		if seen[r] == 0 {
			t.Errorf("no window left out %s: the test misses them", r.Text())
		}
	}
}

// TestWindowFromStart: a window after the first slice is the window of the
// same trace times, byte for byte; the first slice is the earliest start
// of a host span.
func TestWindowFromStart(t *testing.T) {
	t.Parallel()
	logs := []phasetrace.Input{phasetrace.Bytes("run.log", generated(stracetest.Realistic(100<<10)))}
	full, _, _ := convert(t, logs)
	first, _, _ := bounds(full)
	_, sum, rel := convert(t, logs, phasetrace.WithWindowFromStart(100*time.Millisecond, 250*time.Millisecond))
	want := &phasetrace.WindowSummary{Start: first + 100_000_000, End: first + 250_000_000, FirstSlice: first}
	if diff := cmp.Diff(want, sum.Window); diff != "" {
		t.Errorf("Summary.Window (-want +got):\n%s", diff)
	}
	checkSummaryJSON(t, sum)
	var text strings.Builder
	sum.WriteText(&text)
	if w := fmt.Sprintf("window [%d, %d) ns, the first slice at %d ns", want.Start, want.End, first); !strings.Contains(text.String(), w) {
		t.Errorf("the summary does not say %q:\n%s", w, text.String())
	}
	_, _, abs := convert(t, logs, phasetrace.WithWindow(first+100_000_000, first+250_000_000))
	if !bytes.Equal(rel, abs) {
		t.Error("WithWindowFromStart differs from WithWindow at the same trace times")
	}
	w, err := phasetrace.ParseWindow("100ms:250ms")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, parsed := convert(t, logs, phasetrace.WithWindowOf(w)); !bytes.Equal(parsed, abs) {
		t.Error("ParseWindow(\"100ms:250ms\") differs from WithWindowFromStart")
	}
}

func TestParseWindow(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   string
		want phasetrace.Window
	}{
		{"12.5s:14s", phasetrace.Window{Start: 12_500_000_000, End: 14_000_000_000, StartFromFirst: true, EndFromFirst: true}},
		{"500ms:1.2s", phasetrace.Window{Start: 500_000_000, End: 1_200_000_000, StartFromFirst: true, EndFromFirst: true}},
		{":14s", phasetrace.Window{NoStart: true, End: 14_000_000_000, EndFromFirst: true}},
		{"12s:", phasetrace.Window{Start: 12_000_000_000, StartFromFirst: true, NoEnd: true}},
		{"1000:2000", phasetrace.Window{Start: 1000, End: 2000}},
		{"-5:1m", phasetrace.Window{Start: -5, End: 60_000_000_000, EndFromFirst: true}},
		{":", phasetrace.Window{NoStart: true, NoEnd: true}},
	} {
		got, err := phasetrace.ParseWindow(c.in)
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("%q (-want +got):\n%s", c.in, diff)
		}
		if back, err := phasetrace.ParseWindow(got.String()); err != nil || back != got {
			t.Errorf("%q: String %q reads back as %+v, %v", c.in, got.String(), back, err)
		}
	}
	for _, bad := range []string{"", "12s", "1s:2s:3s", "a:b", "1x:2s", "12,5s:14s"} {
		if _, err := phasetrace.ParseWindow(bad); !errors.Is(err, phasetrace.ErrWindowSyntax) || errors.Is(err, phasetrace.ErrWindowEmpty) {
			t.Errorf("%q: %v, want ErrWindowSyntax", bad, err)
		}
	}
	// Bounds that count alike and hold no time: an empty window.
	for _, empty := range []string{"2s:1s", "5s:5s", "2000:1000", "7:7", "-1:-1"} {
		if _, err := phasetrace.ParseWindow(empty); !errors.Is(err, phasetrace.ErrWindowSyntax) || !errors.Is(err, phasetrace.ErrWindowEmpty) {
			t.Errorf("%q: %v, want ErrWindowEmpty", empty, err)
		}
	}
}

// handOffs counts the hand-offs a summary accounts for: the arrows drawn
// and those counted without one.
func handOffs(sum *phasetrace.Summary) int64 {
	n := arrows(sum)
	for _, v := range sum.Unlinked {
		n += v
	}
	return n
}

// bounds returns the earliest start of a host span of a trace (not a
// device phase, a derived slice or a bind line: the first slice a window
// counts from), and the earliest start and the latest end of its slices.
func bounds(tr *check.Trace) (first, lo, hi int64) {
	first, lo, hi = math.MaxInt64, math.MaxInt64, math.MinInt64
	for _, s := range tr.Slices {
		lo, hi = min(lo, s.TS), max(hi, s.TS+s.Dur)
		if _, dev := argOf(s, "device_ts"); isSpanSlice(s) && !dev {
			first = min(first, s.TS)
		}
	}
	return first, lo, hi
}

func slicesNamed(tr *check.Trace, name string) []check.Slice {
	var out []check.Slice
	for _, s := range tr.Slices {
		if s.Name == name {
			out = append(out, s)
		}
	}
	return out
}

// windowRecords is a host_phase_records artifact for every third bind of
// the whole trace: its first segment as the log has it, and an
// orchestrator operation recorded on a worker thread of its own.
func windowRecords(t *testing.T, tr *check.Trace) []byte {
	t.Helper()
	var b strings.Builder
	for i, s := range slicesNamed(tr, "chip.run.bind") {
		if i%3 != 0 {
			continue
		}
		var seg *check.Slice
		for j := range tr.Slices {
			c := &tr.Slices[j]
			if c.Track == s.Track && c.Depth == s.Depth+1 && c.TS >= s.TS && c.TS+c.Dur <= s.TS+s.Dur && strings.HasPrefix(c.Name, "chip.run.bind.") {
				seg = c
				break
			}
		}
		if seg == nil {
			continue
		}
		inv, _ := argOf(s, "inv")
		tk, _ := tr.Track(s.Track)
		for tk.Pid == 0 && tk.Parent != 0 { // a lane: its process's pid
			tk, _ = tr.Track(tk.Parent)
		}
		fmt.Fprintf(&b, `{"pid": %d, "inv": %v, "clock": "host_monotonic_ns", "dropped": 0, "records": [`+
			`{"phase": %q, "start_ns": %d, "end_ns": %d}, {"phase": "record_node", "start_ns": %d, "end_ns": %d, "tid": 9999}]}`+"\n",
			tk.Pid, inv, strings.TrimPrefix(seg.Name, "chip.run.bind."), seg.TS, seg.TS+seg.Dur, s.TS+s.Dur/2, s.TS+s.Dur)
	}
	if b.Len() == 0 {
		t.Fatal("no bind to record")
	}
	return []byte(b.String())
}

// trackPath names a track by its path from the top: kinds, pids, tids and
// names.
func trackPath(tr *check.Trace, uuid uint64) string {
	var parts []string
	for uuid != 0 {
		tk, ok := tr.Track(uuid)
		if !ok {
			return "?" + strings.Join(parts, "/")
		}
		parts = append([]string{fmt.Sprintf("%s %d/%d %s", tk.Kind, tk.Pid, tk.Tid, tk.Name)}, parts...)
		uuid = tk.Parent
		if uuid == 0 && tk.Kind == "thread" {
			parts = append([]string{fmt.Sprintf("process %d", tk.Pid)}, parts...)
		}
	}
	return strings.Join(parts, "/")
}

// sliceKey is what a slice is, wherever it is in the file: its track's
// path, name, time, depth and arguments.
func sliceKey(tr *check.Trace, s check.Slice) string {
	return fmt.Sprintf("%s | %s [%d +%d] depth %d %v", trackPath(tr, s.Track), s.Name, s.TS, s.Dur, s.Depth, s.Args)
}

// sliceSet is the multiset of the slices keep keeps (nil: all).
func sliceSet(tr *check.Trace, keep func(check.Slice) bool) map[string]int {
	m := map[string]int{}
	for _, s := range tr.Slices {
		if keep == nil || keep(s) {
			m[sliceKey(tr, s)]++
		}
	}
	return m
}

// counterSet is the multiset of the counter values whose time is in
// [a, b), by their track's path, time and value.
func counterSet(tr *check.Trace, a, b int64) map[string]int {
	m := map[string]int{}
	for _, c := range tr.Counters {
		if a <= c.TS && c.TS < b {
			m[fmt.Sprintf("%s @%d = %d", trackPath(tr, c.Track), c.TS, c.Int)]++
		}
	}
	return m
}

// flowSet is the multiset of the arrows both of whose ends keep keeps
// (nil: all), by their ends.
func flowSet(tr *check.Trace, keep func(check.Slice) bool) map[string]int {
	m := map[string]int{}
	for _, f := range tr.Flows {
		from, to := tr.Slices[f.From], tr.Slices[f.To]
		if keep == nil || keep(from) && keep(to) {
			m[sliceKey(tr, from)+" → "+sliceKey(tr, to)]++
		}
	}
	return m
}

// tracksWithout lists the tracks with no slice or counter value on them
// or on a track under them.
func tracksWithout(tr *check.Trace) []string {
	used := map[uint64]bool{}
	holds := func(track uint64) {
		for u := track; u != 0 && !used[u]; {
			used[u] = true
			tk, _ := tr.Track(u)
			u = tk.Parent
			if u == 0 && tk.Kind == "thread" {
				for _, p := range tr.Tracks {
					if p.Kind == "process" && p.Pid == tk.Pid {
						used[p.UUID] = true
					}
				}
			}
		}
	}
	for _, s := range tr.Slices {
		holds(s.Track)
	}
	for _, c := range tr.Counters {
		holds(c.Track)
	}
	var bare []string
	for _, tk := range tr.Tracks {
		if !used[tk.UUID] {
			bare = append(bare, trackPath(tr, tk.UUID))
		}
	}
	return bare
}

// processorCountsTheWindow asks Perfetto's trace processor, when
// PHASETRACE_TRACE_PROCESSOR names it, how many slices of the whole trace
// meet [a, b) and how many the window's trace holds: the same.
func processorCountsTheWindow(t *testing.T, full, window []byte, a, b int64) {
	t.Helper()
	sh, ok := processor.FromEnv()
	if !ok {
		return
	}
	// Each trace has its own conversion instant besides the slices drawn.
	meet := "select count(*) as n from slice where category != 'phasetrace' and ts < " + strconv.FormatInt(b, 10) + " and ts + dur >= " + strconv.FormatInt(a, 10)
	if w, f := processorCount(t, sh.Path, window, "select count(*) as n from slice where category != 'phasetrace'"), processorCount(t, sh.Path, full, meet); w != f {
		t.Errorf("the trace processor reads %d slices in the window's trace, %d in the whole trace that meet [%d, %d)", w, f, a, b)
	}
}

// processorCount runs a query whose one row is one integer.
func processorCount(t *testing.T, shell string, trace []byte, query string) int64 {
	t.Helper()
	dir := t.TempDir()
	tp, qp := filepath.Join(dir, "trace.pftrace"), filepath.Join(dir, "q.sql")
	if err := os.WriteFile(tp, trace, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(qp, []byte(query+";\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(shell, "-q", qp, tp).Output()
	if err != nil {
		t.Fatalf("trace processor: %v", err)
	}
	lines := strings.Fields(string(out))
	n, err := strconv.ParseInt(lines[len(lines)-1], 10, 64)
	if err != nil {
		t.Fatalf("trace processor printed %q", out)
	}
	return n
}

// TestWindowAcrossMachines: the logs of several machines through windows
// cutting through their tasks: the window's trace holds exactly the whole
// trace's slices that meet it, and its arrows across machines those with
// both ends drawn, none dangling.
func TestWindowAcrossMachines(t *testing.T) {
	t.Parallel()
	logs, _ := stracetest.GenerateRemote(remoteScenarios[0].cfg)
	in := remoteInputs(logs)
	full, fullSum, _ := convert(t, in)
	_, lo, hi := bounds(full)
	// Windows that cut arrows of each kind: one that begins at an arrow's
	// end, one that ends just past its start.
	type win struct{ a, b int64 }
	var wins []win
	kinds := map[string]bool{}
	for _, f := range full.Flows[len(full.Flows)/3:] {
		from, to := full.Slices[f.From], full.Slices[f.To]
		if k := from.Name + " → " + to.Name; !kinds[k] && from.TS+from.Dur < to.TS {
			kinds[k] = true
			wins = append(wins, win{to.TS, hi + 1}, win{lo, from.TS + 1}, win{from.TS, to.TS})
		}
	}
	if len(kinds) < 3 {
		t.Fatalf("arrows of %d kinds to cut: %v", len(kinds), kinds)
	}
	for _, w := range wins {
		a, b := w.a, w.b
		tr, sum, _ := convert(t, in, phasetrace.WithWindow(a, b))
		meets := func(s check.Slice) bool { return s.TS < b && s.TS+s.Dur >= a }
		if diff := quickDiff(sliceSet(full, meets), sliceSet(tr, nil)); diff != "" {
			t.Errorf("[%d, %d): the slices differ (-want +got):\n%s", a, b, diff)
		}
		if diff := quickDiff(flowSet(full, meets), flowSet(tr, nil)); diff != "" {
			t.Errorf("[%d, %d): the arrows differ (-want +got):\n%s", a, b, diff)
		}
		if bare := tracksWithout(tr); len(bare) > 0 {
			t.Errorf("[%d, %d): tracks with nothing drawn on them: %q", a, b, bare)
		}
		if n, m := handOffs(sum), handOffs(fullSum); n != m || arrows(sum) != int64(len(tr.Flows)) {
			t.Errorf("[%d, %d): %d arrows, the summary says %v; %d hand-offs drawn or counted without an arrow (%v), the whole log %d", a, b, len(tr.Flows), sum.Flows, n, sum.Unlinked, m)
		}
		if err := sum.Spans.Check(); err != nil {
			t.Error(err)
		}
	}
}

// TestWindowAllocsPerSpan: a window allocates per span no more than a
// whole conversion does (TestAllocsPerSpan) — nothing — whether it draws
// the start of the log or nothing at all.
func TestWindowAllocsPerSpan(t *testing.T) {
	if testing.Short() {
		t.Skip("converts 12 MB of logs")
	}
	for _, w := range []phasetrace.Window{
		{Start: 0, End: int64(50 * time.Millisecond), StartFromFirst: true, EndFromFirst: true},
		{Start: int64(100 * time.Hour), StartFromFirst: true, NoEnd: true},
	} {
		a1, s1, a2, s2 := addedAllocs(t, phasetrace.WithWindowOf(w))
		t.Logf("window %s: %.0f allocations for %d spans, %.0f for %d: %.0f for the %d spans added", w, a1, s1, a2, s2, a2-a1, s2-s1)
		if a2-a1 > 48 {
			t.Errorf("window %s: %.0f allocations for %d more spans, want at most 48 (the anchors' storage doubling)", w, a2-a1, s2-s1)
		}
	}
}

// TestWindowBuilderIsConvert: a Builder given a window draws what Convert
// given it draws, byte for byte (TestBuilderIsConvert's logs, a window
// through runs in the middle of each), its bounds after the first slice counted
// from the earliest host span its Survey was given.
func TestWindowBuilderIsConvert(t *testing.T) {
	t.Parallel()
	for _, gc := range generatedCases() {
		t.Run(gc.Name, func(t *testing.T) {
			t.Parallel()
			logs := []phasetrace.Input{phasetrace.Bytes("gen.log", gc.Log)}
			full, _, _ := convert(t, logs)
			first, _, _ := bounds(full)
			runs := slicesNamed(full, "chip.run")
			if len(runs) < 3 {
				t.Skipf("%d runs", len(runs))
			}
			r := runs[len(runs)/2] // a window from a run's middle to the next's
			opt := phasetrace.WithWindowFromStart(time.Duration(r.TS+r.Dur/2-first), time.Duration(runs[len(runs)/2+1].TS+r.Dur/2-first))
			var want bytes.Buffer
			if _, err := phasetrace.Convert(&want, logs, opt); err != nil {
				t.Fatal(err)
			}
			got, sum := buildFromValues(t, gc.Log, opt)
			sameTrace(t, want.Bytes(), got) // but for the inputs Convert names
			if sum.Spans.Drawn == 0 || sum.Spans.NotDrawn[phasetrace.ReasonOutsideWindow] == 0 {
				t.Errorf("the window holds %d spans, %d outside: it misses the log", sum.Spans.Drawn, sum.Spans.NotDrawn[phasetrace.ReasonOutsideWindow])
			}
		})
	}
}
