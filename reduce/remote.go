package reduce

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
)

// HostBracket is one task a dispatching host sent to a worker on another
// host, seen from both: on the dispatching host's clock the frame left no
// earlier than Sent and the reply was in by Received; on the remote host's
// clock the task's run began at Start and ended at End. So the remote
// instant Start was, on the dispatching host, no earlier than Sent, and End
// no later than Received.
type HostBracket struct {
	Sent, Received HostNanos // dispatching host
	Start, End     HostNanos // remote host
}

// HostMethod says how a remote host's span was placed on the dispatching
// host's axis.
type HostMethod uint8

// Host placement methods.
const (
	// HostUnplaced: nothing relates the host's clock to the dispatching
	// host's; its spans keep their own times.
	HostUnplaced HostMethod = iota
	// HostWall: moved by the difference of the hosts' wall-clock anchors,
	// which agree only as well as their NTP does: no bound.
	HostWall
	// HostCausal: placed by the causality of the tasks the dispatching host
	// sent it, with a bound.
	HostCausal
)

func (m HostMethod) String() string {
	switch m {
	case HostWall:
		return "wall"
	case HostCausal:
		return "causal"
	}
	return "unplaced"
}

// Defaults of the host clock model.
const (
	// DefaultHostMaxRate bounds the rate error of one host's
	// CLOCK_MONOTONIC against another's: 500 ppm, the most NTP slews a
	// clock by (crystals differ by tens of ppm).
	DefaultHostMaxRate PPB = 500_000
	// DefaultHostRateStability is how far the rate error may move over the
	// tasks within the rate horizon of an instant: 10 ppm.
	DefaultHostRateStability PPB = 10_000
	// DefaultHostRateHorizon is the span of remote host time, centred on
	// an instant, whose tasks the stability relates to it: 10 s.
	DefaultHostRateHorizon HostNanos = 10_000_000_000
	// maxHostKnots bounds the points at which the interval is computed
	// exactly; between them it is interpolated conservatively.
	maxHostKnots = 1024
)

// HostFitOption configures FitHost.
type HostFitOption func(*hostConfig)

type hostConfig struct {
	maxRate, stability PPB
	horizon            HostNanos
}

// defaultHostConfig is the host clock model's defaults.
func defaultHostConfig() hostConfig {
	return hostConfig{maxRate: DefaultHostMaxRate, stability: DefaultHostRateStability, horizon: DefaultHostRateHorizon}
}

// WithHostMaxRate sets the largest rate error of the remote clock against
// the dispatching host's the model allows (default DefaultHostMaxRate),
// clamped to [0, 0.5e9] ppb.
func WithHostMaxRate(r PPB) HostFitOption {
	return func(c *hostConfig) { c.maxRate = min(max(r, 0), 500_000_000) }
}

// WithHostRateStability sets how far the rate error may move across the
// tasks within the rate horizon (default DefaultHostRateStability).
func WithHostRateStability(r PPB) HostFitOption {
	return func(c *hostConfig) { c.stability = max(r, 0) }
}

// WithHostRateHorizon sets the span of remote host time over which the
// rate stability holds (default DefaultHostRateHorizon; 0: every task):
// tasks farther from an instant bound it only through the maximum rate
// error.
func WithHostRateHorizon(d HostNanos) HostFitOption {
	return func(c *hostConfig) { c.horizon = max(d, 0) }
}

// Host fit errors.
var (
	// ErrNoBrackets: a host fit was asked for with no task to fit.
	ErrNoBrackets = errors.New("reduce: no task brackets a remote host's clock")
	// ErrOneSided: every task bounds the remote clock from the same side
	// (the dispatching log has no dispatch ends, or no completions), so
	// nothing bounds it from the other.
	ErrOneSided = errors.New("reduce: the tasks bound a remote host's clock from one side only")
)

// HostFit is a remote host's clock mapped onto the dispatching host's:
// the central line Y(x) = Y0 + (x − X0)·(1+Rate), each task's run drawn
// along it shifted to the middle of what both its ends allow (the shift
// moving linearly between runs: the map is monotone, so nesting survives),
// and for each instant the interval every bracket allows, from which its
// bound is published.
type HostFit struct {
	line   clockLine
	shifts []hostShift // the drawn map's offsets from the line, by remote instant
	most   int64       // the largest of them, in magnitude
	rateLo PPB         // rate interval, widened by the stability
	rateHi PPB
	knots  []hostKnot
	limit  HostNanos
	tasks  int
	// horizon is the span of remote time a knot's rates hold over (0:
	// every instant); farther, an interval is carried at the maximum rate.
	horizon int64
	// For Proves: the most rate error the model allows, and the constant
	// rates within ±hostPinSearch·maxRate at which a line carries every run
	// inside its task (dataFits: there are such rates).
	maxRate, dataLo, dataHi PPB
	dataFits                bool
}

