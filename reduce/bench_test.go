package reduce

import (
	"math/rand/v2"
	"testing"
)

// benchBuffer is a full 8-thread buffer from the simulator's stamping.
func benchBuffer(b *testing.B) []byte {
	b.Helper()
	r := rand.New(rand.NewPCG(5, 6))
	buf, _ := NewBuffer(8, true)
	buf.Header.TailUsed = 1
	for th := range 8 {
		for p := range NumPhases {
			s := Cycles(1e9 + r.IntN(1000))
			buf.Phases[th*NumPhases+p] = Record{Start: s, End: s + Cycles(1+r.IntN(100000))}
		}
		for sl := range NumSlots {
			if r.IntN(4) == 0 {
				s := Cycles(1e9 + 2000 + r.IntN(1000))
				buf.Slots[th*NumSlots+sl] = Record{Start: s, End: s + Cycles(1+r.IntN(1000))}
			}
		}
	}
	raw, err := buf.AppendBinary(nil)
	if err != nil {
		b.Fatal(err)
	}
	return raw
}

// BenchmarkDecodeReduce decodes, reduces and converts one 8-thread buffer
// with its task-timing tail into the spans the runtime would log.
func BenchmarkDecodeReduce(b *testing.B) {
	raw := benchBuffer(b)
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		buf, err := DecodeBuffer(raw, 8)
		if err != nil {
			b.Fatal(err)
		}
		r, err := Reduce(buf, 50_000_000)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := r.Spans(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPlaceSpan places the runs of the 100 ms anchor regime (600
// anchors, 60 s) and reports the cost per span.
func BenchmarkPlaceSpan(b *testing.B) { benchPlace(b, regimes[0]) }

// BenchmarkPlaceSpanLongLog is BenchmarkPlaceSpan over ten minutes of
// anchors every 100 ms (6000): the cost per span does not grow with the
// number of anchors.
func BenchmarkPlaceSpanLongLog(b *testing.B) {
	rg := regimes[0]
	rg.length = 600 * s
	benchPlace(b, rg)
}

func benchPlace(b *testing.B, rg regime) {
	d := simulate(rg, accuracySeed)
	p := NewPlacer()
	for _, a := range d.anchors {
		if err := p.AddAnchor(Domain{Pid: 1}, a); err != nil {
			b.Fatal(err)
		}
	}
	var out Placement
	spans := 0
	for _, rr := range d.runs {
		spans += len(rr.run.Spans)
	}
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		rr := d.runs[i%len(d.runs)]
		i++
		if err := p.PlaceInto(&out, rr.run); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)*float64(len(d.runs))/float64(spans), "ns/span")
}
