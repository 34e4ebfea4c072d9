package reduce

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
)

// Domain identifies one device clock domain: a device as seen by one
// process. Anchors and runs of the same (PID, Dev) share a counter.
type Domain struct {
	PID int64
	Dev int64
}

func (d Domain) String() string { return fmt.Sprintf("pid=%d dev=%d", d.PID, d.Dev) }

// Anchor is one device clock anchor: at some host instant inside
// [HostNs, HostNs+WindowNs] the device counter read DevCyc. It is the
// content of a `[CLOCK_ANCHOR] v=2` record (host_ns, window_ns, dev_cyc,
// dev_freq) or of a valid calibration sample.
type Anchor struct {
	HostNs   Nanos
	WindowNs Nanos
	DevCyc   Cycles
	DevFreq  Hz
	// QuantNs is the device reading's own quantisation beyond one counter
	// cycle (1000 for a microsecond-resolution raw timestamp), 0 otherwise.
	QuantNs Nanos
}

// Method says how a device span was placed on the host axis.
type Method uint8

// Placement methods.
const (
	// Unaligned: no evidence places the span; HostStart is meaningless and
	// Reason says what is missing.
	Unaligned Method = iota
	// Contained: placed inside its runner_run host window only.
	Contained
	// Aligned: placed by clock anchors (and containment, when known).
	Aligned
)

func (m Method) String() string {
	switch m {
	case Contained:
		return "contained"
	case Aligned:
		return "aligned"
	}
	return "unaligned"
}

// Defaults of the placement model.
const (
	// DefaultMaxRateError is the largest rate error of a device counter
	// against the host clock the model assumes: 100 ppm.
	DefaultMaxRateError PPB = 100_000
	// DefaultRateStability is how far the rate error may move over the
	// anchors one rate estimate is made from: 0.05 ppm.
	DefaultRateStability PPB = 50
	// DefaultRateHorizon is the span of anchors (centred on the mapped
	// counter value) a rate estimate is made from: 60 s.
	DefaultRateHorizon Nanos = 60_000_000_000
	// DefaultNeighbours is the largest number of anchors on each side of a
	// mapped counter value whose evidence is intersected.
	DefaultNeighbours = 64
)

type config struct {
	maxRate    PPB
	stability  PPB
	horizon    Nanos
	neighbours int
}

// Option configures a Placer.
type Option func(*config)

// WithMaxRateError sets the assumed bound on the counter's rate error
// against the host clock (default DefaultMaxRateError). Values are clamped
// to [0, 0.5e9] ppb.
func WithMaxRateError(r PPB) Option {
	return func(c *config) { c.maxRate = min(max(r, 0), 500_000_000) }
}

// WithRateStability sets how far the rate error may move across the
// anchors of one rate estimate (default DefaultRateStability). Setting it
// to twice the maximum rate error or more disables rate estimation: every
// mapping then carries the full maximum rate error.
func WithRateStability(r PPB) Option {
	return func(c *config) { c.stability = max(r, 0) }
}

// WithRateHorizon sets the span of anchors a rate estimate is made from
// (default DefaultRateHorizon).
func WithRateHorizon(d Nanos) Option {
	return func(c *config) { c.horizon = max(d, 0) }
}

// WithNeighbours sets how many anchors on each side of a mapped counter
// value are intersected (default DefaultNeighbours, at least 1).
func WithNeighbours(n int) Option {
	return func(c *config) { c.neighbours = max(n, 1) }
}

// Placement errors. Errors returned by Placer unwrap to one of them.
var (
	// ErrAnchor: an anchor is malformed (negative window, zero frequency)
	// or its frequency differs from its domain's.
	ErrAnchor = errors.New("invalid clock anchor")
	// ErrInconsistent: the evidence admits no placement; see
	// *InconsistencyError for the evidence that conflicts.
	ErrInconsistent = errors.New("inconsistent placement evidence")
)

// EvidenceKind names a kind of placement evidence.
type EvidenceKind uint8

// Kinds of evidence.
const (
	EvidenceAnchor    EvidenceKind = iota + 1 // one clock anchor (Index: order added to the domain)
	EvidenceRunnerRun                         // the runner_run host window (containment)
	EvidenceRate                              // the rate bound (two anchors, Index and Other)
	EvidenceEnclosing                         // an enclosing host window (Index into Run.Enclosing)
)

