package strace

import (
	"errors"
	"fmt"
	"io"
	"strings"
)

// MergeInput is one log of a merge.
type MergeInput struct {
	// Name names the input in positions and errors, as WithName does.
	Name string
	// R is the log's text.
	R io.Reader
	// MonoShift is added to the input's log-prefix times when its records
	// are ordered against the other inputs' (the offset of its host's
	// monotonic clock, for a log written on another host). The records
	// themselves are returned unchanged.
	MonoShift int64
}

// Merger reads several logs together and returns their records in the
// order they were written: by their log prefixes' mono_ns across inputs (a
// record without a prefix keeps its place in its own input; ties go to the
// earlier input). Each input is parsed ahead on a goroutine of its own.
//
// By default, the strings and attribute slices of the records a Merger
// returns own their memory: they stay valid, and are never written again,
// after further Reads and after Close (attributes are kept in arenas shared
// by many records; span names, attribute keys and short text values are
// interned, so that repeats share one string). The Record itself lives in a
// batch the Merger reuses: it is valid until the next Read, and a shallow
// copy (*rec) keeps everything it holds. The caller may modify a record.
//
// With WithRecycledMemory, a Merger reuses that memory too, and reads
// without allocating per record: a record's attribute slices and strings
// are then valid only until the next Read, except its canonical strings
// (span names, attribute keys, text values of at most CanonicalValueLen
// bytes, log prefixes' levels and functions, bind phases' names and
// sources), which stay valid and unchanged for good. Each batch of records
// a parsing goroutine hands over owns its memory; once Read has moved past
// the batch's last record, the batch goes back to the goroutine, which
// reads the next records into the same memory.
//
// A Merger must be closed; Close stops and waits for every goroutine it
// started.
type Merger struct {
	inputs  []*mergeInput
	stop    chan struct{}
	started bool
	last    *mergeInput // the input whose record Read returned last
	err     error       // sticky
	stats   []Stats
}

type mergeInput struct {
	index   int
	name    string
	shift   int64
	rd      *Reader
	batches chan mergeBatch
	free    chan batchBuf // batches Read is done with, for the parser to fill again
	batch   mergeBatch
	pos     int
	rec     *Record
	key     int64 // when rec was written, shifted: the last prefix's mono_ns
	done    bool
}

// mergeBatch is what a parsing goroutine hands over: records, then the
// error, or the panic of the input's reader, that ended the input.
type mergeBatch struct {
	recs     []Record
	mem      *batchMem // with WithRecycledMemory: the records' memory
	err      error
	panicked bool
	panicVal any
}

// batchBuf is a batch's room for records, and its memory with
// WithRecycledMemory (else nil).
type batchBuf struct {
	recs []Record
	mem  *batchMem
}

// batchMem is the memory of a batch's records: the strings that are not
// canonical, and the attributes.
type batchMem struct {
	strs  arena
	attrs attrArena
}

// rewind makes the memory free for the next records (nil: none to free).
func (m *batchMem) rewind() {
	if m != nil {
		m.strs.rewind()
		m.attrs.rewind()
	}
}

// mergeBatchLen (poison_race.go, poison_norace.go) is how many records a
// parsing goroutine hands over at once. The inputs share mergeBatches
// batches that may wait to be read, each at least minInputBatches
// (inputBatches): a reader that stops reading for a while (a conversion
// flushes its trace writer, or gives the core to its compressor) then
// finds the records parsed in the meantime, instead of a parser that
// stopped when its queue was full. A single log's conversion took 0.962
// of the time with 8 batches waiting instead of 4 (median of 40 pairs of
// the command run in turn), its peak memory 1.4 MiB more; 16 gained no
// more.
const (
	mergeBatches    = 8
	minInputBatches = 4
)

// inputBatches is how many batches may wait to be read from each of n
// inputs.
func inputBatches(n int) int {
	return max(minInputBatches, mergeBatches/max(n, 1))
}

// errMergerClosed is returned by Read after Close.
var errMergerClosed = errors.New("strace: read from a closed Merger")

