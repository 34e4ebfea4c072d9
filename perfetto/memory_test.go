package perfetto_test

import (
	"io"
	"runtime"
	"testing"
	"unsafe"

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
// hundred thousand threads, each with a slice or a few dozen, must not
// need a hundred thousand times the state of a busy track. The figures
// are the package documentation's: about 540 bytes with a slice, 2.1 KB
// with 32 (538 and 2 060 measured; within an eighth).
func TestMemoryPerTrack(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 100 000 tracks, and 10 000 of 32 slices")
	}
	for _, c := range []struct {
		n      int
		slices int64
		max    int64
	}{{100_000, 1, 608}, {10_000, 32, 2320}} {
		n := c.n
		w := perfetto.NewWriter(io.Discard, perfetto.WithMaxTracks(n))
		before := heapAlloc()
		args := make([]perfetto.Arg, 3)
		tracks := make([]perfetto.Track, 0, n)
		for i := range n {
			tracks = append(tracks, w.Thread(perfetto.ThreadSpec{Pid: int32(1 + i/1000), Tid: int64(i), Name: "worker"}))
		}
		for s := range c.slices {
			for i, th := range tracks {
				args[0], args[1], args[2] = perfetto.Int("i", int64(i)), perfetto.String("hid", "9f3c"), perfetto.Int("depth", 0)
				w.Slice(th, perfetto.Slice{Name: "task", TS: s*1_000_000 + int64(i), Dur: 10, Args: args})
				if i%1000 == 999 {
					if err := w.Flush(); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		per := (heapAlloc() - before - int64(cap(tracks))*int64(unsafe.Sizeof(tracks[0]))) / int64(n)
		runtime.KeepAlive(w)
		t.Logf("%d bytes per track with %d slices (%d tracks)", per, c.slices, n)
		if per > c.max {
			t.Errorf("%d bytes of heap per track with %d slices, want at most %d", per, c.slices, c.max)
		}
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
