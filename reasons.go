package phasetrace

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/phasetrace/phasetrace/perfetto"
	"github.com/phasetrace/phasetrace/reduce"
	"github.com/phasetrace/phasetrace/strace"
)

// Reason is why records were dropped, repaired, moved, set aside,
// superseded or drawn without an arrow: a stable snake_case id, the key of
// the Summary's counts and of its JSON. Text says it in English, as the
// human summary (WriteText) does.
type Reason string

// The reasons the converter counts under.
const (
	// Spans (and other records) whose interval is not one.
	ReasonNegativeDuration Reason = "negative_duration"
	ReasonNegativeHostTS   Reason = "negative_host_ts"
	ReasonTSDurOverflow    Reason = "ts_dur_overflow"

	// Records that repeat an earlier one. A log given twice, or holding a
	// capture appended again, is drawn once. A capture ends where the log
	// prefixes' mono_ns runs backwards by more than a second. A repeat is
	// counted with what it repeats, and neither drawn nor linked by an
	// arrow. Three rules find repeats:
	//
	//   - a capture whose bytes equal an earlier capture's, of any log,
	//     with all its records (ReasonRepeatedCapture);
	//   - a span of a capture whose (pid, tid, inv, name, ts, dur) an
	//     earlier capture of the same log holds (ReasonRepeatedSpan). The
	//     captures are compared by sketches of a fixed size. The spans the
	//     later capture holds on its own, changed or added, are drawn;
	//   - a span equal in (pid, tid, inv, name, ts, dur) to one of the last
	//     4 096 spans (ReasonRepeatedSpan). Logs given together are read
	//     merged in the order they were written, so a copy's spans come
	//     right after their twins.
	//
	// What none of these finds is drawn, on an overflow lane where it
	// cannot nest. That is a capture that repeats only part of an earlier
	// one, a capture past the first 64 of a conversion, or a span written
	// twice far apart within one capture. A log given twice as two inputs,
	// its copy changed, is read merged with it: its spans are found, its
	// other records taken as they come.
	ReasonRepeatedCapture Reason = "repeated_capture"
	ReasonRepeatedSpan    Reason = "repeated_span"
	ReasonRepeatedRecord  Reason = "repeated_bind_phase"
	ReasonRepeatedWall    Reason = "repeated_wall_anchor"

	// Spans the trace writer cannot take.
	ReasonTrackLimit       Reason = "track_limit"
	ReasonLanesFull        Reason = "lanes_full"
	ReasonLanesLimit       Reason = "lanes_track_limit"
	ReasonOutsideTimeRange Reason = "outside_time_range"
	ReasonWriterRefused    Reason = "writer_refused"

	// Spans outside the window asked for (WithWindow): not a loss.
	ReasonOutsideWindow Reason = "outside_window"

	// Slices moved to an overflow lane beside their track.
	ReasonCouldNotNest   Reason = "could_not_nest"
	ReasonPartialOverlap Reason = "partial_overlap"
	ReasonTooDeep        Reason = "too_deep"
	ReasonTimeBackwards  Reason = "time_backwards"

	// Bind phase lines and host_phase_records.
	ReasonBindOutsideBind      Reason = "bind_phase_outside_bind"
	ReasonPassesWithoutBind    Reason = "passes_without_bind"
	ReasonImpossibleInterval   Reason = "host_phase_records_impossible_interval"
	ReasonBindPhaseSuperseded  Reason = "bind_phase_superseded"
	ReasonRemoteWallSuperseded Reason = "remote_wall_anchor_superseded"
	// ReasonCompareWallSuperseded: a comparison's measure side is moved
	// onto the base side's time, whose wall clock the trace keeps.
	ReasonCompareWallSuperseded Reason = "compare_wall_anchor_superseded"

	// Wall-clock anchors set aside.
	ReasonWallDisagrees  Reason = "wall_anchor_disagrees"
	ReasonWallBefore1970 Reason = "wall_anchor_before_1970"
	ReasonWallOffAxis    Reason = "wall_anchor_off_axis"

	// Slices other than spans (derived effective slices, bind phase
	// lines, host_phase_records entries) the trace writer cannot take.
	ReasonEffectiveTrackLimit Reason = "effective_window_track_limit"
	ReasonEffectiveOutside    Reason = "effective_window_outside_time_range"
	ReasonEffectiveRefused    Reason = "effective_window_writer_refused"
	ReasonHostPhaseTrackLimit Reason = "host_phase_record_track_limit"
	ReasonHostPhaseOutside    Reason = "host_phase_record_outside_time_range"
	ReasonHostPhaseRefused    Reason = "host_phase_record_writer_refused"
	ReasonBindPhaseTrackLimit Reason = "bind_phase_track_limit"
	ReasonBindPhaseOutside    Reason = "bind_phase_outside_time_range"
	ReasonBindPhaseRefused    Reason = "bind_phase_writer_refused"

	// Slices other than spans outside the window asked for (WithWindow):
	// not a loss.
	ReasonEffectiveOutsideWindow Reason = "effective_window_outside_window"
	ReasonHostPhaseOutsideWindow Reason = "host_phase_record_outside_window"
	ReasonBindPhaseOutsideWindow Reason = "bind_phase_outside_window"

	// Remote machines.
	ReasonUnmapped Reason = "remote_span_unmapped"

	// Device spans not drawn, and repaired.
	ReasonDeviceMisfit          Reason = "device_span_misfit"
	ReasonDeviceUnplaced        Reason = "device_spans_unplaced"
	ReasonDeviceNoEvidence      Reason = "device_spans_no_host_evidence"
	ReasonDeviceBuffers         Reason = "device_buffers_do_not_reduce"
	ReasonDeviceAnchorJoined    Reason = "device_anchor_joined_contradicted"
	ReasonDeviceAnchorSetAside  Reason = "device_anchor_set_aside"
	ReasonTruncation            Reason = "truncation_clamped"
	ReasonNoConsistentPlacement Reason = "no_consistent_placement"
	ReasonNotCarried            Reason = "not_carried_to_dispatching_host"
	ReasonDeviceOffsetsRange    Reason = "device_offsets_out_of_range"

	// Why a run's device spans are unaligned or only contained
	// (DeviceSummary.Reasons, DeviceSummary.ContainedReasons).
	ReasonNoClockAnchors       Reason = "no_clock_anchors"
	ReasonNoOrigin             Reason = "no_origin_cyc"
	ReasonOriginFar            Reason = "origin_cyc_far"
	ReasonNoRunnerRun          Reason = "no_runner_run"
	ReasonAnchorsDisagree      Reason = "anchors_disagree_with_containment"
	ReasonDeviceWallDevRange   Reason = "device_wall_dev_out_of_range"
	ReasonDeviceWallNoDev      Reason = "device_wall_no_dev"
	ReasonPlacementUnexplained Reason = "placement_unexplained"

	// Counter values not written, and runs left out of a counter
	// (Summary.CountersNotDrawn).
	ReasonCounterTrackLimit Reason = "counter_track_limit"
	ReasonInFlightLate      Reason = "in_flight_root_late"

	// Hand-offs drawn without an arrow (Summary.Unlinked).
	ReasonLinkNoTrack             Reason = "flow_end_over_track_limit"
	ReasonDispatchNoSubmit        Reason = "dispatch_without_submit"
	ReasonSubmitToDispatchUnended Reason = "submit_to_dispatch_end_not_drawn"
	ReasonDispatchToRunUnended    Reason = "dispatch_to_run_end_not_drawn"
	ReasonRemoteDispatchUnended   Reason = "remote_dispatch_to_run_end_not_drawn"
	ReasonRemoteCompleteUnended   Reason = "remote_run_to_complete_end_not_drawn"
	ReasonRunToDeviceUnended      Reason = "run_to_device_end_not_drawn"
	ReasonRunToDeviceNotAfter     Reason = "run_to_device_wall_not_after_start"
	ReasonArrowAcrossParts        Reason = "arrow_across_parts"

	// Why a remote machine is not placed by causality (HostSummary.Reason).
	//
	// ReasonHostAmbiguous: the logs admit more than one assignment of
	// sessions to workers.
	ReasonHostAmbiguous Reason = "host_ambiguous_worker"
	// ReasonHostNoDispatcher: no input dispatched to remote workers.
	ReasonHostNoDispatcher Reason = "host_no_dispatching_log"
	// ReasonHostNoMatch: no worker's tasks admit its runs.
	ReasonHostNoMatch Reason = "host_no_matching_worker"
	// ReasonHostNoFit: its tasks do not place its clock (reduce.FitHost
	// failed: one-sided, or contradictory).
	ReasonHostNoFit Reason = "host_tasks_do_not_fit"
	// ReasonHostFewTasks: too few tasks matched to tell the match from a
	// coincidence (reduce.ErrHostFewTasks).
	ReasonHostFewTasks Reason = "host_too_few_tasks"
	// ReasonHostRegular: the tasks were sent at too steady a pace to tell
	// the match from a coincidence (reduce.ErrHostRegular).
	ReasonHostRegular Reason = "host_tasks_too_regular"
	// ReasonHostRateAtLimit: the tasks allow a rate at the edge of the
	// allowed range (reduce.ErrHostRateAtLimit).
	ReasonHostRateAtLimit Reason = "host_rate_at_limit"
	// ReasonHostOutsideTasks: no clock of the model keeps every run inside
	// its task (reduce.ErrHostOutsideTasks).
	ReasonHostOutsideTasks Reason = "host_runs_outside_tasks"
	// ReasonHostWallDisagrees: its wall-clock anchor disagrees with the
	// tasks' clock (reduce.ErrHostWallDisagrees).
	ReasonHostWallDisagrees Reason = "host_wall_clock_disagrees"
)

