package firstpass

import (
	"bufio"
	"math"
	"strings"

	"github.com/phasetrace/phasetrace/strace"
)

// The first pass of remote placement: what the logs say of remote tasks
// and runs, which machine each log is from, and the pids they share.

// RemoteScan is what the first pass keeps for remote placement: per log its
// daemon banner and pids, the dispatching side's remote tasks and the
// remote daemons' runs. It grows with the tasks and runs, by a few words
// each.
type RemoteScan struct {
	Banner []string
	Pids   []map[int32]bool
	Tasks  map[taskKey]*TaskRec
	Runs   map[RunKey]*RunRec
	// The last pid noted, per log: most records repeat their neighbour's.
	lastPid []int32
	// single: the conversion has one log, which is its own axis; its
	// tasks and runs need no keeping (they would grow with the log), nor,
	// without a daemon banner, its pids (it is no remote machine: a log
	// with a new pid on every line must not grow them).
	Single bool
	// lo and hi are, per log, the earliest start and the latest end of
	// the host spans the first pass read: what a shift of the log must
	// keep inside the trace's time range.
	Lo, Hi []int64
}

type taskKey struct {
	Input    int
	Pid      int32
	Worker   int64
	Dispatch int64
}

type TaskRec struct {
	DispTS, DispEnd, CompTS int64
	CompEnd                 int64
	HasDisp, HasComp        bool
	// drawable: the span has an interval the converter draws (a flow may
	// end at it).
	DispDrawable, CompDrawable bool
	DispTid, CompTid           int64 // the threads that logged them, whose tracks they are drawn on
}

type RunKey struct {
	Input int
	Pid   int32
	Run   int64
}

type RunRec struct {
	Start, End int64
	// Whether the run's first and last spans are there to be drawn, for
	// the flows that end or start at them, and their threads.
	First, Last       bool
	FirstTid, LastTid int64
	// The extents of those spans, on the machine's own clock (a window
	// draws an arrow only when both its ends are inside it).
	FirstTS, FirstEnd, LastTS, LastEnd int64
}

func (r *RemoteScan) Grow(input int) {
	for len(r.Banner) <= input {
		r.Banner = append(r.Banner, "")
		r.Pids = append(r.Pids, nil)
		r.lastPid = append(r.lastPid, 0)
		r.Lo, r.Hi = append(r.Lo, math.MaxInt64), append(r.Hi, math.MinInt64)
	}
}

// Extent returns the earliest start and the latest end of the host spans
// of log input the first pass read, and whether it read any.
func (r *RemoteScan) Extent(input int) (lo, hi int64, ok bool) {
	if input >= len(r.Lo) || r.Lo[input] > r.Hi[input] {
		return 0, 0, false
	}
	return r.Lo[input], r.Hi[input], true
}

// Fits reports whether shift keeps every host span of log input that the
// first pass read inside the trace's time range.
func (r *RemoteScan) Fits(input int, shift int64) bool {
	lo, hi, ok := r.Extent(input)
	if !ok {
		return true // no host span to keep
	}
	return SatAdd(lo, shift) >= 0 && SatAdd(hi, shift) < math.MaxInt64
}

// peekBanner reads a log's daemon banner, if its first line is one.
func (r *RemoteScan) peekBanner(input int, br *bufio.Reader) {
	r.Grow(input)
	b, _ := br.Peek(256)
	if m, ok := strace.DaemonBanner(b); ok {
		r.Banner[input] = m
	}
}

func (r *RemoteScan) Pid(input int, pid int32) {
	r.Grow(input)
	if r.lastPid[input] == pid && pid != 0 || r.Single && r.Banner[input] == "" {
		return
	}
	r.lastPid[input] = pid
	m := r.Pids[input]
	if m == nil {
		m = map[int32]bool{}
		r.Pids[input] = m
	}
	m[pid] = true
}

// Span keeps what a node span says of remote tasks and runs.
func (r *RemoteScan) Span(input int, sp *strace.Span) {
	r.Pid(input, sp.Pid)
	if !sp.IsDevice() && Drawable(sp) {
		r.Lo[input], r.Hi[input] = min(r.Lo[input], sp.TS), max(r.Hi[input], sp.End())
	}
	if r.Single || sp.IsDevice() || strace.FamilyOf(sp.Name) != strace.FamilyNode {
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
		if r.Tasks == nil {
			r.Tasks = map[taskKey]*TaskRec{}
		}
		k := taskKey{input, sp.Pid, w.Int, d.Int}
		t := r.Tasks[k]
		if t == nil {
			t = &TaskRec{}
			r.Tasks[k] = t
		}
		if sp.Name == strace.SpanRemoteDispatch && !t.HasDisp {
			t.DispTS, t.DispEnd, t.HasDisp, t.DispDrawable, t.DispTid = sp.TS, end, true, Drawable(sp), sp.Tid
		} else if sp.Name == strace.SpanRemoteComplete && !t.HasComp {
			t.CompTS, t.CompEnd, t.HasComp, t.CompDrawable, t.CompTid = sp.TS, end, true, Drawable(sp), sp.Tid
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
	if r.Runs == nil {
		r.Runs = map[RunKey]*RunRec{}
	}
	k := RunKey{input, sp.Pid, id.Int}
	x := r.Runs[k]
	if x == nil {
		x = &RunRec{Start: sp.TS, End: end}
		r.Runs[k] = x
	}
	x.Start, x.End = min(x.Start, sp.TS), max(x.End, end)
	if !x.First && sp.Name == strace.SpanRemoteRunFirst && Drawable(sp) {
		x.First, x.FirstTid, x.FirstTS, x.FirstEnd = true, sp.Tid, sp.TS, end
	}
	if !x.Last && sp.Name == strace.SpanRemoteRunLast && Drawable(sp) {
		x.Last, x.LastTid, x.LastTS, x.LastEnd = true, sp.Tid, sp.TS, end
	}
}

// Drawable reports whether a host span's interval is one the converter
// draws (checkSpan).
func Drawable(sp *strace.Span) bool {
	fault, _ := CheckSpan(sp, false)
	return fault == SpanSound
}

// Reference returns the log whose host is the axis: the one that sent
// remote tasks, else -1.
func (r *RemoteScan) Reference() int {
	ref := -1
	for k := range r.Tasks {
		if ref < 0 || k.Input < ref {
			ref = k.Input
		}
	}
	return ref
}

// RemapPids gives a record's pid its trace pid.
func RemapPids(rec *strace.Record, m map[int32]int32) {
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
