package phasetrace_test

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
	"github.com/phasetrace/phasetrace"
	"github.com/phasetrace/phasetrace/perfetto"
	"github.com/phasetrace/phasetrace/perfetto/check"
	"github.com/phasetrace/phasetrace/strace"
	"github.com/phasetrace/phasetrace/strace/stracetest"
)

// spanLine formats one [STRACE] record as the runtime writes it.
func spanLine(mono int64, pid, tid int64, inv uint64, depth int, name string, ts, dur int64, attrs string) string {
	if attrs != "" {
		attrs = " " + attrs
	}
	return fmt.Sprintf("[mono_ns=%d][T0x%x][TIMING] emit_host_span: [STRACE] v=1 pid=%d tid=%d inv=%d hid=9f3c depth=%d name=%s ts=%d dur=%d%s\n",
		mono, tid, pid, tid, inv, depth, name, ts, dur, attrs)
}

func wallLine(mono, pid, monoNS, wallNS int64) string {
	return fmt.Sprintf("[mono_ns=%d][T0x1][TIMING] clock_anchor: [CLOCK_ANCHOR] v=1 pid=%d mono_ns=%d wall_ns=%d\n", mono, pid, monoNS, wallNS)
}

// chipRun is one run of pid as the runtime logs it: host spans on scope
// exit, then its device spans, then its root. dev holds the device
// sub-phases as name, ts, dur triples.
func chipRun(pid int64, inv uint64, start int64, dev ...any) string {
	var b strings.Builder
	b.WriteString(spanLine(start+300_000, pid, pid, inv, 1, "chip.run.bind", start, 300_000, ""))
	rr := start + 400_000
	b.WriteString(spanLine(rr+20_000_000, pid, pid, inv, 1, "chip.run.runner_run", rr, 20_000_000, ""))
	b.WriteString(spanLine(rr+20_100_000, pid, pid, inv, 2, "chip.run.runner_run.device_wall", 0, 19_000_000, "clk=dev dev=0"))
	for i := 0; i+2 < len(dev); i += 3 {
		b.WriteString(spanLine(rr+20_100_000, pid, pid, inv, 3, "chip.run.runner_run.device_wall."+dev[i].(string), int64(dev[i+1].(int)), int64(dev[i+2].(int)), "clk=dev"))
	}
	b.WriteString(spanLine(rr+20_200_000, pid, pid, inv, 0, "chip.run", start, 20_700_000, "slot_id=0"))
	return b.String()
}

// wholeTrace checks what every conversion must give: a trace that reads
// back clean, and an account in which every span read is drawn or counted
// under a reason — with as many span slices in the trace as the summary
// says were drawn. The slices are named by their full names (fullNamed).
//
// The trace returned is without the trace's own track and instant
// (stripAbout), which wholeTrace checks are there, nor the anomalies.
func wholeTrace(t *testing.T, out []byte, sum *phasetrace.Summary) *check.Trace {
	t.Helper()
	tr, err := check.ReadBytes(out)
	if err != nil {
		t.Fatalf("the trace does not decode: %v", err)
	}
	return wholeTraceOf(t, out, tr, sum)
}

// wholeTraceOf is wholeTrace given out read back (check.ReadBytes) as tr,
// which it strips and names by full names into the trace it returns.
func wholeTraceOf(t *testing.T, out []byte, tr *check.Trace, sum *phasetrace.Summary) *check.Trace {
	t.Helper()
	if err := tr.Err(); err != nil && !strandedSaid(tr, sum) {
		t.Fatalf("the trace processor would report: %v", err)
	}
	if err := sum.Spans.Check(); err != nil {
		t.Fatal(err)
	}
	var read int64
	for _, in := range sum.Inputs {
		read += in.Records["span"]
	}
	if len(sum.Inputs) > 0 && read != sum.Spans.Read {
		t.Errorf("summary: %d spans read by the readers, %d in the account", read, sum.Spans.Read)
	}
	if n := spanSlices(tr); n != sum.Spans.Drawn {
		t.Errorf("the trace holds %d slices of spans, the summary says %d were drawn", n, sum.Spans.Drawn)
	}
	var moved, said int64
	for _, s := range tr.Slices {
		if _, ok := argOf(s, "overflow_reason"); ok && isSpanSlice(s) {
			moved++
		}
	}
	for _, v := range sum.Spans.Moved {
		said += v
	}
	if moved != said {
		t.Errorf("the trace holds %d slices of spans on overflow lanes, the summary says %d were moved (%v)", moved, said, sum.Spans.Moved)
	}
	if n := arrows(sum); int64(len(tr.Flows)) != n {
		t.Errorf("the trace holds %d arrows, the summary says %d were drawn (%v)", len(tr.Flows), n, sum.Flows)
	}
	var slices, instants int64
	for _, s := range tr.Slices {
		if s.Instant {
			instants++
		} else {
			slices++
		}
	}
	flowIDs := 2 * int64(len(tr.Flows)) // an arrow has two ends; a stranded flow id (strandedSaid) one
	for _, p := range tr.Problems {
		if p.Name == "flow_without_destination" {
			flowIDs++
		}
	}
	o := sum.Output
	if got := (phasetrace.OutputSummary{Bytes: int64(len(out)), Packets: int64(tr.Packets), Tracks: len(tr.Tracks), Slices: slices, Instants: instants, Flows: flowIDs, Counters: int64(len(tr.Counters))}); got != o {
		t.Errorf("the summary says the trace holds %+v, it holds %+v", o, got)
	}
	if sh := processorShell(t); sh != nil {
		processorAgreesWith(t, sh, out, tr, sum) // tr is still the whole trace as check reads out
	}
	// The anomalies the summary counts are the anomalies track's instants.
	var an phasetrace.AnomalyCounts
	for _, s := range tr.Slices {
		if s.Category != "anomaly" {
			continue
		}
		switch s.Name {
		case "slow run":
			an.SlowRuns++
		case "cold bind":
			an.ColdBinds++
		case "wide bound":
			an.WideBounds++
		default:
			t.Errorf("an anomaly named %q", s.Name)
		}
	}
	if an != sum.Anomalies {
		t.Errorf("the trace holds anomalies %+v, the summary says %+v", an, sum.Anomalies)
	}
	if stripAbout(tr) == nil {
		t.Errorf("the trace holds no conversion instant")
	}
	return fullNamed(t, tr)
}

// strandedSaid reports whether every problem of tr is a flow id with no
// other end, each an arrow the summary says lost its end to the trace
// writer after the other was written (a known limit: a hand-off whose
// second end the writer refuses — every lane of its track taken, or the
// track limit reached — after the first was flushed; the trace processor
// draws no arrow for it and reports nothing).
func strandedSaid(tr *check.Trace, sum *phasetrace.Summary) bool {
	n := 0
	for _, p := range tr.Problems {
		if p.Name != "flow_without_destination" {
			return false
		}
		n++
	}
	for _, note := range sum.Notes {
		if strings.HasPrefix(note, strconv.Itoa(n)+" arrow") && strings.Contains(note, "lost an end to the trace writer") {
			return arrows(sum) == int64(len(tr.Flows))
		}
	}
	return false
}

