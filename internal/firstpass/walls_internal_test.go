package firstpass

import (
	"math"
	"testing"
)

func TestAgreeing(t *testing.T) {
	const s = 1_000_000_000 // the tolerance
	for _, tc := range []struct {
		name string
		offs []int64
		want int
	}{
		{"none", nil, -1},
		{"one", []int64{5}, 0},
		{"two apart: the first", []int64{10 * s, 0}, 0},
		{"an absurd first against two that agree", []int64{math.MinInt64, 7 * s, 7*s + 5}, 1},
		{"the largest set, not the first", []int64{0, 1, 9 * s, 9*s + 1, 9*s + 2}, 2},
		{"a tie: the earliest centre", []int64{9 * s, 9*s + 1, 0, 1}, 0},
		{"a chain: the centre holds both ends", []int64{0, s, 2 * s}, 1},
		{"the int64 limits", []int64{math.MaxInt64, math.MinInt64, math.MaxInt64 - 1}, 0},
	} {
		if got := Agreeing(tc.offs, s); got != tc.want {
			t.Errorf("%s: agreeing(%v) = %d, want %d", tc.name, tc.offs, got, tc.want)
		}
	}
}

func TestSaturating(t *testing.T) {
	for _, tc := range []struct{ a, b, sub, add int64 }{
		{1, 2, -1, 3},
		{math.MinInt64, 1, math.MinInt64, math.MinInt64 + 1},
		{math.MaxInt64, -1, math.MaxInt64, math.MaxInt64 - 1},
		{0, math.MinInt64, math.MaxInt64, math.MinInt64},
		{-1, math.MinInt64, math.MaxInt64, math.MinInt64},
		{math.MaxInt64, math.MaxInt64, 0, math.MaxInt64},
	} {
		if got := SatSub(tc.a, tc.b); got != tc.sub {
			t.Errorf("satSub(%d, %d) = %d, want %d", tc.a, tc.b, got, tc.sub)
		}
		if got := SatAdd(tc.a, tc.b); got != tc.add {
			t.Errorf("satAdd(%d, %d) = %d, want %d", tc.a, tc.b, got, tc.add)
		}
	}
}
