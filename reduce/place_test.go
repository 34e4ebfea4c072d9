package reduce

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/phasetrace/phasetrace/strace"
)

var dom = Domain{Pid: 7, Dev: 1}

// logRun is a run as read back from a log: device_wall at ts=0 lasting
// wall ns, a preamble at ts=0 and a post_orch ending at covered.
func logRun(origin Cycles, wall, covered DeviceNanos, rr *HostWindow) Run {
	return Run{
		Domain: dom, Origin: origin, HasOrigin: true, RunnerRun: rr,
		Spans: []DeviceSpan{
			{Name: strace.SpanDeviceWall, Depth: 2, TS: 0, Dur: wall},
			{Name: strace.SpanDeviceWall + ".preamble", Depth: 3, TS: 0, Dur: 1000},
			{Name: strace.SpanDeviceWall + ".post_orch", Depth: 3, TS: covered - 1000, Dur: 1000},
		},
	}
}

// placed is one span's placement with its run's method and reason.
type placed struct {
	SpanPlacement
	Method Method
	Reason string
	Causes Cause
}

func mustPlace(t *testing.T, p *Placer, run Run) []placed {
	t.Helper()
	pl, err := p.Place(run)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]placed, len(run.Spans))
	for i := range out {
		out[i].Method, out[i].Reason, out[i].Causes = pl.Method, pl.Reason, pl.Causes
		if pl.Method != Unaligned {
			out[i].SpanPlacement = pl.Spans[i]
		}
	}
	return out
}

func TestPlaceSingleAnchor(t *testing.T) {
	t.Parallel()
	// 1 GHz: cycles are ns. The counter read 5_000_000 somewhere in
	// host [1_000_000, 1_000_400].
	p := NewPlacer()
	if err := p.AddAnchor(dom, Anchor{HostNs: 1_000_000, WindowNs: 400, DevCyc: 5_000_000, DevFreq: 1e9}); err != nil {
		t.Fatal(err)
	}
	pl := mustPlace(t, p, logRun(5_000_000, 10_000, 10_000, nil))
	pre := pl[1]
	if pre.Method != Aligned || pre.Reason != "" || pre.Causes != 0 {
		t.Fatalf("method %v %q %b", pre.Method, pre.Reason, pre.Causes)
	}
	// Midpoint 1_000_200, half-window 200, plus a few ns for the
	// counter's tick and floored offsets.
	if pre.HostStart < 1_000_198 || pre.HostStart > 1_000_203 || pre.Bound < 200 || pre.Bound > 210 {
		t.Errorf("preamble placed at %d ± %d, want ≈ 1_000_200 ± 200", pre.HostStart, pre.Bound)
	}
	// post_orch starts 9 µs after the origin: the 100 ppm rate bound
	// adds ≈ 0.9 ns each side.
	po := pl[2]
	if po.HostStart < 1_009_198 || po.HostStart > 1_009_203 || po.Bound < pre.Bound {
		t.Errorf("post_orch at %d ± %d", po.HostStart, po.Bound)
	}
}

func TestPlaceBoundGrowsAwayFromAnchors(t *testing.T) {
	t.Parallel()
	p := NewPlacer()
	for i := range 3 {
		host := HostNanos(1e9 + i*100_000_000)
		if err := p.AddAnchor(dom, Anchor{HostNs: host, WindowNs: 1000, DevCyc: Cycles(host) * 2, DevFreq: 2e9}); err != nil {
			t.Fatal(err)
		}
	}
	var last HostNanos
	for i, dist := range []HostNanos{0, 1e6, 1e8, 1e9, 1e10} {
		c := Cycles(1e9+2e8+dist) * 2
		pl := mustPlace(t, p, logRun(c, 1000, 1000, nil))
		b := pl[1].Bound
		if i > 0 && b <= last {
			t.Errorf("%d ns past the last anchor: bound %d, not larger than %d", dist, b, last)
		}
		last = b
	}
}

