package phasetrace

import (
	"bufio"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/phasetrace/phasetrace/reduce"
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
	// tasks and runs need no keeping (they would grow with the log).
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
}

func (r *remoteScan) grow(input int) {
	for len(r.banner) <= input {
		r.banner = append(r.banner, "")
		r.pids = append(r.pids, nil)
		r.lastPid = append(r.lastPid, 0)
		r.lo, r.hi = append(r.lo, math.MaxInt64), append(r.hi, math.MinInt64)
	}
}

// fits reports whether shift keeps every host span of log input that the
// first pass read inside the trace's time range.
func (r *remoteScan) fits(input int, shift int64) bool {
	if input >= len(r.lo) || r.lo[input] > r.hi[input] {
		return true // no host span to keep
	}
	lo, hi := r.lo[input], r.hi[input]
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
			t.compTS, t.hasComp, t.compDrawable, t.compTid = sp.TS, true, drawable(sp), sp.Tid
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
		x.first, x.firstTid = true, sp.Tid
	}
	if !x.last && sp.Name == strace.SpanRemoteRunLast && drawable(sp) {
		x.last, x.lastTid = true, sp.Tid
	}
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
	// offAxis says why its wall-clock anchor was not used, when it would
	// have moved its spans outside the trace's time range.
	offAxis string
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
	s.logWalls()
	rs := &s.remote
	rs.grow(n - 1)
	ref := rs.reference()
	refOff, hasRef := int64(0), false
	offset := func(i int) (int64, bool) {
		if i < 0 || i >= len(s.firstWall) || s.firstWall[i] == nil {
			return 0, false
		}
		return wallOffset(s.firstWall[i]), true
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
		if !ok || !hasRef || abs64(satSub(o, refOff)) <= hostGap {
			continue
		}
		var same *remoteHost
		for _, h := range p.hosts {
			for _, j := range h.inputs {
				if oj, ok := offset(j); ok && abs64(satSub(o, oj)) <= hostGap {
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
	p.keepOnAxis(rs)
	return p
}

// keepOnAxis sets aside the wall-clock anchors of a machine when the
// shift one of its logs' anchors makes would move that log's spans
// outside the trace's time range: the anchor is wrong (a clock set years
// off), not the spans. The machine is then drawn at its own times, its
// slices marked unplaced with the reason.
func (p *remotePlan) keepOnAxis(rs *remoteScan) {
	if !p.hasRef {
		return
	}
	for _, h := range p.hosts {
		if p.ref >= 0 && p.inputHost[p.ref] == h {
			continue // its clock is the axis
		}
		for _, i := range h.inputs {
			if shift := satSub(p.offsets[i], p.refOff); p.hasOffset[i] && !rs.fits(i, shift) {
				h.offAxis = "its wall-clock anchor would move its spans by " + strconv.FormatInt(shift, 10) + " ns, outside the trace's time range"
				for _, j := range h.inputs {
					p.hasOffset[j] = false
				}
				break
			}
		}
	}
}

// abs64 returns |v|, saturated at the int64 range.
func abs64(v int64) int64 {
	switch {
	case v == math.MinInt64:
		return math.MaxInt64
	case v < 0:
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
	for _, h := range p.hosts {
		switch {
		case h.offAxis == "":
		case h.fit != nil: // placed by its tasks all the same
			h.sum.Note = joinReason(h.sum.Note, h.offAxis+" (set aside)")
			h.offAxis = ""
		default:
			h.sum.Note = joinReason(h.offAxis+": drawn at its own times", h.sum.Note)
			c.note("wall", "machine %s: %s; drawn at its own times, marked unplaced", h.machine, h.offAxis)
		}
	}
}

func (h *remoteHost) summary() *HostSummary {
	if h.sum == nil {
		h.sum = &HostSummary{Machine: h.machine, Method: reduce.HostUnplaced.String()}
	}
	return h.sum
}

func (h *remoteHost) sumPids() map[int32]int32 { return h.summary().Pids }