// spanSlices counts the slices of a trace that are spans of the log: not
// the derived Effective windows, bind phase lines or host_phase_records.
func spanSlices(tr *check.Trace) int64 {
	var n int64
	for _, s := range tr.Slices {
		if isSpanSlice(s) {
			n++
		}
	}
	return n
}

// isSpanSlice reports whether a slice is a span of the log: not a derived
// Effective window, a bind phase line, a host_phase_records entry or an
// instant.
func isSpanSlice(s check.Slice) bool {
	if _, derived := argOf(s, "derived"); s.Instant || derived {
		return false
	}
	src, ok := argOf(s, "src")
	return !ok || src != "bind_phase" && src != "host_phase_records"
}

// hostileLogs are logs with everything wrong that the runtime or a user
// can produce; each must still convert to a whole trace.
type hostileLog struct {
	name  string
	logs  []string
	opts  []phasetrace.Option
	check func(t *testing.T, tr *check.Trace, sum *phasetrace.Summary)
}

// hostileLogs are the hostile logs of every kind.
func hostileLogs() []hostileLog {
	return slices.Concat(hostileRecords(), hostileWallClocks(), hostileMachines(), hostileLimits())
}

// hostileRecords are hostile logs of records: absurd numbers, overlaps,
// deep nesting, repeats, a cut last line.
func hostileRecords() []hostileLog {
	abut := chipRun(4100, 1, 1_000_000,
		"preamble", 0, 300_000, "graph_build", 300_000, 15_000_000,
		"config_validate", 317_580, 5_215_980, "arena_wire", 5_533_559, 4_000_000, // 1 ns overlap, the runtime's truncation
		"sm_reset", 9_533_559, 1_000_000,
		"orch", 10_600_000, 3_000_000, "sched", 10_600_100, 4_000_000)
	submit := "[mono_ns=5000][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=4000 tid=4001 inv=0 hid=0 depth=0 name=node.submit ts=1000 dur=2000 run_id=1 task_slot=0 role=facade\n" +
		"[mono_ns=9000][T0x2][TIMING] emit_host_span: [STRACE] v=1 pid=4000 tid=4002 inv=0 hid=0 depth=0 name=node.dispatch ts=4000 dur=3000 run_id=1 task_slot=0 role=scheduler dispatch_id=1\n"
	capture := chipRun(4100, 1, 5_000_000_000) + chipRun(4100, 2, 7_000_000_000)
	cut := spanLine(30_000_000, 4100, 4100, 2, 0, "chip.run", 25_000_000, 62850, "")
	cut = cut[:len(cut)-len("850\n")]
	farAnchor := "[mono_ns=5000][T0x1][TIMING] clock_anchor: [CLOCK_ANCHOR] v=2 pid=1 tid=1 dev=0 host_ns=1000000 window_ns=20 dev_cyc=1000 dev_freq=1000000000\n" +
		"[mono_ns=5001][T0x1][TIMING] clock_anchor: [CLOCK_ANCHOR] v=2 pid=1 tid=1 dev=0 host_ns=2000000 window_ns=20 dev_cyc=5000000000000000000 dev_freq=1000000000\n" +
		"[mono_ns=5160][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=1 tid=1 inv=1 hid=9f3c depth=2 name=chip.run.runner_run.device_wall ts=0 dur=900 clk=dev origin_cyc=5000 dev=0\n"
	return []hostileLog{
		{"a clock anchor 5e18 ns from the others", []string{farAnchor}, nil, nil},
		{"device phases abutting, overlapping by the runtime's truncation", []string{abut}, nil, func(t *testing.T, tr *check.Trace, sum *phasetrace.Summary) {
			if len(sum.Repaired) != 1 || sum.Moved != nil {
				t.Errorf("repaired %v, moved %v: want the one truncation repaired", sum.Repaired, sum.Moved)
			}
			for _, s := range tr.Slices {
				if s.Name == "chip.run.runner_run.device_wall.arena_wire" {
					ts, _ := argOf(s, "logged_device_ts")
					dur, _ := argOf(s, "logged_device_dur")
					if ts != int64(5_533_559) || dur != int64(4_000_000) {
						t.Errorf("arena_wire logged as ts=%v dur=%v", ts, dur)
					}
				}
			}
		}},
		{"negative host dur", []string{spanLine(10, 1, 1, 1, 0, "chip.run", 100, -1, "")}, nil, nil},
		{"ts+dur overflows", []string{spanLine(10, 1, 1, 1, 0, "chip.run", 9_000_000_000_000_000_000, 900_000_000_000_000_000, "")}, nil, nil},
		{"device span with a negative dur", []string{chipRun(4100, 1, 1_000_000, "preamble", 0, -5)}, nil, nil},
		{"top-level spans overlapping by 1 ns", []string{spanLine(10, 1, 1, 1, 0, "chip.run", 100, 50, "") + spanLine(20, 1, 1, 2, 0, "chip.run", 149, 50, "")}, nil, nil},
		{"10 001 nested spans", []string{string(stracetest.NestedSpans(10_001))}, nil, nil},
		{"one log given twice", []string{abut + submit, abut + submit}, nil, repeated(13, 2)},
		{"two captures concatenated", []string{submit + abut + submit + abut}, nil, repeated(13, 2)},
		{"two captures concatenated, seconds long", []string{capture + capture}, nil, repeated(8, 2)},
		{"two captures, the second longer", []string{capture + capture + chipRun(4100, 3, 9_000_000_000)}, nil, repeated(8, 3)},
		{"repeated hand-off pair", []string{submit + submit + submit}, nil, repeated(4, 1)},
		{"last line cut mid-number", []string{chipRun(4100, 1, 1_000_000) + cut}, nil, nil},
	}
}

