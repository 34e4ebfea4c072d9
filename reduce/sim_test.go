package reduce

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
)

// The simulator below drives the whole pipeline: it stamps real buffers
// from simulated AICPU threads, decodes and reduces them, turns them into
// the spans a log would carry and places those spans from simulated
// anchors and runner_run windows. Truth is kept in host ns.

// simClock is a device counter: C(t) = c0 + f·1e-9·(t + ∫ε), with
// ε(t) = drift + wander·sin(2πt/period).
type simClock struct {
	freq   Hz
	c0     float64
	drift  float64 // rate error, fraction
	wander float64 // amplitude of the rate error's oscillation, fraction
	period float64 // ns
	// steps, when set, replace drift: the rate error is steps[i] over
	// [i·stepEvery, (i+1)·stepEvery) ns (plus the wander), stepInteg[i]
	// the device ns at the step's start.
	steps     []float64
	stepEvery float64
	stepInteg []float64 // ∫(1+ε) up to the start of step i
}

func (c simClock) at(t HostNanos) Cycles {
	x := float64(t)
	integ := x + c.drift*x
	if c.steps != nil {
		i := min(max(int(math.Floor(x/c.stepEvery)), 0), len(c.steps)-1)
		integ = c.stepInteg[i] + (x-float64(i)*c.stepEvery)*(1+c.steps[i])
	}
	if c.wander != 0 {
		integ += c.wander * c.period / (2 * math.Pi) * (1 - math.Cos(2*math.Pi*x/c.period))
	}
	return Cycles(math.Floor(c.c0 + float64(c.freq)*1e-9*integ))
}

type regime struct {
	name        string
	freq        Hz
	drift       float64
	wander      float64
	anchorEvery HostNanos // 0: no anchors
	anchorsTill HostNanos // anchors only before this host time (0: whole run)
	winMin      HostNanos
	winMax      HostNanos
	runEvery    HostNanos
	length      HostNanos
	// anchorAt, when set, are the host times of the anchors' windows
	// (instead of one every anchorEvery, jittered).
	anchorAt []HostNanos
	// perLaunch: an anchor is read just before each run is launched.
	perLaunch bool
	// torn drops the anchor of that ordinal (1-based; 2 drops the second).
	torn int
	// runs caps the number of runs (0: as many as fit).
	runs int
	// stepEvery, when set, redraws the rate error every stepEvery ns,
	// uniform in drift ± stepAmp.
	stepAmp   float64
	stepEvery HostNanos
	// omit leaves phases out of some runs: config_validate, arena_wire
	// and sm_reset are not stamped in every other run, post_orch in every
	// third.
	omit bool
}

// simRun is one simulated invocation: the log-path Run and the true host
// start and end of each of its spans.
type simRun struct {
	run      Run // as read back from a log: device_wall is a bracket at ts=0
	bufRun   Run // as reduced from the buffer: RunWall's true start known
	truth    []HostNanos
	truthEnd []HostNanos
}

type simData struct {
	anchors []Anchor
	runs    []simRun
}

const (
	us = HostNanos(1000)
	ms = 1000 * us
	s  = 1000 * ms
)

func uniform(r *rand.Rand, lo, hi HostNanos) HostNanos {
	if hi <= lo {
		return lo
	}
	return lo + HostNanos(r.Int64N(int64(hi-lo)+1))
}

