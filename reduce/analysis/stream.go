package analysis

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/phasetrace/phasetrace/reduce"
	"github.com/phasetrace/phasetrace/strace"
)

// Table names one of the span tables a [Tables] computes.
type Table uint8

// The span tables.
const (
	TableTPOT   Table = 1 << iota // [Tables.TPOT]
	TableRounds                   // [Tables.Rounds]
	TableTree                     // [Tables.Tree]
	AllTables   = TableTPOT | TableRounds | TableTree
)

// DefaultMaxOpen is how many invocations a [Tables] keeps open by default
// (see [WithMaxOpen]).
const DefaultMaxOpen = 4096

// TablesOption configures [NewTables].
type TablesOption func(*tablesConfig)

type tablesConfig struct {
	tables  Table
	maxOpen int
}

// WithTables makes a [Tables] compute only the tables given (all by
// default); the others' methods then return empty tables. Leaving out the
// tree leaves out the only state that grows with the spans.
func WithTables(t Table) TablesOption { return func(c *tablesConfig) { c.tables = t } }

// WithMaxOpen sets how many invocations are kept open at once, waiting for
// more of their spans. Past it the invocation first seen longest ago is
// closed: its spans are reduced to what the tables need. A span of a closed
// invocation is a late span ([Tables.Late]).
func WithMaxOpen(n int) TablesOption { return func(c *tablesConfig) { c.maxOpen = max(n, 1) } }

// Tables computes the TPOT, rounds and tree tables in one pass over a stream
// of spans, in input order ([Tables.Add]), without keeping the spans.
//
// What it keeps grows with the log as follows:
//   - per open invocation (at most [WithMaxOpen] of them), one small entry
//     per distinct span name;
//   - per invocation, its key (for late spans) and, for the rounds table,
//     one row of five durations;
//   - per callable and span name, a running sum, count, minimum and maximum
//     (TPOT);
//   - for the tree, per callable and span name, the duration of each
//     invocation's span (8 bytes per span): the exact median needs them all.
//
// An invocation stays open until [WithMaxOpen] newer ones have been seen;
// a log writes an invocation's spans close together, so a span arriving
// after its invocation was closed (counted by [Tables.Late], left out of
// the tables) means a log whose tables differ from the reference's.
type Tables struct {
	cfg     tablesConfig
	names   names
	scratch []byte
	open    map[invKey]*openInv
	queue   arrivals[invKey] // open invocations, first seen first
	closed  map[invKey]struct{}
	hids    map[uint64]*callState
	free    []*openInv
	late    int64
	done    bool
}

type invKey struct {
	pid int32
	inv uint64
}

func (a invKey) less(b invKey) bool {
	if a.pid != b.pid {
		return a.pid < b.pid
	}
	return a.inv < b.inv
}

// entry is an open invocation's earliest-starting span of one name.
type entry struct {
	name  uint32
	depth int32
	dev   bool
	idx   int32 // position of the span in its invocation, input order
	ts    int64
	dur   int64
}

type openInv struct {
	key     invKey
	hid     uint64
	n       int32 // spans seen
	hasRoot bool
	root    int64 // duration of the first depth-0 span
	entries []entry
}

// durAcc is a running summary of durations.
type durAcc struct {
	n        int
	sum      sum128
	min, max int64
}

func (d *durAcc) add(v int64) {
	if d.n == 0 {
		d.min, d.max = v, v
	}
	d.n++
	d.sum.add(v)
	d.min, d.max = min(d.min, v), max(d.max, v)
}

func (d *durAcc) stats() DurStats {
	if d.n == 0 {
		return DurStats{}
	}
	return DurStats{N: d.n, Mean: bigQuo(d.sum, d.n), Min: d.min, Max: d.max}
}

// callState is what the tables keep of one callable (hid bucket).
type callState struct {
	hid   uint64
	n     int
	first invKey // the least (pid, inv) of its invocations
	// TPOT
	run    durAcc
	stages perName[durAcc]
	// rounds: one row per invocation
	rows []Round
	// tree: per name the durations, per parent name the Effective of its
	// orch ∥ sched children, and the last invocation by (inv, pid)
	samples perName[durList]
	effs    perName[durList]
	ref     []entry
	refKey  invKey
}

// NewTables returns an empty [Tables].
func NewTables(opts ...TablesOption) *Tables {
	cfg := tablesConfig{tables: AllTables, maxOpen: DefaultMaxOpen}
	for _, o := range opts {
		o(&cfg)
	}
	return &Tables{
		cfg:    cfg,
		open:   make(map[invKey]*openInv),
		closed: make(map[invKey]struct{}),
		hids:   make(map[uint64]*callState),
	}
}

