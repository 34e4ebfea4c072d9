package phasetrace

import (
	"github.com/phasetrace/phasetrace/internal/compareplan"
	"github.com/phasetrace/phasetrace/internal/firstpass"
	"github.com/phasetrace/phasetrace/internal/remoteplan"
)

// A comparison (Compare) through the engine: the logs are base's, then
// measure's (config.baseLogs of them base's). The first pass scans them
// as any logs, looking for repeated captures within a side only
// (compareplan.Repeats); the plan (internal/compareplan, planCompare)
// gives the measure side's pids that base uses too trace pids of their
// own, scanning again with them, and names each process's side; start
// moves each side onto its own first log's clock, then the measure side
// onto base's first decode step (compareShifts); the counter set draws the
// delta counter (internal/counters).

// planCompare settles a comparison after the first pass: the measure
// side's pids that the base side uses too are given trace pids of their
// own (the logs scanned again with them), and every process is told its
// side. The remote machines' plan is not made: each side is drawn on its
// own first log's clock.
func (c *converter) planCompare(logs []Input) error {
	p := compareplan.New(c.cfg.baseLogs, len(logs))
	if pm := p.PidMaps(&c.survey.scan.Remote); pm != nil {
		c.pidMaps = pm
		if err := c.firstPass(logs, c.repeated.Whole); err != nil {
			return err
		}
	}
	s := c.survey.scan
	for i := range logs {
		if i < len(s.Remote.Banner) && s.Remote.Banner[i] != "" {
			c.note("compare", "%s is machine %s's log (a daemon banner): a comparison draws each side on its first log's clock, not by the tasks a machine ran", c.names[i], s.Remote.Banner[i])
		}
	}
	p.Settle(s)
	c.cmp = p
	return nil
}

// compareShifts returns, per log, what to add to its host times: each
// side's logs moved onto its first anchored log's clock (as a conversion
// of that side alone moves them), then the measure side onto the base
// side's first decode step (compareplan.Plan.Align). The clock anchors
// move with them.
func (c *converter) compareShifts() []int64 {
	s, p := c.survey.scan, c.cmp
	out := make([]int64, len(c.names))
	var nilPlan *remoteplan.Plan
	nilPlan.LogShifts(s, p.SideInputs(firstpass.BaseSide), out)
	nilPlan.LogShifts(s, p.SideInputs(firstpass.MeasureSide), out)
	p.Align(s, out)
	remoteplan.ApplyShifts(s, out)
	return out
}
