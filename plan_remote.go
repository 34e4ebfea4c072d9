package phasetrace

import (
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/phasetrace/phasetrace/internal/firstpass"
	"github.com/phasetrace/phasetrace/reduce"
	"github.com/phasetrace/phasetrace/strace"
)

// remoteHost is one remote machine and how its logs are drawn.
type remoteHost struct {
	machine string
	inputs  []int
	method  reduce.HostMethod
	fit     *reduce.HostFit
	sum     *HostSummary
	pids    map[int32]bool // trace pids
	// offAxis says why its wall-clock anchor was not used, when it would
	// have moved its spans further than two clocks can be apart
	// (keepOnAxis).
	offAxis string
}

// remotePlan is how every log is drawn on the dispatching host's axis.
type remotePlan struct {
	hosts     []*remoteHost
	inputHost []*remoteHost // per log; nil on the dispatching host
	byPid     map[int32]*remoteHost
	osPid     map[int32]int32         // trace pid → OS pid, where they differ
	arrows    []remoteArrow           // planned by pairFlows, in order
	attach    map[flowEnd]*flowAttach // the arrows' ids by the span they start or end at (attachArrows)
	ref       int                     // the log whose clock is the axis: the dispatching log, else the first anchored one; -1 when none
	// dispatching: ref is the log that sent remote tasks.
	dispatching bool
	offsets     []int64 // per log: wall − mono of its first wall-clock anchor
	hasOffset   []bool
	refOff      int64
	hasRef      bool
}

// planner plans how the logs of other machines go on the dispatching
// host's axis, from what the survey learned (scan) and the options: which
// logs are which machine's, the trace pids of pids that repeat across
// machines, which session served which worker and each machine's clock.
type planner struct {
	cfg   *config
	scan  *firstpass.ScanResult
	names []string // the logs' names
	led   *ledger
	plan  *remotePlan // the plan being settled
}

