package phasetrace

import (
	"github.com/phasetrace/phasetrace/internal/held"
	"github.com/phasetrace/phasetrace/perfetto"
	"github.com/phasetrace/phasetrace/strace"
)

// runLinks ties the slices of the run being drawn together, two ways:
//
//   - the run key: every slice of the run, host and device — its bind
//     segments and phase lines, its host_phase_records, its Effective
//     window and task slots, a remote machine's runs alike, and its root's
//     slice in a split trace's overview — carries the argument run, the
//     run's number among the runs the converter collected: 1 for the first
//     whose spans were complete, and so on in the log's order. Every run
//     collected is numbered, drawn or not, so that a run keeps its number
//     in a window or a part of the same logs;
//   - an arrow (FlowRunToDevice) from its chip.run.runner_run to its
//     device_wall, from the host stage that ran the device's work to that
//     work.
//
// The arrow waits for nothing: the runtime logs a run's device spans after
// its runner_run and before its chip.run, so both ends are in the run the
// collector hands over, and the run is drawn whole between two flushes of
// the writer. The arrow is made when runner_run is drawn and settled when
// device_wall is, or when the run is done; at most one is open at a time,
// whatever the log's length. Should device_wall not be drawn after all
// (not placed, outside the window, over the track limit, no later than
// runner_run), the arrow is counted under its reason and its id taken back
// from runner_run, which the writer still holds (perfetto's
// LeaveOutFlows). A run the collector hands over in two pieces (more runs
// waiting than it holds, or device spans given after their root) has no
// arrow: neither piece holds both ends.
type runLinks struct {
	runs int64        // runs numbered so far
	key  perfetto.Arg // the run being drawn's key: Int("run", runs)
	wall bool         // the run being drawn has a device_wall span, the arrow's end
	// The run's arrow while its device_wall end is to come (open): its id,
	// and the start of runner_run, which the end must come after.
	open bool
	from int64
	ids  [1]perfetto.FlowID
}

// next numbers the next run, whose device spans are dev.
func (l *runLinks) next(dev []held.Span) {
	l.runs++
	l.key = perfetto.Int("run", l.runs)
	l.wall, l.open = false, false
	for i := range dev {
		if dev[i].Name == strace.SpanDeviceWall {
			l.wall = true
			break
		}
	}
}

// startRunArrow makes the arrow from runner, the run's runner_run, to its
// device_wall when the run has one, and returns the flow ids that start at
// runner (valid until the next run).
func (d *runDrawer) startRunArrow(runner *held.Span) []perfetto.FlowID {
	l := d.links
	if !l.wall || l.open {
		return nil
	}
	id := d.flows.NextID()
	d.arrows.add(id, FlowRunToDevice)
	l.open, l.from, l.ids[0] = true, runner.TS, id
	return l.ids[:]
}

// endRunArrow returns the flow ids that end at the run's device_wall, to
// be drawn at ts: the run's open arrow, once. An arrow whose end would not
// come after its start is not drawn, and counted.
func (dv *deviceDrawer) endRunArrow(out sink, ts int64) []perfetto.FlowID {
	l := dv.links
	if !l.open {
		return nil
	}
	l.open = false
	if ts <= l.from {
		dv.leaveOut(out, l.ids[:], ReasonRunToDeviceNotAfter)
		return nil
	}
	return dv.arrows.live(l.ids[:])
}

// closeRunArrow settles the run's arrow once the run is drawn, if its
// device_wall end never came: that end is not drawn.
func (d *runDrawer) closeRunArrow(out sink) {
	if l := d.links; l.open {
		l.open = false
		d.leaveOut(out, l.ids[:], ReasonRunToDeviceUnended)
	}
}

// leaveOut settles arrows of ids, an end of which was handed and the other
// will not be, under reason (unless counted already), and has the writer
// leave their ids out of the end it holds. A run is drawn between two
// flushes, so the writer holds that end still.
func (cv *sliceDrawer) leaveOut(out sink, ids []perfetto.FlowID, reason Reason) {
	if len(ids) == 0 {
		return
	}
	cv.arrows.abandoned(ids, reason)
	out.w.LeaveOutFlows(ids)
}
