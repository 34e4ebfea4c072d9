package reduce

import (
	"errors"
	"testing"
)

// Anchors hours apart, and one whose counter value lies centuries away,
// make only the windows that hold anchors; each counter value is
// estimated from them: the estimate's range holds the truth.
func TestEstimateWindowsSparse(t *testing.T) {
	t.Parallel()
	p := NewPlacer()
	dom := Domain{Pid: 1}
	const f = 50_000_000
	add := func(hostNs int64, cyc Cycles) {
		t.Helper()
		if err := p.AddAnchor(dom, Anchor{HostNs: HostNanos(hostNs), WindowNs: 2000, DevCyc: cyc, DevFreq: f}); err != nil {
			t.Fatal(err)
		}
	}
	// Two anchors a second apart, then two more three hours later, then a
	// counter value 2^62 cycles on.
	for _, sec := range []int64{0, 1, 10800, 10801} {
		add(1e12+sec*1e9, Cycles(1e9+sec*f))
	}
	add(2e12, 1<<62)
	ds := p.domains[dom]
	ds.prepare()
	p.prepareEstimate(ds)
	p.fitLevel(ds, 0)
	if n := len(ds.levels[0].windows); n == 0 || n > 8 {
		t.Fatalf("%d windows, want a handful", n)
	}
	for _, sec := range []int64{0, 5, 5400, 10800, 20000} {
		c := Cycles(1e9 + sec*f)
		xd, ok := nominal(ds.base, c, ds.freq)
		if !ok {
			t.Fatalf("counter %d: no nominal ns", c)
		}
		lo, hi, _, ok := p.estimateAt(ds, xd)
		want := HostNanos(1e12 + sec*1e9)
		if !ok || lo > want+2000 || hi < want-2000 {
			t.Errorf("estimate at %d s: [%d, %d] ok=%v, want around %d", sec, lo, hi, ok, want)
		}
	}
}

// An anchor whose counter value lies 5e18 ns (or just under 2^63 ns)
// from the others ends the windows instead of looping on them.
func TestEstimateWindowsFarAnchor(t *testing.T) {
	t.Parallel()
	for _, far := range []Cycles{5_000_000_000_000_000_000, 9_223_372_036_854_775_000} {
		p := NewPlacer()
		dom := Domain{Pid: 1}
		for _, a := range []Anchor{
			{HostNs: 1_000_000, WindowNs: 20, DevCyc: 1000, DevFreq: 1_000_000_000},
			{HostNs: 2_000_000, WindowNs: 20, DevCyc: far, DevFreq: 1_000_000_000},
		} {
			if err := p.AddAnchor(dom, a); err != nil {
				t.Fatal(err)
			}
		}
		run := Run{Domain: dom, Origin: 5000, HasOrigin: true,
			Spans: []DeviceSpan{{Name: "chip.run.runner_run.device_wall", Depth: 2, Dur: 900}}}
		if _, err := p.Place(run); err != nil {
			var ie *InconsistencyError
			if !errors.As(err, &ie) {
				t.Fatalf("far anchor %d: %v", far, err)
			}
		}
		if n := len(p.domains[dom].levels[0].windows); n > 2 {
			t.Errorf("far anchor %d: %d windows", far, n)
		}
	}
}
