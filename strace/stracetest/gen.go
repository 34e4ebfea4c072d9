package stracetest

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/phasetrace/phasetrace/strace"
)

// Config shapes a generated log: an L3 parent driving chip ranks, as the
// runtime writes it. Everything is derived from one seed, and the device
// side is simulated consistently — each rank's counter has its own offset,
// frequency and drift, device phases are stamped in cycles and converted
// with exact floors, origin_cyc and the clock anchors read the same counter
// — so that a converter can be checked against the truth.
//
// The knobs after Quirks each make a case real logs can hold; all are off
// by default, and with all of them off a seed gives the same bytes as before
// they existed.
type Config struct {
	Seed       uint64
	Rounds     int   // L3 runs, each dispatching one chip run to every rank
	AnchorEvry int64 // ns between device clock anchors (0: none)
	Pipelined  bool  // rank 0 overlaps run N+1's bind with run N's device work
	Legacy     bool  // rank 1 logs its bind breakdown as legacy "bind phase=" lines
	Ext        bool  // an external producer wraps runs and has a process of its own

	// RuntimeNs converts device ts and dur as the runtime does, each on its
	// own by a truncating double conversion (runtimeNs) instead of an exact
	// floor. Phases that abut at one cycle can then be logged overlapping
	// by 1 ns, and a child ending at its parent's end cycle can end 1 ns
	// past it: sched ends at graph_build's end cycle, and in every other run
	// (odd inv) the cycle values are chosen so that both happen.
	RuntimeNs bool
	// HostExact makes host spans abut and enclose exactly: bind encloses its
	// segments end to end, runner_run, claim_release and validate abut, and
	// every third run's bind is prebuilt, with one child (.prebuilt) of the
	// same ts and dur; with Ext, ext.pypto.decode_step has chip.run's ts and
	// dur.
	HostExact bool
	// HostParentsFirst writes host spans parents before children, each at
	// its start, instead of as the runtime does, on scope exit (children
	// first).
	HostParentsFirst bool
	// DeviceChildrenFirst writes device phases before their device_wall,
	// instead of as the runtime does (parents first).
	DeviceChildrenFirst bool
	// SparseAnchors writes device anchors only every sparseAnchorEvry (not
	// AnchorEvry) and leaves an idle second after every fourth round, so
	// runs are seconds from the nearest anchor and the last ones are placed
	// by extrapolation past it.
	SparseAnchors bool
	// DriftPPM replaces the ranks' counter drifts: rank 0 runs constantly
	// DriftPPM ppm fast, rank 1's drift varies slowly (period driftPeriod)
	// between -DriftPPM and +DriftPPM. Real counters stay within 100 ppm.
	DriftPPM float64
	// Rate makes every rank's counter rate change with host time around
	// its drift, each rank with draws of its own (see RateChange).
	Rate RateChange
	// AnchorPerLaunch has every rank read a device clock anchor just
	// before each of its runs: a window of 1–40 µs ending a few µs before
	// its runner_run starts (as well as any every AnchorEvry).
	AnchorPerLaunch bool
	// HugeIDs uses inv and hid values above 2^63, pids near the int32 limit
	// and tids near the int64 limit.
	HugeIDs bool
	// WallNS, where an entry is non-zero, is the wall_ns the wall-clock
	// anchors say, in the order they are written (the L3 parent's, then
	// each rank's), instead of the wall time: a clock set wrong, or an
	// absurd value (-2^63).
	WallNS []int64
	// ImpossiblePhaseTS, when non-zero, is the device ts rank 0's first
	// run logs its sm_reset phase at: an offset its runner_run cannot hold
	// (1e15 ns is 11 days), the other phases of the run as they were.
	ImpossiblePhaseTS int64
	// Ranks is the number of chip ranks (0: 2). Ranks past the second run
	// plainly: neither pipelined, nor legacy, nor wrapped by Ext.
	Ranks int
	// Prewarm starts each rank's thread with a long chip.prewarm.build
	// (150 to 210 ms, a root of a run of its own, with no slot_id) before
	// the first round, as the runtime's prewarm does: its run stays open
	// until the end of the log, so a converter draws it last.
	Prewarm bool
	// Slower lengthens one device phase of every run, as a change that
	// slows it down would (see Slower).
	Slower Slower
	// Start is the host time (ns) of the first round (0: 5 s); a later
	// start is a run made later on the same host: its wall-clock anchors
	// move with it.
	Start int64
	// Damage is how the log is damaged, as real logs are.
	Damage
}

// Slower lengthens the device phase Phase of every run by Ns of device
// time — one of the sequential phases preamble, config_validate,
// arena_wire, sm_reset, orch (sched and graph_build end later with it) or
// post_orch. The phase lasts Ns more in its device's counter cycles
// (Ns·freq/1e9 of them, truncated: exact when Ns is a whole number of
// cycles, as every multiple of 20 ns is at the generator's rates), so its
// logged duration is exactly Ns longer; what follows it in the run comes
// that much later on the device clock, which drifts from the host's: the
// run's host spans end Ns·(1±drift) later. The draws from the seed are
// those of the log without it: two logs of one seed, one with Slower,
// differ by it only (with AnchorEvry, the anchors every AnchorEvry fall
// among the runs differently and the draws after them differ).
type Slower struct {
	Phase string
	Ns    int64
}

