package phasetrace

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/phasetrace/phasetrace/internal/held"
	"github.com/phasetrace/phasetrace/internal/repeats"
	"github.com/phasetrace/phasetrace/strace"
	"github.com/phasetrace/phasetrace/strace/stracetest"
)

// The run collector alone: a root written last completes its run at once;
// a root written first waits for the rest until the next root of its
// thread and slot; the oldest run is handed over past maxPending; flush
// hands over the rest, oldest first.
func TestRunCollector(t *testing.T) {
	var got []string
	r := runCollector{maxPending: 3, drawer: runFunc(func(b *invBuf) {
		s := itoa(int64(b.key.Inv)) + ":"
		for _, h := range b.host {
			s += " " + h.Name
		}
		got = append(got, s)
	})}
	span := func(inv uint64, depth int32, name string, slot int64) *strace.Span {
		sp := &strace.Span{Pid: 1, Tid: 1, Inv: inv, Depth: depth, Name: name}
		if slot >= 0 {
			sp.Attrs = []strace.Attr{strace.Int("slot_id", slot)}
		}
		return sp
	}
	r.add(repeats.Unshared(span(1, 1, "chip.run.bind", -1)), 0, false, 0)
	r.add(repeats.Unshared(span(1, 0, "chip.run", 0)), 0, false, 0) // children first: complete
	r.add(repeats.Unshared(span(2, 0, "chip.run", 0)), 0, false, 0) // parents first: waits
	r.add(repeats.Unshared(span(2, 1, "chip.run.bind", -1)), 0, false, 0)
	r.add(repeats.Unshared(span(3, 0, "chip.run", 1)), 0, false, 0) // another slot: 2 still waits
	r.add(repeats.Unshared(span(4, 0, "chip.run", 0)), 0, false, 0) // slot 0 again: 2 is complete
	r.add(repeats.Unshared(span(5, 1, "chip.run.bind", -1)), 0, false, 0)
	r.add(repeats.Unshared(span(6, 1, "chip.run.bind", -1)), 0, false, 0) // a fourth waiting run: the oldest (3) goes
	r.flush()
	want := []string{"1: chip.run.bind chip.run", "2: chip.run chip.run.bind", "3: chip.run", "4: chip.run", "5: chip.run.bind", "6: chip.run.bind"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("runs handed over (-want +got):\n%s", diff)
	}
}

// Runs whose roots come first, each on a thread of its own, more threads
// than may wait: each new run hands over the one that waited longest, so
// they are handed over in the order they came, with never more than
// maxPending waiting; the threads' next runs then hand over their own.
func TestRunCollectorHandsOldestFirst(t *testing.T) {
	const maxPending, threads = 64, 1000
	var got []uint64
	r := runCollector{maxPending: maxPending}
	r.drawer = runFunc(func(b *invBuf) {
		got = append(got, b.key.Inv)
		if len(r.pending) > maxPending {
			t.Fatalf("%d runs waiting, at most %d may", len(r.pending), maxPending)
		}
	})
	var want []uint64
	for inv := uint64(1); inv <= 3*threads; inv++ {
		r.add(repeats.Unshared(&strace.Span{Pid: 1, Tid: int64(inv % threads), Inv: inv, Name: "chip.run", TS: int64(inv), Dur: 1}), 0, false, 0)
		want = append(want, inv)
	}
	r.flush()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("runs handed over (-want +got):\n%s", diff)
	}
	if r.oldest != nil || r.newest != nil || len(r.pending) != 0 {
		t.Errorf("after flush: oldest %p, newest %p, %d waiting", r.oldest, r.newest, len(r.pending))
	}
}

// BenchmarkRunCollectorThreads gives the run collector runs whose roots
// come first, one per thread in turn: past defaultMaxPending threads each
// new run hands over the oldest waiting. The time per run does not grow
// with the threads; when the oldest was searched for among every waiting
// run, a run took 75 times as long past defaultMaxPending threads:
//
//	go test -run XXX -bench RunCollectorThreads -benchtime 20000x .
func BenchmarkRunCollectorThreads(b *testing.B) {
	for _, threads := range []int{1_000, 10_000, 100_000} {
		b.Run(itoa(int64(threads)), func(b *testing.B) {
			r := runCollector{maxPending: defaultMaxPending, drawer: runFunc(func(*invBuf) {})}
			sp := strace.Span{Pid: 1, Name: "chip.run", Dur: 1}
			for i := 0; b.Loop(); i++ {
				sp.Tid, sp.Inv, sp.TS = int64(i%threads), uint64(i), int64(i)
				r.add(repeats.Unshared(&sp), 0, false, 0)
			}
		})
	}
}