// Add adds a span, in input order. Node-family and ext. spans carry no
// invocation and are left out. s is not kept: its Attrs may be the
// reader's. Adding after a table was taken panics.
func (t *Tables) Add(s *strace.Span) {
	if strace.FamilyOf(s.Name).HasInvocation() {
		t.add(t.spanOf(s))
	}
}

// spanOf keeps of s what the tables read.
func (t *Tables) spanOf(s *strace.Span) span {
	sp := span{pid: s.Pid, depth: s.Depth, inv: s.Inv, hid: s.Hid, name: s.Name, ts: s.TS, dur: s.Dur}
	if t.cfg.tables&TableTree != 0 {
		sp.dev = s.IsDevice()
	}
	return sp
}

// span is what the tables read of a span.
type span struct {
	pid, depth int32
	dev        bool
	inv, hid   uint64
	name       string
	ts, dur    int64
}

func (t *Tables) add(s span) {
	if t.done {
		panic("analysis: Tables.Add after a table was taken")
	}
	k := invKey{s.pid, s.inv}
	o := t.open[k]
	if o == nil {
		if _, ok := t.closed[k]; ok {
			t.late++
			return
		}
		if len(t.open) >= t.cfg.maxOpen {
			t.closeOldest()
		}
		o = t.newOpen(k, s.hid)
	}
	t.addTo(o, &s)
}

// AddAll adds every span of spans, in order.
func (t *Tables) AddAll(spans []strace.Span) {
	for i := range spans {
		t.Add(&spans[i])
	}
}

// batchLen is how many spans ReadFrom hands from the reading goroutine to
// the tables at once.
const batchLen = 1024

// ReadFrom adds every span of rd until io.EOF and returns the reader's
// error otherwise. The reader runs on a goroutine of its own, a batch of
// spans ahead of the tables; rd must not be used until ReadFrom returns.
func (t *Tables) ReadFrom(rd *strace.Reader) error {
	full := make(chan []span, 4)
	free := make(chan []span, 4)
	for range cap(free) {
		free <- make([]span, 0, batchLen)
	}
	stop := make(chan struct{})
	errc := make(chan error, 1)
	go func() {
		defer close(full)
		batch := <-free
		for {
			rec, err := rd.Read()
			if err != nil {
				if len(batch) > 0 {
					full <- batch
				}
				if err != io.EOF {
					errc <- err
				}
				return
			}
			if rec.Kind != strace.KindSpan || !strace.FamilyOf(rec.Span.Name).HasInvocation() {
				continue
			}
			if batch = append(batch, t.spanOf(&rec.Span)); len(batch) == batchLen {
				full <- batch
				select {
				case batch = <-free:
				case <-stop:
					return
				}
			}
		}
	}()
	defer close(stop)
	for batch := range full {
		for i := range batch {
			t.add(batch[i])
		}
		free <- batch[:0]
	}
	select {
	case err := <-errc:
		return err
	default:
		return nil
	}
}

// Late returns how many spans arrived after their invocation was closed
// (see [WithMaxOpen]); they are in no table.
func (t *Tables) Late() int64 { return t.late }

func (t *Tables) newOpen(k invKey, hid uint64) *openInv {
	var o *openInv
	if n := len(t.free); n > 0 {
		o, t.free = t.free[n-1], t.free[:n-1]
		*o = openInv{entries: o.entries[:0]}
	} else {
		o = &openInv{}
	}
	o.key, o.hid = k, hid
	t.open[k] = o
	t.queue.push(k)
	return o
}

func (t *Tables) addTo(o *openInv, s *span) {
	idx := o.n
	o.n++
	if s.depth == 0 && !o.hasRoot {
		o.hasRoot, o.root = true, s.dur
	}
	id := t.names.idString(s.name)
	e := entry{name: id, depth: s.depth, dev: s.dev, idx: idx, ts: s.ts, dur: s.dur}
	for i := range o.entries {
		if o.entries[i].name == id {
			if s.ts < o.entries[i].ts {
				o.entries[i] = e
			}
			return
		}
	}
	o.entries = append(o.entries, e)
}

// closeOldest closes the open invocation first seen longest ago.
func (t *Tables) closeOldest() {
	closeOldest(&t.queue, t.open, t.closeInv)
}