// Damage says how a generated log is damaged, as real logs are: torn,
// cut, joined or unterminated records (see each field).
type Damage struct {
	Quirks bool // a torn record, two records on one line, CRLF line ends
	// TornAnchors cuts every third device anchor line inside its record,
	// before its last value, in the middle of the log.
	TornAnchors bool
	// SharedLine writes two records on one physical line now and then, as
	// forked ranks sharing one stderr do (Quirks does it too).
	SharedLine bool
	// CutAtEnd ends the log inside its last record, in the middle of its
	// last number and without a line end, as a log copied while being
	// written does.
	CutAtEnd bool
	// JoinRate joins records to the next one, as two ranks writing one
	// stream do: a joined record loses its line end, and the next record's
	// log prefix follows its last byte directly. About this fraction of the
	// records is joined (drawn from the seed, apart from the other knobs'
	// draws), and the first record of each kind — span, wall anchor,
	// device anchor, legacy bind line — always, the last of the log never
	// (nothing follows it). Every joined record is complete; a joined
	// device anchor is confirmed by its device's other anchors.
	JoinRate float64
	// Unterminated leaves the line end off the log's last line, as a log
	// whose writer had not ended its last line yet. The last record is
	// whole, and a span with attributes, so that a reader can tell it is
	// (lines that would come after the last such span, device anchors, are
	// written before it). With CutAtEnd the log is cut instead.
	Unterminated bool
}

// MaxRankDriftPPM bounds the drift the generator gives a rank of its own
// (without DriftPPM): 7 ppm more for each rank past the second, wrapping
// within ±MaxRankDriftPPM, so that with any RateChange of at most 40 ppm
// every counter stays within the 100 ppm real counters keep to.
const MaxRankDriftPPM = 60

const (
	// maxPipelineLag is how far behind the round the pipelined rank's
	// preparation may start: it falls behind by a few ms a round (see
	// flushBefore), and the generator holds the others' lines for as long.
	maxPipelineLag   = 1_000_000_000   // ns
	sparseAnchorEvry = 2_000_000_000   // ns between device anchors with SparseAnchors
	sparseIdle       = 1_000_000_000   // idle ns after every fourth round with SparseAnchors
	driftPeriod      = 128_000_000_000 // ns, the period of rank 1's varying drift: at 100 ppm it moves by under 10 ppm in 2 s
	logStart         = 5_000_000_000   // host ns of the first round
	hugeInvBase      = 1<<64 - 1<<20   // inv before the first with HugeIDs, above 2^63
)

// rank is one simulated chip child.
type rank struct {
	pid    int32
	tid    int64 // the thread that writes its spans and anchors
	dev    int32
	freq   uint64  // counter Hz
	offset uint64  // counter value at host time 0
	drift  float64 // rate error, for the simulation only
	handle uint64  // pthread handle in log prefixes
	// clk, when set, is the counter instead of offset and drift: a rate
	// that changes (Config.Rate, DriftPPM's varying rank).
	clk *rateClock
}

// counterAt is the rank's counter value at host time h (the simulation's
// truth; the generator may use floating point, the converter may not).
func (r *rank) counterAt(h int64) uint64 {
	if r.clk != nil {
		return r.clk.at(h)
	}
	return r.offset + uint64(float64(h)*float64(r.freq)/1e9*(1+r.drift))
}

// hostAt is the host time at which the counter reads c.
func (r *rank) hostAt(c uint64) int64 {
	if r.clk != nil {
		return r.clk.hostAt(c)
	}
	return int64(float64(c-r.offset) * 1e9 / float64(r.freq) / (1 + r.drift))
}

// runtimeNs converts cycles to ns as the runtime does: a truncating double
// conversion, which can come out 1 ns short of the exact floor.
func runtimeNs(c, freq uint64) int64 { return int64(float64(c) / float64(freq) * 1e9) }

type genLine struct {
	at    int64 // emit time: when the runtime wrote it
	order int   // among lines of one emit time, lower first (HostParentsFirst: depth)
	seq   int
	text  []byte
	kind  strace.Kind // the record's kind
	attrs bool        // the record ends in attribute text
}

// TruthKey names a device span of a generated log: its process, its
// invocation and its name.
type TruthKey struct {
	Pid  int32
	Inv  uint64
	Name string
}

type generator struct {
	truth   map[TruthKey]int64 // true host start of every device span, when wanted
	cfg     Config
	rnd     *rand.Rand
	rnd2    *rand.Rand  // draws of the knobs, so that they leave rnd's alone
	lines   []genLine   // written since the last flush, in the order written
	pending genLineHeap // written before it and not yet flushed
	seq     int
	written int
	anchors int  // device anchor lines so far
	open    bool // the last line written has no line end yet
	w       io.Writer

	// JoinRate's draws, and the kinds joined so far; final is set for the
	// last flush.
	rndJoin *rand.Rand
	joined  map[strace.Kind]bool
	final   bool
	ranks   int // how many chip ranks

	// busy holds the spans written on the L3 threads (see free).
	busy threadBusy

	// For a remote worker's log (GenerateRemote): the identity its chip
	// runs carry, and every host span written, for its truth.
	chipRunID, chipDispatchID int64
	hostSpan                  func(strace.Span)
}

func (g *generator) emit(at int64, handle uint64, rec strace.Record) {
	g.emitOrdered(at, 0, handle, rec)
}

func (g *generator) emitOrdered(at int64, order int, handle uint64, rec strace.Record) {
	rec.Prefix = strace.Prefix{Present: true, MonoNS: at, Thread: handle, Level: "TIMING", Func: strace.SpanFunc}
	if rec.Kind == strace.KindWallAnchor || rec.Kind == strace.KindDeviceAnchor {
		rec.Prefix.Func = strace.AnchorFunc
	}
	b, err := strace.AppendRecord(nil, &rec)
	if err != nil {
		panic(err)
	}
	attrs := rec.Kind == strace.KindSpan && len(rec.Span.Attrs) > 0
	g.lines = append(g.lines, genLine{at: at, order: order, seq: g.seq, text: b, kind: rec.Kind, attrs: attrs})
	g.seq++
}

