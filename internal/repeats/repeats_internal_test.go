package repeats

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/phasetrace/phasetrace/strace"
)

// spanKeyOf is a span's key as a comparable value: the exact reference the
// sketches' fingerprints stand for.
type spanKeyOf struct {
	pid     int32
	tid     int64
	inv     uint64
	name    string
	ts, dur int64
}

func keyOf(sp *strace.Span) spanKeyOf {
	return spanKeyOf{sp.Pid, sp.Tid, sp.Inv, sp.Name, sp.TS, sp.Dur}
}

// nearCapture generates a capture's spans as the runtime writes them: runs
// of two processes, each thread's spans on scope exit (children first);
// rank 0 pipelined (two runs in flight on one thread, the same names at
// overlapping times); device phases abutting, some overlapping their
// neighbour by the runtime's 1 ns truncation; hand-offs on two threads
// with the same names and times.
func nearCapture(rng *rand.Rand, runs int) []strace.Span {
	var out []strace.Span
	add := func(pid int32, tid int64, inv uint64, depth int32, name string, ts, dur int64) {
		out = append(out, strace.Span{Pid: pid, Tid: tid, Inv: inv, Depth: depth, Name: name, TS: ts, Dur: dur})
	}
	t := int64(5_000_000_000)
	for r := range runs {
		inv := uint64(r + 1)
		add(4000, 4000, 0, 0, "node.submit", t, 3000)
		add(4000, 4001, 0, 0, "node.dispatch", t, 3000) // another tid, the same name, ts and dur
		for _, pid := range []int32{4100, 4200} {
			start := t + 5000 + int64(rng.IntN(1000))
			add(pid, int64(pid), inv, 2, "chip.run.bind.args", start, 1000)
			add(pid, int64(pid), inv, 1, "chip.run.bind", start, 2000)
			at := int64(0)
			for _, ph := range []string{"preamble", "graph_build", "arena_wire", "sm_reset"} {
				d := int64(100 + rng.IntN(50))
				overlap := int64(rng.IntN(2)) // the runtime's truncation
				add(pid, int64(pid), inv, 3, "chip.run.runner_run.device_wall."+ph, at-overlap, d)
				at += d
			}
			add(pid, int64(pid), inv, 0, "chip.run", start, 9000)
		}
		if r%2 == 1 {
			// Pipelined on rank 0: the run before's twin on the same
			// thread, another inv, at the same times.
			add(4100, 4100, inv+1_000_000, 1, "chip.run.bind", t+5000, 2000)
			add(4100, 4100, inv+1_000_000, 0, "chip.run", t+5000, 9000)
		}
		t += 10_000
	}
	return out
}

// capturesOf sketches captures and compares them as the converter does.
func capturesOf(caps ...[]strace.Span) [][]NearRepeat {
	var all []Sketched
	line := int64(1)
	for _, c := range caps {
		s := Sketched{Capture: Capture{First: line, Last: line + int64(len(c)) - 1}, Sk: new(Sketch)}
		for i := range c {
			s.Sk.add(SpanKey(&c[i]), 1)
			s.keys++
		}
		all = append(all, s)
		line += int64(len(c))
	}
	return NearRepeats([]string{"log"}, all, 1)
}

// TestNearRepeatsAgainstReference compares the sketches' verdict on each
// span of a later capture with an exact reference: a map of the earlier
// captures' keys. The later capture is the earlier one given again with
// spans changed (one field each), taken out and added; its spans equal to
// an earlier one's in every field but one (another tid, inv, ts, dur or
// name) must be drawn, and so must its pipelined twins and truncated
// neighbours, which differ in inv or ts.
func TestNearRepeatsAgainstReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for _, changes := range []int{0, 1, 10, 100, 300} {
		a := nearCapture(rng, 300)
		b := append([]strace.Span(nil), a...)
		for range changes {
			i := rng.IntN(len(b))
			switch sp := &b[i]; rng.IntN(6) {
			case 0:
				sp.Dur++
			case 1:
				sp.TS--
			case 2:
				sp.Tid++
			case 3:
				sp.Inv += 1_000_000
			case 4:
				sp.Name += "x"
			default:
				b = append(b[:i], b[i+1:]...) // taken out
				b = append(b, strace.Span{Pid: 9, Tid: 9, Inv: uint64(i), Name: "ext.app.step", TS: int64(i), Dur: 1})
			}
		}
		ref := map[spanKeyOf]bool{}
		for i := range a {
			ref[keyOf(&a[i])] = true
		}
		near := capturesOf(a, b)
		if near == nil || len(near[0]) != 1 {
			t.Fatalf("%d changes: the captures were not compared", changes)
		}
		n := &near[0][0]
		repeats := 0
		for i := range b {
			_, got := n.Repeated(SpanKey(&b[i]))
			if want := ref[keyOf(&b[i])]; got != want {
				t.Fatalf("%d changes: span %d of the later capture (%+v): repeat %v, want %v", changes, i, b[i], got, want)
			}
			if got {
				repeats++
			}
		}
		if changes == 0 && repeats != len(b) {
			t.Errorf("a capture given again unchanged: %d of %d spans taken as repeats", repeats, len(b))
		}
	}
}