// simulate generates one regime's data deterministically from seed.
func simulate(rg regime, seed uint64) simData {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	clk := simClock{freq: rg.freq, c0: float64(rg.freq) * 3600 * 5, drift: rg.drift, wander: rg.wander, period: float64(17 * s)}
	if rg.stepEvery > 0 {
		r := rand.New(rand.NewPCG(seed, 0x57e9))
		clk.steps = make([]float64, int((rg.length+s)/rg.stepEvery)+1)
		for i := range clk.steps {
			clk.steps[i] = rg.drift + (r.Float64()*2-1)*rg.stepAmp
		}
		clk.stepEvery = float64(rg.stepEvery)
		clk.stepInteg = make([]float64, len(clk.steps))
		acc := 0.0
		for i := range clk.steps {
			clk.stepInteg[i] = acc
			acc += clk.stepEvery * (1 + clk.steps[i])
		}
	}
	var d simData
	const host0 = HostNanos(1_000_000_000_000) // the host clock's reading at t = 0
	nAnchor := 0
	anchor := func(start HostNanos) {
		nAnchor++
		w := uniform(r, rg.winMin, rg.winMax)
		read := start + uniform(r, 0, w)
		if nAnchor == rg.torn {
			return
		}
		d.anchors = append(d.anchors, Anchor{HostNs: host0 + start, WindowNs: w, DevCyc: clk.at(read), DevFreq: rg.freq})
	}
	for _, t := range rg.anchorAt {
		anchor(t)
	}
	if rg.anchorEvery > 0 {
		till := rg.length
		if rg.anchorsTill > 0 {
			till = rg.anchorsTill
		}
		for t := HostNanos(0); t < till; t += rg.anchorEvery {
			anchor(t + uniform(r, 0, rg.anchorEvery/10))
		}
	}
	const threads = 4 // thread 0 orchestrates, 1..3 schedule
	for t := 50 * ms; t+rg.runEvery < rg.length && (rg.runs == 0 || len(d.runs) < rg.runs); t += rg.runEvery {
		if rg.perLaunch {
			// The sample before the launch: its window ends a few µs
			// before runner_run starts.
			anchor(t - rg.winMax - uniform(r, 1*us, 20*us))
		}
		n := len(d.runs)
		d.runs = append(d.runs, simOneRun(r, clk, host0, t, threads, rg.omit && n%2 == 1, rg.omit && n%3 == 2))
	}
	return d
}

func simOneRun(r *rand.Rand, clk simClock, host0, t HostNanos, threads int, omitSetup, omitPost bool) simRun {
	b, _ := NewBuffer(threads, true)
	truth, truthEnd := map[string]HostNanos{}, map[string]HostNanos{}
	stamp := func(th int, p Phase, a, z HostNanos) {
		b.Phases[th*NumPhases+int(p)] = Record{Start: clk.at(a), End: clk.at(z)}
		name := p.SpanName()
		if v, ok := truth[name]; !ok || a < v {
			truth[name] = a
		}
		truthEnd[name] = max(truthEnd[name], z)
	}
	h0 := t
	wall0 := h0 + uniform(r, 30*us, 300*us) // launch
	var wallEnd HostNanos
	// Every thread stamps RunWall around its own work.
	pre := wall0 + uniform(r, 2*us, 5*us)
	preEnd := pre + uniform(r, 20*us, 200*us)
	gb := preEnd + uniform(r, 0, 2*us)
	cv := gb + uniform(r, 1*us, 3*us)
	cvEnd := cv + uniform(r, 5*us, 50*us)
	aw := cvEnd
	awEnd := aw + uniform(r, 5*us, 100*us)
	sm := awEnd
	smEnd := sm + uniform(r, 5*us, 30*us)
	orch := smEnd + uniform(r, 0, 1*us)
	orchEnd := orch + uniform(r, 100*us, 2*ms)
	schedEnd := orchEnd + uniform(r, 10*us, 1*ms)
	gbEnd := schedEnd + uniform(r, 0, 2*us)
	po := gbEnd + uniform(r, 1*us, 3*us)
	poEnd := po + uniform(r, 5*us, 40*us)
	wallEnd = poEnd + uniform(r, 3*us, 6*us)
	for th := range threads {
		// RunWall is stamped by the kernel entry around everything the
		// thread does.
		stamp(th, RunWall, wall0+uniform(r, 0, 1*us), wallEnd-uniform(r, 0, 2*us))
		stamp(th, Preamble, pre+uniform(r, 0, 1*us), preEnd-uniform(r, 0, 1*us))
		if th == 0 {
			stamp(th, GraphBuild, gb, gbEnd)
			if !omitSetup {
				stamp(th, ConfigValidate, cv, cvEnd)
				stamp(th, ArenaWire, aw, awEnd)
				stamp(th, SmReset, sm, smEnd)
			}
			stamp(th, OrchWindow, orch, orchEnd)
		} else {
			stamp(th, SchedWindow, orch+uniform(r, 0, 3*us), schedEnd-uniform(r, 0, 20*us))
		}
	}
	if !omitPost {
		stamp(threads-1, PostOrch, po, poEnd)
	}
	// Two tagged task slots on the schedulers.
	for sl := range 2 {
		a := orch + uniform(r, 10*us, 100*us)
		z := a + uniform(r, 5*us, 50*us)
		b.Slots[(1+sl)*NumSlots+sl] = Record{Start: clk.at(a), End: clk.at(z)}
		truth[SlotName(sl)], truthEnd[SlotName(sl)] = a, z
	}
	b.Header.TailUsed = 1
	// Truth for device_wall is RunWall's real start.
	h1 := wallEnd + uniform(r, 20*us, 400*us) // readback
	red, err := Reduce(b, clk.freq)
	if err != nil {
		panic(err)
	}
	spans, err := red.Spans()
	if err != nil {
		panic(err)
	}
	run := Run{Domain: Domain{Pid: 1, Dev: 0}, Origin: red.Origin, HasOrigin: true, Spans: spans,
		RunnerRun: &HostWindow{Start: host0 + h0, End: host0 + h1}}
	bufRun, err := RunFrom(red, run.Domain, run.RunnerRun)
	if err != nil {
		panic(err)
	}
	tr, te := make([]HostNanos, len(spans)), make([]HostNanos, len(spans))
	for i, sp := range spans {
		tr[i], te[i] = host0+truth[sp.Name], host0+truthEnd[sp.Name]
	}
	return simRun{run: run, bufRun: bufRun, truth: tr, truthEnd: te}
}