// reasonTable is every declared Reason, in the order of the constants,
// with what is said of it: its id, its text, and whether what it counts
// lies outside the window asked for (WithWindow), which is not a loss. It
// is the one place a reason is described; Text, Reasons, the summary's
// JSON and WriteText read it (TestReasonTable: a constant without a row, a
// row without a text, or an id twice fails).
var reasonTable = [...]reasonRow{
	{id: ReasonNegativeDuration, text: "negative duration"},
	{id: ReasonNegativeHostTS, text: "negative host timestamp"},
	{id: ReasonTSDurOverflow, text: "ts + dur beyond the int64 range"},

	{id: ReasonRepeatedCapture, text: "duplicate: a capture that repeats an earlier one byte for byte"},
	{id: ReasonRepeatedSpan, text: "duplicate: the same span again"},
	{id: ReasonRepeatedRecord, text: "duplicate: the same bind phase line again"},
	{id: ReasonRepeatedWall, text: "duplicate: the same wall-clock anchor again"},

	{id: ReasonTrackLimit, text: "over the trace's track limit"},
	{id: ReasonLanesFull, text: "could not nest on its track, whose overflow lanes are all taken"},
	{id: ReasonLanesLimit, text: "could not nest on its track, and the track limit leaves no room for an overflow lane"},
	{id: ReasonOutsideTimeRange, text: "placed outside the trace's time range"},
	{id: ReasonWriterRefused, text: "refused by the trace writer"},

	{id: ReasonOutsideWindow, text: "outside the window asked for", window: true},

	{id: ReasonCouldNotNest, text: "could not nest on its track"},
	{id: ReasonPartialOverlap, text: "partially overlaps another slice on its track"},
	{id: ReasonTooDeep, text: "nested deeper than the trace processor keeps (" + itoa(perfetto.MaxDepth) + " levels)"},
	{id: ReasonTimeBackwards, text: "lies among slices drawn long before (time runs backwards)"},

	{id: ReasonBindOutsideBind, text: "bind phase lines outside every chip.run.bind"},
	{id: ReasonPassesWithoutBind, text: "host_phase_records passes without their chip.run.bind"},
	{id: ReasonImpossibleInterval, text: "host_phase_records entries with an impossible interval"},
	{id: ReasonBindPhaseSuperseded, text: "bind phase lines drawn by host_phase_records or segment spans"},
	{id: ReasonRemoteWallSuperseded, text: "wall-clock anchors of remote machines placed by the tasks they ran"},
	{id: ReasonCompareWallSuperseded, text: "wall-clock anchors of a comparison's measure side, moved onto the base side's time (the trace keeps base's wall clock)"},

	{id: ReasonWallDisagrees, text: "wall-clock anchors that disagree with the others by more than 1 s"},
	{id: ReasonWallBefore1970, text: "wall-clock anchors with a wall time before 1970 (wall_ns < 0)"},
	{id: ReasonWallOffAxis, text: "wall-clock anchors of a remote machine drawn at its own times"},

	{id: ReasonEffectiveTrackLimit, text: otherEffective + " over the trace's track limit"},
	{id: ReasonEffectiveOutside, text: otherEffective + " outside the trace's time range"},
	{id: ReasonEffectiveRefused, text: otherEffective + " refused by the trace writer"},
	{id: ReasonHostPhaseTrackLimit, text: otherHostPhase + " over the trace's track limit"},
	{id: ReasonHostPhaseOutside, text: otherHostPhase + " outside the trace's time range"},
	{id: ReasonHostPhaseRefused, text: otherHostPhase + " refused by the trace writer"},
	{id: ReasonBindPhaseTrackLimit, text: otherBindPhase + " over the trace's track limit"},
	{id: ReasonBindPhaseOutside, text: otherBindPhase + " outside the trace's time range"},
	{id: ReasonBindPhaseRefused, text: otherBindPhase + " refused by the trace writer"},

	{id: ReasonEffectiveOutsideWindow, text: otherEffective + " outside the window asked for", window: true},
	{id: ReasonHostPhaseOutsideWindow, text: otherHostPhase + " outside the window asked for", window: true},
	{id: ReasonBindPhaseOutsideWindow, text: otherBindPhase + " outside the window asked for", window: true},

	{id: ReasonUnmapped, text: "a remote machine's span whose time leaves the int64 range on the dispatching host's axis"},

	{id: ReasonDeviceMisfit, text: "device span its run's host windows cannot hold (impossible device ts or dur)"},
	{id: ReasonDeviceUnplaced, text: "device spans with no consistent placement"},
	{id: ReasonDeviceNoEvidence, text: "device spans with no host evidence to place them"},
	{id: ReasonDeviceBuffers, text: "device-phase buffers that do not reduce"},
	{id: ReasonDeviceAnchorJoined, text: "device clock anchors joined to the next record on their line whose dev_freq the other anchors of their device contradict"},
	{id: ReasonDeviceAnchorSetAside, text: "device clock anchors set aside: each conflicted with its device's other anchors, which place the runs without it"},
	{id: ReasonTruncation, text: "device boundary within the runtime's ns truncation (2 ns) of its neighbour's: clamped to it"},
	{id: ReasonNoConsistentPlacement, text: "no placement consistent with its host windows"},
	{id: ReasonNotCarried, text: "not carried onto the dispatching host's axis"},
	{id: ReasonDeviceOffsetsRange, text: "device offsets outside the host clock's range"},

	{id: ReasonNoClockAnchors, text: "no clock anchors for the device"},
	{id: ReasonNoOrigin, text: "no origin_cyc on device_wall"},
	{id: ReasonOriginFar, text: "origin_cyc too far from every anchor"},
	{id: ReasonNoRunnerRun, text: "no runner_run window"},
	{id: ReasonAnchorsDisagree, text: "clock anchors disagree with containment (see the device's conflicts)"},
	{id: ReasonDeviceWallDevRange, text: "device_wall's dev= is out of range"},
	{id: ReasonDeviceWallNoDev, text: "device_wall names no dev="},
	{id: ReasonPlacementUnexplained, text: "placed without a reason the converter knows (see the slices' placement_reason)"},

	{id: ReasonCounterTrackLimit, text: "counter values over the trace's track limit"},
	{id: ReasonInFlightLate, text: "runs left out of their process's runs in flight: the root was read more than the flow horizon after it started, when the counts before it were written"},

	{id: ReasonLinkNoTrack, text: "hand-off with an end over the trace's track limit"},
	{id: ReasonDispatchNoSubmit, text: "node.dispatch with no node.submit of its run_id and task slot within the flow horizon"},
	{id: ReasonSubmitToDispatchUnended, text: FlowSubmitToDispatch.String() + " whose other end is not drawn"},
	{id: ReasonDispatchToRunUnended, text: FlowDispatchToRun.String() + " whose other end is not drawn"},
	{id: ReasonRemoteDispatchUnended, text: FlowRemoteDispatchToRun.String() + " whose other end is not drawn"},
	{id: ReasonRemoteCompleteUnended, text: FlowRemoteRunToComplete.String() + " whose other end is not drawn"},
	{id: ReasonRunToDeviceUnended, text: FlowRunToDevice.String() + " whose other end is not drawn"},
	{id: ReasonRunToDeviceNotAfter, text: FlowRunToDevice.String() + " whose device_wall is placed to start no later than its runner_run (an arrow's start must come first)"},
	{id: ReasonArrowAcrossParts, text: "hand-off whose ends are in different parts of a split trace"},

	{id: ReasonHostAmbiguous, text: "remote machine whose logs do not determine which worker it served"},
	{id: ReasonHostNoDispatcher, text: "remote machine with no dispatching log (network1.dispatch to a remote_l3 endpoint) among the inputs"},
	{id: ReasonHostNoMatch, text: "remote machine whose runs no worker's tasks match"},
	{id: ReasonHostNoFit, text: "remote machine whose tasks do not place its clock"},
	{id: ReasonHostFewTasks, text: "remote machine with too few tasks matched to tell the match from a coincidence"},
	{id: ReasonHostRegular, text: "remote machine whose tasks were sent at too steady a pace to tell the match from a coincidence"},
	{id: ReasonHostRateAtLimit, text: "remote machine whose tasks allow a clock rate at the edge of the allowed range"},
	{id: ReasonHostOutsideTasks, text: "remote machine whose runs no clock of the model keeps inside their tasks"},
	{id: ReasonHostWallDisagrees, text: "remote machine whose wall-clock anchor disagrees with its tasks' clock"},
}

