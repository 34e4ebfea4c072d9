package perfetto

import (
	"unsafe"

	"google.golang.org/protobuf/encoding/protowire"
)

// A sequence is one trusted_packet_sequence_id: the scope of interned data,
// packet defaults and the incremental timestamp clock. The writer gives each
// track that has events a sequence of its own, whose TracePacketDefaults
// name the track, so events carry neither a track uuid nor a clock id.
type sequence struct {
	id uint32

	names, cats, annNames, strs internTable
	fresh                       []freshEntry // entries to define in the packet being built
	entries                     int          // interned entries since the last clear

	started bool  // the first packet (with SEQ_INCREMENTAL_STATE_CLEARED) is written
	lastTS  int64 // absolute value of the incremental clock on this sequence
}

// internTable maps strings to interning ids (iids) on one sequence.
type internTable struct {
	ids  map[string]uint64
	next uint64
	// cache remembers recent strings by the address of their bytes: a
	// string with the same address and length as a cached one (which the
	// cache keeps alive) has the same contents, so the map lookup and its
	// hashing are skipped for names a program passes again and again.
	cache [64]cacheEntry
}

type cacheEntry struct {
	s   string
	iid uint64
}

func cacheSlot(v string) int {
	p := uintptr(unsafe.Pointer(unsafe.StringData(v)))
	return int((p>>3 ^ p>>9 ^ uintptr(len(v))) & 63)
}

// Kinds of interned entries, by InternedData field.
const (
	internName = iota
	internCategory
	internAnnName
	internString
)

type freshEntry struct {
	kind uint8
	iid  uint64
	s    string
}

func (t *internTable) reset() {
	if t.ids == nil {
		t.ids = make(map[string]uint64)
	} else {
		clear(t.ids)
	}
	t.cache = [64]cacheEntry{}
	t.next = 0
}

func (s *sequence) intern(t *internTable, kind uint8, v string) uint64 {
	e := &t.cache[cacheSlot(v)]
	if e.iid != 0 && len(e.s) == len(v) && unsafe.StringData(e.s) == unsafe.StringData(v) {
		return e.iid
	}
	if iid, ok := t.ids[v]; ok {
		e.s, e.iid = v, iid
		return iid
	}
	t.next++
	t.ids[v] = t.next
	e.s, e.iid = v, t.next
	s.fresh = append(s.fresh, freshEntry{kind: kind, iid: t.next, s: v})
	s.entries++
	return t.next
}

func (s *sequence) internName(v string) uint64     { return s.intern(&s.names, internName, v) }
func (s *sequence) internCategory(v string) uint64 { return s.intern(&s.cats, internCategory, v) }
func (s *sequence) internAnnName(v string) uint64  { return s.intern(&s.annNames, internAnnName, v) }
func (s *sequence) internString(v string) uint64   { return s.intern(&s.strs, internString, v) }

// resetInterning forgets every interned entry; the next packet on the
// sequence must carry SEQ_INCREMENTAL_STATE_CLEARED.
func (s *sequence) resetInterning() {
	s.names.reset()
	s.cats.reset()
	s.annNames.reset()
	s.strs.reset()
	s.fresh = s.fresh[:0]
	s.entries = 0
}

// appendInterned appends the InternedData of the entries defined while
// building the current packet, and forgets them.
func (s *sequence) appendInterned(b []byte) []byte {
	var m message
	b, m = begin(b, fPacketInternedData)
	for kind, field := range [...]protowire.Number{
		internName:     fInternedNames,
		internCategory: fInternedCategories,
		internAnnName:  fInternedAnnNames,
		internString:   fInternedStrings,
	} {
		for _, e := range s.fresh {
			if int(e.kind) != kind {
				continue
			}
			var em message
			b, em = begin(b, field)
			b = appendVarintField(b, fInternedIID, e.iid)
			b = appendStringField(b, fInternedValue, e.s)
			b = em.end(b)
		}
	}
	s.fresh = s.fresh[:0]
	return m.end(b)
}
