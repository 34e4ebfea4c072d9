package analysis

import (
	"strconv"

	"github.com/phasetrace/phasetrace/reduce"
)

// Column is a column of the steps or binds table: its name, as CSV, JSON,
// Parquet and the Perfetto SQL package spell it, and what it holds.
type Column struct {
	Name string
	Doc  string
}

// StepTable names one of the two tables of the runs: steps, one row per
// run, and binds, one row per bind segment of a run, joined to steps on
// run (or on pid and inv).
type StepTable uint8

// The tables of the runs.
const (
	TableSteps StepTable = iota // one row per run: StepColumns
	TableBinds                  // one row per bind segment: BindColumns
)

// String returns the table's name: "steps" or "binds".
func (t StepTable) String() string {
	if t == TableBinds {
		return "binds"
	}
	return "steps"
}

// Columns returns the table's columns, in order.
func (t StepTable) Columns() []Column {
	if t == TableBinds {
		return BindColumns
	}
	return StepColumns
}

// cellKind is how a cell is written.
type cellKind uint8

const (
	cellInt cellKind = iota
	cellUint
	cellHex
	cellBool
	cellString
)

// cell is one value of a row; null when !ok.
type cell struct {
	kind cellKind
	ok   bool
	i    int64
	u    uint64
	s    string
}

func intCell(v int64) cell     { return cell{kind: cellInt, ok: true, i: v} }
func nullCell(v NullInt) cell  { return cell{kind: cellInt, ok: v.Valid, i: v.Int} }
func stringCell(s string) cell { return cell{kind: cellString, ok: true, s: s} }
func boolCell(b bool) cell {
	c := cell{kind: cellBool, ok: true}
	if b {
		c.i = 1
	}
	return c
}

// appendTo appends the cell's text (nothing for null).
func (c cell) appendTo(b []byte) []byte {
	switch {
	case !c.ok:
		return b
	case c.kind == cellUint:
		return strconv.AppendUint(b, c.u, 10)
	case c.kind == cellHex:
		return strconv.AppendUint(b, c.u, 16)
	case c.kind == cellBool:
		return strconv.AppendBool(b, c.i != 0)
	case c.kind == cellString:
		return append(b, c.s...)
	}
	return strconv.AppendInt(b, c.i, 10)
}

// stepColumn is a column of the steps table with how to read it.
type stepColumn struct {
	Column
	get func(*Step) cell
}

// bindColumn is a column of the binds table with how to read it.
type bindColumn struct {
	Column
	get func(*Step, *StepSegment) cell
}