// reasonRow is a row of reasonTable.
type reasonRow struct {
	id     Reason
	text   string
	window bool // outside the window asked for: not a loss
}

// reasonRows finds a reason's row in reasonTable.
var reasonRows = func() map[Reason]*reasonRow {
	m := make(map[Reason]*reasonRow, len(reasonTable))
	for i := range reasonTable {
		m[reasonTable[i].id] = &reasonTable[i]
	}
	return m
}()

// The kinds of slices other than spans (converter.other).
const (
	otherEffective = "derived Effective windows"
	otherHostPhase = "host_phase_records entries"
	otherBindPhase = "bind phase lines"
)

// otherReasons are, per kind of other slice, the reasons it is not drawn:
// over the track limit, outside the time range, refused by the writer,
// outside the window asked for.
var otherReasons = map[string][4]Reason{
	otherEffective: {ReasonEffectiveTrackLimit, ReasonEffectiveOutside, ReasonEffectiveRefused, ReasonEffectiveOutsideWindow},
	otherHostPhase: {ReasonHostPhaseTrackLimit, ReasonHostPhaseOutside, ReasonHostPhaseRefused, ReasonHostPhaseOutsideWindow},
	otherBindPhase: {ReasonBindPhaseTrackLimit, ReasonBindPhaseOutside, ReasonBindPhaseRefused, ReasonBindPhaseOutsideWindow},
}