// Evidence is one constraint and the interval it allows (host ns, for the
// run's origin unless it is a rate constraint, in ppb).
type Evidence struct {
	Kind   EvidenceKind
	Index  int // anchor index in its domain, in the order added
	Other  int // second anchor of a rate constraint
	Lo, Hi int64
}

func (e Evidence) String() string {
	switch e.Kind {
	case EvidenceAnchor:
		return fmt.Sprintf("anchor #%d allows origin in [%d, %d] ns", e.Index, e.Lo, e.Hi)
	case EvidenceRunnerRun:
		return fmt.Sprintf("runner_run containment allows origin in [%d, %d] ns", e.Lo, e.Hi)
	case EvidenceEnclosing:
		return fmt.Sprintf("enclosing host window #%d allows origin in [%d, %d] ns", e.Index, e.Lo, e.Hi)
	case EvidenceRate:
		if e.Index < 0 {
			return fmt.Sprintf("maximum rate error allows [%d, %d] ppb", e.Lo, e.Hi)
		}
		return fmt.Sprintf("anchors #%d and #%d imply a rate error in [%d, %d] ppb", e.Index, e.Other, e.Lo, e.Hi)
	}
	return "unknown evidence"
}

// InconsistencyError reports evidence whose intervals do not intersect:
// Low requires at least Low.Lo, High allows at most High.Hi < Low.Lo.
type InconsistencyError struct {
	Domain    Domain
	Low, High Evidence
}

func (e *InconsistencyError) Error() string {
	return fmt.Sprintf("reduce: %s: %v: %s conflicts with %s", e.Domain, ErrInconsistent, e.Low, e.High)
}

func (e *InconsistencyError) Unwrap() error { return ErrInconsistent }

// anchorRec is an anchor as the model uses it: the host interval that holds
// the instant the counter became Cyc.
type anchorRec struct {
	cyc    Cycles
	lo, hi Nanos
	index  int
}

type domainState struct {
	freq    Hz
	anchors []anchorRec
	sorted  bool

	// The last rate estimate, for the anchors [rateL, rateR).
	rateValid    bool
	rateL, rateR int
	rateMemo     rateRange
	rateErr      error
}

// Placer places device spans on the host timeline from clock anchors and
// containment. Add every anchor first, then place runs. A Placer is not
// safe for concurrent use while anchors are being added.
type Placer struct {
	cfg     config
	domains map[Domain]*domainState
}

// NewPlacer returns a Placer with the given options.
func NewPlacer(opts ...Option) *Placer {
	cfg := config{maxRate: DefaultMaxRateError, stability: DefaultRateStability, horizon: DefaultRateHorizon, neighbours: DefaultNeighbours}
	for _, o := range opts {
		o(&cfg)
	}
	return &Placer{cfg: cfg, domains: map[Domain]*domainState{}}
}

// AddAnchor adds a clock anchor to domain d. Every anchor of a domain must
// carry the same frequency.
func (p *Placer) AddAnchor(d Domain, a Anchor) error {
	if a.DevFreq == 0 || a.WindowNs < 0 || a.QuantNs < 0 || a.HostNs < 0 {
		return fmt.Errorf("reduce: %s: %w: host_ns=%d window_ns=%d dev_freq=%d quant_ns=%d", d, ErrAnchor, a.HostNs, a.WindowNs, a.DevFreq, a.QuantNs)
	}
	ds := p.domains[d]
	if ds == nil {
		ds = &domainState{freq: a.DevFreq}
		p.domains[d] = ds
	}
	if ds.freq != a.DevFreq {
		return fmt.Errorf("reduce: %s: %w: dev_freq=%d differs from the domain's %d", d, ErrAnchor, a.DevFreq, ds.freq)
	}
	// The counter read Cyc at an instant r in [host, host+window]; the
	// counter became Cyc at most one tick (plus the reading's own
	// quantisation) before r.
	w := a.DevFreq.tick() + a.QuantNs
	ds.anchors = append(ds.anchors, anchorRec{
		cyc:   a.DevCyc,
		lo:    satAdd(a.HostNs, -w),
		hi:    satAdd(satAdd(a.HostNs, a.WindowNs), w),
		index: len(ds.anchors),
	})
	ds.sorted, ds.rateValid = false, false
	return nil
}

func (ds *domainState) prepare() {
	if ds.sorted {
		return
	}
	sort.SliceStable(ds.anchors, func(i, j int) bool { return ds.anchors[i].cyc < ds.anchors[j].cyc })
	ds.sorted = true
}

