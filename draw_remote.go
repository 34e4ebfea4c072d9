package phasetrace

import (
	"math"

	"github.com/phasetrace/phasetrace/internal/firstpass"
	"github.com/phasetrace/phasetrace/perfetto"
	"github.com/phasetrace/phasetrace/reduce"
	"github.com/phasetrace/phasetrace/strace"
)

// Drawing a remote machine's records on the dispatching host's axis.

// adjust puts a record of log i on the dispatching host's axis: its pids
// become their trace pids, and a causally placed machine's host times go
// through its mapping (a wall-placed one's were shifted already).
//
// It reports false for a span its machine's mapping cannot carry (a time
// past the int64 range once mapped).
func (p *remotePlan) adjust(i int, rec *strace.Record, pm map[int32]int32) bool {
	if pm != nil {
		firstpass.RemapPids(rec, pm)
	}
	h := p.inputHost[i]
	if h == nil || h.fit == nil {
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
			return true // not drawn for what it is (checkSpan)
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

// args adds, to a slice of a remote machine's span drawn from ts to
// end, the machine, how it was placed and (host spans) its bound.
func (p *remotePlan) args(args []perfetto.Arg, pid int32, ts, end int64, bound bool) []perfetto.Arg {
	if p == nil {
		return args
	}
	h := p.byPid[pid]
	if h == nil {
		return args
	}
	args = append(args, perfetto.String("machine", h.machine))
	if os, ok := p.osPid[pid]; ok {
		args = append(args, perfetto.Int("os_pid", int64(os)))
	}
	args = append(args, perfetto.String("host_placement", h.method.String()))
	if h.offAxis != "" {
		args = append(args, perfetto.String("host_placement_reason", h.offAxis))
	}
	if h.fit != nil && bound {
		b0, err0 := h.fit.Drawn(reduce.HostNanos(ts))
		b1, err1 := h.fit.Drawn(reduce.HostNanos(end))
		if err0 == nil && err1 == nil {
			b := int64(max(b0, b1))
			args = append(args, perfetto.Int("host_bound_ns", b))
			h.sum.Bound.add(b)
		}
	}
	return args
}

// drawnOn counts a slice drawn of a span of pid, on its machine's
// summary when pid is a remote machine's.
func (p *remotePlan) drawnOn(pid int32) {
	if p == nil {
		return
	}
	if h := p.byPid[pid]; h != nil {
		h.sum.Drawn++
	}
}

// onAxis reports whether the placement bounds of pid's spans hold on the
// trace's axis: pid is not a remote machine's, or its machine is placed by
// causality.
func (p *remotePlan) onAxis(pid int32) bool {
	if p == nil {
		return true
	}
	h := p.byPid[pid]
	return h == nil || h.fit != nil
}

// placedHost returns the causally placed machine of pid, or nil.
func (p *remotePlan) placedHost(pid int32) *remoteHost {
	if p == nil {
		return nil
	}
	if h := p.byPid[pid]; h != nil && h.fit != nil {
		return h
	}
	return nil
}

// nativeWindow returns the remote-clock window that holds what the
// machine's line drew at w.
func (h *remoteHost) nativeWindow(w reduce.HostWindow) (reduce.HostWindow, bool) {
	s, err0 := h.fit.Native(w.Start)
	e, err1 := h.fit.Native(w.End)
	if err0 != nil || err1 != nil {
		return reduce.HostWindow{}, false
	}
	return reduce.HostWindow{Start: s - 2, End: e + 2}, true
}

// wallSuperseded reports whether a wall-clock anchor of pid is set aside:
// its machine is placed by causality, and its wall clock agrees with the
// dispatching host's only to NTP grade.
func (p *remotePlan) wallSuperseded(pid int32) bool { return p.placedHost(pid) != nil }

// mergeShift is an offset near a causally placed log's, for ordering its
// records among the others'.
func (p *remotePlan) mergeShift(i int) int64 {
	if p == nil || i >= len(p.inputHost) {
		return 0
	}
	h := p.inputHost[i]
	if h == nil || h.fit == nil {
		return 0
	}
	return h.sum.OffsetNs
}

// nativeRun returns run with its host windows on its machine's own clock.
// A window that cannot be carried back is left out (less containment,
// never a wrong one).
func (h *remoteHost) nativeRun(run reduce.Run) reduce.Run {
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

// compose carries a placement made on the machine's own clock onto the
// dispatching host's axis, bounds composed (reduce.HostFit.Compose).
func (h *remoteHost) compose(pl *reduce.Placement) error {
	if pl.Method == reduce.Unaligned {
		return nil
	}
	for i, sp := range pl.Spans {
		d, err := h.fit.Compose(sp)
		if err != nil {
			return err
		}
		pl.Spans[i] = d
	}
	return nil
}

// flows adds the remote flows that start or end at a node span.
func (p *remotePlan) flows(sp *strace.Span, flows, endFlows []perfetto.FlowID) ([]perfetto.FlowID, []perfetto.FlowID) {
	if p == nil || len(p.attach) == 0 {
		return flows, endFlows
	}
	var k flowEnd
	switch sp.Name {
	case strace.SpanRemoteDispatch, strace.SpanRemoteComplete:
		w, ok1 := sp.Attr(strace.AttrWorkerID)
		d, ok2 := sp.Attr(strace.AttrDispatchID)
		if !ok1 || !ok2 {
			return flows, endFlows
		}
		k = flowEnd{sp.Pid, w.Int, d.Int, sp.Name}
	case strace.SpanRemoteRunFirst, strace.SpanRemoteRunLast:
		r, ok := sp.Attr(strace.AttrRunID)
		if !ok {
			return flows, endFlows
		}
		k = flowEnd{sp.Pid, r.Int, -1, sp.Name}
	default:
		return flows, endFlows
	}
	a := p.attach[k]
	if a == nil {
		return flows, endFlows
	}
	delete(p.attach, k)
	return append(flows, a.flows...), append(endFlows, a.endFlows...)
}

// sameHost reports whether a node.dispatch of process a may have launched
// a chip run of process b: a remote daemon launches runs on its own
// machine only, and no other machine's dispatch launches them there.
// (Machines placed by their wall clocks keep the old rule: any.)
func (p *remotePlan) sameHost(a, b int32) bool {
	if p == nil {
		return true
	}
	ha, hb := p.byPid[a], p.byPid[b]
	causal := ha != nil && ha.fit != nil || hb != nil && hb.fit != nil
	return !causal || ha == hb
}

// wallOffAxis reports whether pid's wall-clock anchors do not describe
// the trace's axis: its machine's spans are drawn at their own times,
// and it is not the machine whose clock is the axis.
func (p *remotePlan) wallOffAxis(pid int32) bool {
	if p == nil {
		return false
	}
	h := p.byPid[pid]
	return h != nil && h.fit == nil && h.method != reduce.HostWall && !(p.ref >= 0 && p.inputHost[p.ref] == h)
}

// attachArrows gives the planned arrows their flow ids, in the order they
// were planned, and files them by the spans they start and end at.
func (p *remotePlan) attachArrows(f *flowWindow, a *arrowLedger) {
	if p == nil {
		return
	}
	for _, r := range p.arrows {
		id := f.id()
		a.add(id, r.kind)
		a.between(id, r.from, r.to)
		s := p.at(r.start)
		s.flows = append(s.flows, id)
		e := p.at(r.end)
		e.endFlows = append(e.endFlows, id)
	}
	p.arrows = nil
}

// at returns the arrows filed at span k.
func (p *remotePlan) at(k flowEnd) *flowAttach {
	if p.attach == nil {
		p.attach = map[flowEnd]*flowAttach{}
	}
	a := p.attach[k]
	if a == nil {
		a = &flowAttach{}
		p.attach[k] = a
	}
	return a
}