var stepColumns = func() []stepColumn {
	cs := []stepColumn{
		{Column{"run", "the run's number in the trace (the debug.run argument of its slices)"}, func(s *Step) cell { return intCell(s.Run) }},
		{Column{"pid", "process"}, func(s *Step) cell { return intCell(int64(s.Pid)) }},
		{Column{"tid", "thread of its chip.run"}, func(s *Step) cell { return intCell(s.Tid) }},
		{Column{"slot", "its chip.run's slot_id, the pipeline lane; empty without one"}, func(s *Step) cell { return nullCell(s.Slot) }},
		{Column{"dev", "device (device_wall's dev=); empty without one"}, func(s *Step) cell { return nullCell(s.Dev) }},
		{Column{"hid", "callable, hex as in the trace"}, func(s *Step) cell { return cell{kind: cellHex, ok: true, u: s.Hid} }},
		{Column{"inv", "invocation"}, func(s *Step) cell { return cell{kind: cellUint, ok: true, u: s.Inv} }},
		{Column{"start_ns", "chip.run's start, trace time (CLOCK_MONOTONIC ns)"}, func(s *Step) cell { return intCell(s.Start) }},
		{Column{"wall_ns", "start_ns on the trace's wall clock (Unix ns): wall_ns + (start − mono_ns) of the wall-clock anchor the trace processor reads there; empty without anchors"}, func(s *Step) cell { return nullCell(s.Wall) }},
		{Column{"chip_run_ns", "chip.run's duration: the step's host time"}, func(s *Step) cell { return intCell(s.ChipRun) }},
		{Column{"bind_ns", "chip.run.bind's duration"}, func(s *Step) cell { return nullCell(s.Bind) }},
		{Column{"prep_ns", "chip.run start → chip.run.runner_run start: the host's work before the device's"}, func(s *Step) cell { return nullCell(s.Prep) }},
		{Column{"gap_ns", "start_ns − the chip.run end of the previous run on its lane (pid, tid, slot; previous by run); empty for a lane's first; negative when they overlap"}, func(s *Step) cell { return nullCell(s.Gap) }},
	}
	for p := reduce.RunWall; p < reduce.NumPhases; p++ {
		doc := "device-domain duration of " + p.SpanName() + " (summed if logged twice)"
		if p == reduce.RunWall {
			doc = "device_wall's device-domain duration: the whole on-NPU wall"
		}
		cs = append(cs, stepColumn{Column{phaseColumn(p), doc}, func(s *Step) cell { return nullCell(s.Phases[p]) }})
	}
	return append(cs,
		stepColumn{Column{"effective_ns", "orch ∪ sched: max(orch end, sched end) − min(orch start, sched start), device ns"}, func(s *Step) cell { return nullCell(s.Effective) }},
		stepColumn{Column{"bound_ns", "the widest bound_ns of its device slices drawn: how far a placed device span can be from the truth"}, func(s *Step) cell { return nullCell(s.Bound) }},
		stepColumn{Column{"cold", "the first run of its callable (pid, hid) in its process"}, func(s *Step) cell { return boolCell(s.Cold) }},
	)
}()

// phaseColumn is the column of a device phase: its last word and "_ns"
// (device_wall_ns, preamble_ns, ...).
func phaseColumn(p reduce.Phase) string { return p.Leaf() + "_ns" }

var bindColumns = []bindColumn{
	{Column{"run", "the run's number in the trace: joins steps.run"}, func(s *Step, _ *StepSegment) cell { return intCell(s.Run) }},
	{Column{"pid", "process"}, func(s *Step, _ *StepSegment) cell { return intCell(int64(s.Pid)) }},
	{Column{"inv", "invocation"}, func(s *Step, _ *StepSegment) cell { return cell{kind: cellUint, ok: true, u: s.Inv} }},
	{Column{"segment", "the bind segment (args, arena_build, ...)"}, func(_ *Step, b *StepSegment) cell { return stringCell(b.Segment) }},
	{Column{"source", "span (chip.run.bind.<segment>), bind_phase (legacy line) or host_phase_records"}, func(_ *Step, b *StepSegment) cell { return stringCell(b.Source.String()) }},
	{Column{"start_ns", "its start, trace time"}, func(_ *Step, b *StepSegment) cell { return intCell(b.Start) }},
	{Column{"dur_ns", "its duration"}, func(_ *Step, b *StepSegment) cell { return intCell(b.Dur) }},
	{Column{"on_cpu_ns", "the bind thread's CPU time within it (cpu_ns); empty where not logged"}, func(_ *Step, b *StepSegment) cell { return nullCell(b.CPU) }},
	{Column{"off_cpu_ns", "dur_ns − on_cpu_ns: blocked or preempted"}, func(_ *Step, b *StepSegment) cell { return nullCell(b.OffCPU()) }},
}

// StepColumns are the columns of the steps table, in order. The slice must
// not be modified.
var StepColumns = func() []Column {
	out := make([]Column, len(stepColumns))
	for i, c := range stepColumns {
		out[i] = c.Column
	}
	return out
}()

// BindColumns are the columns of the binds table, in order. The slice
// must not be modified.
var BindColumns = func() []Column {
	out := make([]Column, len(bindColumns))
	for i, c := range bindColumns {
		out[i] = c.Column
	}
	return out
}()
