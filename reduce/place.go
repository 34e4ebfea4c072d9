package reduce

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/phasetrace/phasetrace/strace"
)

// Domain identifies one device clock domain: a device as seen by one
// process. Anchors and runs of the same (Pid, Dev) share a counter. The
// types are the log's (strace.DeviceAnchor's Pid and Dev).
type Domain struct {
	Pid int32
	Dev int32
}

func (d Domain) String() string { return fmt.Sprintf("pid=%d dev=%d", d.Pid, d.Dev) }

// DomainOf returns the Domain of device dev of process pid, for a device id
// read as an int64 (a span attribute such as device_wall's dev=). A device
// id outside the int32 range is an error wrapping ErrRange.
func DomainOf(pid int32, dev int64) (Domain, error) {
	if dev < math.MinInt32 || dev > math.MaxInt32 {
		return Domain{}, fmt.Errorf("%w: device id %d", ErrRange, dev)
	}
	return Domain{Pid: pid, Dev: int32(dev)}, nil
}

// Anchor is one device clock anchor: at some host instant inside
// [HostNs, HostNs+WindowNs] the device counter read DevCyc. It is the
// content of a `[CLOCK_ANCHOR] v=2` record (host_ns, window_ns, dev_cyc,
// dev_freq) or of a valid calibration sample.
type Anchor struct {
	HostNs   HostNanos
	WindowNs HostNanos
	DevCyc   Cycles
	DevFreq  Hz
	// QuantNs is the device reading's own quantisation beyond one counter
	// cycle (1000 for a microsecond-resolution raw timestamp), 0 otherwise.
	QuantNs HostNanos
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
	// DefaultRateStability is how far the rate error may move within the
	// rate horizon: 10 ppm, what a host clock NTP slews or a warming
	// crystal does.
	DefaultRateStability PPB = 10_000
	// DefaultRateHorizon is the span of host time, centred on the mapped
	// counter value, whose anchors the stability relates to the rate
	// there (the run's horizon): 2 s.
	DefaultRateHorizon HostNanos = 2_000_000_000
	// DefaultNeighbours is the largest number of anchors on each side of a
	// mapped counter value whose evidence is intersected.
	DefaultNeighbours = 64
)

type config struct {
	maxRate    PPB
	stability  PPB
	horizon    HostNanos
	neighbours int
}

// halfHorizon is the nominal device ns that take at most half the rate
// horizon of host time at any rate the model allows.
func (c config) halfHorizon() DeviceNanos {
	h := c.horizon / 2
	if d, ok := mulDiv(int64(h), int64(c.maxRate), nsPerSecond, true); ok {
		h -= HostNanos(d)
	}
	return DeviceNanos(max(h, 0))
}

// PlacerOption configures a Placer (NewPlacer); the defaults are the
// Default… constants.
type PlacerOption func(*config)

// WithMaxRateError sets a Placer's assumed bound on the counter's rate error
// against the host clock (default DefaultMaxRateError). Values are clamped
// to [0, 0.5e9] ppb.
func WithMaxRateError(r PPB) PlacerOption {
	return func(c *config) { c.maxRate = min(max(r, 0), 500_000_000) }
}

// WithRateStability sets how far a Placer lets the rate error move within
// the rate horizon (default DefaultRateStability). Setting it to twice the
// maximum rate error or more disables rate estimation: every mapping then
// carries the full maximum rate error.
func WithRateStability(r PPB) PlacerOption {
	return func(c *config) { c.stability = max(r, 0) }
}

// WithRateHorizon sets the span of host time over which a Placer's rate
// stability holds (default DefaultRateHorizon): the anchors within half of
// it of a run place the run through the rate they allow, farther ones
// only through the maximum rate error.
func WithRateHorizon(d HostNanos) PlacerOption {
	return func(c *config) { c.horizon = max(d, 0) }
}

// WithNeighbours sets how many anchors on each side of a mapped counter
// value are intersected (default DefaultNeighbours, at least 1).
func WithNeighbours(n int) PlacerOption {
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
	EvidenceBracket                           // one bracket of a clock fit between two hosts (Index: its ordinal)
	EvidenceJoint                             // the nearest anchors taken jointly with the rate (the origin's interval)
	EvidenceJointRate                         // the nearest anchors taken jointly with the rate (the rate at the run)
)

