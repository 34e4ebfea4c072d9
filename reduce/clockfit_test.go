package reduce

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

// truthLine is a clock whose rate error wanders: y(x) = y0 + x + drift(x).
type truthLine struct {
	y0     float64
	rate   float64 // relative, e.g. 30e-6
	wander float64 // amplitude of the rate's sinusoidal wander
	period float64 // ns
}

func (t truthLine) at(x int64) float64 {
	fx := float64(x)
	y := t.y0 + fx + t.rate*fx
	if t.period > 0 {
		y += t.wander * t.period / (2 * math.Pi) * (1 - math.Cos(2*math.Pi*fx/t.period))
	}
	return y
}

// Property: for random rates (within the maximum), rate wander within the
// stability, random bracket spacing, windows and sides, the interval span
// returns holds the truth everywhere, the rate range holds the rate, and
// the central line lies inside the interval where the brackets are dense.
func TestClockFitSpanHolds(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(5, 6))
	for iter := range 300 {
		maxRate := PPB(100_000)
		stab := PPB(50)
		tl := truthLine{
			y0:     float64(r.Int64N(1 << 40)),
			rate:   (r.Float64()*2 - 1) * 99e-6,
			period: float64(5+r.IntN(100)) * 1e9,
		}
		// The rate moves by at most wander·2 peak to peak: keep it within
		// the stability.
		tl.wander = r.Float64() * float64(stab) * 1e-9 / 2 * 0.9
		f := newClockFit(maxRate, stab, 0)
		n := 1 + r.IntN(60)
		length := int64(1+r.IntN(200)) * 1e9
		var xs []int64
		for i := range n {
			x := r.Int64N(length)
			w := int64(1+r.IntN(40_000)) + int64(r.IntN(3))*int64(r.IntN(500_000))
			y := tl.at(x)
			lo := int64(math.Floor(y)) - r.Int64N(w+1)
			hi := lo + w + 1
			switch r.IntN(4) {
			case 0:
				f.add(x, lo, math.MaxInt64, i)
			case 1:
				f.add(x, math.MinInt64, hi, i)
			default:
				f.add(x, lo, hi, i)
			}
			xs = append(xs, x)
		}
		for range 20 {
			x := r.Int64N(length*3/2) - length/4
			lo, hi, rlo, rhi, err := f.span(x)
			if errors.Is(err, ErrUnaligned) {
				continue
			}
			if err != nil {
				t.Fatalf("iteration %d: span(%d): %v", iter, x, err)
			}
			y := tl.at(x)
			if float64(lo) > y || float64(hi) < y {
				t.Fatalf("iteration %d: span(%d) = [%d, %d], truth %.1f", iter, x, lo, hi, y)
			}
			ppb := tl.rate * 1e9
			if float64(rlo) > ppb+float64(stab) || float64(rhi) < ppb-float64(stab) {
				t.Fatalf("iteration %d: rate range [%d, %d] ppb, truth %.1f", iter, rlo, rhi, ppb)
			}
		}
		if rlo, rhi, err := f.rateRange(); err != nil || float64(rlo) > tl.rate*1e9+float64(stab) || float64(rhi) < tl.rate*1e9-float64(stab) {
			t.Fatalf("iteration %d: rateRange [%d, %d] ppb, %v; truth %.1f", iter, rlo, rhi, err, tl.rate*1e9)
		}
		if l, ok := f.line(); ok {
			for _, x := range xs {
				if _, ok := l.at(x); !ok {
					t.Fatalf("iteration %d: line.at(%d) overflows", iter, x)
				}
			}
		}
	}
}

// With a constant rate and narrow brackets the central line is within
// the brackets' widths of the truth, and the brackets left out of the
// fit (one-sided only) make no line.
func TestClockFitLine(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(7, 8))
	tl := truthLine{y0: 5e12, rate: 31e-6}
	f := newClockFit(100_000, 50, 0)
	for i := range 50 {
		x := int64(i) * 1_000_000_000
		y := tl.at(x)
		w := int64(1000 + r.IntN(20_000))
		lo := int64(math.Floor(y)) - r.Int64N(w+1)
		f.add(x, lo, lo+w+1, i)
	}
	l, ok := f.line()
	if !ok {
		t.Fatal("no line")
	}
	for _, x := range []int64{0, 25e9, 49e9, 60e9} {
		got, _ := l.at(x)
		lim := 1500.0
		if x > 49e9 {
			lim = 3000 // extrapolated
		}
		if e := math.Abs(float64(got) - tl.at(x)); e > lim {
			t.Errorf("line at %d: error %.0f ns", x, e)
		}
	}
	if d := math.Abs(float64(l.ratePPB()) - 31_000); d > 100 {
		t.Errorf("line rate %d ppb, want 31000±100", l.ratePPB())
	}
	g := newClockFit(100_000, 50, 0)
	g.add(0, 10, math.MaxInt64, 0)
	if _, ok := g.line(); ok {
		t.Error("a lower side alone made a line")
	}
}

// Brackets that no line satisfies are an InconsistencyError naming them.
func TestClockFitInconsistent(t *testing.T) {
	t.Parallel()
	f := newClockFit(100_000, 50, 0)
	f.add(0, 0, 10, 0)
	f.add(1_000_000_000, 2_000_000_000, 2_000_000_010, 1) // a rate of 100%
	_, _, _, _, err := f.span(0)
	var ie *InconsistencyError
	if !errors.As(err, &ie) || !errors.Is(err, ErrInconsistent) {
		t.Fatalf("err = %v, want an InconsistencyError", err)
	}
	if ie.Low.Kind != EvidenceBracket || ie.High.Kind != EvidenceBracket {
		t.Errorf("evidence %v / %v, want brackets", ie.Low, ie.High)
	}
}

func TestInt128(t *testing.T) {
	t.Parallel()
	// A quotient of 2^64−1 that rounding would carry past 64 bits does
	// not fit.
	if v, ok := (i128{hi: 2, lo: math.MaxUint64}).div(3, true); ok {
		t.Errorf("(3·2^64−1)/3 rounded up = %d, want no fit", v)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 10000 {
		a, b := r.Int64N(1<<62)-1<<61, r.Int64N(1<<40)-1<<39
		d := r.Int64N(1<<40) + 1
		p := mul128(a, b)
		got, ok := p.div(d, false)
		want, ok2 := mulDiv(a, b, d, false)
		if ok != ok2 || got != want {
			t.Fatalf("%d·%d/%d = %d,%v want %d,%v", a, b, d, got, ok, want, ok2)
		}
		got, _ = p.div(d, true)
		want, _ = mulDiv(a, b, d, true)
		if got != want {
			t.Fatalf("ceil %d·%d/%d = %d want %d", a, b, d, got, want)
		}
		if p.add(mul128(a, 3)).sub(mul128(a, 3)).cmp(p) != 0 {
			t.Fatal("add/sub")
		}
	}
}