func TestPlaceDomainsAreSeparate(t *testing.T) {
	t.Parallel()
	p := NewPlacer()
	if err := p.AddAnchor(Domain{Pid: 7, Dev: 2}, Anchor{HostNs: 1000, WindowNs: 10, DevCyc: 1000, DevFreq: 1e9}); err != nil {
		t.Fatal(err)
	}
	pl := mustPlace(t, p, logRun(1000, 100, 100, nil))
	if pl[0].Method != Unaligned || !strings.Contains(pl[0].Reason, "no clock anchors") || pl[0].Causes != CauseNoAnchors|CauseNoRunner {
		t.Errorf("anchor of dev 2 used for dev 1: %+v", pl[0])
	}
}

func TestPlaceAnchorValidation(t *testing.T) {
	t.Parallel()
	p := NewPlacer()
	for _, a := range []Anchor{
		{HostNs: 1, WindowNs: -1, DevFreq: 1},
		{HostNs: 1, WindowNs: 1, DevFreq: 0},
		{HostNs: -1, WindowNs: 1, DevFreq: 1},
	} {
		if err := p.AddAnchor(dom, a); !errors.Is(err, ErrAnchor) {
			t.Errorf("%+v: %v", a, err)
		}
	}
	if err := p.AddAnchor(dom, Anchor{HostNs: 1, DevCyc: 1, DevFreq: 50e6}); err != nil {
		t.Fatal(err)
	}
	if err := p.AddAnchor(dom, Anchor{HostNs: 2, DevCyc: 2, DevFreq: 1e9}); !errors.Is(err, ErrAnchor) {
		t.Errorf("mixed frequencies in one domain: %v", err)
	}
}

func TestPlaceContainedOnly(t *testing.T) {
	t.Parallel()
	// runner_run [1_000_000, 1_100_000]; device_wall 60 µs of which the
	// sub-phases cover 58 µs from the origin.
	rr := &HostWindow{Start: 1_000_000, End: 1_100_000}
	pl := mustPlace(t, NewPlacer(), logRun(123, 60_000, 58_000, rr))
	for i, x := range pl {
		if x.Method != Contained || !strings.Contains(x.Reason, "no clock anchors") || x.Causes != CauseNoAnchors {
			t.Fatalf("span %d: %v %q %b", i, x.Method, x.Reason, x.Causes)
		}
	}
	// The origin lies in [h0, h1 − covered] = [1_000_000, 1_042_000]
	// (widened by the 100 ppm rate bound over 58 µs and a tick).
	pre := pl[1]
	if pre.HostStart-pre.Bound > 1_000_000 || pre.HostStart+pre.Bound < 1_042_000 || pre.Bound > 21_020 {
		t.Errorf("preamble %d ± %d, want ⊇ [1_000_000, 1_042_000] and tight", pre.HostStart, pre.Bound)
	}
	// device_wall from a log: its true start lies up to 60−58 = 2 µs
	// before the origin, so its interval reaches 2 µs lower.
	wall := pl[0]
	if lo := wall.HostStart - wall.Bound; lo > 1_000_000-2_000 {
		t.Errorf("device_wall interval starts at %d, want ≤ %d (bracket)", lo, 1_000_000-2_000)
	}
}

func TestPlaceBufferKnowsWallStart(t *testing.T) {
	t.Parallel()
	rr := &HostWindow{Start: 1_000_000, End: 1_100_000}
	run := logRun(123, 60_000, 58_000, rr)
	fromLog := mustPlace(t, NewPlacer(), run)
	run.Wall = &DeviceWindow{Start: -1500, End: 58_500}
	fromBuf := mustPlace(t, NewPlacer(), run)
	if fromBuf[0].Bound >= fromLog[0].Bound {
		t.Errorf("device_wall bound from the buffer %d not below the log's %d", fromBuf[0].Bound, fromLog[0].Bound)
	}
	// With the true start known, device_wall's start is 1.5 µs before
	// the preamble's.
	if d := fromBuf[1].HostStart - fromBuf[0].HostStart; d < 1499 || d > 1501 {
		t.Errorf("preamble − device_wall = %d, want 1500", d)
	}
}

