package reduce

import (
	"fmt"
	"strings"

	"github.com/phasetrace/phasetrace/strace"
)

// Phase is an index into a thread's phase records, in wire order.
type Phase int

// The phases in wire order (the index of each record within a thread's
// block of NumPhases records).
const (
	RunWall Phase = iota
	Preamble
	SoLoad
	GraphBuild
	PostOrch
	OrchWindow
	SchedWindow
	ConfigValidate
	ArenaWire
	SmReset

	// NumPhases is the number of phase records per thread.
	NumPhases = 10
)

// phaseTable is the one place a phase is described, in wire order: its
// enumerator name, its span, the order the runtime logs it in and how a
// trace draws it. String, SpanName, Leaf, PhaseNamed, OwnLane, Spans and
// the steps table's columns (package analysis) read it; TestPhaseTable
// checks it whole.
var phaseTable = [NumPhases]phaseRow{
	RunWall:        {"RunWall", "", 0, 0, ""},
	Preamble:       {"Preamble", strace.PhasePreamble, 1, 0, ""},
	SoLoad:         {"SoLoad", strace.PhaseSoLoad, 2, 0, ""},
	GraphBuild:     {"GraphBuild", strace.PhaseGraphBuild, 3, 0, ""},
	PostOrch:       {"PostOrch", strace.PhasePostOrch, 7, 0, ""},
	OrchWindow:     {"OrchWindow", strace.PhaseOrch, 8, 1, "orchestrator thread's submit window"},
	SchedWindow:    {"SchedWindow", strace.PhaseSched, 9, 2, "scheduler threads' dispatch window, concurrent with orch"},
	ConfigValidate: {"ConfigValidate", strace.PhaseConfigValidate, 4, 0, ""},
	ArenaWire:      {"ArenaWire", strace.PhaseArenaWire, 5, 0, ""},
	SmReset:        {"SmReset", strace.PhaseSmReset, 6, 0, ""},
}

// phaseRow is a row of phaseTable.
type phaseRow struct {
	enum string // the runtime's enumerator name
	// word is the span's last word (strace's vocabulary): the phase is
	// logged as SpanDeviceWall+"."+word, RunWall (no word) as
	// SpanDeviceWall itself.
	word string
	// logged is its place among a run's device spans as the runtime logs
	// them: device_wall (RunWall) first, then its children.
	logged int
	// lane is 0 for a phase drawn with device_wall on one lane, the
	// sequential phases; a phase concurrent with them is drawn on a lane
	// of its own, the lane-th (from 1), which about describes.
	lane  int
	about string
}

// phaseSpanNames are the phases' span names, made once.
var phaseSpanNames = func() (n [NumPhases]string) {
	for p, row := range phaseTable {
		n[p] = strace.SpanDeviceWall
		if row.word != "" {
			n[p] += "." + row.word
		}
	}
	return n
}()

// String returns the runtime's enumerator name (RunWall, Preamble, ...).
func (p Phase) String() string {
	if p < 0 || p >= NumPhases {
		return fmt.Sprintf("Phase(%d)", int(p))
	}
	return phaseTable[p].enum
}

// SpanName returns the name the runtime logs the phase under:
// chip.run.runner_run.device_wall for RunWall and
// chip.run.runner_run.device_wall.<phase> for the others.
func (p Phase) SpanName() string {
	if p < 0 || p >= NumPhases {
		return ""
	}
	return phaseSpanNames[p]
}

// Leaf returns the last word of the phase's span name: device_wall for
// RunWall, preamble for Preamble, orch for OrchWindow, ...
func (p Phase) Leaf() string {
	n := p.SpanName()
	return n[strings.LastIndexByte(n, '.')+1:]
}

// OwnLane says where a trace draws the phase: lane 0 is the lane of
// device_wall and the sequential phases; a phase concurrent with them
// (orch, sched) is drawn on a lane of its own, numbered from 1, which
// about describes.
func (p Phase) OwnLane() (lane int, about string) {
	if p < 0 || p >= NumPhases {
		return 0, ""
	}
	return phaseTable[p].lane, phaseTable[p].about
}

// PhaseNamed returns the phase a device span's name is: device_wall or
// one of its sub-phases.
func PhaseNamed(name string) (Phase, bool) {
	rest, ok := strings.CutPrefix(name, strace.SpanDeviceWall)
	switch {
	case !ok:
		return 0, false
	case rest == "":
		return RunWall, true
	case rest[0] == '.':
		return SubPhase(rest[1:])
	}
	return 0, false
}

// SubPhase returns the phase logged as a child of device_wall under the
// word (SpanDeviceWall+"."+word): preamble, so_load, ..., orch, sched.
func SubPhase(word string) (Phase, bool) {
	for p := range phaseTable {
		if w := phaseTable[p].word; w != "" && w == word {
			return Phase(p), true
		}
	}
	return 0, false
}

// loggedOrder is the phases in the order the runtime logs them (RunWall
// first, as device_wall).
var loggedOrder = func() (o [NumPhases]Phase) {
	for p, row := range phaseTable {
		o[row.logged] = Phase(p)
	}
	return o
}()
