package reduce_test

import (
	"fmt"

	"github.com/phasetrace/phasetrace/reduce"
)

// A one-thread prefix-only buffer at 50 MHz: RunWall, preamble and
// graph_build stamped, reduced into the spans the runtime logs.
func Example() {
	b, _ := reduce.NewBuffer(1, false)
	b.Phases[reduce.RunWall] = reduce.Record{Start: 990, End: 2010}
	b.Phases[reduce.Preamble] = reduce.Record{Start: 1000, End: 1100}
	b.Phases[reduce.GraphBuild] = reduce.Record{Start: 1100, End: 1900}
	raw, _ := b.AppendBinary(nil)

	buf, err := reduce.DecodeBuffer(raw, 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	r, _ := reduce.Reduce(buf, 50_000_000)
	spans, _ := r.Spans()
	fmt.Printf("origin_cyc=%d\n", r.Origin)
	for _, s := range spans {
		fmt.Printf("depth=%d name=%s ts=%d dur=%d start_cyc=%d\n", s.Depth, s.Name, s.TS, s.Dur, s.StartCyc)
	}
	// Output:
	// origin_cyc=1000
	// depth=2 name=chip.run.runner_run.device_wall ts=0 dur=20400 start_cyc=990
	// depth=3 name=chip.run.runner_run.device_wall.preamble ts=0 dur=2000 start_cyc=1000
	// depth=3 name=chip.run.runner_run.device_wall.graph_build ts=2000 dur=16000 start_cyc=1100
}

// DecodeBuffer's errors say where and what was expected, and unwrap to
// sentinels.
func ExampleDecodeBuffer_error() {
	_, err := reduce.DecodeBuffer(make([]byte, 100), 1)
	fmt.Println(err)
	// Output:
	// reduce: device-phase buffer: offset 96: truncated buffer: want phase record 5 of 10 (thread 0, OrchWindow), 16 bytes; buffer is 100 bytes, 1 threads need 176
}

// Placing a run read back from a log: one anchor at 1 GHz and the run's
// runner_run window.
func ExamplePlacer() {
	dom := reduce.Domain{Pid: 4242, Dev: 0}
	p := reduce.NewPlacer()
	// [CLOCK_ANCHOR] v=2 pid=4242 dev=0 host_ns=5000000 window_ns=800 dev_cyc=777000000 dev_freq=1000000000
	if err := p.AddAnchor(dom, reduce.Anchor{HostNs: 5_000_000, WindowNs: 800, DevCyc: 777_000_000, DevFreq: 1_000_000_000}); err != nil {
		fmt.Println(err)
		return
	}
	run := reduce.Run{
		Domain: dom, Origin: 777_050_000, HasOrigin: true, // origin_cyc on device_wall
		Spans: []reduce.DeviceSpan{
			{Name: reduce.WallName, Depth: 2, TS: 0, Dur: 30_000},
			{Name: reduce.WallName + ".preamble", Depth: 3, TS: 0, Dur: 5_000},
			{Name: reduce.WallName + ".post_orch", Depth: 3, TS: 20_000, Dur: 8_000},
		},
		RunnerRun: &reduce.HostWindow{Start: 5_040_000, End: 5_140_000},
	}
	pl, err := p.Place(run)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%v: device ts 0 at host %d ns, rate error %d ppb\n", pl.Method, pl.Origin, pl.Rate)
	for i, x := range pl.Spans {
		fmt.Printf("%s: [%d, %d] ± %d ns\n", run.Spans[i].Name, x.HostStart, x.HostEnd, x.Bound)
	}
	// Output:
	// aligned: device ts 0 at host 5050401 ns, rate error 0 ppb
	// chip.run.runner_run.device_wall: [5049401, 5079401] ± 1417 ns
	// chip.run.runner_run.device_wall.preamble: [5050401, 5055401] ± 413 ns
	// chip.run.runner_run.device_wall.post_orch: [5070401, 5078401] ± 415 ns
}

func ExampleHz_Nanos() {
	// 2^64−1 cycles at 50 MHz do not fit int64 ns; 2^40 do, exactly.
	f := reduce.Hz(50_000_000)
	ns, err := f.Nanos(1 << 40)
	fmt.Println(ns, err)
	_, err = f.Nanos(1<<64 - 1)
	fmt.Println(err != nil)
	// Output:
	// 21990232555520 <nil>
	// true
}
