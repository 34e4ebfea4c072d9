package reduce

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestRatioIsAtRate compares the reciprocal conversion with mulDiv, the
// exact definition atRate is, at the edges of the 64-bit form, where the
// division is exact, and at random.
func TestRatioIsAtRate(t *testing.T) {
	t.Parallel()
	rates := []PPB{0, 1, -1, 37_001, -23_000, 100_000, -100_000, 1<<18 - 1, -(1<<18 - 1), 1 << 18, -1 << 18, 500_000_000, -500_000_000, -999_999_999, -nsPerSecond, math.MinInt64 / 4}
	vs := []DeviceNanos{0, 1, -1, 2, -2, 999_999_999, 1_000_000_000, -1_000_000_000, 1<<44 - 1, -(1<<44 - 1), 1 << 44, -1 << 44, math.MaxInt64, math.MinInt64 + 1, math.MinInt64}
	r := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		rates = append(rates, PPB(r.Int64N(2<<18)-1<<18))
	}
	for range 2000 {
		vs = append(vs, DeviceNanos(r.Int64N(2<<44)-1<<44), DeviceNanos(r.Int64N(2<<30)-1<<30))
	}
	for _, e := range rates {
		q := newRatio(e)
		den := nsPerSecond + int64(e)
		// Values whose product with ε is a multiple of 1e9+ε, and their
		// neighbours.
		ex := vs
		if den > 0 && den < 1<<40 {
			for _, k := range []int64{1, 3, -7, 1 << 12} {
				ex = append(ex, DeviceNanos(den*k), DeviceNanos(den*k-1), DeviceNanos(den*k+1))
			}
		}
		for _, v := range ex {
			for _, ceil := range []bool{false, true} {
				got, gok := q.at(v, ceil)
				exact, eok := mulDiv(int64(v), nsPerSecond, den, ceil)
				if gok != eok || (gok && int64(got) != exact) {
					t.Fatalf("ratio(%d).at(%d, %v) = %d, %v; v·1e9/(1e9+ε) = %d, %v", e, v, ceil, got, gok, exact, eok)
				}
			}
		}
	}
}

// TestQuickWindowIsPlace compares quickWindow, which draws and bounds a span
// through fastAt without place's checks, with place, over random rate
// ranges (single rates too), origins up to 2^40 ns and span ends within
// ±2^44 ns, where quickWindow is used.
func TestQuickWindowIsPlace(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 4))
	n := 0
	for range 5000 {
		lo := PPB(r.IntN(400_000) - 200_000)
		hi := lo + PPB(r.IntN(200_000))
		if r.IntN(4) == 0 {
			hi = lo
		}
		rr := rateRange{lo: lo, hi: hi}
		olo := HostNanos(r.Int64N(1 << 40))
		ohi := olo + HostNanos(r.Int64N(1<<20))
		m := Mapping{Method: Aligned, Origin: midpoint(olo, ohi), Rate: rr.mid()}
		m.origin, m.rate, m.slack = interval{lo: olo, hi: ohi}, rr, HostNanos(r.IntN(100))
		m.q, m.at, m.atSet = ratiosOf(rr), newRatio(m.Rate), true
		m.quick = m.q.fast() && m.at.fast
		if !m.quick {
			continue
		}
		for range 20 {
			s := DeviceNanos(r.Int64N(1<<45) - 1<<44)
			if r.IntN(3) == 0 {
				s = DeviceNanos(r.IntN(2000) - 1000)
			}
			e := s + DeviceNanos(r.Int64N(1<<30))
			if absU(int64(s)) >= 1<<44-1 || absU(int64(e)) >= 1<<44-1 {
				continue
			}
			n++
			got := m.quickWindow(s, e)
			want, err := m.place(s, e, s, s+1, e, e+1)
			if err != nil || got != want {
				t.Fatalf("%+v [%d, %d]: quickWindow %+v, place %+v, %v", m, s, e, got, want, err)
			}
		}
	}
	if n < 50000 {
		t.Errorf("only %d spans compared", n)
	}
}
