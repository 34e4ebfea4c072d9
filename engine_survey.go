package phasetrace

import (
	"io"

	"github.com/phasetrace/phasetrace/internal/compareplan"
	"github.com/phasetrace/phasetrace/internal/firstpass"
	"github.com/phasetrace/phasetrace/internal/passes"
	"github.com/phasetrace/phasetrace/internal/repeats"
	"github.com/phasetrace/phasetrace/strace"
)

// firstPass scans every log, leaving out the lines of skip and the
// repeated records of the captures that repeat earlier ones in part
// (c.repeated.near, once known), and finds the captures that repeat earlier ones.
func (c *converter) firstPass(logs []Input, skip [][]repeats.Repeat) error {
	c.survey = NewSurvey()
	c.survey.scan.Known = c.cfg.maxTracks
	c.survey.scan.PidMaps = c.pidMaps
	c.survey.scan.Remote.Single = len(logs) == 1
	if c.cfg.baseLogs > 0 {
		c.survey.scan.Cmp = &firstpass.CompareScan{}
	}
	caps := make([][]repeats.Capture, len(logs))
	for i, in := range logs {
		c.survey.scan.Input = i
		var sk []repeats.Repeat
		if skip != nil {
			sk = skip[i]
		}
		c.survey.scan.Near = nil
		if c.repeated.Near != nil {
			c.survey.scan.Near = c.repeated.Near[i]
		}
		if err := c.withInput(in, func(r io.Reader) error {
			var err error
			caps[i], err = c.survey.scan.ScanLog(r, in.Name, c.cfg.maxLine, c.repeated.Seed, sk)
			return err
		}); err != nil {
			return err
		}
	}
	if skip == nil {
		c.repeated.Whole = compareplan.Repeats(c.names, caps, c.cfg.baseLogs)
		c.repeated.Caps = caps
	}
	return nil
}

// compareCaptures sketches the captures of the logs cut into more than one
// (not counting those that repeat earlier ones byte for byte), reading
// those logs once more, and finds the captures that repeat earlier ones in
// part (c.repeated.near).
func (c *converter) compareCaptures(logs []Input) error {
	caps := c.repeated.Caps
	c.repeated.Caps = nil
	var all []repeats.Sketched
	skipped := 0
	for i, in := range logs {
		var kept []repeats.Capture
		var next int
		for _, cp := range caps[i] {
			if c.repeated.Whole != nil {
				if _, rep := repeats.RepeatOf(c.repeated.Whole[i], &next, cp.First); rep {
					continue
				}
			}
			kept = append(kept, cp)
		}
		if len(kept) < 2 {
			continue
		}
		if room := repeats.MaxSketched - len(all); len(kept) > room {
			skipped += len(kept) - room
			kept = kept[:room]
		}
		if len(kept) < 2 {
			continue
		}
		n := len(all)
		for _, cp := range kept {
			all = append(all, repeats.Sketched{Log: i, Capture: cp, Sk: new(repeats.Sketch)})
		}
		if err := c.withInput(in, func(r io.Reader) error {
			return repeats.SketchLog(r, in.Name, c.cfg.maxLine, all[n:])
		}); err != nil {
			return err
		}
	}
	if skipped > 0 {
		c.note("repeats", "%d captures past the first %d not compared with the others for repeated spans", skipped, repeats.MaxSketched)
	}
	c.repeated.Near = compareplan.NearRepeats(c.names, all, len(logs), c.cfg.baseLogs)
	return nil
}

// loadArtifacts reads the host_phase_records and calibration artifacts.
// With keep (a Builder), phase records are kept by (pid, inv) until their
// run is drawn, and a pass whose run never comes is counted when the
// conversion ends; without (Convert), the survey learns from each pass
// (scanResult.phasePass), notes where it is (passes.Index) and lets it go:
// the second pass reads the passes a run needs again.
func (c *converter) loadArtifacts(keep bool) error {
	for _, in := range c.cfg.records {
		var st strace.PhaseRecordsStats
		x := passes.New(in.Name, recordsInput{in, c.progress})
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
				if keep {
					c.survey.PhasePass(p)
				} else {
					c.survey.scan.PhasePass(&p)
					x.Add(&p)
				}
			}
			st = pr.Stats()
			return nil
		})
		if err != nil {
			return err
		}
		if !keep {
			x.Sort()
			c.passIndexes = append(c.passIndexes, x)
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
		c.survey.cal = append(c.survey.cal, firstpass.LoadedCalibration{Pid: ci.pid, Dev: ci.dev, Cal: cal, Summary: len(c.sum.Artifacts) - 1})
	}
	return nil
}
