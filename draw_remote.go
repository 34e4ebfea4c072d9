package phasetrace

import (
	"github.com/phasetrace/phasetrace/internal/handoffs"
	"github.com/phasetrace/phasetrace/internal/remoteplan"
	"github.com/phasetrace/phasetrace/perfetto"
	"github.com/phasetrace/phasetrace/reduce"
	"github.com/phasetrace/phasetrace/strace"
)

// Drawing a remote machine's records by the remote plan
// (internal/remoteplan): the machines' summaries, which drawing counts
// in; the arguments a remote machine's slices carry; the flow ids of the
// arrows planned across machines.

// hostReasons says, for each reason the plan gives for a machine not
// placed by its tasks, its Reason.
var hostReasons = [...]Reason{
	remoteplan.NoReason:      "",
	remoteplan.Ambiguous:     ReasonHostAmbiguous,
	remoteplan.NoDispatcher:  ReasonHostNoDispatcher,
	remoteplan.NoMatch:       ReasonHostNoMatch,
	remoteplan.NoFit:         ReasonHostNoFit,
	remoteplan.FewTasks:      ReasonHostFewTasks,
	remoteplan.Regular:       ReasonHostRegular,
	remoteplan.RateAtLimit:   ReasonHostRateAtLimit,
	remoteplan.OutsideTasks:  ReasonHostOutsideTasks,
	remoteplan.WallDisagrees: ReasonHostWallDisagrees,
}

// remoteFlowKinds says the FlowKind of each kind of arrow across machines.
var remoteFlowKinds = [...]FlowKind{
	remoteplan.DispatchToRun: FlowRemoteDispatchToRun,
	remoteplan.RunToComplete: FlowRemoteRunToComplete,
}

// hostSummaries returns the summaries of the plan's machines, in its
// order (logs named by names), for drawing to count in (remoteArgs,
// drawnOn); nil when there is no plan.
func hostSummaries(p *remoteplan.Plan, names []string, t Transport) []HostSummary {
	if p == nil {
		return nil
	}
	out := make([]HostSummary, len(p.Hosts))
	for i, h := range p.Hosts {
		s := &out[i]
		*s = HostSummary{Machine: h.Machine, Method: h.Method.String(), Transport: t.String(), Workers: h.Workers, Tasks: h.Tasks,
			OffsetNs: h.OffsetNs, RatePPB: h.RatePPB, RateLo: h.RateLo, RateHi: h.RateHi, LimitNs: h.LimitNs,
			WallShiftNs: h.WallShiftNs, WallDisagreeNs: h.WallDisagreeNs, Pids: h.Pids, Reason: hostReasons[h.Reason], Note: h.Note}
		for _, in := range h.Inputs {
			s.Inputs = append(s.Inputs, names[in])
		}
	}
	return out
}

// finishHosts returns the machines' summaries, finished.
func finishHosts(hosts []HostSummary) []HostSummary {
	for i := range hosts {
		hosts[i].Bound.finish()
	}
	return hosts
}

// remoteArgs adds, to a slice of a remote machine's span drawn from ts to
// end, the machine, how it was placed and (host spans) its bound, which it
// counts in the machine's summary.
func (cv *sliceDrawer) remoteArgs(args []perfetto.Arg, pid int32, ts, end int64, bound bool) []perfetto.Arg {
	i := cv.remote.Machine(pid)
	if i < 0 {
		return args
	}
	h := cv.remote.Hosts[i]
	args = append(args, perfetto.String("machine", h.Machine))
	if os, ok := cv.remote.OsPid(pid); ok {
		args = append(args, perfetto.Int("os_pid", int64(os)))
	}
	args = append(args, perfetto.String("host_placement", h.Method.String()))
	if h.OffAxis != "" {
		args = append(args, perfetto.String("host_placement_reason", h.OffAxis))
	}
	if h.Fit != nil && bound {
		b0, err0 := h.Fit.Drawn(reduce.HostNanos(ts))
		b1, err1 := h.Fit.Drawn(reduce.HostNanos(end))
		if err0 == nil && err1 == nil {
			b := int64(max(b0, b1))
			args = append(args, perfetto.Int("host_bound_ns", b))
			cv.hosts[i].Bound.add(b)
		}
	}
	return args
}

// drawnOn counts a slice drawn of a span of pid, on its machine's
// summary when pid is a remote machine's.
func (cv *sliceDrawer) drawnOn(pid int32) {
	if i := cv.remote.Machine(pid); i >= 0 {
		cv.hosts[i].Drawn++
	}
}

// remoteArrows are the flow ids of the arrows planned across machines, by
// the span they start or end at, until it comes.
type remoteArrows map[remoteplan.SpanKey]*flowAttach

type flowAttach struct {
	flows, endFlows []perfetto.FlowID
}

// attachArrows gives the plan's arrows their flow ids, in the order they
// were planned, and files them by the spans they start and end at.
func attachArrows(p *remoteplan.Plan, f *handoffs.Queue, a *arrowAccount) remoteArrows {
	if p == nil {
		return nil
	}
	var ra remoteArrows
	at := func(k remoteplan.SpanKey) *flowAttach {
		if ra == nil {
			ra = remoteArrows{}
		}
		fa := ra[k]
		if fa == nil {
			fa = &flowAttach{}
			ra[k] = fa
		}
		return fa
	}
	for _, r := range p.Arrows {
		id := f.NextID()
		a.add(id, remoteFlowKinds[r.Kind])
		a.between(id, arrowEnd{r.From.Pid, r.From.Tid, r.From.TS, r.From.End}, arrowEnd{r.To.Pid, r.To.Tid, r.To.TS, r.To.End})
		s := at(r.Start)
		s.flows = append(s.flows, id)
		e := at(r.End)
		e.endFlows = append(e.endFlows, id)
	}
	p.Arrows = nil
	return ra
}

// flows adds the remote flows that start or end at a node span.
func (ra remoteArrows) flows(sp *strace.Span, flows, endFlows []perfetto.FlowID) ([]perfetto.FlowID, []perfetto.FlowID) {
	if len(ra) == 0 {
		return flows, endFlows
	}
	k, ok := remoteplan.KeyOf(sp)
	if !ok {
		return flows, endFlows
	}
	a := ra[k]
	if a == nil {
		return flows, endFlows
	}
	delete(ra, k)
	return append(flows, a.flows...), append(endFlows, a.endFlows...)
}
