package phasetrace_test

import (
	"bytes"
	"flag"
	"io"
	"os"
	"runtime"
	"sync"
	"testing"

	"github.com/phasetrace/phasetrace"
	"github.com/phasetrace/phasetrace/strace/stracetest"
)

// heapSampler is an output that records the largest live heap seen at its
// writes. It is written by the trace writer and, through sampledReader,
// by the goroutine that reads a log: a mutex orders them.
type heapSampler struct {
	mu   sync.Mutex
	n    int64
	peak uint64
}

func (h *heapSampler) Write(b []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.n++
	if h.n%4 == 1 {
		h.sample()
	}
	return len(b), nil
}

// sample records the live heap; h.mu is held.
func (h *heapSampler) sample() {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	h.peak = max(h.peak, ms.HeapAlloc)
}

// sampledReader is an input that samples the live heap as it is read
// (past the track limit, little is written).
type sampledReader struct {
	r io.Reader
	h *heapSampler
}

func (s sampledReader) Read(b []byte) (int, error) {
	s.h.Write(nil)
	return s.r.Read(b)
}

// memoryPerTrack converts the logs log(small) and log(large) and returns
// what a track costs while the trace is written (the converter's and the
// writer's state together): the difference of the peaks of live heap,
// less that of the logs (they are in memory too, in buffers of their
// capacity), over the difference of the tracks.
func memoryPerTrack(t *testing.T, log func(int) []byte, small, large int) int64 {
	t.Helper()
	type run struct {
		peak   uint64
		log    int
		tracks int
	}
	conv := func(n int) run {
		l := log(n)
		var h heapSampler
		sum, err := phasetrace.Convert(&h, []phasetrace.Input{phasetrace.Bytes("many.log", l)}, phasetrace.WithMaxTracks(1<<20))
		if err != nil {
			t.Fatal(err)
		}
		if sum.Spans.Drawn != sum.Spans.Read {
			t.Fatalf("%d spans read, %d drawn", sum.Spans.Read, sum.Spans.Drawn)
		}
		runtime.KeepAlive(l)
		return run{h.peak, cap(l), sum.Output.Tracks}
	}
	a, b := conv(small), conv(large)
	per := (int64(b.peak) - int64(a.peak) - int64(b.log-a.log)) / int64(b.tracks-a.tracks)
	t.Logf("peak heap %d B for %d tracks, %d B for %d: %d B per track", a.peak, a.tracks, b.peak, b.tracks, per)
	return per
}

// TestMemoryPerTrack converts logs of 5 000 and 50 000 processes with a
// run each (10^4 and 10^5 tracks), and of 1 000 and 10 000 threads with
// 16 runs of two spans (32 slices) each: what a track costs while the trace is written is what
// the README and the package documentation say (568 and 1 692 bytes),
// within an eighth.
func TestMemoryPerTrack(t *testing.T) {
	if testing.Short() {
		t.Skip("converts 110 000 tracks")
	}
	if per := memoryPerTrack(t, stracetest.Processes, 5_000, 50_000); per > 640 {
		t.Errorf("%d bytes per track with a run, want at most 640 (the documented 568, within an eighth)", per)
	}
	if per := memoryPerTrack(t, func(n int) []byte { return stracetest.Threads(n, 16) }, 1_000, 10_000); per > 1903 {
		t.Errorf("%d bytes per track with 16 runs of two spans, want at most 1903 (the documented 1 692, within an eighth)", per)
	}
}

