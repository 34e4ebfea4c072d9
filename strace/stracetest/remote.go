package stracetest

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/phasetrace/phasetrace/strace"
)

// RemoteConfig shapes the logs of an L4 run whose workers are L3 worker
// daemons on other machines: the dispatching host's log and one log per
// remote machine, each on its own CLOCK_MONOTONIC (its own boot time and
// drift) and with its own wall-clock error, the tasks crossing the network
// with one-way latencies that differ by direction and jitter. Everything is
// derived from Seed; GenerateRemote returns the truth with the logs.
type RemoteConfig struct {
	Seed  uint64
	Hosts []RemoteHost
	// Tasks are dealt to the hosts in turn (task i to host i mod len),
	// one at a time; after each reply the dispatcher idles for GapMin ns
	// plus an exponential draw of mean GapMean, at most GapMax in all.
	Tasks                   int
	GapMin, GapMean, GapMax int64
	// WallErr: each machine's wall clock is off by a uniform draw from
	// ±WallErr ns, each process's anchor by a further ±WallErr/10.
	WallErr int64
	// MPI sends the frame during network1.dispatch rather than after it
	// ends (with MPI only the dispatch's start is a safe lower bound).
	MPI bool
	// SamePids gives every machine's processes the same pids.
	SamePids bool
	// AnchorEvry writes a device clock anchor of each remote chip every
	// AnchorEvry ns of its host's clock (0: none).
	AnchorEvry int64
}

// RemoteHost is one remote machine.
type RemoteHost struct {
	Machine  string
	DriftPPM float64 // its clock's rate against the dispatching host's, less 1, in ppm
	// Rate makes that rate change with time around DriftPPM (NTP slewing
	// either host's clock): see RateChange.
	Rate RateChange
	// One-way latencies: the smallest, plus an exponential jitter of the
	// given mean, forward (dispatch → the run's first span) and return (the
	// run's last span → complete).
	FwdMin, FwdJitter int64
	RetMin, RetJitter int64
	// WallNS, when non-zero, is the wall_ns every wall-clock anchor of the
	// machine says: a clock set wrong (1e18 is 2001 to a 2026 dispatcher).
	WallNS int64
}

// RemoteLog is one generated log.
type RemoteLog struct {
	Name    string
	Machine string // "" for the dispatching host
	Log     []byte
}

// RemoteKey names a span of a generated remote log: its machine, its
// process (the pid it logged), its run (inv for chip spans, run_id for
// node spans) and its name.
type RemoteKey struct {
	Machine string
	Pid     int32
	Run     uint64
	Name    string
}

// RemoteSpan is where a remote span was logged (its host's clock) and
// where it truly was on the dispatching host's clock; device spans have a
// true start only (End and TrueEnd are 0).
type RemoteSpan struct {
	Start, End         int64
	TrueStart, TrueEnd int64
	Device             bool
}

// RemoteTruth is what GenerateRemote simulated.
type RemoteTruth struct {
	Spans map[RemoteKey]RemoteSpan
	Hosts map[string]RemoteHostTruth
}

// RemoteHostTruth is one remote machine's truth.
type RemoteHostTruth struct {
	Worker int64 // the worker_id it served; -1: none of the dispatching log's (GenerateForeignRemote)
	// WallShift is what adding the difference of the wall-clock anchors
	// (the remote log's first against the dispatching log's first) does:
	// remote time + WallShift is where a wall-anchored converter draws it.
	WallShift int64
	// FwdMin and RetMin are the smallest one-way latencies of its tasks:
	// their sum is the information limit of causal placement.
	FwdMin, RetMin int64
	// Tasks are its tasks as the logs bracket them: on the dispatching
	// host's clock, the frame left no earlier than Sent (the end of
	// network1.dispatch over a socket, its start over MPI) and the reply
	// was in by Received (the start of network1.complete); on the remote
	// host's, the run took [Start, End] (its first span's start, its last
	// span's end).
	Tasks []TaskBracket
}

// TaskBracket is one task as its logs bracket it (RemoteHostTruth.Tasks).
type TaskBracket struct {
	Sent, Received, Start, End int64
}

// remoteClock maps the dispatching host's true time to a remote host's:
// off + t·(1+drift), or, for a rate that changes (RemoteHost.Rate), an
// exact integer clock counting remote ns.
type remoteClock struct {
	off, drift float64
	clk        *rateClock
}

