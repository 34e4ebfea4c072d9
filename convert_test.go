package phasetrace_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/phasetrace/phasetrace"
	"github.com/phasetrace/phasetrace/perfetto/check"
	"github.com/phasetrace/phasetrace/strace"
	"github.com/phasetrace/phasetrace/strace/stracetest"
)

// convert runs a conversion and reads the trace back, failing on anything
// the trace processor would report; the slices are named by their full
// names (fullNamed).
func convert(t *testing.T, inputs []phasetrace.Input, opts ...phasetrace.Option) (*check.Trace, *phasetrace.Summary, []byte) {
	t.Helper()
	var out bytes.Buffer
	sum, err := phasetrace.Convert(&out, inputs, opts...)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := readTrace(out.Bytes()) // without the conversion instant
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Err(); err != nil {
		t.Fatalf("the trace processor would report: %v", err)
	}
	return fullNamed(t, tr), sum, out.Bytes()
}

func sampleInput(t *testing.T) phasetrace.Input {
	b, err := os.ReadFile(samplePath)
	if err != nil {
		t.Fatal(err)
	}
	return phasetrace.Bytes("sample.log", b)
}

// golden compares got with testdata/name; -update rewrites it. On a
// mismatch the new output is kept beside it as name.got.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	stracetest.Golden(t, filepath.Join("testdata", name), got)
}

func TestSampleGolden(t *testing.T) {
	t.Parallel()
	_, sum, out := convert(t, []phasetrace.Input{sampleInput(t)})
	goldenConversion(t, "sample", out, sum)
}

// goldenConversion compares a conversion's trace, read back as it is
// (slices by their labels), and its summary with testdata/NAME.golden and
// testdata/NAME.summary.
func goldenConversion(t *testing.T, name string, out []byte, sum *phasetrace.Summary) {
	t.Helper()
	tr, err := check.ReadBytes(out)
	if err != nil {
		t.Fatal(err)
	}
	var dump, text bytes.Buffer
	if err := tr.Dump(&dump); err != nil {
		t.Fatal(err)
	}
	golden(t, name+".golden", dump.Bytes())
	if err := sum.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	golden(t, name+".summary", text.Bytes())
}

func TestDeterministic(t *testing.T) {
	t.Parallel()
	_, _, a := convert(t, []phasetrace.Input{sampleInput(t)})
	_, _, b := convert(t, []phasetrace.Input{sampleInput(t)})
	if !bytes.Equal(a, b) {
		t.Error("the same input gave different bytes")
	}
}

// argOf returns a slice's argument.
func argOf(s check.Slice, name string) (any, bool) {
	for _, a := range s.Args {
		if a.Name == name {
			return a.Value, true
		}
	}
	return nil, false
}

func trackName(tr *check.Trace, uuid uint64) string {
	t, _ := tr.Track(uuid)
	return t.Name
}

// TestDevicePlacementHoldsTheTruth converts a generated log whose device
// side is simulated (counter offsets, drift, anchors read at random points
// of their windows) and checks every drawn device span against the instant
// it really started: the published bound must always hold.
func TestDevicePlacementHoldsTheTruth(t *testing.T) {
	t.Parallel()
	for _, cfg := range []genConfig{
		{Seed: 11, Rounds: 40, AnchorEvry: 100_000_000, Pipelined: true},
		{Seed: 12, Rounds: 40, AnchorEvry: 1_000_000_000},
		{Seed: 13, Rounds: 20}, // no anchors: containment alone
	} {
		t.Run(fmt.Sprintf("anchors every %d ms", cfg.AnchorEvry/1e6), func(t *testing.T) {
			t.Parallel()
			log, truth := generatedWithTruth(cfg)
			tr, sum, _ := convert(t, []phasetrace.Input{phasetrace.Bytes("gen.log", log)})
			checked, aligned := 0, 0
			var worst int64
			for _, s := range tr.Slices {
				if !strings.HasPrefix(s.Name, "chip.run.runner_run.device_wall") || !isSpanSlice(s) {
					continue
				}
				inv, _ := argOf(s, "inv")
				bound, _ := argOf(s, "bound_ns")
				method, _ := argOf(s, "placement")
				tk, _ := tr.Track(s.Track)
				parent, _ := tr.Track(tk.Parent)
				proc, _ := tr.Track(parent.Parent)
				want, ok := truth[truthKey{proc.Pid, inv.(uint64), s.Name}]
				if !ok {
					t.Fatalf("no truth for %s of pid %d inv %v", s.Name, proc.Pid, inv)
				}
				err := s.TS - want
				if err < 0 {
					err = -err
				}
				worst = max(worst, err)
				if err > bound.(int64) {
					t.Errorf("%s pid %d inv %v drawn at %d, truly at %d: error %d ns exceeds its bound %d ns (%s)", s.Name, proc.Pid, inv, s.TS, want, err, bound, method)
				}
				checked++
				if method == "aligned" {
					aligned++
				}
			}
			if checked != len(truth) {
				t.Errorf("checked %d device spans, the log has %d", checked, len(truth))
			}
			if cfg.AnchorEvry > 0 && aligned != checked {
				t.Errorf("%d of %d spans aligned", aligned, checked)
			}
			if cfg.AnchorEvry == 0 && (aligned != 0 || sum.Devices[0].Contained == 0) {
				t.Errorf("without anchors: %d aligned, summary %+v", aligned, sum.Devices)
			}
			t.Logf("%d device spans, worst error %d ns, bounds %+v", checked, worst, sum.Devices[0].Bound)
		})
	}
}