// closeInv reduces an invocation to what the tables need.
func (t *Tables) closeInv(o *openInv) {
	delete(t.open, o.key)
	t.closed[o.key] = struct{}{}
	c := t.hids[o.hid]
	if c == nil {
		c = &callState{hid: o.hid, first: o.key}
		t.hids[o.hid] = c
	}
	c.n++
	if o.key.less(c.first) {
		c.first = o.key
	}
	if t.cfg.tables&TableTPOT != 0 {
		t.closeTPOT(c, o)
	}
	if t.cfg.tables&TableRounds != 0 {
		c.rows = append(c.rows, t.roundOf(o))
	}
	if t.cfg.tables&TableTree != 0 {
		t.closeTree(c, o)
	}
	t.free = append(t.free, o)
}

func (t *Tables) closeTPOT(c *callState, o *openInv) {
	if o.hasRoot {
		c.run.add(o.root)
	}
	for _, e := range o.entries {
		if e.depth != 0 {
			c.stages.get(e.name).add(e.dur)
		}
	}
}

// find returns the entry of the name, or nil.
func (t *Tables) find(entries []entry, name string) *entry {
	id, ok := t.names.lookupString(name)
	if !ok {
		return nil
	}
	return findID(entries, id)
}

// findID returns the entry of the name id, or nil.
func findID(entries []entry, id uint32) *entry {
	for i := range entries {
		if entries[i].name == id {
			return &entries[i]
		}
	}
	return nil
}

func window(e *entry) reduce.DeviceWindow {
	return reduce.DeviceWindow{Start: reduce.DeviceNanos(e.ts), End: reduce.DeviceNanos(e.ts + e.dur)}
}

func (t *Tables) roundOf(o *openInv) Round {
	row := Round{Pid: o.key.pid, Inv: o.key.inv}
	dur := func(e *entry) int64 {
		if e != nil {
			return e.dur
		}
		return 0
	}
	orch, sched := t.find(o.entries, spanOrch), t.find(o.entries, spanSched)
	row.Values[ColHost] = dur(t.find(o.entries, spanRun))
	row.Values[ColDevice] = dur(t.find(o.entries, strace.SpanDeviceWall))
	row.Values[ColOrch] = dur(orch)
	row.Values[ColSched] = dur(sched)
	var eff reduce.DeviceWindow
	for _, e := range []*entry{orch, sched} {
		if e != nil {
			eff = reduce.Effective(eff, window(e))
		}
	}
	if orch != nil || sched != nil {
		row.Values[ColEffective] = int64(eff.Len())
	}
	return row
}

func (t *Tables) closeTree(c *callState, o *openInv) {
	for i := range o.entries {
		e := &o.entries[i]
		c.samples.get(e.name).add(e.dur)
		// An orch and a sched under the same parent: their Effective.
		parent, ok := bytes.CutSuffix(t.names.bytes(e.name), []byte("."+strace.PhaseOrch))
		if !ok {
			continue
		}
		pid, ok := t.names.lookup(parent)
		if !ok {
			continue
		}
		t.scratch = append(append(append(t.scratch[:0], parent...), '.'), strace.PhaseSched...)
		if sid, ok := t.names.lookup(t.scratch); ok {
			if s := findID(o.entries, sid); s != nil {
				c.effs.get(pid).add(int64(reduce.Effective(window(e), window(s)).Len()))
			}
		}
	}
	// The last invocation by (inv, pid) gives the tree its structure.
	if c.ref == nil || o.key.inv > c.refKey.inv || (o.key.inv == c.refKey.inv && o.key.pid > c.refKey.pid) {
		c.ref = append(c.ref[:0], o.entries...)
		c.refKey = o.key
	}
}

// durList holds durations: the first inline, the rest in blocks that
// never move, so that growing it leaves no garbage behind and wastes at
// most part of its last block. A name seen once costs no block.
type durList struct {
	first  int64
	n      int
	blocks [][]int64
}

const (
	minDurBlock = 8
	maxDurBlock = 8192
)

func (d *durList) add(v int64) {
	d.n++
	if d.n == 1 {
		d.first = v
		return
	}
	if k := len(d.blocks); k == 0 || len(d.blocks[k-1]) == cap(d.blocks[k-1]) {
		d.blocks = append(d.blocks, make([]int64, 0, min(maxDurBlock, max(minDurBlock, d.n))))
	}
	last := &d.blocks[len(d.blocks)-1]
	*last = append(*last, v)
}

// values returns the durations in one new slice; nil for a nil list.
func (d *durList) values() []int64 {
	if d == nil || d.n == 0 {
		return nil
	}
	out := make([]int64, 1, d.n)
	out[0] = d.first
	for _, b := range d.blocks {
		out = append(out, b...)
	}
	return out
}

