package phasetrace

import (
	"cmp"
	"errors"
	"math"
	"slices"
	"sort"

	"github.com/phasetrace/phasetrace/internal/firstpass"
	"github.com/phasetrace/phasetrace/perfetto"
	"github.com/phasetrace/phasetrace/reduce"
	"github.com/phasetrace/phasetrace/strace"
)

// Which session served which worker, each machine's clock, and the flows
// across machines.

// flowEnd names a span a remote flow starts or ends at: a dispatch or
// complete by (pid, worker, dispatch id), a remote run's span by (pid, run
// id).
type flowEnd struct {
	pid  int32
	a, b int64
	name string
}

type flowAttach struct {
	flows, endFlows []perfetto.FlowID
}

type session struct {
	host *remoteHost
	pid  int32
	runs []reduce.HostBracket
	ids  []int64
	recs map[int64]*firstpass.RunRec
}

type worker struct {
	pid   int32
	id    int64
	tasks []reduce.HostBracket
	ids   []int64 // dispatch ids
	recs  map[int64]*firstpass.TaskRec
}

// fit matches sessions to workers and fits each machine's clock.
func (pl *planner) fit(p *remotePlan) {
	workers, sessions := pl.workers(p), pl.sessions(p)
	match, ambiguous := pl.match(workers, sessions)
	byHost := map[*remoteHost][]reduce.HostBracket{}
	named := map[*remoteHost]bool{} // every session of it matched as the user named
	for i, s := range sessions {
		if match[i] < 0 {
			continue
		}
		w := workers[match[i]]
		n, seen := named[s.host]
		named[s.host] = pl.namedWorker(s.host, w.id) && (n || !seen)
		byHost[s.host] = append(byHost[s.host], reduce.Pair(reduce.Worker{ID: w.id, Tasks: w.tasks}, reduce.Session{Runs: s.runs})...)
		sum := s.host.summary()
		sum.Workers = append(sum.Workers, w.id)
	}
	for _, h := range p.hosts {
		sum := h.summary()
		sum.Transport = pl.cfg.transport.String()
		axis := p.ref >= 0 && p.inputHost[p.ref] == h
		if shift, ok := pl.wallShift(h); ok && !axis {
			sum.WallShiftNs = shift
			h.method = reduce.HostWall
		}
		sum.Method = h.method.String()
		switch {
		case axis:
			sum.Note = "its clock is the trace's axis (no log among the inputs dispatched to remote workers)"
		case len(byHost[h]) > 0:
			pl.fitHost(h, byHost[h], named[h])
		case ambiguous:
			sum.Reason = ReasonHostAmbiguous
			sum.Note = "the logs do not determine which worker it served (name it: WithRemoteWorker, -worker " + h.machine + "=ID)"
		case len(workers) == 0:
			sum.Reason = ReasonHostNoDispatcher
			sum.Note = "no dispatching log (network1.dispatch to a remote_l3 endpoint) in the inputs"
		default:
			sum.Reason = ReasonHostNoMatch
			sum.Note = "no worker's tasks match its runs"
		}
	}
	for i, s := range sessions {
		if match[i] >= 0 && s.host.fit != nil {
			p.pairFlows(workers[match[i]], s)
		}
	}
}

// workers returns the dispatching host's remote workers, by (pid,
// worker id), each with its tasks in dispatch order.
func (pl *planner) workers(p *remotePlan) []*worker {
	wk := map[[2]int64]*worker{}
	for k, t := range pl.scan.Remote.Tasks {
		if p.inputHost[k.Input] != nil {
			continue
		}
		key := [2]int64{int64(k.Pid), k.Worker}
		w := wk[key]
		if w == nil {
			w = &worker{pid: k.Pid, id: k.Worker, recs: map[int64]*firstpass.TaskRec{}}
			wk[key] = w
		}
		b := reduce.HostBracket{Sent: math.MinInt64, Received: math.MaxInt64}
		if t.HasDisp {
			b.Sent = reduce.HostNanos(t.DispEnd)
			if pl.cfg.transport == TransportMPI {
				b.Sent = reduce.HostNanos(t.DispTS)
			}
		}
		if t.HasComp {
			b.Received = reduce.HostNanos(t.CompTS)
		}
		w.tasks = append(w.tasks, b)
		w.ids = append(w.ids, k.Dispatch)
		w.recs[k.Dispatch] = t
	}
	workers := make([]*worker, 0, len(wk))
	for _, w := range wk {
		sortBy(w.ids, w.tasks)
		workers = append(workers, w)
	}
	slices.SortFunc(workers, func(a, b *worker) int { return cmp.Or(cmp.Compare(a.pid, b.pid), cmp.Compare(a.id, b.id)) })
	return workers
}