func TestPipelinedThreadSplitsIntoSlotLanes(t *testing.T) {
	t.Parallel()
	tr, _, _ := convert(t, []phasetrace.Input{phasetrace.Bytes("gen.log", generated(genConfig{Seed: 3, Rounds: 8, Pipelined: true}))})
	lanes := map[string][]check.Slice{}
	for _, s := range tr.Slices {
		if s.Name == "chip.run" {
			name := trackName(tr, s.Track)
			lanes[name] = append(lanes[name], s)
		}
	}
	var names []string
	for n := range lanes {
		names = append(names, n)
	}
	want := []string{"chip child", "pipeline slot 0", "pipeline slot 1"}
	if diff := cmp.Diff(want, slices.Sorted(slices.Values(names))); diff != "" {
		t.Fatalf("lanes of chip.run (-want +got):\n%s", diff)
	}
	for name, runs := range lanes {
		for i, r := range runs {
			if slot, _ := argOf(r, "slot_id"); strings.HasPrefix(name, "pipeline") && fmt.Sprint(slot) != name[len("pipeline slot "):len("pipeline slot ")+1] {
				t.Errorf("run with slot_id %v on lane %q", slot, name)
			}
			if i > 0 && r.TS < runs[i-1].TS+runs[i-1].Dur {
				t.Errorf("lane %q: runs overlap", name)
			}
			if r.Depth != 0 {
				t.Errorf("lane %q: a run nested in another (depth %d)", name, r.Depth)
			}
		}
	}
	// The sequential rank keeps its real tid, named after its role.
	if runs := lanes["chip child"]; len(runs) != 8 {
		t.Errorf("%d runs on the sequential rank's thread, want 8", len(runs))
	}
}

func TestHandOffFlows(t *testing.T) {
	t.Parallel()
	tr, sum, _ := convert(t, []phasetrace.Input{sampleInput(t)})
	kinds := map[string]int{}
	for _, f := range tr.Flows {
		from, to := tr.Slices[f.From], tr.Slices[f.To]
		kind := from.Name + " -> " + to.Name
		kinds[kind]++
		switch kind {
		case "node.submit -> node.dispatch":
			for _, k := range []string{"run_id", "task_slot"} {
				a, _ := argOf(from, k)
				b, _ := argOf(to, k)
				if a != b {
					t.Errorf("flow joins %s %v to %v", k, a, b)
				}
			}
			if from.TS > to.TS {
				t.Errorf("submit at %d after its dispatch at %d", from.TS, to.TS)
			}
		case "node.dispatch -> chip.run":
			a, _ := argOf(from, "dispatch_id")
			b, _ := argOf(to, "dispatch_id")
			if a != b {
				t.Errorf("launch flow joins dispatch_id %v to %v", a, b)
			}
		case "chip.run.runner_run -> chip.run.runner_run.device_wall":
			for _, k := range []string{"run", "inv"} {
				a, _ := argOf(from, k)
				b, _ := argOf(to, k)
				if a == nil || a != b {
					t.Errorf("flow joins %s %v to %v", k, a, b)
				}
			}
			if from.TS >= to.TS {
				t.Errorf("runner_run at %d, its device_wall at %d: an arrow's start must come first", from.TS, to.TS)
			}
		default:
			t.Errorf("unexpected flow %s", kind)
		}
	}
	want := map[string]int{"node.submit -> node.dispatch": 24, "node.dispatch -> chip.run": 24, "chip.run.runner_run -> chip.run.runner_run.device_wall": 24}
	if diff := cmp.Diff(want, kinds); diff != "" {
		t.Errorf("flows (-want +got):\n%s", diff)
	}
	wantSum := phasetrace.FlowCounts{phasetrace.FlowSubmitToDispatch: 24, phasetrace.FlowDispatchToRun: 24, phasetrace.FlowRunToDevice: 24}
	if diff := cmp.Diff(wantSum, sum.Flows); diff != "" {
		t.Errorf("summary flows (-want +got):\n%s", diff)
	}
}