// spread is spreadOf the durations, sorting its own copy.
func (d *durList) spread() Spread {
	s := d.values()
	if len(s) == 0 {
		return Spread{}
	}
	slices.Sort(s)
	return Spread{N: len(s), Min: s[0], Max: s[len(s)-1], Median: medianSorted(s)}
}

// finish closes every open invocation; no span can be added after it.
func (t *Tables) finish() {
	if t.done {
		return
	}
	t.done = true
	closeAll(&t.queue, t.open, t.closeInv)
	t.free = nil
}

// callables returns the callables most invoked first; as many invocations:
// the one whose least (pid, inv) comes first.
func (t *Tables) callables() []*callState {
	t.finish()
	out := make([]*callState, 0, len(t.hids))
	for _, c := range t.hids {
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b *callState) int {
		if a.n != b.n {
			return cmp.Compare(b.n, a.n)
		}
		if a.first.less(b.first) {
			return -1
		}
		return 1
	})
	return out
}

func roleOf(i, n int) strace.Role {
	switch {
	case i == 0 && n > 1:
		return strace.RoleDecode
	case n == 1:
		return strace.RolePrefill
	}
	return strace.RoleOther
}

func (t *Tables) need(tb Table) {
	if t.cfg.tables&tb == 0 {
		panic(fmt.Sprintf("analysis: table %d not computed (see WithTables)", tb))
	}
}

// TPOT returns the per-callable table of the spans added (see
// [AnalyzeTPOT]). It panics when the table was left out with [WithTables].
func (t *Tables) TPOT() *TPOT {
	t.need(TableTPOT)
	out := &TPOT{}
	for i, c := range t.callables() {
		tc := TPOTCallable{Hid: c.hid, Role: roleOf(i, c.n), Invocations: c.n, Run: c.run.stats()}
		c.stages.each(func(id uint32, d *durAcc) {
			tc.Stages = append(tc.Stages, StageStats{Name: t.names.name(id), DurStats: d.stats()})
		})
		slices.SortFunc(tc.Stages, func(a, b StageStats) int {
			if a.N != b.N {
				return cmp.Compare(b.N, a.N)
			}
			return strings.Compare(a.Name, b.Name)
		})
		out.Callables = append(out.Callables, tc)
	}
	return out
}

// Rounds returns the per-round table of the busiest callable of the spans
// added (see [AnalyzeRounds]), nil when there is no invocation. It panics
// when the table was left out with [WithTables].
func (t *Tables) Rounds() *Rounds {
	t.need(TableRounds)
	cs := t.callables()
	if len(cs) == 0 {
		return nil
	}
	c := cs[0]
	r := &Rounds{Hid: c.hid, Role: roleOf(0, c.n), Rows: slices.Clone(c.rows)}
	slices.SortFunc(r.Rows, func(a, b Round) int {
		if a.Inv != b.Inv {
			return cmp.Compare(a.Inv, b.Inv)
		}
		return cmp.Compare(a.Pid, b.Pid)
	})
	r.summarise()
	return r
}

// Tree returns the median tree of every callable of the spans added, most
// invoked first (see [AnalyzeTree]). It panics when the table was left out
// with [WithTables].
func (t *Tables) Tree() []*Tree {
	t.need(TableTree)
	var out []*Tree
	for i, c := range t.callables() {
		out = append(out, t.treeOf(c, roleOf(i, c.n)))
	}
	return out
}

func (t *Tables) treeOf(c *callState, role strace.Role) *Tree {
	ref := slices.Clone(c.ref)
	// Siblings in start order; equal starts keep input order.
	slices.SortFunc(ref, func(a, b entry) int {
		if a.ts != b.ts {
			return cmp.Compare(a.ts, b.ts)
		}
		return cmp.Compare(a.idx, b.idx)
	})
	nodes := make(map[string]*TreeNode, len(ref))
	for _, e := range ref {
		name := t.names.name(e.name)
		spread := c.samples.lookup(e.name).spread()
		nodes[name] = &TreeNode{Name: name, Leaf: leafOf(name), Device: e.dev, Median: spread.Median, N: spread.N}
	}
	tr := &Tree{Hid: c.hid, Role: role, Invocations: c.n}
	for _, e := range ref {
		name := t.names.name(e.name)
		n := nodes[name]
		if dot := strings.LastIndexByte(name, '.'); dot >= 0 {
			if p, ok := nodes[name[:dot]]; ok {
				p.Children = append(p.Children, n)
				continue
			}
		}
		tr.Roots = append(tr.Roots, n)
	}
	for _, e := range ref {
		n := nodes[t.names.name(e.name)]
		pairConcurrent(n, c.effs.lookup(e.name).values())
	}
	return tr
}
