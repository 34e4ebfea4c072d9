package main

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
)

// heapFloor is the memory the command lets Go's garbage collector use
// before it collects early: a conversion's live heap is some 15–25 MiB
// (tracks, strings and clock anchors), and without a limit the collector
// lets the heap grow to twice that between collections, which took
// -split of a 1 GB log to 60–65 MiB of resident memory.
const heapFloor = 46 << 20

// heapLimit is the soft memory limit for a live heap of live bytes:
// heapFloor while the live heap is at most two thirds of it, then three
// times the live heap less heapFloor, which reaches twice the live heap
// (where Go's collector collects without a limit) once the live heap
// reaches heapFloor: a conversion whose live heap is large (tens of
// thousands of threads) keeps its speed. The room above the live heap is
// never less than a third of heapFloor.
func heapLimit(live uint64) int64 {
	l := int64(min(live, 1<<60))
	return max(heapFloor, 3*l-heapFloor)
}

// limitHeap keeps Go's memory near the live heap for the rest of the
// process: a soft limit (debug.SetMemoryLimit) of heapLimit, moved after
// each collection. GOMEMLIMIT or GOGC, when set, is the user's choice of
// how the collector works, and is left alone.
func limitHeap() {
	for _, v := range []string{"GOMEMLIMIT", "GOGC"} {
		if _, set := os.LookupEnv(v); set {
			return
		}
	}
	debug.SetMemoryLimit(heapLimit(0))
	watchHeap(func(limit int64) bool {
		debug.SetMemoryLimit(limit)
		return true
	})
}

// gcWitness is allocated for its cleanup alone: it becomes unreachable at
// once, so its cleanup runs after the next collection. It holds a pointer
// so that the allocator gives it an object of its own.
type gcWitness struct{ _ *byte }

// liveHeap is the metric the limit follows: the heap the last
// collection found live.
const liveHeap = "/gc/heap/live:bytes"

// watchHeap calls set with heapLimit of the live heap after each
// collection, for as long as set returns true.
func watchHeap(set func(limit int64) bool) {
	runtime.AddCleanup(new(gcWitness), func(struct{}) {
		s := []metrics.Sample{{Name: liveHeap}}
		metrics.Read(s)
		if s[0].Value.Kind() == metrics.KindUint64 && !set(heapLimit(s[0].Value.Uint64())) {
			return
		}
		watchHeap(set)
	}, struct{}{})
}