// span writes s at at, on scope exit, or with HostParentsFirst a host span
// at its start, before its children (and an ext. span before the run it
// wraps).
func (g *generator) span(at int64, handle uint64, s strace.Span) {
	order := 0
	if g.cfg.HostParentsFirst && !s.IsDevice() {
		at, order = s.TS, int(s.Depth)
		if strings.HasPrefix(s.Name, "ext.") {
			order--
		}
	}
	if g.hostSpan != nil && !s.IsDevice() {
		g.hostSpan(s)
	}
	g.emitOrdered(at, order, handle, strace.Record{Kind: strace.KindSpan, Span: s})
}

// deviceAnchor writes a device anchor, with TornAnchors every third one cut
// inside its record (before its last value, so that the cut shows).
func (g *generator) deviceAnchor(at int64, handle uint64, a strace.DeviceAnchor) {
	g.emit(at, handle, strace.Record{Kind: strace.KindDeviceAnchor, DeviceAnchor: a})
	g.anchors++
	if !g.cfg.TornAnchors || g.anchors%3 != 0 {
		return
	}
	l := &g.lines[len(g.lines)-1]
	from := bytes.Index(l.text, []byte("[CLOCK_ANCHOR]")) + len("[CLOCK_ANCHOR]")
	to := bytes.Index(l.text, []byte(" dev_freq=")) + len(" dev_freq=")
	cut := from + 1 + g.rnd2.IntN(to-from)
	l.text = append(l.text[:cut:cut], '\n')
}

// flushBefore writes, in emit order, the lines written before t. The lines
// not yet due wait in a heap, so that a flush costs the lines it writes and
// those written since the last one, however many are waiting. (With
// Pipelined they are the others' lines of up to maxPipelineLag: the
// pipelined rank's runs are shorter and it makes one a round, as the others
// do, so its run N starts ever earlier than theirs, until it is
// maxPipelineLag behind, and its lines still to come hold back theirs.)
func (g *generator) flushBefore(t int64) {
	for _, l := range g.lines {
		g.pending.push(l)
	}
	clear(g.lines)
	g.lines = g.lines[:0]
	for len(g.pending) > 0 && g.pending[0].at < t {
		g.lines = append(g.lines, g.pending.pop())
	}
	n := len(g.lines)
	if g.final && g.cfg.Unterminated {
		lastSpanLast(g.lines)
	}
	for i, l := range g.lines {
		g.written++
		g.open = false
		if g.join(l, g.final && i == n-1) {
			g.w.Write(l.text[:len(l.text)-1])
			g.open = true
			continue
		}
		if (g.cfg.Quirks || g.cfg.SharedLine) && g.written%89 == 0 {
			// Forked ranks share one stderr: two records on one line.
			g.w.Write(l.text[:len(l.text)-1])
			g.open = true
			continue
		}
		if g.cfg.Quirks && g.written%97 == 0 {
			g.w.Write(l.text[:len(l.text)-1])
			g.w.Write([]byte("\r\n"))
			continue
		}
		g.w.Write(l.text)
	}
	clear(g.lines)
	g.lines = g.lines[:0]
}

// genLineHeap is a binary heap of lines, the first in emit order on top:
// by emit time, then order, then seq (lines are unique by seq, so the order
// is total, and lines come off in the order a stable sort gives).
type genLineHeap []genLine

// emitsBefore says whether a is written before b.
func emitsBefore(a, b *genLine) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	if a.order != b.order {
		return a.order < b.order
	}
	return a.seq < b.seq
}

func (h *genLineHeap) push(l genLine) {
	s := append(*h, l)
	i := len(s) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !emitsBefore(&l, &s[p]) {
			break
		}
		s[i] = s[p]
		i = p
	}
	s[i] = l
	*h = s
}

// pop removes the first line and returns it.
func (h *genLineHeap) pop() genLine {
	s := *h
	top, last := s[0], s[len(s)-1]
	s[len(s)-1] = genLine{}
	s = s[:len(s)-1]
	*h = s
	if len(s) == 0 {
		return top
	}
	i := 0
	for {
		c := 2*i + 1
		if c >= len(s) {
			break
		}
		if c+1 < len(s) && emitsBefore(&s[c+1], &s[c]) {
			c++
		}
		if !emitsBefore(&s[c], &last) {
			break
		}
		s[i] = s[c]
		i = c
	}
	s[i] = last
	return top
}

// join decides whether JoinRate joins l to the line after it (last: none
// comes after it).
func (g *generator) join(l genLine, last bool) bool {
	if g.cfg.JoinRate <= 0 || last || l.kind == 0 {
		return false
	}
	if g.rndJoin == nil {
		g.rndJoin = rand.New(rand.NewPCG(g.cfg.Seed, 0x6a6f696e))
		g.joined = map[strace.Kind]bool{}
	}
	if g.rndJoin.Float64() >= g.cfg.JoinRate && g.joined[l.kind] {
		return false
	}
	g.joined[l.kind] = true
	return true
}

// lastSpanLast moves the lines after the last span that ends in
// attributes before it, keeping their order, so that it ends the log.
func lastSpanLast(lines []genLine) {
	k := len(lines) - 1
	for k >= 0 && !lines[k].attrs {
		k--
	}
	if k >= 0 {
		slices.Reverse(lines[k:])
		slices.Reverse(lines[k : len(lines)-1])
	}
}

// segments are the bind segments in the order a run executes them.
var segments = []string{"args", "arena_build", "runtime_init", "host_orch", "graph_pack", "static_arena", "shared_mem", "gm_heap", "host_view_close", "arena_h2d"}

