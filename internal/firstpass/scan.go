package firstpass

import (
	"bufio"
	"hash/maphash"
	"io"
	"math"
	"runtime"
	"sort"
	"strconv"
	"strings"

	"github.com/phasetrace/phasetrace/internal/repeats"
	"github.com/phasetrace/phasetrace/reduce"
	"github.com/phasetrace/phasetrace/reduce/analysis"
	"github.com/phasetrace/phasetrace/strace"
)

type ThreadKey struct {
	Pid int32
	Tid int64
}

type slotState struct {
	maxEnd  int64
	overlap bool
}

type threadInfo struct {
	key ThreadKey

	// Lane splitting, from our own depth-0 host spans in log order (runs
	// are logged when they end, so a root overlaps an earlier one exactly
	// when it starts before the latest end seen).
	Roots        int64
	rootMaxEnd   int64
	rootsOverlap bool
	// rootNoSlot: a root without a slot overlaps another root (a lone one,
	// like the runtime's prewarm, is drawn on the thread's own track);
	// noSlotMaxEnd is the latest end of the lone ones.
	rootNoSlot   bool
	noSlotMaxEnd int64
	slots        map[int64]*slotState
	Split        bool // decided after the scan
	// rootsLog is the log (its input, plus 1) whose roots the ends above
	// are of, logRoots how many of them: a log's roots come in the order
	// they ended, but not against another log's, so a second log —
	// another capture of the same threads, or a repeat of the first —
	// begins anew (its spans' overlaps with the first's are repeats or
	// none).
	rootsLog int
	logRoots int64

	// Naming.
	facade, scheduler, worker bool
	workerID                  int64
	workerIDs                 int // distinct worker ids seen (0, 1 or 2 meaning "several")
	chip                      bool
	ours                      int64 // spans of our families
	Producers                 map[string]bool
	recordWorker, submitMain  bool // host_phase_records drew worker records here
}

type ProcInfo struct {
	Pid       int32
	node      bool
	ours      bool
	producers map[string]bool
	Wall      []strace.WallAnchor
	WallAt    []strace.Pos
	// machine is the machine it ran on, where the logs come from several;
	// osPid its OS pid when pid is a trace pid (remote.go).
	Machine     string
	OsPid       int32
	MachineRank int // with a dispatching host: 0 on it, else 1 + the machine's index
	// side is its side in a comparison (baseSide, measureSide; 0: not a
	// comparison's).
	Side Side

	SortIndex int32 // its place among the processes (tracks.TrackSet.Declare), from 1
}

type ScanResult struct {
	Threads map[ThreadKey]*threadInfo
	Procs   map[int32]*ProcInfo
	Anchors map[reduce.Domain][]strace.DeviceAnchor
	// anchorAt is where each anchor is in its log (parallel to anchors):
	// an anchor placement sets aside is counted with its position.
	AnchorAt map[reduce.Domain][]strace.Pos
	// joined are the device anchors read joined to the next record on
	// their line, by domain (device.go confirms them).
	Joined map[reduce.Domain][]joinedAnchor

	// input is the log being scanned; firstWall its first wall anchor.
	Input     int
	FirstWall []*strace.WallAnchor
	// anchorInput and wallInput say which log each anchor came from, so
	// that a log from another host can be shifted onto the first's axis.
	AnchorInput map[reduce.Domain][]int
	WallInput   map[int32][]int

	// Remote machines (remote.go): what the first pass learns of them, the
	// trace pids of pids that repeat across machines (per log), and how
	// the logs are drawn once decided.
	Remote  RemoteScan
	PidMaps []map[int32]int32
	// cmp is what a comparison's first pass keeps of each log's runs
	// (compare.go); nil otherwise.
	Cmp *CompareScan

	// recordPids are the processes host_phase_records has passes of: the
	// threads that ran their runs (and so their binds) carry the passes'
	// records.
	RecordPids map[int32]bool

	// known bounds the threads and the processes spans teach the survey
	// of (0: no bound): no more of them can have a track than the trace
	// may have, and a log with a new pid on every line must not grow the
	// survey with its length. What the survey does not know is drawn all
	// the same, only less well (see Survey).
	Known int

	// near holds the captures of the log being scanned that repeat earlier
	// ones in part: their repeated records are left out.
	Near []repeats.NearRepeat

	// firstTS is, per log, the earliest start of a host span the first
	// pass reads, as logged: where a window's bounds after the first
	// slice count from (WithWindow).
	FirstTS map[int]int64

	// firstRun is, per callable of a process, its earliest chip.run: that
	// run is cold (its bind builds what later ones reuse). It holds at
	// most maxCallables (a runtime has a handful a process).
	FirstRun map[CallableKey]firstRun

	// typical is, per callable of a process, its runs' durations as a
	// histogram (analysis.Typical): what a slow run is slow against. It
	// holds at most maxCallables.
	typical map[CallableKey]*analysis.Typical
	// typicalRuns is what typical says of each callable, once decided.
	TypicalRuns map[CallableKey]analysis.TypicalRuns

	// stamps are, per log, its first [stamp] line: the runtime's commit,
	// environment and command, which the trace repeats (about).
	Stamps []string
}

