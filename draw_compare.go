package phasetrace

import (
	"github.com/phasetrace/phasetrace/internal/compareplan"
	"github.com/phasetrace/phasetrace/internal/counters"
	"github.com/phasetrace/phasetrace/internal/firstpass"
	"github.com/phasetrace/phasetrace/internal/held"
)

// Drawing a comparison (Compare) by its plan (internal/compareplan): its
// summary, which drawing counts in, and the delta counter: per rank pair,
// at the start of measure's i-th decode step, measure's i-th decode
// chip.run duration minus base's i-th. The plan pairs the steps as the
// runs are drawn (compareplan.Plan.Step); drawing draws the values and
// counts them, and the steps without a partner.

// compareSummary returns the summary of the comparison p of the logs
// named names, for drawing to count in (Delta, Unpaired).
func compareSummary(p *compareplan.Plan, names []string) *CompareSummary {
	s := &CompareSummary{BaseInputs: names[:p.BaseLogs:p.BaseLogs], MeasureInputs: names[p.BaseLogs:], Aligned: p.Aligned.String(),
		BaseHid: p.BaseHid, MeasureHid: p.MeasureHid, BaseSteps: p.BaseSteps, MeasureSteps: p.MeasureSteps, BaseStart: p.BaseStart,
		MeasureStart: p.MeasureStart, ShiftNs: p.ShiftNs, BaseShiftNs: p.BaseShiftNs, Pids: p.Pids, Note: p.Note}
	for _, pr := range p.Pairs {
		s.Pairs = append(s.Pairs, RankPair{Base: pr.BaseOS, Measure: pr.MeasureOS})
	}
	return s
}

// counterAccount is the counters' site (counterSite): the window the
// slice drawer draws, and the account they count in.
type counterAccount struct {
	cv  *sliceDrawer
	cmp *CompareSummary // nil: not a comparison
}

// counterReasons says, for each reason a counter value is not drawn, the
// reason the summary counts it under.
var counterReasons = [...]Reason{counters.TrackLimit: ReasonCounterTrackLimit, counters.Late: ReasonInFlightLate}

func (s *counterAccount) Outside(ts, dur int64) bool { return s.cv.outside(ts, dur) }

func (s *counterAccount) NotDrawn(why counters.Why, at held.Pos, detail string, example bool) {
	bump(&s.cv.acct.sum.CountersNotDrawn, counterReasons[why], 1)
	if example {
		s.cv.acct.example(counterReasons[why], at, detail)
	}
}

func (s *counterAccount) Delta(pair int) { s.cmp.Pairs[pair].Deltas++ }

// unpaired counts n decode steps of side side of rank pair k that have no
// partner.
func (s *counterAccount) Unpaired(k int, side firstpass.Side, n int64) {
	pr := &s.cmp.Pairs[k]
	if side == firstpass.BaseSide {
		pr.BaseUnpaired += n
	} else {
		pr.MeasureUnpaired += n
	}
}