func TestPlaceEnclosingWindow(t *testing.T) {
	t.Parallel()
	// No runner_run, but the chip.run that contains it is known: the run
	// is contained by it (and the reason still says runner_run is missing).
	run := logRun(123, 60_000, 58_000, nil)
	run.Enclosing = []HostWindow{{Start: 1_000_000, End: 1_500_000}}
	pl := mustPlace(t, NewPlacer(), run)
	if pl[1].Method != Contained || !strings.Contains(pl[1].Reason, "no runner_run window") || pl[1].Causes != CauseNoAnchors|CauseNoRunner {
		t.Fatalf("%+v", pl[1])
	}
	if lo, hi := pl[1].HostStart-pl[1].Bound, pl[1].HostStart+pl[1].Bound; lo > 1_000_000 || hi < 1_442_000 || hi > 1_442_100 {
		t.Errorf("origin interval [%d, %d], want ⊇ [1_000_000, 1_442_000]", lo, hi)
	}
	// An enclosing window that excludes runner_run is an inconsistency.
	run.RunnerRun = &HostWindow{Start: 2_000_000, End: 2_100_000}
	_, err := NewPlacer().Place(run)
	var ie *InconsistencyError
	if !errors.As(err, &ie) || ie.Low.Kind != EvidenceRunnerRun || ie.High.Kind != EvidenceEnclosing {
		t.Errorf("err = %v", err)
	}
}

func TestPlaceUnaligned(t *testing.T) {
	t.Parallel()
	pl := mustPlace(t, NewPlacer(), logRun(1, 10, 10, nil))
	for _, x := range pl {
		if x.Method != Unaligned || !strings.Contains(x.Reason, "no runner_run window") || !strings.Contains(x.Reason, "no clock anchors") || x.Causes != CauseNoAnchors|CauseNoRunner {
			t.Errorf("%+v", x)
		}
	}
	p := NewPlacer()
	if err := p.AddAnchor(dom, Anchor{HostNs: 1, DevCyc: 1, DevFreq: 1e9}); err != nil {
		t.Fatal(err)
	}
	run := logRun(1, 10, 10, nil)
	run.HasOrigin = false
	pl = mustPlace(t, p, run)
	if pl[0].Method != Unaligned || !strings.Contains(pl[0].Reason, "origin_cyc") || pl[0].Causes != CauseNoOrigin|CauseNoRunner {
		t.Errorf("%+v", pl[0])
	}
}

// An origin_cyc whose offset from every anchor does not fit int64 ns is
// too far for them: the run is contained by runner_run alone.
func TestPlaceOriginFar(t *testing.T) {
	t.Parallel()
	p := NewPlacer()
	if err := p.AddAnchor(dom, Anchor{HostNs: 1_000_000, WindowNs: 20, DevCyc: 1000, DevFreq: 1e9}); err != nil {
		t.Fatal(err)
	}
	rr := &HostWindow{Start: 1_000_000, End: 1_100_000}
	pl := mustPlace(t, p, logRun(18_000_000_000_000_000_000, 60_000, 58_000, rr))
	if pl[0].Method != Contained || pl[0].Causes != CauseOriginFar || pl[0].Reason != "origin_cyc too far from every anchor" {
		t.Errorf("%+v", pl[0])
	}
}

func TestPlaceInconsistentContainment(t *testing.T) {
	t.Parallel()
	// The anchor puts the origin at ≈ 5_000_000, runner_run says it ran
	// at 1_000_000: an inconsistency naming both.
	p := NewPlacer()
	if err := p.AddAnchor(dom, Anchor{HostNs: 5_000_000, WindowNs: 100, DevCyc: 9_000, DevFreq: 1e9}); err != nil {
		t.Fatal(err)
	}
	_, err := p.Place(logRun(9_000, 1000, 1000, &HostWindow{Start: 1_000_000, End: 1_010_000}))
	var ie *InconsistencyError
	if !errors.As(err, &ie) || !errors.Is(err, ErrInconsistent) {
		t.Fatalf("err = %v", err)
	}
	if ie.Domain != dom || ie.Low.Kind != EvidenceAnchor || ie.High.Kind != EvidenceRunnerRun {
		t.Errorf("conflict = %+v", ie)
	}
}

