package analysis_test

import (
	"fmt"
	"os"
	"strings"

	"github.com/phasetrace/phasetrace/reduce/analysis"
	"github.com/phasetrace/phasetrace/strace"
)

// Two rounds of a host_build_graph callable: Host and Device only, so the
// Effective, Orch and Sched columns are hidden.
const hbgLog = `[mono_ns=1][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=1 tid=1 inv=1 hid=abc depth=2 name=chip.run.runner_run.device_wall ts=0 dur=20000 clk=dev
[mono_ns=2][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=1 tid=1 inv=1 hid=abc depth=0 name=chip.run ts=100 dur=100000
[mono_ns=3][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=1 tid=1 inv=2 hid=abc depth=2 name=chip.run.runner_run.device_wall ts=0 dur=24000 clk=dev
[mono_ns=4][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=1 tid=1 inv=2 hid=abc depth=0 name=chip.run ts=300 dur=120000
`

func ExampleAnalyzeRounds() {
	log, err := analysis.ReadLog(strings.NewReader(hbgLog), analysis.WithName("run.log"))
	if err != nil {
		panic(err)
	}
	rounds := analysis.AnalyzeRounds(log.Spans)
	fmt.Printf("hid %x (%v): %d rounds, Device captured %d times, mean %d ns\n",
		rounds.Hid, rounds.Role, len(rounds.Rows), rounds.Columns[analysis.ColDevice].N, rounds.Columns[analysis.ColDevice].Mean)
	_ = analysis.WriteRounds(os.Stdout, rounds)
	// Output:
	// hid abc (decode): 2 rounds, Device captured 2 times, mean 22000 ns
	//   Round      Host (us)   Device (us)
	//   ----------------------------------
	//   0              100.0          20.0
	//   1              120.0          24.0
	//   Avg Host: 110.0 us  |  Avg Device: 22.0 us [2/2]  (2 rounds)
}

func ExampleAnalyzeBinds() {
	f, err := os.Open("testdata/bind.log")
	if err != nil {
		panic(err)
	}
	defer f.Close()
	log, err := analysis.ReadLog(f, analysis.WithName("bind.log"))
	if err != nil {
		panic(err)
	}
	st, err := analysis.AnalyzeBinds(log, analysis.WithRounds(3))
	if err != nil {
		panic(err)
	}
	cp := st.ControlPlane
	fmt.Printf("%d binds, %d warm, ranks=%d\n", len(st.Binds), st.Warm, st.Ranks)
	fmt.Printf("control plane over %v: min %d ns (median %.1f, max %d) over %d binds\n",
		cp.Present, cp.Min, cp.Median.Nanos(), cp.Max, cp.N)
	// Output:
	// 6 binds, 4 warm, ranks=2
	// control plane over [host_orch graph_pack arena_h2d]: min 450000 ns (median 457750.0, max 510001) over 4 binds
}

func ExampleProveOverlap() {
	f, err := os.Open("testdata/overlap_ok.log")
	if err != nil {
		panic(err)
	}
	defer f.Close()
	log, _ := analysis.ReadLog(f, analysis.WithName("overlap_ok.log"))
	proof, err := analysis.ProveOverlap(log.Spans)
	fmt.Println(err)
	for _, p := range proof.Pairs {
		fmt.Printf("pid %d: run %d prepared during run %d's device window %v\n",
			p.Successor.Pid, p.Successor.Sequence(), p.Predecessor.Sequence(), p.PredecessorDevice)
	}
	_ = analysis.WriteOverlap(os.Stdout, proof)
	// Output:
	// <nil>
	// pid 7: run 2 prepared during run 1's device window [100,200]
	// pid 7: run 3 prepared during run 2's device window [240,340]
	// pid 8: run 2 prepared during run 1's device window [100,200]
	// Native overlap verified for 3 adjacent dispatch pair(s).
}

// A run's log: its stamp, the backend-autoload state, two spans and a span
// cut mid-write.
const smallLog = `[stamp] 4d31f482 python main.py --rounds 2
[mono_ns=5][T0x1][INFO] report: torch_backend_autoload setting=0 raw="0" raw_truncated=false effective=disabled torch_imported=true torch_npu_loaded=false
[mono_ns=7][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=1 tid=1 inv=1 hid=abc depth=1 name=chip.run.bind ts=110 dur=3000
[mono_ns=8][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=1 tid=1 inv=1 hid=abc depth=0 name=chip.run ts=100 dur=100000
[mono_ns=9][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=1 tid=1 inv=2 hid=abc depth=0 name=chip.run ts=300
`