func TestMergedLogsGiveTheSameTrace(t *testing.T) {
	t.Parallel()
	// The L3 parent's records in one file and the ranks' in another, as
	// separate processes would write them: merged by write time, the trace
	// is the one a single shared log gives.
	b, _ := os.ReadFile(samplePath)
	var l3, ranks bytes.Buffer
	for _, line := range bytes.SplitAfter(b, []byte("\n")) {
		if bytes.Contains(line, []byte("pid=4000 ")) && bytes.Count(line, []byte("[STRACE]"))+bytes.Count(line, []byte("[CLOCK_ANCHOR]")) == 1 {
			l3.Write(line)
		} else {
			ranks.Write(line)
		}
	}
	one, _, _ := convert(t, []phasetrace.Input{sampleInput(t)})
	two, sum, _ := convert(t, []phasetrace.Input{phasetrace.Bytes("l3.log", l3.Bytes()), phasetrace.Bytes("ranks.log", ranks.Bytes())})
	var a, c bytes.Buffer
	one.Dump(&a)
	two.Dump(&c)
	if diff := cmp.Diff(a.String(), c.String()); diff != "" {
		t.Errorf("merged trace differs (-one log +two logs):\n%s", diff)
	}
	if len(sum.Inputs) != 2 || sum.Inputs[0].Records["span"]+sum.Inputs[1].Records["span"] != 656 {
		t.Errorf("inputs %+v", sum.Inputs)
	}
}

func TestBindStage(t *testing.T) {
	t.Parallel()
	tr, sum, _ := convert(t, []phasetrace.Input{sampleInput(t)})
	// The legacy "bind phase=" lines of rank 4200 are drawn inside their
	// chip.run.bind.
	legacy := 0
	for _, s := range tr.Slices {
		if src, _ := argOf(s, "src"); src == "bind_phase" {
			legacy++
			if s.Parent < 0 || tr.Slices[s.Parent].Name != "chip.run.bind" {
				t.Errorf("legacy segment %s not inside chip.run.bind", s.Name)
			}
		}
		// Segment spans show their time off the CPU.
		if strings.HasPrefix(s.Name, "chip.run.bind.") {
			on, ok1 := argOf(s, "on_cpu_ns")
			off, ok2 := argOf(s, "off_cpu_ns")
			if ok1 != ok2 || (ok1 && on.(int64)+off.(int64) != s.Dur) {
				t.Errorf("%s: on %v + off %v != dur %d", s.Name, on, off, s.Dur)
			}
		}
	}
	if legacy != 40 || sum.NotDrawn != nil {
		t.Errorf("%d legacy segments drawn, not drawn %v", legacy, sum.NotDrawn)
	}
}