func (k EvidenceKind) String() string {
	switch k {
	case EvidenceAnchor:
		return "a clock anchor"
	case EvidenceRunnerRun:
		return "the runner_run window"
	case EvidenceRate:
		return "a rate bound"
	case EvidenceEnclosing:
		return "an enclosing host window"
	case EvidenceBracket:
		return "a bracket"
	case EvidenceJoint:
		return "the nearest anchors jointly"
	case EvidenceJointRate:
		return "the nearest anchors' joint rate"
	}
	return "unknown evidence"
}

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
	case EvidenceJoint:
		return fmt.Sprintf("the nearest anchors jointly allow origin in [%d, %d] ns", e.Lo, e.Hi)
	case EvidenceJointRate:
		return fmt.Sprintf("the nearest anchors jointly imply a rate error in [%d, %d] ppb", e.Lo, e.Hi)
	case EvidenceBracket:
		return fmt.Sprintf("bracket #%d allows [%d, %d] ns", e.Index, e.Lo, e.Hi)
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
	lo, hi HostNanos
	// x is the nominal ns from the domain's first anchor, floored (ok
	// false when it does not fit).
	x     DeviceNanos
	index int32 // order added to the domain
	xok   bool
}

// domainState is what a Placer knows of one clock domain: its anchors and,
// in parts by concern, the estimate made from them, the anchor scan's
// keys, the joint intersection's scratch and the last rate estimate.
type domainState struct {
	freq    Hz
	anchors []anchorRec
	sorted  bool
	// tick is freq.tick(); half is half the rate horizon in cycles.
	tick HostNanos
	half Cycles
	// base is the first anchor's counter value, once sorted: the origin
	// of the anchors' nominal ns.
	base Cycles

	domainEstimate
	scanKeys
	jointScratch
	// aside are the anchors set aside (aside.go), as indices into the
	// Placer's list; added counts the anchors added (the next one's
	// index).
	aside []int
	added int
}

// domainEstimate is a domain's constant-rate estimate (estimate.go): the
// fits of every level's windows, with the storage the fits reuse (and
// keep their hulls in) and the brackets of one window.
type domainEstimate struct {
	levels levels
	// estBase is the first anchor's counter value when the levels were
	// fitted.
	estBase  Cycles
	fits     fitScratch
	brackets []bracket
}

// scanKeys are the anchor scan's keys (scan.go): per anchor, and per
// block of keyBlock anchors their bounds, made for the rate range [keyLo,
// keyHi] (a block whose gen is not keyGen is stale), and the range's
// slope factor (safeDistance).
type scanKeys struct {
	keys         []anchorKeys
	keyBlocks    []keyBounds
	keyGen       uint64
	keyLo, keyHi PPB
	keySlope     int64
}

// jointScratch is the joint intersection's storage (polygon), reused
// from run to run.
type jointScratch struct {
	lows, highs []fitPoint
}

// Placer places device spans on the host timeline from clock anchors and
// containment. Add every anchor first, then place runs. A Placer is not
// safe for concurrent use: placing a run fills its caches and reuses its
// scratch storage.
type Placer struct {
	cfg     config
	domains map[Domain]*domainState
	aside   []SetAside           // every domain's anchors set aside, in the order set aside
	reasons map[reasonKey]string // the texts of Mapping.Reason made so far
}

// NewPlacer returns a Placer with the given options.
func NewPlacer(opts ...PlacerOption) *Placer {
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
		half, err := a.DevFreq.Cycles(p.cfg.halfHorizon())
		if err != nil {
			half = Unset
		}
		ds = &domainState{freq: a.DevFreq, tick: a.DevFreq.tick(), half: half}
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
		index: int32(min(ds.added, math.MaxInt32)),
	})
	ds.sorted = false
	ds.added++
	return nil
}

func (ds *domainState) prepare() {
	if ds.sorted {
		return
	}
	sort.SliceStable(ds.anchors, func(i, j int) bool { return ds.anchors[i].cyc < ds.anchors[j].cyc })
	ds.sorted = true
	ds.reindex(true)
}

