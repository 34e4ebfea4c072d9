package main

import (
	"math"
	"runtime"
	"testing"
)

// TestHeapLimit checks the soft memory limit's rule: the floor for small
// live heaps, never less than a third of the floor above the live heap,
// no lower than Go's own goal (twice the live heap) once the live heap
// reaches the floor, rising with the live heap, and no overflow.
func TestHeapLimit(t *testing.T) {
	for _, c := range []struct{ live, want int64 }{
		{0, heapFloor},
		{2 * heapFloor / 3, heapFloor},
		{heapFloor, 2 * heapFloor},
		{2 * heapFloor, 5 * heapFloor},
	} {
		if got := heapLimit(uint64(c.live)); got != c.want {
			t.Errorf("heapLimit(%d) = %d, want %d", c.live, got, c.want)
		}
	}
	prev := int64(0)
	for live := uint64(0); live <= 4*heapFloor; live += 1 << 16 {
		got := heapLimit(live)
		if got < prev {
			t.Fatalf("heapLimit(%d) = %d falls below heapLimit of less, %d", live, got, prev)
		}
		prev = got
		if room := got - int64(live); room < heapFloor/3 {
			t.Fatalf("heapLimit(%d) = %d leaves %d to allocate, want at least %d", live, got, room, heapFloor/3)
		}
		if live >= heapFloor && got < 2*int64(live) {
			t.Fatalf("heapLimit(%d) = %d is under twice the live heap", live, got)
		}
	}
	if got := heapLimit(math.MaxUint64); got <= 0 {
		t.Errorf("heapLimit(MaxUint64) = %d, want a positive limit", got)
	}
}

// TestWatchHeap checks that the limit follows the collections: after a
// collection with some 48 MiB live, the limit set is heapLimit of a live
// heap of at least that, and once set has returned false nothing more is
// set.
func TestWatchHeap(t *testing.T) {
	live := make([]byte, 48<<20)
	limits := make(chan int64, 4)
	watchHeap(func(limit int64) bool {
		limits <- limit
		return false
	})
	var got int64
	for i := 0; got == 0; i++ {
		if i == 100 {
			t.Fatal("no limit set after 100 collections")
		}
		runtime.GC()
		select {
		case got = <-limits:
		default:
			runtime.Gosched()
		}
	}
	runtime.KeepAlive(live)
	if want := heapLimit(uint64(len(live))); got < want {
		t.Errorf("limit %d after a collection with %d bytes live, want at least heapLimit of that, %d", got, len(live), want)
	}
	for range 3 {
		runtime.GC()
		runtime.Gosched()
	}
	if len(limits) > 0 {
		t.Errorf("a limit set after the watch was ended: %d", <-limits)
	}
}
