package firstpass

import (
	"github.com/phasetrace/phasetrace/strace"
)

// LoadedCalibration is a calibration artifact read before the second pass.
type LoadedCalibration struct {
	Pid     int32
	Dev     int64
	Cal     *strace.Calibration
	Summary int // index in Summary.Artifacts
}

// PhasePass learns from a pass of host_phase_records what the second
// pass needs before its run is drawn: that its process has passes, and
// which of its threads recorded orchestrator operations.
func (s *ScanResult) PhasePass(p *strace.PhasePass) {
	if s.RecordPids == nil {
		s.RecordPids = map[int32]bool{}
	}
	s.RecordPids[p.Pid] = true
	for _, r := range p.Records {
		s.markRecordThread(p.Pid, r)
	}
}

// markRecordThread names the threads that recorded orchestrator operations
// of a pass on their own.
func (s *ScanResult) markRecordThread(pid int32, r strace.PhaseRecord) {
	if !r.HasTid || r.Tid <= 0 || strace.IsBindSegment(r.Phase) {
		return
	}
	t := s.Thread(pid, r.Tid)
	switch r.Phase {
	case "record_node", "build_definition":
		t.recordWorker = true
	case "graph_submit":
		t.submitMain = true
	}
}
