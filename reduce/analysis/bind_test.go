package analysis

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/phasetrace/phasetrace/strace"
)

func warningKinds(st *BindStats) []BindWarningKind {
	var ks []BindWarningKind
	for _, w := range st.Warnings {
		ks = append(ks, w.Kind)
	}
	return ks
}

// TestBinds works through testdata/bind.log: two ranks (pids 200
// and 201), three binds each. Each rank's first bind is cold (host_orch 5
// and 4 ms) and dropped. The four warm binds, host_orch + graph_pack +
// arena_h2d in µs:
//
//	200/2: 100 + 300   + 50     = 450
//	200/3: 300 + 100   + 60     = 460
//	201/2: 250 + 150.5 + 55     = 455.5
//	201/3: 220 + 250   + 40.001 = 510.001
//
// The minimum of the per-bind sums is 450 µs (bind 200/2). The sum of the
// per-segment minima, 100 + 100 + 40.001 = 240.001 µs, is a total no bind
// achieved, and is nowhere reported.
func TestBinds(t *testing.T) {
	t.Parallel()
	st, err := AnalyzeBinds(testLog(t, "bind.log"))
	if err != nil {
		t.Fatal(err)
	}
	if st.Ranks != 2 || st.RanksFrom != RanksFromProcesses || st.Warm != 4 || st.Cold != 2 || len(st.Binds) != 6 {
		t.Errorf("ranks %d from %d, %d warm, %d cold of %d", st.Ranks, st.RanksFrom, st.Warm, st.Cold, len(st.Binds))
	}
	if len(st.Warnings) != 0 {
		t.Errorf("warnings %+v", st.Warnings)
	}
	if !st.HasStamp || !strings.HasPrefix(st.Stamp, "4d31f482 ") || len(st.Autoload) != 1 {
		t.Errorf("stamp %q, autoload %v", st.Stamp, st.Autoload)
	}
	cp := st.ControlPlane
	if diff := cmp.Diff([]string{"host_orch", "graph_pack", "arena_h2d"}, cp.Present); diff != "" || len(cp.Absent)+len(cp.Partial) != 0 {
		t.Errorf("present %v absent %v partial %v", cp.Present, cp.Absent, cp.Partial)
	}
	// Sorted sums 450000, 455500, 460000, 510001: the median is between
	// the middle two.
	if want := (Spread{N: 4, Min: 450000, Max: 510001, Median: Median{455500, 460000}}); cp.Spread != want {
		t.Errorf("total %+v, want %+v", cp.Spread, want)
	}
	if diff := cmp.Diff(BindTotal{Pid: 200, Inv: 2, Parts: []int64{100000, 300000, 50000}, Sum: 450000}, cp.Totals[0]); diff != "" {
		t.Errorf("first total %+v", cp.Totals[0])
	}
	var sumOfMins int64
	for _, s := range st.Segments {
		if s.ControlPlane {
			sumOfMins += s.Min
		}
	}
	if sumOfMins != 240001 || sumOfMins == cp.Min {
		t.Errorf("sum of minima %d", sumOfMins)
	}
	// host_orch over the warm binds: 100, 220, 250, 300 µs.
	for _, s := range st.Segments {
		if s.Name == "host_orch" && s.Spread != (Spread{N: 4, Min: 100000, Max: 300000, Median: Median{220000, 250000}}) {
			t.Errorf("host_orch %+v", s.Spread)
		}
	}
	// cpu_ns is 9/10 of each duration: on 90, 198, 225, 270 µs, off the
	// remaining 10, 22, 25, 30 µs; nvcsw 2 and nivcsw 1 on every segment.
	for _, c := range st.CPU {
		if c.Name != "host_orch" {
			continue
		}
		if c.N != 4 || c.OnCPU.Median != (Median{198000, 225000}) || c.OffCPU.Median != (Median{22000, 25000}) ||
			c.Nvcsw.Median != (Median{2, 2}) || c.Nivcsw.Median != (Median{1, 1}) {
			t.Errorf("host_orch CPU %+v", c)
		}
	}
	// minflt falls after each rank's cold bind: 989 → 114 → 54, 983 → 173 → 3.
	var seqs []string
	for _, q := range st.Sequences {
		if q.Segment == "host_orch" {
			seqs = append(seqs, fmt.Sprintf("%d:%v%v", q.Pid, q.Values, q.Cold))
		}
	}
	if diff := cmp.Diff([]string{"200:[989 114 54][true false false]", "201:[983 173 3][true false false]"}, seqs); diff != "" {
		t.Errorf("minflt sequences (-want +got):\n%s", diff)
	}
}