// Generate writes the log cfg describes to w. The same cfg always gives the
// same bytes. It stops at the first error of w and returns it.
func Generate(w io.Writer, cfg Config) error { return generateTruth(w, cfg, nil) }

// errWriter writes to w until w fails, then writes nothing more and keeps
// the error.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	e.err = err
	return n, err
}

// ids are the process, thread and callable identities of a generated log.
type ids struct {
	l3, ext       int32 // L3 parent, external producer
	l3Tid, extTid int64
	handles       [3]uint64 // L3 main, L3 scheduler, external producer threads
	invBase       uint64    // every rank's first inv is invBase+1
	hids          [2]uint64 // prefill, decode
}

func newIDs(cfg Config, ranks []*rank) ids {
	if !cfg.HugeIDs {
		return ids{l3: 4000, ext: 4300, l3Tid: 4000, extTid: 4301,
			handles: [3]uint64{0x7f3a10c00740, 0x7f3a10b00640, 0x7f3a0000aaaa},
			hids:    [2]uint64{0x51a7c0de42f00d17, 0x9f3c2a11d00db1e5}}
	}
	const maxPid, maxTid = 1<<31 - 1, 1<<63 - 1
	for i, r := range ranks {
		r.pid = maxPid - 1 - int32(i)
		if i >= 2 {
			r.pid = maxPid - 10 - int32(i) // below the external producer's
		}
		r.tid = maxTid - 2 - int64(i)
		r.handle = 1<<64 - 0x1000 + uint64(i)<<8
	}
	return ids{l3: maxPid, ext: maxPid - 3, l3Tid: maxTid - 8, extTid: maxTid,
		handles: [3]uint64{1<<64 - 0x40, 1<<64 - 0x80, 1<<64 - 1},
		invBase: hugeInvBase, hids: [2]uint64{0xd1a7c0de42f00d17, 0xfffffffffffffff1}}
}

func generateTruth(w io.Writer, cfg Config, truth map[TruthKey]int64) (err error) {
	ew := &errWriter{w: w}
	defer func() { err = ew.err }() // after the log's end is written
	w, end := endOfLog(ew, cfg)
	defer end()
	g := &generator{cfg: cfg, rnd: rand.New(rand.NewPCG(cfg.Seed, 0x5eed)), rnd2: rand.New(rand.NewPCG(cfg.Seed, 0x6b6e6f62)), w: w, truth: truth}
	ranks := newRanks(cfg)
	g.ranks = len(ranks)
	id := newIDs(cfg, ranks)
	l3 := id.l3
	every := cfg.AnchorEvry
	if cfg.SparseAnchors {
		every = sparseAnchorEvry
	}
	t := int64(logStart)
	if cfg.Start != 0 {
		t = cfg.Start
	}
	if cfg.Prewarm {
		g.prewarm(ranks, id, t)
	}
	g.wallAnchors(ranks, id, t)
	nextAnchor := t
	inv := map[int32]uint64{}
	for _, r := range ranks {
		inv[r.pid] = id.invBase
	}
	hids := id.hids
	prevRunnerEnd := make([]int64, len(ranks))
	prevClaimEnd := make([]int64, len(ranks))
	for round := 0; round < cfg.Rounds && ew.err == nil; round++ {
		roundStart := t
		hid := hids[1]
		if round == 0 {
			hid = hids[0] // the once-seen callable: prefill
		}
		// After an idle pause the pipeline has drained.
		idleBefore := cfg.SparseAnchors && round > 0 && round%4 == 0
		for ri, r := range ranks {
			inv[r.pid]++
			slot := int64(round % 2)
			base := t
			if cfg.Pipelined && ri == 0 && round > 0 && !idleBefore {
				// Prepare run N+1 while run N is still on the device.
				base = prevRunnerEnd[ri] - 4_000_000 - g.rnd.Int64N(1_000_000)
				base = max(base, t-maxPipelineLag)
			}
			submit := base + int64(ri)*40_000
			subDur := 2_000 + g.rnd.Int64N(2_000)
			submit = g.busy.free(id.l3Tid, submit, subDur)
			dispatch := submit + subDur + 500 + g.rnd.Int64N(1_000)
			disDur := 1_000 + g.rnd.Int64N(2_000)
			dispatch = g.busy.free(id.l3Tid+1, dispatch, disDur)
			nodeAttrs := func(role string) []strace.Attr {
				return []strace.Attr{strace.Int("run_id", int64(round/4+1)), strace.Int("task_slot", int64(round*len(ranks)+ri)),
					strace.Int("group_index", 0), strace.Int("worker_id", int64(ri)), strace.Int("dispatch_id", int64(round*len(ranks)+ri+1)),
					strace.String("role", role), strace.Int("slot_id", slot), strace.Int("generation", int64(round/2))}
			}
			g.span(submit+subDur, id.handles[0], strace.Span{Pid: l3, Tid: id.l3Tid, Depth: 0, Name: "node.submit", TS: submit, Dur: subDur, Attrs: nodeAttrs("facade")})
			g.span(dispatch+disDur, id.handles[1], strace.Span{Pid: l3, Tid: id.l3Tid + 1, Depth: 0, Name: "node.dispatch", TS: dispatch, Dur: disDur, Attrs: nodeAttrs("scheduler")})

			// The chip run.
			start := dispatch + disDur + 5_000 + g.rnd.Int64N(5_000)
			e := g.chipRun(r, inv[r.pid], hid, round, slot, start, &prevRunnerEnd[ri], &prevClaimEnd[ri], cfg.Legacy && ri == 1 && round%3 == 0)
			complete := g.busy.free(id.l3Tid+1, e+2_000, 1_500)
			g.span(complete+1_500, id.handles[1], strace.Span{Pid: l3, Tid: id.l3Tid + 1, Depth: 0, Name: "node.complete", TS: complete, Dur: 1_500, Attrs: nodeAttrs("worker")})
			if cfg.Ext && ri == 1 {
				ts, dur := start-700, e-start+1_500
				if cfg.HostExact {
					ts, dur = start, e-start // chip.run's own
				}
				g.span(e+900, r.handle, strace.Span{Pid: r.pid, Tid: r.tid, Depth: 0, Name: "ext.pypto.decode_step", TS: ts, Dur: dur, Attrs: []strace.Attr{strace.Int("layer", int64(round))}})
			}
			t = max(t, e)
		}
		if cfg.Ext {
			g.span(t+30_000, id.handles[2], strace.Span{Pid: id.ext, Tid: id.extTid, Depth: 0, Name: "ext.serving.request", TS: roundStart - 20_000, Dur: t - roundStart + 40_000, Attrs: []strace.Attr{strace.String("model", "qwen3-14b"), strace.Int("tokens", 1)}})
		}
		nextAnchor = g.deviceAnchors(ranks, nextAnchor, every, t)
		t += 200_000 + g.rnd.Int64N(100_000)
		if cfg.SparseAnchors && round%4 == 3 {
			t += sparseIdle
		}
		// Every later line starts at or after the next round's start, or
		// after the pipelined rank's next preparation.
		next := t
		if cfg.Pipelined {
			next = min(next, prevRunnerEnd[0]-5_000_000)
		}
		g.flushBefore(next - 1_000_000)
		if round%64 == 63 {
			g.busy.forget(next - 10_000_000)
		}
	}
	g.final = true
	g.flushBefore(1 << 62)
	if cfg.Quirks {
		fmt.Fprintf(w, "[mono_ns=%d][T0x%x][TIMING] emit_host_span: [STRACE] v=1 pid=%d tid=%d inv=%d hid=%x depth=1 name=chip.run.bi\n",
			t+1_000, ranks[0].handle, ranks[0].pid, ranks[0].tid, id.invBase+999, hids[0])
	} else if g.open {
		w.Write([]byte("\n"))
	}
	return nil
}

