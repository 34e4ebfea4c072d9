package reduce_test

import (
	"fmt"

	"github.com/phasetrace/phasetrace/reduce"
	"github.com/phasetrace/phasetrace/strace"
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
			{Name: strace.SpanDeviceWall, Depth: 2, TS: 0, Dur: 30_000},
			{Name: strace.SpanDeviceWall + ".preamble", Depth: 3, TS: 0, Dur: 5_000},
			{Name: strace.SpanDeviceWall + ".post_orch", Depth: 3, TS: 20_000, Dur: 8_000},
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
	// aligned: device ts 0 at host 5050400 ns, rate error 0 ppb
	// chip.run.runner_run.device_wall: [5049400, 5079400] ± 1418 ns
	// chip.run.runner_run.device_wall.preamble: [5050400, 5055400] ± 414 ns
	// chip.run.runner_run.device_wall.post_orch: [5070400, 5078400] ± 416 ns
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

// A run's Mapping maps any device offset to host time, and draws a device
// window with the bound that holds at both of its ends.
func ExampleMapping() {
	dom := reduce.Domain{Pid: 4242, Dev: 0}
	p := reduce.NewPlacer()
	if err := p.AddAnchor(dom, reduce.Anchor{HostNs: 5_000_000, WindowNs: 800, DevCyc: 777_000_000, DevFreq: 1_000_000_000}); err != nil {
		fmt.Println(err)
		return
	}
	pl, err := p.Place(reduce.Run{Domain: dom, Origin: 777_050_000, HasOrigin: true,
		Spans: []reduce.DeviceSpan{{Name: strace.SpanDeviceWall + ".preamble", Depth: 3, Dur: 5_000}}})
	if err != nil {
		fmt.Println(err)
		return
	}
	h, err := pl.Host(20_000) // device ts 20 µs
	fmt.Println(h, err)
	sp, err := pl.Mapping.Place(reduce.DeviceWindow{Start: 20_000, End: 28_000})
	fmt.Printf("[%d, %d] ± %d ns %v\n", sp.HostStart, sp.HostEnd, sp.Bound, err)
	// Output:
	// 5070400 <nil>
	// [5070400, 5078400] ± 416 ns <nil>
}

// Host is exact and says when a result does not fit: it never falls back
// to its input.
func ExampleMapping_Host() {
	m := reduce.Mapping{Method: reduce.Contained, Origin: 9_223_372_036_854_775_000}
	_, err := m.Host(1_000)
	fmt.Println(err)
	// Output:
	// reduce: value out of range: device offset 1000 ns has no host time
}

// PlaceInto reuses the spans' storage from run to run.
func ExamplePlacer_PlaceInto() {
	p := reduce.NewPlacer()
	run := reduce.Run{
		Spans:     []reduce.DeviceSpan{{Name: strace.SpanDeviceWall + ".preamble", Depth: 3, Dur: 2_000}},
		RunnerRun: &reduce.HostWindow{Start: 1_000_000, End: 1_010_000},
	}
	var pl reduce.Placement
	for range 2 {
		if err := p.PlaceInto(&pl, run); err != nil {
			fmt.Println(err)
			return
		}
	}
	fmt.Println(pl.Method, pl.Reason)
	fmt.Printf("%d ± %d ns\n", pl.Spans[0].HostStart, pl.Spans[0].Bound)
	// Output:
	// contained no clock anchors for pid=0 dev=0
	// 1004000 ± 4007 ns
}

// From a buffer RunWall's true extent is known: device_wall is drawn where
// it began, before the origin.
func ExampleRunFrom() {
	b, _ := reduce.NewBuffer(1, false)
	b.Phases[reduce.RunWall] = reduce.Record{Start: 999_000, End: 1_012_000}
	b.Phases[reduce.Preamble] = reduce.Record{Start: 1_000_000, End: 1_010_000}
	r, _ := reduce.Reduce(b, 1_000_000_000)
	run, err := reduce.RunFrom(r, reduce.Domain{Pid: 1}, &reduce.HostWindow{Start: 50_000, End: 70_000})
	if err != nil {
		fmt.Println(err)
		return
	}
	pl, _ := reduce.NewPlacer().Place(run)
	for i, s := range run.Spans {
		fmt.Printf("%s: [%d, %d]\n", s.Name, pl.Spans[i].HostStart, pl.Spans[i].HostEnd)
	}
	fmt.Println("wall", *run.Wall)
	// Output:
	// chip.run.runner_run.device_wall: [53500, 66500]
	// chip.run.runner_run.device_wall.preamble: [54500, 64500]
	// wall {-1000 12000}
}

// Effective is orch ∪ sched on any axis; an absent window contributes
// nothing.
func ExampleEffective() {
	orch := reduce.DeviceWindow{Start: 100, End: 640}
	sched := reduce.DeviceWindow{Start: 90, End: 1020}
	e := reduce.Effective(orch, sched)
	fmt.Println(e, e.Len())
	fmt.Println(reduce.Effective(orch, reduce.DeviceWindow{}))
	// Output:
	// {90 1020} 930
	// {100 640}
}

// Reduction.Effective derives orch ∪ sched from the stamped windows.
func ExampleReduction_Effective() {
	b, _ := reduce.NewBuffer(2, false)
	b.Phases[reduce.Preamble] = reduce.Record{Start: 1000, End: 1100}
	b.Phases[reduce.OrchWindow] = reduce.Record{Start: 1100, End: 1500}
	b.Phases[reduce.NumPhases+int(reduce.SchedWindow)] = reduce.Record{Start: 1120, End: 1900}
	r, _ := reduce.Reduce(b, 1_000_000_000)
	d, ok, err := r.Effective()
	fmt.Println(d.TS, d.Dur, ok, err)
	// Output:
	// 100 800 true <nil>
}

// A dev= attribute is read as int64; DomainOf checks it fits the log's
// int32 device id.
func ExampleDomainOf() {
	d, err := reduce.DomainOf(4242, 3)
	fmt.Println(d, err)
	_, err = reduce.DomainOf(4242, 1<<40)
	fmt.Println(err)
	// Output:
	// pid=4242 dev=3 <nil>
	// reduce: value out of range: device id 1099511627776
}

// The Placer's options: here a counter known to be within 20 ppm of the
// host clock, which narrows a contained placement 50 ms from the origin.
func ExampleWithMaxRateError() {
	run := reduce.Run{
		Spans:     []reduce.DeviceSpan{{Name: strace.SpanDeviceWall + ".preamble", Depth: 3, TS: 0, Dur: 2_000}, {Name: strace.SpanDeviceWall + ".post_orch", Depth: 3, TS: 50_000_000, Dur: 2_000}},
		RunnerRun: &reduce.HostWindow{Start: 1_000_000, End: 51_010_000},
	}
	for _, opts := range [][]reduce.PlacerOption{nil, {reduce.WithMaxRateError(20_000)}} {
		pl, _ := reduce.NewPlacer(opts...).Place(run)
		fmt.Println(pl.Spans[1].Bound)
	}
	// Output:
	// 11506
	// 5507
}

// Cycles and Nanos convert device-domain durations exactly.
func ExampleHz_Cycles() {
	f := reduce.Hz(50_000_000)
	c, _ := f.Cycles(reduce.DeviceNanos(1_000_030))
	ns, _ := f.Nanos(c)
	fmt.Println(c, ns)
	// Output:
	// 50001 1000020
}

// WallOffset is RunWall's true extent in device offsets from the origin.
func ExampleReduction_WallOffset() {
	b, _ := reduce.NewBuffer(1, false)
	b.Phases[reduce.RunWall] = reduce.Record{Start: 990, End: 2010}
	b.Phases[reduce.Preamble] = reduce.Record{Start: 1000, End: 1100}
	r, _ := reduce.Reduce(b, 50_000_000)
	s, e, ok, err := r.WallOffset()
	fmt.Println(s, e, ok, err)
	// Output:
	// -200 20200 true <nil>
}

// Extent is one window type per axis; Window.Extent views a reduced cycle
// window as one.
func ExampleExtent() {
	w := reduce.Window{Start: 990, End: 2010, Valid: true}
	fmt.Println(w.Extent(), w.Extent().Len(), reduce.Window{}.Extent().Empty())
	// Output:
	// {990 2010} 1020 true
}