// hostPinSearch is how far past the model's rate limit (a multiple of it)
// Proves looks for the rates the brackets allow, to tell a rate the data
// pin against the limit from one the limit merely bounds.
const hostPinSearch = 4

// hostKnot is the exact interval at remote instant x, and the rates
// (ppb) it may be carried with within the horizon.
type hostKnot struct {
	x, lo, hi int64
	rlo, rhi  PPB
}

// hostShift is the drawn map's offset from the central line at remote
// instant x: constant over a task's run, linear between runs.
type hostShift struct{ x, d int64 }

// FitHost fits the remote host's clock to the brackets of the tasks it ran.
// Brackets whose ends contradict themselves (Received before Sent, End
// before Start) are errors; brackets that no (offset, rate) reconciles make
// an *InconsistencyError (unwrapping to ErrInconsistent) naming two of
// them by index.
func FitHost(brackets []HostBracket, opts ...HostFitOption) (*HostFit, error) {
	cfg := defaultHostConfig()
	for _, o := range opts {
		o(&cfg)
	}
	f, lo, hi, err := hostRates(brackets, cfg)
	if err != nil {
		return nil, err
	}
	xs := make([]int64, 0, 2*len(brackets))
	limF, limR := int64(math.MaxInt64), int64(math.MaxInt64)
	for _, b := range brackets {
		xs = append(xs, int64(b.Start), int64(b.End))
	}
	// The rate an interval is carried between instants with: the rates
	// the brackets allow, and however far it may move across them.
	lo, hi = max(lo-cfg.stability, -cfg.maxRate), min(hi+cfg.stability, cfg.maxRate)
	ln, ok := f.line()
	if !ok {
		return nil, ErrOneSided
	}
	fit := &HostFit{line: ln, rateLo: lo, rateHi: hi, tasks: len(brackets), maxRate: cfg.maxRate}
	if c, ok := fitCentral(f.sorted(), min(hostPinSearch*cfg.maxRate, 2_000_000_000), nil); ok && c.feasible {
		fit.dataLo, fit.dataHi, fit.dataFits = PPB(floorDiv(c.kL, ppbToFit)), PPB(-floorDiv(-c.kR, ppbToFit)), true
	}
	slices.Sort(xs)
	xs = slices.Compact(xs)
	if len(xs) > maxHostKnots {
		step := (len(xs) + maxHostKnots - 1) / maxHostKnots
		sub := xs[:0:0]
		for i := 0; i < len(xs); i += step {
			sub = append(sub, xs[i])
		}
		if sub[len(sub)-1] != xs[len(xs)-1] {
			sub = append(sub, xs[len(xs)-1])
		}
		xs = sub
	}
	fit.horizon = int64(cfg.horizon)
	for _, x := range xs {
		l, h, rlo, rhi, err := f.span(x)
		if err != nil {
			return nil, err
		}
		rlo, rhi = max(rlo-cfg.stability, -cfg.maxRate), min(rhi+cfg.stability, cfg.maxRate)
		fit.knots = append(fit.knots, hostKnot{x, l, h, rlo, rhi})
	}
	// Where one constant rate carries every run inside its task, the runs
	// are drawn along the central line of such lines; where none does
	// (the rate moved), along the central lines of the windows of tasks
	// around each (see levels.at).
	var ls *levels
	if c, ok := fitCentral(f.sorted(), cfg.maxRate, nil); !ok || !c.feasible {
		ls = new(levels)
		var scratch fitScratch
		var tmp []bracket
		fitLevels(ls, f.sorted(), func(b *bracket) bracket { return *b }, cfg.maxRate, &scratch, &tmp)
	}
	fit.centre(brackets, ls)
	// The information limit: with the rate fitted, the offset is known to
	// the smallest forward plus the smallest return latency and no better.
	for _, b := range brackets {
		if b.Sent == math.MinInt64 || b.Received == math.MaxInt64 {
			continue // a task with one side only
		}
		y0, ok1 := ln.at(int64(b.Start))
		y1, ok2 := ln.at(int64(b.End))
		if ok1 && ok2 {
			limF = min(limF, y0-int64(b.Sent))
			limR = min(limR, int64(b.Received)-y1)
		}
	}
	if limF != math.MaxInt64 && limR != math.MaxInt64 {
		fit.limit = HostNanos(max(limF+limR, 0))
	}
	return fit, nil
}

