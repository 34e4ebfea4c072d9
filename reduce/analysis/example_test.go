package analysis_test

import (
	"fmt"
	"os"
	"strings"

	"github.com/phasetrace/phasetrace/reduce/analysis"
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
	// Output:
	// <nil>
	// pid 7: run 2 prepared during run 1's device window [100,200]
	// pid 7: run 3 prepared during run 2's device window [240,340]
	// pid 8: run 2 prepared during run 1's device window [100,200]
}