// sessions returns the remote daemons' sessions, by (machine, daemon
// pid), each with its runs in run_id order.
func (pl *planner) sessions(p *remotePlan) []*session {
	sk := map[firstpass.RunKey]*session{}
	var sessions []*session
	for k, r := range pl.scan.Remote.Runs {
		h := p.inputHost[k.Input]
		if h == nil {
			continue
		}
		key := firstpass.RunKey{Input: -1 - slices.Index(p.hosts, h), Pid: k.Pid}
		s := sk[key]
		if s == nil {
			s = &session{host: h, pid: k.Pid, recs: map[int64]*firstpass.RunRec{}}
			sk[key] = s
			sessions = append(sessions, s)
		}
		s.runs = append(s.runs, reduce.HostBracket{Start: reduce.HostNanos(r.Start), End: reduce.HostNanos(r.End)})
		s.ids = append(s.ids, k.Run)
		s.recs[k.Run] = r
	}
	for _, s := range sessions {
		sortBy(s.ids, s.runs)
	}
	order := make(map[*remoteHost]int, len(p.hosts))
	for i, h := range p.hosts {
		order[h] = i
	}
	slices.SortFunc(sessions, func(a, b *session) int {
		return cmp.Or(cmp.Compare(order[a.host], order[b.host]), cmp.Compare(a.pid, b.pid))
	})
	return sessions
}

// matchRemote decides which worker each session served (reduce.
// MatchSessions), the user's -worker names first; -1 for none.
func (pl *planner) match(workers []*worker, sessions []*session) (match []int, ambiguous bool) {
	rw := make([]reduce.Worker, len(workers))
	for i, w := range workers {
		rw[i] = reduce.Worker{ID: w.id, Tasks: w.tasks}
	}
	rsess := make([]reduce.Session, len(sessions))
	fixed := map[int]int{}
	for i, s := range sessions {
		rsess[i] = reduce.Session{Name: s.host.machine, Runs: s.runs, Wall: pl.wallPrior(s.host)}
		for name, id := range pl.cfg.remoteWorkers {
			if !s.host.named(name, pl.names) {
				continue
			}
			for j, w := range workers {
				if w.id == id {
					fixed[i] = j
				}
			}
		}
	}
	if len(workers) == 0 || len(sessions) == 0 {
		match = make([]int, len(sessions))
		for i := range match {
			match[i] = -1
		}
		return match, false
	}
	match, err := reduce.MatchSessions(rw, rsess, fixed, pl.cfg.hostFit...)
	return match, errors.Is(err, reduce.ErrAmbiguous)
}

// fitHost fits machine h's clock to the brackets of its tasks, and places
// it by them only when the fit proves its runs served them
// (reduce.HostFit.Proves); named: the user named the worker it served.
func (pl *planner) fitHost(h *remoteHost, br []reduce.HostBracket, named bool) {
	sum := h.summary()
	fit, err := reduce.FitHost(br, pl.cfg.hostFit...)
	if err != nil {
		// Workers lists only the workers it is placed by.
		sum.Reason, sum.Note = ReasonHostNoFit, "its tasks do not place its clock (worker "+joinInts(sum.Workers)+"'s, by their count): "+err.Error()
		sum.Workers = nil
		return
	}
	if err := fit.Proves(br, reduce.HostClaim{Wall: pl.wallPrior(h), Named: named}); err != nil {
		sum.Reason = hostReason(err)
		sum.Note = "not placed by the tasks of worker " + joinInts(sum.Workers) + ", which do not prove its runs served them: " + err.Error()
		sum.Workers = nil
		return
	}
	h.fit, h.method = fit, reduce.HostCausal
	sum.Method, sum.Tasks = h.method.String(), fit.Tasks()
	off, _ := fit.Offset(br[0].Start)
	rate, lo, hi := fit.Rate()
	sum.OffsetNs, sum.RatePPB, sum.RateLo, sum.RateHi, sum.LimitNs = int64(off), int64(rate), int64(lo), int64(hi), int64(fit.Limit())
	if sum.WallShiftNs == 0 {
		return
	}
	// The larger disagreement, at its first task or its last (the drift
	// the wall shift ignores grows between them).
	last := br[0].End
	for _, b := range br {
		last = max(last, b.End)
	}
	offLast, _ := fit.Offset(last)
	sum.WallDisagreeNs = firstpass.SatSub(sum.WallShiftNs, int64(off))
	if d := firstpass.SatSub(sum.WallShiftNs, int64(offLast)); abs64(d) > abs64(sum.WallDisagreeNs) {
		sum.WallDisagreeNs = d
	}
}

// hostReason is the stable reason for an error of reduce.HostFit.Proves.
func hostReason(err error) Reason {
	switch {
	case errors.Is(err, reduce.ErrHostFewTasks):
		return ReasonHostFewTasks
	case errors.Is(err, reduce.ErrHostRegular):
		return ReasonHostRegular
	case errors.Is(err, reduce.ErrHostRateAtLimit):
		return ReasonHostRateAtLimit
	case errors.Is(err, reduce.ErrHostWallDisagrees):
		return ReasonHostWallDisagrees
	}
	return ReasonHostOutsideTasks
}