// hostileWallClocks are hostile logs of wall-clock anchors.
func hostileWallClocks() []hostileLog {
	return []hostileLog{
		{"wall anchors 10^15 ns apart", []string{wallLine(1, 4100, 100, 1_700_000_000_000_000_000) + wallLine(2, 4100, 200, 1_701_000_000_000_000_000) + chipRun(4100, 1, 1_000_000)}, nil,
			func(t *testing.T, tr *check.Trace, sum *phasetrace.Summary) {
				if sum.WallAnchors != 1 || len(tr.Wall) != 2 || len(sum.NotDrawn) != 1 || len(sum.Notes) != 1 {
					t.Errorf("wall anchors written %d (%d in the trace), set aside %v, notes %q: want one written, one set aside, a note", sum.WallAnchors, len(tr.Wall), sum.NotDrawn, sum.Notes)
				}
			}},
		{"the first wall anchor absurd (wall_ns = -2^63), the other two agreeing", []string{string(generated(genConfig{Seed: 1, Rounds: 2, WallNS: []int64{math.MinInt64}}))}, nil,
			func(t *testing.T, tr *check.Trace, sum *phasetrace.Summary) {
				aside := sum.NotDrawn[phasetrace.ReasonWallBefore1970]
				if sum.WallAnchors != 2 || len(tr.Wall) != 3 || aside != 1 {
					t.Errorf("wall anchors written %d (%d in the trace), set aside %v: want the two that agree written, the absurd one set aside", sum.WallAnchors, len(tr.Wall), sum.NotDrawn)
				}
			}},
		{"one wall anchor a year off, the other two agreeing", []string{string(generated(genConfig{Seed: 1, Rounds: 2, WallNS: []int64{1_735_689_600_000_000_000}}))}, nil,
			func(t *testing.T, tr *check.Trace, sum *phasetrace.Summary) {
				const reason = phasetrace.ReasonWallDisagrees
				if sum.WallAnchors != 2 || len(tr.Wall) != 3 || sum.NotDrawn[reason] != 1 {
					t.Errorf("wall anchors written %d (%d in the trace), set aside %v: want the two that agree written, the first set aside", sum.WallAnchors, len(tr.Wall), sum.NotDrawn)
				}
				for _, w := range tr.Wall {
					if w.Wall-w.TS != 1_767_225_600_000_000_000 {
						t.Errorf("wall clock snapshot %+v is not the agreeing anchors' clock", w)
					}
				}
			}},
		{"wall anchors: the third 24 years off, its difference printed exactly", []string{wallLine(1, 4100, 1_000_000_000, 1_767_225_600_000_000_000) + wallLine(2, 4200, 2_000_000_000, 1_767_225_601_000_000_000) + wallLine(3, 4300, 100, 1_000_000_000_000_000_000) + chipRun(4100, 1, 1_000_000)}, nil,
			func(t *testing.T, tr *check.Trace, sum *phasetrace.Summary) {
				const reason = phasetrace.ReasonWallDisagrees
				if sum.WallAnchors != 2 || sum.NotDrawn[reason] != 1 {
					t.Errorf("wall anchors written %d, set aside %v: want the two that agree written, the third set aside", sum.WallAnchors, sum.NotDrawn)
				}
				for _, e := range sum.Examples {
					if e.Reason == reason && !strings.Contains(e.Detail, "differs by -767225599000000100 ns") {
						t.Errorf("set aside with %q: want the exact difference", e.Detail)
					}
				}
			}},
		{"wall anchors: an offset at the int64 limit, the difference saturates", []string{wallLine(1, 4100, -1<<63+10, 1<<63-1) + wallLine(2, 4200, 2_000_000_000_000_000_000, 1_000_000_000_000_000_000) + wallLine(3, 4300, 2_000_000_000_000_000_100, 1_000_000_000_000_000_100) + chipRun(4100, 1, 1_000_000)}, nil,
			func(t *testing.T, tr *check.Trace, sum *phasetrace.Summary) {
				const reason = phasetrace.ReasonWallDisagrees
				if sum.WallAnchors != 2 || sum.NotDrawn[reason] != 1 {
					t.Errorf("wall anchors written %d, set aside %v: want the two that agree written, the first set aside", sum.WallAnchors, sum.NotDrawn)
				}
				for _, e := range sum.Examples {
					if e.Reason == reason && !strings.Contains(e.Detail, "differs by 9223372036854775807 ns") {
						t.Errorf("set aside with %q: want the difference saturated at the int64 range", e.Detail)
					}
				}
			}},
		{"two logs of one host, the first's first wall anchor a clock set wrong", []string{
			string(generated(genConfig{Seed: 1, Rounds: 2, WallNS: []int64{1_000_000_000_000_000_000}})),
			wallLine(1, 9000, 5_000_000_000, 1_767_225_605_000_000_000) + spanLine(5_000_000_100, 9000, 9000, 0, 0, "ext.app.step", 5_000_000_000, 50, ""),
		}, nil,
			func(t *testing.T, tr *check.Trace, sum *phasetrace.Summary) {
				if len(sum.Hosts) != 0 || sum.WallAnchors != 3 {
					t.Errorf("machines %+v, wall anchors written %d, not drawn %v: want one host, its three agreeing anchors written", sum.Hosts, sum.WallAnchors, sum.NotDrawn)
				}
				for _, s := range tr.Slices {
					if s.Name == "ext.app.step" && s.TS != 5_000_000_000 {
						t.Errorf("the second log's span is drawn at %d, want its own time", s.TS)
					}
				}
			}},
	}
}

// hostileMachines are hostile logs of devices, machines and processes:
// an impossible device phase, absurd remote wall clocks, a bind at depth 0,
// device spans alone, huge ids.
func hostileMachines() []hostileLog {
	bindRoot := spanLine(2_000_000, 4100, 4100, 7, 1, "chip.run.bind.args", 1_000_000, 100_000, "") +
		spanLine(2_000_000, 4100, 4100, 7, 0, "chip.run.bind", 1_000_000, 500_000, "")
	return []hostileLog{
		{"one device phase at ts=1e15", []string{string(generated(genConfig{Seed: 1, Rounds: 2, AnchorEvry: 1_000_000, ImpossiblePhaseTS: 1_000_000_000_000_000}))}, nil,
			func(t *testing.T, tr *check.Trace, sum *phasetrace.Summary) {
				const reason = phasetrace.ReasonDeviceMisfit
				if len(sum.Spans.NotDrawn) != 1 || sum.Spans.NotDrawn[reason] != 1 {
					t.Errorf("spans not drawn %v: want the one impossible span, under its own reason", sum.Spans.NotDrawn)
				}
				for _, e := range sum.Examples {
					if e.Reason == reason && (!strings.HasPrefix(e.At, "log0:") || !strings.Contains(e.Detail, "sm_reset ts=1000000000000000")) {
						t.Errorf("example %+v: want the span's position and name", e)
					}
				}
				// The other 9 of its run, and every other device span,
				// drawn where they are drawn without it.
				var out bytes.Buffer
				if _, err := phasetrace.Convert(&out, []phasetrace.Input{phasetrace.Bytes("log0", generated(genConfig{Seed: 1, Rounds: 2, AnchorEvry: 1_000_000}))}); err != nil {
					t.Fatal(err)
				}
				clean, err := check.ReadBytes(out.Bytes())
				if err != nil {
					t.Fatal(err)
				}
				want, got := deviceSlices(fullNamed(t, clean)), deviceSlices(tr)
				missing := 0
				for k, n := range want {
					if got[k] != n {
						missing += n - got[k]
						if !strings.Contains(k, "sm_reset") || n-got[k] != 1 {
							t.Errorf("device slice %s: %d drawn, %d without the impossible phase", k, got[k], n)
						}
					}
				}
				if missing != 1 || len(got) > len(want) {
					t.Errorf("%d device slices missing, %d kinds drawn against %d: want only the impossible one gone", missing, len(got), len(want))
				}
			}},
		// One rule both ways: an anchor that puts a machine's clock years
		// back (its spans before the axis's zero) or years forward (the
		// reference's spans before its zero, 9e18 being 228 years on) is
		// set aside, and the machine drawn at its own times.
		{"a remote machine's wall anchors all at 1e18, without the dispatching log", remoteLogs(1_000_000_000_000_000_000), nil, remoteWallSetAside},
		{"a remote machine's wall anchors all at 9e18, without the dispatching log", remoteLogs(9_000_000_000_000_000_000), nil, remoteWallSetAside},
		{"a remote machine's wall anchors all at 2.5e18 (in 2049), without the dispatching log", remoteLogs(2_500_000_000_000_000_000), nil, remoteWallSetAside},
		{"a remote machine's wall anchors all at -2^63, without the dispatching log", remoteLogs(math.MinInt64), nil,
			func(t *testing.T, tr *check.Trace, sum *phasetrace.Summary) {
				if sum.Spans.Drawn != sum.Spans.Read || len(sum.Hosts) != 2 || sum.Hosts[1].Method != "unplaced" {
					t.Errorf("spans: %d read, %d drawn, not drawn %v, machines %+v: want every span drawn, m2 unplaced", sum.Spans.Read, sum.Spans.Drawn, sum.Spans.NotDrawn, sum.Hosts)
				}
			}},
		{"a bind at depth 0", []string{bindRoot}, []phasetrace.Option{phasetrace.WithPhaseRecords(phasetrace.Bytes("host_phase_records.jsonl", []byte(
			`{"pid": 4100, "inv": 7, "records": [{"phase": "args", "start_ns": 1000000, "end_ns": 1050000}, {"phase": "graph_submit", "start_ns": 1200000, "end_ns": 1300000, "tid": 4100}]}`+"\n")))},
			func(t *testing.T, tr *check.Trace, sum *phasetrace.Summary) {
				records := 0
				for _, s := range tr.Slices {
					if src, _ := argOf(s, "src"); src == "host_phase_records" {
						records++
					}
				}
				if records != 2 || sum.Spans.Superseded != 1 {
					t.Errorf("%d record slices drawn, %d segment spans superseded: want 2 and 1", records, sum.Spans.Superseded)
				}
				for _, tk := range tr.Tracks {
					if tk.Kind == "thread" && tk.Name != "graph submit main" {
						t.Errorf("thread %d is named %q, want the records' own label", tk.Tid, tk.Name)
					}
				}
			}},
		{"device spans are the only proof", []string{spanLine(5, 4500, 4500, 3, 2, "chip.run.runner_run.device_wall", 0, 100, "clk=dev dev=0") + spanLine(6, 4500, 4501, 0, 0, "ext.app.x", 10, 5, "")}, nil,
			func(t *testing.T, tr *check.Trace, sum *phasetrace.Summary) {
				if tk := tr.Tracks[0]; tk.Kind != "process" || tk.Name != "simpler chip child (pid=4500)" {
					t.Errorf("process track %+v, want a chip child", tk)
				}
			}},
		{"an ext span on a pipelined thread", []string{spanLine(200, 4100, 4100, 1, 0, "chip.run", 100, 100, "slot_id=0") +
			spanLine(250, 4100, 4100, 2, 0, "chip.run", 150, 100, "slot_id=1") +
			spanLine(300, 4100, 4100, 3, 0, "chip.run", 210, 50, "slot_id=0") +
			spanLine(410, 4100, 4100, 0, 0, "ext.torch.step", 400, 10, "")}, nil,
			func(t *testing.T, tr *check.Trace, sum *phasetrace.Summary) {
				found := false
				for _, tk := range tr.Tracks {
					if tk.Kind == "thread" {
						found = true
						if tk.Name != "ext torch" {
							t.Errorf("the thread's own lane is named %q, want it named after what it carries", tk.Name)
						}
					}
				}
				if !found {
					t.Error("no thread track")
				}
			}},
		{"huge ids", []string{spanLine(10, 2147483647, 9223372036854775807, 18446744073709551615, 0, "chip.run", 100, 50, "")}, nil, nil},
	}
}