// TestBindWarnings works through testdata/bind_warnings.log, one
// rank (pid 300) with no stamp and no autoload record. inv 5 has only an
// args segment: not a bind. inv 1 is cold. Every bind carries an old
// graph_upload segment (unknown: excluded). arena_h2d is missing from inv
// 3 and graph_pack is in inv 6 only (partial: those binds are excluded),
// inv 4 logs host_view_close twice, and inv 6 spills 2 Definitions after
// the process's first bind. Only inv 6 is complete: 205 + 90 + 25 = 320 µs.
func TestBindWarnings(t *testing.T) {
	t.Parallel()
	st, err := AnalyzeBinds(testLog(t, "bind_warnings.log"))
	if err != nil {
		t.Fatal(err)
	}
	want := []BindWarningKind{WarnNoStamp, WarnNoAutoload, WarnDuplicateSegment, WarnNotABind, WarnSpilled, WarnUnknownSegment, WarnPartialSegment}
	if diff := cmp.Diff(want, warningKinds(st)); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	cp := st.ControlPlane
	if diff := cmp.Diff([]string{"graph_pack", "arena_h2d"}, cp.Partial); diff != "" {
		t.Errorf("partial: %s", diff)
	}
	if cp.Excluded != 3 || cp.N != 1 || cp.Min != 320000 {
		t.Errorf("control plane %+v", cp)
	}
	if len(st.Unknown) != 1 || st.Unknown[0].Name != "graph_upload" || st.Unknown[0].N != 4 {
		t.Errorf("unknown %+v", st.Unknown)
	}
	for _, s := range st.Segments {
		if s.Name == "graph_upload" {
			t.Error("graph_upload among the known segments")
		}
	}
	if !strings.Contains(st.Warnings[4].Text, "pid 300 inv 6: graph_pack spilled=2") {
		t.Errorf("spilled warning %q", st.Warnings[4].Text)
	}
}

// bindLines is one bind of the given control-plane segment durations (0:
// absent), plus args.
func bindLines(pid, inv int, ts int64, hostOrch, graphPack, arenaH2D int64) []string {
	lines := []string{rec(pid, inv, "9f3c", 2, "chip.run.bind.args", ts, 1000, "cpu_ns=900 minflt=3")}
	for _, s := range []struct {
		name string
		dur  int64
	}{{"host_orch", hostOrch}, {"graph_pack", graphPack}, {"arena_h2d", arenaH2D}} {
		if s.dur > 0 {
			lines = append(lines, rec(pid, inv, "9f3c", 2, "chip.run.bind."+s.name, ts+2000, s.dur, "spilled=0"))
		}
	}
	return lines
}

// TestBindAbsentSegment: graph_pack is in no bind (a run from before it
// existed): the total is over the two segments there are, and says so.
func TestBindAbsentSegment(t *testing.T) {
	t.Parallel()
	var lines []string
	for inv := 1; inv <= 3; inv++ {
		lines = append(lines, bindLines(1, inv, int64(inv)*1e6, 100*int64(inv), 0, 10)...)
	}
	st, err := AnalyzeBinds(logOf(t, "absent", lines...))
	if err != nil {
		t.Fatal(err)
	}
	// Warm binds 2 and 3: 200 + 10 and 300 + 10.
	if diff := cmp.Diff([]string{"graph_pack"}, st.Absent); diff != "" || st.Min != 210 || st.Max != 310 {
		t.Errorf("absent %v, total %+v", st.Absent, st.ControlPlane.Spread)
	}
	if diff := cmp.Diff([]BindWarningKind{WarnNoStamp, WarnNoAutoload, WarnAbsentSegment}, warningKinds(st)); diff != "" {
		t.Errorf("warnings: %s", diff)
	}
	// No cpu_ns on the control-plane segments: only args is split.
	if len(st.CPU) != 1 || st.CPU[0].Name != "args" || st.CPU[0].Nvcsw.N != 0 {
		t.Errorf("CPU %+v", st.CPU)
	}
	var b strings.Builder
	_ = WriteBinds(&b, st)
	if !strings.Contains(b.String(), "    over 2 of 3 segments; absent from every\n    bind: graph_pack\n") {
		t.Errorf("absent line missing:\n%s", b.String())
	}
}

