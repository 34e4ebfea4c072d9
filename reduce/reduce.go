package reduce

import (
	"fmt"

	"github.com/phasetrace/phasetrace/strace"
)

// Window is a reduced window in raw cycles: min(start) and max(end) over the
// threads whose record is complete.
type Window struct {
	Start Cycles
	End   Cycles
	Valid bool // some thread completed it and End > Start
}

// Len returns End − Start, or 0 for an invalid window.
func (w Window) Len() Cycles {
	if !w.Valid {
		return 0
	}
	return w.End - w.Start
}

// OriginSource says which rule chose a run's device origin (ts = 0).
type OriginSource int

// Origin rules, in order of preference.
const (
	// OriginNone: nothing was stamped; there is no origin.
	OriginNone OriginSource = iota
	// OriginSubPhase: the earliest reduced start among Preamble … SmReset.
	OriginSubPhase
	// OriginSlot: no sub-phase was stamped; the earliest reduced dispatch
	// of a complete task-timing slot (a host_build_graph run).
	OriginSlot
	// OriginRunWall: neither sub-phases nor slots; RunWall's own start.
	// The runtime logs no child spans then, so the origin only anchors
	// device_wall itself.
	OriginRunWall
)

func (o OriginSource) String() string {
	switch o {
	case OriginSubPhase:
		return "sub-phase"
	case OriginSlot:
		return "slot"
	case OriginRunWall:
		return "run-wall"
	}
	return "none"
}

// Reduction is a buffer reduced across its threads exactly as the runtime
// reduces it on readback.
type Reduction struct {
	Freq   Hz
	Phases [NumPhases]Window
	// Slots holds the reduced task-timing slots; all invalid when the
	// tail was not read.
	Slots [NumSlots]Window
	// Origin is the absolute counter value at device ts = 0 (see
	// OriginSource for the rule that chose it).
	Origin       Cycles
	OriginSource OriginSource
}

// Reduce reduces b across threads. The result does not depend on the order
// of the threads. freq is the counter frequency the spans are converted with.
func Reduce(b *Buffer, freq Hz) (*Reduction, error) {
	if freq == 0 {
		return nil, fmt.Errorf("%w: zero counter frequency", ErrRange)
	}
	if b.Threads < 1 || len(b.Phases) != b.Threads*NumPhases || (b.Slots != nil && len(b.Slots) != b.Threads*NumSlots) {
		return nil, fmt.Errorf("reduce: buffer with %d threads has %d phase and %d slot records", b.Threads, len(b.Phases), len(b.Slots))
	}
	r := &Reduction{Freq: freq}
	for p := range NumPhases {
		r.Phases[p] = reduceColumn(b.Phases, b.Threads, NumPhases, p)
	}
	if b.TailRead() {
		for s := range NumSlots {
			r.Slots[s] = reduceColumn(b.Slots, b.Threads, NumSlots, s)
		}
	}
	r.Origin, r.OriginSource = origin(r)
	return r, nil
}

// reduceColumn reduces record col of every thread: min(start) and max(end)
// over complete records.
func reduceColumn(rs []Record, threads, stride, col int) Window {
	w := Window{Start: Unset}
	for t := range threads {
		rec := rs[t*stride+col]
		if !rec.Complete() {
			continue
		}
		w.Start = min(w.Start, rec.Start)
		w.End = max(w.End, rec.End)
	}
	w.Valid = w.Start != Unset && w.End > w.Start
	if !w.Valid {
		return Window{Start: Unset}
	}
	return w
}

func origin(r *Reduction) (Cycles, OriginSource) {
	o := Unset
	for p := Preamble; p < NumPhases; p++ {
		if w := r.Phases[p]; w.Valid {
			o = min(o, w.Start)
		}
	}
	if o != Unset {
		return o, OriginSubPhase
	}
	for _, w := range r.Slots {
		if w.Valid {
			o = min(o, w.Start)
		}
	}
	if o != Unset {
		return o, OriginSlot
	}
	if w := r.Phases[RunWall]; w.Valid {
		return w.Start, OriginRunWall
	}
	return 0, OriginNone
}

// DeviceSpan is one device span as the runtime logs it (clk=dev).
type DeviceSpan struct {
	Name  string
	Depth int         // 2 for device_wall, 3 for its children
	TS    DeviceNanos // device-domain start, an offset from the run's origin
	Dur   DeviceNanos
	// StartCyc is the span's absolute start cycle: the reduced start of
	// the phase or slot. For device_wall it is RunWall's true start, which
	// lies before the origin although TS is 0 (the runtime's bracket).
	StartCyc Cycles
	// Phase is the phase the span reduces, or -1 for a task-timing slot.
	Phase Phase
	// Slot is the task-timing slot number, or -1 for a phase.
	Slot int
}

// Derived is a window computed from stamped phases, never stamped itself.
// It is not a DeviceSpan so it cannot be logged as if the runtime had
// measured it.
type Derived struct {
	Start, End Cycles
	TS, Dur    DeviceNanos // device-domain offset from the origin and length
}

