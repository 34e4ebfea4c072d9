//go:build !linux

package strace

import "time"

// monotonicNow returns ns since the process started: without
// CLOCK_MONOTONIC at hand, spans still share one increasing axis.
func monotonicNow() int64 { return int64(time.Since(processStart)) }

var processStart = time.Now()