// outsideWindow reports whether r counts records outside the window asked
// for, which are not a loss.
func (r Reason) outsideWindow() bool {
	row, ok := reasonRows[r]
	return ok && row.window
}

// Text is the reason in English, as WriteText says it; an id not declared
// here is its own text.
func (r Reason) Text() string {
	if row, ok := reasonRows[r]; ok {
		return row.text
	}
	return string(r)
}

// Reasons lists every declared Reason, sorted by id.
func Reasons() []Reason {
	rs := make([]Reason, 0, len(reasonTable))
	for _, row := range reasonTable {
		rs = append(rs, row.id)
	}
	slices.Sort(rs)
	return rs
}

// causeReasons are the reasons of reduce's causes of a run not aligned
// (reduce.Mapping.Causes), one each.
var causeReasons = [...]struct {
	cause  reduce.Cause
	reason Reason
}{
	{reduce.CauseNoAnchors, ReasonNoClockAnchors},
	{reduce.CauseNoOrigin, ReasonNoOrigin},
	{reduce.CauseOriginFar, ReasonOriginFar},
	{reduce.CauseNoRunner, ReasonNoRunnerRun},
}

// bumpCauses counts n under the reason of each of causes, and under
// ReasonPlacementUnexplained if any has none.
func bumpCauses(m *ReasonCounts, causes reduce.Cause, n int64) {
	for _, c := range causeReasons {
		if causes&c.cause != 0 {
			bump(m, c.reason, n)
			causes &^= c.cause
		}
	}
	if causes != 0 {
		bump(m, ReasonPlacementUnexplained, n)
	}
}