// hostileLimits are hostile logs at the limits: of tracks, of overflow
// lanes, of the flow horizon; and logs with nothing in them.
func hostileLimits() []hostileLog {
	return []hostileLog{
		// The track limit: a new pid on every line, processes with one run
		// each (two spans on the process's one thread), and threads of one
		// process with four runs each.
		{"over the track limit", []string{string(stracetest.DistinctPids(300))}, []phasetrace.Option{phasetrace.WithMaxTracks(64)}, overLimit(10_000, 32, 300, 1)},
		{"processes with one run each, over the track limit", []string{string(stracetest.Processes(300))}, []phasetrace.Option{phasetrace.WithMaxTracks(64)}, overLimit(10_000, 32, 300, 2)},
		{"threads of one process, over the track limit", []string{string(stracetest.Threads(300, 4))}, []phasetrace.Option{phasetrace.WithMaxTracks(64)},
			func(t *testing.T, tr *check.Trace, sum *phasetrace.Summary) {
				// One process track and 63 threads: their four runs (of two
				// spans) each are drawn, every run of the other 237 counted.
				if got, want := sum.Spans.Drawn, int64(63*4*2); got != want {
					t.Errorf("%d spans drawn, want %d (63 threads of 4 runs)", got, want)
				}
				if got, want := notDrawnFor(sum, "track limit"), int64(237*4*2); got != want {
					t.Errorf("%d spans counted over the track limit, want %d", got, want)
				}
				if len(tr.Tracks) != 64 {
					t.Errorf("%d tracks, want the limit, 64", len(tr.Tracks))
				}
			}},
		{"5 000 spans on one thread, each overlapping the next", []string{string(stracetest.OverlappingSpans(5000))}, nil, lanesOut(5000-65, 1)},
		{"a chain of 100 000 nested spans", []string{string(stracetest.NestedSpans(100_000))}, nil, lanesOut(100_000-65*perfetto.MaxDepth, 1)},
		{"a hand-off whose dispatch fits no lane of its thread", []string{string(stracetest.BusyDispatch(perfetto.MaxOverflowLanes + 6))}, nil, func(t *testing.T, tr *check.Trace, sum *phasetrace.Summary) {
			if len(tr.Flows) != 0 || len(sum.Unlinked) != 1 {
				t.Errorf("%d arrows, unlinked %v: want none drawn, one counted", len(tr.Flows), sum.Unlinked)
			}
		}},
		// A root read more than the flow horizon after it started, when
		// the runs in flight before it are written: left out of the count.
		{"a root read 40 s after it started", []string{lateRoot()}, nil, func(t *testing.T, tr *check.Trace, sum *phasetrace.Summary) {
			if got := sum.CountersNotDrawn; len(got) != 1 || got[phasetrace.ReasonInFlightLate] != 1 {
				t.Errorf("counters not drawn %v: want the late root's run", got)
			}
			for _, c := range tr.Counters {
				if trackName(tr, c.Track) == "runs in flight" && c.Int > 1 {
					t.Errorf("%d runs in flight at %d: the late root is counted", c.Int, c.TS)
				}
			}
			if sum.Spans.Drawn != sum.Spans.Read {
				t.Errorf("%d spans read, %d drawn", sum.Spans.Read, sum.Spans.Drawn)
			}
		}},
		// Counter tracks give way to slices: under a limit that leaves no
		// room beside the threads, no counter is written, every value
		// counted.
		{"counters under a limit the threads fill", []string{string(stracetest.Threads(10, 2))}, []phasetrace.Option{phasetrace.WithMaxTracks(11)}, func(t *testing.T, tr *check.Trace, sum *phasetrace.Summary) {
			if sum.Spans.Drawn != sum.Spans.Read || len(tr.Counters) != 0 {
				t.Errorf("%d of %d spans drawn, %d counter values: want every span, no counter", sum.Spans.Drawn, sum.Spans.Read, len(tr.Counters))
			}
			// 20 runs' durations, as many less their callable's median,
			// and the process's runs in flight: 1 and 0 at each run, none
			// overlapping.
			if got := sum.CountersNotDrawn[phasetrace.ReasonCounterTrackLimit]; got != 20+20+40 {
				t.Errorf("%d counter values counted over the track limit, want 80", got)
			}
		}},
		{"a two-rank log over a limit of 3 tracks", []string{string(generated(genConfig{Seed: 7, Rounds: 31}))}, []phasetrace.Option{phasetrace.WithMaxTracks(3)}, nil},
		{"empty", []string{""}, nil, nil},
		{"not a log", []string{"hello\nworld\n\x00\xff"}, nil, nil},
	}
}

