package phasetrace

import (
	"strings"

	"github.com/phasetrace/phasetrace/internal/counters"
	"github.com/phasetrace/phasetrace/internal/firstpass"
	"github.com/phasetrace/phasetrace/internal/handoffs"
	"github.com/phasetrace/phasetrace/internal/held"
	"github.com/phasetrace/phasetrace/internal/passes"
	"github.com/phasetrace/phasetrace/internal/repeats"
	"github.com/phasetrace/phasetrace/internal/tracks"
	"github.com/phasetrace/phasetrace/perfetto"
	"github.com/phasetrace/phasetrace/reduce"
	"github.com/phasetrace/phasetrace/strace"
)

// invBuf holds one run's spans until it is complete.
type invBuf struct {
	key  firstpass.InvKey
	host []held.Span // its host spans, in log order
	dev  []held.Span // its device (clk=dev) spans, in log order
	// bindLogT is the log-prefix thread handle of its chip.run.bind: the
	// legacy bind phase lines of that bind carry the same handle.
	bindLogT uint64
	// openOn is the thread and slot whose open root this run is, when its
	// root came first.
	openOn tracks.LaneKey
	isOpen bool
	// wall is RunWall's true extent, known when the run's device spans
	// came from a raw buffer.
	wall *reduce.DeviceWindow
	// store holds the spans' attributes (held.Store), except those of
	// the spans host[ownHost:] and dev[ownDev:], shared from the recent
	// spans (RecentSpans.Admit); firstShared is the number of the first of
	// them (0: none).
	store           held.Store
	ownHost, ownDev int
	firstShared     uint64
	// older and newer link the waiting runs in the order their first
	// spans came.
	older, newer *invBuf
}

// A runSink draws a complete run: the run drawer, or a test's stand-in.
type runSink interface {
	run(b *invBuf)
}

// runCollector groups the spans of runs — a run is the spans sharing a
// (pid, inv) — and hands each run to its drawer once it is complete. A root
// (a depth-0 host span) completes its run: the runtime writes a span when
// its scope ends, so the root comes last. A root that comes first (a
// producer that writes parents before children) keeps its run open for the
// spans that follow, until the next root of its thread and pipeline slot
// comes, or flush. At most maxPending runs wait; past that the oldest is
// handed over as it is. Memory is bounded by the runs in flight, not by the
// runs collected, and the time per span by neither: the waiting runs are
// linked in arrival order, so the oldest is found without a search.
type runCollector struct {
	maxPending     int
	drawer         runSink
	pending        map[firstpass.InvKey]*invBuf
	openRoots      map[tracks.LaneKey]*invBuf // per thread and slot, its run whose root came first
	oldest, newest *invBuf                    // the waiting runs in arrival order (invBuf.older, newer)
	free           []*invBuf                  // runs drawn, their buffers kept for the next runs
	last           *invBuf                    // the waiting run the last span went to (a run's spans come together)
}

// maxFreeRuns bounds the drawn runs' buffers kept for reuse.
const maxFreeRuns = 64

// add takes one span of a run, read at at; logT is its log prefix's
// thread handle. An unshared span need not outlive the call: add keeps a
// copy. A shared span of the recent spans is kept as it is, its attributes until
// the ring asks them back (CopyOut).
func (r *runCollector) add(l repeats.SharedSpan, at held.Pos, dev bool, logT uint64) {
	sp := l.Span
	k := firstpass.InvKey{Pid: sp.Pid, Inv: sp.Inv}
	b := r.last
	if b == nil || b.key != k {
		b = r.pending[k]
	}
	if b == nil {
		if r.pending == nil {
			r.pending = map[firstpass.InvKey]*invBuf{}
		}
		if len(r.pending) >= r.maxPending {
			r.handOldest()
		}
		b = r.newBuf()
		b.key = k
		r.pending[k] = b
		r.link(b)
	}
	r.last = b
	st := &b.store
	if l.N != 0 {
		st = nil
		if b.firstShared == 0 {
			b.firstShared = l.N
		}
	}
	if dev {
		b.dev = held.Hold(b.dev, sp, at, st)
	} else {
		b.host = held.Hold(b.host, sp, at, st)
	}
	if sp.Name == strace.SpanBind && !dev {
		b.bindLogT = logT
	}
	if sp.Depth != 0 || dev {
		return
	}
	tk := tracks.LaneKey{Pid: sp.Pid, Tid: sp.Tid, Slot: -1}
	if a, ok := sp.Attr("slot_id"); ok && a.Type == strace.TypeInt {
		tk.Slot = a.Int
	}
	if open := r.openRoots[tk]; open != nil && open != b {
		r.hand(open)
	}
	if len(b.host) == 1 && len(b.dev) == 0 {
		if r.openRoots == nil {
			r.openRoots = map[tracks.LaneKey]*invBuf{}
		}
		r.openRoots[tk] = b
		b.openOn, b.isOpen = tk, true
		return
	}
	r.hand(b)
}

