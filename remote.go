package phasetrace

import (
	"bufio"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/phasetrace/phasetrace/perfetto"
	"github.com/phasetrace/phasetrace/reduce"
	"github.com/phasetrace/phasetrace/strace"
)

// Remote workers. An L4 process (network1) on the dispatching host sends
// tasks to L3 worker daemons on other machines; each machine logs on its own
// CLOCK_MONOTONIC. The first pass learns, from the dispatching log, every
// task's network1.dispatch and network1.complete per worker, and from each
// remote machine's logs its daemon's runs; the k-th task sent to a worker
// is the k-th run of its session. Package reduce decides which session
// served which worker and fits each machine's clock to the brackets the
// tasks make (reduce.FitHost); here the logs are only grouped into machines
// and every remote record is drawn through its machine's mapping, with the
// bound reduce gives, flows joining the dispatch, the remote run and the
// complete. A remote machine whose tasks are not in the logs is moved by its
// wall-clock anchor, marked so; one without either keeps its own times,
// marked unplaced. Pids that repeat across machines are given trace pids of
// their own (the slices keep the OS pid).

// Transport is how the dispatching host's frames reach remote workers; it
// decides which instant of network1.dispatch the remote run is known to
// follow.
type Transport uint8

// Transports.
const (
	// TransportSocket (the default): the frame is sent after
	// network1.dispatch ends.
	TransportSocket Transport = iota
	// TransportMPI: the frame may leave while network1.dispatch runs; only
	// its start precedes the remote run.
	TransportMPI
)

func (t Transport) String() string {
	if t == TransportMPI {
		return "mpi"
	}
	return "socket"
}

// WithTransport says how frames reached the remote workers (default
// TransportSocket).
func WithTransport(t Transport) Option { return func(c *config) { c.transport = t } }

// WithRemoteWorker names the worker_id whose tasks a remote machine's logs
// served, where the logs do not determine it. name is the machine (as its
// daemon banner names it) or the name of one of its logs.
func WithRemoteWorker(name string, workerID int64) Option {
	return func(c *config) {
		if c.remoteWorkers == nil {
			c.remoteWorkers = map[string]int64{}
		}
		c.remoteWorkers[name] = workerID
	}
}

// WithHostClock passes options to the remote hosts' clock model
// (reduce.FitHost), such as reduce.WithHostMaxRate.
func WithHostClock(opts ...reduce.HostFitOption) Option {
	return func(c *config) { c.hostFit = append(c.hostFit, opts...) }
}

// HostSummary says how one remote machine's logs were placed on the
// dispatching host's axis.
type HostSummary struct {
	Machine string   `json:"machine"`
	Inputs  []string `json:"inputs"`
	// Method is "causal" (by the tasks it ran), "wall" (by its wall-clock
	// anchor: no bound) or "unplaced".
	Method    string `json:"method"`
	Transport string `json:"transport,omitempty"`
	// Workers are the worker_ids it served; Tasks the tasks fitted.
	Workers []int64 `json:"workers,omitempty"`
	Tasks   int     `json:"tasks,omitempty"`
	// OffsetNs is the dispatching host's clock less this machine's, at its
	// first task; Rate the rate error of its clock the map converts with,
	// within [RateLo, RateHi] (ppb).
	OffsetNs int64 `json:"offset_ns,omitempty"`
	RatePPB  int64 `json:"rate_ppb,omitempty"`
	RateLo   int64 `json:"rate_lo_ppb,omitempty"`
	RateHi   int64 `json:"rate_hi_ppb,omitempty"`
	// LimitNs is the information limit: the smallest forward plus the
	// smallest return latency. No bound can be below half of it.
	LimitNs int64 `json:"information_limit_ns,omitempty"`
	// WallShiftNs is what its wall-clock anchor would have moved it by;
	// WallDisagreeNs how far that is from the causal offset, at its first
	// or its last task, whichever is farther.
	WallShiftNs    int64 `json:"wall_shift_ns,omitempty"`
	WallDisagreeNs int64 `json:"wall_disagrees_by_ns,omitempty"`
	// Pids are the pids given trace pids of their own, OS pid → trace pid.
	Pids map[int32]int32 `json:"pids,omitempty"`
	// Bound is the distribution of the bounds of its spans drawn.
	Bound BoundStats `json:"bound_ns"`
	Note  string     `json:"note,omitempty"`
}

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
}