func TestPhaseRecordsWin(t *testing.T) {
	t.Parallel()
	// host_phase_records for rank 4100's run inv=2: its segments come from
	// the artifact and the log's own segment spans for that bind are not
	// drawn a second time; orchestrator operations recorded on a worker
	// thread land there.
	tr0, _, _ := convert(t, []phasetrace.Input{sampleInput(t)})
	var bind check.Slice
	for _, s := range tr0.Slices {
		if inv, _ := argOf(s, "inv"); s.Name == "chip.run.bind" && inv == uint64(2) && pidOf(tr0, s.Track) == 4100 {
			bind = s
		}
	}
	if bind.Name == "" {
		t.Fatal("no bind of pid 4100 inv 2")
	}
	b0 := bind.TS
	records := fmt.Sprintf(`{"pid": 4100, "inv": 2, "clock": "host_monotonic_ns", "dropped": 0, "records": [`+
		`{"phase": "args", "start_ns": %d, "end_ns": %d}, {"phase": "host_orch", "start_ns": %d, "end_ns": %d}, `+
		`{"phase": "submit_task", "start_ns": %d, "end_ns": %d, "detail": 3}, {"phase": "record_node", "start_ns": %d, "end_ns": %d, "tid": 4199}]}
{"pid": 4100, "inv": 99, "records": []}
{"pid": 41`, b0, b0+1000, b0+2000, b0+9000, b0+2500, b0+2600, b0+3000, b0+4000)
	tr, sum, _ := convert(t, []phasetrace.Input{sampleInput(t)}, phasetrace.WithPhaseRecords(phasetrace.Bytes("host_phase_records.jsonl", []byte(records))))
	got := map[string][]string{}
	for _, s := range tr.Slices {
		if inv, _ := argOf(s, "inv"); inv == uint64(2) && strings.HasPrefix(s.Name, "chip.run.bind.") && s.TS >= b0 && s.TS < bind.TS+bind.Dur {
			src, _ := argOf(s, "src")
			got[s.Name] = append(got[s.Name], fmt.Sprintf("%v on %s", src, trackName(tr, s.Track)))
		}
	}
	lane := trackName(tr, bind.Track)
	want := map[string][]string{
		"chip.run.bind.args":                  {"host_phase_records on " + lane},
		"chip.run.bind.host_orch":             {"host_phase_records on " + lane},
		"chip.run.bind.host_orch.submit_task": {"host_phase_records on " + lane},
		"chip.run.bind.host_orch.record_node": {"host_phase_records on graph record worker"},
		"chip.run.bind.arena_build":           {"<nil> on " + lane},
		"chip.run.bind.runtime_init":          {"<nil> on " + lane},
		"chip.run.bind.graph_pack":            {"<nil> on " + lane},
		"chip.run.bind.static_arena":          {"<nil> on " + lane},
		"chip.run.bind.shared_mem":            {"<nil> on " + lane},
		"chip.run.bind.gm_heap":               {"<nil> on " + lane},
		"chip.run.bind.host_view_close":       {"<nil> on " + lane},
		"chip.run.bind.arena_h2d":             {"<nil> on " + lane},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("bind segments of pid 4100 inv 2 (-want +got):\n%s", diff)
	}
	if n := sum.Spans.Superseded; n != 2 {
		t.Errorf("superseded segments %d, want 2 (args, host_orch)", n)
	}
	if n := sum.NotDrawn[phasetrace.ReasonPassesWithoutBind]; n != 1 {
		t.Errorf("passes without a bind: %d, want 1 (inv 99)", n)
	}
	if a := sum.Artifacts[0]; a.Items != 2 || a.Torn != 1 {
		t.Errorf("artifact summary %+v, want 2 passes and a torn last line", a)
	}
}

func TestWallTimeAndLabels(t *testing.T) {
	t.Parallel()
	tr, sum, _ := convert(t, []phasetrace.Input{sampleInput(t)})
	// The three anchors, and the first's extrapolated to the trace's
	// start in its first clock snapshot.
	if !sum.WallTime || len(tr.Wall) != 4 || tr.Wall[0].TS != 0 || tr.Wall[0].Wall-tr.Wall[0].TS != 1_767_225_600_000_000_000 {
		t.Errorf("wall time %v, snapshots %+v", sum.WallTime, tr.Wall)
	}
	var procs []string
	for _, tk := range tr.Tracks {
		if tk.Kind == "process" {
			procs = append(procs, fmt.Sprintf("%d %s", tk.SortIndex, tk.Name))
		}
	}
	slices.Sort(procs) // declared as they are first drawn on, ordered by their SortIndex
	want := []string{"1 simpler node (pid=4000)", "2 simpler chip child (pid=4100)", "3 simpler chip child (pid=4200)", "4 external producer serving (pid=4300)"}
	if diff := cmp.Diff(want, procs); diff != "" {
		t.Errorf("processes (-want +got):\n%s", diff)
	}
	// An ext. span stays on the thread that emitted it and encloses the run
	// it wrapped.
	for _, s := range tr.Slices {
		if s.Name == "chip.run" && trackName(tr, s.Track) == "chip child" && (s.Parent < 0 || tr.Slices[s.Parent].Name != "ext.pypto.decode_step") {
			t.Errorf("chip.run at %d not inside its ext.pypto.decode_step", s.TS)
		}
	}
}