// TestBindRanks: ranks given or inferred from rounds decide how many cold
// binds go; when they do not match the processes, the earliest binds go.
func TestBindRanks(t *testing.T) {
	t.Parallel()
	l := testLog(t, "bind.log")
	st, err := AnalyzeBinds(l, WithRounds(3)) // 6 binds / 3 rounds = 2 ranks, one per process
	if err != nil || st.Ranks != 2 || st.RanksFrom != RanksFromRounds || st.Warm != 4 || len(st.Warnings) != 0 {
		t.Errorf("rounds 3: %v, %+v", err, st)
	}
	// One rank given: only the earliest bind (200/1 at 1 000 000 ns, before
	// 201/1 at 1 000 500) is cold, and the mismatch is said.
	st, _ = AnalyzeBinds(l, WithRanks(1))
	if st.Ranks != 1 || st.Cold != 1 || st.Binds[3].Cold || st.Binds[0].Pid != 200 || !st.Binds[0].Cold {
		t.Errorf("ranks 1: %d cold", st.Cold)
	}
	if k := warningKinds(st); len(k) != 1 || k[0] != WarnRanks {
		t.Errorf("warnings %v", k)
	}
	// 6 binds do not divide into 4 rounds.
	st, _ = AnalyzeBinds(l, WithRounds(4))
	if k := warningKinds(st); len(k) != 2 || k[0] != WarnRanks || k[1] != WarnRanks || st.Ranks != 1 {
		t.Errorf("rounds 4: ranks %d, warnings %v", st.Ranks, k)
	}
	st, _ = AnalyzeBinds(l, WithKeepFirst())
	if st.Cold != 0 || st.Warm != 6 || st.Max != 5000000+900000+700000 {
		t.Errorf("keep first: %d cold, max %d", st.Cold, st.Max)
	}
}

func TestBindRefusals(t *testing.T) {
	t.Parallel()
	st, err := AnalyzeBinds(testLog(t, "bind_cold.log"))
	if !errors.Is(err, ErrAllCold) || st.Cold != 2 || st.Warm != 0 {
		t.Errorf("all cold: %v", err)
	}
	var b strings.Builder
	_ = WriteBinds(&b, st)
	if !strings.Contains(b.String(), "2 binds, 0 warm (2 cold dropped, ranks=2)") {
		t.Errorf("all-cold rendering:\n%s", b.String())
	}
	_, err = AnalyzeBinds(testLog(t, "tpot.log"))
	if !errors.Is(err, ErrNoBinds) {
		t.Errorf("no binds: %v", err)
	}
	// Device spans and orchestrator operations inside a segment are not segments.
	st, err = AnalyzeBinds(logOf(t, "ops",
		rec(1, 1, "a", 2, "chip.run.bind.host_orch", 0, 10, ""),
		rec(1, 2, "a", 2, "chip.run.bind.host_orch", 100, 10, ""),
		rec(1, 2, "a", 3, "chip.run.bind.host_orch.submit_task", 101, 1, ""),
		rec(1, 2, "a", 3, "chip.run.bind.arena_h2d", 0, 1, "clk=dev"),
	))
	if err != nil || len(st.Binds[1].Segments) != 1 {
		t.Errorf("operations: %v %+v", err, st.Binds)
	}
	if WarnNoTotal.String() != "no-total" || BindWarningKind(99).String() != "BindWarningKind(99)" {
		t.Error("BindWarningKind.String")
	}
}

