package phasetrace

import "fmt"

// SeveralWallAnchors is the note a reader of the logs gives when process
// pid wrote n wall-clock anchors ([CLOCK_ANCHOR] v=1), where the runtime
// writes one per process; first and second are where the first two are
// (file:line). The converter notes it in its Summary and stracestat warns
// with it, in the same words.
func SeveralWallAnchors(pid int32, n int, first, second string) string {
	return fmt.Sprintf("pid %d wrote %d wall-clock anchors ([CLOCK_ANCHOR] v=1; one per process is expected): %s and %s", pid, n, first, second)
}
