package reduce

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

// wallOf is what a wall-clock anchor written at remote instant x says of
// host h, off by err ns.
func wallOf(h simHost, x int64, err float64) *WallPrior {
	return &WallPrior{At: HostNanos(x), Offset: HostNanos(math.Round(h.local(x) - float64(x) + err))}
}

// Runs that served the tasks prove it, once there are MinHostTasks of
// them: whatever the drift within the model, the latencies and the
// spacing, with a wall-clock anchor within NTP grade or none.
func TestHostFitProvesServedTasks(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(41, 3))
	for trial := range 80 {
		h := simHost{off: rng.Float64()*1e15 - 5e14, drift: (rng.Float64()*200 - 100) * 1e-6}
		n := MinHostTasks + rng.IntN(40)
		br, _ := simTasks(rng, h, n, 0.3e9+rng.Float64()*20e9, 20e3+rng.Float64()*100e3, 20e3+rng.Float64()*100e3)
		fit, err := FitHost(br)
		if err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		wall := wallOf(h, int64(br[0].Start)-1e6, (rng.Float64()*2-1)*2e6)
		for _, c := range []HostClaim{{}, {Wall: wall}} {
			if err := fit.Proves(br, c); err != nil {
				t.Errorf("trial %d (n=%d, drift %.1f ppm, wall %v): %v", trial, n, h.drift*1e6, c.Wall != nil, err)
			}
		}
	}
}

// Fewer than MinHostTasks tasks, or tasks that leave the rate to the
// model's limit, prove nothing, even when the runs did serve them; a
// wall-clock anchor far from the tasks' clock disproves the match. A
// worker the user named needs neither the count nor the wall clock, but
// still a rate the tasks determine.
func TestHostFitProvesRule(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(8, 8))
	h := simHost{off: 4e13, drift: 37e-6}
	br, _ := simTasks(rng, h, 6, 3e9, 30e3, 25e3)
	prove := func(br []HostBracket, c HostClaim) error {
		t.Helper()
		fit, err := FitHost(br)
		if err != nil {
			t.Fatal(err)
		}
		return fit.Proves(br, c)
	}
	if err := prove(br[:MinHostTasks-1], HostClaim{}); !errors.Is(err, ErrHostFewTasks) {
		t.Errorf("%d tasks: %v, want ErrHostFewTasks", MinHostTasks-1, err)
	}
	if err := prove(br[:MinHostTasks-1], HostClaim{Named: true}); err != nil {
		t.Errorf("%d tasks, named: %v", MinHostTasks-1, err)
	}
	// One task: any rate fits it, so the model's limit alone bounds the
	// rate, the data do not pin it there: named, it is placed.
	if err := prove(br[:1], HostClaim{Named: true}); err != nil {
		t.Errorf("one task, named: %v", err)
	}
	// A task without its completion bounds one side only: it does not count.
	one := append([]HostBracket(nil), br[:MinHostTasks]...)
	one[1].Received = math.MaxInt64
	if err := prove(one, HostClaim{}); !errors.Is(err, ErrHostFewTasks) {
		t.Errorf("one task one-sided: %v, want ErrHostFewTasks", err)
	}
	off := wallOf(h, int64(br[0].Start)-1e6, 103e6)
	if err := prove(br, HostClaim{Wall: off}); !errors.Is(err, ErrHostWallDisagrees) {
		t.Errorf("wall clock 103 ms off: %v, want ErrHostWallDisagrees", err)
	}
	if err := prove(br, HostClaim{Wall: off, Named: true}); err != nil {
		t.Errorf("wall clock 103 ms off, named: %v", err)
	}
	// A clock 520 ppm fast, beyond the model: over 1.5 s the tasks still fit
	// a clock 500 ppm fast, but the rates that carry every run inside its
	// task centre beyond the limit: the limit pins the fit.
	fast := simHost{off: 4e13, drift: 520e-6}
	bf, _ := simTasks(rng, fast, 8, 0.2e9, 30e3, 25e3)
	if err := prove(bf, HostClaim{Named: true}); !errors.Is(err, ErrHostRateAtLimit) {
		t.Errorf("520 ppm: %v, want ErrHostRateAtLimit", err)
	}
	// 499 ppm, inside the model however near its limit: placed.
	near := simHost{off: 4e13, drift: 499e-6}
	bn, _ := simTasks(rng, near, 8, 30e9, 30e3, 25e3)
	if err := prove(bn, HostClaim{}); err != nil {
		t.Errorf("499 ppm: %v", err)
	}
}

// Property: the runs of one host's session paired with another's tasks
// (the same shape, other spacing and clocks) never prove a match, however
// many tasks they count.
func TestHostFitForeignNeverProves(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 55))
	fitted := 0
	for trial := range 300 {
		n := 2 + rng.IntN(30)
		spacing := []float64{0.05e9, 1e9, 20e9}[rng.IntN(3)]
		mine := simHost{off: rng.Float64() * 1e14, drift: (rng.Float64()*200 - 100) * 1e-6}
		other := simHost{off: rng.Float64() * 1e14, drift: (rng.Float64()*200 - 100) * 1e-6}
		tasks, _ := simTasks(rng, mine, n, spacing, 30e3, 25e3)
		runs, _ := simTasks(rng, other, n, spacing, 30e3, 25e3)
		br := Pair(Worker{Tasks: tasks}, Session{Runs: runs})
		fit, err := FitHost(br)
		if err != nil {
			continue
		}
		fitted++
		if err := fit.Proves(br, HostClaim{}); err == nil {
			rate, _, _ := fit.Rate()
			t.Errorf("trial %d: %d foreign runs prove a match (rate %d ppb)", trial, n, rate)
		}
	}
	t.Logf("%d of 300 foreign pairings fit a clock; none proves a match", fitted)
}

// A steady loop gives no evidence however many tasks; tasks idle for
// seconds between them give 10–20 bits each after the first two.
func TestHostEvidence(t *testing.T) {
	t.Parallel()
	h := simHost{off: 6e13, drift: 12e-6}
	var steady []HostBracket
	for k := range 40 {
		sent := 5e9 + float64(k)*1e9
		steady = append(steady, HostBracket{Sent: HostNanos(sent), Received: HostNanos(sent + 2e6),
			Start: HostNanos(h.remote(sent + 50e3)), End: HostNanos(h.remote(sent + 1.9e6))})
	}
	if b := HostEvidence(steady); b != 0 {
		t.Errorf("a steady loop of 40 tasks: %d bits, want 0", b)
	}
	fit, err := FitHost(steady)
	if err != nil {
		t.Fatal(err)
	}
	if err := fit.Proves(steady, HostClaim{}); !errors.Is(err, ErrHostRegular) {
		t.Errorf("a steady loop: %v, want ErrHostRegular", err)
	}
	if err := fit.Proves(steady, HostClaim{Named: true}); err != nil {
		t.Errorf("a steady loop, named: %v", err)
	}
	rng := rand.New(rand.NewPCG(2, 2))
	idle, _ := simTasks(rng, h, 4, 5e9, 30e3, 25e3)
	if b := HostEvidence(idle); b < MinHostEvidence || b > 2*30 {
		t.Errorf("4 tasks idle up to 5 s apart: %d bits, want %d to 60", b, MinHostEvidence)
	}
	// A task without a side is left out: three remain, one test.
	one := append([]HostBracket(nil), idle...)
	one[1].Received = math.MaxInt64
	if b := HostEvidence(one); b < 1 || b > 30 {
		t.Errorf("3 tasks bounded on both sides: %d bits, want 1 to 30 (one test)", b)
	}
}