// horizon returns the anchors [L, R) within half the rate horizon of c:
// those the rate stability relates to the rate at c.
func (ds *domainState) horizon(c Cycles) (L, R int) {
	half := ds.half
	lc := c - min(c, half)
	hc := c + min(Unset-c, half)
	L = lowerBound(ds.anchors, lc)
	R = L + sort.Search(len(ds.anchors)-L, func(i int) bool { return ds.anchors[L+i].cyc > hc })
	return L, R
}

// rateRange is an interval of rate errors in ppb, with the evidence that set
// each end.
type rateRange struct {
	lo, hi       PPB
	loSrc, hiSrc Evidence
}

// atRate returns v·1e9/(1e9+ε), floored or ceiled, with a 128-bit
// intermediate (ratio.fastAt is the 64-bit form, where it applies).
func atRate(v DeviceNanos, e PPB, ceil bool) (HostNanos, bool) {
	h, ok := mulDiv(int64(v), nsPerSecond, nsPerSecond+int64(e), ceil)
	return HostNanos(h), ok
}

// mid returns the middle of the range.
func (r rateRange) mid() PPB { return r.lo + (r.hi-r.lo)/2 }

// nominal returns floor((to − from)·1e9/f) as signed ns, ok false on
// overflow.
func nominal(from, to Cycles, f Hz) (DeviceNanos, bool) {
	if to >= from {
		v, err := f.Nanos(to - from)
		return v, err == nil
	}
	v, err := f.NanosCeil(from - to)
	return -v, err == nil
}

// rate estimates the rate-error range from the domain's anchors inside the
// rate horizon, [L, R) (see horizon).
func (p *Placer) rate(ds *domainState, L, R int) (rateRange, error) {
	rho := p.cfg.maxRate
	full := rateRange{lo: -rho, hi: rho,
		loSrc: Evidence{Kind: EvidenceRate, Index: -1, Lo: int64(-rho), Hi: int64(rho)},
		hiSrc: Evidence{Kind: EvidenceRate, Index: -1, Lo: int64(-rho), Hi: int64(rho)}}
	if p.cfg.stability >= 2*rho || len(ds.anchors) < 2 {
		return full, nil
	}
	if R-L < 2 {
		return full, nil
	}
	return p.rateOf(ds, L, R, full)
}

// rateOf estimates the rate from the anchors in [L, R).
func (p *Placer) rateOf(ds *domainState, L, R int, full rateRange) (rateRange, error) {
	rho := p.cfg.maxRate
	n := R - L
	g := max(1, n/4)
	var eb, lb [4]anchorRec
	early := bestConditioned(eb[:0], ds.anchors[L:L+g])
	late := bestConditioned(lb[:0], ds.anchors[R-g:R])
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
			ev := Evidence{Kind: EvidenceRate, Index: int(i.index), Other: int(j.index), Lo: int64(lo), Hi: int64(hi)}
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
	est.lo = satAdd(est.lo, -p.cfg.stability)
	est.hi = satAdd(est.hi, p.cfg.stability)
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

// bestConditioned returns up to cap(out) anchors of as with the narrowest
// host intervals, in out's storage (out is empty, its capacity positive).
func bestConditioned(out, as []anchorRec) []anchorRec {
	k := cap(out)
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
	// Host and device elapsed times are compared as the same count of ns:
	// that comparison is what the rate error measures.
	emin, emax := DeviceNanos(j.lo-i.hi), DeviceNanos(j.hi-i.lo)
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

// interval is a closed host-ns interval with the evidence that set each end.
type interval struct {
	lo, hi       HostNanos
	loSrc, hiSrc Evidence
}

func unbounded() interval { return interval{lo: math.MinInt64, hi: math.MaxInt64} }

func (iv *interval) intersect(lo, hi HostNanos, ev Evidence) {
	if lo > iv.lo {
		iv.lo, iv.loSrc = lo, ev
	}
	if hi < iv.hi {
		iv.hi, iv.hiSrc = hi, ev
	}
}

func (iv interval) empty() bool { return iv.lo > iv.hi }

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
	// Wall is RunWall's true extent as device-domain offsets from the
	// origin (Start ≤ 0, floored; End ceiled) when known (from a buffer);
	// nil for a run read from a log, where device_wall is only the
	// runtime's bracket.
	Wall *DeviceWindow
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
		run.Wall = &DeviceWindow{Start: s, End: e}
	}
	return run, nil
}

