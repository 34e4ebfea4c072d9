package phasetrace

import (
	"github.com/phasetrace/phasetrace/internal/firstpass"
	"github.com/phasetrace/phasetrace/internal/remoteplan"
	"github.com/phasetrace/phasetrace/internal/repeats"
	"github.com/phasetrace/phasetrace/strace"
)

// A comparison (Compare) through the engine: the logs are base's, then
// measure's (config.baseLogs of them base's). The first pass scans them
// as any logs, looking for repeated captures within a side only; the plan
// (planCompare) gives the measure side's pids that base uses too trace
// pids of their own, scanning again with them, and names each process's
// side; start moves each side onto its own first log's clock, then the
// measure side onto base's first decode step (compareShifts); the counter
// set draws the delta counter (draw_compare.go).

// planCompare settles a comparison after the first pass: the measure
// side's pids that the base side uses too are given trace pids of their
// own (the logs scanned again with them), and every process is told its
// side. The remote machines' plan is not made: each side is drawn on its
// own first log's clock.
func (c *converter) planCompare(logs []Input) error {
	p := &comparePlan{baseLogs: c.cfg.baseLogs, logs: len(logs), side: map[int32]firstpass.Side{}, pairs: map[int32]*deltaPair{}}
	p.sum = &CompareSummary{BaseInputs: c.names[:p.baseLogs:p.baseLogs], MeasureInputs: c.names[p.baseLogs:]}
	if pm := p.pidMaps(&c.survey.scan.Remote); pm != nil {
		c.pidMaps = pm
		if err := c.firstPass(logs, c.repeated.Whole); err != nil {
			return err
		}
		p.sum.Pids = pm[p.baseLogs]
	}
	s := c.survey.scan
	os := map[int32]int32{}
	for o, t := range p.sum.Pids {
		os[t] = o
	}
	for i := range logs {
		if i < len(s.Remote.Banner) && s.Remote.Banner[i] != "" {
			c.note("compare", "%s is machine %s's log (a daemon banner): a comparison draws each side on its first log's clock, not by the tasks a machine ran", c.names[i], s.Remote.Banner[i])
		}
		if i >= len(s.Remote.Pids) {
			continue
		}
		for pid := range s.Remote.Pids[i] {
			side := p.logSide(i)
			p.side[pid] = side
			pr := s.Proc(pid)
			pr.Side, pr.OsPid = side, os[pid]
		}
	}
	c.cmp = p
	c.sum.Compare = p.sum
	return nil
}

// compareShifts returns, per log, what to add to its host times: each
// side's logs moved onto its first anchored log's clock (as a conversion
// of that side alone moves them), then the measure side onto the base
// side's first decode step (align). The clock anchors move with them.
func (c *converter) compareShifts() []int64 {
	s, p := c.survey.scan, c.cmp
	out := make([]int64, len(c.names))
	var nilPlan *remoteplan.Plan
	nilPlan.LogShifts(s, p.sideInputs(firstpass.BaseSide), out)
	nilPlan.LogShifts(s, p.sideInputs(firstpass.MeasureSide), out)
	p.align(s, out)
	remoteplan.ApplyShifts(s, out)
	return out
}

// sideRepeats is repeats within each side of a comparison: a capture of
// the measure side that repeats one of base's is the other run, not a
// repeat.
func (c *converter) sideRepeats(caps [][]repeats.Capture) [][]repeats.Repeat {
	if c.cfg.baseLogs == 0 {
		return repeats.Repeats(c.names, caps)
	}
	nb := c.cfg.baseLogs
	b, m := repeats.Repeats(c.names[:nb], caps[:nb]), repeats.Repeats(c.names[nb:], caps[nb:])
	if b == nil && m == nil {
		return nil
	}
	out := make([][]repeats.Repeat, len(caps))
	copy(out, b)
	if m != nil {
		copy(out[nb:], m)
	}
	return out
}

// sideNearRepeats is nearRepeats within each side of a comparison.
func (c *converter) sideNearRepeats(all []repeats.Sketched, logs int) [][]repeats.NearRepeat {
	nb := c.cfg.baseLogs
	if nb == 0 {
		return repeats.NearRepeats(c.names, all, logs)
	}
	var b, m []repeats.Sketched
	for _, s := range all {
		if s.Log < nb {
			b = append(b, s)
		} else {
			m = append(m, s)
		}
	}
	nb1, nm := repeats.NearRepeats(c.names, b, logs), repeats.NearRepeats(c.names, m, logs)
	switch {
	case nb1 == nil:
		return nm
	case nm == nil:
		return nb1
	}
	for i := nb; i < logs; i++ {
		nb1[i] = nm[i]
	}
	return nb1
}

// adjustCompare puts a record of log i of a comparison on its side: a
// measure record's pids become their trace pids, its thread handle is
// marked.
func (c *converter) adjustCompare(i int, rec *strace.Record) {
	if c.cmp.logSide(i) != firstpass.MeasureSide {
		return
	}
	if i < len(c.pidMaps) && c.pidMaps[i] != nil {
		firstpass.RemapPids(rec, c.pidMaps[i])
	}
	if rec.Prefix.Thread != 0 {
		rec.Prefix.Thread |= measureThread
	}
}
