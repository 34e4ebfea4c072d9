package compareplan

import (
	"cmp"
	"math"
	"slices"
	"strconv"

	"github.com/phasetrace/phasetrace/internal/firstpass"
	"github.com/phasetrace/phasetrace/internal/held"
	"github.com/phasetrace/phasetrace/strace"
)

// Plan is how a comparison's logs are drawn: each log's side and each
// process's, the trace pids of the measure side's pids that base uses too,
// what the sides are aligned by and the rank pairs of the delta counter.
type Plan struct {
	// BaseLogs is how many of the Logs logs are base's (the first).
	BaseLogs, Logs int
	// Pids are the measure side's pids the base side uses too, and the
	// trace pids they were given (OS pid → trace pid); nil when no pid
	// repeats (PidMaps).
	Pids map[int32]int32

	// What Align decided: what the sides are aligned by; the sides'
	// decode callables (Aligned ByDecode) and their chip.run roots; where
	// each side's aligned span starts, on its side's first log's clock;
	// what is added to every host time of the measure side (ShiftNs) and
	// of the base side (BaseShiftNs: 0 unless the measure side would have
	// started before 0).
	Aligned                 Aligned
	BaseHid, MeasureHid     uint64
	BaseSteps, MeasureSteps int64
	BaseStart, MeasureStart int64
	ShiftNs, BaseShiftNs    int64
	// Pairs are the rank pairs of the delta counter.
	Pairs []Pair
	// Note says why the sides were not moved, or what weakens the
	// comparison ("" when nothing).
	Note string

	side  map[int32]firstpass.Side // by trace pid
	pairs map[int32]int            // index in Pairs, by the trace pid of either process
}

// Aligned is what the sides of a comparison are aligned by.
type Aligned uint8

const (
	// NotAligned: a side has no host span; neither is moved.
	NotAligned Aligned = iota
	// ByDecode: their first decode steps.
	ByDecode
	// ByRun: their first chip.run (a side has no decode callable).
	ByRun
	// BySpan: their first host spans (a side has no chip.run).
	BySpan
)

// String is what the summary calls a, "" for NotAligned.
func (a Aligned) String() string {
	return [...]string{NotAligned: "", ByDecode: "decode", ByRun: "run", BySpan: "span"}[a]
}

// Pair is a rank pair: the k-th process of each side by OS pid among
// those that ran its side's decode callable, and per side (0 base, 1
// measure) the decode steps seen and those waiting for their partner
// (oldest first).
type Pair struct {
	// Base and Measure are the processes' trace pids, BaseOS and
	// MeasureOS their OS pids.
	Base, Measure     int32
	BaseOS, MeasureOS int32
	seen              [2]int64
	wait              [2][]step
}

// step is a decode step waiting for its partner: its index from 0, its
// start, its duration and where it was read.
type step struct {
	idx, ts, dur int64
	at           held.Pos
}

// MeasureThread marks the log-prefix thread handles of a comparison's
// measure side (a pthread handle, a user-space address, never has it), so
// that a bind phase line is never taken for a line of the other side's
// thread of the same handle, nor for its repeat; log_thread arguments
// show the handle without it.
const MeasureThread = 1 << 63

// MaxBehind is how many decode steps of one side of a pair wait at most
// for the other side's.
const MaxBehind = 1 << 16

// New returns the plan of a comparison of logs logs, the first baseLogs
// base's.
func New(baseLogs, logs int) *Plan {
	return &Plan{BaseLogs: baseLogs, Logs: logs, side: map[int32]firstpass.Side{}, pairs: map[int32]int{}}
}

// LogSide is the side of log i.
func (p *Plan) LogSide(i int) firstpass.Side {
	if i < p.BaseLogs {
		return firstpass.BaseSide
	}
	return firstpass.MeasureSide
}

// IsDecode reports whether hid is the decode callable of pid's side; a nil
// plan (no comparison) has none.
func (p *Plan) IsDecode(pid int32, hid uint64) bool {
	if p == nil || p.Aligned != ByDecode {
		return false
	}
	switch p.side[pid] {
	case firstpass.BaseSide:
		return hid == p.BaseHid
	case firstpass.MeasureSide:
		return hid == p.MeasureHid
	}
	return false
}

// SideInputs returns the indexes of the logs of side s.
func (p *Plan) SideInputs(s firstpass.Side) []int {
	lo, hi := 0, p.BaseLogs
	if s == firstpass.MeasureSide {
		lo, hi = p.BaseLogs, p.Logs
	}
	out := make([]int, 0, hi-lo)
	for i := lo; i < hi; i++ {
		out = append(out, i)
	}
	return out
}