// ErrUnaligned: a Mapping whose run no evidence places maps nothing.
var ErrUnaligned = errors.New("reduce: run not placed on the host timeline")

// Mapping is a run's one map from device-domain offsets to host time: the
// offset off is drawn at Origin + off·1e9/(1e9+Rate) (floored). It is
// strictly the same map for every span of the run, monotone, so spans that
// nest on the device nest on the host. Bounds come from the interval the
// evidence allows for the origin's host instant and the range of rate
// errors it allows (see the package documentation, "Published bounds").
type Mapping struct {
	Method Method
	// Reason says why the run is unaligned or only contained, in words
	// (naming the domain); Causes says it for programs.
	Reason string
	Causes Cause
	// Origin is the host time device offset 0 is drawn at: the middle of
	// the interval the evidence allows for the origin.
	Origin HostNanos
	// Rate is the rate error the map converts with: the middle of the
	// allowed range.
	Rate PPB

	origin interval
	rate   rateRange
	slack  HostNanos // floored offsets and counter quantisation
	// The ratios of rate's ends and of Rate (when atSet and at.e is
	// still Rate).
	q     rateRatios
	at    ratio
	atSet bool
	// quick: q and at are fast, origin's ends lie within ±2^62 and the
	// slack below 2^61 (quickWindow's conditions mapping can check).
	quick bool
}

// Host maps a device-domain offset to host time with exact integer
// arithmetic (a 128-bit intermediate). A result that does not fit int64 is
// an error wrapping ErrRange; an unaligned Mapping returns ErrUnaligned.
func (m Mapping) Host(off DeviceNanos) (HostNanos, error) {
	if m.Method == Unaligned {
		return 0, ErrUnaligned
	}
	return m.host(off)
}

// host is Host of an aligned or contained Mapping: ⌊off·1e9/(1e9+Rate)⌋
// (as mulDiv, through atRate's forms) from Origin.
func (m *Mapping) host(off DeviceNanos) (HostNanos, error) {
	q := &m.at
	if !m.atSet || q.e != m.Rate {
		r := newRatio(m.Rate)
		q = &r
	}
	v, ok := q.at(off, false)
	if !ok {
		return 0, fmt.Errorf("%w: device offset %d ns has no host time", ErrRange, int64(off))
	}
	h, ok := addHost(m.Origin, HostNanos(v))
	if !ok {
		return 0, fmt.Errorf("%w: device offset %d ns has no host time", ErrRange, int64(off))
	}
	return h, nil
}

// allowed returns the host interval the model allows for a device instant
// whose offset from the origin lies in [lo, hi]: the origin's interval plus
// the offset at every allowed rate, widened by the slack.
func (m *Mapping) allowed(lo, hi DeviceNanos) (HostNanos, HostNanos, error) {
	q := &m.q
	if !q.of(m.rate) {
		r := ratiosOf(m.rate)
		q = &r
	}
	a, b := q.hostLo(lo), q.hostHi(hi)
	l, ok1 := addHost(m.origin.lo, a)
	u, ok2 := addHost(m.origin.hi, b)
	if ok1 {
		l, ok1 = addHost(l, -m.slack)
	}
	if ok2 {
		u, ok2 = addHost(u, m.slack)
	}
	if a == math.MinInt64 || b == math.MaxInt64 || !ok1 || !ok2 {
		return 0, 0, fmt.Errorf("%w: device offsets [%d, %d] ns have no host interval", ErrRange, int64(lo), int64(hi))
	}
	return l, u, nil
}

// boundAt returns how far from h a device instant with offset in [lo, hi]
// can lie: the farther end of its allowed interval.
func (m *Mapping) boundAt(h HostNanos, lo, hi DeviceNanos) (HostNanos, error) {
	l, u, err := m.allowed(lo, hi)
	if err != nil {
		return 0, err
	}
	d1, ok1 := subHost(h, l)
	d2, ok2 := subHost(u, h)
	if !ok1 || !ok2 || d1 == math.MinInt64 || d2 == math.MinInt64 {
		return 0, fmt.Errorf("%w: bound at host %d ns", ErrRange, int64(h))
	}
	return max(abs(d1), abs(d2)), nil
}