// TestBindSources: which bind a legacy bind line belongs to, and which
// source of a segment wins.
func TestBindSources(t *testing.T) {
	t.Parallel()
	const (
		bindA = "[mono_ns=1][T0xa][TIMING] emit_host_span: [STRACE] v=1 pid=1 tid=1 inv=1 hid=1 depth=1 name=chip.run.bind ts=100 dur=100\n"
		bindB = "[mono_ns=2][T0xb][TIMING] emit_host_span: [STRACE] v=1 pid=2 tid=2 inv=1 hid=1 depth=1 name=chip.run.bind ts=100 dur=100\n"
		spanA = "[mono_ns=3][T0xa][TIMING] emit_host_span: [STRACE] v=1 pid=1 tid=1 inv=1 hid=1 depth=2 name=chip.run.bind.host_orch ts=110 dur=7\n"
	)
	line := func(thread, phase string, start, dur int) string {
		pre := ""
		if thread != "" {
			pre = "[mono_ns=4][T0x" + thread + "][TIMING] host_phase_trace_end: "
		}
		return fmt.Sprintf("%sbind phase=%s start_ns=%d dur_ns=%d\n", pre, phase, start, dur)
	}
	pass := func(pid int32, phase string, start, end uint64) strace.PhasePass {
		return strace.PhasePass{Pid: pid, Inv: 1, Records: []strace.PhaseRecord{{Phase: phase, StartNS: start, EndNS: end}}}
	}
	type seg struct {
		Pid    int32
		Name   string
		Dur    int64
		Source SegmentSource
	}
	for _, c := range []struct {
		name   string
		log    string
		passes []strace.PhasePass
		want   []seg
		warn   []BindWarningKind
	}{
		{"line of its thread", bindA + bindB + line("b", "host_orch", 120, 5), nil,
			[]seg{{2, "host_orch", 5, FromBindLine}}, nil},
		{"line written before its bind", line("a", "host_orch", 120, 5) + bindA + bindB, nil,
			[]seg{{1, "host_orch", 5, FromBindLine}}, nil},
		{"line without a prefix: the first bind holding it", bindB + bindA + line("", "host_orch", 120, 5), nil,
			[]seg{{2, "host_orch", 5, FromBindLine}}, nil},
		{"line past its bind's end", bindA + line("a", "host_orch", 150, 51), nil,
			nil, []BindWarningKind{WarnUnclaimed}},
		{"line of no bind's thread", bindA + line("c", "host_orch", 120, 5), nil,
			nil, []BindWarningKind{WarnUnclaimed}},
		{"segment span wins over a line", bindA + line("a", "host_orch", 120, 5) + spanA, nil,
			[]seg{{1, "host_orch", 7, FromSpan}}, nil},
		{"pass wins over a span and a line", bindA + line("a", "host_orch", 120, 5) + spanA, []strace.PhasePass{pass(1, "host_orch", 110, 119)},
			[]seg{{1, "host_orch", 9, FromRecords}}, nil},
		{"pass gives a bind without segment spans", bindA, []strace.PhasePass{pass(1, "host_orch", 110, 112)},
			[]seg{{1, "host_orch", 2, FromRecords}}, nil},
		{"a pass's operations are not segments", bindA + spanA, []strace.PhasePass{pass(1, "submit_task", 110, 112)},
			[]seg{{1, "host_orch", 7, FromSpan}}, nil},
		{"pass of no bind", bindA + spanA, []strace.PhasePass{pass(9, "host_orch", 110, 112)},
			[]seg{{1, "host_orch", 7, FromSpan}}, []BindWarningKind{WarnUnclaimed}},
	} {
		t.Run(c.name, func(t *testing.T) {
			l, err := ReadLog(strings.NewReader(c.log))
			if err != nil || l.Stats.Lost() != 0 {
				t.Fatalf("%v %v", err, l.Stats.Problems)
			}
			st, err := AnalyzeBinds(l, WithKeepFirst(), WithPhaseRecords(c.passes))
			if len(c.want) == 0 && !errors.Is(err, ErrNoBinds) || len(c.want) > 0 && err != nil {
				t.Fatalf("error %v", err)
			}
			var got []seg
			for _, b := range st.Binds {
				for _, s := range b.Segments {
					got = append(got, seg{b.Pid, s.Name, s.Dur, s.Source})
				}
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("segments (-want +got):\n%s", diff)
			}
			var warns []BindWarningKind
			for _, k := range warningKinds(st) {
				if k != WarnNoStamp && k != WarnNoAutoload && k != WarnNoTotal && k != WarnAbsentSegment {
					warns = append(warns, k)
				}
			}
			if diff := cmp.Diff(c.warn, warns); diff != "" {
				t.Errorf("warnings (-want +got):\n%s\n%+v", diff, st.Warnings)
			}
		})
	}
}

// TestBindLinesRepetitions: Concat and Repetitions keep each bind line
// and bind span thread with its own part of the log.
func TestBindLinesRepetitions(t *testing.T) {
	t.Parallel()
	a := testLog(t, "bind_legacy.log")
	both := Concat("two", a, a)
	if len(both.BindLines) != 2*len(a.BindLines) || len(both.BindThreads) != 2*len(a.BindThreads) {
		t.Fatalf("concat: %d lines, %d threads", len(both.BindLines), len(both.BindThreads))
	}
	reps := both.Repetitions()
	if len(reps) != 2 {
		t.Fatalf("%d repetitions", len(reps))
	}
	for i, r := range reps {
		if diff := cmp.Diff(a.BindThreads, r.BindThreads); diff != "" {
			t.Errorf("repetition %d threads (-want +got):\n%s", i, diff)
		}
		if len(r.BindLines) != len(a.BindLines) {
			t.Errorf("repetition %d: %d lines, want %d", i, len(r.BindLines), len(a.BindLines))
		}
		st, err := AnalyzeBinds(r)
		if err != nil || st.Warm != 4 {
			t.Errorf("repetition %d: %v, %d warm", i, err, st.Warm)
		}
	}
}
