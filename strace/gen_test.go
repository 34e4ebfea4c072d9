package strace

import (
	"fmt"
	"io"
	"math/rand/v2"
)

// logGen writes a realistic runtime log: an L3 parent scheduling runs onto
// two chip children, each run a chip.run tree with bind segments, device
// phases and task slots, wall anchors per process, device anchors now and
// then, and ordinary log lines between them.
type logGen struct {
	out   io.Writer
	rng   *rand.Rand
	now   int64 // the clock the writers read
	wall  int64
	node  *Writer
	chips []*Writer
	devs  []int32
}

func newLogGen(out io.Writer, seed uint64) *logGen {
	g := &logGen{out: out, rng: rand.New(rand.NewPCG(seed, 7)), now: 1_000_000_000, wall: 1_767_225_600_000_000_000}
	mono := func() int64 { return g.now }
	wall := func() int64 { return g.wall + g.now }
	g.node = NewWriter(out, WithProcess(3100, 3100), WithThread(0x7f3a10c00740), WithClock(mono, wall))
	for i := range 2 {
		pid := int32(3200 + i)
		g.chips = append(g.chips, NewWriter(out, WithProcess(pid, int64(pid)), WithThread(0x7f3a2d5ff640+uint64(i)<<20), WithClock(mono, wall)))
		g.devs = append(g.devs, int32(i))
	}
	return g
}

func (g *logGen) step(lo, hi int64) int64 {
	d := lo + g.rng.Int64N(hi-lo+1)
	g.now += d
	return d
}

func kernelCounters(r *rand.Rand, dur int64) []Attr {
	return []Attr{
		Int("cpu_ns", dur*9/10), Int("rec_cpu_ns", dur/3), Int("minflt", r.Int64N(200)),
		Int("tminflt", r.Int64N(50)), Int("nvcsw", r.Int64N(9)), Int("nivcsw", r.Int64N(4)),
	}
}

func (g *logGen) start() error {
	if _, err := fmt.Fprintf(g.out, "[stamp] 4d31f482 env SIMPLER_HBG_BIND_BREAKDOWN_ENABLE=1 TORCH_DEVICE_BACKEND_AUTOLOAD=0 python examples/a2a3/host_build_graph/qwen3_14b_decode/main.py --rounds 6\n"); err != nil {
		return err
	}
	for _, w := range append([]*Writer{g.node}, g.chips...) {
		g.step(1000, 5000)
		if err := w.WallAnchor(); err != nil {
			return err
		}
	}
	return nil
}

