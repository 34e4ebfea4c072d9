package perfetto

import (
	"math"
	"unsafe"

	"google.golang.org/protobuf/encoding/protowire"
)

// A sequence is one trusted_packet_sequence_id: the scope of interned data,
// packet defaults and the incremental timestamp clock. The writer gives each
// track that has events a sequence of its own, whose TracePacketDefaults
// name the track, so events carry neither a track uuid nor a clock id.
//
// A trace may have a hundred thousand threads with a slice or two each, so
// a sequence costs little until it is busy: its interned strings live in a
// short list searched in order, which becomes a map once it passes
// smallTable entries, and the memo of arguments that spares a busy
// sequence most lookups is allocated only after busyLookups lookups, and
// on at most maxBusy sequences of a Writer (the first to be busy): a trace
// of a hundred thousand threads with a few dozen slices each must not cost
// a hundred thousand memos.
type sequence struct {
	id      uint32
	started bool  // the first packet (with SEQ_INCREMENTAL_STATE_CLEARED) is written
	lastTS  int64 // absolute value of the incremental clock on this sequence

	next  [numKinds]uint32 // the last iid given, per kind of entry
	count int              // entries interned since the last clear
	// list holds every entry since the last clear while the sequence has
	// no map, and only the entries not yet defined in the trace once it
	// has one; list[:emitted] are defined already.
	list    []internEntry
	emitted int
	ids     map[internKey]uint32
	cache   *busy
	lookups uint32 // lookups made, until the sequence is busy
	caches  *int   // the busy sequences of the Writer (nil: no limit)
}

// Kinds of interned entries, by InternedData field.
const (
	internName = iota
	internCategory
	internAnnName
	internString
	numKinds
)

// Sizes of the interning structures (see sequence): memos (4 KiB per four
// event names) are kept only on sequences that are busy: a few hundred
// events, five lookups each. A list of smallTable entries holds what a
// thread of a runtime log interns — its spans' names, their full names as
// string values, categories, argument names and hids, a dozen or more —
// without a map: with 8, a converted log's thread of 16 runs cost 2.9 KB,
// with 16 1.7 KB (TestMemoryPerTrack of the root package), and converting
// a 10 MB log took 1.9 % more instructions (cachegrind's count: a short
// list is searched faster than a map is hashed).
const (
	smallTable  = 16
	busyLookups = 1024
	maxBusy     = 256
)

type internKey struct {
	s    string
	kind uint8
}

type internEntry struct {
	s    string
	iid  uint32
	kind uint8
}

// busy is what a busy sequence adds to spare lookups: the arguments of
// its most frequent events.
type busy struct {
	// memo[name] remembers the arguments of the events named by iid name.
	memo [memoNames]*argMemo
	// spare are memos allocated and not yet used: they are allocated
	// memoSlab at a time.
	spare []argMemo
	// names and cats remember the iids of event names and categories, as
	// a memoEntry each, in the slot the address of their bytes picks
	// (slotOf), with the one each slot held before (prevNames, prevCats):
	// what a track's slices are named with are a few canonical strings.
	// Found there, a slice's name and category cost no lookup in the map:
	// the lookups took 2.2 % of a conversion's instructions, the memos
	// spare 1.5 % and 3.7 % of its time (1.1 KiB a busy sequence; see
	// perfetto/PERFORMANCE.md). TestNameMemoAsInterned checks them
	// against intern.
	names, prevNames [nameSlots]memoEntry
	cats, prevCats   [catSlots]memoEntry
}

// Slots of a busy sequence's memos of event names and categories (powers
// of two).
const (
	nameSlots = 32
	catSlots  = 4
)

// slotOf returns the slot of v among n (a power of two), by the address of
// its bytes.
func slotOf(v string, n int) int {
	return int(uint64(uintptr(unsafe.Pointer(unsafe.StringData(v)))) * 0x9E3779B97F4A7C15 >> 32 & uint64(n-1))
}

