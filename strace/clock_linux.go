package strace

import (
	"syscall"
	"time"
	"unsafe"
)

// monotonicNow reads CLOCK_MONOTONIC, the clock the runtime stamps spans
// with, so a Go program's spans share the runtime's time axis.
func monotonicNow() int64 {
	var ts syscall.Timespec
	const clockMonotonic = 1
	if _, _, errno := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockMonotonic, uintptr(unsafe.Pointer(&ts)), 0); errno != 0 {
		return int64(time.Since(processStart))
	}
	return ts.Nano()
}

var processStart = time.Now()
