package reduce

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestRatioIsAtRate compares the reciprocal conversion with atRate (and
// atRate with mulDiv, the exact definition) at the edges of the 64-bit
// form, where the division is exact, and at random.
func TestRatioIsAtRate(t *testing.T) {
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
				want, wok := atRate(v, e, ceil)
				got, gok := q.at(v, ceil)
				if got != want || gok != wok {
					t.Fatalf("ratio(%d).at(%d, %v) = %d, %v; atRate = %d, %v", e, v, ceil, got, gok, want, wok)
				}
				exact, eok := mulDiv(int64(v), nsPerSecond, den, ceil)
				if wok != eok || (wok && int64(want) != exact) {
					t.Fatalf("atRate(%d, %d, %v) = %d, %v; mulDiv = %d, %v", v, e, ceil, want, wok, exact, eok)
				}
			}
		}
	}
}