// ReasonCounts counts records by reason. It marshals to JSON as a list
// sorted by id: [{"reason": "track_limit", "count": 4, "text": "..."}].
type ReasonCounts map[Reason]int64

type reasonCount struct {
	Reason Reason `json:"reason"`
	Count  int64  `json:"count"`
	Text   string `json:"text"`
}

// sorted returns the reasons counted, sorted by id.
func (c ReasonCounts) sorted() []Reason {
	rs := make([]Reason, 0, len(c))
	for r := range c {
		rs = append(rs, r)
	}
	slices.Sort(rs)
	return rs
}

// byText returns the reasons counted, sorted by their text.
func (c ReasonCounts) byText() []Reason {
	rs := c.sorted()
	slices.SortFunc(rs, func(a, b Reason) int { return strings.Compare(a.Text(), b.Text()) })
	return rs
}

// MarshalJSON writes the counts as a list sorted by reason id.
func (c ReasonCounts) MarshalJSON() ([]byte, error) {
	l := make([]reasonCount, 0, len(c))
	for _, r := range c.sorted() {
		l = append(l, reasonCount{r, c[r], r.Text()})
	}
	return json.Marshal(l)
}

// UnmarshalJSON reads what MarshalJSON writes; the text is derived from
// the id.
func (c *ReasonCounts) UnmarshalJSON(b []byte) error {
	var l []reasonCount
	if err := json.Unmarshal(b, &l); err != nil {
		return err
	}
	if l == nil {
		*c = nil
		return nil
	}
	m := make(ReasonCounts, len(l))
	for _, e := range l {
		if _, dup := m[e.Reason]; dup {
			return fmt.Errorf("phasetrace: reason %q counted twice", e.Reason)
		}
		m[e.Reason] = e.Count
	}
	*c = m
	return nil
}