// rateRange is an interval of rate errors in ppb, with the evidence that set
// each end.
type rateRange struct {
	lo, hi       PPB
	loSrc, hiSrc Evidence
}

// hostOf returns the interval of host ns a device-domain duration v
// (nominal ns, may be negative) takes when the rate error lies in r:
// v·1e9/(1e9+ε).
func (r rateRange) hostOf(v Nanos) (lo, hi Nanos) {
	den := func(e PPB) int64 { return nsPerSecond + int64(e) }
	var ok1, ok2 bool
	var a, b int64
	if v >= 0 {
		a, ok1 = mulDiv(int64(v), nsPerSecond, den(r.hi), false)
		b, ok2 = mulDiv(int64(v), nsPerSecond, den(r.lo), true)
	} else {
		a, ok1 = mulDiv(int64(v), nsPerSecond, den(r.lo), false)
		b, ok2 = mulDiv(int64(v), nsPerSecond, den(r.hi), true)
	}
	if !ok1 {
		a = math.MinInt64
	}
	if !ok2 {
		b = math.MaxInt64
	}
	return Nanos(a), Nanos(b)
}

// mid returns the middle of the range.
func (r rateRange) mid() PPB { return r.lo + (r.hi-r.lo)/2 }

// nominal returns floor((to − from)·1e9/f) as signed ns, ok false on
// overflow.
func nominal(from, to Cycles, f Hz) (Nanos, bool) {
	if to >= from {
		v, err := f.Nanos(to - from)
		return v, err == nil
	}
	v, err := f.NanosCeil(from - to)
	return -v, err == nil
}

// rate estimates the rate-error range around counter value c from the
// domain's anchors inside the rate horizon.
func (p *Placer) rate(ds *domainState, c Cycles) (rateRange, error) {
	rho := p.cfg.maxRate
	full := rateRange{lo: -rho, hi: rho,
		loSrc: Evidence{Kind: EvidenceRate, Index: -1, Lo: int64(-rho), Hi: int64(rho)},
		hiSrc: Evidence{Kind: EvidenceRate, Index: -1, Lo: int64(-rho), Hi: int64(rho)}}
	if p.cfg.stability >= 2*rho || len(ds.anchors) < 2 {
		return full, nil
	}
	half, err := ds.freq.Cycles(p.cfg.horizon / 2)
	if err != nil {
		half = Unset
	}
	lc := c - min(c, half)
	hc := c + min(Unset-c, half)
	L := sort.Search(len(ds.anchors), func(i int) bool { return ds.anchors[i].cyc >= lc })
	R := sort.Search(len(ds.anchors), func(i int) bool { return ds.anchors[i].cyc > hc })
	n := R - L
	if n < 2 {
		return full, nil
	}
	// The estimate depends only on the anchors in [L, R): runs close in
	// time share it.
	if ds.rateValid && ds.rateL == L && ds.rateR == R {
		return ds.rateMemo, ds.rateErr
	}
	r, err := p.rateOf(ds, L, R, full)
	ds.rateValid, ds.rateL, ds.rateR, ds.rateMemo, ds.rateErr = true, L, R, r, err
	return r, err
}

// rateOf estimates the rate from the anchors in [L, R).
func (p *Placer) rateOf(ds *domainState, L, R int, full rateRange) (rateRange, error) {
	rho := p.cfg.maxRate
	n := R - L
	g := max(1, n/4)
	early := bestConditioned(ds.anchors[L:L+g], 4)
	late := bestConditioned(ds.anchors[R-g:R], 4)
	est := rateRange{lo: math.MinInt64, hi: math.MaxInt64}
	found := false
	for _, i := range early {
		for _, j := range late {
			if j.cyc <= i.cyc {
				continue
			}
			lo, hi, ok := pairRate(i, j, ds.freq)
			if !ok {
				continue
			}
			ev := Evidence{Kind: EvidenceRate, Index: i.index, Other: j.index, Lo: int64(lo), Hi: int64(hi)}
			if lo > est.lo {
				est.lo, est.loSrc = lo, ev
			}
			if hi < est.hi {
				est.hi, est.hiSrc = hi, ev
			}
			found = true
			if est.lo > est.hi+2*p.cfg.stability {
				return rateRange{}, &InconsistencyError{Low: est.loSrc, High: est.hiSrc}
			}
		}
	}
	if !found {
		return full, nil
	}
	// Any two average rates differ by at most the stability, so the
	// instantaneous rate lies within stability of every pair's interval.
	est.lo = satPPB(est.lo, -p.cfg.stability)
	est.hi = satPPB(est.hi, p.cfg.stability)
	if est.lo > rho {
		return rateRange{}, &InconsistencyError{Low: est.loSrc, High: full.hiSrc}
	}
	if est.hi < -rho {
		return rateRange{}, &InconsistencyError{Low: full.loSrc, High: est.hiSrc}
	}
	if est.lo < -rho {
		est.lo, est.loSrc = -rho, full.loSrc
	}
	if est.hi > rho {
		est.hi, est.hiSrc = rho, full.hiSrc
	}
	if est.lo > est.hi {
		return rateRange{}, &InconsistencyError{Low: est.loSrc, High: est.hiSrc}
	}
	return est, nil
}