// CopyOut copies into their runs' own stores the attributes of the shared spans
// numbered below valid, which the ring of recent spans is about to let go of: all
// the shared spans of each run holding one (a run's spans come together, so this
// is rare: a run waiting for its root while the ring's worth of other spans
// goes by).
func (r *runCollector) CopyOut(valid uint64) {
	for _, b := range r.pending {
		if b.firstShared == 0 || b.firstShared >= valid {
			continue
		}
		for i := b.ownHost; i < len(b.host); i++ {
			b.host[i].Attrs = b.store.Keep(b.host[i].Attrs)
		}
		for i := b.ownDev; i < len(b.dev); i++ {
			b.dev[i].Attrs = b.store.Keep(b.dev[i].Attrs)
		}
		b.ownHost, b.ownDev, b.firstShared = len(b.host), len(b.dev), 0
	}
}

// waiting returns the run k while it waits.
func (r *runCollector) waiting(k firstpass.InvKey) *invBuf { return r.pending[k] }

// hand removes b from the waiting runs and hands it to the drawer.
func (r *runCollector) hand(b *invBuf) {
	delete(r.pending, b.key)
	r.unlink(b)
	if r.last == b {
		r.last = nil
	}
	if b.isOpen && r.openRoots[b.openOn] == b {
		delete(r.openRoots, b.openOn)
	}
	r.drawer.run(b)
	r.reuse(b)
}

// newBuf returns an empty run buffer, one drawn before when there is one.
func (r *runCollector) newBuf() *invBuf {
	if n := len(r.free); n > 0 {
		b := r.free[n-1]
		r.free = r.free[:n-1]
		return b
	}
	return &invBuf{}
}

// reuse keeps the buffer of a run the drawer has drawn: nothing of it is
// used after run returns, and its span slices serve the next run.
func (r *runCollector) reuse(b *invBuf) {
	if len(r.free) >= maxFreeRuns {
		return
	}
	clear(b.host)
	clear(b.dev)
	b.store.Reset()
	*b = invBuf{host: b.host[:0], dev: b.dev[:0], store: b.store}
	r.free = append(r.free, b)
}

// link puts b, a run that has just begun to wait, last in arrival order.
func (r *runCollector) link(b *invBuf) {
	b.older, b.newer = r.newest, nil
	if r.newest != nil {
		r.newest.newer = b
	} else {
		r.oldest = b
	}
	r.newest = b
}

// unlink takes b, a run that stops waiting, out of the arrival order.
func (r *runCollector) unlink(b *invBuf) {
	if b.older != nil {
		b.older.newer = b.newer
	} else {
		r.oldest = b.newer
	}
	if b.newer != nil {
		b.newer.older = b.older
	} else {
		r.newest = b.older
	}
	b.older, b.newer = nil, nil
}

// handOldest hands over the run that has waited longest.
func (r *runCollector) handOldest() {
	if r.oldest != nil {
		r.hand(r.oldest)
	}
}

// flush hands over every run still waiting (whose root never came, or
// came first), oldest first.
func (r *runCollector) flush() {
	for r.oldest != nil {
		r.hand(r.oldest)
	}
}