// Place draws a device window stamped by the device (its start and end
// each known to the ns below, as the exact floors this package and the
// runtime log) through the map: HostStart = Host(w.Start), HostEnd =
// Host(w.End), and the Bound that holds for both ends.
func (m Mapping) Place(w DeviceWindow) (SpanPlacement, error) {
	return m.placeWindow(w.Start, w.End)
}

// placeWindow is Place of [start, end).
func (m *Mapping) placeWindow(start, end DeviceNanos) (SpanPlacement, error) {
	if m.quick && m.Method != Unaligned && m.at.e == m.Rate && absU(int64(m.Origin)) < 1<<62 &&
		absU(int64(start)) < 1<<44-1 && absU(int64(end)) < 1<<44-1 {
		return m.quickWindow(start, end), nil
	}
	return m.place(start, end, start, satAdd(start, 1), end, satAdd(end, 1))
}

// quickWindow is place of [start, end) (each end known to the ns below)
// for a quick Mapping and ends within ±(2^44−1): every conversion is
// fastAt's, and no sum can overflow.
func (m *Mapping) quickWindow(start, end DeviceNanos) SpanPlacement {
	hs := m.Origin + m.at.fastAt(start, false)
	he := m.Origin + m.at.fastAt(end, false)
	return SpanPlacement{HostStart: hs, HostEnd: he, Bound: max(m.quickBound(hs, start), m.quickBound(he, end))}
}

// quickBound is boundAt(h, v, v+1) for quickWindow.
func (m *Mapping) quickBound(h HostNanos, v DeviceNanos) HostNanos {
	l := m.origin.lo + m.q.end(v, false).fastAt(v, false) - m.slack   // hostLo(v)
	u := m.origin.hi + m.q.end(v+1, true).fastAt(v+1, true) + m.slack // hostHi(v+1)
	return max(abs(h-l), abs(u-h))
}

// place draws start and end through the map and bounds them, the true
// start lying in device offsets [slo, shi] and the true end in [elo, ehi].
func (m *Mapping) place(start, end, slo, shi, elo, ehi DeviceNanos) (SpanPlacement, error) {
	if m.Method == Unaligned {
		return SpanPlacement{}, ErrUnaligned
	}
	hs, err := m.host(start)
	if err != nil {
		return SpanPlacement{}, err
	}
	he, err := m.host(end)
	if err != nil {
		return SpanPlacement{}, err
	}
	return m.bounded(hs, he, slo, shi, elo, ehi)
}

func (m *Mapping) bounded(hs, he HostNanos, slo, shi, elo, ehi DeviceNanos) (SpanPlacement, error) {
	b1, err := m.boundAt(hs, slo, shi)
	if err != nil {
		return SpanPlacement{}, err
	}
	b2, err := m.boundAt(he, elo, ehi)
	if err != nil {
		return SpanPlacement{}, err
	}
	return SpanPlacement{HostStart: hs, HostEnd: he, Bound: max(b1, b2)}, nil
}

// SpanPlacement is where one device span is drawn on the host timeline.
type SpanPlacement struct {
	HostStart, HostEnd HostNanos
	// Bound: under the model's assumptions the span's true host start lies
	// within Bound of HostStart and its true end within Bound of HostEnd.
	Bound HostNanos
}

// Placement is a placed run: its Mapping and, parallel to Run.Spans, where
// each span is drawn (nil when the run is Unaligned).
type Placement struct {
	Mapping
	Spans []SpanPlacement
}

// Place places run: one Mapping for the whole run and every span drawn
// through it. Stamped spans are drawn at Host(TS)..Host(TS+Dur).
// device_wall from a buffer (run.Wall set) is drawn at its true extent;
// from a log it is the runtime's bracket and is drawn over the middle of
// the interval its true start may take, widened to cover its sub-phases,
// with its bound measured from where it is drawn. An empty intersection of
// the evidence is an *InconsistencyError; offsets whose host time does not
// fit int64 are an error wrapping ErrRange.
func (p *Placer) Place(run Run) (Placement, error) {
	var out Placement
	if err := p.PlaceInto(&out, run); err != nil {
		return Placement{}, err
	}
	return out, nil
}