func ExampleReadLog() {
	log, err := analysis.ReadLog(strings.NewReader(smallLog), analysis.WithName("run.log"))
	if err != nil {
		panic(err)
	}
	stamp, _ := log.Stamp()
	fmt.Printf("%s: stamp %q\n", log.Name, stamp)
	for _, a := range log.Autoload {
		fmt.Printf("autoload: setting=%s effective=%s torch_npu_loaded=%v\n", a.Setting, a.Effective, a.TorchNPULoaded)
	}
	fmt.Printf("%d spans, %d lost\n", len(log.Spans), log.Stats.Lost())
	for _, p := range log.Stats.Problems {
		fmt.Println(p)
	}
	// Output:
	// run.log: stamp "4d31f482 python main.py --rounds 2"
	// autoload: setting=0 effective=disabled torch_npu_loaded=false
	// 2 spans, 1 lost
	// run.log:5: byte 485: strace: torn record: dur: missing
}

// Two invocations of a decode callable: bind, then runner_run with its
// device window, orch and sched running concurrently.
const decodeLog = `[mono_ns=32000][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=1 tid=1 inv=1 hid=d0 depth=3 name=chip.run.runner_run.device_wall.orch ts=2000 dur=30000 clk=dev
[mono_ns=61000][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=1 tid=1 inv=1 hid=d0 depth=3 name=chip.run.runner_run.device_wall.sched ts=1000 dur=60000 clk=dev
[mono_ns=70000][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=1 tid=1 inv=1 hid=d0 depth=2 name=chip.run.runner_run.device_wall ts=0 dur=70000 clk=dev
[mono_ns=4010][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=1 tid=1 inv=1 hid=d0 depth=1 name=chip.run.bind ts=1010 dur=3000
[mono_ns=85000][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=1 tid=1 inv=1 hid=d0 depth=1 name=chip.run.runner_run ts=5000 dur=80000
[mono_ns=91000][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=1 tid=1 inv=1 hid=d0 depth=0 name=chip.run ts=1000 dur=90000
[mono_ns=36000][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=1 tid=1 inv=2 hid=d0 depth=3 name=chip.run.runner_run.device_wall.orch ts=2000 dur=34000 clk=dev
[mono_ns=63000][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=1 tid=1 inv=2 hid=d0 depth=3 name=chip.run.runner_run.device_wall.sched ts=1000 dur=62000 clk=dev
[mono_ns=76000][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=1 tid=1 inv=2 hid=d0 depth=2 name=chip.run.runner_run.device_wall ts=0 dur=76000 clk=dev
[mono_ns=204010][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=1 tid=1 inv=2 hid=d0 depth=1 name=chip.run.bind ts=200010 dur=4000
[mono_ns=290000][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=1 tid=1 inv=2 hid=d0 depth=1 name=chip.run.runner_run ts=204000 dur=86000
[mono_ns=298000][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=1 tid=1 inv=2 hid=d0 depth=0 name=chip.run ts=200000 dur=98000
`

func ExampleAnalyzeTPOT() {
	log, err := analysis.ReadLog(strings.NewReader(decodeLog), analysis.WithName("decode.log"))
	if err != nil {
		panic(err)
	}
	tpot := analysis.AnalyzeTPOT(log.Spans)
	c := tpot.Callables[0]
	fmt.Printf("hid %x (%v): chip.run mean %d ns over %d invocations\n", c.Hid, c.Role, c.Run.Mean, c.Invocations)
	_ = analysis.WriteTPOT(os.Stdout, tpot)
	// Output:
	// hid d0 (decode): chip.run mean 94000 ns over 2 invocations
	// callable hid=d0 — 2 invocation(s)
	//   chip.run: mean=94.0us min=90.0us max=98.0us
	//       chip.run.bind: mean=3.5us (n=2)
	//       chip.run.runner_run: mean=83.0us (n=2)
	//         chip.run.runner_run.device_wall: mean=73.0us (n=2)
	//           chip.run.runner_run.device_wall.orch: mean=32.0us (n=2)
	//           chip.run.runner_run.device_wall.sched: mean=61.0us (n=2)
}

func ExampleAnalyzeTree() {
	log, err := analysis.ReadLog(strings.NewReader(decodeLog), analysis.WithName("decode.log"))
	if err != nil {
		panic(err)
	}
	_ = analysis.WriteTree(os.Stdout, analysis.AnalyzeTree(log.Spans))
	// Output:
	// callable hid=d0 (decode) — median of 2 invocation(s)
	// run                                   94.0 us
	//   bind                                   3.5 us
	//   runner_run                            83.0 us
	//     device_wall            [dev]          73.0 us
	//       Effective              [dev]          61.0 us
	//         orch 32.0  ∥  sched 61.0   (concurrent)
}

