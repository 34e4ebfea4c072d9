package reduce

import (
	"math"
	"math/rand/v2"
	"testing"
)

// plainInterval is anchorInterval without the keys: every anchor tried,
// nearest first, until one says stop.
func plainInterval(ds *domainState, c Cycles, xc DeviceNanos, q *rateRatios, neighbours, L, R int) (interval, int) {
	as := ds.anchors
	s := anchorScan{as: as, xc: xc, tick: ds.tick, q: q, fast: q.fast(), iv: unbounded()}
	pos := lowerBound(as, c)
	for i, n := pos-1, 0; i >= L && n < neighbours; i, n = i-1, n+1 {
		if !s.try(&as[i]) {
			break
		}
	}
	for i, n := pos, 0; i < R && n < neighbours; i, n = i+1, n+1 {
		if !s.try(&as[i]) {
			break
		}
	}
	return s.iv, s.used
}

// TestAnchorScanIsPlainScan compares the scan that passes anchors by their
// keys with trying every anchor: the same interval, the same evidence for
// each end, the same number of anchors used. The anchors follow a drifting
// clock with windows from a few ns to milliseconds (some far off it, some
// at the same counter value, some with host ends past 2^62), the rate
// ranges are narrow, wide, a single rate or past the reciprocals' range,
// and the counter values include the anchors' own and their neighbours.
func TestAnchorScanIsPlainScan(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(7, 11))
	freqs := []Hz{50_000_000, 1_000_000_000, 1_000_000, 19_200_000, 2_500_000_000}
	for trial := range 300 {
		f := freqs[trial%len(freqs)]
		drift := float64(r.IntN(200_001)-100_000) * 1e-9
		n := 1 + r.IntN(300)
		p := NewPlacer(WithNeighbours([]int{1, 3, 8, 20, 64, 1000}[r.IntN(6)]))
		d := Domain{Pid: int32(trial)}
		host := HostNanos(1_000_000_000_000)
		cyc := Cycles(1 << 40)
		for i := range n {
			gap := HostNanos(r.Int64N(200_000_000))
			switch r.IntN(10) {
			case 0:
				gap = 0 // the same counter value as the last
			case 1:
				gap = HostNanos(r.IntN(3))
			}
			host += gap
			cyc += Cycles(float64(gap) * float64(f) * 1e-9 * (1 + drift))
			w := HostNanos(r.Int64N(40_000))
			switch r.IntN(8) {
			case 0:
				w = HostNanos(r.Int64N(5_000_000))
			case 1:
				w = HostNanos(r.IntN(10))
			}
			a := Anchor{HostNs: host - HostNanos(r.Int64N(int64(w)+1)), WindowNs: w, DevCyc: cyc, DevFreq: f}
			switch {
			case r.IntN(40) == 0:
				a.HostNs += HostNanos(r.Int64N(2_000_000)) // off the clock
			case r.IntN(200) == 0:
				a.WindowNs = 1<<62 - a.HostNs + HostNanos(r.Int64N(1000))
			case i%13 == 0 && r.IntN(4) == 0:
				a.QuantNs = 1000
			}
			if err := p.AddAnchor(d, a); err != nil {
				t.Fatal(err)
			}
		}
		ds := p.domains[d]
		ds.prepare()
		last := ds.anchors[len(ds.anchors)-1].cyc
		for range 40 {
			var rr rateRange
			switch r.IntN(5) {
			case 0:
				rr.lo = PPB(r.IntN(200_001) - 100_000)
				rr.hi = rr.lo
			case 1:
				rr.lo, rr.hi = -p.cfg.maxRate, p.cfg.maxRate
			case 2:
				rr.lo, rr.hi = -400_000, 300_000 // past the reciprocals' range
			default:
				mid := PPB(drift*1e9) + PPB(r.IntN(201)-100)
				rr.lo, rr.hi = mid-PPB(r.IntN(300)), mid+PPB(r.IntN(300))
			}
			q := ratiosOf(rr)
			for range 30 {
				var c Cycles
				switch k := r.IntN(len(ds.anchors)); r.IntN(4) {
				case 0:
					c = ds.anchors[k].cyc + Cycles(r.IntN(3)) - 1
				default:
					c = ds.base + Cycles(r.Int64N(int64(last-ds.base)+2))
				}
				xc, ok := nominal(ds.base, c, ds.freq)
				if !ok {
					continue
				}
				L, R := ds.horizon(c)
				want, wantUsed := plainInterval(ds, c, xc, &q, p.cfg.neighbours, L, R)
				got, gotUsed := p.anchorInterval(ds, c, xc, &q, L, R)
				if got != want || gotUsed != wantUsed {
					t.Fatalf("trial %d, rates [%d, %d], c=%d: scan = %+v (%d used), trying every anchor = %+v (%d used)",
						trial, rr.lo, rr.hi, c, got, gotUsed, want, wantUsed)
				}
			}
		}
	}
}

// TestKeyOffsets checks small and clamp at their edges.
func TestKeyOffsets(t *testing.T) {
	t.Parallel()
	for _, v := range []int64{0, 1, -1, 1<<62 - 1, -(1<<62 - 1), 1 << 62, -1 << 62, math.MaxInt64, math.MinInt64} {
		a := mul128(v, 1)
		got, ok := a.small()
		if want := absU(v) < 1<<62; ok != want || (ok && got != v) {
			t.Errorf("small(%d) = %d, %v", v, got, ok)
		}
		if c := a.clamp(); c != v {
			t.Errorf("clamp(%d) = %d", v, c)
		}
	}
	big := mul128(math.MaxInt64, 4)
	if c := big.clamp(); c != math.MaxInt64 {
		t.Errorf("clamp(4·MaxInt64) = %d", c)
	}
	if c := big.neg().clamp(); c != math.MinInt64 {
		t.Errorf("clamp(−4·MaxInt64) = %d", c)
	}
	if _, ok := big.small(); ok {
		t.Error("small(4·MaxInt64) ok")
	}
}