// FlowKind is a kind of arrow between two spans: a stable snake_case id.
type FlowKind string

// The kinds of arrows drawn.
const (
	// FlowSubmitToDispatch: node.submit → node.dispatch.
	FlowSubmitToDispatch FlowKind = "submit_to_dispatch"
	// FlowDispatchToRun: node.dispatch → the chip.run it launched.
	FlowDispatchToRun FlowKind = "dispatch_to_run"
	// FlowRemoteDispatchToRun: network1.dispatch → the remote run.
	FlowRemoteDispatchToRun FlowKind = "remote_dispatch_to_run"
	// FlowRemoteRunToComplete: the remote run → network1.complete.
	FlowRemoteRunToComplete FlowKind = "remote_run_to_complete"
	// FlowRunToDevice: a run's chip.run.runner_run → its device_wall, the
	// host stage that launched the device's work → that work on the device.
	FlowRunToDevice FlowKind = "run_to_device"
)

var flowEnds = map[FlowKind][2]string{
	FlowSubmitToDispatch:    {"node.submit", "node.dispatch"},
	FlowDispatchToRun:       {"node.dispatch", "chip.run"},
	FlowRemoteDispatchToRun: {"network1.dispatch", "remote run"},
	FlowRemoteRunToComplete: {"remote run", "network1.complete"},
	FlowRunToDevice:         {strace.SpanRunnerRun, strace.SpanDeviceWall},
}