// PidMaps returns, per log, the trace pids given to the measure side's
// pids that the base side uses too (the same map for every measure log:
// one run's processes, kept as Pids), counting down from the largest int32
// past every pid the logs use; nil when no pid repeats.
func (p *Plan) PidMaps(rs *firstpass.RemoteScan) []map[int32]int32 {
	used, base := map[int32]bool{}, map[int32]bool{}
	for i, pids := range rs.Pids {
		for pid := range pids {
			used[pid] = true
			if i < p.BaseLogs {
				base[pid] = true
			}
		}
	}
	var clash []int32
	for i := p.BaseLogs; i < len(rs.Pids); i++ {
		for pid := range rs.Pids[i] {
			if base[pid] && !slices.Contains(clash, pid) {
				clash = append(clash, pid)
			}
		}
	}
	if len(clash) == 0 {
		return nil
	}
	slices.Sort(clash)
	m := map[int32]int32{}
	next := int32(math.MaxInt32)
	for _, pid := range clash {
		for used[next] {
			next--
		}
		used[next] = true
		m[pid] = next
	}
	out := make([]map[int32]int32, p.Logs)
	for i := p.BaseLogs; i < p.Logs; i++ {
		out[i] = m
	}
	p.Pids = m
	return out
}

// Settle tells every process of s (scanned with the trace pids PidMaps
// gave) its side and, for a measure process given a trace pid, its OS pid.
func (p *Plan) Settle(s *firstpass.ScanResult) {
	os := map[int32]int32{}
	for o, t := range p.Pids {
		os[t] = o
	}
	for i := range min(p.Logs, len(s.Remote.Pids)) {
		for pid := range s.Remote.Pids[i] {
			side := p.LogSide(i)
			p.side[pid] = side
			pr := s.Proc(pid)
			pr.Side, pr.OsPid = side, os[pid]
		}
	}
}

// Align finds what each side is aligned by and adds the shift that
// aligns them to the measure logs' shifts (and, when the measure side
// would start before 0, the same amount to both sides').
func (p *Plan) Align(s *firstpass.ScanResult, shift []int64) {
	var cs firstpass.CompareScan
	if s.Cmp != nil {
		cs = *s.Cmp
	}
	base, measure := cs.SideRuns(p.SideInputs(firstpass.BaseSide), shift), cs.SideRuns(p.SideInputs(firstpass.MeasureSide), shift)
	p.BaseSteps, p.MeasureSteps = base.Steps, measure.Steps
	switch {
	case base.Steps > 1 && measure.Steps > 1:
		p.Aligned, p.BaseStart, p.MeasureStart = ByDecode, base.DecodeFirst, measure.DecodeFirst
		p.BaseHid, p.MeasureHid = base.Decode, measure.Decode
		p.pair(base.Pids, measure.Pids)
	case base.HasRun && measure.HasRun:
		p.Aligned, p.BaseStart, p.MeasureStart = ByRun, base.RunFirst, measure.RunFirst
		p.Note = "a side has no decode callable (a hid with more than one chip.run): aligned by the first chip.run, no delta counter"
	default:
		bs, okB := firstSpan(s, p.SideInputs(firstpass.BaseSide), shift)
		ms, okM := firstSpan(s, p.SideInputs(firstpass.MeasureSide), shift)
		if !okB || !okM {
			p.Note = "a side has no host span: not moved"
			return
		}
		p.Aligned, p.BaseStart, p.MeasureStart = BySpan, bs, ms
		p.Note = "a side has no chip.run: aligned by the first host span, no delta counter"
	}
	d := firstpass.SatSub(p.BaseStart, p.MeasureStart)
	lo, hi, ok := extent(&s.Remote, p.SideInputs(firstpass.MeasureSide), shift)
	_, bhi, bok := extent(&s.Remote, p.SideInputs(firstpass.BaseSide), shift)
	var up int64
	if ok && firstpass.SatAdd(lo, d) < 0 {
		up = -firstpass.SatAdd(lo, d)
	}
	if d == math.MinInt64 || d == math.MaxInt64 || ok && firstpass.SatAdd(firstpass.SatAdd(hi, d), up) == math.MaxInt64 || bok && firstpass.SatAdd(bhi, up) == math.MaxInt64 {
		p.Note = "moving the measure side by " + strconv.FormatInt(d, 10) + " ns would leave the int64 range: not moved"
		return
	}
	p.ShiftNs, p.BaseShiftNs = firstpass.SatAdd(d, up), up
	for i := range shift {
		if p.LogSide(i) == firstpass.MeasureSide {
			shift[i] = firstpass.SatAdd(shift[i], p.ShiftNs)
		} else {
			shift[i] = firstpass.SatAdd(shift[i], up)
		}
	}
}

// firstSpan is the earliest start of a host span of the logs inputs, each
// moved by its shift.
func firstSpan(s *firstpass.ScanResult, inputs []int, shift []int64) (int64, bool) {
	first, found := int64(math.MaxInt64), false
	for _, i := range inputs {
		if ts, ok := s.FirstTS[i]; ok {
			first, found = min(first, firstpass.SatAdd(ts, shift[i])), true
		}
	}
	return first, found
}

