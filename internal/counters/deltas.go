package counters

import (
	"strconv"

	"github.com/phasetrace/phasetrace/internal/compareplan"
	"github.com/phasetrace/phasetrace/internal/firstpass"
	"github.com/phasetrace/phasetrace/internal/held"
	"github.com/phasetrace/phasetrace/perfetto"
)

// decodeAxis is the y-axis both sides' decode callables share.
const decodeAxis = "chip.run ns · decode"

// DeltaTrack is a rank pair's delta counter track, made on its first
// value.
type DeltaTrack struct {
	track    perfetto.Track
	made, ok bool
}

// decodeStep takes a drawn root of a comparison: a decode step of a rank
// pair is paired with the other side's step of the same index, when it
// has come, and their delta written.
func (cs *Set) decodeStep(root *held.Span) {
	d, ok := cs.Cmp.Step(root.Pid, root.Hid, root.TS, root.Dur, root.At)
	switch {
	case !ok:
	case d.Unpaired != 0:
		cs.site.Unpaired(d.Pair, d.Unpaired, 1)
	default:
		cs.delta(d)
	}
}

// delta writes d at its measure step's start on its pair's track, made on
// its first value.
func (cs *Set) delta(d compareplan.Delta) {
	if cs.site.Outside(d.TS, 0) {
		return
	}
	t := &cs.Deltas[d.Pair]
	if !t.made {
		t.made = true
		name := DecodeDelta.name("") // one y-axis for every pair
		t.track, t.ok = cs.newTrack(cs.Cmp.Pairs[d.Pair].Measure, perfetto.CounterSpec{Name: name, Unit: perfetto.UnitTimeNs, YAxisShareKey: name,
			Description: "at the start of each decode step of this process, its chip.run duration minus that of the same step (counted from the first) " +
				"of base pid " + strconv.FormatInt(int64(cs.Cmp.Pairs[d.Pair].BaseOS), 10) + ": measure − base, exact ns"})
	}
	cs.value(t.track, t.ok, d.At, d.TS, d.Value)
	if t.ok {
		cs.site.Delta(d.Pair)
	}
}

// drainDeltas counts the steps still waiting once every run is drawn.
func (cs *Set) drainDeltas() {
	if cs.Cmp == nil {
		return
	}
	for k, n := range cs.Cmp.Drain() {
		cs.site.Unpaired(k, firstpass.BaseSide, n[0])
		cs.site.Unpaired(k, firstpass.MeasureSide, n[1])
	}
}
