package phasetrace_test

import (
	"bytes"
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