// PlaceInto is Place writing into out, reusing out.Spans' storage.
func (p *Placer) PlaceInto(out *Placement, run Run) error {
	sh := shapeOf(run.Spans)
	m, err := p.mapping(run, sh)
	if err != nil {
		return err
	}
	out.Mapping, out.Spans = m, out.Spans[:0]
	if m.Method == Unaligned {
		out.Spans = nil
		return nil
	}
	out.Spans = slices.Grow(out.Spans, len(run.Spans))[:len(run.Spans)]
	mp := &out.Mapping
	wall := sh.wall
	for i := range run.Spans {
		if i == wall {
			continue
		}
		s := &run.Spans[i]
		end, ok := addDevice(s.TS, s.Dur)
		if !ok {
			return fmt.Errorf("%w: %s ends past the largest offset", ErrRange, s.Name)
		}
		if out.Spans[i], err = mp.placeWindow(s.TS, end); err != nil {
			return fmt.Errorf("reduce: %s: %w", s.Name, err)
		}
	}
	if wall >= 0 {
		if out.Spans[wall], err = p.placeWall(mp, run, sh, out.Spans); err != nil {
			return fmt.Errorf("reduce: %s: %w", run.Spans[wall].Name, err)
		}
	}
	return nil
}

// Misfits returns, in order, the indices of run's spans (device_wall
// aside) that its host windows cannot hold even alone: placed with none
// of the run's other spans and by containment only, the evidence admits
// no placement for it, or its host time leaves the int64 range. Such a
// span's offsets are impossible (a phase logged days past its run's
// origin); it says nothing of where the others go, and they are placed
// without it. Clock anchors are not consulted: where they contradict
// the run's windows they do so whatever its spans. Misfits returns nil
// when no span fits alone: then the windows are in question, not the
// spans.
func (p *Placer) Misfits(run Run) []int {
	run.HasOrigin = false
	var out []int
	var pl Placement
	spans, fit := run.Spans, false
	for i := range spans {
		if isWall(spans[i]) {
			continue
		}
		run.Spans = spans[i : i+1]
		if err := p.PlaceInto(&pl, run); err != nil {
			out = append(out, i)
		} else {
			fit = true
		}
	}
	if !fit {
		return nil
	}
	return out
}

func isWall(s DeviceSpan) bool { return s.Depth == 2 && s.Name == strace.SpanDeviceWall }

// placeWall places device_wall. From a buffer its true extent is known.
// From a log its true start lies in [min(covered−dur, 0), 0] and its true
// end in [max(covered, start+dur), dur+2]: it is drawn at the middle of
// its start's range, as long as it lasts, widened to cover every other span
// as drawn (the map is monotone, so that is the covered stretch).
func (p *Placer) placeWall(m *Mapping, run Run, sh runShape, drawn []SpanPlacement) (SpanPlacement, error) {
	wall := sh.wall
	s := run.Spans[wall]
	if run.Wall != nil {
		w := *run.Wall
		return m.place(w.Start, w.End, w.Start, satAdd(w.Start, 1), satAdd(w.End, -1), w.End)
	}
	covered := sh.covered
	xsLo := min(satAdd(covered, -s.Dur), 0)
	mid := xsLo / 2
	hs, err := m.host(mid)
	if err != nil {
		return SpanPlacement{}, err
	}
	he, err := m.host(satAdd(mid, s.Dur))
	if err != nil {
		return SpanPlacement{}, err
	}
	for i, d := range drawn {
		if i != wall {
			hs, he = min(hs, d.HostStart), max(he, d.HostEnd)
		}
	}
	return m.bounded(hs, he, xsLo, 0, max(covered, satAdd(xsLo, s.Dur)), satAdd(s.Dur, 2))
}

// runExtent is how far from the origin a run's spans reach, in device ns:
// its stamped spans' ends, device_wall's logged duration and, from a
// buffer, RunWall's true extent.
func runExtent(run Run, sh runShape) DeviceNanos {
	e := sh.covered
	if sh.wall >= 0 {
		e = max(e, run.Spans[sh.wall].Dur)
	}
	if w := run.Wall; w != nil {
		e = max(e, before(w.Start), w.End)
	}
	return max(e, sh.lead)
}