func TestReaderLossesReachTheSummary(t *testing.T) {
	t.Parallel()
	log := append([]byte(nil), generated(genConfig{Seed: 5, Rounds: 2})...)
	log = append(log, "[mono_ns=9][T0x1][TIMING] emit_host_span: [STRACE] v=7 pid=1 tid=1 inv=1 hid=1 depth=0 name=x ts=1 dur=1\n"...)
	log = append(log, "[mono_ns=9][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=1 tid=1 inv=1 hid=zz depth=0 name=x ts=1 dur=1\n"...)
	log = append(log, "[mono_ns=9][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=4100 tid=4100 inv=7 hid=1 depth=1 name=chip.run.bind ts=5 dur=1\n"...)
	long := "[mono_ns=9][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=1 tid=1 inv=1 hid=1 depth=0 name=x ts=1 dur=1 big=" + strings.Repeat("x", 70_000) + "\n"
	log = append(log, long...)
	log = append(log, "[mono_ns=9][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=4100 tid=4100 inv=7 hid=1 depth=1 name=chip.run.bi"...)
	_, sum, _ := convert(t, []phasetrace.Input{phasetrace.Bytes("cut.log", log)})
	in := sum.Inputs[0]
	if in.Torn != 1 || in.UnknownVersion != 1 || in.Malformed != 1 || in.LongLines != 1 || in.InLongLines != 1 || len(in.Problems) != 4 {
		t.Errorf("input summary %+v", in)
	}
	if sum.Incomplete != 1 {
		t.Errorf("%d incomplete runs, want 1 (inv 7 never closed)", sum.Incomplete)
	}
	var text bytes.Buffer
	sum.WriteText(&text)
	for _, want := range []string{"lost 4 records: 1 torn (cut while being written), 1 of an unknown version, 1 malformed, 1 in 1 over-long line", "cut.log:", "without their root span"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("summary text lacks %q:\n%s", want, text.String())
		}
	}
}

func TestInconsistentAnchorsAreReported(t *testing.T) {
	t.Parallel()
	// The reader's own sample has clock anchors that contradict its runs'
	// runner_run windows: those runs are placed by containment and say why.
	tr, sum, _ := convert(t, []phasetrace.Input{phasetrace.File("strace/testdata/realistic.log")})
	var d *phasetrace.DeviceSummary
	for i := range sum.Devices {
		if sum.Devices[i].Pid == 3200 {
			d = &sum.Devices[i]
		}
	}
	if d == nil || d.Inconsists == 0 || d.Contained == 0 {
		t.Fatalf("device summary %+v", sum.Devices)
	}
	found := false
	runs := map[any]bool{} // the runs the trace says were contained for a conflict
	for _, s := range tr.Slices {
		if r, ok := argOf(s, "placement_reason"); ok && strings.Contains(r.(string), "clock anchors disagree with containment") {
			found = true
			inv, _ := argOf(s, "inv")
			runs[inv] = true
			if m, _ := argOf(s, "placement"); m != "contained" {
				t.Errorf("%s placed %v despite inconsistent anchors", s.Name, m)
			}
		}
	}
	var conflicted int64
	for _, c := range d.Conflicts {
		conflicted += c.Runs
	}
	if !found || conflicted != d.Inconsists || conflicted != int64(len(runs)) {
		t.Errorf("the summary's conflicts %+v (%d runs, %d inconsistent); the trace marks %d runs contained for a conflict", d.Conflicts, conflicted, d.Inconsists, len(runs))
	}
	var text bytes.Buffer
	sum.WriteText(&text)
	if c := strings.Count(text.String(), "in conflict, placed by containment alone"); c != len(d.Conflicts) {
		t.Errorf("the summary names %d conflicts, want one line for each of %d:\n%s", c, len(d.Conflicts), text.String())
	}
}

func TestNoInput(t *testing.T) {
	t.Parallel()
	if _, err := phasetrace.Convert(&bytes.Buffer{}, nil); !errors.Is(err, phasetrace.ErrNoInput) {
		t.Errorf("error %v, want ErrNoInput", err)
	}
	_, err := phasetrace.Convert(&bytes.Buffer{}, []phasetrace.Input{phasetrace.File("testdata/does-not-exist.log")})
	if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "does-not-exist.log") {
		t.Errorf("error %v, want the missing file named", err)
	}
}