// NewMerger starts reading inputs, each with a Reader of opts (WithName is
// set to the input's Name). WithKinds selects the records returned.
func NewMerger(inputs []MergeInput, opts ...Option) *Merger {
	m := &Merger{stop: make(chan struct{})}
	depth := inputBatches(len(inputs))
	for i, in := range inputs {
		o := append(append([]Option(nil), opts...), WithName(in.Name))
		rd := NewReader(in.R, o...)
		rd.memory.owned = &attrArena{} // the records' attributes outlive the next Read
		mi := &mergeInput{index: i, name: in.Name, shift: in.MonoShift, rd: rd,
			batches: make(chan mergeBatch, depth), free: make(chan batchBuf, depth+2)}
		m.inputs = append(m.inputs, mi)
		go mi.parse(m.stop)
	}
	return m
}

// Read returns the next record in write order and the index of its input.
// It returns io.EOF when every input is over. A failing input's records
// are returned before its error, which names the input and stops the
// merge. A panic of an input's reader is raised again by Read.
func (m *Merger) Read() (rec *Record, input int, err error) {
	if m.err != nil {
		return nil, -1, m.err
	}
	if !m.started {
		m.started = true
		for _, in := range m.inputs {
			if err := in.next(); err != nil {
				m.err = err
				return nil, -1, err
			}
		}
	} else if m.last != nil {
		if err := m.last.next(); err != nil {
			m.err = err
			return nil, -1, err
		}
	}
	var cur *mergeInput
	for _, in := range m.inputs {
		if !in.done && (cur == nil || in.key < cur.key) {
			cur = in
		}
	}
	m.last = cur
	if cur == nil {
		m.err = io.EOF
		return nil, -1, io.EOF
	}
	return cur.rec, cur.index, nil
}

// Close stops the parsing goroutines and waits for them to end. It returns
// nil; reading on after Close returns an error.
func (m *Merger) Close() error {
	if m.stats != nil {
		return nil
	}
	close(m.stop)
	m.stats = make([]Stats, len(m.inputs))
	for i, in := range m.inputs {
		for range in.batches { // until the goroutine is done with its reader
		}
		m.stats[i] = in.rd.Stats().Clone()
	}
	if m.err == nil || m.err == io.EOF {
		m.err = errMergerClosed
	}
	return nil
}

// Stats returns the statistics of each input's reader, in input order. It
// returns nil before Close.
func (m *Merger) Stats() []Stats { return m.stats }

// next moves the input to its next record. The records of a batch that
// ended in an error are taken before the error is returned.
func (in *mergeInput) next() error {
	for in.pos >= len(in.batch.recs) {
		if in.batch.err != nil {
			return fmt.Errorf("%s: %w", in.name, in.batch.err)
		}
		if in.batch.recs != nil {
			if poison {
				// Read has moved past the batch: what it handed out is
				// invalid from now on, whenever its goroutine reuses it.
				in.batch.mem.rewind()
			}
			select { // the records of the batch read are no longer handed out
			case in.free <- batchBuf{in.batch.recs, in.batch.mem}:
			default:
			}
			in.batch.recs, in.batch.mem = nil, nil
		}
		b, ok := <-in.batches
		if !ok {
			in.done = true
			in.rec = nil
			return nil
		}
		if b.panicked {
			in.done = true
			panic(b.panicVal)
		}
		in.batch, in.pos = b, 0
	}
	in.rec = &in.batch.recs[in.pos]
	in.pos++
	if in.rec.Prefix.Present {
		in.key = in.rec.Prefix.MonoNS + in.shift // a record without a prefix keeps its place
	}
	return nil
}

// parse runs on its own goroutine: it reads the input and sends its
// records in batches, then closes the channel. stop ends it early. A panic
// of the input's reader is handed over, to be raised again by Read.
func (in *mergeInput) parse(stop <-chan struct{}) {
	defer close(in.batches)
	var mem *batchMem
	fresh := func() []Record {
		var f batchBuf
		select {
		case f = <-in.free:
			f.recs = f.recs[:0] // each record is overwritten whole as it is read into the batch
			if !poison {        // under the race detector next rewound it, poisoning it, already
				f.mem.rewind()
			}
		default:
			f.recs = make([]Record, 0, mergeBatchLen)
			if in.rd.cfg.recycle {
				f.mem = &batchMem{}
				f.mem.rewind() // reusing its memory from now on
			}
		}
		if mem = f.mem; mem != nil {
			in.rd.memory.arena, in.rd.memory.owned = &mem.strs, &mem.attrs
		}
		return f.recs
	}
	b := fresh()
	send := func(batch mergeBatch) bool {
		batch.mem = mem
		select {
		case in.batches <- batch:
			b = fresh()
			return true
		case <-stop:
			return false
		}
	}
	defer func() {
		if v := recover(); v != nil {
			send(mergeBatch{panicked: true, panicVal: v})
		}
	}()
	names := newInternTable()
	if in.rd.cfg.recycle {
		names.owned = true
	}
	for {
		b = b[:len(b)+1] // a batch is sent when full: there is room
		rec := &b[len(b)-1]
		err := in.rd.read(rec)
		if err != nil {
			b = b[:len(b)-1]
		}
		if err == io.EOF {
			if len(b) > 0 {
				send(mergeBatch{recs: b})
			}
			return
		}
		if err != nil {
			send(mergeBatch{recs: b, err: err})
			return
		}
		own(rec, &names)
		if len(b) == mergeBatchLen && !send(mergeBatch{recs: b}) {
			return
		}
	}
}

