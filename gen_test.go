package phasetrace_test

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"

	"github.com/phasetrace/phasetrace/reduce"
	"github.com/phasetrace/phasetrace/strace"
)

// genConfig shapes a generated log: an L3 parent driving chip ranks, as the
// runtime writes it. Everything is derived from one seed, and the device
// side is simulated consistently — each rank's counter has its own offset,
// frequency and drift, device phases are stamped in cycles and converted
// with exact floors, origin_cyc and the clock anchors read the same counter
// — so that a converter can be checked against the truth.
type genConfig struct {
	Seed       uint64
	Rounds     int   // L3 runs, each dispatching one chip run to every rank
	AnchorEvry int64 // ns between device clock anchors (0: none)
	Pipelined  bool  // rank 0 overlaps run N+1's bind with run N's device work
	Legacy     bool  // rank 1 logs its bind breakdown as legacy "bind phase=" lines
	Ext        bool  // an external producer wraps runs and has a process of its own
	Quirks     bool  // a torn record, two records on one line, CRLF line ends
}

// rank is one simulated chip child.
type rank struct {
	pid    int32
	dev    int32
	freq   uint64  // counter Hz
	offset uint64  // counter value at host time 0
	drift  float64 // rate error, for the simulation only
	handle uint64  // pthread handle in log prefixes
}

// counterAt is the rank's counter value at host time h (the simulation's
// truth; the generator may use floating point, the converter may not).
func (r *rank) counterAt(h int64) uint64 {
	return r.offset + uint64(float64(h)*float64(r.freq)/1e9*(1+r.drift))
}

// hostAt is the host time at which the counter reads c.
func (r *rank) hostAt(c uint64) int64 {
	return int64(float64(c-r.offset) * 1e9 / float64(r.freq) / (1 + r.drift))
}

type genLine struct {
	at   int64 // emit time: when the runtime wrote it
	seq  int
	text []byte
}

// truthKey names a device span of the generated log.
type truthKey struct {
	pid  int32
	inv  uint64
	name string
}

type generator struct {
	truth   map[truthKey]int64 // true host start of every device span, when wanted
	cfg     genConfig
	rnd     *rand.Rand
	lines   []genLine
	seq     int
	written int
	w       io.Writer
}

func (g *generator) emit(at int64, handle uint64, rec strace.Record) {
	rec.Prefix = strace.Prefix{Present: true, MonoNS: at, Thread: handle, Level: "TIMING", Func: strace.SpanFunc}
	if rec.Kind == strace.KindWallAnchor || rec.Kind == strace.KindDeviceAnchor {
		rec.Prefix.Func = strace.AnchorFunc
	}
	b, err := strace.AppendRecord(nil, &rec)
	if err != nil {
		panic(err)
	}
	g.lines = append(g.lines, genLine{at: at, seq: g.seq, text: b})
	g.seq++
}

func (g *generator) span(at int64, handle uint64, s strace.Span) {
	g.emit(at, handle, strace.Record{Kind: strace.KindSpan, Span: s})
}

// flushBefore writes, in emit order, the lines written before t.
func (g *generator) flushBefore(t int64) {
	slices.SortStableFunc(g.lines, func(a, b genLine) int {
		if a.at != b.at {
			if a.at < b.at {
				return -1
			}
			return 1
		}
		return a.seq - b.seq
	})
	n := 0
	for n < len(g.lines) && g.lines[n].at < t {
		n++
	}
	for _, l := range g.lines[:n] {
		g.written++
		if g.cfg.Quirks && g.written%89 == 0 {
			// Forked ranks share one stderr: two records on one line.
			g.w.Write(l.text[:len(l.text)-1])
			continue
		}
		if g.cfg.Quirks && g.written%97 == 0 {
			g.w.Write(l.text[:len(l.text)-1])
			g.w.Write([]byte("\r\n"))
			continue
		}
		g.w.Write(l.text)
	}
	g.lines = append(g.lines[:0], g.lines[n:]...)
}

var segments = []string{"args", "arena_build", "runtime_init", "host_orch", "graph_pack", "static_arena", "shared_mem", "gm_heap", "host_view_close", "arena_h2d"}

// generate writes a log.
func generate(w io.Writer, cfg genConfig) { generateTruth(w, cfg, nil) }