// before is how far an offset lies before the origin (0 for one after
// it), saturating.
func before(v DeviceNanos) DeviceNanos {
	switch {
	case v >= 0:
		return 0
	case v == math.MinInt64:
		return math.MaxInt64
	}
	return -v
}

// runShape is what placement needs of a run's spans, found in one pass.
type runShape struct {
	// wall is the index of the first device_wall, −1 without one.
	wall int
	// covered is the device-domain end of the last span other than
	// device_wall: the stretch after the origin the sub-phases cover;
	// lead how far the earliest span starts before the origin.
	covered, lead DeviceNanos
}

func shapeOf(spans []DeviceSpan) runShape {
	sh := runShape{wall: -1}
	for i := range spans {
		s := &spans[i]
		sh.lead = max(sh.lead, before(s.TS))
		if isWall(*s) {
			if sh.wall < 0 {
				sh.wall = i
			}
			continue
		}
		sh.covered = max(sh.covered, satAdd(s.TS, s.Dur))
	}
	return sh
}

// mapping builds run's Mapping from the evidence.
func (p *Placer) mapping(run Run, sh runShape) (Mapping, error) {
	rho := p.cfg.maxRate
	rate := rateRange{lo: -rho, hi: rho}
	ds := p.domains[run.Domain]
	origin := unbounded()
	method := Unaligned
	var why Cause
	var estLo, estHi HostNanos
	var estRate PPB
	hasEst := false

	// Anchors.
	switch {
	case ds == nil || len(ds.anchors) == 0:
		why |= CauseNoAnchors
	case !run.HasOrigin:
		why |= CauseNoOrigin
	default:
		if !ds.sorted {
			ds.prepare()
			p.prepareEstimate(ds)
		}
		ev, err := p.anchorEvidenceAside(ds, run)
		if err != nil {
			var ie *InconsistencyError
			if errors.As(err, &ie) {
				ie.Domain = run.Domain
			}
			return Mapping{}, err
		}
		rate = ev.rate
		if runExtent(run, sh) > p.cfg.halfHorizon() {
			// The run reaches past its horizon: the stability says
			// nothing of the rate there.
			rate = rateRange{lo: -rho, hi: rho}
		}
		if ev.used > 0 {
			estLo, estHi, estRate, hasEst = p.estimateAt(ds, ev.xc)
			origin = ev.iv
			method = Aligned
		} else {
			why |= CauseOriginFar
		}
	}

	// Slack for ns offsets floored from cycles (the runtime's own
	// floating-point conversion can come out 1 ns short as well) and for
	// the counter's quantisation.
	var tick HostNanos = 1
	if ds != nil {
		tick = ds.tick
	}
	slack := tick + 2
	if run.Wall != nil {
		slack = tick + 1
	}

	// Containment: RunWall lies inside runner_run.
	covered := sh.covered
	wallDur := DeviceNanos(-1)
	if sh.wall >= 0 {
		wallDur = run.Spans[sh.wall].Dur
	}
	xsHi, xeLo := DeviceNanos(0), covered
	if run.Wall != nil {
		// Start is floored and End ceiled: widen by 1 ns where they are
		// used as the other bound.
		xsHi, xeLo = satAdd(run.Wall.Start, 1), max(satAdd(run.Wall.End, -1), covered)
	} else if wallDur >= 0 {
		xsLo := min(covered-wallDur, 0)
		xeLo = max(covered, wallDur+xsLo)
	}
	q := ratiosOf(rate)
	sHi, eLo := q.hostHi(xsHi), q.hostLo(xeLo)
	contain := func(w HostWindow, ev Evidence) {
		lo, hi := satAdd(w.Start, -satAdd(sHi, tick)), satAdd(w.End, -satAdd(eLo, -tick))
		ev.Lo, ev.Hi = int64(lo), int64(hi)
		origin.intersect(lo, hi, ev)
		if method == Unaligned {
			method = Contained
		}
	}
	if run.RunnerRun != nil {
		contain(*run.RunnerRun, Evidence{Kind: EvidenceRunnerRun})
	} else {
		why |= CauseNoRunner
	}
	for i, w := range run.Enclosing {
		contain(w, Evidence{Kind: EvidenceEnclosing, Index: i})
	}
	if origin.empty() {
		return Mapping{}, &InconsistencyError{Domain: run.Domain, Low: origin.loSrc, High: origin.hiSrc}
	}
	m := Mapping{Method: method}
	if method != Aligned {
		m.Reason, m.Causes = p.reason(run.Domain, why), why
	}
	if method == Unaligned {
		return m, nil
	}
	m.Origin, m.Rate = midpoint(origin.lo, origin.hi), rate.mid()
	if hasEst {
		// The middle of what both the constant-rate fit and the rigorous
		// evidence allow; where they do not meet, the end of the rigorous
		// interval nearest the fit.
		lo, hi := max(estLo, origin.lo), min(estHi, origin.hi)
		switch {
		case lo <= hi:
			m.Origin = midpoint(lo, hi)
		case estHi < origin.lo:
			m.Origin = origin.lo
		default:
			m.Origin = origin.hi
		}
		m.Rate = min(max(estRate, rate.lo), rate.hi)
	}
	m.origin, m.rate, m.slack = origin, rate, slack
	m.q, m.at, m.atSet = q, newRatio(m.Rate), true
	m.quick = q.fast() && m.at.fast && absU(int64(origin.lo)) < 1<<62 && absU(int64(origin.hi)) < 1<<62 && slack >= 0 && slack < 1<<61
	return m, nil
}