// Spans returns the device spans the runtime would log for this run, in the
// runtime's order: device_wall (depth 2, ts 0, RunWall's duration), then the
// sub-phases (depth 3) in the order it logs them (see the package doc),
// then the complete task-timing slots 0..15 (depth 3).
//
// Durations and offsets are exact floors of cycles·1e9/Freq; spans whose
// duration is 0 ns are not emitted. A slot's ts is floor(dispatch − origin)
// and its duration floor(finish − origin) − ts, as the runtime computes
// them; a slot dispatched before the origin is not emitted (the runtime
// drops it too).
func (r *Reduction) Spans() ([]DeviceSpan, error) {
	spans := make([]DeviceSpan, 0, NumPhases+NumSlots)
	if w := r.Phases[RunWall]; w.Valid {
		d, err := r.Freq.Nanos(w.Len())
		if err != nil {
			return nil, fmt.Errorf("reduce: device_wall: %w", err)
		}
		if d != 0 {
			spans = append(spans, DeviceSpan{Name: strace.SpanDeviceWall, Depth: 2, Dur: d, StartCyc: w.Start, Phase: RunWall, Slot: -1})
		}
	}
	if r.OriginSource == OriginSubPhase {
		for _, p := range loggedOrder[1:] { // after RunWall, device_wall
			w := r.Phases[p]
			if !w.Valid {
				continue
			}
			d, err := r.Freq.Nanos(w.Len())
			if err != nil {
				return nil, fmt.Errorf("reduce: %s: %w", p.SpanName(), err)
			}
			if d == 0 {
				continue
			}
			ts, err := r.Freq.Nanos(w.Start - r.Origin)
			if err != nil {
				return nil, fmt.Errorf("reduce: %s: %w", p.SpanName(), err)
			}
			spans = append(spans, DeviceSpan{Name: p.SpanName(), Depth: 3, TS: ts, Dur: d, StartCyc: w.Start, Phase: p, Slot: -1})
		}
	}
	if r.OriginSource == OriginSubPhase || r.OriginSource == OriginSlot {
		for s, w := range r.Slots {
			if !w.Valid || w.Start < r.Origin {
				continue
			}
			ts, err := r.Freq.Nanos(w.Start - r.Origin)
			if err != nil {
				return nil, fmt.Errorf("reduce: %s: %w", SlotName(s), err)
			}
			end, err := r.Freq.Nanos(w.End - r.Origin)
			if err != nil {
				return nil, fmt.Errorf("reduce: %s: %w", SlotName(s), err)
			}
			if end <= ts {
				continue
			}
			spans = append(spans, DeviceSpan{Name: SlotName(s), Depth: 3, TS: ts, Dur: end - ts, StartCyc: w.Start, Phase: -1, Slot: s})
		}
	}
	return spans, nil
}

// Extent returns the window as an Extent, empty when it is not valid.
func (w Window) Extent() Extent[Cycles] {
	if !w.Valid {
		return Extent[Cycles]{}
	}
	return Extent[Cycles]{Start: w.Start, End: w.End}
}

// Effective returns the merged orch ∪ sched window ([Effective] of the two
// stamped windows: max(orch_end, sched_end) − min(orch_start,
// sched_start), or the one that is valid). ok is false when neither is
// valid.
func (r *Reduction) Effective() (d Derived, ok bool, err error) {
	e := Effective(r.Phases[OrchWindow].Extent(), r.Phases[SchedWindow].Extent())
	if e.Empty() {
		return Derived{}, false, nil
	}
	d.Start, d.End = e.Start, e.End
	if d.TS, err = r.Freq.Nanos(d.Start - r.Origin); err != nil {
		return Derived{}, false, fmt.Errorf("reduce: effective window: %w", err)
	}
	if d.Dur, err = r.Freq.Nanos(d.End - d.Start); err != nil {
		return Derived{}, false, fmt.Errorf("reduce: effective window: %w", err)
	}
	return d, true, nil
}

// WallOffset returns RunWall's true start and end as exact device-ns offsets
// from the origin, rounded outwards (start floored towards −∞, end ceiled):
// the runtime logs device_wall at ts = 0, but from a buffer its real start
// is known. ok is false when RunWall was not stamped.
func (r *Reduction) WallOffset() (start, end DeviceNanos, ok bool, err error) {
	w := r.Phases[RunWall]
	if !w.Valid || r.OriginSource == OriginNone {
		return 0, 0, false, nil
	}
	if start, err = r.offset(w.Start, false); err != nil {
		return 0, 0, false, err
	}
	if end, err = r.offset(w.End, true); err != nil {
		return 0, 0, false, err
	}
	return start, end, true, nil
}

// offset converts c − Origin to ns, signed, rounding down or up.
func (r *Reduction) offset(c Cycles, up bool) (DeviceNanos, error) {
	if c >= r.Origin {
		if up {
			return r.Freq.NanosCeil(c - r.Origin)
		}
		return r.Freq.Nanos(c - r.Origin)
	}
	var v DeviceNanos
	var err error
	if up {
		v, err = r.Freq.Nanos(r.Origin - c)
	} else {
		v, err = r.Freq.NanosCeil(r.Origin - c)
	}
	return -v, err
}