func TestPlaceInconsistentAnchors(t *testing.T) {
	t.Parallel()
	// A wrong frequency: the counter advances at twice the claimed rate.
	p := NewPlacer()
	for i := range 10 {
		host := HostNanos(1e9 + i*1e8)
		if err := p.AddAnchor(dom, Anchor{HostNs: host, WindowNs: 1000, DevCyc: Cycles(host) * 2, DevFreq: 1e9}); err != nil {
			t.Fatal(err)
		}
	}
	_, err := p.Place(logRun(2e9*1.2, 1000, 1000, nil))
	var ie *InconsistencyError
	if !errors.As(err, &ie) || (ie.Low.Kind != EvidenceRate && ie.High.Kind != EvidenceRate) {
		t.Fatalf("err = %v", err)
	}
	// An anchor whose host clock went backwards against the counter.
	p = NewPlacer()
	_ = p.AddAnchor(dom, Anchor{HostNs: 1e9, WindowNs: 10, DevCyc: 1e9, DevFreq: 1e9})
	_ = p.AddAnchor(dom, Anchor{HostNs: 2e9, WindowNs: 10, DevCyc: 2e9, DevFreq: 1e9})
	_ = p.AddAnchor(dom, Anchor{HostNs: 1.5e9 + 1e6, WindowNs: 10, DevCyc: 1.5e9, DevFreq: 1e9}) // 1 ms off: 2000 ppm
	_ = p.AddAnchor(dom, Anchor{HostNs: 1.7e9, WindowNs: 10, DevCyc: 1.7e9, DevFreq: 1e9})
	// It is set aside; the others place the run.
	pl, err := p.Place(logRun(1.5e9, 1000, 1000, nil))
	if err != nil || pl.Method != Aligned {
		t.Fatalf("outlier anchor: %v (%v)", err, pl.Method)
	}
	if d := pl.Spans[1].HostStart - 1.5e9; d < -pl.Spans[1].Bound || d > pl.Spans[1].Bound || pl.Spans[1].Bound > 5000 {
		t.Errorf("placed %d ns off, bound %d", d, pl.Spans[1].Bound)
	}
	aside := p.SetAside()
	if len(aside) != 1 || aside[0].Index != 2 || aside[0].Runs != 1 || aside[0].Conflict.Kind == 0 {
		t.Errorf("set aside: %+v, want anchor #2 for 1 run", aside)
	}
	// A conflict between two anchors alone, which neither ends: an error
	// naming them.
	p = NewPlacer()
	_ = p.AddAnchor(dom, Anchor{HostNs: 1e9, WindowNs: 10, DevCyc: 1e9, DevFreq: 1e9})
	_ = p.AddAnchor(dom, Anchor{HostNs: 1e9 + 1e6, WindowNs: 10, DevCyc: 1e9 + 5e8, DevFreq: 1e9})
	_, err = p.Place(logRun(1e9+2e8, 1000, 1000, nil))
	if !errors.Is(err, ErrInconsistent) || !strings.Contains(err.Error(), "anchor") {
		t.Errorf("two anchors in conflict: %v", err)
	}
}

func TestMisfits(t *testing.T) {
	t.Parallel()
	rr := &HostWindow{Start: 1_000_000, End: 1_100_000} // 100 µs
	run := logRun(9_000, 50_000, 40_000, rr)
	p := NewPlacer()
	if got := p.Misfits(run); got != nil {
		t.Errorf("a run that fits: misfits %v", got)
	}
	// One phase logged 11 days past the origin, another with a dur no
	// 100 µs window holds: they go, the others stay.
	run.Spans = append(run.Spans,
		DeviceSpan{Name: strace.SpanDeviceWall + ".sm_reset", Depth: 3, TS: 1e15, Dur: 1000},
		DeviceSpan{Name: strace.SpanDeviceWall + ".orch", Depth: 3, TS: 1000, Dur: 1e12},
		DeviceSpan{Name: strace.SpanDeviceWall + ".sched", Depth: 3, TS: 1000, Dur: 30_000})
	if _, err := p.Place(run); !errors.Is(err, ErrInconsistent) {
		t.Fatalf("the run with them placed: %v", err)
	}
	if got, want := p.Misfits(run), []int{3, 4}; !slices.Equal(got, want) {
		t.Errorf("misfits %v, want %v", got, want)
	}
	// The anchors are not consulted: one that contradicts the window
	// contradicts it for every span, and none is singled out.
	if err := p.AddAnchor(dom, Anchor{HostNs: 5_000_000, WindowNs: 100, DevCyc: 9_000, DevFreq: 1e9}); err != nil {
		t.Fatal(err)
	}
	if got := p.Misfits(logRun(9_000, 50_000, 40_000, rr)); got != nil {
		t.Errorf("anchors against the window: misfits %v, want none", got)
	}
	// When no span fits alone, the window is in question, not the spans.
	short := logRun(9_000, 50_000, 40_000, &HostWindow{Start: 1_000_000, End: 1_000_010})
	short.Spans[1].TS = 20_000
	if got := p.Misfits(short); got != nil {
		t.Errorf("no span fits: misfits %v, want none", got)
	}
}

