package phasetrace

import "github.com/phasetrace/phasetrace/reduce"
import "github.com/phasetrace/phasetrace/internal/held"

// pendingDevice counts each device slice in its device's summary (placed
// aligned or contained, its bound, the reasons it is only contained, its
// repair) once the trace holds it: the writer decides a slice at the flush
// that writes it, and may refuse it then (sliceDrawer.refused), so the slice drawer
// commits the pending device slices after each flush, the slices refused left out.
// Memory: the device slices handed since the last flush.
type pendingDevice struct {
	acct    *account
	pending []deviceCount
}

// deviceCount is one device slice handed to the writer, and what its
// device's summary counts of it.
type deviceCount struct {
	ds      *DeviceSummary
	at      held.Pos
	ts, dur int64 // as handed: with at, what a refusal names
	bound   int64
	method  reduce.Method
	// wallBound: the bound is device_wall's from a log (WallBound);
	// onAxis: the bound holds on the trace's axis, and is counted.
	wallBound, onAxis bool
	causes            reduce.Cause
	generic, wallWhy  Reason
	repair            string // a truncation repair's detail ("": none)
	refused           bool
}

// add keeps a device slice handed to the writer until commit.
func (t *pendingDevice) add(c deviceCount) { t.pending = append(t.pending, c) }

// refused leaves out of the pending device slices the device slice handed at at, [ts,
// ts+dur], if the slice the writer refused is one.
func (t *pendingDevice) refused(at held.Pos, ts, dur int64) {
	for i := len(t.pending) - 1; i >= 0; i-- {
		if c := &t.pending[i]; !c.refused && c.at == at && c.ts == ts && c.dur == dur {
			c.refused = true
			return
		}
	}
}

// commit counts the device slices the writer wrote since the last commit.
func (t *pendingDevice) commit() {
	for i := range t.pending {
		c := &t.pending[i]
		if c.refused {
			continue
		}
		ds := c.ds
		switch {
		case !c.onAxis:
		case c.wallBound:
			ds.WallBound.add(c.bound) // the runtime's bracket: its own distribution
		default:
			ds.Bound.add(c.bound)
		}
		switch c.method {
		case reduce.Aligned:
			ds.Aligned++
		case reduce.Contained:
			ds.Contained++
			bumpPlacement(&ds.ContainedReasons, c.causes, c.generic, c.wallWhy, 1)
		}
		if c.repair != "" {
			t.acct.repaired(ReasonTruncation, c.at, c.repair)
		}
	}
	clear(t.pending)
	t.pending = t.pending[:0]
}
