package remoteplan

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

// Options are what the plan takes of a conversion's options.
type Options struct {
	// MPI: frames may leave while network1.dispatch runs, so a task is
	// known sent at its start only; otherwise at its end (a socket).
	MPI bool
	// Workers are the workers the user named: a machine's name, or the
	// name of one of its logs, to the worker_id whose tasks it served.
	Workers map[string]int64
	// Fit are the options of the machines' clock model (reduce.FitHost).
	Fit []reduce.HostFitOption
}

// Host is one remote machine and how its logs are drawn: what the plan
// decided of it.
type Host struct {
	Machine string
	Inputs  []int // its logs, by their index among the inputs
	// Method is how it is placed; Fit, when by its tasks
	// (reduce.HostCausal), the map of its clock.
	Method reduce.HostMethod
	Fit    *reduce.HostFit
	// Workers are the worker_ids it served (those it is placed by, when
	// placed); Tasks the tasks fitted.
	Workers []int64
	Tasks   int
	// OffsetNs is the dispatching host's clock less this machine's, at its
	// first task; RatePPB, RateLo and RateHi the fit's rate and its range
	// (reduce.HostFit.Rate); LimitNs the information limit.
	OffsetNs, RatePPB, RateLo, RateHi, LimitNs int64
	// WallShiftNs is what its wall-clock anchor moves it by;
	// WallDisagreeNs how far that is from its tasks' offset, at its first
	// or its last task, whichever is farther.
	WallShiftNs, WallDisagreeNs int64
	// Pids are its pids given trace pids of their own, OS pid → trace pid.
	Pids map[int32]int32
	// Reason says, when it is not placed by its tasks, why not; Note says
	// it in words, with the figures.
	Reason Reason
	Note   string
	// OffAxis says why its wall-clock anchor was not used, when it would
	// have moved its spans further than two clocks can be apart
	// (keepOnAxis).
	OffAxis string
}

// Reason is why a machine is not placed by its tasks.
type Reason uint8

// Reasons.
const (
	NoReason      Reason = iota // placed by its tasks, or its clock is the axis
	Ambiguous                   // the logs do not determine which worker it served
	NoDispatcher                // no log dispatched to remote workers
	NoMatch                     // no worker's tasks match its runs
	NoFit                       // its tasks do not place its clock (reduce.FitHost)
	FewTasks                    // reduce.ErrHostFewTasks
	Regular                     // reduce.ErrHostRegular
	RateAtLimit                 // reduce.ErrHostRateAtLimit
	OutsideTasks                // any other error of reduce.HostFit.Proves
	WallDisagrees               // reduce.ErrHostWallDisagrees
)

// Note is a note for the conversion's summary, of a kind ("wall").
type Note struct {
	Kind, Text string
}

// Plan is how every log is drawn on the dispatching host's axis.
type Plan struct {
	Hosts []*Host
	// Arrows are the arrows across machines, planned by pairFlows, in
	// order, before their spans come.
	Arrows    []Arrow
	inputHost []*Host         // per log; nil on the dispatching host
	byPid     map[int32]int   // index in Hosts
	osPid     map[int32]int32 // trace pid → OS pid, where they differ
	ref       int             // the log whose clock is the axis: the dispatching log, else the first anchored one; -1 when none
	// dispatching: ref is the log that sent remote tasks.
	dispatching bool
	offsets     []int64 // per log: wall − mono of its first wall-clock anchor
	hasOffset   []bool
	refOff      int64
	hasRef      bool
}

// Planner plans how the logs of other machines go on the dispatching
// host's axis, from what the survey learned (Scan) and the options: which
// logs are which machine's, the trace pids of pids that repeat across
// machines, which session served which worker and each machine's clock.
type Planner struct {
	Scan    *firstpass.ScanResult
	Names   []string // the logs' names
	Options Options
	plan    *Plan // the plan being settled
}