// lateRoot is a log of one process: runs 1 s apart on one thread, and on
// another a root of 40 s written when it ends, after them.
func lateRoot() string {
	var b strings.Builder
	for i := range 30 {
		ts := int64(1+i) * 1_000_000_000
		b.WriteString(spanLine(ts+600, 4100, 4101, uint64(1+i), 0, "chip.run", ts, 600, ""))
	}
	b.WriteString(spanLine(40_500_000_000, 4100, 4100, 100, 0, "chip.run", 500_000_000, 40_000_000_000, ""))
	return b.String()
}

// remoteWallSetAside checks the logs of remoteLogs whose second machine's
// wall-clock anchors are absurd: m2 unplaced, every span of its log drawn
// and marked so, with why, and its two anchors set aside.
func remoteWallSetAside(t *testing.T, tr *check.Trace, sum *phasetrace.Summary) {
	if sum.Spans.Drawn != sum.Spans.Read {
		t.Errorf("spans: %d read, %d drawn, not drawn %v: want every span drawn", sum.Spans.Read, sum.Spans.Drawn, sum.Spans.NotDrawn)
	}
	if len(sum.Hosts) != 2 {
		t.Fatalf("machines %+v: want two", sum.Hosts)
	}
	h := sum.Hosts[1]
	if h.Machine != "m2" || h.Method != "unplaced" || h.Drawn != sum.Inputs[1].Records["span"] || !strings.Contains(h.Note, "wall-clock anchor") {
		t.Errorf("machine %+v: want m2 unplaced, every span of its log drawn, and why", h)
	}
	if n := sum.NotDrawn[phasetrace.ReasonWallOffAxis]; n != 2 || sum.WallAnchors != 2 {
		t.Errorf("wall anchors written %d, not drawn %v: want m2's two set aside", sum.WallAnchors, sum.NotDrawn)
	}
	var m2 int64
	for _, s := range tr.Slices {
		if m, _ := argOf(s, "machine"); m != "m2" {
			continue
		}
		m2++
		p, _ := argOf(s, "host_placement")
		why, _ := argOf(s, "host_placement_reason")
		if p != "unplaced" || why == nil {
			t.Fatalf("slice %s of m2 says host_placement=%v host_placement_reason=%v", s.Name, p, why)
		}
		if derived, _ := argOf(s, "derived"); derived == true {
			m2-- // an Effective window: drawn, but no span of the log
		}
	}
	if m2 != h.Drawn {
		t.Errorf("%d slices of m2 in the trace, the summary says %d", m2, h.Drawn)
	}
}

// remoteLogs are the logs of two remote machines without the log of the
// host that dispatched to them, the second machine's wall-clock anchors
// all saying wall.
func remoteLogs(wall int64) []string {
	logs, _ := stracetest.GenerateRemote(stracetest.RemoteConfig{Seed: 1, Tasks: 20, Hosts: []stracetest.RemoteHost{
		{Machine: "m1", FwdMin: 20_000, RetMin: 20_000},
		{Machine: "m2", FwdMin: 20_000, RetMin: 20_000, WallNS: wall},
	}})
	return []string{string(logs[1].Log), string(logs[2].Log)}
}

// deviceSlices counts the device slices of a trace by their track, name,
// placement and bound.
func deviceSlices(tr *check.Trace) map[string]int {
	out := map[string]int{}
	for _, s := range tr.Slices {
		if _, ok := argOf(s, "device_ts"); ok {
			b, _ := argOf(s, "bound_ns")
			out[fmt.Sprintf("%s %s ts=%d dur=%d bound=%v", trackName(tr, s.Track), s.Name, s.TS, s.Dur, b)]++
		}
	}
	return out
}

// overLimit checks a log of n processes, pids from first in log order,
// each with one thread and spans spans, past a track limit that leaves
// room for drawn of them: the first drawn processes are drawn, whole and
// labelled, and the spans of the others counted under the limit's reason.
func overLimit(first int32, drawn, n int, spans int64) func(t *testing.T, tr *check.Trace, sum *phasetrace.Summary) {
	return func(t *testing.T, tr *check.Trace, sum *phasetrace.Summary) {
		if got, want := sum.Spans.Drawn, int64(drawn)*spans; got != want {
			t.Errorf("%d spans drawn, want %d (%d processes)", got, want, drawn)
		}
		if got, want := notDrawnFor(sum, "track limit"), int64(n-drawn)*spans; got != want {
			t.Errorf("%d spans counted over the track limit, want %d", got, want)
		}
		if sum.Invocations != 0 && sum.Invocations != int64(drawn) {
			t.Errorf("%d invocations counted, want the %d drawn", sum.Invocations, drawn)
		}
		var procs, threads int
		for _, tk := range tr.Tracks {
			switch {
			case tk.Pid < first || tk.Pid >= first+int32(drawn):
				t.Errorf("a track of pid %d: want those of the first %d processes", tk.Pid, drawn)
			case tk.Kind == "process":
				procs++
				if strings.Contains(tk.Name, "unattributed") {
					t.Errorf("process %d is labelled %q: its survey did not know it", tk.Pid, tk.Name)
				}
			case tk.Kind == "thread":
				threads++
			}
		}
		if procs != drawn || threads != drawn {
			t.Errorf("%d process tracks and %d thread tracks, want %d of each", procs, threads, drawn)
		}
	}
}

// lanesOut checks that n spans were refused because their track's overflow
// lanes ran out, said once for each of tracks tracks.
func lanesOut(n int64, tracks int) func(t *testing.T, tr *check.Trace, sum *phasetrace.Summary) {
	return func(t *testing.T, tr *check.Trace, sum *phasetrace.Summary) {
		var reason phasetrace.Reason
		var got int64
		for r, v := range sum.Spans.NotDrawn {
			if strings.Contains(r.Text(), "overflow lanes") {
				reason, got = r, got+v
			}
		}
		said := 0
		for _, e := range sum.Examples {
			if e.Reason == reason {
				said++
				if !strings.Contains(e.Detail, strconv.FormatInt(n/int64(tracks), 10)) {
					t.Errorf("example %+v does not give the count", e)
				}
			}
		}
		if got != n || said != tracks {
			t.Errorf("%d spans refused for full overflow lanes (%v), said %d times: want %d, said once per track (%d)", got, sum.Spans.NotDrawn, said, n, tracks)
		}
	}
}

// notDrawnFor sums the spans not drawn under the reasons that mention
// what.
func notDrawnFor(sum *phasetrace.Summary, what string) int64 {
	var n int64
	for reason, v := range sum.Spans.NotDrawn {
		if strings.Contains(reason.Text(), what) {
			n += v
		}
	}
	return n
}