// run writes one L3 dispatch and the chip run it causes.
func (g *logGen) run(i int, hid uint64) error {
	c := i % len(g.chips)
	w := g.chips[c]
	nodeAttrs := func(role string) []Attr {
		return []Attr{Int("run_id", int64(i/4+1)), Int("task_slot", int64(i%8)), Int("group_index", 0),
			Int("worker_id", int64(c)), Int("dispatch_id", int64(i+1)), String("role", role),
			Int("slot_id", int64(i%2)), Int("generation", int64(i/2))}
	}
	t0 := g.now
	g.step(2000, 4000)
	if err := g.node.HostSpan("node.submit", t0, g.now-t0, 0, nodeAttrs("facade")...); err != nil {
		return err
	}
	t1 := g.now
	g.step(1000, 3000)
	if err := g.node.HostSpan("node.dispatch", t1, g.now-t1, 0, nodeAttrs("scheduler")...); err != nil {
		return err
	}

	w.BeginInvocation(hid)
	runStart := g.now
	g.step(5000, 9000)
	bindStart := g.now
	// bind segments (depth 2), each with the kernel counters
	for _, seg := range []string{"args", "arena_build", "runtime_init", "host_orch", "graph_pack", "static_arena", "shared_mem", "gm_heap", "host_view_close", "arena_h2d"} {
		ts := g.now
		d := g.step(2000, 400000)
		attrs := kernelCounters(g.rng, d)
		switch seg {
		case "host_orch":
			attrs = append(attrs, Int("tasks", 47), Int("heap_used", 127673344))
		case "graph_pack":
			attrs = append(attrs, Int("defs", 1), Int("bytes", 232320), Int("submissions", 40), Int("spilled", 0))
		case "arena_h2d":
			attrs = append(attrs, Int("bytes", 234431), Int("copied", 632), Int("sm", 233799))
		}
		if err := w.HostSpan("chip.run.bind."+seg, ts, d, 2, attrs...); err != nil {
			return err
		}
	}
	if err := w.HostSpan("chip.run.bind", bindStart, g.now-bindStart, 1, Int("ntensor", 26)); err != nil {
		return err
	}
	if i%7 == 0 {
		g.step(100, 500)
		if _, err := fmt.Fprintf(g.out, "[mono_ns=%d][T0x%x][INFO] launch_run: [device_runner.cpp:412] launching run %d on device %d\n", g.now, 0x7f3a2d5ff640+uint64(c)<<20, i, c); err != nil {
			return err
		}
	}
	rrStart := g.now
	wall := g.step(30_000_000, 80_000_000)
	g.step(20000, 90000)
	if err := w.HostSpan("chip.run.runner_run", rrStart, g.now-rrStart, 1); err != nil {
		return err
	}
	vStart := g.now
	g.step(5000, 20000)
	if err := w.HostSpan("chip.run.validate", vStart, g.now-vStart, 1); err != nil {
		return err
	}
	// device phases, written after validate: device_wall then its phases
	origin := uint64(g.rng.Int64N(1<<40)) + 1<<40
	if err := w.DeviceSpan("chip.run.runner_run.device_wall", 0, wall, 2, Uint("origin_cyc", origin), Int("dev", int64(g.devs[c]))); err != nil {
		return err
	}
	pre := wall / 20
	gb := wall - 2*pre
	prep := gb / 3
	phases := []struct {
		name   string
		ts, du int64
	}{
		{"preamble", 0, pre},
		{"graph_build", pre, gb},
		{"config_validate", pre, prep / 3},
		{"arena_wire", pre + prep/3, prep / 3},
		{"sm_reset", pre + 2*prep/3, prep / 3},
		{"post_orch", pre + gb, pre / 2},
		{"orch", pre + prep, (gb - prep) / 2},
		{"sched", pre + prep, gb - prep},
	}
	for _, p := range phases {
		if err := w.DeviceSpan("chip.run.runner_run.device_wall."+p.name, p.ts, p.du, 3); err != nil {
			return err
		}
	}
	if err := w.DeviceSpan("chip.run.runner_run.device_wall.task_slot_0", pre+prep+1000, gb/4, 3); err != nil {
		return err
	}
	crStart := g.now
	g.step(1000, 5000)
	if err := w.HostSpan("chip.run.claim_release", crStart, g.now-crStart, 1); err != nil {
		return err
	}
	if err := w.HostSpan("chip.run", runStart, g.now-runStart, 0, Int("run_epoch", int64(i+1)), Int("slot_id", int64(i%2)), Int("generation", int64(i/2))); err != nil {
		return err
	}
	t2 := g.now
	g.step(1000, 3000)
	if err := g.node.HostSpan("node.complete", t2, g.now-t2, 0, nodeAttrs("worker")...); err != nil {
		return err
	}
	if i%16 == 0 {
		h := g.now
		win := g.step(2000, 30000)
		freq := uint64(50_000_000)
		cyc := origin + uint64(wall)*freq/1_000_000_000
		if err := w.DeviceAnchor(DeviceAnchor{Dev: g.devs[c], HostNS: h, WindowNS: win, DevCyc: cyc, DevFreq: freq}); err != nil {
			return err
		}
	}
	return nil
}

// generateLog writes a realistic log of at least size bytes (and at least
// one run) and returns the number of spans written.
func generateLog(out io.Writer, size int64, seed uint64) (spans int64, err error) {
	cw := &countingWriter{w: out}
	g := newLogGen(cw, seed)
	if err := g.start(); err != nil {
		return 0, err
	}
	hids := []uint64{0x9f3c2a11d00db1e5, 0x51a7c0de42f00d17}
	for i := 0; i == 0 || cw.n < size; i++ {
		hid := hids[0]
		if i%50 == 0 {
			hid = hids[1] // a prefill now and then
		}
		if err := g.run(i, hid); err != nil {
			return spans, err
		}
		spans += 28 // 3 node spans, 13 host chip spans, 10 device spans, claim_release and chip.run
	}
	return spans, nil
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