// namedWorker reports whether the user named worker id as the one machine
// h served.
func (pl *planner) namedWorker(h *remoteHost, id int64) bool {
	for name, w := range pl.cfg.remoteWorkers {
		if w == id && h.named(name, pl.names) {
			return true
		}
	}
	return false
}

// named reports whether the machine is name, or has a log named name.
func (h *remoteHost) named(name string, logs []string) bool {
	if name == h.machine {
		return true
	}
	for _, i := range h.inputs {
		if i < len(logs) && logs[i] == name {
			return true
		}
	}
	return false
}

// sortBy sorts vs by the ids beside them.
func sortBy(ids []int64, vs []reduce.HostBracket) {
	idx := make([]int, len(ids))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return ids[idx[a]] < ids[idx[b]] })
	ids2, vs2 := slices.Clone(ids), slices.Clone(vs)
	for i, j := range idx {
		ids[i], vs[i] = ids2[j], vs2[j]
	}
}

// firstAnchored returns the machine's first log with a wall-clock anchor,
// when the reference has one too.
func (pl *planner) firstAnchored(h *remoteHost) (int, bool) {
	p := pl.plan
	if !p.hasRef {
		return 0, false
	}
	for _, i := range h.inputs {
		if p.hasOffset[i] {
			return i, true
		}
	}
	return 0, false
}

// wallShift is what the machine's first anchored log's wall-clock anchor
// moves it by, onto the reference's axis.
func (pl *planner) wallShift(h *remoteHost) (int64, bool) {
	i, ok := pl.firstAnchored(h)
	if !ok {
		return 0, false
	}
	return firstpass.SatSub(pl.plan.offsets[i], pl.plan.refOff), true
}

// wallPrior is what the machine's first wall-clock anchor says of its
// clock against the dispatching host's.
func (pl *planner) wallPrior(h *remoteHost) *reduce.WallPrior {
	i, ok := pl.firstAnchored(h)
	if !ok {
		return nil
	}
	shift, _ := pl.wallShift(h)
	return &reduce.WallPrior{At: reduce.HostNanos(pl.scan.FirstWall[i].MonoNS), Offset: reduce.HostNanos(shift)}
}

// pairFlows plans the arrows of worker w's tasks served by session s:
// network1.dispatch → the run's first span, its last span →
// network1.complete. An arrow is planned only where its start is
// certainly drawn before its end.
func (p *remotePlan) pairFlows(w *worker, s *session) {
	fit := s.host.fit
	for k := range min(len(w.ids), len(s.ids)) {
		t, r := w.recs[w.ids[k]], s.recs[s.ids[k]]
		run := s.runs[k]
		if t == nil || r == nil {
			continue
		}
		ys, _, err1 := fit.Map(run.Start)
		ye, _, err2 := fit.Map(run.End)
		if err1 != nil || err2 != nil {
			continue
		}
		if t.DispDrawable && r.First && t.DispTS < int64(ys) {
			fs, fe, _ := s.host.mapExtent(r.FirstTS, r.FirstEnd)
			p.arrows = append(p.arrows, remoteArrow{kind: FlowRemoteDispatchToRun,
				from: arrowEnd{w.pid, t.DispTid, t.DispTS, t.DispEnd}, to: arrowEnd{s.pid, r.FirstTid, fs, fe},
				start: flowEnd{w.pid, w.id, w.ids[k], strace.SpanRemoteDispatch}, end: flowEnd{s.pid, s.ids[k], -1, strace.SpanRemoteRunFirst}})
		}
		if r.Last && t.CompDrawable && int64(ye) < t.CompTS {
			ls, le, _ := s.host.mapExtent(r.LastTS, r.LastEnd)
			p.arrows = append(p.arrows, remoteArrow{kind: FlowRemoteRunToComplete,
				from: arrowEnd{s.pid, r.LastTid, ls, le}, to: arrowEnd{w.pid, t.CompTid, t.CompTS, t.CompEnd},
				start: flowEnd{s.pid, s.ids[k], -1, strace.SpanRemoteRunLast}, end: flowEnd{w.pid, w.id, w.ids[k], strace.SpanRemoteComplete}})
		}
	}
}

// remoteArrow is an arrow between a dispatching host's span and a remote
// run's: its kind, the threads of its ends, and the spans it starts and
// ends at.
type remoteArrow struct {
	kind       FlowKind
	from, to   arrowEnd
	start, end flowEnd
}

// mapExtent maps [s, e] through the machine's drawn map (the bound is
// added where the slice is drawn, from the drawn times: remoteArgs).
func (h *remoteHost) mapExtent(s, e int64) (int64, int64, bool) {
	ys, ok1 := h.drawn(s)
	ye, ok2 := h.drawn(e)
	if !ok1 || !ok2 || e < s {
		return 0, 0, false
	}
	return ys, ye, true
}

// drawn is where the machine's drawn map puts remote instant x.
func (h *remoteHost) drawn(x int64) (int64, bool) {
	off, ok := h.fit.Offset(reduce.HostNanos(x))
	if !ok {
		return 0, false
	}
	y := x + int64(off)
	return y, (off >= 0) == (y >= x)
}