// runDrawer draws whole runs: a run's host spans on its lane, the bind
// stage's breakdown inside its chip.run.bind (host_phase_records, bind
// segments, legacy bind phase lines) and, through the device drawer, its
// device phases.
type runDrawer struct {
	*sliceDrawer
	device  *deviceDrawer
	flows   *handoffs.Queue
	records map[firstpass.InvKey][]strace.PhasePass // host_phase_records by (pid, inv)
	// artifacts are Convert's host_phase_records artifacts, read at the
	// passes each run needs as it is drawn (internal/passes);
	// artifactPasses is a run's passes from them; recordsErr is the first
	// error reading one.
	artifacts      []*passes.Index
	artifactPasses []strace.PhasePass
	recordsErr     error
	// bindLines wait for the chip.run.bind that holds them; bindStores are
	// the stores of bind lines drawn, for the next ones; recentBinds the
	// keys of the last bind lines, for those given again close to their
	// first (a log given twice, as a second input).
	bindLines   []bindLine
	bindStores  []held.Store
	recentBinds repeats.RecentKeys
	// covered and drawnSegments are run's scratch sets of bind segments;
	// extra is reused for a slice's extra arguments.
	covered, drawnSegments nameSet
	extra                  []perfetto.Arg
	logThreads             map[uint64]string // "0x" + hex of log-prefix thread handles
	segNames               map[string]string // chip.run.bind.<phase> by phase

	counters *counters.Set // each run's root duration
	links    *runLinks     // the run's key and its runner_run → device_wall arrow
	steps    *stepObserver // WithSteps; nil without
}

// partKey is the start a run goes by in a split trace: that of the
// hand-off that launched it (nodeSpan.partKey), so that its arrow is drawn
// in one part, else its root's, else its first host span's; noKey for a
// run of device spans only.
func partKey(b *invBuf, root *held.Span, launcher *handoffs.NodeSpan) int64 {
	if root != nil {
		if launcher != nil {
			return min(launcher.PartKey(), root.TS)
		}
		return root.TS
	}
	key := int64(noKey)
	for i := range b.host {
		if ts := b.host[i].TS; key == noKey || ts < key {
			key = ts
		}
	}
	return key
}

// runBound is the most slices run draws: one per span, one per
// host_phase_records entry and waiting bind phase line its bind may hold,
// and its effective slice — and, in a split trace, the room it promises
// (partSet.promise) to the two spans of the hand-off that launched it.
func (d *runDrawer) runBound(b *invBuf, bind *held.Span, launcher *handoffs.NodeSpan, runPasses []strace.PhasePass) int {
	n := len(b.host) + len(b.dev)
	if len(b.dev) > 0 {
		n++
	}
	if launcher != nil {
		n += 2
	}
	if bind == nil {
		return n // its passes and bind lines are not drawn with it
	}
	for _, p := range runPasses {
		n += len(p.Records)
	}
	for i := range d.bindLines {
		if d.bindLines[i].inside(bind, b.bindLogT) {
			n++
		}
	}
	return n
}

// linkRun links a run's root, drawn on lane, to n, the node.dispatch that
// launched it (handoffs.linkRun). In a split trace the dispatch and its
// submit are promised the root's part; a run that is a part of its own
// has its arrow across parts.
func (d *runDrawer) linkRun(root *held.Span, n *handoffs.NodeSpan, lane perfetto.Track) []perfetto.FlowID {
	if d.parts == nil || n == nil {
		return d.flows.LinkRun(&root.Span, n, !lane.IsZero(), false)
	}
	ids := d.flows.LinkRun(&root.Span, n, !lane.IsZero(), d.parts.cur.solo)
	if len(ids) > 0 {
		d.parts.promise(n)
		if !n.Linked {
			d.parts.promise(n.Match)
		}
	}
	return ids
}

// coldRun says whether root, a chip.run, is its callable's cold run: the
// earliest of that callable (hid) in its process, whose bind builds what
// the later runs reuse. Where the survey does not know the callable's
// earliest run (past maxCallables, or a Builder fed without a survey), no
// run of it is.
func (d *runDrawer) coldRun(root *held.Span) bool {
	if root == nil || root.Name != strace.SpanRun || root.Depth != 0 {
		return false
	}
	f, ok := d.scan.FirstRun[firstpass.CallableKey{Pid: root.Pid, Hid: root.Hid}]
	return ok && f.Inv == root.Inv
}

// runSpans finds a run's root, its chip.run (else its first depth-0
// span), and its bind and runner_run, by name, whatever their depth.
func runSpans(b *invBuf) (root, bind, runner *held.Span) {
	for i := range b.host {
		s := &b.host[i]
		switch {
		case s.Name == strace.SpanBind && bind == nil:
			bind = s
		case s.Name == strace.SpanRunnerRun && runner == nil:
			runner = s
		}
		if s.Depth == 0 && (root == nil || s.Name == strace.SpanRun && root.Name != strace.SpanRun) {
			root = s
		}
	}
	return root, bind, runner
}