// hostRates builds the clock fit of the brackets and returns the rates
// they allow: an error when none does.
func hostRates(brackets []HostBracket, cfg hostConfig) (f *clockFit, lo, hi PPB, err error) {
	if len(brackets) == 0 {
		return nil, 0, 0, ErrNoBrackets
	}
	f = newClockFit(cfg.maxRate, cfg.stability, int64(cfg.horizon))
	for i, b := range brackets {
		if b.End < b.Start || b.Received < b.Sent {
			return nil, 0, 0, fmt.Errorf("reduce: task %d: %w: remote run [%d, %d] ns within [%d, %d] ns", i, ErrInconsistent, b.Start, b.End, b.Sent, b.Received)
		}
		f.add(int64(b.Start), int64(b.Sent), math.MaxInt64, 2*i)
		f.add(int64(b.End), math.MinInt64, int64(b.Received), 2*i+1)
	}
	lo, hi, err = f.rateRange()
	return f, lo, hi, err
}

// Tasks returns the number of tasks fitted.
func (f *HostFit) Tasks() int { return f.tasks }

// Rate returns the rate error the line converts with (ppb: the remote clock
// runs Rate ppb slow against the dispatching host's when positive, i.e.
// dispatching-host ns per remote ns is 1 + Rate/1e9) and the interval the
// brackets allow for it near the middle task (within half the rate
// horizon of it; elsewhere the rate may differ by the stability per
// horizon, within the maximum).
func (f *HostFit) Rate() (rate, lo, hi PPB) { return f.line.ratePPB(), f.rateLo, f.rateHi }

// Offset returns where the line puts remote instant x, minus x: the
// dispatching host's clock less the remote host's there.
func (f *HostFit) Offset(x HostNanos) (HostNanos, bool) {
	y, ok := f.at(int64(x))
	return HostNanos(y) - x, ok
}

// centre sets, per task, how far from the central line its run is drawn:
// not at all, or with ls (the fits of the windows of tasks around it,
// where no one rate fits every task) as far as their central lines are
// from it, on average over the run's start and end; either way moved into
// what the exact intervals at both ends allow. One shift for the whole
// run keeps its durations those of the line (exactly its rate); between
// runs the shift moves linearly, never faster than half a ns per ns, so
// the map stays monotone.
func (f *HostFit) centre(brackets []HostBracket, ls *levels) {
	var sh []hostShift
	for _, b := range brackets {
		lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
		var want int64 // the estimate's central lines, less the line, at both ends
		n := int64(0)
		for _, x := range []int64{int64(b.Start), int64(b.End)} {
			l, h := f.interval(x)
			y, ok := f.line.at(x)
			if !ok || l == math.MinInt64 || h == math.MaxInt64 {
				return
			}
			lo, hi = max(lo, l-y), min(hi, h-y)
			if ls == nil {
				continue
			}
			if e, ok := ls.at(x, nil); ok {
				want += e.y - y
				n++
			}
		}
		if lo > hi { // the line's rate cannot meet both ends: meet them halfway
			lo, hi = hi, lo
		}
		if n > 0 {
			want /= n
		}
		d := min(max(want, lo), hi)
		sh = append(sh, hostShift{int64(b.Start), d}, hostShift{int64(b.End), d})
	}
	slices.SortStableFunc(sh, func(a, b hostShift) int { return cmp.Compare(a.x, b.x) })
	for i := 1; i < len(sh); i++ {
		// Never faster than half a ns per ns: monotone whatever the rate.
		room := (sh[i].x - sh[i-1].x) / 2
		sh[i].d = min(max(sh[i].d, sh[i-1].d-room), sh[i-1].d+room)
	}
	f.shifts = sh
	for _, s := range sh {
		f.most = max(f.most, abs(s.d))
	}
}

// shift returns the drawn map's offset from the line at x.
func (f *HostFit) shift(x int64) int64 {
	sh := f.shifts
	if len(sh) == 0 {
		return 0
	}
	i := sort.Search(len(sh), func(i int) bool { return sh[i].x > x })
	switch {
	case i == 0:
		return sh[0].d
	case i == len(sh):
		return sh[i-1].d
	}
	a, b := sh[i-1], sh[i]
	if a.d == b.d || b.x == a.x {
		return a.d
	}
	v, _ := mulDiv(b.d-a.d, x-a.x, b.x-a.x, false)
	return a.d + v
}

