package phasetrace

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// The bound quantiles are never below the true ones and less than 3.2%
// above them.
func TestBoundQuantiles(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		var b BoundStats
		var vals []int64
		n := 1 + r.IntN(500)
		for range n {
			v := int64(r.ExpFloat64() * float64(int64(1)<<r.IntN(40)))
			vals = append(vals, v)
			b.add(v)
		}
		b.finish()
		slices.Sort(vals)
		for _, c := range []struct {
			f   int64
			got int64
		}{{50, b.Median}, {90, b.P90}} {
			want := vals[(int64(n)*c.f+99)/100-1]
			if c.got < want || float64(c.got) > float64(want)*1.032+1 {
				t.Fatalf("round %d: p%d = %d, true %d", round, c.f, c.got, want)
			}
		}
		if b.Min != vals[0] || b.Max != vals[n-1] {
			t.Fatalf("min/max %d %d, want %d %d", b.Min, b.Max, vals[0], vals[n-1])
		}
	}
	for i := range boundBuckets - 1 {
		if boundBucket(boundEdge(i)) != i || boundBucket(boundEdge(i)+1) != i+1 {
			t.Fatalf("bucket %d: edge %d", i, boundEdge(i))
		}
	}
}