// endOfLog returns the writer a log is generated to, and the function
// that then writes its end as cfg asks to w: cut inside its last record
// (CutAtEnd), or without its last line end (Unterminated).
func endOfLog(w io.Writer, cfg Config) (io.Writer, func()) {
	switch {
	case cfg.CutAtEnd:
		tw := &tailWriter{w: w}
		return tw, func() { w.Write(cutInLastRecord(tw.tail)) }
	case cfg.Unterminated:
		tw := &tailWriter{w: w}
		return tw, func() { w.Write(bytes.TrimSuffix(bytes.TrimSuffix(tw.tail, []byte("\n")), []byte("\r"))) }
	}
	return w, func() {}
}

// newRanks returns the chip ranks of a log: their processes, devices and
// device clocks (a steady drift each, or one that wanders: DriftPPM,
// Rate).
func newRanks(cfg Config) []*rank {
	ranks := []*rank{
		{pid: 4100, tid: 4100, dev: 0, freq: 50_000_000, offset: 1_700_000_000_000, drift: 23e-6, handle: 0x7f3a2d5ff640},
		{pid: 4200, tid: 4200, dev: 1, freq: 1_000_000_000, offset: 987_654_321_000_000, drift: -41e-6, handle: 0x7f3a2d6ff640},
	}
	for i := 2; i < cfg.Ranks; i++ {
		pid := 4400 + 100*int32(i-2)
		ranks = append(ranks, &rank{pid: pid, tid: int64(pid), dev: int32(i), freq: 100_000_000, offset: 3_000_000_000_000 * uint64(i),
			drift: float64((i*7+MaxRankDriftPPM)%(2*MaxRankDriftPPM)-MaxRankDriftPPM) * 1e-6, handle: 0x7f3a2d7ff640 + uint64(i-2)<<20})
	}
	if cfg.DriftPPM != 0 {
		ranks[0].drift = cfg.DriftPPM * 1e-6
		ranks[1].drift = 0
		ranks[1].clk = newRateClock(ranks[1].freq, ranks[1].offset, 0, RateChange{WanderPPM: cfg.DriftPPM, WanderPeriod: driftPeriod}, cfg.Seed^0xd71f7)
	}
	if cfg.Rate.On() {
		for i, r := range ranks {
			rc := cfg.Rate
			if r.clk != nil {
				rc.WanderPPM, rc.WanderPeriod = r.clk.change.WanderPPM, r.clk.change.WanderPeriod
			}
			r.clk = newRateClock(r.freq, r.offset, r.drift*1e6, rc, cfg.Seed^uint64(0x7a7e0000+i))
		}
	}
	return ranks
}

// prewarm writes each rank's graph build, before the log's first round at
// t (Prewarm).
func (g *generator) prewarm(ranks []*rank, id ids, t int64) {
	for _, r := range ranks {
		dur := 150_000_000 + g.rnd2.Int64N(60_000_000)
		ts := t - 260_000_000 + g.rnd2.Int64N(20_000_000)
		g.span(ts+dur, r.handle, strace.Span{Pid: r.pid, Tid: r.tid, Inv: id.invBase, Hid: id.hids[0], Name: "chip.prewarm.build", TS: ts, Dur: dur,
			Attrs: []strace.Attr{strace.Int("graphs", 2)}})
	}
}