func generateTruth(w io.Writer, cfg genConfig, truth map[truthKey]int64) {
	g := &generator{cfg: cfg, rnd: rand.New(rand.NewPCG(cfg.Seed, 0x5eed)), w: w, truth: truth}
	const l3 = int32(4000)
	ranks := []*rank{
		{pid: 4100, dev: 0, freq: 50_000_000, offset: 1_700_000_000_000, drift: 23e-6, handle: 0x7f3a2d5ff640},
		{pid: 4200, dev: 1, freq: 1_000_000_000, offset: 987_654_321_000_000, drift: -41e-6, handle: 0x7f3a2d6ff640},
	}
	t := int64(5_000_000_000)
	for i, p := range []int32{l3, ranks[0].pid, ranks[1].pid} {
		at := t - 10_000 + int64(i)*1_700
		g.emit(at, 0x7f3a10c00740, strace.Record{Kind: strace.KindWallAnchor, WallAnchor: strace.WallAnchor{Pid: p, MonoNS: at, WallNS: 1_767_225_600_000_000_000 + at}})
	}
	nextAnchor := t
	inv := map[int32]uint64{}
	hids := []uint64{0x51a7c0de42f00d17, 0x9f3c2a11d00db1e5}
	var prevRunnerEnd [2]int64
	var prevClaimEnd [2]int64
	for round := 0; round < cfg.Rounds; round++ {
		roundStart := t
		hid := hids[1]
		if round == 0 {
			hid = hids[0] // the once-seen callable: prefill
		}
		for ri, r := range ranks {
			inv[r.pid]++
			slot := int64(round % 2)
			base := t
			if cfg.Pipelined && ri == 0 && round > 0 {
				// Prepare run N+1 while run N is still on the device.
				base = prevRunnerEnd[ri] - 4_000_000 - g.rnd.Int64N(1_000_000)
			}
			submit := base + int64(ri)*40_000
			subDur := 2_000 + g.rnd.Int64N(2_000)
			dispatch := submit + subDur + 500 + g.rnd.Int64N(1_000)
			disDur := 1_000 + g.rnd.Int64N(2_000)
			nodeAttrs := func(role string) []strace.Attr {
				return []strace.Attr{strace.Int("run_id", int64(round/4+1)), strace.Int("task_slot", int64(round*2+ri)),
					strace.Int("group_index", 0), strace.Int("worker_id", int64(ri)), strace.Int("dispatch_id", int64(round*2+ri+1)),
					strace.String("role", role), strace.Int("slot_id", slot), strace.Int("generation", int64(round/2))}
			}
			g.span(submit+subDur, 0x7f3a10c00740, strace.Span{Pid: l3, Tid: int64(l3), Depth: 0, Name: "node.submit", TS: submit, Dur: subDur, Attrs: nodeAttrs("facade")})
			g.span(dispatch+disDur, 0x7f3a10b00640, strace.Span{Pid: l3, Tid: int64(l3) + 1, Depth: 0, Name: "node.dispatch", TS: dispatch, Dur: disDur, Attrs: nodeAttrs("scheduler")})

			// The chip run.
			start := dispatch + disDur + 5_000 + g.rnd.Int64N(5_000)
			e := g.chipRun(r, inv[r.pid], hid, round, slot, start, &prevRunnerEnd[ri], &prevClaimEnd[ri], cfg.Legacy && ri == 1 && round%3 == 0)
			complete := e + 2_000
			g.span(complete+1_500, 0x7f3a10b00640, strace.Span{Pid: l3, Tid: int64(l3) + 1, Depth: 0, Name: "node.complete", TS: complete, Dur: 1_500, Attrs: nodeAttrs("worker")})
			if cfg.Ext && ri == 1 {
				g.span(e+900, r.handle, strace.Span{Pid: r.pid, Tid: int64(r.pid), Depth: 0, Name: "ext.pypto.decode_step", TS: start - 700, Dur: e - start + 1_500, Attrs: []strace.Attr{strace.Int("layer", int64(round))}})
			}
			t = max(t, e)
		}
		if cfg.Ext {
			g.span(t+30_000, 0x7f3a0000aaaa, strace.Span{Pid: 4300, Tid: 4301, Depth: 0, Name: "ext.serving.request", TS: roundStart - 20_000, Dur: t - roundStart + 40_000, Attrs: []strace.Attr{strace.String("model", "qwen3-14b"), strace.Int("tokens", 1)}})
		}
		for cfg.AnchorEvry > 0 && nextAnchor <= t {
			for _, r := range ranks {
				win := 1_000 + g.rnd.Int64N(39_000)
				read := nextAnchor + g.rnd.Int64N(win+1)
				g.emit(nextAnchor+win, r.handle, strace.Record{Kind: strace.KindDeviceAnchor, DeviceAnchor: strace.DeviceAnchor{
					Pid: r.pid, Tid: int64(r.pid), Dev: r.dev, HostNS: nextAnchor, WindowNS: win, DevCyc: r.counterAt(read), DevFreq: r.freq}})
			}
			nextAnchor += cfg.AnchorEvry
		}
		t += 200_000 + g.rnd.Int64N(100_000)
		// Every later line starts at or after the next round's start, or
		// after the pipelined rank's next preparation.
		next := t
		if cfg.Pipelined {
			next = min(next, prevRunnerEnd[0]-5_000_000)
		}
		g.flushBefore(next - 1_000_000)
	}
	g.flushBefore(1 << 62)
	if cfg.Quirks {
		fmt.Fprintf(w, "[mono_ns=%d][T0x7f3a2d5ff640][TIMING] emit_host_span: [STRACE] v=1 pid=4100 tid=4100 inv=999 hid=51a7c0de42f00d17 depth=1 name=chip.run.bi\n", t+1_000)
	}
}