// From is the span an arrow of the kind starts at.
func (k FlowKind) From() string { return flowEnds[k][0] }

// To is the span an arrow of the kind ends at.
func (k FlowKind) To() string { return flowEnds[k][1] }

// String is "from → to", as WriteText says it.
func (k FlowKind) String() string {
	if _, ok := flowEnds[k]; !ok {
		return string(k)
	}
	return k.From() + " → " + k.To()
}

// unended is the reason an arrow of the kind is not drawn: an end of it is
// not.
func (k FlowKind) unended() Reason {
	switch k {
	case FlowSubmitToDispatch:
		return ReasonSubmitToDispatchUnended
	case FlowDispatchToRun:
		return ReasonDispatchToRunUnended
	case FlowRemoteDispatchToRun:
		return ReasonRemoteDispatchUnended
	case FlowRunToDevice:
		return ReasonRunToDeviceUnended
	}
	return ReasonRemoteCompleteUnended
}

// FlowCounts counts the arrows drawn by kind. It marshals to JSON as a
// list sorted by kind: [{"kind": "submit_to_dispatch", "from":
// "node.submit", "to": "node.dispatch", "count": 24}].
type FlowCounts map[FlowKind]int64

type flowCount struct {
	Kind  FlowKind `json:"kind"`
	From  string   `json:"from"`
	To    string   `json:"to"`
	Count int64    `json:"count"`
}

// MarshalJSON writes the counts as a list sorted by kind.
func (c FlowCounts) MarshalJSON() ([]byte, error) {
	l := make([]flowCount, 0, len(c))
	for _, k := range c.sorted() {
		l = append(l, flowCount{k, k.From(), k.To(), c[k]})
	}
	return json.Marshal(l)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (c *FlowCounts) UnmarshalJSON(b []byte) error {
	var l []flowCount
	if err := json.Unmarshal(b, &l); err != nil {
		return err
	}
	if l == nil {
		*c = nil
		return nil
	}
	m := make(FlowCounts, len(l))
	for _, e := range l {
		if _, dup := m[e.Kind]; dup {
			return fmt.Errorf("phasetrace: flow kind %q counted twice", e.Kind)
		}
		m[e.Kind] = e.Count
	}
	*c = m
	return nil
}

// sorted returns the kinds counted, sorted by id.
func (c FlowCounts) sorted() []FlowKind {
	ks := make([]FlowKind, 0, len(c))
	for k := range c {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// byText returns the kinds counted, sorted by their String.
func (c FlowCounts) byText() []FlowKind {
	ks := make([]FlowKind, 0, len(c))
	for k := range c {
		ks = append(ks, k)
	}
	slices.SortFunc(ks, func(a, b FlowKind) int { return strings.Compare(a.String(), b.String()) })
	return ks
}

type exampleJSON struct {
	Reason Reason `json:"reason"`
	Text   string `json:"text"`
	At     string `json:"at"`
	Detail string `json:"detail,omitempty"`
}

// MarshalJSON writes the example with its reason's text beside the id.
func (e Example) MarshalJSON() ([]byte, error) {
	return json.Marshal(exampleJSON{e.Reason, e.Reason.Text(), e.At, e.Detail})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (e *Example) UnmarshalJSON(b []byte) error {
	var j exampleJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*e = Example{Reason: j.Reason, At: j.At, Detail: j.Detail}
	return nil
}

// MarshalJSON writes the summary with its reason's text beside the id
// ("reason_text"); decoding ignores it.
func (h HostSummary) MarshalJSON() ([]byte, error) {
	type plain HostSummary // without this method
	j := struct {
		plain
		ReasonText string `json:"reason_text,omitempty"`
	}{plain: plain(h)}
	if h.Reason != "" {
		j.ReasonText = h.Reason.Text()
	}
	return json.Marshal(j)
}

func bump(m *ReasonCounts, reason Reason, n int64) {
	if n == 0 {
		return
	}
	if *m == nil {
		*m = ReasonCounts{}
	}
	(*m)[reason] += n
}
