package phasetrace_test

import (
	"bytes"
	"io"
	"runtime"
	"testing"

	"github.com/phasetrace/phasetrace"
)

// heapSampler is an output that records the largest live heap seen at its
// writes.
type heapSampler struct {
	n    int64
	peak uint64
}

func (h *heapSampler) Write(b []byte) (int, error) {
	h.n++
	if h.n%8 == 1 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		h.peak = max(h.peak, ms.HeapAlloc)
	}
	return len(b), nil
}

// manyProcesses is a log of n processes with one thread and one span each.
func manyProcesses(n int) []byte {
	var b bytes.Buffer
	for p := range n {
		b.WriteString(spanLine(int64(p), int64(10_000+p), int64(10_000+p), 0, 0, "ext.app.step", int64(p)*10, 5, ""))
	}
	return b.Bytes()
}

// TestMemoryPerTrack converts logs of 10 000 and 40 000 processes: what a
// track costs while the trace is written (the converter's and the writer's
// state together) stays within 1 KB.
func TestMemoryPerTrack(t *testing.T) {
	if testing.Short() {
		t.Skip("converts 50 000 processes")
	}
	logBytes := map[int]int{}
	peak := func(n int) uint64 {
		log := manyProcesses(n)
		logBytes[n] = len(log)
		var h heapSampler
		sum, err := phasetrace.Convert(&h, []phasetrace.Input{phasetrace.Bytes("many.log", log)}, phasetrace.WithMaxTracks(1<<20))
		if err != nil {
			t.Fatal(err)
		}
		if sum.Output.Tracks != 2*n {
			t.Fatalf("%d tracks, want %d", sum.Output.Tracks, 2*n)
		}
		runtime.KeepAlive(log)
		return h.peak
	}
	small, large := peak(10_000), peak(40_000)
	// The logs are in memory too: what they take is not the tracks'.
	perTrack := (int64(large) - int64(small) - int64(logBytes[40_000]-logBytes[10_000])) / (2 * 30_000)
	t.Logf("peak heap %d B for 20 000 tracks, %d B for 80 000: %d B per track", small, large, perTrack)
	if perTrack > 1024 {
		t.Errorf("%d bytes per track, want at most 1024", perTrack)
	}
}

// TestAllocsPerSpan converts two generated logs, one twice the other's
// length: the spans the larger adds cost no allocation. The conversion
// allocates per trace, per track, per distinct string and per hand-off
// waiting in the flow window (a 1 s horizon here, so that both logs fill
// it), not per span; what the larger log adds is the doubling of what is
// kept per clock anchor (the anchors are kept for the whole log), a few
// dozen allocations.
func TestAllocsPerSpan(t *testing.T) {
	if testing.Short() {
		t.Skip("converts 12 MB of logs")
	}
	allocs := func(rounds int) (float64, int64) {
		in := []phasetrace.Input{phasetrace.Bytes("gen.log", generated(benchConfig(rounds)))}
		var spans int64
		n := testing.AllocsPerRun(2, func() {
			sum, err := phasetrace.Convert(io.Discard, in, phasetrace.WithFlowHorizon(1_000_000_000))
			if err != nil {
				t.Fatal(err)
			}
			spans = sum.Spans.Read
		})
		return n, spans
	}
	rounds := roundsFor(4 << 20)
	a1, s1 := allocs(rounds)
	a2, s2 := allocs(2 * rounds)
	t.Logf("%.0f allocations for %d spans, %.0f for %d: %.0f for the %d spans added (%.5f per span)", a1, s1, a2, s2, a2-a1, s2-s1, (a2-a1)/float64(s2-s1))
	if a2-a1 > 48 {
		t.Errorf("%.0f allocations for %d more spans, want at most 48 (the anchors' storage doubling)", a2-a1, s2-s1)
	}
}
