package reduce

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzDecode decodes arbitrary bytes for a thread count, and for buffers
// that decode checks the round trip, the reduction's invariants and that
// placement of the resulting run neither panics nor claims a negative
// bound. Named seeds live in testdata/fuzz/FuzzDecode.
func FuzzDecode(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte, threads int, freq uint64) {
		b, err := DecodeBuffer(data, threads)
		if err != nil {
			var de *DecodeError
			if !errors.As(err, &de) || de.Offset < 0 || de.Offset > len(data) || de.Want == "" {
				t.Fatalf("error %v is not a positioned *DecodeError", err)
			}
			if !errors.Is(err, ErrThreads) && !errors.Is(err, ErrTruncated) && !errors.Is(err, ErrTruncatedTail) && !errors.Is(err, ErrSize) {
				t.Fatalf("error %v unwraps to no sentinel", err)
			}
			return
		}
		out, err := b.AppendBinary(nil)
		if err != nil || !bytes.Equal(out, data) {
			t.Fatalf("round trip: %v", err)
		}
		r, err := Reduce(b, Hz(freq))
		if err != nil {
			if freq != 0 {
				t.Fatal(err)
			}
			return
		}
		for p, w := range r.Phases {
			if w.Valid && (w.End <= w.Start || w.Start == Unset) {
				t.Fatalf("phase %d: invalid window %+v marked valid", p, w)
			}
		}
		spans, err := r.Spans()
		if err != nil {
			if !errors.Is(err, ErrRange) {
				t.Fatal(err)
			}
			return
		}
		for _, s := range spans {
			if s.Dur <= 0 || s.TS < 0 || (s.Depth == 3 && s.StartCyc < r.Origin) {
				t.Fatalf("span %+v with origin %d", s, r.Origin)
			}
		}
		run, err := RunFrom(r, Domain{}, &HostWindow{Start: 1e12, End: 1e12 + 1e9})
		if err != nil {
			return
		}
		p := NewPlacer()
		_ = p.AddAnchor(Domain{}, Anchor{HostNs: 1e12, WindowNs: 1000, DevCyc: r.Origin, DevFreq: Hz(freq)})
		pl, err := p.Place(run)
		if err != nil {
			if !errors.Is(err, ErrInconsistent) && !errors.Is(err, ErrRange) {
				t.Fatal(err)
			}
			return
		}
		for i, x := range pl.Spans {
			if x.Bound < 0 || x.HostEnd < x.HostStart {
				t.Fatalf("span %d placed %+v", i, x)
			}
		}
	})
}