func satPPB(a, b PPB) PPB {
	s := a + b
	if (b > 0 && s < a) || (b < 0 && s > a) {
		if b > 0 {
			return math.MaxInt64
		}
		return math.MinInt64
	}
	return s
}

// bestConditioned returns up to k anchors of as with the narrowest host
// intervals.
func bestConditioned(as []anchorRec, k int) []anchorRec {
	out := make([]anchorRec, 0, k)
	for _, a := range as {
		w := a.hi - a.lo
		if len(out) < k {
			out = append(out, a)
		} else if w < out[k-1].hi-out[k-1].lo {
			out[k-1] = a
		} else {
			continue
		}
		slices.SortFunc(out, func(x, y anchorRec) int {
			return int(min(max((x.hi-x.lo)-(y.hi-y.lo), -1), 1))
		})
	}
	return out
}

// pairRate bounds the average rate error between anchors i and j (c_i <
// c_j): the counter advanced c_j − c_i while the host advanced between
// j.lo − i.hi and j.hi − i.lo.
func pairRate(i, j anchorRec, f Hz) (lo, hi PPB, ok bool) {
	dlo, err := f.Nanos(j.cyc - i.cyc)
	if err != nil {
		return 0, 0, false
	}
	dhi, err := f.NanosCeil(j.cyc - i.cyc)
	if err != nil {
		return 0, 0, false
	}
	emin, emax := j.lo-i.hi, j.hi-i.lo
	if emax <= 0 {
		// The counter advanced while the host window went backwards: no
		// rate explains it.
		return math.MaxInt64, math.MinInt64, true
	}
	// ε = D/E − 1 = (D − E)·1e9/E ppb.
	l, ok1 := mulDiv(int64(dlo-emax), nsPerSecond, int64(emax), false)
	if !ok1 {
		return 0, 0, false
	}
	h := int64(math.MaxInt64)
	if emin > 0 {
		var ok2 bool
		if h, ok2 = mulDiv(int64(dhi-emin), nsPerSecond, int64(emin), true); !ok2 {
			h = math.MaxInt64
		}
	}
	return PPB(l), PPB(h), true
}

// interval is a host-ns interval with the evidence that set each end.
type interval struct {
	lo, hi       Nanos
	loSrc, hiSrc Evidence
}

func unbounded() interval { return interval{lo: math.MinInt64, hi: math.MaxInt64} }

func (iv *interval) intersect(lo, hi Nanos, ev Evidence) {
	if lo > iv.lo {
		iv.lo, iv.loSrc = lo, ev
	}
	if hi < iv.hi {
		iv.hi, iv.hiSrc = hi, ev
	}
}

func (iv interval) empty() bool { return iv.lo > iv.hi }