func TestPlaceRateEstimateTightens(t *testing.T) {
	t.Parallel()
	// Anchors every 100 ms for 10 s with a +40 ppm drift; a run 50 ms from
	// the nearest anchors. With the rate estimated the bound is far below
	// what the 100 ppm maximum alone allows.
	add := func(p *Placer) {
		for i := range 100 {
			host := HostNanos(1e9 + i*1e8)
			_ = p.AddAnchor(dom, Anchor{HostNs: host, WindowNs: 2000, DevCyc: Cycles(float64(host) * 1.00004), DevFreq: 1e9})
		}
	}
	est, raw := NewPlacer(), NewPlacer(WithRateStability(2*DefaultMaxRateError))
	add(est)
	add(raw)
	c := Cycles(float64(5.05e9) * 1.00004)
	a := mustPlace(t, est, logRun(c, 1000, 1000, nil))[1]
	b := mustPlace(t, raw, logRun(c, 1000, 1000, nil))[1]
	if a.Bound*2 > b.Bound {
		t.Errorf("bound with rate estimate %d, with 100 ppm only %d", a.Bound, b.Bound)
	}
	if d := a.HostStart - 5.05e9; d < -a.Bound || d > a.Bound {
		t.Errorf("estimate off by %d > bound %d", d, a.Bound)
	}
}

// Property: for random truths, placement's interval always contains the
// truth, and it is never narrower than the spread of origins the anchors
// alone cannot tell apart (shifting every read instant by the same amount
// within all windows is consistent with the same evidence).
func TestPlaceBoundNeverBelowEvidence(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(11, 12))
	for iter := range 300 {
		freq := []Hz{50e6, 1e9, 1_800_000_000}[r.IntN(3)]
		drift := (r.Float64()*2 - 1) * 80e-6
		clk := simClock{freq: freq, c0: float64(r.Uint64N(1 << 40)), drift: drift}
		p := NewPlacer()
		n := 1 + r.IntN(12)
		every := HostNanos(1+r.IntN(500)) * ms
		shiftLo, shiftHi := HostNanos(-1<<62), HostNanos(1<<62)
		for i := range n {
			start := HostNanos(i)*every + uniform(r, 0, every/4)
			w := uniform(r, 0, 40*us)
			var read HostNanos
			switch r.IntN(3) {
			case 0:
				read = start
			case 1:
				read = start + w
			default:
				read = start + uniform(r, 0, w)
			}
			if err := p.AddAnchor(dom, Anchor{HostNs: start, WindowNs: w, DevCyc: clk.at(read), DevFreq: freq}); err != nil {
				t.Fatal(err)
			}
			shiftLo = max(shiftLo, start-read)
			shiftHi = min(shiftHi, start+w-read)
		}
		truth := uniform(r, 0, HostNanos(n)*every+2*s)
		c := clk.at(truth)
		var rr *HostWindow
		if r.IntN(2) == 0 {
			h0 := truth - uniform(r, 0, 300*us)
			rr = &HostWindow{Start: h0, End: truth + 2*us + uniform(r, 0, 300*us)}
		}
		run := logRun(c, 2000, 2000, rr)
		run.Spans = run.Spans[1:2] // the preamble, starting at the origin
		pl, err := p.Place(run)
		if err != nil {
			t.Fatalf("iteration %d: %v", iter, err)
		}
		x := pl.Spans[0]
		if e := x.HostStart - truth; e > x.Bound || -e > x.Bound {
			t.Fatalf("iteration %d: truth %d outside %d ± %d", iter, truth, x.HostStart, x.Bound)
		}
		if rr == nil && 2*x.Bound < shiftHi-shiftLo {
			t.Fatalf("iteration %d: bound %d narrower than the evidence allows (%d)", iter, x.Bound, (shiftHi-shiftLo)/2)
		}
	}
}