// CallableKey names a callable of a process: its pid and its hid.
type CallableKey struct {
	Pid int32
	Hid uint64
}

// firstRun is a callable's earliest chip.run so far: its start, as logged,
// and its inv.
type firstRun struct {
	ts  int64
	Inv uint64
}

// maxCallables bounds the callables the survey keeps the first run of.
const maxCallables = 4096

// firstRunAt keeps sp, a chip.run, when it is its callable's earliest so
// far.
func (s *ScanResult) firstRunAt(sp *strace.Span) {
	k := CallableKey{sp.Pid, sp.Hid}
	if s.FirstRun == nil {
		s.FirstRun = map[CallableKey]firstRun{}
	}
	if f, ok := s.FirstRun[k]; ok {
		if sp.TS < f.ts {
			s.FirstRun[k] = firstRun{sp.TS, sp.Inv}
		}
		return
	}
	if len(s.FirstRun) < maxCallables {
		s.FirstRun[k] = firstRun{sp.TS, sp.Inv}
	}
}

// typicalAt counts sp, a chip.run, in its callable's typical run time.
func (s *ScanResult) typicalAt(sp *strace.Span) {
	k := CallableKey{sp.Pid, sp.Hid}
	ty := s.typical[k]
	if ty == nil {
		if len(s.typical) >= maxCallables {
			return
		}
		if s.typical == nil {
			s.typical = map[CallableKey]*analysis.Typical{}
		}
		ty = &analysis.Typical{}
		s.typical[k] = ty
	}
	ty.Add(sp.Dur)
}

func NewScan() *ScanResult {
	return &ScanResult{
		Threads:  map[ThreadKey]*threadInfo{},
		Procs:    map[int32]*ProcInfo{},
		Anchors:  map[reduce.Domain][]strace.DeviceAnchor{},
		AnchorAt: map[reduce.Domain][]strace.Pos{},

		AnchorInput: map[reduce.Domain][]int{},
		WallInput:   map[int32][]int{},
	}
}

func (s *ScanResult) Thread(pid int32, tid int64) *threadInfo {
	k := ThreadKey{pid, tid}
	t := s.Threads[k]
	if t == nil {
		t = &threadInfo{key: k}
		s.Threads[k] = t
	}
	return t
}

func (s *ScanResult) Proc(pid int32) *ProcInfo {
	p := s.Procs[pid]
	if p == nil {
		p = &ProcInfo{Pid: pid}
		s.Procs[pid] = p
	}
	return p
}

// ScanLog reads one log for the first pass, leaving out the lines of skip,
// and returns its captures. The log is read, and cut into captures, on
// this goroutine; its chunks of whole lines are parsed on others, as many
// as there are processors (up to maxChunkParsers), and what they found is
// learnt from in log order, so the survey is the one a single reader would
// make.
func (s *ScanResult) ScanLog(r io.Reader, name string, maxLine int, seed maphash.Seed, skip []repeats.Repeat) ([]repeats.Capture, error) {
	return s.scanChunks(r, name, maxLine, seed, skip, chunkSize)
}