// anchorInterval intersects the intervals the domain's anchors near c allow
// for the host instant at which the counter read c.
func (p *Placer) anchorInterval(ds *domainState, c Cycles, r rateRange) (interval, int) {
	iv := unbounded()
	pos := sort.Search(len(ds.anchors), func(i int) bool { return ds.anchors[i].cyc >= c })
	tick := ds.freq.tick()
	used := 0
	try := func(a anchorRec) bool {
		d, ok := nominal(a.cyc, c, ds.freq)
		if !ok {
			return false
		}
		hlo, _ := r.hostOf(d)
		_, hhi := r.hostOf(satAdd(d, 1))
		if hlo == math.MinInt64 || hhi == math.MaxInt64 {
			return false
		}
		// The target instant lies in [T(c), T(c)+tick).
		lo, hi := satAdd(a.lo, hlo), satAdd(satAdd(a.hi, hhi), tick)
		iv.intersect(lo, hi, Evidence{Kind: EvidenceAnchor, Index: a.index, Lo: int64(lo), Hi: int64(hi)})
		used++
		// Stop once the rate term alone makes this anchor's interval
		// wider than what is already known: farther ones are wider still.
		return !iv.empty() && hhi-hlo <= iv.hi-iv.lo
	}
	for i, n := pos-1, 0; i >= 0 && n < p.cfg.neighbours; i, n = i-1, n+1 {
		if !try(ds.anchors[i]) {
			break
		}
	}
	for i, n := pos, 0; i < len(ds.anchors) && n < p.cfg.neighbours; i, n = i+1, n+1 {
		if !try(ds.anchors[i]) {
			break
		}
	}
	return iv, used
}

// HostWindow is a host span's extent on CLOCK_MONOTONIC.
type HostWindow struct {
	Start Nanos
	Dur   Nanos
}

// WallExtent is RunWall's true extent as device-ns offsets from the origin
// (Start ≤ 0 normally), known when the run comes from a raw buffer.
type WallExtent struct {
	Start, End Nanos
}

// Run is one invocation's device spans and the evidence to place them.
type Run struct {
	Domain Domain
	// Origin is the absolute counter value at device ts = 0 (origin_cyc);
	// HasOrigin is false when it is unknown.
	Origin    Cycles
	HasOrigin bool
	// Spans are the run's device spans: device_wall (Depth 2, TS 0) and
	// its children, with device-domain TS and Dur.
	Spans []DeviceSpan
	// Wall is RunWall's true extent when known (from a buffer); nil for a
	// run read from a log, where device_wall is only the runtime's bracket.
	Wall *WallExtent
	// RunnerRun is the run's chip.run.runner_run host window, or nil.
	RunnerRun *HostWindow
	// Enclosing are further host windows known to contain the device run
	// (its chip.run, the L3 node.dispatch … node.complete window that sent
	// it). They constrain it like RunnerRun; runner_run, the innermost, is
	// normally the tightest.
	Enclosing []HostWindow
}

// RunFrom builds the Run of a reduced buffer for domain d, with the
// runner_run window when known.
func RunFrom(r *Reduction, d Domain, runnerRun *HostWindow) (Run, error) {
	spans, err := r.Spans()
	if err != nil {
		return Run{}, err
	}
	run := Run{Domain: d, Origin: r.Origin, HasOrigin: r.OriginSource != OriginNone, Spans: spans, RunnerRun: runnerRun}
	s, e, ok, err := r.WallOffset()
	if err != nil {
		return Run{}, err
	}
	if ok {
		run.Wall = &WallExtent{Start: s, End: e}
	}
	return run, nil
}

// Placement is where one device span lies on the host timeline.
type Placement struct {
	// HostStart is the estimated host CLOCK_MONOTONIC start; the true start
	// lies in [HostStart−Bound, HostStart+Bound] under the model's
	// assumptions.
	HostStart Nanos
	// HostDur is the span's duration converted to host ns at the
	// estimated rate.
	HostDur Nanos
	Bound   Nanos
	Method  Method
	// Reason says why a span is unaligned or only contained.
	Reason string
}

// Place places every span of run; the result is parallel to run.Spans. An
// empty intersection of the evidence is an *InconsistencyError.
func (p *Placer) Place(run Run) ([]Placement, error) {
	out := make([]Placement, len(run.Spans))
	if err := p.PlaceInto(out, run); err != nil {
		return nil, err
	}
	return out, nil
}

// PlaceInto is Place writing into out, which must have len(run.Spans)
// elements.
func (p *Placer) PlaceInto(out []Placement, run Run) error {
	if len(out) != len(run.Spans) {
		return fmt.Errorf("reduce: PlaceInto: %d placements for %d spans", len(out), len(run.Spans))
	}
	rho := p.cfg.maxRate
	rate := rateRange{lo: -rho, hi: rho}
	ds := p.domains[run.Domain]
	origin := unbounded()
	method := Unaligned
	var reasons []string

	// Anchors.
	switch {
	case ds == nil || len(ds.anchors) == 0:
		reasons = append(reasons, "no clock anchors for "+run.Domain.String())
	case !run.HasOrigin:
		reasons = append(reasons, "no origin_cyc on device_wall")
	default:
		ds.prepare()
		r, err := p.rate(ds, run.Origin)
		if err != nil {
			var ie *InconsistencyError
			if errors.As(err, &ie) {
				ie.Domain = run.Domain
			}
			return err
		}
		rate = r
		iv, used := p.anchorInterval(ds, run.Origin, rate)
		if used > 0 {
			origin = iv
			method = Aligned
		} else {
			reasons = append(reasons, "origin_cyc too far from every anchor")
		}
	}

	// Slack for ns offsets floored from cycles (the runtime's own
	// floating-point conversion can come out 1 ns short as well) and for
	// the counter's quantisation.
	var tick Nanos = 1
	if ds != nil {
		tick = ds.freq.tick()
	}
	slack := tick + 2
	if run.Wall != nil {
		slack = tick + 1
	}

	// Containment: RunWall lies inside runner_run.
	var covered Nanos
	wallDur := Nanos(-1)
	for _, s := range run.Spans {
		if s.Depth == 2 && s.Name == WallName {
			wallDur = s.Dur
			continue
		}
		covered = max(covered, satAdd(s.TS, s.Dur))
	}
	xsLo, xsHi, xeLo := Nanos(0), Nanos(0), covered
	if run.Wall != nil {
		// Start is floored and End ceiled: widen by 1 ns where they are
		// used as the other bound.
		xsLo, xsHi, xeLo = run.Wall.Start, satAdd(run.Wall.Start, 1), max(satAdd(run.Wall.End, -1), covered)
	} else if wallDur >= 0 {
		xsLo = min(covered-wallDur, 0)
		xeLo = max(covered, wallDur+xsLo)
	}
	_, sHi := rate.hostOf(xsHi)
	eLo, _ := rate.hostOf(xeLo)
	contain := func(w HostWindow, ev Evidence) {
		h0, h1 := w.Start, satAdd(w.Start, w.Dur)
		lo, hi := satAdd(h0, -satAdd(sHi, tick)), satAdd(h1, -satAdd(eLo, -tick))
		ev.Lo, ev.Hi = int64(lo), int64(hi)
		origin.intersect(lo, hi, ev)
		if method == Unaligned {
			method = Contained
		}
	}
	if run.RunnerRun != nil {
		contain(*run.RunnerRun, Evidence{Kind: EvidenceRunnerRun})
	} else {
		reasons = append(reasons, "no runner_run window")
	}
	for i, w := range run.Enclosing {
		contain(w, Evidence{Kind: EvidenceEnclosing, Index: i})
	}
	if origin.empty() {
		return &InconsistencyError{Domain: run.Domain, Low: origin.loSrc, High: origin.hiSrc}
	}
	reason := ""
	if method != Aligned {
		reason = joinReasons(reasons)
	}
	if method == Unaligned {
		for i := range out {
			out[i] = Placement{Method: Unaligned, Reason: reason, Bound: math.MaxInt64, HostDur: run.Spans[i].Dur}
		}
		return nil
	}
	midRate := rateRange{lo: rate.mid(), hi: rate.mid()}
	for i, s := range run.Spans {
		var lo, hi Nanos
		if s.Depth == 2 && s.Name == WallName {
			a, _ := rate.hostOf(xsLo)
			_, b := rate.hostOf(xsHi)
			lo, hi = satAdd(origin.lo, a), satAdd(origin.hi, b)
		} else {
			a, _ := rate.hostOf(s.TS)
			_, b := rate.hostOf(satAdd(s.TS, 1))
			lo, hi = satAdd(origin.lo, a), satAdd(origin.hi, b)
		}
		lo, hi = satAdd(lo, -slack), satAdd(hi, slack)
		start := midpoint(lo, hi)
		dur, _ := midRate.hostOf(s.Dur)
		out[i] = Placement{HostStart: start, HostDur: dur, Bound: max(satAdd(hi, -start), satAdd(start, -lo)), Method: method, Reason: reason}
	}
	return nil
}

func joinReasons(rs []string) string {
	s := ""
	for i, r := range rs {
		if i > 0 {
			s += "; "
		}
		s += r
	}
	return s
}

// midpoint returns (lo+hi)/2, rounded towards zero, without overflow.
func midpoint(lo, hi Nanos) Nanos {
	return lo/2 + hi/2 + (lo%2+hi%2)/2
}
