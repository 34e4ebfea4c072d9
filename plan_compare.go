package phasetrace

import (
	"cmp"
	"math"
	"slices"
	"strconv"

	"github.com/phasetrace/phasetrace/internal/firstpass"
	"github.com/phasetrace/phasetrace/internal/held"
	"github.com/phasetrace/phasetrace/perfetto"
)

// The plan of a comparison (Compare): each log's and each process's side,
// the trace pids of the measure side's pids that base uses too, what the
// sides are aligned by and the rank pairs of the delta counter.

// comparePlan is how a comparison's logs are drawn: each log's side, each
// process's, the decode callables and the rank pairs of the delta counter.
type comparePlan struct {
	baseLogs, logs int
	sum            *CompareSummary
	side           map[int32]firstpass.Side // by trace pid
	// decode is each side's decode callable, where both have one
	// (hasDecode).
	decode    [2]uint64
	hasDecode bool
	// pairs are the rank pairs, by the trace pid of either process.
	pairs map[int32]*deltaPair
	list  []*deltaPair
}

// logSide is the side of log i.
func (p *comparePlan) logSide(i int) firstpass.Side {
	if i < p.baseLogs {
		return firstpass.BaseSide
	}
	return firstpass.MeasureSide
}

// isDecode reports whether hid is the decode callable of pid's side.
func (p *comparePlan) isDecode(pid int32, hid uint64) bool {
	if p == nil || !p.hasDecode {
		return false
	}
	s := p.side[pid]
	return s != 0 && p.decode[s-1] == hid
}

// sideInputs returns the indexes of the logs of side s.
func (p *comparePlan) sideInputs(s firstpass.Side) []int {
	lo, hi := 0, p.baseLogs
	if s == firstpass.MeasureSide {
		lo, hi = p.baseLogs, p.logs
	}
	out := make([]int, 0, hi-lo)
	for i := lo; i < hi; i++ {
		out = append(out, i)
	}
	return out
}

// pidMaps returns, per log, the trace pids given to the measure side's
// pids that the base side uses too (the same map for every measure log:
// one run's processes), counting down from the largest int32 past every
// pid the logs use; nil when no pid repeats.
func (p *comparePlan) pidMaps(rs *firstpass.RemoteScan) []map[int32]int32 {
	used, base := map[int32]bool{}, map[int32]bool{}
	for i, pids := range rs.Pids {
		for pid := range pids {
			used[pid] = true
			if i < p.baseLogs {
				base[pid] = true
			}
		}
	}
	var clash []int32
	for i := p.baseLogs; i < len(rs.Pids); i++ {
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
	out := make([]map[int32]int32, p.logs)
	for i := p.baseLogs; i < p.logs; i++ {
		out[i] = m
	}
	return out
}

// align finds what each side is aligned by and adds the shift that
// aligns them to the measure logs' shifts (and, when the measure side
// would start before 0, the same amount to both sides').
func (p *comparePlan) align(s *firstpass.ScanResult, shift []int64) {
	sum := p.sum
	var cs firstpass.CompareScan
	if s.Cmp != nil {
		cs = *s.Cmp
	}
	base, measure := cs.SideRuns(p.sideInputs(firstpass.BaseSide), shift), cs.SideRuns(p.sideInputs(firstpass.MeasureSide), shift)
	sum.BaseSteps, sum.MeasureSteps = base.Steps, measure.Steps
	switch {
	case base.Steps > 1 && measure.Steps > 1:
		sum.Aligned, sum.BaseStart, sum.MeasureStart = "decode", base.DecodeFirst, measure.DecodeFirst
		sum.BaseHid, sum.MeasureHid = base.Decode, measure.Decode
		p.decode, p.hasDecode = [2]uint64{base.Decode, measure.Decode}, true
		p.pair(base.Pids, measure.Pids, sum.Pids)
	case base.HasRun && measure.HasRun:
		sum.Aligned, sum.BaseStart, sum.MeasureStart = "run", base.RunFirst, measure.RunFirst
		sum.Note = "a side has no decode callable (a hid with more than one chip.run): aligned by the first chip.run, no delta counter"
	default:
		bs, okB := firstSpan(s, p.sideInputs(firstpass.BaseSide), shift)
		ms, okM := firstSpan(s, p.sideInputs(firstpass.MeasureSide), shift)
		if !okB || !okM {
			sum.Note = "a side has no host span: not moved"
			return
		}
		sum.Aligned, sum.BaseStart, sum.MeasureStart = "span", bs, ms
		sum.Note = "a side has no chip.run: aligned by the first host span, no delta counter"
	}
	d := firstpass.SatSub(sum.BaseStart, sum.MeasureStart)
	lo, hi, ok := extent(&s.Remote, p.sideInputs(firstpass.MeasureSide), shift)
	_, bhi, bok := extent(&s.Remote, p.sideInputs(firstpass.BaseSide), shift)
	var up int64
	if ok && firstpass.SatAdd(lo, d) < 0 {
		up = -firstpass.SatAdd(lo, d)
	}
	if d == math.MinInt64 || d == math.MaxInt64 || ok && firstpass.SatAdd(firstpass.SatAdd(hi, d), up) == math.MaxInt64 || bok && firstpass.SatAdd(bhi, up) == math.MaxInt64 {
		sum.Note = "moving the measure side by " + strconv.FormatInt(d, 10) + " ns would leave the int64 range: not moved"
		return
	}
	sum.ShiftNs, sum.BaseShiftNs = firstpass.SatAdd(d, up), up
	for i := range shift {
		if p.logSide(i) == firstpass.MeasureSide {
			shift[i] = firstpass.SatAdd(shift[i], sum.ShiftNs)
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
// among those that ran its decode callable. os maps the measure side's
// OS pids to their trace pids.
func (p *comparePlan) pair(base, measure map[int32]bool, os map[int32]int32) {
	toOS := map[int32]int32{}
	for o, t := range os {
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
		d := &deltaPair{base: bs[k], measure: ms[k], sum: len(p.sum.Pairs)}
		p.sum.Pairs = append(p.sum.Pairs, RankPair{Base: osOf(bs[k]), Measure: osOf(ms[k])})
		p.pairs[bs[k]], p.pairs[ms[k]] = d, d
		p.list = append(p.list, d)
	}
	if len(bs) != len(ms) {
		p.sum.Note = strconv.Itoa(len(bs)) + " base and " + strconv.Itoa(len(ms)) + " measure processes ran the decode callable: the last " +
			strconv.Itoa(max(len(bs), len(ms))-min(len(bs), len(ms))) + " have no delta counter"
	}
}

// deltaPair is a rank pair: its processes (trace pids), its entry in
// CompareSummary.Pairs, per side (0 base, 1 measure) the steps seen and
// those waiting for their partner (oldest first), and its counter track.
type deltaPair struct {
	base, measure int32
	sum           int
	seen          [2]int64
	wait          [2][]deltaStep
	track         perfetto.Track
	made, ok      bool
}

// deltaStep is a decode step waiting for its partner: its index from 0,
// its start and its duration.
type deltaStep struct {
	idx, ts, dur int64
	at           held.Pos
}

// measureThread marks the log-prefix thread handles of a comparison's
// measure side (a pthread handle, a user-space address, never has it), so
// that a bind phase line is never taken for a line of the other side's
// thread of the same handle, nor for its repeat; log_thread arguments
// show the handle without it.
const measureThread = 1 << 63