func (c remoteClock) at(t float64) int64 {
	if c.clk != nil {
		return int64(c.clk.at(int64(math.Round(t))))
	}
	return int64(math.Round(c.off + t*(1+c.drift)))
}

func (c remoteClock) back(x int64) int64 {
	if c.clk != nil {
		return c.clk.hostAt(uint64(x))
	}
	return int64(math.Round((float64(x) - c.off) / (1 + c.drift)))
}

const wallEpoch = 1_767_225_600_000_000_000

// GenerateRemote returns the dispatching host's log first, then one log
// per remote host, and the truth.
func GenerateRemote(cfg RemoteConfig) ([]RemoteLog, RemoteTruth) {
	logs, truth, _ := generateRemote(cfg)
	return logs, truth
}

// GenerateForeignRemote returns the dispatching log of the session cfg
// describes with the remote logs of another session of the same shape:
// cfg with Seed foreign, so other machines (other clocks, drifts and
// latencies), other task spacing and other runs. Its machines served none
// of the dispatching log's tasks: their truth (Worker -1) is where their
// spans truly were on their own session's dispatching host, which is not
// this one, and their WallShift what the wall-clock anchors say against
// this dispatching log's. No placement of them by causality is true.
func GenerateForeignRemote(cfg RemoteConfig, foreign uint64) ([]RemoteLog, RemoteTruth) {
	own, _, wallA := generateRemote(cfg)
	fc := cfg
	fc.Seed = foreign
	other, truth, wallB := generateRemote(fc)
	for m, h := range truth.Hosts {
		h.Worker = -1
		h.WallShift += (wallB.WallNS - wallA.WallNS) - (wallB.MonoNS - wallA.MonoNS)
		truth.Hosts[m] = h
	}
	return append([]RemoteLog{own[0]}, other[1:]...), truth
}

