package remoteplan

import (
	"cmp"
	"errors"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/phasetrace/phasetrace/internal/firstpass"
	"github.com/phasetrace/phasetrace/reduce"
	"github.com/phasetrace/phasetrace/strace"
)

// Which session served which worker, each machine's clock, and the flows
// across machines.

type session struct {
	host *Host
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
func (pl *Planner) fit(p *Plan) {
	workers, sessions := pl.workers(p), pl.sessions(p)
	match, ambiguous := pl.match(workers, sessions)
	byHost := map[*Host][]reduce.HostBracket{}
	named := map[*Host]bool{} // every session of it matched as the user named
	for i, s := range sessions {
		if match[i] < 0 {
			continue
		}
		w := workers[match[i]]
		n, seen := named[s.host]
		named[s.host] = pl.namedWorker(s.host, w.id) && (n || !seen)
		byHost[s.host] = append(byHost[s.host], reduce.Pair(reduce.Worker{ID: w.id, Tasks: w.tasks}, reduce.Session{Runs: s.runs})...)
		s.host.Workers = append(s.host.Workers, w.id)
	}
	for _, h := range p.Hosts {
		axis := p.ref >= 0 && p.inputHost[p.ref] == h
		if shift, ok := pl.wallShift(h); ok && !axis {
			h.WallShiftNs = shift
			h.Method = reduce.HostWall
		}
		switch {
		case axis:
			h.Note = "its clock is the trace's axis (no log among the inputs dispatched to remote workers)"
		case len(byHost[h]) > 0:
			pl.fitHost(h, byHost[h], named[h])
		case ambiguous:
			h.Reason = Ambiguous
			h.Note = "the logs do not determine which worker it served (name it: WithRemoteWorker, -worker " + h.Machine + "=ID)"
		case len(workers) == 0:
			h.Reason = NoDispatcher
			h.Note = "no dispatching log (network1.dispatch to a remote_l3 endpoint) in the inputs"
		default:
			h.Reason = NoMatch
			h.Note = "no worker's tasks match its runs"
		}
	}
	for i, s := range sessions {
		if match[i] >= 0 && s.host.Fit != nil {
			p.pairFlows(workers[match[i]], s)
		}
	}
}

// workers returns the dispatching host's remote workers, by (pid,
// worker id), each with its tasks in dispatch order.
func (pl *Planner) workers(p *Plan) []*worker {
	wk := map[[2]int64]*worker{}
	for k, t := range pl.Scan.Remote.Tasks {
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
			if pl.Options.MPI {
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
func (pl *Planner) sessions(p *Plan) []*session {
	sk := map[firstpass.RunKey]*session{}
	var sessions []*session
	for k, r := range pl.Scan.Remote.Runs {
		h := p.inputHost[k.Input]
		if h == nil {
			continue
		}
		key := firstpass.RunKey{Input: -1 - slices.Index(p.Hosts, h), Pid: k.Pid}
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
	order := make(map[*Host]int, len(p.Hosts))
	for i, h := range p.Hosts {
		order[h] = i
	}
	slices.SortFunc(sessions, func(a, b *session) int {
		return cmp.Or(cmp.Compare(order[a.host], order[b.host]), cmp.Compare(a.pid, b.pid))
	})
	return sessions
}

// matchRemote decides which worker each session served (reduce.
// MatchSessions), the user's -worker names first; -1 for none.
func (pl *Planner) match(workers []*worker, sessions []*session) (match []int, ambiguous bool) {
	rw := make([]reduce.Worker, len(workers))
	for i, w := range workers {
		rw[i] = reduce.Worker{ID: w.id, Tasks: w.tasks}
	}
	rsess := make([]reduce.Session, len(sessions))
	fixed := map[int]int{}
	for i, s := range sessions {
		rsess[i] = reduce.Session{Name: s.host.Machine, Runs: s.runs, Wall: pl.wallPrior(s.host)}
		for name, id := range pl.Options.Workers {
			if !s.host.named(name, pl.Names) {
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
	match, err := reduce.MatchSessions(rw, rsess, fixed, pl.Options.Fit...)
	return match, errors.Is(err, reduce.ErrAmbiguous)
}

// fitHost fits machine h's clock to the brackets of its tasks, and places
// it by them only when the fit proves its runs served them
// (reduce.HostFit.Proves); named: the user named the worker it served.
func (pl *Planner) fitHost(h *Host, br []reduce.HostBracket, named bool) {
	fit, err := reduce.FitHost(br, pl.Options.Fit...)
	if err != nil {
		// Workers lists only the workers it is placed by.
		h.Reason, h.Note = NoFit, "its tasks do not place its clock (worker "+joinInts(h.Workers)+"'s, by their count): "+err.Error()
		h.Workers = nil
		return
	}
	if err := fit.Proves(br, reduce.HostClaim{Wall: pl.wallPrior(h), Named: named}); err != nil {
		h.Reason = hostReason(err)
		h.Note = "not placed by the tasks of worker " + joinInts(h.Workers) + ", which do not prove its runs served them: " + err.Error()
		h.Workers = nil
		return
	}
	h.Fit, h.Method = fit, reduce.HostCausal
	h.Tasks = fit.Tasks()
	off, _ := fit.Offset(br[0].Start)
	rate, lo, hi := fit.Rate()
	h.OffsetNs, h.RatePPB, h.RateLo, h.RateHi, h.LimitNs = int64(off), int64(rate), int64(lo), int64(hi), int64(fit.Limit())
	if h.WallShiftNs == 0 {
		return
	}
	// The larger disagreement, at its first task or its last (the drift
	// the wall shift ignores grows between them).
	last := br[0].End
	for _, b := range br {
		last = max(last, b.End)
	}
	offLast, _ := fit.Offset(last)
	h.WallDisagreeNs = firstpass.SatSub(h.WallShiftNs, int64(off))
	if d := firstpass.SatSub(h.WallShiftNs, int64(offLast)); abs64(d) > abs64(h.WallDisagreeNs) {
		h.WallDisagreeNs = d
	}
}

// hostReason is the reason for an error of reduce.HostFit.Proves.
func hostReason(err error) Reason {
	switch {
	case errors.Is(err, reduce.ErrHostFewTasks):
		return FewTasks
	case errors.Is(err, reduce.ErrHostRegular):
		return Regular
	case errors.Is(err, reduce.ErrHostRateAtLimit):
		return RateAtLimit
	case errors.Is(err, reduce.ErrHostWallDisagrees):
		return WallDisagrees
	}
	return OutsideTasks
}

// joinInts is v's numbers, separated by commas.
func joinInts(v []int64) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.FormatInt(x, 10)
	}
	return strings.Join(s, ", ")
}

// namedWorker reports whether the user named worker id as the one machine
// h served.
func (pl *Planner) namedWorker(h *Host, id int64) bool {
	for name, w := range pl.Options.Workers {
		if w == id && h.named(name, pl.Names) {
			return true
		}
	}
	return false
}

// named reports whether the machine is name, or has a log named name.
func (h *Host) named(name string, logs []string) bool {
	if name == h.Machine {
		return true
	}
	for _, i := range h.Inputs {
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
func (pl *Planner) firstAnchored(h *Host) (int, bool) {
	p := pl.plan
	if !p.hasRef {
		return 0, false
	}
	for _, i := range h.Inputs {
		if p.hasOffset[i] {
			return i, true
		}
	}
	return 0, false
}

// wallShift is what the machine's first anchored log's wall-clock anchor
// moves it by, onto the reference's axis.
func (pl *Planner) wallShift(h *Host) (int64, bool) {
	i, ok := pl.firstAnchored(h)
	if !ok {
		return 0, false
	}
	return firstpass.SatSub(pl.plan.offsets[i], pl.plan.refOff), true
}

// wallPrior is what the machine's first wall-clock anchor says of its
// clock against the dispatching host's.
func (pl *Planner) wallPrior(h *Host) *reduce.WallPrior {
	i, ok := pl.firstAnchored(h)
	if !ok {
		return nil
	}
	shift, _ := pl.wallShift(h)
	return &reduce.WallPrior{At: reduce.HostNanos(pl.Scan.FirstWall[i].MonoNS), Offset: reduce.HostNanos(shift)}
}

// pairFlows plans the arrows of worker w's tasks served by session s:
// network1.dispatch → the run's first span, its last span →
// network1.complete. An arrow is planned only where its start is
// certainly drawn before its end.
func (p *Plan) pairFlows(w *worker, s *session) {
	fit := s.host.Fit
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
			p.Arrows = append(p.Arrows, Arrow{Kind: DispatchToRun,
				From: Extent{w.pid, t.DispTid, t.DispTS, t.DispEnd}, To: Extent{s.pid, r.FirstTid, fs, fe},
				Start: SpanKey{w.pid, w.id, w.ids[k], strace.SpanRemoteDispatch}, End: SpanKey{s.pid, s.ids[k], -1, strace.SpanRemoteRunFirst}})
		}
		if r.Last && t.CompDrawable && int64(ye) < t.CompTS {
			ls, le, _ := s.host.mapExtent(r.LastTS, r.LastEnd)
			p.Arrows = append(p.Arrows, Arrow{Kind: RunToComplete,
				From: Extent{s.pid, r.LastTid, ls, le}, To: Extent{w.pid, t.CompTid, t.CompTS, t.CompEnd},
				Start: SpanKey{s.pid, s.ids[k], -1, strace.SpanRemoteRunLast}, End: SpanKey{w.pid, w.id, w.ids[k], strace.SpanRemoteComplete}})
		}
	}
}

// ArrowKind is the kind of an arrow across machines.
type ArrowKind uint8

// Arrow kinds.
const (
	DispatchToRun ArrowKind = iota // network1.dispatch → the remote run's first span
	RunToComplete                  // the remote run's last span → network1.complete
)

// Arrow is an arrow between a dispatching host's span and a remote run's:
// its kind, where its ends are drawn, and the spans it starts and ends at.
type Arrow struct {
	Kind       ArrowKind
	From, To   Extent
	Start, End SpanKey
}

// Extent is the thread an end of an arrow is drawn on, and the extent of
// its span on the trace's axis.
type Extent struct {
	Pid     int32
	Tid     int64
	TS, End int64
}

// SpanKey names a span an arrow starts or ends at: a dispatch or complete
// by (pid, worker, dispatch id), a remote run's span by (pid, run id).
type SpanKey struct {
	pid  int32
	a, b int64
	name string
}

// KeyOf returns the key of sp, when sp is a span an arrow across machines
// may start or end at.
func KeyOf(sp *strace.Span) (SpanKey, bool) {
	switch sp.Name {
	case strace.SpanRemoteDispatch, strace.SpanRemoteComplete:
		w, ok1 := sp.Attr(strace.AttrWorkerID)
		d, ok2 := sp.Attr(strace.AttrDispatchID)
		if !ok1 || !ok2 {
			return SpanKey{}, false
		}
		return SpanKey{sp.Pid, w.Int, d.Int, sp.Name}, true
	case strace.SpanRemoteRunFirst, strace.SpanRemoteRunLast:
		r, ok := sp.Attr(strace.AttrRunID)
		if !ok {
			return SpanKey{}, false
		}
		return SpanKey{sp.Pid, r.Int, -1, sp.Name}, true
	}
	return SpanKey{}, false
}