// wallAnchors writes the wall clock anchor of the L3 parent and of each
// rank, just before t (WallNS).
func (g *generator) wallAnchors(ranks []*rank, id ids, t int64) {
	wallPids := []int32{id.l3}
	for _, r := range ranks {
		wallPids = append(wallPids, r.pid)
	}
	for i, p := range wallPids {
		at := t - 10_000 + int64(i)*1_700
		wall := 1_767_225_600_000_000_000 + at
		if i < len(g.cfg.WallNS) && g.cfg.WallNS[i] != 0 {
			wall = g.cfg.WallNS[i]
		}
		g.emit(at, id.handles[0], strace.Record{Kind: strace.KindWallAnchor, WallAnchor: strace.WallAnchor{Pid: p, MonoNS: at, WallNS: wall}})
	}
}

// deviceAnchors writes each rank's clock anchors at next, next+every, ...
// up to t, and returns when the next are due.
func (g *generator) deviceAnchors(ranks []*rank, next, every, t int64) int64 {
	for every > 0 && next <= t {
		for _, r := range ranks {
			win := 1_000 + g.rnd.Int64N(39_000)
			read := next + g.rnd.Int64N(win+1)
			g.deviceAnchor(next+win, r.handle, strace.DeviceAnchor{
				Pid: r.pid, Tid: r.tid, Dev: r.dev, HostNS: next, WindowNS: win, DevCyc: r.counterAt(read), DevFreq: r.freq})
		}
		next += every
	}
	return next
}

// tailWriter writes to w all but the log's last line (with its line end,
// if any), which it holds in tail: the log's end can then be changed
// without holding the whole log.
type tailWriter struct {
	w    io.Writer
	tail []byte
}

func (t *tailWriter) Write(p []byte) (int, error) {
	t.tail = append(t.tail, p...)
	if len(t.tail) < 2 {
		return len(p), nil
	}
	if i := bytes.LastIndexByte(t.tail[:len(t.tail)-1], '\n'); i >= 0 {
		t.w.Write(t.tail[:i+1])
		t.tail = append(t.tail[:0], t.tail[i+1:]...)
	}
	return len(p), nil
}

// cutInLastRecord returns log cut inside its last record, without a line
// end: in the middle of its last dur, dur_ns, dev_freq or wall_ns value
// (where a reader that ignored the missing line end would take a wrong
// number), else a few bytes before its end.
func cutInLastRecord(log []byte) []byte {
	log = bytes.TrimSuffix(log, []byte("\n"))
	log = bytes.TrimSuffix(log, []byte("\r"))
	start := bytes.LastIndexByte(log, '\n') + 1
	line := log[start:]
	at := -1
	for _, k := range []string{" dur=", " dur_ns=", " dev_freq=", " wall_ns="} {
		if i := bytes.LastIndex(line, []byte(k)); i >= 0 && i+len(k) > at {
			at = i + len(k)
		}
	}
	if at < 0 {
		return log[:len(log)-min(3, len(line))]
	}
	n := 0
	for at+n < len(line) && (line[at+n] == '-' || '0' <= line[at+n] && line[at+n] <= '9') {
		n++
	}
	return log[:start+at+n/2]
}