// generateRemote is GenerateRemote, also returning the dispatching log's
// first wall-clock anchor.
func generateRemote(cfg RemoteConfig) ([]RemoteLog, RemoteTruth, strace.WallAnchor) {
	rnd := rand.New(rand.NewPCG(cfg.Seed, 0x7e40)) // the dispatcher's draws
	truth := RemoteTruth{Spans: map[RemoteKey]RemoteSpan{}, Hosts: map[string]RemoteHostTruth{}}
	wallErr := func() int64 {
		if cfg.WallErr <= 0 {
			return 0
		}
		return rnd.Int64N(2*cfg.WallErr+1) - cfg.WallErr
	}
	procErr := func() int64 { return wallErr() / 10 }

	const l4Pid, l4Facade, l4Sched = 3000, 3000, 3001
	var a bytes.Buffer
	ga := &generator{rnd: rnd, rnd2: rnd, w: &a}
	hA := [2]uint64{0x7f00a0000740, 0x7f00a0100640}
	t := int64(logStart)
	aWall := wallErr()
	firstWallA := strace.WallAnchor{Pid: l4Pid, MonoNS: t - 50_000, WallNS: wallEpoch + t - 50_000 + aWall + procErr()}
	ga.emit(firstWallA.MonoNS, hA[0], strace.Record{Kind: strace.KindWallAnchor, WallAnchor: firstWallA})
	l4 := func(tid int64, name string, ts, dur int64, attrs ...strace.Attr) {
		h := hA[0]
		if tid == l4Sched {
			h = hA[1]
		}
		ga.span(ts+dur, h, strace.Span{Pid: l4Pid, Tid: tid, Inv: 1, Depth: 0, Name: name, TS: ts, Dur: dur, Attrs: attrs})
	}
	l4(l4Facade, "network1.graph_build", t, 180_000, strace.Int("run_id", 1), strace.String("role", "facade"))
	t += 200_000

	hosts := make([]*remoteSim, len(cfg.Hosts))
	for i, hc := range cfg.Hosts {
		h := &remoteSim{cfg: hc, every: cfg.AnchorEvry, fwdMin: math.MaxInt64, retMin: math.MaxInt64}
		h.clock = remoteClock{off: float64(3_000_000_000_000 + rnd.Int64N(90_000_000_000_000)), drift: hc.DriftPPM * 1e-6}
		if hc.Rate.On() {
			h.clock.clk = newRateClock(1_000_000_000, uint64(h.clock.off), hc.DriftPPM, hc.Rate, cfg.Seed^uint64(0x4e770000+i))
		}
		h.daemon = int32(5000 + 1000*i)
		if cfg.SamePids {
			h.daemon = l4Pid
		}
		h.rank = &rank{pid: h.daemon + 100, tid: int64(h.daemon) + 100, dev: 0, freq: 50_000_000,
			offset: 1_500_000_000_000 + uint64(rnd.Int64N(1<<40)), drift: (rnd.Float64()*40 - 20) * 1e-6, handle: 0x7f00b0000640 + uint64(i)<<20}
		h.g = &generator{rnd: rand.New(rand.NewPCG(cfg.Seed, uint64(i+1))), rnd2: rand.New(rand.NewPCG(cfg.Seed, uint64(i+101))), w: &h.buf,
			truth: map[TruthKey]int64{}}
		hostName := hc.Machine
		h.g.hostSpan = func(s strace.Span) {
			k := RemoteKey{Machine: hostName, Pid: s.Pid, Run: s.Inv, Name: s.Name}
			if strace.FamilyOf(s.Name) == strace.FamilyNode {
				if id, ok := s.Attr("run_id"); ok {
					k.Run = uint64(id.Int)
				}
			}
			truth.Spans[k] = RemoteSpan{Start: s.TS, End: s.End(), TrueStart: h.clock.back(s.TS), TrueEnd: h.clock.back(s.End())}
		}
		fmt.Fprintf(&h.buf, "%s%s listening on 10.0.0.%d:7301\n", strace.DaemonBannerPrefix, hc.Machine, 2+i)
		x := h.clock.at(float64(t - 40_000))
		hw := wallErr()
		for j, pid := range []int32{h.daemon, h.rank.pid} {
			m := x + int64(j)*1_300
			w := strace.WallAnchor{Pid: pid, MonoNS: m, WallNS: wallEpoch + h.clock.back(m) + hw + procErr()}
			if hc.WallNS != 0 {
				w.WallNS = hc.WallNS
			}
			h.g.emit(m, 0x7f00b0000740, strace.Record{Kind: strace.KindWallAnchor, WallAnchor: w})
			if j == 0 {
				h.first = w
			}
		}
		h.nextAnch = x
		hosts[i] = h
	}

	for task := range cfg.Tasks {
		hi := task % max(len(hosts), 1)
		h := hosts[hi]
		h.runs++
		worker := int64(hi)
		ident := func(role string) []strace.Attr {
			return []strace.Attr{strace.Int("run_id", 1), strace.Int("task_slot", int64(task)), strace.Int("group_index", 0),
				strace.Int("worker_id", worker), strace.Int("dispatch_id", h.runs), strace.String("endpoint_kind", strace.EndpointRemoteL3),
				strace.Int("prepare_only", 0), strace.String("role", role), strace.Int("slot_id", int64(task%2)), strace.Int("generation", int64(task/2))}
		}
		subDur := 3_000 + rnd.Int64N(5_000)
		l4(l4Facade, "network1.submit", t, subDur, ident("facade")...)
		disp := t + subDur + 1_000 + rnd.Int64N(2_000)
		disDur := 4_000 + rnd.Int64N(8_000)
		sent := disp + disDur
		if cfg.MPI {
			sent = disp + rnd.Int64N(disDur)
		}
		l4(l4Sched, "network1.dispatch", disp, disDur, ident("scheduler")...)
		fwd := h.cfg.FwdMin + int64(rnd.ExpFloat64()*float64(h.cfg.FwdJitter))
		h.fwdMin = min(h.fwdMin, fwd)

		// The remote run, on the remote clock.
		xs := h.clock.at(float64(sent + fwd))
		end := h.remoteRun(xs, task)
		xe := end
		ret := h.cfg.RetMin + int64(rnd.ExpFloat64()*float64(h.cfg.RetJitter))
		h.retMin = min(h.retMin, ret)
		recv := h.clock.back(xe) + ret
		logSent := disp + disDur // what the dispatching log shows
		if cfg.MPI {
			logSent = disp
		}
		h.tasks = append(h.tasks, TaskBracket{Sent: logSent, Received: recv, Start: xs, End: xe})
		cd := 3_000 + rnd.Int64N(7_000)
		l4(l4Sched, "network1.complete", recv, cd, append(ident("worker"), strace.String("outcome", "ok"))...)
		t = recv + cd + 10_000 + rnd.Int64N(40_000)
		t += min(cfg.GapMin+int64(rnd.ExpFloat64()*float64(cfg.GapMean)), max(cfg.GapMax, cfg.GapMin))
	}
	l4(l4Facade, "network1.post_fence_retirement", t, 60_000, strace.Int("run_id", 1), strace.String("role", "facade"))
	ga.flushBefore(1 << 62)

	logs := []RemoteLog{{Name: "l4.log", Log: a.Bytes()}}
	for i, h := range hosts {
		for h.nextAnch <= h.clock.at(float64(t)) && cfg.AnchorEvry > 0 {
			h.anchor()
		}
		h.g.flushBefore(1 << 62)
		for k, v := range h.g.truth {
			truth.Spans[RemoteKey{Machine: h.cfg.Machine, Pid: k.Pid, Run: k.Inv, Name: k.Name}] = RemoteSpan{Start: 0, TrueStart: h.clock.back(v), Device: true}
		}
		logs = append(logs, RemoteLog{Name: h.cfg.Machine + ".log", Machine: h.cfg.Machine, Log: h.buf.Bytes()})
		shift := (h.first.WallNS - firstWallA.WallNS) - (h.first.MonoNS - firstWallA.MonoNS)
		truth.Hosts[h.cfg.Machine] = RemoteHostTruth{Worker: int64(i), WallShift: shift, FwdMin: h.fwdMin, RetMin: h.retMin, Tasks: h.tasks}
	}
	return logs, truth, firstWallA
}

