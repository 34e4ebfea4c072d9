//go:build !unix

package strace

import "time"

// cpuTime is not measured here.
func cpuTime() time.Duration { return 0 }
