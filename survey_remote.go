package phasetrace

import (
	"bufio"
	"math"
	"strings"

	"github.com/phasetrace/phasetrace/strace"
)

// The first pass of remote placement: what the logs say of remote tasks
// and runs, which machine each log is from, and the pids they share.

// remoteScan is what the first pass keeps for remote placement: per log its
// daemon banner and pids, the dispatching side's remote tasks and the
// remote daemons' runs. It grows with the tasks and runs, by a few words
// each.
type remoteScan struct {
	banner []string
	pids   []map[int32]bool
	tasks  map[taskKey]*taskRec
	runs   map[runKey]*runRec
	// The last pid noted, per log: most records repeat their neighbour's.
	lastPid []int32
	// single: the conversion has one log, which is its own axis; its
	// tasks and runs need no keeping (they would grow with the log), nor,
	// without a daemon banner, its pids (it is no remote machine: a log
	// with a new pid on every line must not grow them).
	single bool
	// lo and hi are, per log, the earliest start and the latest end of
	// the host spans the first pass read: what a shift of the log must
	// keep inside the trace's time range.
	lo, hi []int64
}

type taskKey struct {
	input    int
	pid      int32
	worker   int64
	dispatch int64
}

type taskRec struct {
	dispTS, dispEnd, compTS int64
	compEnd                 int64
	hasDisp, hasComp        bool
	// drawable: the span has an interval the converter draws (a flow may
	// end at it).
	dispDrawable, compDrawable bool
	dispTid, compTid           int64 // the threads that logged them, whose tracks they are drawn on
}

type runKey struct {
	input int
	pid   int32
	run   int64
}

type runRec struct {
	start, end int64
	// Whether the run's first and last spans are there to be drawn, for
	// the flows that end or start at them, and their threads.
	first, last       bool
	firstTid, lastTid int64
	// The extents of those spans, on the machine's own clock (a window
	// draws an arrow only when both its ends are inside it).
	firstTS, firstEnd, lastTS, lastEnd int64
}

func (r *remoteScan) grow(input int) {
	for len(r.banner) <= input {
		r.banner = append(r.banner, "")
		r.pids = append(r.pids, nil)
		r.lastPid = append(r.lastPid, 0)
		r.lo, r.hi = append(r.lo, math.MaxInt64), append(r.hi, math.MinInt64)
	}
}

// extent returns the earliest start and the latest end of the host spans
// of log input the first pass read, and whether it read any.
func (r *remoteScan) extent(input int) (lo, hi int64, ok bool) {
	if input >= len(r.lo) || r.lo[input] > r.hi[input] {
		return 0, 0, false
	}
	return r.lo[input], r.hi[input], true
}

// fits reports whether shift keeps every host span of log input that the
// first pass read inside the trace's time range.
func (r *remoteScan) fits(input int, shift int64) bool {
	lo, hi, ok := r.extent(input)
	if !ok {
		return true // no host span to keep
	}
	return satAdd(lo, shift) >= 0 && satAdd(hi, shift) < math.MaxInt64
}

// peekBanner reads a log's daemon banner, if its first line is one.
func (r *remoteScan) peekBanner(input int, br *bufio.Reader) {
	r.grow(input)
	b, _ := br.Peek(256)
	if m, ok := strace.DaemonBanner(b); ok {
		r.banner[input] = m
	}
}

func (r *remoteScan) pid(input int, pid int32) {
	r.grow(input)
	if r.lastPid[input] == pid && pid != 0 || r.single && r.banner[input] == "" {
		return
	}
	r.lastPid[input] = pid
	m := r.pids[input]
	if m == nil {
		m = map[int32]bool{}
		r.pids[input] = m
	}
	m[pid] = true
}

// span keeps what a node span says of remote tasks and runs.
func (r *remoteScan) span(input int, sp *strace.Span) {
	r.pid(input, sp.Pid)
	if !sp.IsDevice() && drawable(sp) {
		r.lo[input], r.hi[input] = min(r.lo[input], sp.TS), max(r.hi[input], sp.End())
	}
	if r.single || sp.IsDevice() || strace.FamilyOf(sp.Name) != strace.FamilyNode {
		return
	}
	end := sp.End()
	if sp.Name == strace.SpanRemoteDispatch || sp.Name == strace.SpanRemoteComplete {
		kind, _ := sp.Attr(strace.AttrEndpointKind)
		w, ok1 := sp.Attr(strace.AttrWorkerID)
		d, ok2 := sp.Attr(strace.AttrDispatchID)
		if kind.Value != strace.EndpointRemoteL3 || !ok1 || !ok2 || w.Type != strace.TypeInt || d.Type != strace.TypeInt {
			return
		}
		if r.tasks == nil {
			r.tasks = map[taskKey]*taskRec{}
		}
		k := taskKey{input, sp.Pid, w.Int, d.Int}
		t := r.tasks[k]
		if t == nil {
			t = &taskRec{}
			r.tasks[k] = t
		}
		if sp.Name == strace.SpanRemoteDispatch && !t.hasDisp {
			t.dispTS, t.dispEnd, t.hasDisp, t.dispDrawable, t.dispTid = sp.TS, end, true, drawable(sp), sp.Tid
		} else if sp.Name == strace.SpanRemoteComplete && !t.hasComp {
			t.compTS, t.compEnd, t.hasComp, t.compDrawable, t.compTid = sp.TS, end, true, drawable(sp), sp.Tid
		}
		return
	}
	if !strings.HasPrefix(sp.Name, "node.") {
		return // a remote daemon's runs are its node. spans
	}
	id, ok := sp.Attr(strace.AttrRunID)
	if !ok || id.Type != strace.TypeInt {
		return
	}
	if r.runs == nil {
		r.runs = map[runKey]*runRec{}
	}
	k := runKey{input, sp.Pid, id.Int}
	x := r.runs[k]
	if x == nil {
		x = &runRec{start: sp.TS, end: end}
		r.runs[k] = x
	}
	x.start, x.end = min(x.start, sp.TS), max(x.end, end)
	if !x.first && sp.Name == strace.SpanRemoteRunFirst && drawable(sp) {
		x.first, x.firstTid, x.firstTS, x.firstEnd = true, sp.Tid, sp.TS, end
	}
	if !x.last && sp.Name == strace.SpanRemoteRunLast && drawable(sp) {
		x.last, x.lastTid, x.lastTS, x.lastEnd = true, sp.Tid, sp.TS, end
	}
}

// drawable reports whether a host span's interval is one the converter
// draws (checkSpan).
func drawable(sp *strace.Span) bool {
	reason, _ := checkSpan(sp, false)
	return reason == ""
}

// reference returns the log whose host is the axis: the one that sent
// remote tasks, else -1.
func (r *remoteScan) reference() int {
	ref := -1
	for k := range r.tasks {
		if ref < 0 || k.input < ref {
			ref = k.input
		}
	}
	return ref
}

// remapPids gives a record's pid its trace pid.
func remapPids(rec *strace.Record, m map[int32]int32) {
	switch rec.Kind {
	case strace.KindSpan:
		if v, ok := m[rec.Span.Pid]; ok {
			rec.Span.Pid = v
		}
	case strace.KindWallAnchor:
		if v, ok := m[rec.WallAnchor.Pid]; ok {
			rec.WallAnchor.Pid = v
		}
	case strace.KindDeviceAnchor:
		if v, ok := m[rec.DeviceAnchor.Pid]; ok {
			rec.DeviceAnchor.Pid = v
		}
	}
}