// stats summarises one method on one regime.
type stats struct {
	n           int
	maxErr      HostNanos
	medErr      HostNanos
	holds       float64
	medBound    HostNanos
	unavailable int
}

type collector struct {
	errs, bounds []HostNanos
	held, n, na  int
}

// add records a span start estimated at est with the given bound.
func (c *collector) add(est, bound, truth HostNanos) {
	e := abs(est - truth)
	c.errs = append(c.errs, e)
	c.bounds = append(c.bounds, bound)
	if e <= bound {
		c.held++
	}
	c.n++
}

// addSpan records a placed span: its start's error, and the bound holds
// only when it holds for both the start and the end.
func (c *collector) addSpan(p SpanPlacement, start, end HostNanos) {
	e := abs(p.HostStart - start)
	c.errs = append(c.errs, e)
	c.bounds = append(c.bounds, p.Bound)
	if e <= p.Bound && abs(p.HostEnd-end) <= p.Bound {
		c.held++
	}
	c.n++
}

func (c *collector) stats() stats {
	if c.n == 0 {
		return stats{unavailable: c.na}
	}
	slices.Sort(c.errs)
	slices.Sort(c.bounds)
	return stats{n: c.n, maxErr: c.errs[len(c.errs)-1], medErr: c.errs[len(c.errs)/2],
		holds: float64(c.held) / float64(c.n), medBound: c.bounds[len(c.bounds)/2], unavailable: c.na}
}

// Competing methods, each given the same data.

// twoPoint is the runtime's calibration method applied to sparse anchors:
// the narrowest-window anchor among the group of five before the run and
// among the five after, linear interpolation between their midpoints, and
// the larger half-window as the published bound.
func twoPoint(anchors []Anchor, rr simRun, c, wall *collector) {
	run := rr.run
	h0 := run.RunnerRun.Start
	i := sort.Search(len(anchors), func(k int) bool { return anchors[k].HostNs >= h0 })
	if i == 0 || i == len(anchors) {
		c.na += len(run.Spans)
		return
	}
	best := func(lo, hi int) Anchor {
		b := anchors[max(lo, 0)]
		for k := max(lo, 0); k < min(hi, len(anchors)); k++ {
			if anchors[k].WindowNs < b.WindowNs {
				b = anchors[k]
			}
		}
		return b
	}
	a, z := best(i-5, i), best(i, i+5)
	ma := float64(a.HostNs) + float64(a.WindowNs)/2
	mz := float64(z.HostNs) + float64(z.WindowNs)/2
	bound := HostNanos(math.Ceil(float64(max(a.WindowNs, z.WindowNs)) / 2))
	for k, sp := range run.Spans {
		cyc := float64(run.Origin) + float64(sp.TS)*float64(a.DevFreq)/1e9
		est := ma + (cyc-float64(a.DevCyc))/float64(z.DevCyc-a.DevCyc)*(mz-ma)
		pick(c, wall, sp).add(HostNanos(math.Round(est)), bound, rr.truth[k])
	}
}