// chipRun generates one run of rank r and returns its end.
func (g *generator) chipRun(r *rank, inv uint64, hid uint64, round int, slot, start int64, prevRunnerEnd, prevClaimEnd *int64, legacy bool) int64 {
	sp := func(depth int32, name string, ts, dur int64, attrs ...strace.Attr) strace.Span {
		return strace.Span{Pid: r.pid, Tid: int64(r.pid), Inv: inv, Hid: hid, Depth: depth, Name: name, TS: ts, Dur: dur, Attrs: attrs}
	}
	// bind and its segments.
	ts := start
	var segs []strace.Span
	for _, s := range segments {
		d := 20_000 + g.rnd.Int64N(300_000)
		if round == 0 && s == "static_arena" {
			d += 40_000_000 // the cold first bind
		}
		cpu := d * (70 + g.rnd.Int64N(30)) / 100
		attrs := []strace.Attr{strace.Int("cpu_ns", cpu), strace.Int("rec_cpu_ns", cpu/3), strace.Int("minflt", 10+g.rnd.Int64N(200)),
			strace.Int("tminflt", g.rnd.Int64N(40)), strace.Int("nvcsw", g.rnd.Int64N(9)), strace.Int("nivcsw", g.rnd.Int64N(4))}
		switch s {
		case "host_orch":
			attrs = append(attrs, strace.Int("tasks", 47), strace.Int("heap_used", 1<<20))
		case "graph_pack":
			spilled := int64(0)
			if round == 0 {
				spilled = 1
			}
			attrs = append(attrs, strace.Int("defs", 1), strace.Int("bytes", 24_576), strace.Int("submissions", 40), strace.Int("spilled", spilled))
		}
		segs = append(segs, sp(2, "chip.run.bind."+s, ts, d, attrs...))
		ts += d
	}
	bindDur := ts - start + 3_000
	for _, s := range segs {
		if legacy {
			seg := s.Name[len("chip.run.bind."):]
			line := fmt.Sprintf("[mono_ns=%d][T0x%x][TIMING] bind_phases: [hbg_bind.cpp:88] bind phase=%s start_ns=%d dur_ns=%d cpu_ns=%d\n",
				s.End(), r.handle, seg, s.TS, s.Dur, s.Attrs[0].Int)
			g.lines = append(g.lines, genLine{at: s.End(), seq: g.seq, text: []byte(line)})
			g.seq++
			continue
		}
		g.span(s.End(), r.handle, s)
	}
	g.span(start+bindDur, r.handle, sp(1, "chip.run.bind", start, bindDur, strace.Int("ntensor", 26)))

	// runner_run: the device run inside it, after the previous run's claim
	// was released.
	rrStart := max(start+bindDur+1_000, *prevClaimEnd+500)
	lead := 20_000 + g.rnd.Int64N(300_000) // host enqueue before the device starts
	devStart := rrStart + lead
	// The device stamps in cycles.
	c0 := r.counterAt(devStart)
	cyc := func(ns int64) uint64 { return uint64(float64(ns) * float64(r.freq) / 1e9) }
	type win struct{ s, e uint64 }
	wallW := win{c0, 0}
	pre := win{c0 + cyc(3_000+g.rnd.Int64N(5_000)), 0}
	pre.e = pre.s + cyc(1_000_000+g.rnd.Int64N(2_000_000))
	gb := win{pre.e, 0}
	cv := win{gb.s, gb.s + cyc(2_000_000+g.rnd.Int64N(3_000_000))}
	aw := win{cv.e, cv.e + cyc(2_000_000+g.rnd.Int64N(3_000_000))}
	sm := win{aw.e, aw.e + cyc(2_000_000+g.rnd.Int64N(3_000_000))}
	orch := win{sm.e, sm.e + cyc(8_000_000+g.rnd.Int64N(10_000_000))}
	sched := win{orch.s + cyc(500), 0}
	sched.e = orch.e + cyc(5_000_000+g.rnd.Int64N(10_000_000))
	gb.e = sched.e + cyc(20_000)
	post := win{gb.e + cyc(5_000), 0}
	post.e = post.s + cyc(500_000+g.rnd.Int64N(1_000_000))
	wallW.e = post.e + cyc(2_000)
	slot0 := win{orch.s + cyc(1_000), orch.s + cyc(1_000+4_000_000+g.rnd.Int64N(4_000_000))}
	devEnd := r.hostAt(wallW.e)
	rrEnd := devEnd + 30_000 + g.rnd.Int64N(400_000) // completion drain
	*prevRunnerEnd = rrEnd
	g.span(rrEnd, r.handle, sp(1, "chip.run.runner_run", rrStart, rrEnd-rrStart))
	claimEnd := rrEnd + 3_000 + g.rnd.Int64N(5_000)
	g.span(claimEnd, r.handle, sp(1, "chip.run.claim_release", rrEnd+200, claimEnd-rrEnd-200))
	*prevClaimEnd = claimEnd
	valEnd := claimEnd + 5_000 + g.rnd.Int64N(5_000)
	g.span(valEnd, r.handle, sp(1, "chip.run.validate", claimEnd+100, valEnd-claimEnd-100))

	// The host reads the buffer back and logs the device spans, after
	// validate, on the same origin rules as package reduce.
	f := reduce.Hz(r.freq)
	ns := func(c uint64) int64 {
		v, err := f.Nanos(reduce.Cycles(c))
		if err != nil {
			panic(err)
		}
		return int64(v)
	}
	origin := pre.s
	at := valEnd + 2_000
	if g.truth != nil {
		for _, p := range []struct {
			name string
			c    uint64
		}{{"", wallW.s}, {".preamble", pre.s}, {".graph_build", gb.s}, {".config_validate", cv.s}, {".arena_wire", aw.s},
			{".sm_reset", sm.s}, {".post_orch", post.s}, {".orch", orch.s}, {".sched", sched.s}, {".task_slot_0", slot0.s}} {
			g.truth[truthKey{r.pid, inv, "chip.run.runner_run.device_wall" + p.name}] = r.hostAt(p.c)
		}
	}
	wall := sp(2, "chip.run.runner_run.device_wall", 0, ns(wallW.e-wallW.s), strace.String("clk", "dev"), strace.Uint("origin_cyc", origin), strace.Int("dev", int64(r.dev)))
	g.span(at, r.handle, wall)
	for _, p := range []struct {
		name string
		w    win
	}{{"preamble", pre}, {"graph_build", gb}, {"config_validate", cv}, {"arena_wire", aw}, {"sm_reset", sm}, {"post_orch", post}, {"orch", orch}, {"sched", sched}, {"task_slot_0", slot0}} {
		g.span(at, r.handle, sp(3, "chip.run.runner_run.device_wall."+p.name, ns(p.w.s-origin), ns(p.w.e-p.w.s), strace.String("clk", "dev")))
	}
	end := at + 10_000
	root := sp(0, "chip.run", start, end-start, strace.Int("run_id", int64(round/4+1)), strace.Int("dispatch_id", int64(round*2+int(r.dev)+1)),
		strace.Int("run_epoch", int64(inv)), strace.Int("slot_id", slot), strace.Int("generation", int64(round/2)))
	g.span(end, r.handle, root)
	return end
}

// generated returns a generated log.
func generated(cfg genConfig) []byte {
	b, _ := generatedWithTruth(cfg)
	return b
}

// generatedWithTruth returns a generated log and the true host start of
// each of its device spans.
func generatedWithTruth(cfg genConfig) ([]byte, map[truthKey]int64) {
	var b bytes.Buffer
	truth := map[truthKey]int64{}
	generateTruth(&b, cfg, truth)
	return b.Bytes(), truth
}
