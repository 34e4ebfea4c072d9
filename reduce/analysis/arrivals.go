package analysis

// arrivals is the keys of the items a streamed analysis holds open, in
// the order they opened: the oldest is closed first when too many are
// open. Keys of items closed otherwise stay queued and are skipped.
type arrivals[K comparable] struct {
	keys []K
	head int
}

func (a *arrivals[K]) push(k K) { a.keys = append(a.keys, k) }

// closeOldest closes, with close, the oldest key still open (open says
// which are), and compacts the queue now and then.
func closeOldest[K comparable, V any](a *arrivals[K], open map[K]*V, close func(*V)) {
	for a.head < len(a.keys) {
		k := a.keys[a.head]
		a.head++
		if v := open[k]; v != nil {
			close(v)
			break
		}
	}
	if a.head > len(a.keys)/2 && a.head > 1024 {
		a.keys = append(a.keys[:0], a.keys[a.head:]...)
		a.head = 0
	}
}

// closeAll closes every key still open, oldest first, and empties the
// queue.
func closeAll[K comparable, V any](a *arrivals[K], open map[K]*V, close func(*V)) {
	for _, k := range a.keys[a.head:] {
		if v := open[k]; v != nil {
			close(v)
		}
	}
	a.keys, a.head = nil, 0
}