// chipRun generates one run of rank r and returns its end.
func (g *generator) chipRun(r *rank, inv uint64, hid uint64, round int, slot, start int64, prevRunnerEnd, prevClaimEnd *int64, legacy bool) int64 {
	sp := func(depth int32, name string, ts, dur int64, attrs ...strace.Attr) strace.Span {
		return strace.Span{Pid: r.pid, Tid: r.tid, Inv: inv, Hid: hid, Depth: depth, Name: name, TS: ts, Dur: dur, Attrs: attrs}
	}
	exact := g.cfg.HostExact
	// bind and its segments.
	ts := start
	var segs []strace.Span
	names := segments
	if exact && round%3 == 2 {
		// A prebuilt bind: one child, measured by the same clock reads.
		d := 150_000 + g.rnd2.Int64N(100_000)
		segs = append(segs, sp(2, strace.SpanBind+".prebuilt", ts, d, strace.Int("cpu_ns", d*9/10)))
		ts += d
		names = nil
	}
	for _, s := range names {
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
		segs = append(segs, sp(2, strace.SpanBind+"."+s, ts, d, attrs...))
		ts += d
	}
	bindDur := ts - start + 3_000
	if exact {
		bindDur = ts - start
	}
	for _, s := range segs {
		if legacy {
			seg := s.Name[len(strace.SpanBind+"."):]
			line := fmt.Sprintf("[mono_ns=%d][T0x%x][TIMING] bind_phases: [hbg_bind.cpp:88] bind phase=%s start_ns=%d dur_ns=%d cpu_ns=%d\n",
				s.End(), r.handle, seg, s.TS, s.Dur, s.Attrs[0].Int)
			g.lines = append(g.lines, genLine{at: s.End(), seq: g.seq, text: []byte(line), kind: strace.KindBindPhase, attrs: true})
			g.seq++
			continue
		}
		g.span(s.End(), r.handle, s)
	}
	g.span(start+bindDur, r.handle, sp(1, strace.SpanBind, start, bindDur, strace.Int("ntensor", 26)))

	// runner_run: the device run inside it, after the previous run's claim
	// was released.
	rrStart := max(start+bindDur+1_000, *prevClaimEnd+500)
	if exact {
		rrStart = max(start+bindDur, *prevClaimEnd)
	}
	lead := 20_000 + g.rnd.Int64N(300_000) // host enqueue before the device starts
	devStart := rrStart + lead
	if g.cfg.AnchorPerLaunch {
		// The runtime reads the counter before it launches: a window
		// inside runner_run, ending before the device starts.
		win := 1_000 + g.rnd2.Int64N(min(39_000, lead-3_000))
		host := rrStart + 500
		read := host + g.rnd2.Int64N(win+1)
		g.deviceAnchor(host+win, r.handle, strace.DeviceAnchor{Pid: r.pid, Tid: r.tid, Dev: r.dev, HostNS: host, WindowNS: win, DevCyc: r.counterAt(read), DevFreq: r.freq})
	}
	// The device stamps in cycles.
	c0 := r.counterAt(devStart)
	cyc := func(ns int64) uint64 { return uint64(float64(ns) * float64(r.freq) / 1e9) }
	type win = cycleWin
	wallW := win{c0, 0}
	slower := func(name string, w win) win {
		if g.cfg.Slower.Phase == name {
			w.e += cyc(g.cfg.Slower.Ns)
		}
		return w
	}
	pre := win{c0 + cyc(3_000+g.rnd.Int64N(5_000)), 0}
	pre.e = pre.s + cyc(1_000_000+g.rnd.Int64N(2_000_000))
	pre = slower(strace.PhasePreamble, pre)
	gb := win{pre.e, 0}
	cv := slower(strace.PhaseConfigValidate, win{gb.s, gb.s + cyc(2_000_000+g.rnd.Int64N(3_000_000))})
	aw := slower(strace.PhaseArenaWire, win{cv.e, cv.e + cyc(2_000_000+g.rnd.Int64N(3_000_000))})
	sm := slower(strace.PhaseSmReset, win{aw.e, aw.e + cyc(2_000_000+g.rnd.Int64N(3_000_000))})
	orch := slower(strace.PhaseOrch, win{sm.e, sm.e + cyc(8_000_000+g.rnd.Int64N(10_000_000))})
	sched := win{orch.s + cyc(500), 0}
	sched.e = orch.e + cyc(5_000_000+g.rnd.Int64N(10_000_000))
	gb.e = sched.e + cyc(20_000)
	origin := pre.s
	if g.cfg.RuntimeNs {
		gb.e = sched.e // sched ends graph_build
		if inv%2 == 1 {
			// Choose the cycles of two boundaries so that the conversion
			// shows: abutting phases overlapping, a child past its parent.
			conv := func(c uint64) int64 { return runtimeNs(c, r.freq) }
			_ = abutOverlapping(conv, origin, &cv, &aw) || abutOverlapping(conv, origin, &aw, &sm)
			endPastParent(conv, origin, &sched, &gb)
		}
	}
	post := win{gb.e + cyc(5_000), 0}
	post.e = post.s + cyc(500_000+g.rnd.Int64N(1_000_000))
	post = slower(strace.PhasePostOrch, post)
	wallW.e = post.e + cyc(2_000)
	slot0 := win{orch.s + cyc(1_000), orch.s + cyc(1_000+4_000_000+g.rnd.Int64N(4_000_000))}
	devEnd := r.hostAt(wallW.e)
	rrEnd := devEnd + 30_000 + g.rnd.Int64N(400_000) // completion drain
	*prevRunnerEnd = rrEnd
	g.span(rrEnd, r.handle, sp(1, strace.SpanRunnerRun, rrStart, rrEnd-rrStart))
	claimEnd := rrEnd + 3_000 + g.rnd.Int64N(5_000)
	claimStart, valStart := rrEnd+200, claimEnd+100
	if exact {
		claimStart, valStart = rrEnd, claimEnd
	}
	g.span(claimEnd, r.handle, sp(1, strace.SpanClaimRelease, claimStart, claimEnd-claimStart))
	*prevClaimEnd = claimEnd
	valEnd := claimEnd + 5_000 + g.rnd.Int64N(5_000)
	g.span(valEnd, r.handle, sp(1, strace.SpanValidate, valStart, valEnd-valStart))

	// The host reads the buffer back and logs the device spans, after
	// validate, on the same origin rules as package reduce.
	ns := func(c uint64) int64 { return floorNanos(c, r.freq) }
	if g.cfg.RuntimeNs {
		ns = func(c uint64) int64 { return runtimeNs(c, r.freq) }
	}
	at := valEnd + 2_000
	if g.truth != nil {
		for _, p := range []struct {
			name string
			c    uint64
		}{{"", wallW.s}, {"." + strace.PhasePreamble, pre.s}, {"." + strace.PhaseGraphBuild, gb.s},
			{"." + strace.PhaseConfigValidate, cv.s}, {"." + strace.PhaseArenaWire, aw.s}, {"." + strace.PhaseSmReset, sm.s},
			{"." + strace.PhasePostOrch, post.s}, {"." + strace.PhaseOrch, orch.s}, {"." + strace.PhaseSched, sched.s},
			{".task_slot_0", slot0.s}} {
			g.truth[TruthKey{r.pid, inv, strace.SpanDeviceWall + p.name}] = r.hostAt(p.c)
		}
	}
	dev := []strace.Span{sp(2, strace.SpanDeviceWall, 0, ns(wallW.e-wallW.s), strace.String("clk", "dev"), strace.Uint("origin_cyc", origin), strace.Int("dev", int64(r.dev)))}
	for _, p := range []struct {
		name string
		w    win
	}{{strace.PhasePreamble, pre}, {strace.PhaseGraphBuild, gb}, {strace.PhaseConfigValidate, cv}, {strace.PhaseArenaWire, aw},
		{strace.PhaseSmReset, sm}, {strace.PhasePostOrch, post}, {strace.PhaseOrch, orch}, {strace.PhaseSched, sched},
		{"task_slot_0", slot0}} {
		ts := ns(p.w.s - origin)
		if p.name == strace.PhaseSmReset && round == 0 && r.dev == 0 && g.cfg.ImpossiblePhaseTS != 0 {
			ts = g.cfg.ImpossiblePhaseTS
		}
		dev = append(dev, sp(3, strace.SpanDeviceWall+"."+p.name, ts, ns(p.w.e-p.w.s), strace.String("clk", "dev")))
	}
	if g.cfg.DeviceChildrenFirst {
		slices.Reverse(dev)
	}
	for _, s := range dev {
		g.span(at, r.handle, s)
	}
	end := at + 10_000
	runID, dispatchID := int64(round/4+1), int64(round*g.ranks+int(r.dev)+1)
	if g.chipRunID != 0 {
		runID, dispatchID = g.chipRunID, g.chipDispatchID
	}
	root := sp(0, strace.SpanRun, start, end-start, strace.Int("run_id", runID), strace.Int("dispatch_id", dispatchID),
		strace.Uint("run_epoch", inv), strace.Int("slot_id", slot), strace.Int("generation", int64(round/2)))
	g.span(end, r.handle, root)
	return end
}