// TestAllocsPerSpan converts two generated logs, one twice the other's
// length: the spans the larger adds cost no allocation. The conversion
// allocates per trace, per track, per distinct string and per hand-off
// waiting in the hand-offs (a 1 s horizon here, so that both logs fill
// it), not per span; what the larger log adds is the doubling of what is
// kept per clock anchor (the anchors are kept for the whole log, and the
// windows of each level of their estimate), a few dozen allocations.
func TestAllocsPerSpan(t *testing.T) {
	if testing.Short() {
		t.Skip("converts 12 MB of logs")
	}
	a1, s1, a2, s2 := addedAllocs(t)
	t.Logf("%.0f allocations for %d spans, %.0f for %d: %.0f for the %d spans added (%.5f per span)", a1, s1, a2, s2, a2-a1, s2-s1, (a2-a1)/float64(s2-s1))
	if a2-a1 > 64 {
		t.Errorf("%.0f allocations for %d more spans, want at most 64 (the anchors' storage doubling)", a2-a1, s2-s1)
	}
}

// addedAllocs converts a generated log of 4 MB and one twice as long with
// opts, and returns the allocations of each conversion and its spans.
func addedAllocs(t *testing.T, opts ...phasetrace.Option) (a1 float64, s1 int64, a2 float64, s2 int64) {
	t.Helper()
	opts = append([]phasetrace.Option{phasetrace.WithFlowHorizon(1_000_000_000)}, opts...)
	allocs := func(log []byte) (float64, int64) {
		in := []phasetrace.Input{phasetrace.Bytes("gen.log", log)}
		var spans int64
		n := testing.AllocsPerRun(2, func() {
			sum, err := phasetrace.Convert(io.Discard, in, opts...)
			if err != nil {
				t.Fatal(err)
			}
			spans = sum.Spans.Read
		})
		return n, spans
	}
	small, large := doublingLogs()
	a1, s1 = allocs(small)
	a2, s2 = allocs(large)
	return a1, s1, a2, s2
}

// TestSplitMemoryIsFlat converts a generated log of 4 MB and one twice as
// long into parts of 2 000 slices: the larger writes twice the parts, but
// its peak of live heap (sampled at the writes of the overview and of
// every part, the log's own bytes left out) is no higher but for what is
// kept per clock anchor: the parts written out are let go of. (A part is
// written out twice the flow horizon after its stretch of log time: a 1 s
// horizon here, so that both logs outlast it many times.)
func TestSplitMemoryIsFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("converts 12 MB of logs")
	}
	peak := func(log []byte) (uint64, int) {
		h := &heapSampler{}
		parts := 0
		open := func(int) (io.WriteCloser, string, error) { parts++; return nopCloser{h}, "", nil }
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		base := ms.HeapAlloc
		opts := []phasetrace.Option{phasetrace.WithFlowHorizon(1_000_000_000), phasetrace.WithSplit(2000, open)}
		if _, err := phasetrace.Convert(h, []phasetrace.Input{phasetrace.Bytes("gen.log", log)}, opts...); err != nil {
			t.Fatal(err)
		}
		runtime.KeepAlive(log)
		return h.peak - base, parts
	}
	small, large := doublingLogs()
	p1, n1 := peak(small)
	p2, n2 := peak(large)
	t.Logf("peak live heap %d B with %d parts, %d B with %d parts", p1, n1, p2, n2)
	if n2 < 2*n1-2 {
		t.Fatalf("%d and %d parts: the test wants twice the parts", n1, n2)
	}
	if int64(p2)-int64(p1) > 1<<20 {
		t.Errorf("the peak of live heap grows by %d B with the log: want at most 1 MiB", int64(p2)-int64(p1))
	}
}