// Cause is why a run is not aligned (Mapping.Causes): what evidence it
// lacks. It is a set: each constant is one bit, and a run lacking several
// pieces of evidence has each of their bits.
type Cause uint8

// The causes of a run not aligned.
const (
	// CauseNoAnchors: its domain has no clock anchors.
	CauseNoAnchors Cause = 1 << iota
	// CauseNoOrigin: its device_wall has no origin_cyc (Run.HasOrigin
	// is false).
	CauseNoOrigin
	// CauseOriginFar: no anchor of its domain maps its origin_cyc onto
	// the host axis (too far from every anchor).
	CauseOriginFar
	// CauseNoRunner: it has no runner_run window (Run.RunnerRun is nil).
	CauseNoRunner

	// AllCauses holds every cause.
	AllCauses = CauseNoAnchors | CauseNoOrigin | CauseOriginFar | CauseNoRunner
)

// reason returns the text of the causes why for a run of domain d: each
// cause's, in the order of the constants, joined by "; ". Texts are
// kept, so that runs placed for the same reasons share one.
func (p *Placer) reason(d Domain, why Cause) string {
	k := reasonKey{d, why}
	if s, ok := p.reasons[k]; ok {
		return s
	}
	s := ""
	add := func(r string) {
		if s != "" {
			s += "; "
		}
		s += r
	}
	if why&CauseNoAnchors != 0 {
		add("no clock anchors for " + d.String())
	}
	if why&CauseNoOrigin != 0 {
		add("no origin_cyc on device_wall")
	}
	if why&CauseOriginFar != 0 {
		add("origin_cyc too far from every anchor")
	}
	if why&CauseNoRunner != 0 {
		add("no runner_run window")
	}
	if p.reasons == nil {
		p.reasons = map[reasonKey]string{}
	}
	p.reasons[k] = s
	return s
}

type reasonKey struct {
	d   Domain
	why Cause
}

// midpoint returns (lo+hi)/2, rounded towards zero, without overflow.
func midpoint(lo, hi HostNanos) HostNanos {
	return lo/2 + hi/2 + (lo%2+hi%2)/2
}

// addHost, subHost and addDevice are exact; ok is false on overflow.
func addHost(a, b HostNanos) (HostNanos, bool) {
	s := a + b
	return s, (b >= 0) == (s >= a)
}

func subHost(a, b HostNanos) (HostNanos, bool) {
	s := a - b
	return s, (b >= 0) == (s <= a)
}

func addDevice(a, b DeviceNanos) (DeviceNanos, bool) {
	s := a + b
	return s, (b >= 0) == (s >= a)
}