// repeated checks that n spans were left out as repeats and the arrows
// (the one hand-off, each run's runner_run → device_wall) drawn once:
// flows in all.
func repeated(n int64, flows int) func(t *testing.T, tr *check.Trace, sum *phasetrace.Summary) {
	return func(t *testing.T, tr *check.Trace, sum *phasetrace.Summary) {
		var dup int64
		for reason, v := range sum.Spans.NotDrawn {
			if strings.HasPrefix(reason.Text(), "duplicate") {
				dup += v
			}
		}
		if dup != n || len(tr.Flows) != flows {
			t.Errorf("%d repeated spans left out (%v), %d flows: want %d and %d", dup, sum.Spans.NotDrawn, len(tr.Flows), n, flows)
		}
	}
}

func TestHostileLogs(t *testing.T) {
	t.Parallel()
	for _, tc := range hostileLogs() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var inputs []phasetrace.Input
			for i, l := range tc.logs {
				inputs = append(inputs, phasetrace.Bytes(fmt.Sprintf("log%d", i), []byte(l)))
			}
			var out bytes.Buffer
			sum, err := phasetrace.Convert(&out, inputs, tc.opts...)
			if err != nil {
				t.Fatalf("Convert: %v", err)
			}
			tr := wholeTrace(t, out.Bytes(), sum)
			if tc.check != nil {
				tc.check(t, tr, sum)
			}
			if testing.Verbose() {
				sum.WriteText(tWriter{t})
			}
		})
	}
}

type tWriter struct{ t *testing.T }

func (w tWriter) Write(b []byte) (int, error) { w.t.Log(string(b)); return len(b), nil }

func TestMisuseIsAnError(t *testing.T) {
	t.Parallel()
	if _, err := phasetrace.Convert(io.Discard, nil); !errors.Is(err, phasetrace.ErrNoInput) {
		t.Errorf("no input: %v", err)
	}
	if _, err := phasetrace.Convert(io.Discard, []phasetrace.Input{{}}); !errors.Is(err, phasetrace.ErrInvalidInput) {
		t.Errorf("zero Input: %v", err)
	}
	if _, err := phasetrace.Convert(io.Discard, []phasetrace.Input{phasetrace.Bytes("a", nil)}, phasetrace.WithPhaseRecords(phasetrace.Input{Name: "r"})); !errors.Is(err, phasetrace.ErrInvalidInput) {
		t.Errorf("zero artifact Input: %v", err)
	}
}

// Under every limit on tracks, the summary says what the trace holds: as
// many slices of spans and as many arrows, and no arrow with an end left
// out (wholeTrace) — for a two-rank log, and for a dispatching host with
// its remote machines, whose arrows are planned before their spans come.
func TestTrackLimitAccount(t *testing.T) {
	t.Parallel()
	remote, _ := stracetest.GenerateRemote(remoteScenarios[1].cfg)
	for _, tc := range []struct {
		name   string
		inputs []phasetrace.Input
		limits []int
	}{
		{"two ranks", []phasetrace.Input{phasetrace.Bytes("gen.log", generated(genConfig{Seed: 7, Rounds: 31}))}, []int{1, 4, 5, 6, 9}},
		{"remote machines", remoteInputs(remote), []int{3, 7, 10, 14}},
	} {
		for _, limit := range tc.limits {
			t.Run(tc.name+"/"+strconv.Itoa(limit), func(t *testing.T) {
				t.Parallel()
				var out bytes.Buffer
				sum, err := phasetrace.Convert(&out, tc.inputs, phasetrace.WithMaxTracks(limit))
				if err != nil {
					t.Fatal(err)
				}
				tr := wholeTrace(t, out.Bytes(), sum)
				t.Logf("%d tracks: %d span slices, %d arrows %v, unlinked %v", limit, sum.Spans.Drawn, len(tr.Flows), sum.Flows, sum.Unlinked)
			})
		}
	}
}

// A known limit: when the writer refuses an arrow's end after an earlier
// flush wrote the other (here a dispatch that fits no lane of its thread,
// drawn 4 200 spans after its submit), the trace holds the submit's flow id
// alone — the trace processor draws no arrow of it. The summary counts no
// arrow, and says so in a note.
func TestStrandedArrowIsSaid(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("[mono_ns=1][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=4000 tid=4001 inv=0 hid=0 depth=0 name=node.submit ts=1000 dur=2000 run_id=1 task_slot=0 role=facade\n" +
		"[mono_ns=2][T0x2][TIMING] emit_host_span: [STRACE] v=1 pid=4000 tid=4002 inv=0 hid=0 depth=0 name=node.dispatch ts=3500 dur=16500 run_id=1 task_slot=0 role=scheduler dispatch_id=1\n")
	const horizon = phasetrace.DefaultFlowHorizon
	for k := range 4200 { // the submit is drawn, then flushed with these
		b.WriteString(spanLine(int64(10+k), 4000, 4003, 0, 0, "ext.app.filler", horizon+10_000+int64(k), 1, ""))
	}
	for i := range perfetto.MaxOverflowLanes + 6 { // every lane of the dispatch's thread
		b.WriteString(spanLine(int64(5000+i), 4000, 4002, 0, 0, "ext.app.busy", int64(3000+i), 10_000, ""))
	}
	b.WriteString(spanLine(6000, 4000, 4003, 0, 0, "ext.app.last", horizon+30_000, 1, "")) // the dispatch is drawn
	var out bytes.Buffer
	sum, err := phasetrace.Convert(&out, []phasetrace.Input{phasetrace.Bytes("stranded.log", []byte(b.String()))})
	if err != nil {
		t.Fatal(err)
	}
	if err := sum.Spans.Check(); err != nil {
		t.Fatal(err)
	}
	tr, err := check.ReadBytes(out.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if n := spanSlices(tr); n != sum.Spans.Drawn {
		t.Errorf("the trace holds %d slices of spans, the summary says %d were drawn", n, sum.Spans.Drawn)
	}
	if len(tr.Flows) != 0 || arrows(sum) != 0 || len(sum.Unlinked) != 1 {
		t.Errorf("%d arrows in the trace, %v in the summary, unlinked %v: want none, and the hand-off counted", len(tr.Flows), sum.Flows, sum.Unlinked)
	}
	var probs []string
	for _, p := range tr.Problems {
		probs = append(probs, p.Name)
	}
	if !slices.Equal(probs, []string{"flow_without_destination"}) {
		t.Errorf("problems %q, want the submit's flow id alone", probs)
	}
	said := false
	for _, n := range sum.Notes {
		said = said || strings.HasPrefix(n, "1 arrow lost an end to the trace writer")
	}
	if !said {
		t.Errorf("notes %q say nothing of the stranded arrow", sum.Notes)
	}
}

// TestCaptureGivenAgainWithOneChange gives a generated capture twice, the
// second time with one byte changed (a dur): appended to the log, and as a
// second log. The copy's spans are counted as duplicates, where they are,
// but for the changed one, which is drawn; the hand-offs are drawn once.
// The trace holds what the capture alone gives, and the changed span.
func TestCaptureGivenAgainWithOneChange(t *testing.T) {
	t.Parallel()
	log := generated(benchConfig(400))
	changed, newDur := stracetest.ChangeOneDur(log, "chip.run.bind.args")
	if changed == nil {
		t.Fatal("the capture holds no chip.run.bind.args")
	}
	lines := int64(bytes.Count(log, []byte("\n")))

	var out1 bytes.Buffer
	sum1, err := phasetrace.Convert(&out1, []phasetrace.Input{phasetrace.Bytes("once.log", log)})
	if err != nil {
		t.Fatal(err)
	}
	tr1 := wholeTrace(t, out1.Bytes(), sum1)
	if sum1.Spans.Read < 4*4096 {
		t.Fatalf("the capture holds %d spans: too few to outlast the recent spans", sum1.Spans.Read)
	}
	for _, tc := range []captureCopy{
		{"appended", []phasetrace.Input{phasetrace.Bytes("twice.log", append(bytes.Clone(log), changed...))}, "twice.log:", lines + 1, " (as in lines 1–"},
		{"a second log", []phasetrace.Input{phasetrace.Bytes("once.log", log), phasetrace.Bytes("copy.log", changed)}, "copy.log:", 1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var out bytes.Buffer
			sum, err := phasetrace.Convert(&out, tc.inputs)
			if err != nil {
				t.Fatal(err)
			}
			tr := wholeTrace(t, out.Bytes(), sum)
			copyCounted(t, tc, tr1, sum1, tr, sum)
			onlyTheChangeMoves(t, tr1, sum1, tr, sum, newDur)
			duplicatesSaid(t, tc, sum)
		})
	}
}

