package reduce

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

// simHost is a remote host's clock as the simulation knows it: remote time
// at dispatching-host time t is off + t·(1+drift) (floating point is the
// simulation's, never the model's).
type simHost struct {
	off   float64
	drift float64
}

func (h simHost) remote(t float64) int64 { return int64(math.Round(h.off + t*(1+h.drift))) }
func (h simHost) local(x int64) float64  { return (float64(x) - h.off) / (1 + h.drift) }

// simTasks simulates n tasks: each sent at a random spacing, run on the
// remote host for a while, replied to. It returns the brackets and, for a
// few instants inside each run, their remote time and true local time.
func simTasks(rng *rand.Rand, h simHost, n int, spacing, fwdMin, retMin float64) ([]HostBracket, [][2]float64) {
	var out []HostBracket
	var probes [][2]float64
	t := 5e9
	for range n {
		sent := t
		fwd := fwdMin + rng.ExpFloat64()*30e3
		start := sent + fwd
		dur := 200e3 + rng.Float64()*5e6
		end := start + dur
		recv := end + retMin + rng.ExpFloat64()*25e3
		xs, xe := h.remote(start), h.remote(end)
		out = append(out, HostBracket{Sent: HostNanos(math.Ceil(sent)), Received: HostNanos(math.Floor(recv)), Start: HostNanos(xs), End: HostNanos(xe)})
		for range 3 {
			x := xs + rng.Int64N(xe-xs+1)
			probes = append(probes, [2]float64{float64(x), h.local(x)})
		}
		t = recv + rng.Float64()*spacing
	}
	return out, probes
}

// The published bound holds at every instant of every run, whatever the
// drift, latencies and spacing.
func TestHostFitBoundHolds(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 11))
	for trial := range 60 {
		h := simHost{off: rng.Float64()*1e15 - 5e14, drift: (rng.Float64()*200 - 100) * 1e-6}
		n := 1 + rng.IntN(40)
		br, probes := simTasks(rng, h, n, rng.Float64()*20e9, 20e3+rng.Float64()*100e3, 20e3+rng.Float64()*100e3)
		fit, err := FitHost(br)
		if err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		for _, p := range probes {
			y, bound, err := fit.Map(HostNanos(p[0]))
			if err != nil {
				t.Fatalf("trial %d: %v", trial, err)
			}
			if e := math.Abs(float64(y) - p[1]); e > float64(bound)+1 {
				t.Errorf("trial %d (n=%d drift %.1f ppm): remote %d drawn at %d, truly %.0f: error %.0f ns > bound %d", trial, n, h.drift*1e6, int64(p[0]), y, p[1], e, bound)
			}
		}
	}
}

// With a steady clock's model (the rate moving by 0.02 ppm over all the
// tasks) and the rate fitted, the bound comes near half the information
// limit and the error is that of the uneven latencies.
func TestHostFitTight(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 5))
	h := simHost{off: 7.3e12, drift: 30e-6}
	br, probes := simTasks(rng, h, 50, 0.9e9, 35e3, 22e3)
	fit, err := FitHost(br, WithHostRateStability(20), WithHostRateHorizon(0))
	if err != nil {
		t.Fatal(err)
	}
	var maxErr float64
	var maxBound HostNanos
	for _, p := range probes {
		y, bound, _ := fit.Map(HostNanos(p[0]))
		maxErr = max(maxErr, math.Abs(float64(y)-p[1]))
		maxBound = max(maxBound, bound)
	}
	rate, lo, hi := fit.Rate()
	t.Logf("rate %d ppb in [%d, %d], limit %d ns, max error %.0f ns, max bound %d ns", rate, lo, hi, fit.Limit(), maxErr, maxBound)
	if maxErr > 15_000 {
		t.Errorf("max error %.0f ns", maxErr)
	}
	if float64(maxBound) > 0.7*float64(fit.Limit()) {
		t.Errorf("max bound %d ns, not near half the information limit %d ns", maxBound, fit.Limit())
	}
	if lo > -30_000 || hi < -30_000 {
		t.Errorf("rate interval [%d, %d] misses the true -30000 ppb (the remote clock runs fast)", lo, hi)
	}
}

// Tasks that bound the remote clock from one side only (no completions
// in the dispatching log) place nothing.
func TestHostFitOneSided(t *testing.T) {
	t.Parallel()
	br := []HostBracket{{Sent: 1000, Received: math.MaxInt64, Start: 5000, End: 6000}}
	if f, err := FitHost(br); !errors.Is(err, ErrOneSided) {
		t.Errorf("FitHost = %v, %v; want ErrOneSided", f, err)
	}
}

