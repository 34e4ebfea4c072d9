package phasetrace

import (
	"io"

	"github.com/phasetrace/phasetrace/strace"
)

// loadedCalibration is a calibration artifact read before the second pass.
type loadedCalibration struct {
	pid     int32
	dev     int64
	cal     *strace.Calibration
	summary int // index in Summary.Artifacts
}

// loadArtifacts reads the host_phase_records and calibration artifacts.
// Phase records are kept by (pid, inv) until their run is drawn (the
// artifact is written for one measured round, so it is small); a pass whose
// run never comes is counted when the conversion ends.
func (c *converter) loadArtifacts() error {
	for _, in := range c.cfg.records {
		var st strace.PhaseRecordsStats
		cut, err := c.withInputCut(in, func(r io.Reader) error {
			pr := strace.NewPhaseRecordsReader(r, strace.WithName(in.Name))
			for {
				p, err := pr.Read()
				if err == io.EOF {
					break
				}
				if err != nil {
					return err
				}
				c.survey.PhasePass(p)
			}
			st = pr.Stats()
			return nil
		})
		if err != nil {
			return err
		}
		c.sum.Artifacts = append(c.sum.Artifacts, ArtifactSummary{Name: in.Name, Kind: "host_phase_records", Items: st.Passes, Torn: st.Torn, Malformed: st.Malformed + st.LongLines, Cut: cut})
	}
	for _, ci := range c.cfg.calibration {
		var cal *strace.Calibration
		cut, err := c.withInputCut(ci.in, func(r io.Reader) error {
			var err error
			cal, err = strace.ReadCalibration(r, strace.WithName(ci.in.Name))
			return err
		})
		if err != nil {
			return err
		}
		c.sum.Artifacts = append(c.sum.Artifacts, ArtifactSummary{Name: ci.in.Name, Kind: "calibration", Items: int64(len(cal.Samples)), Cut: cut})
		c.survey.cal = append(c.survey.cal, loadedCalibration{pid: ci.pid, dev: ci.dev, cal: cal, summary: len(c.sum.Artifacts) - 1})
	}
	return nil
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