// A run that waits while more than the recent spans of other spans goes by
// keeps its spans' attributes: the window shares its copies
// (RecentSpans.Admit) and the run copies them out before the window lets
// go of them (CopyOut). Every attribute the waiting run drew its spans with
// is checked, host and device, short and long text, numbers; without
// CopyOut the window's stores would have been reused for the spans after.
func TestRunKeepsSharedSpansPastTheRing(t *testing.T) {
	long := func(tag string, i int) string {
		return strings.Repeat(tag, strace.CanonicalValueLen/len(tag)+1) + itoa(int64(i))
	}
	spanOf := func(inv uint64, depth int32, name string, i int, dev bool) strace.Span {
		sp := strace.Span{Pid: 1, Tid: 7, Inv: inv, Depth: depth, Name: name, TS: int64(i), Dur: 1}
		sp.Attrs = []strace.Attr{strace.String("note", long("w", i)), strace.Int("n", int64(i)), strace.String("k", "v"+itoa(int64(i%7)))}
		if dev {
			sp.Attrs = append(sp.Attrs, strace.String("clk", "dev"))
		}
		return sp
	}
	for _, rootFirst := range []bool{false, true} {
		var got []held.Span
		var want []strace.Span
		runs := runCollector{maxPending: 16, drawer: runFunc(func(b *invBuf) {
			if b.key.Inv == 1 {
				got = append(append(got, b.host...), b.dev...)
			}
		})}
		r := repeats.NewRecentSpans(&runs)
		give := func(sp strace.Span, dev bool) {
			given := sp
			given.Attrs = slices.Clone(sp.Attrs) // the reader's memory: reused at once
			l, repeated := r.Admit(&given)
			if repeated {
				t.Fatalf("span %s %d taken for a repeat", sp.Name, sp.TS)
			}
			runs.add(l, 0, dev, 0)
			for i := range given.Attrs {
				given.Attrs[i] = strace.Attr{}
			}
		}
		// Other runs, on another thread, each complete (a root alone waits
		// for the next root of its thread): first two windows, so that the
		// detector's stores have their full size and are reused, not
		// replaced, then the waiting run, then three windows more.
		i, inv := 0, uint64(2)
		others := func(until int) {
			for ; i < until; inv++ {
				sp := spanOf(inv, 0, "chip.run", i, false)
				sp.Tid = 8
				give(sp, false)
				i++
			}
		}
		others(2 * repeats.RecentSpanCount)
		waiting := []strace.Span{spanOf(1, 1, "chip.run.bind", i, false), spanOf(1, 1, "chip.run.runner_run.device_wall", i+1, true)}
		if rootFirst {
			waiting = append([]strace.Span{spanOf(1, 0, "chip.run", i+2, false)}, waiting...)
		}
		for _, sp := range waiting {
			give(sp, sp.IsDevice())
			i++
		}
		others(5 * repeats.RecentSpanCount)
		if !rootFirst {
			waiting = append(waiting, spanOf(1, 0, "chip.run", i, false))
			give(waiting[len(waiting)-1], false)
		}
		runs.flush()
		for _, sp := range waiting {
			if !sp.IsDevice() {
				want = append(want, sp)
			}
		}
		for _, sp := range waiting {
			if sp.IsDevice() {
				want = append(want, sp)
			}
		}
		if len(got) != len(want) {
			t.Fatalf("root first %v: %d spans of the waiting run drawn, want %d", rootFirst, len(got), len(want))
		}
		for j := range want {
			w := want[j]
			for k := range w.Attrs {
				if w.Attrs[k].Type != strace.TypeString {
					w.Attrs[k].Value = "" // a kept number drops its text
				}
			}
			if !stracetest.SameSpan(&got[j].Span, &w) {
				t.Errorf("root first %v: span %d drawn as %+v, want %+v", rootFirst, j, got[j].Span, w)
			}
		}
	}
}

// A name set holds what it was given, in its list and past it in its map,
// and nothing after reset.
func TestNameSet(t *testing.T) {
	var s nameSet
	for _, n := range []int{0, 1, smallNameSet - 1, smallNameSet, smallNameSet + 1, 5 * smallNameSet} {
		s.reset()
		for i := range n {
			s.add("seg" + itoa(int64(i)))
			s.add("seg" + itoa(int64(i))) // twice: no harm
		}
		for i := range n + 3 {
			if got := s.has("seg" + itoa(int64(i))); got != (i < n) {
				t.Errorf("%d names: has seg%d = %v", n, i, got)
			}
		}
	}
	s.reset()
	if s.has("seg0") {
		t.Error("a reset set has seg0")
	}
}

// runFunc draws a run with a function (runSink).
type runFunc func(b *invBuf)

func (f runFunc) run(b *invBuf) { f(b) }