func TestHostFitInconsistent(t *testing.T) {
	t.Parallel()
	// The second task ran for longer on the remote host than it was away.
	br := []HostBracket{
		{Sent: 1_000, Received: 2_000, Start: 10_100, End: 10_800},
		{Sent: 5_000, Received: 5_500, Start: 14_100, End: 14_900},
	}
	if _, err := FitHost(br); !errors.Is(err, ErrInconsistent) {
		t.Errorf("err = %v, want ErrInconsistent", err)
	}
}

// Two remote logs with the same number of tasks are told apart by the
// spacing of their runs.
func TestMatchSessions(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(9, 9))
	h1, h2 := simHost{off: 3e12, drift: -46e-6}, simHost{off: 9e13, drift: 20e-6}
	b1, _ := simTasks(rng, h1, 6, 30e9, 30e3, 25e3)
	b2, _ := simTasks(rng, h2, 6, 30e9, 30e3, 25e3)
	ws := []Worker{{ID: 0, Tasks: b1}, {ID: 1, Tasks: b2}}
	ss := []Session{{Name: "b", Runs: b2}, {Name: "a", Runs: b1}}
	got, err := MatchSessions(ws, ss, nil)
	if err != nil || got[0] != 1 || got[1] != 0 {
		t.Errorf("MatchSessions = %v, %v; want [1 0]", got, err)
	}
	// Two workers sent one task each, alike: the logs cannot tell them apart.
	ws1 := []Worker{{ID: 0, Tasks: b1[:1]}, {ID: 1, Tasks: b1[:1]}}
	ss1 := []Session{{Runs: b1[:1]}, {Runs: b1[:1]}}
	if _, err := MatchSessions(ws1, ss1, nil); !errors.Is(err, ErrAmbiguous) {
		t.Errorf("one task each: err = %v, want ErrAmbiguous", err)
	}
	if got, err := MatchSessions(ws1, ss1, map[int]int{0: 1}); err != nil || got[0] != 1 || got[1] != 0 {
		t.Errorf("one named: %v, %v", got, err)
	}
	// One worker, two sessions that both fit it: either could have served
	// it.
	if got, err := MatchSessions(ws1[:1], ss1, nil); !errors.Is(err, ErrAmbiguous) {
		t.Errorf("two sessions for one worker: %v, %v; want ErrAmbiguous", got, err)
	}
	// Two alike tasks seconds apart: causality admits either; the wall
	// clocks, within milliseconds, tell them apart.
	task := func(at HostNanos) HostBracket { return HostBracket{Sent: at, Received: at + 5_000_000} }
	run := HostBracket{Start: 77_000_000_000, End: 77_004_000_000}
	ws2 := []Worker{{ID: 0, Tasks: []HostBracket{task(1e9)}}, {ID: 1, Tasks: []HostBracket{task(5e9)}}}
	ss2 := []Session{{Runs: []HostBracket{run}}}
	if _, err := MatchSessions(ws2, ss2, nil); !errors.Is(err, ErrAmbiguous) {
		t.Errorf("no wall prior: err = %v, want ErrAmbiguous", err)
	}
	ss2[0].Wall = &WallPrior{At: 76_000_000_000, Offset: 5e9 - 77_000_000_000 + 1_500_000}
	if got, err := MatchSessions(ws2, ss2, nil); err != nil || got[0] != 1 {
		t.Errorf("with the wall prior: %v, %v; want [1]", got, err)
	}
}

// The drawn map never runs backwards, and within a run it scales
// durations by the line's rate alone.
func TestHostFitMonotone(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(21, 4))
	for trial := range 30 {
		h := simHost{off: rng.Float64() * 1e14, drift: (rng.Float64()*200 - 100) * 1e-6}
		br, _ := simTasks(rng, h, 2+rng.IntN(30), rng.Float64()*5e9, 20e3+rng.Float64()*100e3, 20e3+rng.Float64()*100e3)
		fit, err := FitHost(br)
		if err != nil {
			t.Fatal(err)
		}
		lo, hi := int64(br[0].Start)-1e9, int64(br[len(br)-1].End)+1e9
		for range 2000 {
			x := lo + rng.Int64N(hi-lo)
			y0, _, err0 := fit.Map(HostNanos(x))
			y1, _, err1 := fit.Map(HostNanos(x + 1))
			if err0 != nil || err1 != nil || y1 < y0 {
				t.Fatalf("trial %d: Map(%d) = %d, Map(%d) = %d", trial, x, y0, x+1, y1)
			}
		}
		for _, b := range br {
			ys, _, _ := fit.Map(b.Start)
			ye, _, _ := fit.Map(b.End)
			ls, _ := fit.line.at(int64(b.Start))
			le, _ := fit.line.at(int64(b.End))
			if d := (ye - ys) - HostNanos(le-ls); d < -1 || d > 1 {
				t.Fatalf("trial %d: a run drawn %d ns long, the line makes it %d", trial, ye-ys, le-ls)
			}
		}
	}
}