// own interns the strings of a span that repeat, so that repeats share one
// string (a trace writer then knows them by their address instead of
// hashing them again). Its attributes are its own already: the reader
// parsed them into an arena (one allocation for many records, not one
// each). A span's keys and short values are first compared with those of
// the last span of its name at the same place, which they most often are:
// a map lookup for each instead costs 4.0 % of a conversion (median of 36
// interleaved pairs, 606 → 635 ms, of go test -run XXX -bench
// 'ConvertFile$' -benchtime 1x -benchfile F . in the root package, on a
// log of 100 MB from TestGenerateLog).
//
// With recycled memory (names.owned), every canonical string of a record
// (see WithRecycledMemory) is interned, bind phases' too: the table's
// strings are copies, never the recycled memory the reader parsed into.
func own(rec *Record, names *internTable) {
	if rec.Kind == KindBindPhase && names.owned {
		b := &rec.BindPhase
		b.Phase, b.Source = names.of(b.Phase), names.of(b.Source)
		names.ownAttrs(b.Attrs, nil)
		return
	}
	if rec.Kind != KindSpan {
		return
	}
	e := names.entry(rec.Span.Name)
	if e == nil { // the table is full, and the name not in it
		rec.Span.Name = names.unlisted(rec.Span.Name)
		names.ownAttrs(rec.Span.Attrs, nil)
		return
	}
	rec.Span.Name = e.s
	if n := min(len(rec.Span.Attrs), maxAttrsRemembered); n > len(e.last) {
		e.last = names.lastRoom(e.last, n)
	}
	names.ownAttrs(rec.Span.Attrs, e.last)
}

// ownAttrs interns the keys and short text values of attrs, comparing
// each first with what last (if long enough) remembers at its place.
func (t *internTable) ownAttrs(attrs []Attr, last [][2]string) {
	for i := range attrs {
		a := &attrs[i]
		var l *[2]string
		if i < len(last) {
			l = &last[i]
		}
		a.Key = t.at(l, 0, a.Key)
		if a.Type == TypeString && len(a.Value) <= t.maxValue() {
			a.Value = t.at(l, 1, a.Value) // short values repeat: roles, clk=dev, ...
		}
	}
}

// maxInternedValue is the longest attribute value interned by default
// (with recycled memory, CanonicalValueLen).
const maxInternedValue = 64

// maxValue is the longest attribute value the table interns.
func (t *internTable) maxValue() int {
	if t.owned {
		return CanonicalValueLen
	}
	return maxInternedValue
}

// maxAttrsRemembered is how many attributes of the last span of a name are
// remembered.
const maxAttrsRemembered = 32

// internTable canonicalises the strings a log repeats (span names,
// attribute keys), up to maxInterned distinct ones.
//
// When owned is set the strings it is given live in memory that is reused:
// the table keeps copies, and returns a copy of a string it has no room for,
// so that what it returns stays valid and unchanged for good.
type internTable struct {
	m     map[string]*interned
	slab  []interned  // where new entries are made, internSlab at a time
	lasts [][2]string // where their last attributes are kept, internSlab*4 at a time
	owned bool
}

const internSlab = 256

// lastRoom returns last grown to n attributes.
func (t *internTable) lastRoom(last [][2]string, n int) [][2]string {
	if cap(t.lasts)-len(t.lasts) < n {
		t.lasts = make([][2]string, 0, max(internSlab*4, n))
	}
	k := len(t.lasts)
	t.lasts = t.lasts[:k+n]
	grown := t.lasts[k : k+n : k+n]
	copy(grown, last)
	return grown
}