// at is the drawn map: the central line, shifted per run.
func (f *HostFit) at(x int64) (int64, bool) {
	y, ok := f.line.at(x)
	if !ok {
		return 0, false
	}
	d := f.shift(x)
	s := y + d
	return s, (d >= 0) == (s >= y)
}

// Limit returns the information limit of the fit: the smallest forward
// latency plus the smallest return latency, as the fitted line measures
// them. Causality alone cannot place the remote clock more narrowly than
// this interval (a clock offset and uneven one-way delays look alike), so
// no bound can be below half of it.
func (f *HostFit) Limit() HostNanos { return f.limit }

// Map returns where remote instant x is drawn on the dispatching host's
// axis and its bound: the instant truly lies within bound of y, under the
// model's assumptions (every task's run lies between its Sent and
// Received, the rate error stays within the maximum and moves by at most
// the stability). The result is an error wrapping ErrRange when it does not
// fit int64.
func (f *HostFit) Map(x HostNanos) (y, bound HostNanos, err error) {
	yy, ok := f.at(int64(x))
	if !ok {
		return 0, 0, fmt.Errorf("%w: remote instant %d ns has no host time", ErrRange, int64(x))
	}
	lo, hi := f.interval(int64(x))
	if lo == math.MinInt64 || hi == math.MaxInt64 {
		return 0, 0, fmt.Errorf("%w: remote instant %d ns: no bound", ErrRange, int64(x))
	}
	d1, d2 := abs(HostNanos(yy-lo)), abs(HostNanos(hi-yy))
	return HostNanos(yy), max(d1, d2), nil
}

// interval returns the dispatching-host interval the evidence allows for
// remote instant x: from the exact intervals at the knots around it,
// carried to x at every rate the model allows.
func (f *HostFit) interval(x int64) (lo, hi int64) {
	i, _ := slices.BinarySearchFunc(f.knots, x, func(k hostKnot, x int64) int { return cmp.Compare(k.x, x) })
	lo, hi = math.MinInt64, math.MaxInt64
	// carry moves knot k's interval to x: Y(x) − Y(k.x) lies between
	// (x − k.x)·(1+κ) for κ in the rate interval.
	carry := func(k hostKnot) {
		d := x - k.x
		rlo, rhi := k.rlo, k.rhi
		if f.horizon > 0 && absU(d) > uint64(f.horizon/2) {
			rlo, rhi = -f.maxRate, f.maxRate
		}
		a, ok1 := mulDiv(d, nsPerSecond+int64(rlo), nsPerSecond, false)
		b, ok2 := mulDiv(d, nsPerSecond+int64(rhi), nsPerSecond, true)
		if d < 0 {
			a, ok1 = mulDiv(d, nsPerSecond+int64(rhi), nsPerSecond, false)
			b, ok2 = mulDiv(d, nsPerSecond+int64(rlo), nsPerSecond, true)
		}
		if !ok1 || !ok2 {
			return
		}
		// A knot without a side keeps it open.
		if k.lo != math.MinInt64 {
			lo = max(lo, satAdd(k.lo, a))
		}
		if k.hi != math.MaxInt64 {
			hi = min(hi, satAdd(k.hi, b))
		}
	}
	if i < len(f.knots) {
		carry(f.knots[i])
	}
	if i > 0 {
		carry(f.knots[i-1])
	}
	return lo, hi
}

// Worker is a worker of the dispatching host as its log shows it: the
// brackets (Sent, Received) of the tasks it was sent, in dispatch order.
type Worker struct {
	ID    int64
	Tasks []HostBracket // Sent and Received set
}

// Session is a remote log's worker session: the extents (Start, End) of
// its runs, in the order they arrived, and what its wall-clock anchor
// says of its clock, if it wrote one.
type Session struct {
	Name string
	Runs []HostBracket // Start and End set
	Wall *WallPrior
}

// WallPrior is what two hosts' wall-clock anchors say of their monotonic
// clocks: at remote instant At, the dispatching host's clock read Offset
// more. Wall clocks agree only to NTP grade, so it is a weak prior: it
// only tells apart assignments that causality alone admits several of,
// when they disagree with it by more than DefaultWallAgreement.
type WallPrior struct {
	At, Offset HostNanos
}