// Property: for random drift (up to 100 ppm, wandering and stepping within
// the rate stability), random anchor spacing and windows, with and without
// an anchor per launch, every span's bound holds at its start and its end,
// from a log and from a buffer.
func TestPlaceBoundHoldsUnderDrift(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(21, 22))
	iters := 40
	if testing.Short() {
		iters = 8
	}
	for iter := range iters {
		// A sine of amplitude A and period 17 s moves the rate by under
		// 0.74·A within the 2 s horizon; steps of ±B by up to 2B.
		wander := r.Float64() * float64(DefaultRateStability) / 2 * 1e-9
		var stepAmp float64
		var stepEvery HostNanos
		if iter%2 == 1 {
			wander /= 2 // under 1.9 ppm of change, and steps under 7
			stepAmp, stepEvery = r.Float64()*0.35*float64(DefaultRateStability)*1e-9, HostNanos(500+r.IntN(4500))*ms
		}
		rg := regime{
			name:      "random",
			freq:      []Hz{50_000_000, 1_000_000_000, 1_800_000_000}[r.IntN(3)],
			drift:     (r.Float64()*2 - 1) * (100e-6 - wander - stepAmp),
			wander:    wander,
			stepAmp:   stepAmp,
			stepEvery: stepEvery,
			winMin:    HostNanos(r.IntN(5)) * us,
			runEvery:  HostNanos(5+r.IntN(50)) * ms,
			length:    HostNanos(2+r.IntN(20)) * s,
			torn:      r.IntN(4),
		}
		rg.winMax = rg.winMin + HostNanos(r.IntN(60))*us
		switch r.IntN(3) {
		case 0:
			rg.perLaunch = true
		case 1:
			rg.anchorEvery = HostNanos(10+r.IntN(5000)) * ms
		default:
			for t := HostNanos(0); t < rg.length; t += HostNanos(1+r.IntN(8000)) * ms {
				rg.anchorAt = append(rg.anchorAt, t)
			}
		}
		d := simulate(rg, uint64(iter))
		p := NewPlacer()
		for _, a := range d.anchors {
			if err := p.AddAnchor(Domain{Pid: 1, Dev: 0}, a); err != nil {
				t.Fatal(err)
			}
		}
		for _, buf := range []bool{false, true} {
			var c, wall collector
			if err := placeAll(p, d, buf, &c, &wall); err != nil {
				t.Fatalf("iteration %d (%+v): %v", iter, rg, err)
			}
			for _, st := range []stats{c.stats(), wall.stats()} {
				if st.n > 0 && st.holds != 1 {
					t.Errorf("iteration %d (%+v, buffer %v): bound holds for %.4f%% of spans", iter, rg, buf, 100*st.holds)
				}
			}
		}
	}
}

// Every span of a simulated run is drawn through one map: spans nested on
// the device stay nested on the host, from a log and from a buffer.
func TestPlaceKeepsNesting(t *testing.T) {
	t.Parallel()
	d := simulate(regimes[0], 7)
	p := NewPlacer()
	for _, a := range d.anchors {
		if err := p.AddAnchor(Domain{Pid: 1}, a); err != nil {
			t.Fatal(err)
		}
	}
	for _, rr := range d.runs[:200] {
		for _, run := range []Run{rr.run, rr.bufRun} {
			pl, err := p.Place(run)
			if err != nil {
				t.Fatal(err)
			}
			for i, a := range run.Spans {
				for j, b := range run.Spans {
					ae, be := a.TS+a.Dur, b.TS+b.Dur
					inside := (isWall(a) && !isWall(b)) || (!isWall(a) && !isWall(b) && a.TS <= b.TS && be <= ae)
					x, y := pl.Spans[i], pl.Spans[j]
					if inside && (y.HostStart < x.HostStart || y.HostEnd > x.HostEnd) {
						t.Fatalf("%s [%d, %d] inside %s [%d, %d] on the device, not on the host", b.Name, y.HostStart, y.HostEnd, a.Name, x.HostStart, x.HostEnd)
					}
				}
			}
		}
	}
}

