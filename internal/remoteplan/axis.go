package remoteplan

import (
	"math"

	"github.com/phasetrace/phasetrace/internal/firstpass"
	"github.com/phasetrace/phasetrace/reduce"
	"github.com/phasetrace/phasetrace/strace"
)

// What the plan says of a record as it is drawn. A nil *Plan is a
// conversion whose logs are all the dispatching host's.

// Adjust puts a record of log i on the dispatching host's axis: its pids
// become their trace pids (pm, the log's from PidMaps), and a causally
// placed machine's host times go through its mapping (a wall-placed one's
// were shifted already: Shifts).
//
// It reports false for a span its machine's mapping cannot carry (a time
// past the int64 range once mapped).
func (p *Plan) Adjust(i int, rec *strace.Record, pm map[int32]int32) bool {
	if pm != nil {
		firstpass.RemapPids(rec, pm)
	}
	h := p.Input(i)
	if h == nil || h.Fit == nil {
		return true
	}
	if rec.Prefix.Present {
		if y, ok := h.drawn(rec.Prefix.MonoNS); ok {
			rec.Prefix.MonoNS = y
		}
	}
	switch {
	case rec.Kind == strace.KindSpan && !rec.Span.IsDevice():
		if !firstpass.Drawable(&rec.Span) {
			return true // not drawn for what it is (firstpass.CheckSpan)
		}
		s, e, ok := h.mapExtent(rec.Span.TS, rec.Span.End())
		if !ok {
			return false
		}
		rec.Span.TS, rec.Span.Dur = s, e-s
	case rec.Kind == strace.KindBindPhase:
		if rec.BindPhase.StartNS <= math.MaxInt64 && rec.BindPhase.DurNS <= math.MaxInt64 {
			st := int64(rec.BindPhase.StartNS)
			if s, e, ok := h.mapExtent(st, st+int64(rec.BindPhase.DurNS)); ok && s >= 0 {
				rec.BindPhase.StartNS, rec.BindPhase.DurNS = uint64(s), uint64(e-s)
			}
		}
	}
	return true
}

// Input returns the machine of log i, or nil for the dispatching host's.
func (p *Plan) Input(i int) *Host {
	if p == nil || i < 0 || i >= len(p.inputHost) {
		return nil
	}
	return p.inputHost[i]
}

// Machine returns the index in Hosts of the machine pid (a trace pid) is
// on, or -1 for the dispatching host.
func (p *Plan) Machine(pid int32) int {
	if p == nil {
		return -1
	}
	if i, ok := p.byPid[pid]; ok {
		return i
	}
	return -1
}

// host returns the machine pid is on, or nil.
func (p *Plan) host(pid int32) *Host {
	if i := p.Machine(pid); i >= 0 {
		return p.Hosts[i]
	}
	return nil
}

// OsPid returns the OS pid of trace pid pid, where they differ.
func (p *Plan) OsPid(pid int32) (int32, bool) {
	if p == nil {
		return 0, false
	}
	os, ok := p.osPid[pid]
	return os, ok
}

// OnAxis reports whether the placement bounds of pid's spans hold on the
// trace's axis: pid is not a remote machine's, or its machine is placed by
// causality.
func (p *Plan) OnAxis(pid int32) bool {
	h := p.host(pid)
	return h == nil || h.Fit != nil
}

// Placed returns the causally placed machine of pid, or nil.
func (p *Plan) Placed(pid int32) *Host {
	if h := p.host(pid); h != nil && h.Fit != nil {
		return h
	}
	return nil
}

// WallSuperseded reports whether a wall-clock anchor of pid is set aside:
// its machine is placed by causality, and its wall clock agrees with the
// dispatching host's only to NTP grade.
func (p *Plan) WallSuperseded(pid int32) bool { return p.Placed(pid) != nil }

// WallOffAxis reports whether pid's wall-clock anchors do not describe
// the trace's axis: its machine's spans are drawn at their own times,
// and it is not the machine whose clock is the axis.
func (p *Plan) WallOffAxis(pid int32) bool {
	h := p.host(pid)
	return h != nil && h.Fit == nil && h.Method != reduce.HostWall && !(p.ref >= 0 && p.inputHost[p.ref] == h)
}

// SameHost reports whether a node.dispatch of process a may have launched
// a chip run of process b: a remote daemon launches runs on its own
// machine only, and no other machine's dispatch launches them there.
// Where neither machine is placed by its tasks (a wall clock or none), any
// dispatch may have launched the run.
func (p *Plan) SameHost(a, b int32) bool {
	ha, hb := p.host(a), p.host(b)
	causal := ha != nil && ha.Fit != nil || hb != nil && hb.Fit != nil
	return !causal || ha == hb
}

// MergeShift is an offset near a causally placed log's, for ordering its
// records among the others'.
func (p *Plan) MergeShift(i int) int64 {
	h := p.Input(i)
	if h == nil || h.Fit == nil {
		return 0
	}
	return h.OffsetNs
}

// NativeRun returns run with its host windows on the machine's own clock.
// A window that cannot be carried back is left out (less containment,
// never a wrong one).
func (h *Host) NativeRun(run reduce.Run) reduce.Run {
	if run.RunnerRun != nil {
		if w, ok := h.nativeWindow(*run.RunnerRun); ok {
			run.RunnerRun = &w
		} else {
			run.RunnerRun = nil
		}
	}
	var enc []reduce.HostWindow
	for _, w := range run.Enclosing {
		if n, ok := h.nativeWindow(w); ok {
			enc = append(enc, n)
		}
	}
	run.Enclosing = enc
	return run
}

// nativeWindow returns the remote-clock window that holds what the
// machine's line drew at w.
func (h *Host) nativeWindow(w reduce.HostWindow) (reduce.HostWindow, bool) {
	s, err0 := h.Fit.Native(w.Start)
	e, err1 := h.Fit.Native(w.End)
	if err0 != nil || err1 != nil {
		return reduce.HostWindow{}, false
	}
	return reduce.HostWindow{Start: s - 2, End: e + 2}, true
}

// Compose carries a placement made on the machine's own clock onto the
// dispatching host's axis, bounds composed (reduce.HostFit.Compose).
func (h *Host) Compose(pl *reduce.Placement) error {
	if pl.Method == reduce.Unaligned {
		return nil
	}
	for i, sp := range pl.Spans {
		d, err := h.Fit.Compose(sp)
		if err != nil {
			return err
		}
		pl.Spans[i] = d
	}
	return nil
}

// mapExtent maps [s, e] through the machine's drawn map (the bound is
// added where the slice is drawn, from the drawn times).
func (h *Host) mapExtent(s, e int64) (int64, int64, bool) {
	ys, ok1 := h.drawn(s)
	ye, ok2 := h.drawn(e)
	if !ok1 || !ok2 || e < s {
		return 0, 0, false
	}
	return ys, ye, true
}

// drawn is where the machine's drawn map puts remote instant x.
func (h *Host) drawn(x int64) (int64, bool) {
	off, ok := h.Fit.Offset(reduce.HostNanos(x))
	if !ok {
		return 0, false
	}
	y := x + int64(off)
	return y, (off >= 0) == (y >= x)
}
