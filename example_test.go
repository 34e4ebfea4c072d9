package phasetrace_test

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/phasetrace/phasetrace"
	"github.com/phasetrace/phasetrace/perfetto/check"
	"github.com/phasetrace/phasetrace/reduce"
	"github.com/phasetrace/phasetrace/strace"
	"github.com/phasetrace/phasetrace/strace/stracetest"
)

// Converting a log: one chip run with its device phases, a clock anchor
// that places them, and a span whose duration is negative — counted, not
// an error.
func ExampleConvert() {
	log := `[mono_ns=2000000][T0x1][TIMING] clock_anchor: [CLOCK_ANCHOR] v=2 pid=7 tid=7 dev=0 host_ns=1100000 window_ns=400 dev_cyc=50000000 dev_freq=50000000
[mono_ns=2000100][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=7 tid=7 inv=1 hid=9f depth=1 name=chip.run.runner_run ts=1000000 dur=1000000
[mono_ns=2000200][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=7 tid=7 inv=1 hid=9f depth=2 name=chip.run.runner_run.device_wall ts=0 dur=500000 clk=dev origin_cyc=50010000 dev=0
[mono_ns=2000300][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=7 tid=7 inv=1 hid=9f depth=3 name=chip.run.runner_run.device_wall.preamble ts=0 dur=100000 clk=dev
[mono_ns=2000400][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=7 tid=7 inv=1 hid=9f depth=0 name=chip.run ts=900000 dur=1200000
[mono_ns=2000500][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=7 tid=7 inv=2 hid=9f depth=0 name=chip.run ts=2200000 dur=-1
`
	var trace bytes.Buffer
	sum, err := phasetrace.Convert(&trace, []phasetrace.Input{phasetrace.Bytes("run.log", []byte(log))})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("spans: %d read, %d drawn, not drawn %v\n", sum.Spans.Read, sum.Spans.Drawn, sum.Spans.NotDrawn)
	fmt.Printf("device pid=%d dev=%d: %d aligned\n", sum.Devices[0].Pid, sum.Devices[0].Dev, sum.Devices[0].Aligned)
	fmt.Println("example:", sum.Examples[0].At, sum.Examples[0].Detail)
	// Output:
	// spans: 5 read, 4 drawn, not drawn map[negative_duration:1]
	// device pid=7 dev=0: 2 aligned
	// example: run.log:6 dur=-1
}

// Building a trace from Go values: a raw device-phase buffer as the host
// reads it back, and the host spans of its run.
func ExampleBuilder() {
	// A one-thread buffer at 50 MHz: RunWall, preamble and graph_build.
	buf, _ := reduce.NewBuffer(1, false)
	buf.Phases[reduce.RunWall] = reduce.Record{Start: 49_999_990, End: 50_020_000}
	buf.Phases[reduce.Preamble] = reduce.Record{Start: 50_000_000, End: 50_001_000}
	buf.Phases[reduce.GraphBuild] = reduce.Record{Start: 50_001_000, End: 50_019_000}
	raw, _ := buf.AppendBinary(nil)

	// The survey: what the builder must know first (here, the clock
	// anchor that places the device run).
	survey := phasetrace.NewSurvey()
	survey.DeviceAnchor(strace.DeviceAnchor{Pid: 7, Tid: 7, Dev: 0, HostNS: 1_000_000, WindowNS: 200, DevCyc: 50_000_000, DevFreq: 50_000_000})

	var trace bytes.Buffer
	b, err := phasetrace.NewBuilder(&trace, survey)
	if err != nil {
		fmt.Println(err)
		return
	}
	run := func(depth int32, name string, ts, dur int64) strace.Span {
		return strace.Span{Pid: 7, Tid: 7, Inv: 1, Hid: 0x9f, Depth: depth, Name: name, TS: ts, Dur: dur}
	}
	b.Span(run(1, "chip.run.runner_run", 990_000, 500_000))
	b.DeviceBuffer(phasetrace.DeviceBuffer{Data: raw, Threads: 1, Freq: 50_000_000, Pid: 7, Inv: 1, Hid: 0x9f, Dev: 0})
	b.Span(run(0, "chip.run", 900_000, 700_000))
	sum, err := b.Close()
	if err != nil {
		fmt.Println(err)
		return
	}
	// Each slice shows its label, the last word of its name (a root its
	// whole name), and keeps the name in its full_name argument.
	tr, _ := check.ReadBytes(trace.Bytes())
	for _, s := range tr.Slices {
		if s.Category == "phasetrace" { // the trace's own instant: what wrote it, from what
			continue
		}
		var full any
		for _, a := range s.Args {
			if a.Name == "full_name" {
				full = a.Value
			}
		}
		fmt.Println(s.Depth, s.Name, full, s.TS, s.Dur)
	}
	fmt.Printf("%d spans drawn, trace clean: %v\n", sum.Spans.Drawn, tr.Err() == nil)
	// Output:
	// 0 chip.run chip.run 900000 700000
	// 1 runner_run chip.run.runner_run 990000 500000
	// 0 device_wall chip.run.runner_run.device_wall 999900 400200
	// 1 preamble chip.run.runner_run.device_wall.preamble 1000100 20000
	// 1 graph_build chip.run.runner_run.device_wall.graph_build 1020100 360000
	// 5 spans drawn, trace clean: true
}

// A survey learns lanes, labels and anchors before anything is drawn: here
// a thread whose runs overlap, each in its own pipeline slot, is split into
// one lane per slot.
func ExampleSurvey() {
	spans := []strace.Span{
		{Pid: 7, Tid: 70, Inv: 1, Depth: 0, Name: "chip.run", TS: 100, Dur: 100, Attrs: []strace.Attr{strace.Int("slot_id", 0)}},
		{Pid: 7, Tid: 70, Inv: 2, Depth: 0, Name: "chip.run", TS: 150, Dur: 100, Attrs: []strace.Attr{strace.Int("slot_id", 1)}},
	}
	survey := phasetrace.NewSurvey()
	for _, s := range spans {
		survey.Span(s)
	}
	var trace bytes.Buffer
	b, _ := phasetrace.NewBuilder(&trace, survey)
	for _, s := range spans {
		b.Span(s)
	}
	b.Close()
	tr, _ := check.ReadBytes(trace.Bytes())
	for _, s := range tr.Slices {
		if s.Category == "phasetrace" { // the trace's own instant
			continue
		}
		t, _ := tr.Track(s.Track)
		fmt.Println(s.Name, s.TS, "on", t.Name)
	}
	// Output:
	// chip.run 100 on pipeline slot 0
	// chip.run 150 on pipeline slot 1
}

// The version line a command prints for -version.
func ExampleVersion() {
	v := phasetrace.Version("strace2perfetto")
	fmt.Println(strings.HasPrefix(v, "strace2perfetto "))
	// Output:
	// true
}

// A log on disk (a .gz is decompressed), and the summary as text and as
// an account.
func ExampleFile() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "run.log")
	os.WriteFile(path, []byte("[mono_ns=5][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=7 tid=7 inv=0 hid=0 depth=0 name=ext.app.step ts=1000 dur=500\n"), 0o644)
	in := phasetrace.File(path)
	in.Name = "run.log" // the temporary directory varies; the name is what the summary and the trace say
	sum, err := phasetrace.Convert(io.Discard, []phasetrace.Input{in})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(sum.Spans.Check(), sum.Lossless())
	sum.WriteText(os.Stdout)
	// Output:
	// <nil> true
	// read run.log: 1 line, 1 span, 0 clock anchors, 0 bind phase lines
	// wrote 0 invocations: 4 track descriptors, 1 slice, 1 instant (the conversion's own; anomalies: 0 slow runs, 0 cold binds, 0 wide bounds), 0 flows, 0 counter values, 910 bytes
	// wall time: unknown (no [CLOCK_ANCHOR] v=1 record)
	// spans: 1 read, 1 drawn
}

// Logs of a dispatching host (an L4 process whose workers are remote L3
// daemons) and of the two machines that served it, each on its own clock:
// one trace on the dispatching host's axis. The logs tell which machine
// served which worker; WithRemoteWorker names it where they do not, and
// WithTransport says how the frames travelled.
func ExampleWithRemoteWorker() {
	logs, _ := stracetest.GenerateRemote(stracetest.RemoteConfig{Seed: 4, Tasks: 8, GapMin: 1e9, GapMean: 1e9, GapMax: 3e9, WallErr: 1e6, SamePids: true,
		Hosts: []stracetest.RemoteHost{{Machine: "machine1", DriftPPM: 30, FwdMin: 30e3, FwdJitter: 20e3, RetMin: 25e3, RetJitter: 20e3},
			{Machine: "machine2", DriftPPM: -40, FwdMin: 30e3, FwdJitter: 20e3, RetMin: 25e3, RetJitter: 20e3}}})
	var in []phasetrace.Input
	for _, l := range logs {
		in = append(in, phasetrace.Bytes(l.Name, l.Log))
	}
	sum, err := phasetrace.Convert(io.Discard, in,
		phasetrace.WithRemoteWorker("machine2", 1), // agrees with the logs; needed only where they do not tell
		phasetrace.WithTransport(phasetrace.TransportSocket))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, h := range sum.Hosts {
		fmt.Printf("%s: %s, worker %v, %d tasks, bound under %d µs\n", h.Machine, h.Method, h.Workers, h.Tasks, (h.Bound.Max+999)/1000)
	}
	fmt.Println(sum.Flows[phasetrace.FlowRemoteDispatchToRun], "dispatch → remote run flows")
	// Output:
	// machine1: causal, worker [0], 4 tasks, bound under 73 µs
	// machine2: causal, worker [1], 4 tasks, bound under 84 µs
	// 8 dispatch → remote run flows
}

// A log read through a CutReader ends where its .gz was cut, and says why:
// the same words as a conversion's InputSummary.Cut.
func ExampleCutReader() {
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write([]byte(strings.Repeat("[STRACE] v=1 pid=1 tid=1 inv=1 hid=1 depth=0 name=chip.run ts=1 dur=2\n", 100)))
	zw.Close()
	zr, err := gzip.NewReader(bytes.NewReader(z.Bytes()[:z.Len()-4])) // its length lost
	if err != nil {
		panic(err)
	}
	cr := phasetrace.NewCutReader(zr)
	data, err := io.ReadAll(cr)
	why, after := cr.Cut()
	fmt.Println(len(data), err, after)
	fmt.Println(why)
	// Output:
	// 7000 <nil> 7000
	// the compressed stream is cut after 7000 bytes of data (the file was not written whole)
}

// Splitting a conversion into parts the UI loads one at a time, and an
// overview that says which part holds each invocation. Here the parts are
// files beside the overview, as strace2perfetto -split writes them.
func ExampleWithSplit() {
	dir, err := os.MkdirTemp("", "split")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	var log bytes.Buffer
	stracetest.Generate(&log, stracetest.Config{Seed: 1, Rounds: 12, AnchorEvry: 100_000_000})

	overview := filepath.Join(dir, "run.pftrace")
	open := func(n int) (io.WriteCloser, string, error) {
		name := phasetrace.PartName(overview, n)
		f, err := os.Create(name)
		return f, filepath.Base(name), err
	}
	f, err := os.Create(overview)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()
	sum, err := phasetrace.Convert(f, []phasetrace.Input{phasetrace.Bytes("run.log", log.Bytes())}, phasetrace.WithSplit(150, open))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d invocations, %d slices in %d parts\n", sum.Invocations, sum.Output.Slices, len(sum.Split.Parts))
	for _, p := range sum.Split.Parts[:3] {
		fmt.Printf("%s: %d slices, %d invocations\n", p.Name, p.Slices, p.Invocations)
	}
	fmt.Printf("overview: %d slices, %d counter values\n", sum.Split.Overview.Slices, sum.Split.Overview.Counters)
	// Output:
	// 24 invocations, 696 slices in 6 parts
	// run.part001.pftrace: 116 slices, 4 invocations
	// run.part002.pftrace: 116 slices, 4 invocations
	// run.part003.pftrace: 116 slices, 4 invocations
	// overview: 30 slices, 120 counter values
}

// A window: only the slices that meet 100 ms to 200 ms after the first
// slice, the log still read whole.
func ExampleWithWindowFromStart() {
	var log bytes.Buffer
	stracetest.Generate(&log, stracetest.Config{Seed: 1, Rounds: 12, AnchorEvry: 100_000_000})
	in := []phasetrace.Input{phasetrace.Bytes("run.log", log.Bytes())}
	w, err := phasetrace.ParseWindow("100ms:200ms")
	if err != nil {
		fmt.Println(err)
		return
	}
	sum, err := phasetrace.Convert(io.Discard, in, phasetrace.WithWindowOf(w))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("window %s: [%d, %d) ns, the first slice at %d ns\n", w, sum.Window.Start, sum.Window.End, sum.Window.FirstSlice)
	fmt.Printf("%d spans read, %d drawn, %d outside the window; clean: %v\n", sum.Spans.Read, sum.Spans.Drawn, sum.Spans.NotDrawn[phasetrace.ReasonOutsideWindow], sum.Clean())
	// Output:
	// window 100ms:200ms: [5100000000, 5200000000) ns, the first slice at 5000000000 ns
	// 672 spans read, 68 drawn, 604 outside the window; clean: true
}

// Comparing two runs: the same program run twice (the same pid), the
// second a few seconds later and 100 µs slower a step. The measure run is
// moved onto the base run's first decode step, its pid given a trace pid
// of its own, and the delta counter holds measure − base step by step.
func ExampleCompare() {
	run := func(start, dur int64) []byte {
		var b bytes.Buffer
		for i := range int64(3) {
			ts := start + i*2_000_000
			fmt.Fprintf(&b, "[mono_ns=%d][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=7 tid=7 inv=%d hid=9f depth=0 name=chip.run ts=%d dur=%d\n", ts+dur, i+1, ts, dur)
		}
		return b.Bytes()
	}
	var trace bytes.Buffer
	sum, err := phasetrace.Compare(&trace,
		[]phasetrace.Input{phasetrace.Bytes("base.log", run(1_000_000, 1_000_000))},
		[]phasetrace.Input{phasetrace.Bytes("measure.log", run(7_000_000_000, 1_100_000))})
	if err != nil {
		fmt.Println(err)
		return
	}
	c := sum.Compare
	fmt.Printf("aligned by %s hid %#x: measure moved by %d ns\n", c.Aligned, c.BaseHid, c.ShiftNs)
	fmt.Println("measure pids given trace pids:", c.Pids)
	tr, _ := check.ReadBytes(trace.Bytes())
	for _, tk := range tr.Tracks {
		if tk.Name == "decode Δ ns (measure − base)" {
			for _, v := range tr.Counters {
				if v.Track == tk.UUID {
					fmt.Printf("delta at %d: %d ns\n", v.TS, v.Int)
				}
			}
		}
	}
	// Output:
	// aligned by decode hid 0x9f: measure moved by -6999000000 ns
	// measure pids given trace pids: map[7:2147483647]
	// delta at 1000000: 100000 ns
	// delta at 3000000: 100000 ns
	// delta at 5000000: 100000 ns
}