// TestMemoryFlatPastTrackLimit converts logs of 200 000 and 400 000
// processes, past a limit of 4 096 tracks: one span each (a new pid on
// every line), and a run of two spans each. The larger draws no more
// tracks, and its peak of live heap (sampled as the second pass reads the
// log and writes the trace, the survey kept; the log's own bytes left
// out) is no higher, within 1.5 MiB (a sample's varies by some 800 KB run
// to run): what the conversion keeps of a process past the limit does
// not stay (the first pass's pids, the runs in flight of a process
// without a track).
func TestMemoryFlatPastTrackLimit(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("converts 270 MB of logs (skipped under -short and the race detector)")
	}
	peak := func(log []byte) (uint64, int) {
		h := &heapSampler{}
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		base := ms.HeapAlloc
		opened := 0
		in := phasetrace.Input{Name: "many.log", Open: func() (io.ReadCloser, error) {
			if opened++; opened == 1 {
				return io.NopCloser(bytes.NewReader(log)), nil // the survey's
			}
			return io.NopCloser(sampledReader{bytes.NewReader(log), h}), nil
		}}
		sum, err := phasetrace.Convert(h, []phasetrace.Input{in}, phasetrace.WithMaxTracks(4096))
		if err != nil {
			t.Fatal(err)
		}
		runtime.KeepAlive(log)
		return h.peak - base, sum.Output.Tracks
	}
	for _, c := range []struct {
		name string
		log  func(int) []byte
	}{{"one span", stracetest.DistinctPids}, {"a run", stracetest.Processes}} {
		p1, t1 := peak(c.log(200_000))
		p2, t2 := peak(c.log(400_000))
		t.Logf("%s a process: peak live heap %d B for 200 000 processes (%d tracks), %d B for 400 000 (%d tracks)", c.name, p1, t1, p2, t2)
		if t1 != t2 {
			t.Errorf("%s a process: %d and %d tracks, want the limit both times", c.name, t1, t2)
		}
		if int64(p2)-int64(p1) > 3<<19 {
			t.Errorf("%s a process: the peak of live heap grows by %d B with 200 000 processes past the track limit, want at most 1.5 MiB", c.name, int64(p2)-int64(p1))
		}
	}
}

// TestAllocatedPerTrack converts logs of 1 000 and 10 000 threads with 16
// runs of two spans each, and measures what a track allocates in all (the
// garbage too, which the peak of resident memory holds until a collection:
// a pending buffer grown anew at each flush of a quiet track was 3.8 KB
// of it): about 3.1 KB, at most 4 KiB.
func TestAllocatedPerTrack(t *testing.T) {
	if testing.Short() {
		t.Skip("converts 11 000 tracks")
	}
	alloc := func(n int) (uint64, int) {
		log := stracetest.Threads(n, 16)
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		before := ms.TotalAlloc
		sum, err := phasetrace.Convert(io.Discard, []phasetrace.Input{phasetrace.Bytes("many.log", log)}, phasetrace.WithMaxTracks(1<<20))
		if err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&ms)
		return ms.TotalAlloc - before, sum.Output.Tracks
	}
	a1, t1 := alloc(1_000)
	a2, t2 := alloc(10_000)
	per := (int64(a2) - int64(a1)) / int64(t2-t1)
	t.Logf("%d B allocated for %d tracks, %d B for %d: %d B per track", a1, t1, a2, t2, per)
	if per > 4<<10 {
		t.Errorf("%d bytes allocated per track with 16 runs of two spans, want at most 4 KiB (about 3.1 KB)", per)
	}
}

var threadsLog = flag.String("threadslog", "", "TestThreadsLog writes the log of 6 501 or 65 001 threads with 16 runs of two spans each to this file")

var threadsLogN = flag.Int("threadslogn", 65_001, "TestThreadsLog: the threads")

// TestThreadsLog writes the log of -threadslogn threads (6 501 or 65 001)
// with 16 runs of two spans each (stracetest.Threads), for the peak of
// resident memory a track costs (README, "memory per track"):
//
//	go test -run TestThreadsLog -threadslog /tmp/threads.log .
//	/usr/bin/time -v strace2perfetto -o /tmp/t.pftrace /tmp/threads.log
func TestThreadsLog(t *testing.T) {
	if *threadsLog == "" {
		t.Skip("no -threadslog file given")
	}
	if err := os.WriteFile(*threadsLog, stracetest.Threads(*threadsLogN, 16), 0o644); err != nil {
		t.Fatal(err)
	}
}