// interned is a canonical string; for a span name, also the keys and
// values of the last span of that name, canonical ones.
type interned struct {
	s    string
	last [][2]string // per attribute, its key and its value ("" when none)
}

const maxInterned = 1 << 14

func newInternTable() internTable {
	return internTable{m: map[string]*interned{}}
}

// entry returns s's entry, made when the table has room, or nil.
func (t *internTable) entry(s string) *interned {
	if e, ok := t.m[s]; ok {
		return e
	}
	if len(t.m) >= maxInterned {
		return nil
	}
	if len(t.slab) == cap(t.slab) {
		t.slab = make([]interned, 0, internSlab) // entries never move
	}
	if t.owned {
		s = strings.Clone(s)
	}
	t.slab = append(t.slab, interned{s: s})
	e := &t.slab[len(t.slab)-1]
	t.m[s] = e
	return e
}

func (t *internTable) of(s string) string {
	if e := t.entry(s); e != nil {
		return e.s
	}
	return t.unlisted(s)
}

// unlisted returns s, which the table has no room for, as it is handed out:
// a copy when owned.
func (t *internTable) unlisted(s string) string {
	if t.owned {
		return strings.Clone(s)
	}
	return s
}

// at returns s interned, as of does, comparing it first with last[k] (when
// last is not nil), the canonical string found at its place last time,
// which it then becomes.
func (t *internTable) at(last *[2]string, k int, s string) string {
	if last == nil {
		return t.of(s)
	}
	if l := last[k]; l != "" && l == s {
		return l
	}
	e := t.entry(s)
	if e == nil {
		return t.unlisted(s)
	}
	last[k] = e.s
	return e.s
}

// attrArena hands out attribute slices carved from larger blocks: a
// record's attributes are appended to tail, and keep takes them.
//
// A recycling attrArena (reuse set) keeps its blocks: rewind makes them free
// again, and the slices handed out before become invalid. A record whose
// attributes outgrew the room a block keeps for it makes the arena keep as
// much room from then on (in blocks made for it once), so that such records
// cost no allocation the next times.
type attrArena struct {
	block []Attr

	reuse  bool
	room   int             // when reusing: the room a block must have left (attrReserve at least, once rewound)
	blocks blockList[Attr] // when reusing: its blocks
}

const (
	attrBlock   = 4096
	attrReserve = 64 // a block with less room left is not appended to
)

// tail returns the free end of the current block (a new block when little
// is left), to append attributes to.
func (a *attrArena) tail() []Attr {
	if a.reuse {
		if cap(a.block)-len(a.block) < a.room {
			a.advance()
		}
	} else if cap(a.block)-len(a.block) < attrReserve {
		a.block = make([]Attr, 0, attrBlock)
	}
	return a.block[len(a.block):len(a.block)]
}

// advance moves a reusing arena to its next block with the room it keeps.
func (a *attrArena) advance() {
	a.block = a.blocks.take(a.room, max(attrBlock, 4*a.room))
}

// keep takes attrs, appended to what tail returned, out of the block's free
// end (when they outgrew it, append moved them to an allocation of their
// own). No later slice overlaps them: their capacity is their length.
func (a *attrArena) keep(attrs []Attr) []Attr {
	n := len(a.block)
	if len(attrs) > 0 && n < cap(a.block) && &attrs[0] == &a.block[:n+1][n] {
		a.block = a.block[:n+len(attrs)]
	} else if a.reuse && len(attrs) > 0 {
		a.room = max(a.room, len(attrs)) // they outgrew it: keep room for as many
	}
	return attrs[:len(attrs):len(attrs)]
}

// rewind makes the arena reuse its blocks from the first: every slice it
// handed out before is invalid. Under the race detector the blocks are
// poisoned, so that attributes kept too long read as garbage.
func (a *attrArena) rewind() {
	a.reuse, a.room = true, max(a.room, attrReserve)
	a.blocks.rewind(poisonAttr)
	a.block = nil
}

// poisonAttr is what recycled attributes are overwritten with under the
// race detector.
var poisonAttr = Attr{Key: "\xff<recycled>", Value: "\xff<recycled>", Int: -0x0BADBAD, Uint: 0x0BADBAD, Type: TypeUint, Bare: true, Truncated: true, MaybeCut: true}
