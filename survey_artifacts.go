package phasetrace

import (
	"github.com/phasetrace/phasetrace/strace"
)

// loadedCalibration is a calibration artifact read before the second pass.
type loadedCalibration struct {
	pid     int32
	dev     int64
	cal     *strace.Calibration
	summary int // index in Summary.Artifacts
}

// markRecordThread names the threads that recorded orchestrator operations
// of a pass on their own.
func (s *scanResult) markRecordThread(pid int32, r strace.PhaseRecord) {
	if !r.HasTid || r.Tid <= 0 || strace.IsBindSegment(r.Phase) {
		return
	}
	t := s.thread(pid, r.Tid)
	switch r.Phase {
	case "record_node", "build_definition":
		t.recordWorker = true
	case "graph_submit":
		t.submitMain = true
	}
}