// TestLogsFromTwoHosts moves one rank to another host — its CLOCK_MONOTONIC
// 3 days ahead, its wall clock the same — in a log of its own: the two logs
// convert to the same trace as the one log, their wall-clock anchors
// putting the second host's times back on the first's axis.
func TestLogsFromTwoHosts(t *testing.T) {
	t.Parallel()
	b, _ := os.ReadFile(samplePath)
	const ahead = 3 * 24 * 3600 * 1_000_000_000
	var hostA, hostB bytes.Buffer
	r := strace.NewReader(bytes.NewReader(b))
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		pid := rec.Span.Pid
		switch rec.Kind {
		case strace.KindWallAnchor:
			pid = rec.WallAnchor.Pid
		case strace.KindDeviceAnchor:
			pid = rec.DeviceAnchor.Pid
		}
		out := &hostA
		if pid == 4200 || (rec.Kind == strace.KindBindPhase && rec.Prefix.Thread == 0x7f3a2d6ff640) {
			out = &hostB
			rec.Prefix.MonoNS += ahead
			switch rec.Kind {
			case strace.KindSpan:
				if !rec.Span.IsDevice() {
					rec.Span.TS += ahead
				}
			case strace.KindWallAnchor:
				rec.WallAnchor.MonoNS += ahead
			case strace.KindDeviceAnchor:
				rec.DeviceAnchor.HostNS += ahead
			case strace.KindBindPhase:
				rec.BindPhase.StartNS += ahead
			}
		}
		line, err := strace.AppendRecord(nil, &rec)
		if err != nil {
			t.Fatal(err)
		}
		out.Write(line)
	}
	one, _, _ := convert(t, []phasetrace.Input{sampleInput(t)})
	two, _, _ := convert(t, []phasetrace.Input{phasetrace.Bytes("hostA.log", hostA.Bytes()), phasetrace.Bytes("hostB.log", hostB.Bytes())})
	var a, c bytes.Buffer
	one.Dump(&a)
	two.Dump(&c)
	// The only difference: what says which machine a process ran on and
	// how host B was placed (by its wall-clock anchor: no tasks link them).
	got := c.String()
	for _, m := range []struct{ mark, was string }{{` machine="hostB" host_placement="wall"`, ""}, {" on hostB)", ")"}} {
		if !strings.Contains(got, m.mark) {
			t.Errorf("two hosts' trace does not say %q", m.mark)
		}
		got = strings.ReplaceAll(got, m.mark, m.was)
	}
	// Host B's device phases publish no bound: theirs hold against its own
	// clock, and its wall clock puts it on the axis only to NTP grade.
	for _, s := range two.Slices {
		if m, _ := argOf(s, "machine"); m != "hostB" {
			continue
		}
		if b, ok := argOf(s, "bound_ns"); ok {
			t.Errorf("%s on hostB, placed by its wall clock, claims bound_ns=%v", s.Name, b)
		}
	}
	bounds := regexp.MustCompile(` bound_ns=[0-9]+`)
	if diff := cmp.Diff(bounds.ReplaceAllString(a.String(), ""), bounds.ReplaceAllString(got, "")); diff != "" {
		t.Errorf("two hosts' logs differ from one log (-one +two):\n%s", diff)
	}
}