// remoteSim is one remote machine being simulated.
type remoteSim struct {
	cfg      RemoteHost
	every    int64
	clock    remoteClock
	g        *generator
	buf      bytes.Buffer
	rank     *rank
	daemon   int32
	runs     int64
	prevRR   int64
	prevCR   int64
	nextAnch int64
	first    strace.WallAnchor
	fwdMin   int64
	retMin   int64
	tasks    []TaskBracket
}

// anchor writes the chip's next device clock anchor.
func (h *remoteSim) anchor() {
	r := h.rank
	win := 1_000 + h.g.rnd2.Int64N(39_000)
	read := h.nextAnch + h.g.rnd2.Int64N(win+1)
	h.g.emit(h.nextAnch+win, r.handle, strace.Record{Kind: strace.KindDeviceAnchor, DeviceAnchor: strace.DeviceAnchor{
		Pid: r.pid, Tid: r.tid, Dev: r.dev, HostNS: h.nextAnch, WindowNS: win, DevCyc: r.counterAt(read), DevFreq: r.freq}})
	h.nextAnch += h.every
}

// remoteRun writes the daemon's run of the task that arrived at xs (its
// host's clock) and returns the end of its last span.
func (h *remoteSim) remoteRun(xs int64, task int) int64 {
	g, rnd := h.g, h.g.rnd
	for h.every > 0 && h.nextAnch <= xs {
		h.anchor()
	}
	k := h.runs
	d := h.daemon
	handles := [3]uint64{0x7f00c0000740, 0x7f00c0100640, 0x7f00c0200640}
	node := func(tid int, name string, ts, dur int64, role string) int64 {
		g.span(ts+dur, handles[tid], strace.Span{Pid: d, Tid: int64(d) + int64(tid), Depth: 0, Name: name, TS: ts, Dur: dur, Attrs: []strace.Attr{
			strace.Int("run_id", k), strace.Int("task_slot", 0), strace.Int("group_index", 0), strace.Int("worker_id", 0),
			strace.Int("dispatch_id", k), strace.String("role", role), strace.Int("slot_id", 0), strace.Int("generation", k-1)}})
		return ts + dur
	}
	e := node(0, strace.SpanRemoteRunFirst, xs, 40_000+rnd.Int64N(80_000), "facade")
	e = node(0, "node.submit", e+2_000, 3_000+rnd.Int64N(3_000), "facade")
	e = node(1, "node.frame_submit", e+2_000, 5_000+rnd.Int64N(5_000), "scheduler")
	e = node(1, "node.dispatch", e+1_000, 3_000+rnd.Int64N(5_000), "scheduler")
	g.chipRunID, g.chipDispatchID = k, k
	e = g.chipRun(h.rank, uint64(k), 0x51a7c0de42f00d17, int(k-1), 0, e+5_000+rnd.Int64N(5_000), &h.prevRR, &h.prevCR, false)
	e = node(2, "node.complete", e+3_000, 3_000+rnd.Int64N(3_000), "worker")
	e = node(0, strace.SpanRemoteRunLast, e+2_000, 20_000+rnd.Int64N(40_000), "facade")
	_ = task
	return e
}