// An argMemo holds the annotation names and interned string values, and
// their iids, that the last event of a name had at each position of its
// arguments. A log gives the events of a name the same arguments in the
// same order, their values often the same strings, so they are found by
// comparing addresses, without a lookup. Each position also keeps what it
// held before (prevNames, prevValues), for the events of a name that come
// in two layouts in turn (a log's bind segment spans and its legacy bind
// lines share their names). It keeps the strings it remembers alive.
//
// Without the memo (and appendKnown, which writes what it knows), every
// argument is looked up in the sequence's map: a conversion takes 32 %
// longer (median of 12 interleaved pairs, 545 → 800 ms, of
// go test -run XXX -bench 'ConvertFile$' -benchtime 1x -benchfile F . in
// the root package, on a log of 100 MB from TestGenerateLog).
// TestKnownAnnotationsAsInterned, TestKnownAnnotationsTwoLayouts and
// TestKnownAnnotationBoundaries check it against the plain lookup.
type argMemo struct {
	names, values         [memoArgs]memoEntry
	prevNames, prevValues [memoArgs]memoEntry
}

// A memoPlace is an argMemo's entry at a position and the one it held
// before (both nil: no memo).
type memoPlace struct{ cur, prev *memoEntry }

// A memoEntry is a string of an argMemo, of the kind its place says, by
// the address and length of its bytes (whose pointer keeps them alive),
// with its iid. An entry that remembers nothing has the length unsetLen,
// which no string it could match has (a string that long has an address),
// so that a match is found by the address and length alone. It is two
// thirds of an internEntry, so that a memo takes fewer cache lines.
type memoEntry struct {
	p   *byte
	n   uint32
	iid uint32
}

// unsetLen is the length of a memoEntry that remembers nothing.
const unsetLen = math.MaxUint32

// reset makes the memo remember nothing.
func (m *argMemo) reset() {
	for i := range m.names {
		m.names[i], m.values[i] = memoEntry{n: unsetLen}, memoEntry{n: unsetLen}
		m.prevNames[i], m.prevValues[i] = memoEntry{n: unsetLen}, memoEntry{n: unsetLen}
	}
}

// Sizes of the memo of arguments: the first memoArgs arguments of events
// whose name has an iid under memoNames. A track has a few event names:
// their memos are allocated memoSlab at a time.
const (
	memoNames = 64
	memoArgs  = 16
	memoSlab  = 4
)

// argMemo returns the memo of the arguments of the events named by iid
// name, or nil if the sequence keeps none for them.
func (s *sequence) argMemo(name uint64) *argMemo {
	if s.cache == nil || name >= memoNames {
		return nil
	}
	c := s.cache
	m := c.memo[name]
	if m == nil {
		if len(c.spare) == 0 {
			c.spare = make([]argMemo, memoSlab)
		}
		m, c.spare = &c.spare[0], c.spare[1:]
		m.reset()
		c.memo[name] = m
	}
	return m
}

// name returns the memo's place for the name of the argument at position
// i (none past memoArgs).
func (m *argMemo) name(i int) memoPlace {
	if m == nil || i >= memoArgs {
		return memoPlace{}
	}
	return memoPlace{&m.names[i], &m.prevNames[i]}
}

// value returns the memo's place for the string value of the argument at
// position i (none past memoArgs).
func (m *argMemo) value(i int) memoPlace {
	if m == nil || i >= memoArgs {
		return memoPlace{}
	}
	return memoPlace{&m.values[i], &m.prevValues[i]}
}

// hit returns the iid remembered at e if e (not nil) remembers v, and 0
// otherwise.
func (e *memoEntry) hit(v string) uint64 {
	if e != nil && e.p == unsafe.StringData(v) && int(e.n) == len(v) {
		return uint64(e.iid)
	}
	return 0
}

// memoized returns the iid of v among the entries of its kind, as intern,
// looking it up first at p, a memo's place, and remembering it there. An
// entry found in what the place held before becomes its entry again.
func (s *sequence) memoized(p memoPlace, kind uint8, v string) uint64 {
	if iid := p.cur.hit(v); iid != 0 {
		return iid
	}
	if iid := p.prev.hit(v); iid != 0 {
		*p.cur, *p.prev = *p.prev, *p.cur
		return iid
	}
	return s.memoize(p, kind, v)
}

