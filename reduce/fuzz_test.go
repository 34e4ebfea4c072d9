package reduce

import (
	"bytes"
	"errors"
	"math"
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

// FuzzClockFit fits brackets drawn around a line of a fuzzed rate with
// fuzzed widths, sides and spacing, and checks that the interval the fit
// allows holds the line wherever it is asked, that the brackets are never
// called inconsistent, and that the central line is defined.
func FuzzClockFit(f *testing.F) {
	f.Add(uint64(1), uint8(10), int32(30_000), uint32(40_000), uint32(1_000_000_000))
	f.Add(uint64(7), uint8(2), int32(-99_000), uint32(1), uint32(15_000_000_000/4))
	f.Add(uint64(9), uint8(200), int32(0), uint32(1<<31), uint32(1))
	f.Fuzz(func(t *testing.T, seed uint64, n uint8, ratePPB int32, maxWidth uint32, spacing uint32) {
		rate := int64(ratePPB) % 100_000
		cf := newClockFit(100_000, 50, 0)
		line := func(x int64) int64 { // y = 1e12 + x + ⌊x·rate/1e9⌋
			v, _ := mulDiv(x, rate, nsPerSecond, false)
			return 1_000_000_000_000 + x + v
		}
		s := seed | 1
		next := func() uint64 { s ^= s << 13; s ^= s >> 7; s ^= s << 17; return s }
		x := int64(0)
		for i := range int(n)%64 + 1 {
			x += int64(next() % (uint64(spacing) + 1))
			if x > 1<<42 {
				break
			}
			w := int64(next()%(uint64(maxWidth)+1)) + 2
			y := line(x)
			lo := y - 1 - int64(next()%uint64(w))
			hi := lo + w + 1
			switch next() % 4 {
			case 0:
				cf.add(x, lo, math.MaxInt64, i)
			case 1:
				cf.add(x, math.MinInt64, hi, i)
			default:
				cf.add(x, lo, hi, i)
			}
		}
		l, hasLine := cf.line()
		for range 8 {
			q := int64(next() % uint64(x+1_000_000_000))
			lo, hi, _, _, err := cf.span(q)
			if errors.Is(err, ErrUnaligned) {
				continue
			}
			if err != nil {
				t.Fatalf("span(%d): %v", q, err)
			}
			if y := line(q); lo > y+1 || hi < y-1 {
				t.Fatalf("span(%d) = [%d, %d] misses the line at %d", q, lo, hi, y)
			}
			if hasLine && lo != math.MinInt64 && hi != math.MaxInt64 {
				// The central line passes through every bracket, so
				// it lies inside what they allow (1 ns of rounding).
				if v, ok := l.at(q); ok && (v < lo-2 || v > hi+2) {
					t.Fatalf("central line at %d is %d, outside [%d, %d]", q, v, lo, hi)
				}
			}
		}
	})
}

// FuzzPlaceAnchors places runs among anchors of a clock whose rate steps
// (within the stability), some of them moved off their reads as the
// fuzzer says: placement never panics, fails only with a positioned
// conflict or a range error, sets aside only anchors it was given, and,
// where no anchor was moved, every bound holds.
func FuzzPlaceAnchors(f *testing.F) {
	f.Add(uint64(1), uint16(40), uint8(0), uint8(3), uint32(0))
	f.Add(uint64(7), uint16(200), uint8(9), uint8(80), uint32(0x00010003))
	f.Add(uint64(9), uint16(3), uint8(200), uint8(255), uint32(0xffffffff))
	f.Fuzz(func(t *testing.T, seed uint64, n uint16, stepPPM, gapMs uint8, moved uint32) {
		n = n%400 + 1
		rg := regime{name: "fuzz", freq: 50_000_000, drift: 20e-6, stepAmp: float64(stepPPM%35) / 10 * 1e-6, stepEvery: 2 * s,
			anchorEvery: HostNanos(gapMs%200+1) * ms, winMin: 1 * us, winMax: 40 * us, runEvery: 30 * ms, length: HostNanos(n) * (HostNanos(gapMs%200) + 1) * ms}
		d := simulate(rg, seed)
		p := NewPlacer()
		bad := false
		for i, a := range d.anchors {
			if moved>>(uint(i)%32)&1 == 1 && i%3 == 0 {
				a.HostNs += HostNanos(1+i%5) * ms // a window that does not bracket its read
				bad = true
			}
			if err := p.AddAnchor(dom, a); err != nil {
				t.Fatal(err)
			}
		}
		for _, rr := range d.runs {
			pl, err := p.Place(rr.run)
			if err != nil {
				var ie *InconsistencyError
				if !errors.As(err, &ie) && !errors.Is(err, ErrRange) {
					t.Fatalf("error %v is neither a conflict nor a range error", err)
				}
				if !bad {
					t.Fatalf("anchors of the truth conflict: %v", err)
				}
				continue
			}
			for k, sp := range pl.Spans {
				if sp.Bound < 0 {
					t.Fatalf("negative bound %d", sp.Bound)
				}
				if !bad && (abs(sp.HostStart-rr.truth[k]) > sp.Bound || abs(sp.HostEnd-rr.truthEnd[k]) > sp.Bound) {
					t.Fatalf("span %d: drawn [%d, %d], truly [%d, %d], bound %d", k, sp.HostStart, sp.HostEnd, rr.truth[k], rr.truthEnd[k], sp.Bound)
				}
			}
		}
		aside := p.SetAside()
		if len(aside) > maxAside || (!bad && len(aside) > 0) {
			t.Fatalf("%d anchors set aside (any moved: %v)", len(aside), bad)
		}
		for _, a := range aside {
			if a.Index < 0 || a.Index >= len(d.anchors) {
				t.Fatalf("set aside anchor #%d of %d", a.Index, len(d.anchors))
			}
		}
	})
}
