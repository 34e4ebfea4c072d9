package phasetrace

import (
	"math"

	"github.com/phasetrace/phasetrace/strace"
)

// The first pass of a comparison (Compare): what each log says of its
// runs, from which each side's decode callable and its first step are
// found.

// compareScan is, per log, per callable, its chip.run roots: how many,
// the earliest start and the processes that ran them. It holds at most
// maxCallables callables a log and as many processes a callable.
type compareScan struct {
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
func (cs *compareScan) span(input int, sp *strace.Span) {
	if sp.Name != strace.SpanRun || sp.Depth != 0 || !drawable(sp) {
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
	decode      uint64
	steps       int64
	decodeFirst int64
	runFirst    int64
	hasRun      bool
	pids        map[int32]bool // the processes that ran the decode callable
}

// sideRuns sums the callables of the logs inputs, each log's times moved
// by shift[i].
func (cs *compareScan) sideRuns(inputs []int, shift []int64) sideRuns {
	counts := map[uint64]int64{}
	var sr sideRuns
	sr.runFirst = math.MaxInt64
	for _, i := range inputs {
		if i >= len(cs.logs) {
			continue
		}
		for hid, r := range cs.logs[i] {
			counts[hid] += r.n
			sr.runFirst = min(sr.runFirst, satAdd(r.first, shift[i]))
			sr.hasRun = true
		}
	}
	for hid, n := range counts {
		if n > sr.steps || n == sr.steps && hid < sr.decode {
			sr.decode, sr.steps = hid, n
		}
	}
	if sr.steps < 2 {
		return sr
	}
	sr.decodeFirst = math.MaxInt64
	sr.pids = map[int32]bool{}
	for _, i := range inputs {
		if i >= len(cs.logs) {
			continue
		}
		if r := cs.logs[i][sr.decode]; r != nil {
			sr.decodeFirst = min(sr.decodeFirst, satAdd(r.first, shift[i]))
			for pid := range r.pids {
				sr.pids[pid] = true
			}
		}
	}
	return sr
}

// Sides, as comparePlan.side holds them (0: not a comparison's).
const (
	sideBase uint8 = 1 + iota
	sideMeasure
)

func sideName(s uint8) string {
	switch s {
	case sideBase:
		return SideBase
	case sideMeasure:
		return SideMeasure
	}
	return ""
}
