package perfetto_test

import (
	"io"
	"runtime"
	"testing"

	"github.com/phasetrace/phasetrace/perfetto"
)

// heapAlloc returns the bytes of live heap after a collection.
func heapAlloc() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// The writer's cost per track is small: a converter of a log with a
// hundred thousand threads, each with a slice, must not need a hundred
// thousand times the state of a busy track.
func TestMemoryPerTrack(t *testing.T) {
	const n = 100_000
	w := perfetto.NewWriter(io.Discard, perfetto.WithMaxTracks(n))
	before := heapAlloc()
	args := make([]perfetto.Arg, 1)
	for i := range n {
		th := w.Thread(perfetto.ThreadSpec{Pid: int32(1 + i/1000), Tid: int64(i), Name: "worker"})
		args[0] = perfetto.Int("i", int64(i))
		w.Slice(th, perfetto.Slice{Name: "task", TS: int64(i), Dur: 10, Args: args})
		if i%1000 == 999 {
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	per := (heapAlloc() - before) / n
	runtime.KeepAlive(w)
	t.Logf("%d bytes per track", per)
	if per > 1024 {
		t.Errorf("%d bytes of heap per track with one slice, want at most 1024", per)
	}
}

// Once warm, the writer allocates nothing for slices on tracks it knows
// with arguments and strings it has seen: not to encode them, not to
// place them at Flush, not to write them.
func TestNoAllocationsWhenWarm(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage counters allocate")
	}
	for _, opts := range [][]perfetto.Option{nil, {perfetto.WithDeltaTimestamps(false)}} {
		w := perfetto.NewWriter(io.Discard, opts...)
		m := newConverterMix(w)
		// Several flushes, both hids on every track, and each track's
		// memory of its past grown to its bound (the top-level slices of
		// about 1 100 runs; see the package doc, Memory).
		for range 16_000 {
			m.run()
		}
		n := testing.AllocsPerRun(5, func() {
			for range 1024 {
				m.run()
			}
		})
		if n != 0 {
			t.Errorf("options %d: %.1f allocations for 1024 runs (%d slices and 2 flushes), want 0", len(opts), n, 1024*mixSlices)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