// DefaultWallAgreement is how far an assignment's clock offset may be from
// the wall-clock anchors' and still agree with them: NTP keeps hosts within
// milliseconds, this allows 20 ms.
const DefaultWallAgreement HostNanos = 20_000_000

// ErrAmbiguous: the logs admit more than one assignment of sessions to
// workers (or none); the user must name it.
var ErrAmbiguous = errors.New("reduce: the logs do not determine which remote log served which worker")

// MatchSessions finds which worker each session served: the k-th task sent
// to a worker is the k-th run of its session (one task is in flight per
// endpoint), so a session can serve a worker only when the brackets that
// pairing makes admit a clock mapping. Where one side counts fewer (a log
// cut off at its end), its tasks or runs pair with the other's first ones. It
// returns, per session, the index of its worker in workers (-1: none);
// fixed gives assignments the user named (session index → worker index),
// kept as they are. More than one complete assignment is ErrAmbiguous.
//
// Where causality admits several assignments (the rate may move within
// the stability across the tasks), the pairings through whose brackets one
// line of constant rate passes are preferred; failing that, the sessions'
// wall-clock anchors (Session.Wall) choose among them, as a weak prior:
// pairings whose offset disagrees with them by more than
// DefaultWallAgreement are left out; failing that, both. The assignment
// is made if one remains.
func MatchSessions(workers []Worker, sessions []Session, fixed map[int]int, opts ...HostFitOption) ([]int, error) {
	cfg := defaultHostConfig()
	for _, o := range opts {
		o(&cfg)
	}
	ok := make([][]bool, len(sessions))
	fits := make([][]*clockFit, len(sessions))
	for s, ss := range sessions {
		ok[s] = make([]bool, len(workers))
		fits[s] = make([]*clockFit, len(workers))
		for w, wk := range workers {
			if len(wk.Tasks) == 0 || len(ss.Runs) == 0 {
				continue
			}
			// Whether the pairing admits a mapping at all: the rates
			// alone, not the whole fit.
			f, _, _, err := hostRates(Pair(wk, ss), cfg)
			ok[s][w], fits[s][w] = err == nil, f
		}
	}
	out, err := assign(ok, fixed, len(workers))
	if errors.Is(err, ErrAmbiguous) {
		// Only then do the stricter tests choose: one line of constant
		// rate carries every run inside its task, then the wall-clock
		// anchors agree, then both.
		line, wall, both := make([][]bool, len(sessions)), make([][]bool, len(sessions)), make([][]bool, len(sessions))
		for s, ss := range sessions {
			line[s], wall[s], both[s] = make([]bool, len(workers)), make([]bool, len(workers)), make([]bool, len(workers))
			for w := range workers {
				if !ok[s][w] {
					continue
				}
				c, found := fitCentral(fits[s][w].sorted(), cfg.maxRate, nil)
				line[s][w] = found && c.feasible
				wall[s][w] = agrees(fits[s][w], ss.Wall)
				both[s][w] = line[s][w] && wall[s][w]
			}
		}
		for _, o := range [][][]bool{line, wall, both} {
			if a, e := assign(o, fixed, len(workers)); e == nil {
				return a, nil
			}
		}
	}
	return out, err
}

// agrees reports whether the central line of f agrees with the wall-clock
// prior (or there is none).
func agrees(f *clockFit, w *WallPrior) bool {
	if w == nil {
		return true
	}
	ln, ok := f.line()
	if !ok {
		return false
	}
	y, ok := ln.at(int64(w.At))
	return ok && abs(HostNanos(y)-w.At-w.Offset) <= DefaultWallAgreement
}

