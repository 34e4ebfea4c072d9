package firstpass

import (
	"math"

	"github.com/phasetrace/phasetrace/strace"
)

// The first pass of a comparison (Compare): what each log says of its
// runs, from which each side's decode callable and its first step are
// found.

// CompareScan is, per log, per callable, its chip.run roots: how many,
// the earliest start and the processes that ran them. It holds at most
// maxCallables callables a log and as many processes a callable.
type CompareScan struct {
	logs []map[uint64]*callableRuns
}

// callableRuns is one callable's chip.run roots in one log.
type callableRuns struct {
	n     int64
	first int64
	pids  map[int32]bool
}

// span keeps sp, read from log input, when it is a chip.run root that is
// drawn.
func (cs *CompareScan) span(input int, sp *strace.Span) {
	if sp.Name != strace.SpanRun || sp.Depth != 0 || !Drawable(sp) {
		return
	}
	for len(cs.logs) <= input {
		cs.logs = append(cs.logs, nil)
	}
	m := cs.logs[input]
	if m == nil {
		m = map[uint64]*callableRuns{}
		cs.logs[input] = m
	}
	r := m[sp.Hid]
	if r == nil {
		if len(m) >= maxCallables {
			return
		}
		r = &callableRuns{first: sp.TS, pids: map[int32]bool{}}
		m[sp.Hid] = r
	}
	r.n++
	r.first = min(r.first, sp.TS)
	if len(r.pids) < maxCallables {
		r.pids[sp.Pid] = true
	}
}

// sideRuns is what the logs of one side say of its runs: the decode callable
// (the hid with the most chip.run roots, ties the lowest, when it has more
// than one), its roots, its first root's start and the first chip.run's of
// any callable, on the side's axis (each log's start moved by its shift).
type sideRuns struct {
	Decode      uint64
	Steps       int64
	DecodeFirst int64
	RunFirst    int64
	HasRun      bool
	Pids        map[int32]bool // the processes that ran the decode callable
}

// SideRuns sums the callables of the logs inputs, each log's times moved
// by shift[i].
func (cs *CompareScan) SideRuns(inputs []int, shift []int64) sideRuns {
	counts := map[uint64]int64{}
	var sr sideRuns
	sr.RunFirst = math.MaxInt64
	for _, i := range inputs {
		if i >= len(cs.logs) {
			continue
		}
		for hid, r := range cs.logs[i] {
			counts[hid] += r.n
			sr.RunFirst = min(sr.RunFirst, SatAdd(r.first, shift[i]))
			sr.HasRun = true
		}
	}
	for hid, n := range counts {
		if n > sr.Steps || n == sr.Steps && hid < sr.Decode {
			sr.Decode, sr.Steps = hid, n
		}
	}
	if sr.Steps < 2 {
		return sr
	}
	sr.DecodeFirst = math.MaxInt64
	sr.Pids = map[int32]bool{}
	for _, i := range inputs {
		if i >= len(cs.logs) {
			continue
		}
		if r := cs.logs[i][sr.Decode]; r != nil {
			sr.DecodeFirst = min(sr.DecodeFirst, SatAdd(r.first, shift[i]))
			for pid := range r.pids {
				sr.Pids[pid] = true
			}
		}
	}
	return sr
}

// A Side is a log's side in a comparison (0: not a comparison's).
type Side uint8

const (
	BaseSide Side = 1 + iota
	MeasureSide
)

// String returns the side's name, as the trace and the summary give it.
func (s Side) String() string {
	switch s {
	case BaseSide:
		return "base"
	case MeasureSide:
		return "measure"
	}
	return ""
}