// scanChunks is scanLog with chunks of at least size bytes.
func (s *ScanResult) scanChunks(r io.Reader, name string, maxLine int, seed maphash.Seed, skip []repeats.Repeat, size int) ([]repeats.Capture, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	s.Remote.peekBanner(s.Input, br)
	ch := newLineChunker(br, repeats.NewCaptureCutter(seed, HostGap), skip, maxLine)
	ch.size = size
	p := newChunkParsers(name, maxLine, min(runtime.GOMAXPROCS(0), maxChunkParsers))
	defer p.stop()
	for {
		j := p.job()
		err := ch.fill(j)
		if len(j.buf) > 0 {
			if q := p.start(j); q != nil {
				s.learn(q)
				p.release(q)
			}
		} else {
			p.release(j)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	for q := p.wait(); q != nil; q = p.wait() {
		s.learn(q)
		p.release(q)
	}
	return ch.finish(), nil
}

// learn takes the records a chunk's parser kept: its spans, then its clock
// anchors, each in log order (spans name threads and processes and decide
// lanes; anchors only add to the anchor lists: neither depends on the
// other). A remote machine's repeated pids are remapped first.
func (s *ScanResult) learn(j *chunkJob) {
	var pm map[int32]int32
	if s.Input < len(s.PidMaps) {
		pm = s.PidMaps[s.Input]
	}
	next := 0
	for i := range j.spans {
		sp := &j.spans[i]
		if s.Near != nil && s.repeated(&next, j.lines[i], repeats.SpanKey(sp)) {
			continue
		}
		if pm != nil {
			if v, ok := pm[sp.Pid]; ok {
				sp.Pid = v
			}
		}
		s.Remote.Span(s.Input, sp)
		s.First(s.Input, sp)
		s.ScanSpan(sp)
		if s.Cmp != nil {
			s.Cmp.span(s.Input, sp)
		}
	}
	next = 0
	for i := range j.anchors {
		rec := &j.anchors[i]
		if s.Near != nil {
			if key, ok := repeats.RecordKey(rec); ok && s.repeated(&next, rec.Pos.Line, key) {
				continue
			}
		}
		if rec.Kind == strace.KindStamp {
			s.stamp(rec.Stamp.Text)
			continue
		}
		if pm != nil {
			RemapPids(rec, pm)
		}
		switch rec.Kind {
		case strace.KindWallAnchor:
			s.Remote.Pid(s.Input, rec.WallAnchor.Pid)
		case strace.KindDeviceAnchor:
			s.Remote.Pid(s.Input, rec.DeviceAnchor.Pid)
		}
		s.ScanRecord(rec)
	}
}

// stamp keeps text, a [stamp] line's, when it is the first of its log.
func (s *ScanResult) stamp(text string) {
	for len(s.Stamps) <= s.Input {
		s.Stamps = append(s.Stamps, "")
	}
	if s.Stamps[s.Input] == "" {
		s.Stamps[s.Input] = strings.Clone(text)
	}
}

// repeated reports whether the record of key at line repeats one of an
// earlier capture (s.near), advancing *next as lines go by in order.
func (s *ScanResult) repeated(next *int, line int64, key uint64) bool {
	n := repeats.NearRepeatOf(s.Near, next, line)
	if n == nil {
		return false
	}
	_, ok := n.Repeated(key)
	return ok
}

// firstPassSpan keeps the spans the first pass learns from: depth-0 spans
// (runs and what a thread interleaves), node and external spans (naming),
// and device_wall spans (a device-clock span is what proves a process with
// no run root of its own to be the runtime's). The reader skips every other
// span (most of a log: the spans inside runs, the device sub-phases) right
// after its name, which makes the first pass cheap.
func firstPassSpan(depth int32, name string) bool {
	if depth == 0 || name == strace.SpanDeviceWall {
		return true
	}
	f := strace.FamilyOf(name)
	return f == strace.FamilyNode || f == strace.FamilyExt
}

// ScanRecord keeps a clock anchor.
func (s *ScanResult) ScanRecord(rec *strace.Record) {
	switch rec.Kind {
	case strace.KindWallAnchor:
		p := s.Proc(rec.WallAnchor.Pid)
		p.Wall = append(p.Wall, rec.WallAnchor)
		p.WallAt = append(p.WallAt, rec.Pos)
		s.WallInput[p.Pid] = append(s.WallInput[p.Pid], s.Input)
		for len(s.FirstWall) <= s.Input {
			s.FirstWall = append(s.FirstWall, nil)
		}
		if s.FirstWall[s.Input] == nil {
			w := rec.WallAnchor
			s.FirstWall[s.Input] = &w
		}
	case strace.KindDeviceAnchor:
		a := rec.DeviceAnchor
		d := reduce.Domain{Pid: a.Pid, Dev: a.Dev}
		s.Anchors[d] = append(s.Anchors[d], a)
		s.AnchorAt[d] = append(s.AnchorAt[d], rec.Pos)
		s.AnchorInput[d] = append(s.AnchorInput[d], s.Input)
		if rec.Joined {
			if s.Joined == nil {
				s.Joined = map[reduce.Domain][]joinedAnchor{}
			}
			s.Joined[d] = append(s.Joined[d], joinedAnchor{I: len(s.Anchors[d]) - 1, Pos: rec.Pos})
		}
	}
}

// joinedAnchor is a device anchor read joined to the next record on its
// line: its index among its domain's anchors, and where it is.
type joinedAnchor struct {
	I   int
	Pos strace.Pos
}

// First keeps the earliest start of log input's host spans.
func (s *ScanResult) First(input int, sp *strace.Span) {
	if sp.IsDevice() {
		return
	}
	if ts, ok := s.FirstTS[input]; !ok || sp.TS < ts {
		if s.FirstTS == nil {
			s.FirstTS = map[int]int64{}
		}
		s.FirstTS[input] = sp.TS
	}
}

func (s *ScanResult) ScanSpan(sp *strace.Span) {
	if s.Known > 0 && !s.learns(sp) {
		return
	}
	fam := strace.FamilyOf(sp.Name)
	p := s.Proc(sp.Pid)
	if sp.IsDevice() {
		p.ours = true
		return
	}
	t := s.Thread(sp.Pid, sp.Tid)
	if fam == strace.FamilyExt {
		if prod, _, ok := strace.ExtProducer(sp.Name); ok {
			if len(t.Producers) < maxProducers {
				setAdd(&t.Producers, prod)
			}
			if len(p.producers) < maxProducers {
				setAdd(&p.producers, prod)
			}
		}
		return
	}
	t.ours++
	p.ours = true
	if sp.Name == strace.SpanRun && sp.Depth == 0 {
		s.firstRunAt(sp)
		s.typicalAt(sp)
	}
	switch fam {
	case strace.FamilyNode:
		p.node = true
		role, _ := sp.Attr("role")
		leaf, _ := strace.NodeLeaf(sp.Name)
		switch {
		case role.Value == "facade" || leaf == "graph_build" || leaf == "submit":
			t.facade = true
		case role.Value == "scheduler":
			t.scheduler = true
		default:
			t.worker = true
		}
		if role.Value == "worker" {
			if id, ok := sp.Attr("worker_id"); ok && id.Type == strace.TypeInt {
				switch {
				case t.workerIDs == 0:
					t.workerID, t.workerIDs = id.Int, 1
				case t.workerIDs == 1 && id.Int != t.workerID:
					t.workerIDs = 2
				}
			}
		}
	case strace.FamilyChip:
		t.chip = true
	}
	// Runs are what a thread may interleave; node spans are hand-offs drawn
	// on the thread that wrote them.
	if sp.Depth != 0 || !fam.HasInvocation() {
		return
	}
	end := sp.End()
	if t.rootsLog != s.Input+1 {
		t.rootsLog, t.logRoots, t.rootMaxEnd, t.noSlotMaxEnd = s.Input+1, 0, math.MinInt64, 0
		for _, st := range t.slots {
			st.maxEnd = math.MinInt64
		}
	}
	overlaps := t.logRoots > 0 && sp.TS < t.rootMaxEnd
	t.rootsOverlap = t.rootsOverlap || overlaps
	t.Roots++
	t.logRoots++
	t.rootMaxEnd = max(t.rootMaxEnd, end)
	slot, ok := sp.Attr("slot_id")
	if !ok || slot.Type != strace.TypeInt {
		t.rootNoSlot = t.rootNoSlot || overlaps
		t.noSlotMaxEnd = max(t.noSlotMaxEnd, end)
		return
	}
	if sp.TS < t.noSlotMaxEnd {
		t.rootNoSlot = true // a run with a slot overlaps one without
	}
	st := t.slots[slot.Int]
	if st == nil {
		if t.slots == nil {
			t.slots = map[int64]*slotState{}
		}
		if len(t.slots) >= maxSlots {
			t.rootNoSlot = true // too many to be pipeline slots
			return
		}
		st = &slotState{maxEnd: end}
		t.slots[slot.Int] = st
		return
	}
	if sp.TS < st.maxEnd {
		st.overlap = true
	}
	st.maxEnd = max(st.maxEnd, end)
}

// learns reports whether the survey, bounded by known, learns from sp: it
// knows sp's thread already (its process, for a device span), or fewer
// than known threads and processes.
func (s *ScanResult) learns(sp *strace.Span) bool {
	if len(s.Threads) < s.Known && len(s.Procs) < s.Known {
		return true
	}
	if sp.IsDevice() {
		return s.Procs[sp.Pid] != nil
	}
	return s.Threads[ThreadKey{sp.Pid, sp.Tid}] != nil
}

// maxSlots bounds the pipeline slots a thread may be split into.
const maxSlots = 64

// maxProducers bounds the external producers a thread or process is named
// after.
const maxProducers = 64

// setAdd adds k to the set, copying it: the first pass's records live in
// memory its parsers reuse.
func setAdd(m *map[string]bool, k string) {
	if *m == nil {
		*m = map[string]bool{}
	}
	if !(*m)[k] {
		(*m)[strings.Clone(k)] = true
	}
}

// Decide fixes each thread's lane split: a thread is split into one lane
// per pipeline slot when its runs overlap, every run names its slot, there
// are at least two slots and runs sharing a slot never overlap. Otherwise it
// keeps its real tid (a thread that ran sequentially is never fragmented).
func (s *ScanResult) Decide() {
	s.TypicalRuns = make(map[CallableKey]analysis.TypicalRuns, len(s.typical))
	for k, t := range s.typical {
		s.TypicalRuns[k] = t.Summary()
	}
	for _, t := range s.Threads {
		if !t.rootsOverlap || t.rootNoSlot || len(t.slots) < 2 {
			continue
		}
		ok := true
		for _, st := range t.slots {
			ok = ok && !st.overlap
		}
		t.Split = ok
	}
}

// threadName names a thread's lane from what it emitted, as the runtime's
// users know them (and its reader names them): a thread that ran runs
// whose binds carry host_phase_records (records, when true, says its
// process has passes) is the graph submit main thread.
func (t *threadInfo) ThreadName(records bool) string {
	switch {
	case t.recordWorker:
		return "graph record worker"
	case t.submitMain, t.chip && records:
		return "graph submit main"
	case t.facade:
		return "orchestrator / facade"
	case t.scheduler:
		return "scheduler"
	case t.worker && t.workerIDs == 1:
		return "worker " + strconv.FormatInt(t.workerID, 10)
	case t.worker:
		return "worker"
	case t.chip:
		return "chip child"
	case t.ours == 0 && len(t.Producers) > 0:
		return "ext " + JoinSorted(t.Producers, "/")
	}
	return "tid " + strconv.FormatInt(t.key.Tid, 10)
}

// Label names a process as the runtime's users know it.
func (p *ProcInfo) Label() string {
	pid := strconv.FormatInt(int64(p.Pid), 10)
	if p.OsPid != 0 {
		pid = strconv.FormatInt(int64(p.OsPid), 10)
	}
	if p.Machine != "" {
		pid += " on " + p.Machine
	}
	side := ""
	if p.Side != 0 {
		side = p.Side.String() + " · "
	}
	switch {
	case p.node:
		return side + "simpler node (pid=" + pid + ")"
	case !p.ours:
		named := JoinSorted(p.producers, "/")
		if named == "" {
			named = "unattributed"
		}
		return side + "external producer " + named + " (pid=" + pid + ")"
	}
	return side + "simpler chip child (pid=" + pid + ")"
}

// Rank orders processes: scheduler parents (node) first, then chip
// children, then external producers, each by pid.
func (p *ProcInfo) Rank() int {
	switch {
	case p.node:
		return 0
	case !p.ours:
		return 2
	}
	return 1
}

func JoinSorted(set map[string]bool, sep string) string {
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := ""
	for i, k := range keys {
		if i > 0 {
			out += sep
		}
		out += k
	}
	return out
}

// HostGap is how far apart two logs' CLOCK_MONOTONIC origins must be, as
// their wall-clock anchors tell, to be taken for different hosts (on one
// host they agree to within clock adjustments).
const HostGap = int64(1_000_000_000)

// A spanFault says why a span cannot be drawn at all: its interval is not
// one. A device span's ts may be negative (an offset before the run's
// origin); a host span's may not.
type spanFault uint8

const (
	SpanSound spanFault = iota
	SpanNegativeDuration
	SpanNegativeHostTS
	SpanTSDurOverflow
)

// CheckSpan says why a span cannot be drawn, with the numbers that show it.
func CheckSpan(sp *strace.Span, dev bool) (fault spanFault, detail string) {
	switch {
	case sp.Dur < 0:
		return SpanNegativeDuration, "dur=" + itoa(sp.Dur)
	case !dev && sp.TS < 0:
		return SpanNegativeHostTS, "ts=" + itoa(sp.TS)
	case sp.TS+sp.Dur < sp.TS:
		return SpanTSDurOverflow, "ts=" + itoa(sp.TS) + " dur=" + itoa(sp.Dur)
	}
	return SpanSound, ""
}

// InvKey names a run: a process and its invocation id.
type InvKey struct {
	Pid int32
	Inv uint64
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }
