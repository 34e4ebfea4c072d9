package phasetrace

import (
	"github.com/phasetrace/phasetrace/internal/compareplan"
	"github.com/phasetrace/phasetrace/internal/firstpass"
	"github.com/phasetrace/phasetrace/internal/held"
	"github.com/phasetrace/phasetrace/perfetto"
)

// Drawing a comparison (Compare) by its plan (internal/compareplan): its
// summary, which drawing counts in, and the delta counter: per rank pair,
// at the start of measure's i-th decode step, measure's i-th decode
// chip.run duration minus base's i-th. The plan pairs the steps as the
// runs are drawn (compareplan.Plan.Step); drawing draws the values and
// counts them, and the steps without a partner.

// decodeAxis is the y-axis both sides' decode callables share.
const decodeAxis = "chip.run ns · decode"

// compareSummary returns the summary of the comparison p of the logs
// named names, for drawing to count in (delta, unpaired).
func compareSummary(p *compareplan.Plan, names []string) *CompareSummary {
	s := &CompareSummary{BaseInputs: names[:p.BaseLogs:p.BaseLogs], MeasureInputs: names[p.BaseLogs:], Aligned: p.Aligned.String(),
		BaseHid: p.BaseHid, MeasureHid: p.MeasureHid, BaseSteps: p.BaseSteps, MeasureSteps: p.MeasureSteps, BaseStart: p.BaseStart,
		MeasureStart: p.MeasureStart, ShiftNs: p.ShiftNs, BaseShiftNs: p.BaseShiftNs, Pids: p.Pids, Note: p.Note}
	for _, pr := range p.Pairs {
		s.Pairs = append(s.Pairs, RankPair{Base: pr.BaseOS, Measure: pr.MeasureOS})
	}
	return s
}

// deltaTrack is a rank pair's delta counter track, made on its first
// value.
type deltaTrack struct {
	track    perfetto.Track
	made, ok bool
}

// decodeStep takes a drawn root of a comparison: a decode step of a rank
// pair is paired with the other side's step of the same index, when it
// has come, and their delta written.
func (cs *counterSet) decodeStep(root *held.Span) {
	d, ok := cs.cmp.Step(root.Pid, root.Hid, root.TS, root.Dur, root.At)
	switch {
	case !ok:
	case d.Unpaired != 0:
		cs.unpaired(d.Pair, d.Unpaired, 1)
	default:
		cs.delta(d)
	}
}

// delta writes d at its measure step's start on its pair's track, made on
// its first value.
func (cs *counterSet) delta(d compareplan.Delta) {
	if cs.outside(d.TS, 0) {
		return
	}
	t := &cs.deltas[d.Pair]
	if !t.made {
		t.made = true
		name := counterDecodeDelta.name("") // one y-axis for every pair
		t.track, t.ok = cs.newTrack(cs.cmp.Pairs[d.Pair].Measure, perfetto.CounterSpec{Name: name, Unit: perfetto.UnitTimeNs, YAxisShareKey: name,
			Description: "at the start of each decode step of this process, its chip.run duration minus that of the same step (counted from the first) " +
				"of base pid " + itoa(int64(cs.compare.Pairs[d.Pair].Base)) + ": measure − base, exact ns"})
	}
	cs.value(t.track, t.ok, d.At, d.TS, d.Value)
	if t.ok {
		cs.compare.Pairs[d.Pair].Deltas++
	}
}

// unpaired counts n decode steps of side s of rank pair k that have no
// partner.
func (cs *counterSet) unpaired(k int, s firstpass.Side, n int64) {
	pr := &cs.compare.Pairs[k]
	if s == firstpass.BaseSide {
		pr.BaseUnpaired += n
	} else {
		pr.MeasureUnpaired += n
	}
}

// drainDeltas counts the steps still waiting once every run is drawn.
func (cs *counterSet) drainDeltas() {
	if cs.cmp == nil {
		return
	}
	for k, n := range cs.cmp.Drain() {
		cs.unpaired(k, firstpass.BaseSide, n[0])
		cs.unpaired(k, firstpass.MeasureSide, n[1])
	}
}
