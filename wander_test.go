package phasetrace_test

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/phasetrace/phasetrace"
	"github.com/phasetrace/phasetrace/strace"
	"github.com/phasetrace/phasetrace/strace/stracetest"
)

// placementMeasure is how a conversion placed the device spans of a
// generated log, each measured against the generator's truth: the error
// of every sub-phase span's start (device_wall's own, the runtime's
// bracket, aside), how many were aligned, how many bounds failed, and the
// errors of a hindsight reference, the least-squares line through the 16
// anchors nearest each span.
type placementMeasure struct {
	spans, aligned, violations int
	errs, lsq16                []int64
	ranks                      map[int32][2]int // pid → aligned, spans
}

func (m placementMeasure) String() string {
	return fmt.Sprintf("%d sub-phase spans, %d aligned (%.2f%%), %d bounds failed; max/median error %d/%d ns; 16-nearest least squares %d/%d ns",
		m.spans, m.aligned, 100*float64(m.aligned)/float64(max(m.spans, 1)), m.violations,
		maxOf(m.errs), median(m.errs), maxOf(m.lsq16), median(m.lsq16))
}

func maxOf(v []int64) int64 {
	if len(v) == 0 {
		return 0
	}
	return slices.Max(v)
}

// measurePlacement converts the log cfg describes and measures its
// device spans (see placementMeasure).
func measurePlacement(t *testing.T, cfg genConfig, opts ...phasetrace.Option) placementMeasure {
	t.Helper()
	log, truth := generatedWithTruth(cfg)
	tr, _, _ := convert(t, []phasetrace.Input{phasetrace.Bytes("gen.log", log)}, opts...)
	// Each process's anchors (one device each), by counter value.
	anchors := map[int32][]strace.DeviceAnchor{}
	for _, rec := range readGenerated(t, log).recs {
		if rec.Kind == strace.KindDeviceAnchor {
			anchors[rec.DeviceAnchor.Pid] = append(anchors[rec.DeviceAnchor.Pid], rec.DeviceAnchor)
		}
	}
	for _, as := range anchors {
		slices.SortFunc(as, func(a, b strace.DeviceAnchor) int { return cmp.Compare(a.DevCyc, b.DevCyc) })
	}
	m := placementMeasure{ranks: map[int32][2]int{}}
	for _, s := range tr.Slices {
		if !strings.HasPrefix(s.Name, devicePrefix+".") {
			continue
		}
		bound, _ := argOf(s, "bound_ns")
		method, _ := argOf(s, "placement")
		cyc, _ := argOf(s, "start_cyc")
		pid, inv, want, ok := deviceTruth(tr, s, truth)
		if !ok {
			continue // a phase the generator keeps no truth for
		}
		m.spans++
		r := m.ranks[pid]
		r[1]++
		if method == "aligned" {
			m.aligned++
			r[0]++
		}
		m.ranks[pid] = r
		e := abs(s.TS - want)
		m.errs = append(m.errs, e)
		if b, ok := bound.(int64); !ok || e > b {
			m.violations++
			if m.violations <= 5 {
				t.Errorf("%s pid %d inv %v drawn at %d, truly at %d: error %d ns, bound %v (%v)", s.Name, pid, inv, s.TS, want, e, bound, method)
			}
		}
		if c, ok := cyc.(uint64); ok {
			if y, ok := leastSquares16(anchors[pid], c); ok {
				m.lsq16 = append(m.lsq16, abs(int64(math.Round(y))-want))
			}
		}
	}
	return m
}

// leastSquares16 evaluates at counter value c the least-squares line
// (host = α + β·cycles, floating point) through the window midpoints of
// the 16 anchors nearest c.
func leastSquares16(as []strace.DeviceAnchor, c uint64) (float64, bool) {
	if len(as) < 2 {
		return 0, false
	}
	i := sort.Search(len(as), func(k int) bool { return as[k].DevCyc >= c })
	lo, hi := i, i
	for hi-lo < min(16, len(as)) {
		switch {
		case lo == 0:
			hi++
		case hi == len(as):
			lo--
		case c-as[lo-1].DevCyc < as[hi].DevCyc-c:
			lo--
		default:
			hi++
		}
	}
	sel := as[lo:hi]
	x0, y0 := float64(sel[0].DevCyc), float64(sel[0].HostNS)
	var n, sx, sy, sxx, sxy float64
	for _, a := range sel {
		x := float64(a.DevCyc) - x0
		y := float64(a.HostNS) + float64(a.WindowNS)/2 - y0
		n, sx, sy, sxx, sxy = n+1, sx+x, sy+y, sxx+x*x, sxy+x*y
	}
	beta := (n*sxy - sx*sy) / (n*sxx - sx*sx)
	alpha := (sy - beta*sx) / n
	return y0 + alpha + beta*(float64(c)-x0), true
}

// wanderingLog is the shape of log a clock whose rate changes is measured
// on: an L3 parent driving 4 ranks, rank 0 pipelined, about 800 rounds
// (some 40 s), an anchor read before every launch, and every counter's
// rate drawn anew every 2 s of host time within ±5 ppm of its drift.
func wanderingLog() genConfig {
	return genConfig{Seed: 33, Rounds: 800, Ranks: 4, Pipelined: true, AnchorPerLaunch: true,
		Rate: stracetest.RateChange{StepPPM: 5, StepEvery: 2_000_000_000}}
}