// cycleWin is a device phase, [s, e) in counter cycles.
type cycleWin struct{ s, e uint64 }

// abutOverlapping moves the cycle where a ends and b begins, keeping both
// phases, to the cycle nearest it at which the runtime's separate
// conversions of ts and dur log a ending 1 ns after b starts, and reports
// whether there is one. (Such cycles lie where the double conversion comes
// out short: at the top of the binades of the cycle offset.)
func abutOverlapping(conv func(uint64) int64, origin uint64, a, b *cycleWin) bool {
	c, ok := cycleNear(a.e, a.s+1, b.e, func(c uint64) bool {
		return conv(a.s-origin)+conv(c-a.s) > conv(c-origin)
	})
	if ok {
		a.e, b.s = c, c
	}
	return ok
}

// endPastParent moves the cycle where child and parent both end, later by
// at most the parent's length, to the first cycle at which the runtime's
// conversions log the child ending past its parent, and reports whether
// there is one.
func endPastParent(conv func(uint64) int64, origin uint64, child, parent *cycleWin) bool {
	c, ok := cycleNear(parent.e, parent.e, parent.e+(parent.e-parent.s), func(c uint64) bool {
		return conv(child.s-origin)+conv(c-child.s) > conv(parent.s-origin)+conv(c-parent.s)
	})
	if ok {
		child.e, parent.e = c, c
	}
	return ok
}

// cycleNear returns the cycle in [lo, hi) nearest to from for which ok
// holds, trying at most a few thousand cycles spread over the range.
func cycleNear(from, lo, hi uint64, ok func(uint64) bool) (uint64, bool) {
	const tries = 1 << 13
	step := max((hi-lo)/tries, 1)
	for d := uint64(0); d <= hi-lo; d += step {
		if c := from + d; c < hi && ok(c) {
			return c, true
		}
		if d > 0 && d <= from-lo && ok(from-d) {
			return from - d, true
		}
	}
	return 0, false
}

// GenerateTruth returns the log cfg describes and the true host start of
// each of its device spans (the instant the simulated device counter says
// the span began), which a converter's placement can be checked against.
func GenerateTruth(cfg Config) ([]byte, map[TruthKey]int64) {
	var b bytes.Buffer
	truth := map[TruthKey]int64{}
	generateTruth(&b, cfg, truth)
	return b.Bytes(), truth
}

// floorNanos converts c cycles at freq Hz to ns: the exact floor of
// c·1e9/freq, in 128-bit arithmetic. It panics when the result leaves the
// int64 range.
func floorNanos(c, freq uint64) int64 {
	hi, lo := bits.Mul64(c, 1_000_000_000)
	if freq == 0 || hi >= freq {
		panic(fmt.Sprintf("stracetest: %d cycles at %d Hz out of the nanosecond range", c, freq))
	}
	q, _ := bits.Div64(hi, lo, freq)
	if q > math.MaxInt64 {
		panic(fmt.Sprintf("stracetest: %d cycles at %d Hz out of the nanosecond range", c, freq))
	}
	return int64(q)
}

// threadBusy is when the L3 threads are busy: the spans written on them,
// by thread, in buckets of busyBucket ns of their start. A thread runs one
// span at a time, so a hand-off placed where the thread is busy — the
// pipelined rank, preparing ahead of the others, meets their hand-offs of
// earlier rounds — waits until it is free.
type threadBusy struct {
	spans map[int64]map[int64][]busySpan // tid → bucket → spans starting in it
}

type busySpan struct{ ts, end int64 }

const busyBucket = 8_192 // ns: longer than any hand-off span

// free returns the first start at or after ts at which thread tid is free
// for dur ns, and marks it busy then.
func (b *threadBusy) free(tid, ts, dur int64) int64 {
	if b.spans == nil {
		b.spans = map[int64]map[int64][]busySpan{}
	}
	m := b.spans[tid]
	if m == nil {
		m = map[int64][]busySpan{}
		b.spans[tid] = m
	}
	for moved := true; moved; {
		moved = false
		for k := ts/busyBucket - 1; k <= (ts+dur)/busyBucket; k++ {
			for _, s := range m[k] {
				if s.ts < ts+dur && ts < s.end {
					ts, moved = s.end+500, true
				}
			}
		}
	}
	k := ts / busyBucket
	m[k] = append(m[k], busySpan{ts, ts + dur})
	return ts
}

// forget lets go of the spans that start before t: nothing is placed
// before it any more.
func (b *threadBusy) forget(t int64) {
	for _, m := range b.spans {
		for k := range m {
			if k < t/busyBucket-1 {
				delete(m, k)
			}
		}
	}
}
