package phasetrace

import (
	"github.com/phasetrace/phasetrace/internal/held"
	"github.com/phasetrace/phasetrace/perfetto"
)

// The delta counter of a comparison (Compare): per rank pair, at the start
// of measure's i-th decode step, measure's i-th decode chip.run duration
// minus base's i-th. Steps are counted per process in the order the runs
// are drawn (the order the logs complete them), from 1. The two sides'
// steps come in about together, the measure side moved onto base's first
// decode step; the side ahead waits for the other in a queue of at most
// maxDeltaBehind steps per pair: past it a step is not kept, and it and
// its partner are counted unpaired, so that memory does not grow with the
// log however far one side runs ahead.

// decodeAxis is the y-axis both sides' decode callables share.
const decodeAxis = "chip.run ns · decode"

// maxDeltaBehind is how many decode steps of one side of a pair wait at
// most for the other side's.
const maxDeltaBehind = 1 << 16

// decodeStep takes a drawn root of a comparison: a decode step of a rank
// pair is paired with the other side's step of the same index, when it has
// come, and their delta written.
func (cs *counterSet) decodeStep(root *held.Span) {
	p := cs.cmp
	if !p.isDecode(root.Pid, root.Hid) {
		return
	}
	d := p.pairs[root.Pid]
	if d == nil {
		return
	}
	s := 0
	if root.Pid == d.measure {
		s = 1
	}
	o := 1 - s
	st := deltaStep{idx: d.seen[s], ts: root.TS, dur: root.Dur, at: root.At}
	d.seen[s]++
	if d.seen[o] <= st.idx { // its partner is still to come
		if len(d.wait[s]) >= maxDeltaBehind {
			cs.unpaired(d, s, 1)
			return
		}
		d.wait[s] = append(d.wait[s], st)
		return
	}
	q := d.wait[o]
	if len(q) == 0 || q[0].idx != st.idx { // its partner was not kept
		cs.unpaired(d, s, 1)
		return
	}
	other := q[0]
	d.wait[o] = q[1:]
	if len(d.wait[o]) == 0 {
		d.wait[o] = q[:0]
	}
	b, m := other, st
	if s == 0 {
		b, m = st, other
	}
	cs.delta(d, m, m.dur-b.dur)
}

// delta writes v at measure step m's start on d's track, made on its
// first value.
func (cs *counterSet) delta(d *deltaPair, m deltaStep, v int64) {
	if cs.outside(m.ts, 0) {
		return
	}
	if !d.made {
		d.made = true
		pair := cs.cmp.sum.Pairs[d.sum]
		name := counterDecodeDelta.name("") // one y-axis for every pair
		d.track, d.ok = cs.newTrack(d.measure, perfetto.CounterSpec{Name: name, Unit: perfetto.UnitTimeNs, YAxisShareKey: name,
			Description: "at the start of each decode step of this process, its chip.run duration minus that of the same step (counted from the first) " +
				"of base pid " + itoa(int64(pair.Base)) + ": measure − base, exact ns"})
	}
	cs.value(d.track, d.ok, m.at, m.ts, v)
	if d.ok {
		cs.cmp.sum.Pairs[d.sum].Deltas++
	}
}

// unpaired counts n decode steps of side s of d that have no partner.
func (cs *counterSet) unpaired(d *deltaPair, s int, n int64) {
	pr := &cs.cmp.sum.Pairs[d.sum]
	if s == 0 {
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
	for _, d := range cs.cmp.list {
		for s := range d.wait {
			cs.unpaired(d, s, int64(len(d.wait[s])))
			d.wait[s] = nil
		}
	}
}