func ExampleCompareBinds() {
	read := func(name string) *analysis.Log {
		f, err := os.Open("testdata/" + name)
		if err != nil {
			panic(err)
		}
		defer f.Close()
		log, err := analysis.ReadLog(f, analysis.WithName(name))
		if err != nil {
			panic(err)
		}
		return log
	}
	// Each log holds two runs, each starting with its stamp: two
	// repetitions per arm.
	base := read("compare_base.log").Repetitions()
	measure := read("compare_measure.log").Repetitions()
	c, err := analysis.CompareBinds(base, measure, analysis.WithRounds(3))
	if err != nil {
		panic(err)
	}
	fmt.Println(c.Verdict)
	_ = analysis.WriteComparison(os.Stdout, c)
	// Output:
	// measure faster
	// base:    4d31f482 env SIMPLER_HBG_BIND_BREAKDOWN_ENABLE=1 TORCH_DEVICE_BACKEND_AUTOLOAD=0 python main.py --rounds 3
	// measure: 5e6f7a8b env SIMPLER_HBG_BIND_BREAKDOWN_ENABLE=1 TORCH_DEVICE_BACKEND_AUTOLOAD=0 python main.py --rounds 3
	// stamps: differ only in the commit
	// base: torch_backend_autoload setting=0 raw="0" raw_truncated=false effective=disabled torch_imported=true torch_npu_loaded=false
	// measure: torch_backend_autoload setting=0 raw="0" raw_truncated=false effective=disabled torch_imported=true torch_npu_loaded=false
	//
	// control plane (min of per-bind sums; median / max for spread), ms:
	//   rep    base min        base med/max   meas min        meas med/max      delta
	//   1         0.550       0.550 / 0.550      0.500       0.512 / 0.525     -0.050
	//   2         0.550       0.552 / 0.555      0.520       0.522 / 0.523     -0.030
	//
	// verdict: measure faster
}

func ExampleComparePhases() {
	trees := func(name string) []*analysis.Tree {
		f, err := os.Open("testdata/" + name)
		if err != nil {
			panic(err)
		}
		defer f.Close()
		r := analysis.NewPhaseRepetitions() // split at the stamps, as BindRepetitions
		if err := r.ReadFrom(strace.NewReader(f)); err != nil {
			panic(err)
		}
		return r.Trees()
	}
	c, err := analysis.ComparePhases(trees("compare_base.log"), trees("compare_measure.log"))
	if err != nil {
		panic(err)
	}
	for _, row := range c.Rows[:5] {
		fmt.Printf("%s: %+.0f ns, %+.0f ns: %v\n", row.Leaf, row.Reps[0].DeltaNs(), row.Reps[1].DeltaNs(), row.Verdict)
	}
	// Output:
	// bind: -25000 ns, -32000 ns: measure faster
	// args: +0 ns, +0 ns: no change
	// arena_build: +0 ns, +0 ns: no change
	// runtime_init: +0 ns, +0 ns: no change
	// host_orch: -40000 ns, -10000 ns: measure faster
}

// A row of the steps table, written as CSV (FormatParquet writes the same
// columns for DuckDB). Rows come from phasetrace.WithSteps, or from a
// Steps fed a run's spans. (These two runs of one thread overlap: a
// negative gap.)
func ExampleNewStepWriter() {
	st := analysis.NewSteps()
	st.Begin()
	log, err := analysis.ReadLog(strings.NewReader(hbgLog))
	if err != nil {
		panic(err)
	}
	w := analysis.NewStepWriter(os.Stdout, analysis.TableSteps, analysis.FormatCSV)
	for i := range log.Spans {
		st.Span(&log.Spans[i])
		if log.Spans[i].Depth == 0 { // a run's root comes last
			if row, ok := st.End(); ok {
				row.Run = int64(i/2 + 1)
				_ = w.Write(row)
			}
			st.Begin()
		}
	}
	if err := w.Close(); err != nil {
		panic(err)
	}
	// Output:
	// run,pid,tid,slot,dev,hid,inv,start_ns,wall_ns,chip_run_ns,bind_ns,prep_ns,gap_ns,device_wall_ns,preamble_ns,so_load_ns,graph_build_ns,post_orch_ns,orch_ns,sched_ns,config_validate_ns,arena_wire_ns,sm_reset_ns,effective_ns,bound_ns,cold
	// 1,1,1,,,abc,1,100,,100000,,,,20000,,,,,,,,,,,,false
	// 2,1,1,,,abc,2,300,,120000,,,-99800,24000,,,,,,,,,,,,false
}