// captureCopy is a capture given again with one change, and where the
// copy's lines are.
type captureCopy struct {
	name   string
	inputs []phasetrace.Input
	copyAt string // where the copy's lines are
	from   int64  // its first line there
	of     string // what its duplicates repeat
}

// copyCounted checks that a capture given again (tr, sum) holds the
// capture's slices (tr1, sum1) and the changed span, no more: the copy's
// records are counted as repeats.
func copyCounted(t *testing.T, tc captureCopy, tr1 *check.Trace, sum1 *phasetrace.Summary, tr *check.Trace, sum *phasetrace.Summary) {
	t.Helper()
	// Appended or as a second log, the copy's bind phase lines and
	// wall-clock anchors are repeats: the trace holds the capture's
	// slices and the changed span, no more.
	if got, want := len(tr.Slices), len(tr1.Slices)+1; got != want {
		t.Errorf("the trace holds %d slices, want %d: the capture's and the changed span", got, want)
	}
	if got, want := sum.NotDrawn[phasetrace.ReasonRepeatedRecord], sum1.Inputs[0].Records["bind-phase"]; want == 0 || got != want {
		t.Errorf("%d bind phase lines counted as repeats, want the copy's %d", got, want)
	}
	if sum.WallAnchors != sum1.WallAnchors || len(tr.Wall) != len(tr1.Wall) {
		t.Errorf("%d wall anchors written (%d in the trace), the capture alone %d (%d)", sum.WallAnchors, len(tr.Wall), sum1.WallAnchors, len(tr1.Wall))
	}
	if tc.of != "" {
		// Appended: the copy's bind phase lines are repeats too, and
		// the first pass learns nothing from the copy (no pipeline
		// lanes from its runs, no second wall anchors).
		lines := sum1.Inputs[0].Records["bind-phase"]
		want := phasetrace.ReasonCounts{phasetrace.ReasonRepeatedRecord: lines}
		if lines == 0 || !cmp.Equal(sum.NotDrawn, want) || !cmp.Equal(sum.Moved, sum1.Moved) || sum.WallAnchors != sum1.WallAnchors || len(sum.Notes) != len(sum1.Notes) {
			t.Errorf("records not drawn %v, moved %v, %d wall anchors, notes %q: want %v, %v, %d, %q",
				sum.NotDrawn, sum.Moved, sum.WallAnchors, sum.Notes, want, sum1.Moved, sum1.WallAnchors, sum1.Notes)
		}
	}
	const reason = phasetrace.ReasonRepeatedSpan
	if got, want := sum.Spans.NotDrawn[reason], sum1.Spans.Read-1; got != want {
		t.Errorf("%d spans counted as %q, want %d (the copy's but the changed one)", got, reason, want)
	}
	if got, want := sum.Spans.Drawn, sum1.Spans.Drawn+1; got != want {
		t.Errorf("%d spans drawn, want %d: the capture's and the changed span", got, want)
	}
	if len(tr1.Flows) == 0 || len(tr.Flows) != len(tr1.Flows) {
		t.Errorf("%d arrows drawn, the capture holds %d", len(tr.Flows), len(tr1.Flows))
	}
}

// onlyTheChangeMoves checks that a repeat disturbs nothing but its own
// changed span (of dur newDur): every other slice of tr is on the track
// the capture alone (tr1) puts it on (no thread's pipeline lanes lost),
// but for at most one neighbour of the changed span, on its thread's
// overflow lane where the changed span, which the writer nests by time,
// overlaps it.
func onlyTheChangeMoves(t *testing.T, tr1 *check.Trace, sum1 *phasetrace.Summary, tr *check.Trace, sum *phasetrace.Summary, newDur int64) {
	t.Helper()
	where := map[string]string{}
	var changedTrack string
	for _, s := range tr1.Slices {
		where[fmt.Sprint(s.Name, "@", s.TS, "+", s.Dur)] = trackName(tr1, s.Track)
	}
	for _, s := range tr.Slices {
		if s.Name == "chip.run.bind.args" && s.Dur == newDur {
			changedTrack = trackName(tr, s.Track)
		}
	}
	moved := 0
	for _, s := range tr.Slices {
		k := fmt.Sprint(s.Name, "@", s.TS, "+", s.Dur)
		if where[k] == "" || where[k] == trackName(tr, s.Track) {
			continue
		}
		moved++
		if !strings.HasPrefix(trackName(tr, s.Track), strings.TrimSuffix(changedTrack, " (overflow 1)")) || moved > 1 {
			t.Errorf("%s is on %q, the capture alone puts it on %q (the changed span is on %q)", k, trackName(tr, s.Track), where[k], changedTrack)
		}
	}
	var movedSpans int64
	for _, n := range sum.Spans.Moved {
		movedSpans += n
	}
	var movedAlone int64
	for _, n := range sum1.Spans.Moved {
		movedAlone += n
	}
	if movedSpans > movedAlone+1 {
		t.Errorf("spans moved %v, the capture alone %v: more than the changed span's neighbour", sum.Spans.Moved, sum1.Spans.Moved)
	}
	found := 0
	for _, s := range tr.Slices {
		if s.Name == "chip.run.bind.args" && s.Dur == newDur {
			found++
		}
	}
	if found != 1 {
		t.Errorf("%d chip.run.bind.args slices with the changed dur %d, want 1", found, newDur)
	}
}