// hosts groups the logs into machines: a log with a daemon banner is
// its machine's, named as the banner names it; a log whose wall-clock anchor puts its monotonic clock
// more than hostGap from the reference's is another machine's, the same as
// a banner's log when their clocks agree. It returns nil when every log is
// the reference host's.
func (pl *planner) hosts(n int) *remotePlan {
	s := pl.scan
	s.LogWalls()
	rs := &s.Remote
	rs.Grow(n - 1)
	ref := rs.Reference()
	refOff, hasRef := int64(0), false
	offset := func(i int) (int64, bool) {
		if i < 0 || i >= len(s.FirstWall) || s.FirstWall[i] == nil {
			return 0, false
		}
		return firstpass.WallOffset(s.FirstWall[i]), true
	}
	dispatching := ref >= 0
	if !dispatching {
		// No log dispatched to remote workers: the axis is the first
		// anchored log's clock, one without a daemon banner if there is.
		for pass := 0; pass < 2 && ref < 0; pass++ {
			for i := range n {
				if _, ok := offset(i); ok && (pass == 1 || rs.Banner[i] == "") {
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
		if m := rs.Banner[i]; m != "" && (i != ref || !dispatching) {
			p.inputHost[i] = host(m)
		}
	}
	// Logs without a banner: by their clock.
	for i := range n {
		if p.inputHost[i] != nil || i == ref {
			continue
		}
		o, ok := offset(i)
		if !ok || !hasRef || abs64(firstpass.SatSub(o, refOff)) <= firstpass.HostGap {
			continue
		}
		var same *remoteHost
		for _, h := range p.hosts {
			for _, j := range h.inputs {
				if oj, ok := offset(j); ok && abs64(firstpass.SatSub(o, oj)) <= firstpass.HostGap {
					same = h
				}
			}
		}
		if same == nil {
			same = host(pl.machineName(i, ref, byName, len(p.hosts)+1))
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

// machineName names the machine of log i, which no daemon banner names,
// after the log: the words of its path (its directories, then its file
// name split at dots, without .gz and .log) but those it shares, first
// and last, with the reference log's (ref, -1 for none), so that
// trace.hostB.log beside trace.log is hostB, and hostB/run.log beside
// hostA/run.log too. When that leaves nothing, or a machine has the name
// already, it is "host n".
func (pl *planner) machineName(i, ref int, taken map[string]*remoteHost, n int) string {
	fallback := "host " + strconv.Itoa(n)
	if i >= len(pl.names) {
		return fallback
	}
	words := logWords(pl.names[i])
	if ref >= 0 && ref < len(pl.names) {
		rw := logWords(pl.names[ref])
		for len(words) > 0 && len(rw) > 0 && words[0] == rw[0] {
			words, rw = words[1:], rw[1:]
		}
		for len(words) > 0 && len(rw) > 0 && words[len(words)-1] == rw[len(rw)-1] {
			words, rw = words[:len(words)-1], rw[:len(rw)-1]
		}
	}
	name := strings.Join(words, ".")
	if name == "" || taken[name] != nil {
		return fallback
	}
	return name
}

// logWords are the words of a log's path: its directories, then its file
// name split at dots without its .gz and .log extensions.
func logWords(name string) []string {
	dir, base := filepath.Split(filepath.Clean(name))
	base = strings.TrimSuffix(strings.TrimSuffix(base, ".gz"), ".log")
	var words []string
	for _, d := range strings.Split(filepath.ToSlash(dir), "/") {
		if d != "" && d != "." && d != ".." {
			words = append(words, d)
		}
	}
	if base != "" && base != "-" {
		words = append(words, strings.Split(base, ".")...)
	}
	return words
}

// keepOnAxis sets aside the wall-clock anchors of a machine when the
// shift one of its logs' anchors makes is more than two machines' clocks
// can be apart: the anchor is wrong (a clock set years off), not the
// spans. The machine is then drawn at its own times, its slices marked
// unplaced with the reason.
//
// One rule both ways (axisShiftOK): a monotonic clock counts from its
// machine's boot, and each machine was up while the other logged, so the
// shift may put neither log's spans before the other's clock started —
// the machine's spans before the axis's zero (a shift far back, such as a
// wall_ns far before the reference's), nor the reference log's spans
// before the machine's zero (a shift far forward, such as wall_ns=9e18).
func (p *remotePlan) keepOnAxis(rs *firstpass.RemoteScan) {
	if !p.hasRef {
		return
	}
	refLo := int64(math.MaxInt64) // no span of the reference: no bound forward
	if p.ref >= 0 {
		if lo, _, ok := rs.Extent(p.ref); ok {
			refLo = lo
		}
	}
	for _, h := range p.hosts {
		if p.ref >= 0 && p.inputHost[p.ref] == h {
			continue // its clock is the axis
		}
		for _, i := range h.inputs {
			if shift := firstpass.SatSub(p.offsets[i], p.refOff); p.hasOffset[i] && !axisShiftOK(rs, i, shift, refLo) {
				h.offAxis = "its wall-clock anchor would move its spans by " + strconv.FormatInt(shift, 10) +
					" ns, more than two machines' clocks can be apart (one log's spans before the other's clock started)"
				for _, j := range h.inputs {
					p.hasOffset[j] = false
				}
				break
			}
		}
	}
}

// axisShiftOK reports whether shift, added to log input's host times to
// put them on the axis of a reference log whose earliest host span starts
// at refLo, keeps both logs' spans after the other's clock started: the
// log's spans at or after the axis's zero (and inside the int64 range),
// and the reference's spans at or after the log's zero (refLo − shift ≥ 0).
func axisShiftOK(rs *firstpass.RemoteScan, input int, shift, refLo int64) bool {
	return rs.Fits(input, shift) && shift <= refLo
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
func (p *remotePlan) pidMaps(rs *firstpass.RemoteScan, n int) []map[int32]int32 {
	owner := map[int32]*remoteHost{} // nil value: the dispatching host
	used := map[int32]bool{}
	clash := map[*remoteHost]map[int32]bool{}
	for i := range n {
		h := p.inputHost[i]
		if i >= len(rs.Pids) {
			continue
		}
		for pid := range rs.Pids[i] {
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

// settle fixes plan p, given the trace pids of repeated pids per log: which pids are whose, what the process
// tracks say, which session served which worker and each machine's clock.
func (pl *planner) settle(p *remotePlan, pidMaps []map[int32]int32) {
	p.osPid = map[int32]int32{}
	for i, m := range pidMaps {
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
	rs := &pl.scan.Remote
	for _, h := range p.hosts {
		for _, i := range h.inputs {
			for pid := range rs.Pids[i] {
				h.pids[pid] = true
				p.byPid[pid] = h
			}
			h.summary().Inputs = append(h.summary().Inputs, pl.names[i])
		}
	}
	// Process tracks say which machine they ran on.
	here := ""
	if p.dispatching {
		here = "the dispatching host"
	}
	for pid, pr := range pl.scan.Procs {
		pr.Machine, pr.OsPid = here, 0
		if h := p.byPid[pid]; h != nil {
			pr.Machine, pr.OsPid = h.machine, p.osPid[pid]
			if p.dispatching {
				pr.MachineRank = 1 + slices.Index(p.hosts, h) // the dispatching host's processes first, then each machine's
			}
		}
	}
	pl.plan = p
	pl.fit(p)
	for _, h := range p.hosts {
		switch {
		case h.offAxis == "":
		case h.fit != nil: // placed by its tasks all the same
			h.sum.Note = joinReason(h.sum.Note, h.offAxis+" (set aside)")
			h.offAxis = ""
		default:
			h.sum.Note = joinReason(h.offAxis+": drawn at its own times", h.sum.Note)
			pl.led.note("wall", "machine %s: %s; drawn at its own times, marked unplaced", h.machine, h.offAxis)
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

// summaries returns the machines' summaries, finished.
func (p *remotePlan) summaries() []HostSummary {
	if p == nil {
		return nil
	}
	var out []HostSummary
	for _, h := range p.hosts {
		s := h.summary()
		s.Bound.finish()
		out = append(out, *s)
	}
	return out
}

// shifts returns, per log, what to add to its host timestamps to put it on
// the first anchored log's axis: zero for logs from the same host (or with
// no wall-clock anchor), the difference of the two hosts' monotonic clocks
// for a log from another host. It also shifts the anchors it holds.
func (p *remotePlan) shifts(s *firstpass.ScanResult, n int) []int64 {
	out := make([]int64, n)
	inputs := make([]int, n)
	for i := range inputs {
		inputs[i] = i
	}
	p.logShifts(s, inputs, out)
	applyShifts(s, out)
	return out
}

// logShifts sets out[i], for each log i of inputs, to what shifts adds to
// its host timestamps, the axis being the first anchored log of inputs
// (the plan's reference when it has one).
func (p *remotePlan) logShifts(s *firstpass.ScanResult, inputs []int, out []int64) {
	var ref *strace.WallAnchor
	if p != nil && p.ref >= 0 && p.ref < len(s.FirstWall) {
		ref = s.FirstWall[p.ref] // the dispatching log's host is the axis
	}
	for _, i := range inputs {
		if i >= len(s.FirstWall) {
			continue
		}
		w := s.FirstWall[i]
		if w == nil || w == ref {
			continue
		}
		if ref == nil {
			ref = w
			continue
		}
		if p != nil && i < len(p.inputHost) && p.inputHost[i] != nil && (p.inputHost[i].fit != nil || p.inputHost[i].offAxis != "") {
			continue // placed by causality (remote.go), or its anchor set aside: its own times, its own anchors
		}
		// The same wall instant is mono here and ref.MonoNS + (w.WallNS -
		// ref.WallNS) on the reference host.
		d := firstpass.SatSub(firstpass.WallOffset(w), firstpass.WallOffset(ref))
		if d > firstpass.HostGap || d < -firstpass.HostGap || p != nil && i < len(p.inputHost) && p.inputHost[i] != nil {
			out[i] = d
		}
	}
}

// applyShifts moves the clock anchors the survey holds by their logs'
// shifts.
func applyShifts(s *firstpass.ScanResult, shift []int64) {
	for d, as := range s.Anchors {
		for j := range as {
			as[j].HostNS += shift[s.AnchorInput[d][j]]
		}
	}
	for pid, ins := range s.WallInput {
		p := s.Procs[pid]
		for j := range p.Wall {
			p.Wall[j].MonoNS += shift[ins[j]]
		}
	}
}