// TestNearRepeatsUnrelated: captures that differ in more keys than a
// sketch can give back are not compared, so no span is taken for a repeat
// that is not one: neither a capture of other times, where every key
// differs, nor one that repeats only half of the first.
func TestNearRepeatsUnrelated(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 1))
	a := nearCapture(rng, 300)
	other := nearCapture(rng, 300) // other times: every key differs
	for i := range other {
		other[i].TS += 1_000_000_000
	}
	third := append([]strace.Span(nil), a[:len(a)/2]...) // half of the first: a difference past a sketch's
	third = append(third, a[len(a)-10:]...)
	third[0].Dur++
	if near := capturesOf(a, other, third); near != nil {
		t.Fatalf("captures that differ past a sketch were compared: %+v", near)
	}
	// A span written twice in the copy only: the difference holds a key
	// twice and is not read back, so the captures are not compared.
	twice := append(append([]strace.Span(nil), a...), strace.Span{Pid: 9, Name: "ext.app.x", TS: 1, Dur: 1}, strace.Span{Pid: 9, Name: "ext.app.x", TS: 1, Dur: 1})
	if near := capturesOf(a, twice); near != nil {
		t.Errorf("a copy with a span written twice compared as %+v: its difference was read back", near)
	}
	// The small difference: a tail of a few spans given again with one
	// changed.
	tail := append([]strace.Span(nil), a[len(a)-50:]...)
	tail[7].Dur++
	near := capturesOf(a[len(a)-60:], other[:40], tail)
	if near == nil || len(near[0]) != 1 || len(near[0][0].of) != 1 {
		t.Fatalf("the tail given again: compared as %+v, want with the first capture only", near)
	}
	for i := range tail {
		_, got := near[0][0].Repeated(SpanKey(&tail[i]))
		if got != (i != 7) {
			t.Errorf("span %d of the tail: repeat %v", i, got)
		}
	}
}

// TestSketchCapacity finds how large a difference a sketch gives back:
// every difference up to 400 keys, over many draws (the limit the package
// doc gives), and none of 2000.
func TestSketchCapacity(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, size := range []int{1, 50, 200, 400} {
		for draw := range 50 {
			a, b := new(Sketch), new(Sketch)
			for range 5000 {
				k := rng.Uint64()
				a.add(k, 1)
				b.add(k, 1)
			}
			want := map[uint64]bool{}
			for i := range size {
				k := rng.Uint64()
				if i%2 == 0 {
					b.add(k, 1)
					want[k] = true
				} else {
					a.add(k, 1)
				}
			}
			got, ok := extraKeys(a, b)
			if !ok {
				t.Fatalf("a difference of %d keys (draw %d) not read back", size, draw)
			}
			if len(got) != len(want) {
				t.Fatalf("a difference of %d keys: %d extra keys read back, want %d", size, len(got), len(want))
			}
			for k := range want {
				if _, found := slices.BinarySearch(got, k); !found {
					t.Fatalf("a difference of %d keys: key %x not read back", size, k)
				}
			}
		}
	}
	a, b := new(Sketch), new(Sketch)
	for range 2000 {
		b.add(rng.Uint64(), 1)
	}
	if _, ok := extraKeys(a, b); ok {
		t.Error("a difference of 2000 keys read back from 1023 cells")
	}
}
