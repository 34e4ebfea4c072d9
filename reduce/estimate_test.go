package reduce

import "testing"

// Anchors hours apart, and one whose counter value lies centuries away,
// make only the windows that hold anchors; each counter value is
// estimated from them and placement still holds its bound.
func TestEstimateWindowsSparse(t *testing.T) {
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
	if n := len(ds.windows); n == 0 || n > 8 {
		t.Fatalf("%d windows, want a handful", n)
	}
	for _, sec := range []int64{0, 5, 5400, 10800, 20000} {
		c := Cycles(1e9 + sec*f)
		lo, hi, _, ok := p.estimate(ds, c)
		want := HostNanos(1e12 + sec*1e9)
		if !ok || lo > want+2000 || hi < want-2000 {
			t.Errorf("estimate at %d s: [%d, %d] ok=%v, want around %d", sec, lo, hi, ok, want)
		}
	}
}