// Group groups the logs into machines: a log with a daemon banner is
// its machine's, named as the banner names it; a log whose wall-clock anchor puts its monotonic clock
// more than hostGap from the reference's is another machine's, the same as
// a banner's log when their clocks agree. It returns nil when every log is
// the reference host's.
func (pl *Planner) Group(n int) *Plan {
	s := pl.Scan
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
	p := &Plan{inputHost: make([]*Host, n), byPid: map[int32]int{}, ref: ref, refOff: refOff, hasRef: hasRef,
		offsets: make([]int64, n), hasOffset: make([]bool, n), dispatching: dispatching}
	for i := range n {
		p.offsets[i], p.hasOffset[i] = offset(i)
	}
	byName := map[string]*Host{}
	host := func(name string) *Host {
		h := byName[name]
		if h == nil {
			h = &Host{Machine: name}
			byName[name] = h
			p.Hosts = append(p.Hosts, h)
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
		var same *Host
		for _, h := range p.Hosts {
			for _, j := range h.Inputs {
				if oj, ok := offset(j); ok && abs64(firstpass.SatSub(o, oj)) <= firstpass.HostGap {
					same = h
				}
			}
		}
		if same == nil {
			same = host(pl.machineName(i, ref, byName, len(p.Hosts)+1))
		}
		p.inputHost[i] = same
	}
	if len(p.Hosts) == 0 {
		return nil
	}
	for i, h := range p.inputHost {
		if h != nil {
			h.Inputs = append(h.Inputs, i)
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
func (pl *Planner) machineName(i, ref int, taken map[string]*Host, n int) string {
	fallback := "host " + strconv.Itoa(n)
	if i >= len(pl.Names) {
		return fallback
	}
	words := logWords(pl.Names[i])
	if ref >= 0 && ref < len(pl.Names) {
		rw := logWords(pl.Names[ref])
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
func (p *Plan) keepOnAxis(rs *firstpass.RemoteScan) {
	if !p.hasRef {
		return
	}
	refLo := int64(math.MaxInt64) // no span of the reference: no bound forward
	if p.ref >= 0 {
		if lo, _, ok := rs.Extent(p.ref); ok {
			refLo = lo
		}
	}
	for _, h := range p.Hosts {
		if p.ref >= 0 && p.inputHost[p.ref] == h {
			continue // its clock is the axis
		}
		for _, i := range h.Inputs {
			if shift := firstpass.SatSub(p.offsets[i], p.refOff); p.hasOffset[i] && !axisShiftOK(rs, i, shift, refLo) {
				h.OffAxis = "its wall-clock anchor would move its spans by " + strconv.FormatInt(shift, 10) +
					" ns, more than two machines' clocks can be apart (one log's spans before the other's clock started)"
				for _, j := range h.Inputs {
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

// PidMaps returns, per log, the pids to give trace pids of their own: those
// of a remote machine that another machine uses too. nil when none repeat.
func (p *Plan) PidMaps(rs *firstpass.RemoteScan, n int) []map[int32]int32 {
	owner := map[int32]*Host{} // nil value: the dispatching host
	used := map[int32]bool{}
	clash := map[*Host]map[int32]bool{}
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
	for _, h := range p.Hosts {
		pids := make([]int32, 0, len(clash[h]))
		for pid := range clash[h] {
			pids = append(pids, pid)
		}
		slices.Sort(pids)
		m := map[int32]int32{}
		for _, pid := range pids {
			m[pid] = fresh()
		}
		for _, i := range h.Inputs {
			if len(m) > 0 {
				out[i] = m
			}
		}
	}
	return out
}

func setPid(m map[*Host]map[int32]bool, h *Host, pid int32) {
	if m[h] == nil {
		m[h] = map[int32]bool{}
	}
	m[h][pid] = true
}

// Settle fixes plan p, given the trace pids of repeated pids per log
// (PidMaps; nil when none repeat): which pids are whose, what the process
// tracks say, which session served which worker and each machine's clock.
// It returns the notes for the conversion's summary, in order.
func (pl *Planner) Settle(p *Plan, pidMaps []map[int32]int32) []Note {
	p.osPid = map[int32]int32{}
	for i, m := range pidMaps {
		for os, tp := range m {
			p.osPid[tp] = os
			if h := p.inputHost[i]; h != nil {
				if h.Pids == nil {
					h.Pids = map[int32]int32{}
				}
				h.Pids[os] = tp
			}
		}
	}
	rs := &pl.Scan.Remote
	for n, h := range p.Hosts {
		for _, i := range h.Inputs {
			for pid := range rs.Pids[i] {
				p.byPid[pid] = n
			}
		}
	}
	// Process tracks say which machine they ran on.
	here := ""
	if p.dispatching {
		here = "the dispatching host"
	}
	for pid, pr := range pl.Scan.Procs {
		pr.Machine, pr.OsPid = here, 0
		if n, ok := p.byPid[pid]; ok {
			pr.Machine, pr.OsPid = p.Hosts[n].Machine, p.osPid[pid]
			if p.dispatching {
				pr.MachineRank = 1 + n // the dispatching host's processes first, then each machine's
			}
		}
	}
	pl.plan = p
	pl.fit(p)
	var notes []Note
	for _, h := range p.Hosts {
		switch {
		case h.OffAxis == "":
		case h.Fit != nil: // placed by its tasks all the same
			h.Note = joinReason(h.Note, h.OffAxis+" (set aside)")
			h.OffAxis = ""
		default:
			h.Note = joinReason(h.OffAxis+": drawn at its own times", h.Note)
			notes = append(notes, Note{"wall", "machine " + h.Machine + ": " + h.OffAxis + "; drawn at its own times, marked unplaced"})
		}
	}
	return notes
}

// joinReason joins two reasons, either of which may be empty.
func joinReason(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}

// Shifts returns, per log, what to add to its host timestamps to put it on
// the first anchored log's axis: zero for logs from the same host (or with
// no wall-clock anchor), the difference of the two hosts' monotonic clocks
// for a log from another host. It also shifts the anchors it holds.
func (p *Plan) Shifts(s *firstpass.ScanResult, n int) []int64 {
	out := make([]int64, n)
	inputs := make([]int, n)
	for i := range inputs {
		inputs[i] = i
	}
	p.LogShifts(s, inputs, out)
	ApplyShifts(s, out)
	return out
}

// LogShifts sets out[i], for each log i of inputs, to what Shifts adds to
// its host timestamps, the axis being the first anchored log of inputs
// (the plan's reference when it has one).
func (p *Plan) LogShifts(s *firstpass.ScanResult, inputs []int, out []int64) {
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
		if p != nil && i < len(p.inputHost) && p.inputHost[i] != nil && (p.inputHost[i].Fit != nil || p.inputHost[i].OffAxis != "") {
			continue // placed by causality (Adjust), or its anchor set aside: its own times, its own anchors
		}
		// The same wall instant is mono here and ref.MonoNS + (w.WallNS -
		// ref.WallNS) on the reference host.
		d := firstpass.SatSub(firstpass.WallOffset(w), firstpass.WallOffset(ref))
		if d > firstpass.HostGap || d < -firstpass.HostGap || p != nil && i < len(p.inputHost) && p.inputHost[i] != nil {
			out[i] = d
		}
	}
}

// ApplyShifts moves the clock anchors the survey holds by their logs'
// shifts.
func ApplyShifts(s *firstpass.ScanResult, shift []int64) {
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