// duplicatesSaid checks that the summary gives duplicates' positions in
// the copy, each saying what it repeats.
func duplicatesSaid(t *testing.T, tc captureCopy, sum *phasetrace.Summary) {
	t.Helper()
	examples := 0
	for _, ex := range sum.Examples {
		if ex.Reason != phasetrace.ReasonRepeatedSpan {
			continue
		}
		examples++
		_, at, _ := strings.Cut(ex.At, tc.copyAt)
		if n, err := strconv.ParseInt(at, 10, 64); err != nil || n < tc.from {
			t.Errorf("a duplicate is said to be at %q, not in the copy (%s from line %d)", ex.At, tc.copyAt, tc.from)
		}
		if !strings.Contains(ex.Detail, tc.of) {
			t.Errorf("a duplicate's detail %q does not say what it repeats", ex.Detail)
		}
	}
	if examples == 0 {
		t.Error("no duplicate's position given")
	}
}

// TestManyCapturesGivenAgain: a capture given again 69 times, each copy
// with its own wall anchor (so that no two copies are equal byte for
// byte). The copies past the first 64 captures are not sketched, which
// the summary says; their spans are still found by the window of recent
// spans, and every copy's span is counted as a duplicate.
func TestManyCapturesGivenAgain(t *testing.T) {
	t.Parallel()
	capture := chipRun(4100, 1, 1_000_000_000) + chipRun(4100, 2, 3_000_000_000)
	var log strings.Builder
	const copies = 70
	for k := range copies {
		log.WriteString(wallLine(1_000_000_000, 4100, 1_000_000_000, 1_767_225_600_000_000_000+int64(k)))
		log.WriteString(capture)
	}
	var out bytes.Buffer
	sum, err := phasetrace.Convert(&out, []phasetrace.Input{phasetrace.Bytes("copies.log", []byte(log.String()))})
	if err != nil {
		t.Fatal(err)
	}
	wholeTrace(t, out.Bytes(), sum)
	per := sum.Spans.Read / copies
	if got, want := sum.Spans.NotDrawn[phasetrace.ReasonRepeatedSpan], (copies-1)*per; got != want || sum.Spans.Drawn != per {
		t.Errorf("%d spans drawn, %d counted as duplicates: want %d and %d", sum.Spans.Drawn, got, per, want)
	}
	note := fmt.Sprintf("%d captures past the first %d not compared with the others for repeated spans", copies-64, 64)
	found := false
	for _, n := range sum.Notes {
		found = found || n == note
	}
	if !found {
		t.Errorf("notes %q, want %q", sum.Notes, note)
	}
}

// A .gz cut in half, cut in its trailer, with a wrong checksum or with
// corrupt compressed data is read through phasetrace.File up to the
// damage: Convert gives no error but a whole trace of the records before
// it, and the summary counts the cut on the log (InputSummary.Cut, with
// where) and is not lossless. Any other read error is still an error.
func TestCutGzipInput(t *testing.T) {
	t.Parallel()
	var log bytes.Buffer
	stracetest.Generate(&log, stracetest.Config{Seed: 1, Rounds: 8})
	want := map[string]string{ // in Cut; "" for none
		"half": "the compressed stream is cut after", "no trailer": "the compressed stream is cut after", "half a trailer": "the compressed stream is cut after",
		"bad checksum": "the gzip checksum does not match after", "corrupt data": "the compressed data is damaged after",
	}
	dir := t.TempDir()
	for _, d := range append([]stracetest.Damaged{{Name: "whole", Gz: stracetest.Gzip(log.Bytes())}}, stracetest.DamagedGzips(log.Bytes())...) {
		c := struct {
			name string
			z    []byte
			want string
		}{d.Name, d.Gz, want[d.Name]}
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			zr, err := gzip.NewReader(bytes.NewReader(c.z))
			if err != nil {
				t.Fatal(err)
			}
			read, rerr := io.ReadAll(zr)
			var ce flate.CorruptInputError
			if c.name == "corrupt data" && !errors.As(rerr, &ce) {
				t.Fatalf("the corrupt stream reads as %v, not corrupt input", rerr)
			}
			rd := strace.NewReader(bytes.NewReader(read))
			for {
				if _, err := rd.Read(); err == io.EOF {
					break
				}
			}
			spans := rd.Stats().Records.Spans
			path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+".log.gz")
			if err := os.WriteFile(path, c.z, 0o644); err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			sum, err := phasetrace.Convert(&out, []phasetrace.Input{phasetrace.File(path)})
			if err != nil {
				t.Fatalf("Convert: %v", err)
			}
			in := sum.Inputs[0]
			if c.want == "" {
				if in.Cut != "" || in.CutAfter != 0 {
					t.Errorf("a whole .gz is cut: %q after %d bytes", in.Cut, in.CutAfter)
				}
			} else {
				if !strings.HasPrefix(in.Cut, c.want) || in.CutAfter != int64(len(read)) || !strings.Contains(in.Cut, strconv.Itoa(len(read))) {
					t.Errorf("cut %q after %d bytes, want %q after the %d bytes gzip gives", in.Cut, in.CutAfter, c.want, len(read))
				}
				if sum.Lossless() {
					t.Error("a cut log is lossless")
				}
				var text strings.Builder
				sum.WriteText(&text)
				if !strings.Contains(text.String(), "; cut: "+in.Cut) {
					t.Errorf("the summary does not say the cut:\n%s", text.String())
				}
			}
			if sum.Spans.Read != spans || spans == 0 {
				t.Errorf("%d spans read, want the %d of what gzip gives", sum.Spans.Read, spans)
			}
			wholeTrace(t, out.Bytes(), sum)
		})
	}
	other := errors.New("read error")
	_, err := phasetrace.Convert(io.Discard, []phasetrace.Input{{Name: "failing", Open: func() (io.ReadCloser, error) {
		return io.NopCloser(io.MultiReader(bytes.NewReader(log.Bytes()[:4096]), iotest.ErrReader(other))), nil
	}}})
	if !errors.Is(err, other) {
		t.Errorf("a read error that is no cut: Convert gives %v", err)
	}
}

// TestDeviceSummaryCountsWhatIsDrawn: device phases the trace writer
// refuses (more mutually overlapping phases than a track has overflow
// lanes) are not counted as placed in their device's summary: its
// aligned and contained counts, and its bound distribution, are the
// device slices the trace holds.
func TestDeviceSummaryCountsWhatIsDrawn(t *testing.T) {
	t.Parallel()
	var dev []any
	for i := range 80 {
		dev = append(dev, fmt.Sprintf("p%02d", i), i*1000, 10_000_000)
	}
	log := chipRun(4100, 1, 1_000_000, dev...)
	var out bytes.Buffer
	sum, err := phasetrace.Convert(&out, []phasetrace.Input{phasetrace.Bytes("run.log", []byte(log))})
	if err != nil {
		t.Fatal(err)
	}
	tr := wholeTrace(t, out.Bytes(), sum)
	var drawn int64
	for _, s := range tr.Slices {
		if _, ok := argOf(s, "device_ts"); ok {
			drawn++
		}
	}
	var placed, bounds int64
	for _, d := range sum.Devices {
		placed += d.Aligned + d.Contained
		bounds += d.Bound.Count + d.WallBound.Count
	}
	if sum.Spans.NotDrawn[phasetrace.ReasonLanesFull] == 0 {
		t.Fatalf("no device phase refused (not drawn %v): the test misses its case", sum.Spans.NotDrawn)
	}
	if placed != drawn || bounds != drawn {
		t.Errorf("the trace holds %d device slices; the device summaries count %d placed, %d bounds", drawn, placed, bounds)
	}
}
