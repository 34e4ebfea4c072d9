package reduce_test

import (
	"fmt"

	"github.com/phasetrace/phasetrace/reduce"
)

// Three tasks a dispatching host sent, 3 s apart, to a worker on another
// machine, whose clock reads 1 000 000 s more and runs 30 ppm fast; each crossed the
// network in 40 µs forward and 25 µs back. The fit places a remote instant
// on the dispatching host's axis with a bound no smaller than half the
// information limit (the least forward plus the least return latency).
func ExampleFitHost() {
	const off = 1_000_000_000_000_000
	remote := func(t int64) reduce.HostNanos { return reduce.HostNanos(off + t + t*30/1_000_000) }
	var br []reduce.HostBracket
	for _, sent := range []int64{5e9, 8e9, 11e9} {
		start, end := sent+40_000, sent+40_000+3_000_000
		br = append(br, reduce.HostBracket{Sent: reduce.HostNanos(sent), Received: reduce.HostNanos(end + 25_000),
			Start: remote(start), End: remote(end)})
	}
	fit, err := reduce.FitHost(br)
	if err != nil {
		fmt.Println(err)
		return
	}
	truth := int64(8e9 + 1_040_000) // a remote instant a millisecond into the second run
	y, bound, _ := fit.Map(remote(truth))
	rate, lo, hi := fit.Rate()
	fmt.Printf("rate %d ppb in [%d, %d]\n", rate, lo, hi)
	fmt.Printf("information limit %d ns\n", fit.Limit())
	fmt.Printf("within bound: %v (bound %d ns ≥ half the limit: %v)\n", abs(int64(y)-truth) <= int64(bound), bound, 2*bound >= fit.Limit())
	// Output:
	// rate -30004 ppb in [-60838, 829]
	// information limit 64967 ns
	// within bound: true (bound 32563 ns ≥ half the limit: true)
}

func abs(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}