func TestMappingHostOverflow(t *testing.T) {
	t.Parallel()
	m := Mapping{Method: Contained, Origin: math.MaxInt64 - 10}
	if h, err := m.Host(5); err != nil || h != math.MaxInt64-5 {
		t.Errorf("Host(5) = %d, %v", h, err)
	}
	if _, err := m.Host(11); !errors.Is(err, ErrRange) {
		t.Errorf("Host past int64: %v, want ErrRange", err)
	}
	m = Mapping{Method: Aligned, Rate: -DefaultMaxRateError}
	if _, err := m.Host(math.MaxInt64); !errors.Is(err, ErrRange) {
		t.Errorf("offset scaled past int64: %v, want ErrRange", err)
	}
	if _, err := (Mapping{}).Host(0); !errors.Is(err, ErrUnaligned) {
		t.Errorf("unaligned mapping: %v", err)
	}
}

func TestDomainOf(t *testing.T) {
	t.Parallel()
	if d, err := DomainOf(7, 3); err != nil || d != (Domain{Pid: 7, Dev: 3}) {
		t.Errorf("DomainOf(7, 3) = %v, %v", d, err)
	}
	if _, err := DomainOf(7, 1<<31); !errors.Is(err, ErrRange) {
		t.Errorf("dev 2^31: %v", err)
	}
}

func TestEffective(t *testing.T) {
	t.Parallel()
	o, s := DeviceWindow{Start: 100, End: 640}, DeviceWindow{Start: 90, End: 1020}
	for _, c := range []struct{ o, s, want DeviceWindow }{
		{o, s, DeviceWindow{Start: 90, End: 1020}},
		{o, DeviceWindow{}, o},
		{DeviceWindow{}, s, s},
		{DeviceWindow{}, DeviceWindow{}, DeviceWindow{}},
	} {
		if got := Effective(c.o, c.s); got != c.want {
			t.Errorf("Effective(%v, %v) = %v, want %v", c.o, c.s, got, c.want)
		}
	}
}

// TestPlaceIntoAllocatesNothing places every run of each regime twice and
// counts the allocations of the second pass: once the Placer's scratch
// has grown and its memos have been filled, placing a run allocates
// nothing (the placement's own storage is reused as well).
func TestPlaceIntoAllocatesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("places every run of every regime twice")
	}
	for _, rg := range regimes {
		d := simulate(rg, accuracySeed)
		p := NewPlacer()
		for _, a := range d.anchors {
			if err := p.AddAnchor(Domain{Pid: 1}, a); err != nil {
				t.Fatal(err)
			}
		}
		var out Placement
		placeAll := func() {
			for _, rr := range d.runs {
				for _, run := range []Run{rr.run, rr.bufRun} {
					if err := p.PlaceInto(&out, run); err != nil {
						t.Fatalf("%s: %v", rg.name, err)
					}
				}
			}
		}
		placeAll() // the warm-up: the scratch grows, the memos fill
		// Four runs: AllocsPerRun divides the allocations by the runs in
		// integers, so one the runtime makes meanwhile on a loaded machine
		// is not counted, and one a run makes is.
		if n := testing.AllocsPerRun(4, placeAll); n != 0 {
			t.Errorf("%s: placing %d runs (log and buffer forms) allocated %v times, want 0", rg.name, len(d.runs), n)
		}
	}
}