// assign finds the one complete assignment of sessions to workers that ok
// allows, keeping fixed.
func assign(ok [][]bool, fixed map[int]int, nWorkers int) ([]int, error) {
	// The named assignments, every other session serving none.
	base := make([]int, len(ok))
	for i := range base {
		base[i] = -1
	}
	used := make([]bool, nWorkers)
	for s, w := range fixed {
		if s >= 0 && s < len(ok) && w >= 0 && w < nWorkers {
			base[s], used[w] = w, true
		}
	}
	out := slices.Clone(base)
	// The assignments serving the most sessions; more than one of them is
	// ambiguous (a session left out while another takes the worker it
	// could serve counts as a different assignment).
	var found [][]int
	best, nodes := -1, 0
	var try func(s, served int)
	try = func(s, served int) {
		nodes++
		if nodes > 1<<20 || served+len(ok)-s < best || (served+len(ok)-s == best && len(found) > 1) {
			return
		}
		if s == len(ok) {
			if served > best {
				best, found = served, found[:0]
			}
			found = append(found, slices.Clone(out))
			return
		}
		if w, isFixed := fixed[s]; isFixed {
			n := served
			if w >= 0 && w < nWorkers {
				n++
			}
			try(s+1, n)
			return
		}
		for w := range nWorkers {
			if ok[s][w] && !used[w] {
				out[s], used[w] = w, true
				try(s+1, served+1)
				out[s], used[w] = -1, false
			}
		}
		try(s+1, served) // this session serves none of the workers
	}
	try(0, 0)
	if len(found) != 1 || nodes > 1<<20 {
		return base, ErrAmbiguous
	}
	return found[0], nil
}

// Pair returns the brackets of worker w's tasks served by session s: the
// k-th task with the k-th run (as many as both have).
func Pair(w Worker, s Session) []HostBracket {
	n := min(len(w.Tasks), len(s.Runs))
	out := make([]HostBracket, n)
	for k := range n {
		out[k] = HostBracket{Sent: w.Tasks[k].Sent, Received: w.Tasks[k].Received, Start: s.Runs[k].Start, End: s.Runs[k].End}
	}
	return out
}

// Drawn returns the bound of the remote instant drawn at y: the largest
// bound of the remote instants the line draws at y (the line is monotone
// and advances about 1 ns per ns, so they are one or two). It is for a
// caller that holds only drawn times.
func (f *HostFit) Drawn(y HostNanos) (HostNanos, error) {
	x, err := f.native(int64(y))
	if err != nil {
		return 0, err
	}
	var b HostNanos
	for _, v := range []int64{x - 1, x, x + 1} {
		yy, bb, err := f.Map(HostNanos(v))
		if err != nil {
			return 0, err
		}
		// The instants drawn at y lie between those drawn just below and
		// just above it; their bounds, widened by the step, cover y's.
		b = max(b, bb+abs(yy-y))
	}
	return b, nil
}

// native returns the last remote instant the map draws at or before y
// (the map is monotone): the instants it draws at y are it and the next.
func (f *HostFit) native(y int64) (int64, error) {
	d, ok := mulDiv(y-f.line.y0, rateScale, rateScale+f.line.k, false)
	if !ok {
		return 0, fmt.Errorf("%w: host time %d ns has no remote instant", ErrRange, y)
	}
	x := f.line.x0 + d // where the line alone draws y
	span := 2*f.most + 4
	lo, hi := x-span, x+span
	if yl, ok := f.at(lo); !ok || yl > y {
		return 0, fmt.Errorf("%w: host time %d ns has no remote instant", ErrRange, y)
	}
	for hi-lo > 1 { // Y(lo) ≤ y; find the last such
		m := lo + (hi-lo)/2
		if ym, ok := f.at(m); ok && ym <= y {
			lo = m
		} else {
			hi = m
		}
	}
	return lo, nil
}

// Compose carries a placement made on the remote host's own axis (a device
// span placed through that host's anchors) onto the dispatching host's:
// both ends through the line, the bound the device placement had (scaled
// by the largest rate the model allows) plus the host bound at each end.
func (f *HostFit) Compose(p SpanPlacement) (SpanPlacement, error) {
	ys, bs, err := f.Map(p.HostStart)
	if err != nil {
		return SpanPlacement{}, err
	}
	ye, be, err := f.Map(p.HostEnd)
	if err != nil {
		return SpanPlacement{}, err
	}
	// The rate near the span may be any the model allows (the fit's rate
	// range is the one near its middle task).
	r := max(abs(f.rateLo), abs(f.rateHi), f.maxRate)
	scaled, ok := mulDiv(int64(p.Bound), nsPerSecond+int64(r), nsPerSecond, true)
	if !ok {
		return SpanPlacement{}, fmt.Errorf("%w: bound %d ns", ErrRange, int64(p.Bound))
	}
	return SpanPlacement{HostStart: ys, HostEnd: ye, Bound: satAdd(HostNanos(scaled), max(bs, be)+1)}, nil
}

// Native returns a remote instant the line draws within 1 ns of y: the
// instants it draws at y lie within 2 ns of it.
func (f *HostFit) Native(y HostNanos) (HostNanos, error) {
	x, err := f.native(int64(y))
	return HostNanos(x), err
}