// extent is the earliest start and the latest end of the host spans of the
// logs inputs the first pass read, each moved by its shift.
func extent(rs *firstpass.RemoteScan, inputs []int, shift []int64) (lo, hi int64, ok bool) {
	lo, hi = math.MaxInt64, math.MinInt64
	for _, i := range inputs {
		if i < len(rs.Lo) && rs.Lo[i] <= rs.Hi[i] {
			lo, hi, ok = min(lo, firstpass.SatAdd(rs.Lo[i], shift[i])), max(hi, firstpass.SatAdd(rs.Hi[i], shift[i])), true
		}
	}
	return lo, hi, ok
}

// pair makes the rank pairs: the k-th process of each side by OS pid
// among those that ran its decode callable.
func (p *Plan) pair(base, measure map[int32]bool) {
	toOS := map[int32]int32{}
	for o, t := range p.Pids {
		toOS[t] = o
	}
	osOf := func(pid int32) int32 {
		if o, ok := toOS[pid]; ok {
			return o
		}
		return pid
	}
	sorted := func(set map[int32]bool) []int32 {
		out := make([]int32, 0, len(set))
		for pid := range set {
			out = append(out, pid)
		}
		slices.SortFunc(out, func(a, b int32) int {
			if c := cmp.Compare(osOf(a), osOf(b)); c != 0 {
				return c
			}
			return cmp.Compare(a, b)
		})
		return out
	}
	bs, ms := sorted(base), sorted(measure)
	for k := range min(len(bs), len(ms)) {
		p.pairs[bs[k]], p.pairs[ms[k]] = len(p.Pairs), len(p.Pairs)
		p.Pairs = append(p.Pairs, Pair{Base: bs[k], Measure: ms[k], BaseOS: osOf(bs[k]), MeasureOS: osOf(ms[k])})
	}
	if len(bs) != len(ms) {
		p.Note = strconv.Itoa(len(bs)) + " base and " + strconv.Itoa(len(ms)) + " measure processes ran the decode callable: the last " +
			strconv.Itoa(max(len(bs), len(ms))-min(len(bs), len(ms))) + " have no delta counter"
	}
}

// A Delta is what a decode step of a rank pair comes to once its partner
// is known: a value of the pair's delta counter, or a step without one.
type Delta struct {
	// Pair is the rank pair, an index in Plan.Pairs.
	Pair int
	// Unpaired is the step's side when it has no partner (its side was
	// MaxBehind steps ahead, or its partner was not kept); 0 when paired.
	Unpaired firstpass.Side
	// TS and At are where the measure step starts and was read, Value its
	// duration minus base's (paired).
	TS    int64
	At    held.Pos
	Value int64
}

// Step takes a drawn chip.run root of process pid, callable hid, from ts
// for dur, read at at. A decode step of a rank pair is paired with the
// other side's step of the same index, when it has come: Step returns what
// it comes to, or false when the step is no rank pair's decode step or
// waits for its partner.
func (p *Plan) Step(pid int32, hid uint64, ts, dur int64, at held.Pos) (Delta, bool) {
	if !p.IsDecode(pid, hid) {
		return Delta{}, false
	}
	k, ok := p.pairs[pid]
	if !ok {
		return Delta{}, false
	}
	d := &p.Pairs[k]
	s, side := 0, firstpass.BaseSide
	if pid == d.Measure {
		s, side = 1, firstpass.MeasureSide
	}
	o := 1 - s
	st := step{idx: d.seen[s], ts: ts, dur: dur, at: at}
	d.seen[s]++
	if d.seen[o] <= st.idx { // its partner is still to come
		if len(d.wait[s]) >= MaxBehind {
			return Delta{Pair: k, Unpaired: side}, true
		}
		d.wait[s] = append(d.wait[s], st)
		return Delta{}, false
	}
	q := d.wait[o]
	if len(q) == 0 || q[0].idx != st.idx { // its partner was not kept
		return Delta{Pair: k, Unpaired: side}, true
	}
	other := q[0]
	d.wait[o] = q[1:]
	if len(d.wait[o]) == 0 {
		d.wait[o] = q[:0]
	}
	b, m := other, st
	if s == 0 {
		b, m = st, other
	}
	return Delta{Pair: k, TS: m.ts, At: m.at, Value: m.dur - b.dur}, true
}

// Drain lets go of the steps still waiting once every run is drawn, and
// returns how many there were, per pair in Pairs' order: base's, then
// measure's. Each has no partner.
func (p *Plan) Drain() [][2]int64 {
	out := make([][2]int64, len(p.Pairs))
	for k := range p.Pairs {
		d := &p.Pairs[k]
		for s := range d.wait {
			out[k][s] = int64(len(d.wait[s]))
			d.wait[s] = nil
		}
	}
	return out
}

// Adjust puts a record of log i on its side: a measure record's pids
// become their trace pids (Pids), its thread handle is marked
// (MeasureThread).
func (p *Plan) Adjust(i int, rec *strace.Record) {
	if p.LogSide(i) != firstpass.MeasureSide {
		return
	}
	if p.Pids != nil {
		firstpass.RemapPids(rec, p.Pids)
	}
	if rec.Prefix.Thread != 0 {
		rec.Prefix.Thread |= MeasureThread
	}
}