// run draws one run: its host spans on its lane, the bind stage's
// breakdown inside its chip.run.bind, and its device spans placed on the
// host timeline. A run whose root never came is drawn as found.
func (d *runDrawer) run(b *invBuf) {
	// An invocation counts when a slice of it is drawn (not when its
	// spans are all over the track limit, say).
	drawn := d.acct.sum.Spans.Drawn
	root, bind, runner := runSpans(b)
	if root == nil {
		d.acct.sum.Incomplete++
	}
	var slot int64
	hasSlot := false
	if root != nil {
		if a, ok := root.Attr("slot_id"); ok && a.Type == strace.TypeInt {
			slot, hasSlot = a.Int, true
		}
	}

	d.links.next(b.dev)
	runPasses := d.passes(b.key)
	var launcher *handoffs.NodeSpan // the dispatch that launched it
	if root != nil {
		launcher = d.flows.Launcher(&root.Span)
	}
	out := d.out
	if d.parts != nil { // the key and bound matter only to a split trace's parts
		out = d.batch(partKey(b, root, launcher), d.runBound(b, bind, launcher, runPasses))
	}
	covered, drawnSegments := &d.covered, &d.drawnSegments
	covered.reset()
	drawnSegments.reset()
	if bind != nil {
		for _, p := range runPasses {
			for _, r := range p.Records {
				if strace.IsBindSegment(r.Phase) {
					covered.add(r.Phase)
				}
			}
		}
	}

	cold := d.coldRun(root)
	d.steps.begin(b)
	var rootLane perfetto.Track
	for i := range b.host {
		s := &b.host[i]
		var lane perfetto.Track
		split := false
		if !d.outside(s.TS, s.Dur) { // a lane only for a slice drawn
			lane, split = out.tracks.Lane(s.Pid, s.Tid, slot, hasSlot)
		}
		seg, isSeg := strings.CutPrefix(s.Name, strace.SpanBind+".")
		if isSeg && covered.has(seg) {
			d.acct.sum.Spans.Superseded++
			continue
		}
		if isSeg {
			drawnSegments.add(seg)
			d.steps.segmentSpan(seg, s)
		}
		extra := append(d.extra[:0], d.links.key) // every slice of the run carries its key
		d.extra = extra
		if isSeg { // a bind segment's on- and off-CPU split
			if cpu, ok := s.Attr("cpu_ns"); ok && cpu.Type == strace.TypeInt {
				extra = append(extra, perfetto.Int("on_cpu_ns", cpu.Int), perfetto.Int("off_cpu_ns", s.Dur-cpu.Int))
				d.extra = extra
			}
		}
		if cold && (s == root || s == bind) {
			// Only the cold run is marked: an argument on every run
			// would hold memory for each slice waiting to be written.
			extra = append(extra, perfetto.Bool("cold", true))
			d.extra = extra
		}
		var flows, endFlows []perfetto.FlowID
		if s == root {
			endFlows = d.linkRun(s, launcher, lane)
			rootLane = lane
		}
		if s == runner {
			flows = d.startRunArrow(s)
		}
		d.drawSpanWithFlows(out, lane, s, extra, split, flows, endFlows)
		if s == root && d.parts != nil && !lane.IsZero() {
			d.parts.ov.root(s, slot, hasSlot, d.parts.cur, d.links.key)
		}
	}

	if bind != nil {
		var lane perfetto.Track
		if !d.outside(bind.TS, bind.Dur) || d.recordsInWindow(bind, runPasses) {
			lane, _ = out.tracks.Lane(bind.Pid, bind.Tid, slot, hasSlot)
		}
		d.drawRecords(out, lane, bind, runPasses)
		d.drawBindLines(out, lane, bind, b.bindLogT, covered, drawnSegments)
	} else {
		for i := range runPasses {
			d.passWithoutBind(&runPasses[i])
		}
	}
	if !rootLane.IsZero() || root != nil && d.outside(root.TS, root.Dur) {
		d.counters.RunDuration(root) // a run outside the window counts its callable's runs
	}
	if !rootLane.IsZero() && root.Name == strace.SpanRun {
		d.runAnomalies(out, root, bind, cold)
	}
	d.device.run(out, b.key, root, runner, b.dev, b.wall)
	d.steps.end(d, cold)
	d.closeRunArrow(out)
	if d.acct.sum.Spans.Drawn > drawn {
		d.acct.sum.Invocations++
		if d.parts != nil {
			d.parts.cur.invocations++ // before a flush can write the part out
		}
	}
	d.maybeFlush()
}
