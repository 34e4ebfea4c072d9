// Command writerdemo writes a small Perfetto trace that exercises every
// feature of phasetrace's trace writer — process, thread and custom tracks
// with explicit ordering and unmerged lanes, complete slices given
// children-first with shared boundaries, begin/end pairs, instants, typed
// and nested arguments, integer and floating counters, a flow, and a wall
// clock — then reads it back the way the Perfetto trace processor would and
// prints a one-line verdict.
//
//	go run ./examples/writerdemo [-o writerdemo.pftrace] [-dump] [-version]
//
// Open the file in ui.perfetto.dev.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"

	"github.com/phasetrace/phasetrace"
	"github.com/phasetrace/phasetrace/perfetto"
	"github.com/phasetrace/phasetrace/perfetto/check"
)

func main() {
	out := flag.String("o", "writerdemo.pftrace", "output trace file")
	dump := flag.Bool("dump", false, "print the decoded trace")
	version := flag.Bool("version", false, "print the version and exit")
	flag.Parse()
	if *version {
		fmt.Println(phasetrace.Version("writerdemo"))
		return
	}
	if err := run(*out, *dump); err != nil {
		fmt.Fprintln(os.Stderr, "writerdemo:", err)
		os.Exit(1)
	}
}

func run(out string, dump bool) error {
	var buf bytes.Buffer
	w := perfetto.NewWriter(&buf)
	write(w)
	if err := w.Close(); err != nil {
		return err
	}
	if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
		return err
	}
	tr, err := check.ReadBytes(buf.Bytes())
	if err != nil {
		return err
	}
	if dump {
		if err := tr.Dump(os.Stdout); err != nil {
			return err
		}
	}
	if err := tr.Err(); err != nil {
		return fmt.Errorf("%s: %w", out, err)
	}
	fmt.Printf("%s: ok: %d bytes, %d packets, %d tracks, %d slices, %d flows, %d counter values, no problems the trace processor would report\n",
		out, buf.Len(), tr.Packets, len(tr.Tracks), len(tr.Slices), len(tr.Flows), len(tr.Counters))
	return nil
}

// write draws one L2 chip run the way phasetrace lays runs out: host spans
// on the thread, device phases on device lanes under the process, a
// scheduler hand-off as a flow.
func write(w *perfetto.Writer) {
	const base = 5_000_000_000 // CLOCK_MONOTONIC ns
	w.WallClock(base, 1_764_400_000_000_000_000)

	w.Process(perfetto.ProcessSpec{Pid: 4000, Name: "L3 node", SortIndex: 1})
	sched := w.Thread(perfetto.ThreadSpec{Pid: 4000, Tid: 4001, Name: "scheduler"})
	chip := w.Process(perfetto.ProcessSpec{Pid: 4100, Name: "chip rank 0", Labels: []string{"dev 0"}, SortIndex: 2, ChildOrder: perfetto.ChildOrderExplicit})
	main := w.Thread(perfetto.ThreadSpec{Pid: 4100, Tid: 4100, Name: "main"})
	dev := w.Track(chip, perfetto.TrackSpec{Name: "device 0", Description: "AICPU phases on the host timeline", Rank: 10, ChildOrder: perfetto.ChildOrderExplicit})
	orch := w.Track(dev, perfetto.TrackSpec{Name: "orch", Rank: 1, Merge: perfetto.MergeNone})
	schedLane := w.Track(dev, perfetto.TrackSpec{Name: "sched", Rank: 2, Merge: perfetto.MergeNone})
	inflight := w.CounterTrack(chip, perfetto.CounterSpec{Name: "arena bytes", Unit: perfetto.UnitSizeBytes, Rank: 20})
	occupancy := w.CounterTrack(chip, perfetto.CounterSpec{Name: "slot occupancy", UnitName: "%", Rank: 21})

	hand := perfetto.FlowIDOf("4000/run 7/slot 0")
	w.Slice(sched, perfetto.Slice{Name: "node.submit", TS: base, Dur: 20_000,
		Args: []perfetto.Arg{perfetto.Int("run_id", 7), perfetto.Int("task_slot", 0)}, Flows: []perfetto.FlowID{hand}})
	w.Slice(sched, perfetto.Slice{Name: "node.dispatch", TS: base + 30_000, Dur: 10_000,
		Args: []perfetto.Arg{perfetto.Int("run_id", 7), perfetto.Int("task_slot", 0)}, EndFlows: []perfetto.FlowID{hand}})

	host := []perfetto.Arg{perfetto.Int("inv", 12), perfetto.String("hid", "9f3c")}
	// Children first, as the runtime logs them; bind starts exactly with run.
	w.Slice(main, perfetto.Slice{Name: "chip.run.bind.args", TS: base + 40_000, Dur: 5_000, Depth: 2, Args: host})
	w.Slice(main, perfetto.Slice{Name: "chip.run.bind", TS: base + 40_000, Dur: 30_000, Depth: 1, Args: host})
	w.Slice(main, perfetto.Slice{Name: "chip.run.runner_run", TS: base + 70_000, Dur: 900_000, Depth: 1, Args: host})
	w.Slice(main, perfetto.Slice{Name: "chip.run.validate", TS: base + 970_000, Dur: 30_000, Depth: 1, Args: host})
	w.Slice(main, perfetto.Slice{Name: "chip.run", TS: base + 40_000, Dur: 960_000, Args: append(host,
		perfetto.Dict("kernel", perfetto.Int("cpu_ns", 21_000), perfetto.Int("nvcsw", 3)),
		perfetto.Array("ranks", perfetto.Int("", 0), perfetto.Int("", 1)),
		perfetto.Bool("warm", true))})
	w.Instant(main, perfetto.Instant{Name: "clock anchor", TS: base + 70_000, Args: []perfetto.Arg{perfetto.Uint("dev_cyc", 123_456_789_012)}})

	placed := []perfetto.Arg{perfetto.String("placement", "aligned"), perfetto.Int("bound_ns", 180), perfetto.Float("rate_ppm", 12.5)}
	w.Slice(dev, perfetto.Slice{Name: "device_wall", TS: base + 80_000, Dur: 880_000, Depth: 2, Args: placed})
	w.Slice(dev, perfetto.Slice{Name: "preamble", TS: base + 80_000, Dur: 60_000, Depth: 3, Args: placed})
	w.Slice(dev, perfetto.Slice{Name: "graph_build", TS: base + 140_000, Dur: 800_000, Depth: 3, Args: placed})
	w.Slice(dev, perfetto.Slice{Name: "post_orch", TS: base + 940_000, Dur: 20_000, Depth: 3, Args: placed})
	w.Slice(orch, perfetto.Slice{Name: "orch", TS: base + 400_000, Dur: 300_000, Args: placed})
	w.Slice(schedLane, perfetto.Slice{Name: "sched", TS: base + 400_000, Dur: 540_000, Args: placed})

	// A streamed span: begin and end as they happen.
	worker := w.Thread(perfetto.ThreadSpec{Pid: 4100, Tid: 4102, Name: "recorder"})
	w.Begin(worker, perfetto.Slice{Name: "record", TS: base + 45_000})
	w.End(worker, base+60_000)

	w.Counter(inflight, base+40_000, 1<<20)
	w.Counter(inflight, base+1_000_000, 0)
	w.CounterFloat(occupancy, base+400_000, 62.5)
}