// A legacy "bind phase=" line names no pid: when two ranks bind at once it
// belongs to the bind its own thread (the log prefix's handle) wrote.
func TestBindLineFollowsItsThread(t *testing.T) {
	t.Parallel()
	const log = `[mono_ns=100][T0xa][TIMING] bind_phases: bind phase=args start_ns=20 dur_ns=10 cpu_ns=5
[mono_ns=150][T0xb][TIMING] emit_host_span: [STRACE] v=1 pid=2 tid=2 inv=1 hid=1 depth=2 name=chip.run.bind.args ts=15 dur=30 cpu_ns=20
[mono_ns=160][T0xb][TIMING] emit_host_span: [STRACE] v=1 pid=2 tid=2 inv=1 hid=1 depth=1 name=chip.run.bind ts=10 dur=100 
[mono_ns=170][T0xb][TIMING] emit_host_span: [STRACE] v=1 pid=2 tid=2 inv=1 hid=1 depth=0 name=chip.run ts=10 dur=150 
[mono_ns=180][T0xa][TIMING] emit_host_span: [STRACE] v=1 pid=1 tid=1 inv=1 hid=1 depth=1 name=chip.run.bind ts=5 dur=100 
[mono_ns=190][T0xa][TIMING] emit_host_span: [STRACE] v=1 pid=1 tid=1 inv=1 hid=1 depth=0 name=chip.run ts=5 dur=150 
`
	tr, sum, _ := convert(t, []phasetrace.Input{phasetrace.Bytes("two.log", []byte(log))})
	var got []string
	for _, s := range tr.Slices {
		if s.Name == "chip.run.bind.args" {
			src, _ := argOf(s, "src")
			tk, _ := tr.Track(s.Track)
			got = append(got, fmt.Sprintf("%d %v", tk.Pid, src))
		}
	}
	want := []string{"2 <nil>", "1 bind_phase"}
	if diff := cmp.Diff(want, got); diff != "" || sum.NotDrawn != nil {
		t.Errorf("bind segments (-want +got):\n%s\nnot drawn: %v", diff, sum.NotDrawn)
	}
}

// TestPhaseRecordsThreadName checks that a thread whose binds carry
// host_phase_records is named as the runtime's reader names it.
func TestPhaseRecordsThreadName(t *testing.T) {
	t.Parallel()
	log := chipRun(4100, 1, 1_000_000) + chipRun(4100, 2, 30_000_000)
	records := `{"pid": 4100, "inv": 1, "records": [{"phase": "args", "start_ns": 1000000, "end_ns": 1050000}, {"phase": "host_orch", "start_ns": 1060000, "end_ns": 1200000}]}` + "\n"
	for _, c := range []struct {
		opts []phasetrace.Option
		want string
	}{
		{nil, "chip child"},
		{[]phasetrace.Option{phasetrace.WithPhaseRecords(phasetrace.Bytes("host_phase_records.jsonl", []byte(records)))}, "graph submit main"},
	} {
		tr, _, _ := convert(t, []phasetrace.Input{phasetrace.Bytes("run.log", []byte(log))}, c.opts...)
		var names []string
		for _, tk := range tr.Tracks {
			if tk.Kind == "thread" {
				names = append(names, tk.Name)
			}
		}
		if diff := cmp.Diff([]string{c.want}, names); diff != "" {
			t.Errorf("%d options: thread names (-want +got):\n%s", len(c.opts), diff)
		}
	}
}

// TestColdRuns: the earliest chip.run of each callable (hid) of a process,
// and its chip.run.bind, carry cold=true; no other slice does.
func TestColdRuns(t *testing.T) {
	t.Parallel()
	for _, in := range []phasetrace.Input{sampleInput(t), phasetrace.Bytes("gen.log", generated(genConfig{Seed: 5, Rounds: 12, Ranks: 3, Pipelined: true, AnchorEvry: 100_000_000}))} {
		tr, _, _ := convert(t, []phasetrace.Input{in})
		type key struct {
			pid int32
			hid string
		}
		first := map[key]check.Slice{}
		for _, s := range tr.Slices {
			if d, _ := argOf(s, "depth"); s.Name != "chip.run" || d != int64(0) {
				continue // the logged depth: an ext. span may wrap a run
			}
			hid, _ := argOf(s, "hid")
			k := key{pidOf(tr, s.Track), fmt.Sprint(hid)}
			if f, ok := first[k]; !ok || s.TS < f.TS {
				first[k] = s
			}
		}
		coldInv := map[key]any{}
		for k, s := range first {
			coldInv[k], _ = argOf(s, "inv")
		}
		marked := 0
		for _, s := range tr.Slices {
			cold, isCold := argOf(s, "cold")
			hid, _ := argOf(s, "hid")
			inv, _ := argOf(s, "inv")
			want := (s.Name == "chip.run" || s.Name == "chip.run.bind") && coldInv[key{pidOf(tr, s.Track), fmt.Sprint(hid)}] == inv
			if isCold != want || isCold && cold != true {
				t.Errorf("%s: %s pid %d inv %v marked cold=%v, want %v", in.Name, s.Name, pidOf(tr, s.Track), inv, cold, want)
			}
			if isCold {
				marked++
			}
		}
		if marked != 2*len(first) {
			t.Errorf("%s: %d slices marked cold, want a chip.run and its bind for each of %d callables", in.Name, marked, len(first))
		}
	}
}