// leastSquares is a hindsight reference: the least-squares line
// host = α + β·cycles through every anchor's window midpoint, evaluated at
// each span's counter value (floating point). Plain, every anchor weighs
// the same; weighted, each weighs 1/window². It publishes no bound.
func leastSquares(anchors []Anchor, rr simRun, weighted bool, c, wall *collector) {
	run := rr.run
	if len(anchors) < 2 {
		c.na += len(run.Spans)
		return
	}
	x0, y0 := float64(anchors[0].DevCyc), float64(anchors[0].HostNs)
	var sw, sx, sy, sxx, sxy float64
	for _, a := range anchors {
		w := 1.0
		if weighted {
			w = 1 / math.Pow(float64(a.WindowNs)+1, 2)
		}
		x := float64(a.DevCyc) - x0
		y := float64(a.HostNs) + float64(a.WindowNs)/2 - y0
		sw, sx, sy, sxx, sxy = sw+w, sx+w*x, sy+w*y, sxx+w*x*x, sxy+w*x*y
	}
	beta := (sw*sxy - sx*sy) / (sw*sxx - sx*sx)
	alpha := (sy - beta*sx) / sw
	for k, sp := range run.Spans {
		cyc := float64(run.Origin) - x0 + float64(sp.TS)*float64(anchors[0].DevFreq)/1e9
		pick(c, wall, sp).add(HostNanos(math.Round(y0+alpha+beta*cyc)), -1, rr.truth[k])
	}
}

// leastSquaresNearest is a hindsight reference for a rate that changes:
// the least-squares line through the window midpoints of the k anchors
// nearest the run's runner_run start in host time, before and after it.
// It publishes no bound.
func leastSquaresNearest(anchors []Anchor, rr simRun, k int, c, wall *collector) {
	run := rr.run
	if len(anchors) < 2 {
		c.na += len(run.Spans)
		return
	}
	h := run.RunnerRun.Start
	i := sort.Search(len(anchors), func(j int) bool { return anchors[j].HostNs >= h })
	lo, hi := i, i
	for hi-lo < min(k, len(anchors)) {
		switch {
		case lo == 0:
			hi++
		case hi == len(anchors):
			lo--
		case h-anchors[lo-1].HostNs < anchors[hi].HostNs-h:
			lo--
		default:
			hi++
		}
	}
	leastSquares(anchors[lo:hi], rr, false, c, wall)
}

// nearestAnchor maps through the anchor nearest in counter value with the
// nominal frequency only, claiming its half-window as the bound.
func nearestAnchor(anchors []Anchor, rr simRun, c, wall *collector) {
	run := rr.run
	if len(anchors) == 0 {
		c.na += len(run.Spans)
		return
	}
	i := sort.Search(len(anchors), func(k int) bool { return anchors[k].DevCyc >= run.Origin })
	if i == len(anchors) || (i > 0 && run.Origin-anchors[i-1].DevCyc < anchors[i].DevCyc-run.Origin) {
		i--
	}
	a := anchors[i]
	mid := float64(a.HostNs) + float64(a.WindowNs)/2
	for k, sp := range run.Spans {
		d := (float64(run.Origin) - float64(a.DevCyc)) / float64(a.DevFreq) * 1e9
		pick(c, wall, sp).add(HostNanos(math.Round(mid+d+float64(sp.TS))), HostNanos(math.Ceil(float64(a.WindowNs)/2)), rr.truth[k])
	}
}

// pick returns wall for device_wall and c for the stamped spans.
func pick(c, wall *collector, sp DeviceSpan) *collector {
	if sp.Depth == 2 {
		return wall
	}
	return c
}

// placeSteady places every run with p (the log form), counting a run
// whose evidence conflicts (the steady model contradicted) as unplaced.
func placeSteady(p *Placer, d simData, c, wall *collector) {
	for _, rr := range d.runs {
		pl, err := p.Place(rr.run)
		for k, sp := range rr.run.Spans {
			cc := pick(c, wall, sp)
			if err != nil || pl.Method == Unaligned {
				cc.na++
				continue
			}
			cc.addSpan(pl.Spans[k], rr.truth[k], rr.truthEnd[k])
		}
	}
}

// placeAll places every run with p (the buffer form when fromBuffer is
// set, the log form otherwise) and collects the results.
func placeAll(p *Placer, d simData, fromBuffer bool, c, wall *collector) error {
	for _, rr := range d.runs {
		run := rr.run
		if fromBuffer {
			run = rr.bufRun
		}
		pl, err := p.Place(run)
		if err != nil {
			return err
		}
		for k, sp := range run.Spans {
			cc := pick(c, wall, sp)
			if pl.Method == Unaligned {
				cc.na++
				continue
			}
			cc.addSpan(pl.Spans[k], rr.truth[k], rr.truthEnd[k])
		}
	}
	return nil
}