// Setting anchors aside: a run past the last anchor after one was set
// aside is placed (no index past the anchors); two bad anchors around a
// run are both set aside, each counted for the run that set it aside; an
// anchor added after keeps an index of its own.
func TestSetAsideEdges(t *testing.T) {
	t.Parallel()
	add := func(p *Placer, host HostNanos, off HostNanos) {
		t.Helper()
		if err := p.AddAnchor(dom, Anchor{HostNs: host + off, WindowNs: 10, DevCyc: Cycles(host), DevFreq: 1e9}); err != nil {
			t.Fatal(err)
		}
	}
	p := NewPlacer()
	for _, h := range []HostNanos{1e9, 1.5e9, 1.7e9, 2e9} {
		off := HostNanos(0)
		if h == 1.5e9 {
			off = 1e6
		}
		add(p, h, off)
	}
	for _, c := range []Cycles{1.5e9, 5e9} {
		if _, err := p.Place(logRun(c, 1000, 1000, nil)); err != nil {
			t.Fatalf("run at %d: %v", c, err)
		}
	}
	if a := p.SetAside(); len(a) != 1 || a[0].Index != 1 || a[0].Runs != 1 {
		t.Errorf("set aside %+v, want anchor #1 for its run", a)
	}
	add(p, 3e9, 0)
	if ds := p.domains[dom]; ds.anchors[len(ds.anchors)-1].index != 4 {
		t.Errorf("the anchor added after has index %d, want 4", ds.anchors[len(ds.anchors)-1].index)
	}

	// Anchors every 100 ms, the ones at 1.4 s and 1.6 s 1 ms off.
	p = NewPlacer()
	for i := range 31 {
		h := HostNanos(i) * 100 * ms
		off := HostNanos(0)
		if i == 14 || i == 16 {
			off = 1e6
		}
		add(p, h+1e9, off)
	}
	pl, err := p.Place(logRun(2.5e9, 1000, 1000, nil))
	if err != nil || pl.Method != Aligned {
		t.Fatalf("run between two bad anchors: %v", err)
	}
	if a := p.SetAside(); len(a) != 2 {
		t.Errorf("set aside %+v, want the two bad anchors", a)
	} else {
		for _, x := range a {
			if x.Index != 14 && x.Index != 16 || x.Runs != 1 {
				t.Errorf("set aside %+v, want anchors #14 and #16, each for its run", a)
			}
		}
	}
}

// A run whose spans reach past its rate horizon is bounded at any rate
// within the maximum there: with the rate steady to 2.5 s, then drifting
// up by 5 ppm a second (10 ppm in 2 s, as the model allows), a span
// starting 10 s after its run's origin still holds its bound.
func TestPlaceRunPastItsHorizon(t *testing.T) {
	t.Parallel()
	const f = 1_000_000_000
	// Counter ns at host time h (ns): h, plus ∫ 5e-6·(t−2.5 s)/s dt past 2.5 s.
	counter := func(h float64) Cycles {
		c := h
		if d := h - 2.5e9; d > 0 {
			c += 5e-6 * d * d / 2 / 1e9
		}
		return Cycles(c)
	}
	p := NewPlacer()
	for h := 0.0; h <= 2.5e9; h += 100e6 {
		if err := p.AddAnchor(dom, Anchor{HostNs: HostNanos(h), WindowNs: 100, DevCyc: counter(h), DevFreq: f}); err != nil {
			t.Fatal(err)
		}
	}
	origin := 1.5e9
	far := 11.5e9 // a span 10 s after the origin, on the host
	ts := DeviceNanos(counter(far) - counter(origin))
	run := Run{Domain: dom, Origin: counter(origin), HasOrigin: true,
		Spans: []DeviceSpan{{Name: "chip.run.runner_run.device_wall", Depth: 2, Dur: ts + 1000}, {Name: "chip.run.runner_run.device_wall.sched", Depth: 3, TS: ts, Dur: 1000}}}
	pl, err := p.Place(run)
	if err != nil {
		t.Fatal(err)
	}
	if e := abs(pl.Spans[1].HostStart - HostNanos(far)); e > pl.Spans[1].Bound {
		t.Errorf("span 10 s on: error %d ns, bound %d ns", e, pl.Spans[1].Bound)
	}
}