// memoize is memoized once p has missed: it interns v and remembers it at
// p, the entry there becoming the one it held before.
func (s *sequence) memoize(p memoPlace, kind uint8, v string) uint64 {
	iid := s.intern(kind, v)
	if p.cur != nil && len(v) > 0 && uint64(len(v)) < unsetLen {
		*p.prev = *p.cur
		*p.cur = memoEntry{p: unsafe.StringData(v), n: uint32(len(v)), iid: uint32(iid)}
	}
	return iid
}

// intern returns the iid of v among the entries of its kind, defining it
// if needed; the definition is written with the next packet built on the
// sequence (appendInterned).
func (s *sequence) intern(kind uint8, v string) uint64 {
	var iid uint32
	if s.ids != nil {
		iid = s.ids[internKey{v, kind}]
	} else {
		for i := range s.list {
			if e := &s.list[i]; e.kind == kind && e.s == v {
				iid = e.iid
				break
			}
		}
	}
	if iid == 0 {
		s.next[kind]++
		s.count++
		iid = s.next[kind]
		s.list = append(s.list, internEntry{s: v, iid: iid, kind: kind})
		switch {
		case s.ids != nil:
			s.ids[internKey{v, kind}] = iid
		case len(s.list) > smallTable:
			s.ids = make(map[internKey]uint32, 2*smallTable)
			for _, e := range s.list {
				s.ids[internKey{e.s, e.kind}] = e.iid
			}
			n := copy(s.list, s.list[s.emitted:])
			clear(s.list[n:])
			s.list, s.emitted = s.list[:n], 0
		}
	}
	if s.cache == nil {
		if s.lookups++; s.lookups >= busyLookups && (s.caches == nil || *s.caches < maxBusy) {
			s.cache = new(busy)
			if s.caches != nil {
				*s.caches++
			}
		}
	}
	return uint64(iid)
}

// internName interns an event name, looking it up first in a busy
// sequence's memo of names.
func (s *sequence) internName(v string) uint64 {
	if c := s.cache; c != nil {
		k := slotOf(v, nameSlots)
		return s.memoized(memoPlace{&c.names[k], &c.prevNames[k]}, internName, v)
	}
	return s.intern(internName, v)
}

// internCategory interns a category, as internName a name.
func (s *sequence) internCategory(v string) uint64 {
	if c := s.cache; c != nil {
		k := slotOf(v, catSlots)
		return s.memoized(memoPlace{&c.cats[k], &c.prevCats[k]}, internCategory, v)
	}
	return s.intern(internCategory, v)
}

func (s *sequence) internAnnName(v string) uint64 { return s.intern(internAnnName, v) }
func (s *sequence) internString(v string) uint64  { return s.intern(internString, v) }

// fresh reports whether entries wait to be defined in the trace.
func (s *sequence) fresh() bool { return len(s.list) > s.emitted }

// resetInterning forgets every interned entry; the next packet on the
// sequence must carry SEQ_INCREMENTAL_STATE_CLEARED.
func (s *sequence) resetInterning() {
	s.next, s.count = [numKinds]uint32{}, 0
	clear(s.list)
	s.list, s.emitted = s.list[:0], 0
	if s.ids != nil {
		clear(s.ids)
	}
	if c := s.cache; c != nil {
		for _, m := range c.memo {
			if m != nil {
				m.reset()
			}
		}
		clear(c.names[:])
		clear(c.prevNames[:])
		clear(c.cats[:])
		clear(c.prevCats[:])
	}
}

// appendInterned appends the InternedData of the entries defined since the
// last packet built on the sequence.
func (s *sequence) appendInterned(b []byte) []byte {
	var m message
	b, m = begin(b, fPacketInternedData)
	fresh := s.list[s.emitted:]
	for kind, field := range [numKinds]protowire.Number{
		internName:     fInternedNames,
		internCategory: fInternedCategories,
		internAnnName:  fInternedAnnNames,
		internString:   fInternedStrings,
	} {
		for _, e := range fresh {
			if int(e.kind) != kind {
				continue
			}
			var em message
			b, em = begin(b, field)
			b = appendVarintField(b, fInternedIID, uint64(e.iid))
			b = appendStringField(b, fInternedValue, e.s)
			b = em.end(b)
		}
	}
	if s.ids != nil {
		clear(fresh)
		s.list = s.list[:0]
	} else {
		s.emitted = len(s.list)
	}
	return m.end(b)
}
