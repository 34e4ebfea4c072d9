package reduce

import (
	"fmt"
	"strings"
	"testing"
)

var regimes = []regime{
	{name: "a2a3 50 MHz, anchors every 100 ms", freq: 50_000_000, drift: 37e-6, anchorEvery: 100 * ms, winMin: 1 * us, winMax: 40 * us, runEvery: 20 * ms, length: 60 * s},
	{name: "a5 1 GHz, anchors every 100 ms, drift wander 0.02 ppm", freq: 1_000_000_000, drift: -23e-6, wander: 0.02e-6, anchorEvery: 100 * ms, winMin: 1 * us, winMax: 40 * us, runEvery: 20 * ms, length: 60 * s},
	{name: "a2a3, anchors every 1 s", freq: 50_000_000, drift: 61e-6, anchorEvery: 1 * s, winMin: 1 * us, winMax: 40 * us, runEvery: 20 * ms, length: 60 * s},
	{name: "a2a3, anchors every 10 s", freq: 50_000_000, drift: -45e-6, anchorEvery: 10 * s, winMin: 1 * us, winMax: 40 * us, runEvery: 20 * ms, length: 60 * s},
	{name: "a5, anchors in the first second only", freq: 1_000_000_000, drift: 52e-6, anchorEvery: 100 * ms, anchorsTill: 1 * s, winMin: 1 * us, winMax: 40 * us, runEvery: 20 * ms, length: 60 * s},
	{name: "a2a3, no anchors", freq: 50_000_000, drift: 30e-6, runEvery: 20 * ms, length: 60 * s},
}

const accuracySeed = 20240601

type methodStats struct {
	name string
	st   stats
}

func measure(t testing.TB, rg regime) []methodStats {
	d := simulate(rg, accuracySeed)
	dom := Domain{Pid: 1, Dev: 0}
	p := NewPlacer()
	for _, a := range d.anchors {
		if err := p.AddAnchor(dom, a); err != nil {
			t.Fatal(err)
		}
	}
	var ours, oursWall, oursBuf, oursBufWall, two, twoWall, cont, contWall, near, nearWall collector
	if err := placeAll(p, d, false, &ours, &oursWall); err != nil {
		t.Fatalf("%s: %v", rg.name, err)
	}
	if err := placeAll(p, d, true, &oursBuf, &oursBufWall); err != nil {
		t.Fatalf("%s: %v", rg.name, err)
	}
	if err := placeAll(NewPlacer(), d, false, &cont, &contWall); err != nil {
		t.Fatalf("%s: containment: %v", rg.name, err)
	}
	for _, rr := range d.runs {
		twoPoint(d.anchors, rr, &two, &twoWall)
		nearestAnchor(d.anchors, rr, &near, &nearWall)
	}
	return []methodStats{
		{"phasetrace", ours.stats()},
		{"two-point min-window", two.stats()},
		{"containment alone", cont.stats()},
		{"nearest anchor, no rate", near.stats()},
		{"phasetrace: device_wall from a log (bracket)", oursWall.stats()},
		{"phasetrace: device_wall from the buffer", oursBufWall.stats()},
	}
}

func fmtNs(v HostNanos) string {
	switch {
	case v >= 10*ms:
		return fmt.Sprintf("%.1f ms", float64(v)/1e6)
	case v >= 10*us:
		return fmt.Sprintf("%.0f µs", float64(v)/1e3)
	case v >= us:
		return fmt.Sprintf("%.2f µs", float64(v)/1e3)
	}
	return fmt.Sprintf("%d ns", v)
}

// TestAccuracyTable measures placement accuracy on simulated runs and logs
// the table (go test ./reduce -run TestAccuracyTable -v).
func TestAccuracyTable(t *testing.T) {
	var b strings.Builder
	b.WriteString("| regime | method | placed | max error | median error | bound holds | median bound |\n")
	b.WriteString("| --- | --- | --- | --- | --- | --- | --- |\n")
	for i, rg := range regimes {
		ms := measure(t, rg)
		for _, m := range ms {
			if m.st.n == 0 {
				fmt.Fprintf(&b, "| %s | %s | 0%% | | | | |\n", rg.name, m.name)
				continue
			}
			fmt.Fprintf(&b, "| %s | %s | %.0f%% | %s | %s | %.2f%% | %s |\n", rg.name, m.name,
				100*float64(m.st.n)/float64(m.st.n+m.st.unavailable),
				fmtNs(m.st.maxErr), fmtNs(m.st.medErr), 100*m.st.holds, fmtNs(m.st.medBound))
		}
		for _, m := range []methodStats{ms[0], ms[4], ms[5]} {
			if m.st.holds != 1 {
				t.Errorf("%s: %s: bound holds for %.4f%% of spans, want 100%%", rg.name, m.name, 100*m.st.holds)
			}
			if m.st.unavailable != 0 {
				t.Errorf("%s: %s: %d spans unplaced", rg.name, m.name, m.st.unavailable)
			}
		}
		ours := ms[0].st
		if i == 0 {
			for _, m := range []methodStats{ms[0], ms[5]} {
				if m.st.maxErr > 2*us {
					t.Errorf("%s: %s: max error %v, want ≤ 2 µs", rg.name, m.name, m.st.maxErr)
				}
			}
			if ours.medBound >= ms[1].st.medBound || ours.medBound >= ms[2].st.medBound {
				t.Errorf("%s: median bound %v not below two-point %v and containment %v", rg.name, ours.medBound, ms[1].st.medBound, ms[2].st.medBound)
			}
		}
	}
	t.Logf("60 s per regime, a run every 20 ms, seed %d; errors of span starts; for phasetrace rows the Bound returned by Placer.Place must hold at both the start and the end (bound holds); the first four rows of a regime cover the stamped spans (phases and task slots), the last two device_wall\n%s", accuracySeed, b.String())
}