// TestPlacementFollowsARateThatChanges converts logs whose counters'
// rates change in steps and wander, and measures every device sub-phase
// span against the truth: at least 99 % aligned, no bound fails, and the
// errors are no worse, at their maximum and their median, than a
// hindsight least-squares line through the 16 anchors nearest each span.
func TestPlacementFollowsARateThatChanges(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		cfg  genConfig
	}{
		{"steps ±5 ppm every 2 s", wanderingLog()},
		{"slow wander ±5 ppm, steps ±2 ppm", func() genConfig {
			c := wanderingLog()
			c.Seed, c.Rounds = 34, 400
			c.Rate = stracetest.RateChange{StepPPM: 2, StepEvery: 3_000_000_000, WanderPPM: 5, WanderPeriod: 20_000_000_000}
			return c
		}()},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			m := measurePlacement(t, c.cfg)
			t.Log(m)
			if m.spans == 0 || float64(m.aligned) < 0.99*float64(m.spans) {
				t.Errorf("%d of %d spans aligned, want at least 99%%", m.aligned, m.spans)
			}
			if m.violations != 0 {
				t.Errorf("%d bounds failed", m.violations)
			}
			if maxOf(m.errs) > maxOf(m.lsq16) || median(m.errs) > median(m.lsq16) {
				t.Errorf("max/median error %d/%d ns, above the 16-nearest least-squares line's %d/%d", maxOf(m.errs), median(m.errs), maxOf(m.lsq16), median(m.lsq16))
			}
		})
	}
}

// TestPlacementSparseAnchorsRateThatChanges: with anchors only every 15 s
// and rates that step every 2 s, every span is still placed by anchors
// and its bound holds, however wide it has to be.
func TestPlacementSparseAnchorsRateThatChanges(t *testing.T) {
	t.Parallel()
	cfg := wanderingLog()
	cfg.Rounds, cfg.AnchorPerLaunch, cfg.AnchorEvry = 500, false, 15_000_000_000
	m := measurePlacement(t, cfg)
	t.Log(m)
	if m.violations != 0 || m.aligned != m.spans {
		t.Errorf("%d bounds failed, %d of %d aligned", m.violations, m.aligned, m.spans)
	}
}

// TestPlacementDriftEveryRankAligned: the generator's drifts (rank 0
// constant, rank 1 wandering, as loggen -drift-ppm F makes them) leave
// every rank aligned, every bound holding, for drifts up to the 100 ppm
// it accepts.
func TestPlacementDriftEveryRankAligned(t *testing.T) {
	t.Parallel()
	for _, f := range []float64{2, 20, 100, -60} {
		t.Run(fmt.Sprint(f), func(t *testing.T) {
			t.Parallel()
			cfg := stracetest.Realistic(0)
			cfg.Rounds, cfg.DriftPPM = 300, f
			m := measurePlacement(t, cfg)
			for pid, r := range m.ranks {
				if r[0] != r[1] {
					t.Errorf("pid %d: %d of %d spans aligned", pid, r[0], r[1])
				}
			}
			if m.violations != 0 {
				t.Errorf("%d bounds failed", m.violations)
			}
			t.Log(m)
		})
	}
}

// TestBadAnchorIsSetAside moves one device clock anchor of a generated log
// 1 ms off its read (a host window that does not bracket it): that anchor
// is set aside, counted once with its position, and every run is still
// placed by the others, within its bound.
func TestBadAnchorIsSetAside(t *testing.T) {
	t.Parallel()
	cfg := wanderingLog()
	cfg.Rounds, cfg.Ranks = 60, 2
	log, truth := generatedWithTruth(cfg)
	// The 40th anchor line of pid 4200: host_ns 1 ms later.
	lines := strings.SplitAfter(string(log), "\n")
	n, line := 0, 0
	for i, l := range lines {
		if strings.Contains(l, "[CLOCK_ANCHOR] v=2") && strings.Contains(l, " pid=4200 ") {
			if n++; n == 40 {
				f := strings.Fields(l[strings.Index(l, "host_ns="):])[0]
				var h int64
				fmt.Sscanf(f, "host_ns=%d", &h)
				lines[i] = strings.Replace(l, f, fmt.Sprintf("host_ns=%d", h+1_000_000), 1)
				line = i + 1
				break
			}
		}
	}
	if line == 0 {
		t.Fatal("no 40th anchor")
	}
	bad := strings.Join(lines, "")
	tr, sum, _ := convert(t, []phasetrace.Input{phasetrace.Bytes("bad.log", []byte(bad))})
	var d *phasetrace.DeviceSummary
	for i := range sum.Devices {
		if sum.Devices[i].Pid == 4200 {
			d = &sum.Devices[i]
		}
	}
	if d == nil || len(d.AnchorsSetAside) != 1 || d.AnchorsSetAside[0].At != fmt.Sprintf("bad.log:%d", line) || d.AnchorsSetAside[0].Runs == 0 {
		t.Fatalf("set aside: %+v", d)
	}
	if d.Contained != 0 || d.Unaligned != 0 || len(d.Conflicts) != 0 {
		t.Errorf("device summary %+v: want every span aligned", d)
	}
	if got := sum.NotDrawn[phasetrace.ReasonDeviceAnchorSetAside]; got != 1 {
		t.Errorf("%d anchors counted set aside, want 1", got)
	}
	var text strings.Builder
	sum.WriteText(&text)
	if c := strings.Count(text.String(), "set aside: it conflicts with"); c != 1 || !strings.Contains(text.String(), fmt.Sprintf("bad.log:%d", line)) {
		t.Errorf("the summary says it %d times:\n%s", c, text.String())
	}
	for _, s := range tr.Slices {
		if !strings.HasPrefix(s.Name, devicePrefix+".") {
			continue
		}
		bound, _ := argOf(s, "bound_ns")
		if pid, inv, want, ok := deviceTruth(tr, s, truth); ok && abs(s.TS-want) > bound.(int64) {
			t.Errorf("%s pid %d inv %v: error %d ns over its bound %v", s.Name, pid, inv, abs(s.TS-want), bound)
		}
	}
}