type taskKey struct {
	input    int
	pid      int32
	worker   int64
	dispatch int64
}

type taskRec struct {
	dispTS, dispEnd, compTS int64
	hasDisp, hasComp        bool
	// drawable: the span has an interval the converter draws (a flow may
	// end at it).
	dispDrawable, compDrawable bool
}

type runKey struct {
	input int
	pid   int32
	run   int64
}

type runRec struct {
	start, end int64
	// Whether the run's first and last spans are there to be drawn, for
	// the flows that end or start at them.
	first, last bool
}

func (r *remoteScan) grow(input int) {
	for len(r.banner) <= input {
		r.banner = append(r.banner, "")
		r.pids = append(r.pids, nil)
		r.lastPid = append(r.lastPid, 0)
	}
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
	if r.lastPid[input] == pid && pid != 0 {
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
	if sp.IsDevice() || strace.FamilyOf(sp.Name) != strace.FamilyNode {
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
			t.dispTS, t.dispEnd, t.hasDisp, t.dispDrawable = sp.TS, end, true, drawable(sp)
		} else if sp.Name == strace.SpanRemoteComplete && !t.hasComp {
			t.compTS, t.hasComp, t.compDrawable = sp.TS, true, drawable(sp)
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
	x.first = x.first || sp.Name == strace.SpanRemoteRunFirst && drawable(sp)
	x.last = x.last || sp.Name == strace.SpanRemoteRunLast && drawable(sp)
}

// drawable reports whether a host span's interval is one the converter
// draws (checkSpan).
func drawable(sp *strace.Span) bool {
	reason, _ := checkSpan(sp, false)
	return reason == ""
}

// remoteHost is one remote machine and how its logs are drawn.
type remoteHost struct {
	machine string
	inputs  []int
	method  reduce.HostMethod
	fit     *reduce.HostFit
	sum     *HostSummary
	pids    map[int32]bool // trace pids
}

// remotePlan is how every log is drawn on the dispatching host's axis.
type remotePlan struct {
	hosts     []*remoteHost
	inputHost []*remoteHost // per log; nil on the dispatching host
	byPid     map[int32]*remoteHost
	osPid     map[int32]int32 // trace pid → OS pid, where they differ
	attach    map[flowEnd]*flowAttach
	ref       int // the log whose clock is the axis: the dispatching log, else the first anchored one; -1 when none
	// dispatching: ref is the log that sent remote tasks.
	dispatching bool
	offsets     []int64 // per log: wall − mono of its first wall-clock anchor
	hasOffset   []bool
	refOff      int64
	hasRef      bool
}

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

// planHosts groups the logs into machines: a log with a daemon banner is
// its machine's; a log whose wall-clock anchor puts its monotonic clock
// more than hostGap from the reference's is another machine's, the same as
// a banner's log when their clocks agree. It returns nil when every log is
// the reference host's.
func (c *converter) planHosts(n int) *remotePlan {
	s := c.scan
	rs := &s.remote
	rs.grow(n - 1)
	ref := rs.reference()
	refOff, hasRef := int64(0), false
	offset := func(i int) (int64, bool) {
		if i < 0 || i >= len(s.firstWall) || s.firstWall[i] == nil {
			return 0, false
		}
		return s.firstWall[i].WallNS - s.firstWall[i].MonoNS, true
	}
	dispatching := ref >= 0
	if !dispatching {
		// No log dispatched to remote workers: the axis is the first
		// anchored log's clock, one without a daemon banner if there is.
		for pass := 0; pass < 2 && ref < 0; pass++ {
			for i := range n {
				if _, ok := offset(i); ok && (pass == 1 || rs.banner[i] == "") {
					ref = i
					break
				}
			}
		}
	}
	if ref >= 0 {
		refOff, hasRef = offset(ref)
	}
	p := &remotePlan{inputHost: make([]*remoteHost, n), byPid: map[int32]*remoteHost{}, ref: ref, refOff: refOff, hasRef: hasRef,
		offsets: make([]int64, n), hasOffset: make([]bool, n), dispatching: dispatching}
	for i := range n {
		p.offsets[i], p.hasOffset[i] = offset(i)
	}
	byName := map[string]*remoteHost{}
	host := func(name string) *remoteHost {
		h := byName[name]
		if h == nil {
			h = &remoteHost{machine: name, pids: map[int32]bool{}}
			byName[name] = h
			p.hosts = append(p.hosts, h)
		}
		return h
	}
	for i := range n {
		if m := rs.banner[i]; m != "" && (i != ref || !dispatching) {
			p.inputHost[i] = host(m)
		}
	}
	// Logs without a banner: by their clock.
	for i := range n {
		if p.inputHost[i] != nil || i == ref {
			continue
		}
		o, ok := offset(i)
		if !ok || !hasRef || abs64(o-refOff) <= hostGap {
			continue
		}
		var same *remoteHost
		for _, h := range p.hosts {
			for _, j := range h.inputs {
				if oj, ok := offset(j); ok && abs64(o-oj) <= hostGap {
					same = h
				}
			}
		}
		if same == nil {
			same = host("host " + strconv.Itoa(len(p.hosts)+1))
		}
		p.inputHost[i] = same
	}
	if len(p.hosts) == 0 {
		return nil
	}
	for i, h := range p.inputHost {
		if h != nil {
			h.inputs = append(h.inputs, i)
		}
	}
	return p
}

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// pidMaps returns, per log, the pids to give trace pids of their own: those
// of a remote machine that another machine uses too. nil when none repeat.
func (p *remotePlan) pidMaps(rs *remoteScan, n int) []map[int32]int32 {
	owner := map[int32]*remoteHost{} // nil value: the dispatching host
	used := map[int32]bool{}
	clash := map[*remoteHost]map[int32]bool{}
	for i := range n {
		h := p.inputHost[i]
		if i >= len(rs.pids) {
			continue
		}
		for pid := range rs.pids[i] {
			used[pid] = true
			if o, ok := owner[pid]; ok && o != h {
				if h != nil {
					setPid(clash, h, pid)
				} else {
					setPid(clash, o, pid)
				}
				continue
			}
			owner[pid] = h
		}
	}
	if len(clash) == 0 {
		return nil
	}
	next := int32(math.MaxInt32)
	fresh := func() int32 {
		for used[next] {
			next--
		}
		used[next] = true
		return next
	}
	out := make([]map[int32]int32, n)
	for _, h := range p.hosts {
		pids := make([]int32, 0, len(clash[h]))
		for pid := range clash[h] {
			pids = append(pids, pid)
		}
		slices.Sort(pids)
		m := map[int32]int32{}
		for _, pid := range pids {
			m[pid] = fresh()
		}
		for _, i := range h.inputs {
			if len(m) > 0 {
				out[i] = m
			}
		}
	}
	return out
}

func setPid(m map[*remoteHost]map[int32]bool, h *remoteHost, pid int32) {
	if m[h] == nil {
		m[h] = map[int32]bool{}
	}
	m[h][pid] = true
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

// planRemote decides, after the first pass, how each log is drawn: it
// groups the logs into machines, gives repeated pids trace pids of their
// own (scanning again if it must), matches sessions to workers and fits
// every machine's clock.
func (c *converter) planRemote(logs []Input) error {
	p := c.planHosts(len(logs))
	if p == nil {
		return nil
	}
	if pm := p.pidMaps(&c.scan.remote, len(logs)); pm != nil && c.pidMaps == nil {
		// Scan again, the repeated pids given their trace pids.
		c.pidMaps = pm
		if err := c.firstPass(logs, c.repeats); err != nil {
			return err
		}
		p = c.planHosts(len(logs))
	}
	names := make([]string, len(logs))
	for i, in := range logs {
		names[i] = in.Name
	}
	c.settleRemote(p, names)
	return nil
}

// settleRemote fixes plan p: which pids are whose, what the process
// tracks say, which session served which worker and each machine's clock.
func (c *converter) settleRemote(p *remotePlan, names []string) {
	p.osPid = map[int32]int32{}
	for i, m := range c.pidMaps {
		for os, tp := range m {
			p.osPid[tp] = os
			if h := p.inputHost[i]; h != nil {
				if h.sumPids() == nil {
					h.sum.Pids = map[int32]int32{}
				}
				h.sum.Pids[os] = tp
			}
		}
	}
	rs := &c.scan.remote
	for _, h := range p.hosts {
		for _, i := range h.inputs {
			for pid := range rs.pids[i] {
				h.pids[pid] = true
				p.byPid[pid] = h
			}
			h.summary().Inputs = append(h.summary().Inputs, names[i])
		}
	}
	// Process tracks say which machine they ran on.
	here := ""
	if p.dispatching {
		here = "the dispatching host"
	}
	for pid, pr := range c.scan.procs {
		pr.machine, pr.osPid = here, 0
		if h := p.byPid[pid]; h != nil {
			pr.machine, pr.osPid = h.machine, p.osPid[pid]
			if p.dispatching {
				pr.machineRank = 1 + slices.Index(p.hosts, h) // the dispatching host's processes first, then each machine's
			}
		}
	}
	c.remote = p
	c.scan.remotePlan = p
	c.fitHosts(p)
}

func (h *remoteHost) summary() *HostSummary {
	if h.sum == nil {
		h.sum = &HostSummary{Machine: h.machine, Method: reduce.HostUnplaced.String()}
	}
	return h.sum
}

func (h *remoteHost) sumPids() map[int32]int32 { return h.summary().Pids }

type session struct {
	host *remoteHost
	pid  int32
	runs []reduce.HostBracket
	ids  []int64
	recs map[int64]*runRec
}

type worker struct {
	pid   int32
	id    int64
	tasks []reduce.HostBracket
	ids   []int64 // dispatch ids
	recs  map[int64]*taskRec
}

// fitHosts matches sessions to workers and fits each machine's clock.
func (c *converter) fitHosts(p *remotePlan) {
	workers, sessions := c.remoteWorkers(p), c.remoteSessions(p)
	match, ambiguous := c.matchRemote(workers, sessions)
	byHost := map[*remoteHost][]reduce.HostBracket{}
	for i, s := range sessions {
		if match[i] < 0 {
			continue
		}
		w := workers[match[i]]
		byHost[s.host] = append(byHost[s.host], reduce.Pair(reduce.Worker{ID: w.id, Tasks: w.tasks}, reduce.Session{Runs: s.runs})...)
		s.host.summary().Workers = append(s.host.summary().Workers, w.id)
	}
	for _, h := range p.hosts {
		sum := h.summary()
		sum.Transport = c.cfg.transport.String()
		axis := p.ref >= 0 && p.inputHost[p.ref] == h
		if shift, ok := c.wallShift(h); ok && !axis {
			sum.WallShiftNs = shift
			h.method = reduce.HostWall
		}
		sum.Method = h.method.String()
		switch {
		case axis:
			sum.Note = "its clock is the trace's axis (no log among the inputs dispatched to remote workers)"
		case len(byHost[h]) > 0:
			c.fitHost(h, byHost[h])
		case ambiguous:
			sum.Note = "the logs do not determine which worker it served (name it: WithRemoteWorker, -worker " + h.machine + "=ID)"
		case len(workers) == 0:
			sum.Note = "no dispatching log (network1.dispatch to a remote_l3 endpoint) in the inputs"
		default:
			sum.Note = "no worker's tasks match its runs"
		}
	}
	p.attach = map[flowEnd]*flowAttach{}
	for i, s := range sessions {
		if match[i] >= 0 && s.host.fit != nil {
			c.pairFlows(p, workers[match[i]], s)
		}
	}
}

// remoteWorkers returns the dispatching host's remote workers, by (pid,
// worker id), each with its tasks in dispatch order.
func (c *converter) remoteWorkers(p *remotePlan) []*worker {
	wk := map[[2]int64]*worker{}
	for k, t := range c.scan.remote.tasks {
		if p.inputHost[k.input] != nil {
			continue
		}
		key := [2]int64{int64(k.pid), k.worker}
		w := wk[key]
		if w == nil {
			w = &worker{pid: k.pid, id: k.worker, recs: map[int64]*taskRec{}}
			wk[key] = w
		}
		b := reduce.HostBracket{Sent: math.MinInt64, Received: math.MaxInt64}
		if t.hasDisp {
			b.Sent = reduce.HostNanos(t.dispEnd)
			if c.cfg.transport == TransportMPI {
				b.Sent = reduce.HostNanos(t.dispTS)
			}
		}
		if t.hasComp {
			b.Received = reduce.HostNanos(t.compTS)
		}
		w.tasks = append(w.tasks, b)
		w.ids = append(w.ids, k.dispatch)
		w.recs[k.dispatch] = t
	}
	workers := make([]*worker, 0, len(wk))
	for _, w := range wk {
		sortBy(w.ids, w.tasks)
		workers = append(workers, w)
	}
	sort.Slice(workers, func(i, j int) bool {
		return workers[i].pid < workers[j].pid || workers[i].pid == workers[j].pid && workers[i].id < workers[j].id
	})
	return workers
}

// remoteSessions returns the remote daemons' sessions, by (machine, daemon
// pid), each with its runs in run_id order.
func (c *converter) remoteSessions(p *remotePlan) []*session {
	sk := map[runKey]*session{}
	var sessions []*session
	for k, r := range c.scan.remote.runs {
		h := p.inputHost[k.input]
		if h == nil {
			continue
		}
		key := runKey{input: -1 - slices.Index(p.hosts, h), pid: k.pid}
		s := sk[key]
		if s == nil {
			s = &session{host: h, pid: k.pid, recs: map[int64]*runRec{}}
			sk[key] = s
			sessions = append(sessions, s)
		}
		s.runs = append(s.runs, reduce.HostBracket{Start: reduce.HostNanos(r.start), End: reduce.HostNanos(r.end)})
		s.ids = append(s.ids, k.run)
		s.recs[k.run] = r
	}
	for _, s := range sessions {
		sortBy(s.ids, s.runs)
	}
	sort.Slice(sessions, func(i, j int) bool {
		a, b := sessions[i], sessions[j]
		ia, ib := slices.Index(p.hosts, a.host), slices.Index(p.hosts, b.host)
		return ia < ib || ia == ib && a.pid < b.pid
	})
	return sessions
}

// matchRemote decides which worker each session served (reduce.
// MatchSessions), the user's -worker names first; -1 for none.
func (c *converter) matchRemote(workers []*worker, sessions []*session) (match []int, ambiguous bool) {
	rw := make([]reduce.Worker, len(workers))
	for i, w := range workers {
		rw[i] = reduce.Worker{ID: w.id, Tasks: w.tasks}
	}
	rsess := make([]reduce.Session, len(sessions))
	fixed := map[int]int{}
	for i, s := range sessions {
		rsess[i] = reduce.Session{Name: s.host.machine, Runs: s.runs, Wall: c.wallPrior(s.host)}
		for name, id := range c.cfg.remoteWorkers {
			if !s.host.named(name, c.names) {
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
	match, err := reduce.MatchSessions(rw, rsess, fixed, c.cfg.hostFit...)
	return match, errors.Is(err, reduce.ErrAmbiguous)
}

// fitHost fits machine h's clock to the brackets of its tasks.
func (c *converter) fitHost(h *remoteHost, br []reduce.HostBracket) {
	sum := h.summary()
	fit, err := reduce.FitHost(br, c.cfg.hostFit...)
	if err != nil {
		sum.Note = "its tasks admit no clock mapping: " + err.Error()
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
	sum.WallDisagreeNs = sum.WallShiftNs - int64(off)
	if d := sum.WallShiftNs - int64(offLast); abs64(d) > abs64(sum.WallDisagreeNs) {
		sum.WallDisagreeNs = d
	}
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

// wallShift is what the machine's first anchored log's wall-clock anchor
// moves it by, onto the reference's axis.
func (c *converter) wallShift(h *remoteHost) (int64, bool) {
	p := c.remote
	if !p.hasRef {
		return 0, false
	}
	for _, i := range h.inputs {
		if p.hasOffset[i] {
			return p.offsets[i] - p.refOff, true
		}
	}
	return 0, false
}

// wallPrior is what the machine's first wall-clock anchor says of its
// clock against the dispatching host's.
func (c *converter) wallPrior(h *remoteHost) *reduce.WallPrior {
	p := c.remote
	if !p.hasRef {
		return nil
	}
	for _, i := range h.inputs {
		if p.hasOffset[i] {
			return &reduce.WallPrior{At: reduce.HostNanos(c.scan.firstWall[i].MonoNS), Offset: reduce.HostNanos(p.offsets[i] - p.refOff)}
		}
	}
	return nil
}

// pairFlows prepares the flows of worker w's tasks served by session s:
// network1.dispatch → the run's first span, its last span →
// network1.complete. An arrow is drawn only where its start is certainly
// drawn before its end.
func (c *converter) pairFlows(p *remotePlan, w *worker, s *session) {
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
		if t.dispDrawable && r.first && t.dispTS < int64(ys) {
			id := c.flows.id()
			p.at(flowEnd{w.pid, w.id, w.ids[k], strace.SpanRemoteDispatch}).flows = append(p.at(flowEnd{w.pid, w.id, w.ids[k], strace.SpanRemoteDispatch}).flows, id)
			e := p.at(flowEnd{s.pid, s.ids[k], -1, strace.SpanRemoteRunFirst})
			e.endFlows = append(e.endFlows, id)
		}
		if r.last && t.compDrawable && int64(ye) < t.compTS {
			id := c.flows.id()
			e := p.at(flowEnd{s.pid, s.ids[k], -1, strace.SpanRemoteRunLast})
			e.flows = append(e.flows, id)
			e = p.at(flowEnd{w.pid, w.id, w.ids[k], strace.SpanRemoteComplete})
			e.endFlows = append(e.endFlows, id)
		}
	}
}

func (p *remotePlan) at(k flowEnd) *flowAttach {
	a := p.attach[k]
	if a == nil {
		a = &flowAttach{}
		p.attach[k] = a
	}
	return a
}

// remoteFlows adds the remote flows that start or end at a node span.
func (c *converter) remoteFlows(sp *strace.Span, flows, endFlows []perfetto.FlowID) ([]perfetto.FlowID, []perfetto.FlowID) {
	p := c.remote
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
	for range a.flows {
		switch sp.Name {
		case strace.SpanRemoteDispatch:
			c.sum.flow("network1.dispatch → remote run")
		case strace.SpanRemoteRunLast:
			c.sum.flow("remote run → network1.complete")
		}
	}
	return append(flows, a.flows...), append(endFlows, a.endFlows...)
}

// adjust puts a record of log i on the dispatching host's axis: its pids
// become their trace pids, and a causally placed machine's host times go
// through its mapping (a wall-placed one's were shifted already).
func (p *remotePlan) adjust(i int, rec *strace.Record, pm map[int32]int32) {
	if pm != nil {
		remapPids(rec, pm)
	}
	h := p.inputHost[i]
	if h == nil || h.fit == nil {
		return
	}
	if rec.Prefix.Present {
		if y, _, err := h.fit.Map(reduce.HostNanos(rec.Prefix.MonoNS)); err == nil {
			rec.Prefix.MonoNS = int64(y)
		}
	}
	switch {
	case rec.Kind == strace.KindSpan && !rec.Span.IsDevice():
		s, e, ok := h.mapExtent(rec.Span.TS, rec.Span.End())
		if ok {
			rec.Span.TS, rec.Span.Dur = s, e-s
		}
	case rec.Kind == strace.KindBindPhase:
		if rec.BindPhase.StartNS <= math.MaxInt64 && rec.BindPhase.DurNS <= math.MaxInt64 {
			st := int64(rec.BindPhase.StartNS)
			if s, e, ok := h.mapExtent(st, st+int64(rec.BindPhase.DurNS)); ok && s >= 0 {
				rec.BindPhase.StartNS, rec.BindPhase.DurNS = uint64(s), uint64(e-s)
			}
		}
	}
}

// mapExtent maps [s, e] through the machine's line.
func (h *remoteHost) mapExtent(s, e int64) (int64, int64, bool) {
	ys, _, err1 := h.fit.Map(reduce.HostNanos(s))
	ye, _, err2 := h.fit.Map(reduce.HostNanos(e))
	if err1 != nil || err2 != nil || e < s {
		return 0, 0, false
	}
	return int64(ys), int64(ye), true
}

// remoteArgs adds, to a slice of a remote machine's span drawn from ts to
// end, the machine, how it was placed and (host spans) its bound.
func (c *converter) remoteArgs(args []perfetto.Arg, pid int32, ts, end int64, bound bool) []perfetto.Arg {
	p := c.remote
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

// remoteHostOf returns the causally placed machine of pid, or nil.
func (c *converter) remoteHostOf(pid int32) *remoteHost {
	if c.remote == nil {
		return nil
	}
	if h := c.remote.byPid[pid]; h != nil && h.fit != nil {
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

// remoteWallAnchor reports whether a wall-clock anchor of pid is set aside:
// its machine is placed by causality, and its wall clock agrees with the
// dispatching host's only to NTP grade.
func (c *converter) remoteWallAnchor(pid int32) bool { return c.remoteHostOf(pid) != nil }

// mergeShift is an offset near a causally placed log's, for ordering its
// records among the others'.
func (c *converter) mergeShift(i int) int64 {
	if c.remote == nil || i >= len(c.remote.inputHost) {
		return 0
	}
	h := c.remote.inputHost[i]
	if h == nil || h.fit == nil {
		return 0
	}
	return h.sum.OffsetNs
}

// finishHosts puts the machines' summaries in the Summary.
func (c *converter) finishHosts() {
	if c.remote == nil {
		return
	}
	c.sum.Hosts = c.sum.Hosts[:0]
	for _, h := range c.remote.hosts {
		s := h.summary()
		s.Bound.finish()
		c.sum.Hosts = append(c.sum.Hosts, *s)
	}
}

// adjustRemote puts a record of log i on the dispatching host's axis.
func (c *converter) adjustRemote(i int, rec *strace.Record) {
	var pm map[int32]int32
	if i < len(c.pidMaps) {
		pm = c.pidMaps[i]
	}
	c.remote.adjust(i, rec, pm)
}

// writeHosts writes how each remote machine was placed.
func writeHosts(b *strings.Builder, hosts []HostSummary) {
	if len(hosts) == 0 {
		return
	}
	b.WriteString("remote machines (on the dispatching host's clock; bound: the most a drawn instant can be from where it truly was):\n")
	for _, h := range hosts {
		fmt.Fprintf(b, "  %s (%s): %s", h.Machine, strings.Join(h.Inputs, ", "), h.Method)
		switch {
		case h.Method == reduce.HostCausal.String():
			fmt.Fprintf(b, " (%s transport), worker %s, %s\n", h.Transport, joinInts(h.Workers), count(int64(h.Tasks), "task"))
			fmt.Fprintf(b, "    offset %d ns, rate %s ppm in [%s, %s], information limit %d ns (the least forward + return latency)\n",
				h.OffsetNs, ppm(h.RatePPB), ppm(h.RateLo), ppm(h.RateHi), h.LimitNs)
			if h.Bound.Count > 0 {
				fmt.Fprintf(b, "    bound min %d ns, median %d ns, p90 %d ns, max %d ns\n", h.Bound.Min, h.Bound.Median, h.Bound.P90, h.Bound.Max)
			}
			if h.WallShiftNs != 0 {
				fmt.Fprintf(b, "    its wall-clock anchor would have put it up to %d ns away\n", h.WallDisagreeNs)
			}
		case h.Method == reduce.HostWall.String():
			fmt.Fprintf(b, ": moved %d ns by its wall-clock anchor, no bound\n", h.WallShiftNs)
		default:
			b.WriteString(": drawn at its own times\n")
		}
		if h.Note != "" {
			fmt.Fprintf(b, "    %s\n", h.Note)
		}
		for _, os := range sortedPids(h.Pids) {
			fmt.Fprintf(b, "    pid %d, also used on another machine, is trace pid %d\n", os, h.Pids[os])
		}
	}
}

func joinInts(v []int64) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.FormatInt(x, 10)
	}
	return strings.Join(s, ", ")
}

// ppm formats ppb as ppm with three decimals, in integers.
func ppm(v int64) string {
	sign := ""
	if v < 0 {
		sign, v = "-", -v
	}
	return fmt.Sprintf("%s%d.%03d", sign, v/1000, v%1000)
}

func sortedPids(m map[int32]int32) []int32 {
	out := make([]int32, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
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

// sameHost reports whether a node.dispatch of process a may have launched
// a chip run of process b: a remote daemon launches runs on its own
// machine only, and no other machine's dispatch launches them there.
// (Machines placed by their wall clocks keep the old rule: any.)
func (c *converter) sameHost(a, b int32) bool {
	if c.remote == nil {
		return true
	}
	ha, hb := c.remote.byPid[a], c.remote.byPid[b]
	causal := ha != nil && ha.fit != nil || hb != nil && hb.fit != nil
	return !causal || ha == hb
}
