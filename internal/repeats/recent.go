package repeats

import "github.com/phasetrace/phasetrace/strace"
import "github.com/phasetrace/phasetrace/internal/held"

// RecentSpanCount is how many recent spans a span is compared with.
const RecentSpanCount = 1 << 12

// RecentSpans remembers the last RecentSpanCount spans in a ring, chained by a
// hash of their identity, time and name; a span whose hash matches is
// compared field by field. A chain runs from the newest span to the oldest,
// so a walk of its own chain is done at the first span that has left the
// ring.
//
// The chains are small enough to stay in the processor's cache while the
// spans stream by (heads and links, 32 KiB), so most walks read nothing
// else: a link is 32 bits, a span's sequence number plus one, modulo
// 2^linkSeqBits, above the top bits of the span's hash (its tag, never
// zero, so that a link is never 0 and 0 is none). A walk reads a span only
// when its tag is the hash's own.
//
// A link's sequence number is exact while the span it names is in the
// ring, which every link the walk follows from a head is until the chain
// leaves it. A link to a span that has left it reads as one in the ring
// again when the span was remembered k·2^linkSeqBits + a spans ago (a under
// RecentSpanCount, k at least 1); it then names the span of the ring in the
// same ring slot, whose own links are exact, and the walk goes on along
// that span's chain. Walking only to older spans (a link to a span not
// older than the last one visited ends the walk) keeps such a walk finite,
// at most RecentSpanCount visits, and it has visited every span of its own
// chain in the ring first. Whatever span a walk visits is in the ring,
// and one whose tag is the hash's own is compared in full.
type RecentSpans struct {
	ring  []recentSpan
	links []uint32 // per ring slot: the link to the previous span of its chain
	heads []uint32 // per bucket: the link to its newest span (0: none)
	// The ring's spans' attributes: those of the spans numbered [k·G,
	// (k+1)·G) live in stores[k%dedupStores] (G = dedupGen), which is reset
	// when span (k+dedupStores)·G comes, its spans out of the ring by
	// then. The stores hold little more than the ring's attributes.
	stores [dedupStores]held.Store
	n      uint64 // spans remembered so far
	// holder is told, before the attributes of the oldest copies are
	// let go of, the number (plus one) of the oldest copy still valid
	// after, and copies out the shared spans below it (nil: none).
	holder SharedHolder
}

// A link's fields (see RecentSpans).
const (
	linkSeqBits = 20
	linkTagBits = 32 - linkSeqBits
	linkSeqMask = 1<<linkSeqBits - 1
	linkTagMask = 1<<linkTagBits - 1
)

// recentSpan is a slot of the ring: a span and its hash.
type recentSpan struct {
	key  uint64
	span strace.Span
}

// The ring's spans' attributes are kept in generations of dedupGen spans:
// the ring's, and one more.
const (
	dedupGen    = RecentSpanCount / 8
	dedupStores = RecentSpanCount/dedupGen + 1
)

// dedupBuckets is the number of chains: as many as the ring holds, so a
// chain has one span in the ring on average.
const dedupBuckets = RecentSpanCount

// A SharedHolder holds attributes the ring shared it: the run collector, or a
// test's stand-in.
type SharedHolder interface {
	// CopyOut copies out the shared spans numbered below valid.
	CopyOut(valid uint64)
}

// NewRecentSpans returns an empty ring whose shared spans go to a holder
// with CopyOut (nil: none). CopyOut is told, before the ring lets go of the
// attributes of its oldest copies, the number (plus one, as a shared span gives
// it) of the oldest copy still valid after, at most once per dedupGen
// spans admitted; the holder copies out the shared spans below it then.
func NewRecentSpans(b SharedHolder) *RecentSpans {
	return &RecentSpans{ring: make([]recentSpan, RecentSpanCount), links: make([]uint32, RecentSpanCount), heads: make([]uint32, dedupBuckets), holder: b}
}

// spanHash hashes a span's (pid, tid, inv, name, ts, dur). Its four
// products are independent, so they overlap in the processor.
func spanHash(sp *strace.Span) uint64 {
	first, last := nameWords(sp.Name)
	a := mulFold(uint64(uint32(sp.Pid))^hashK0, uint64(sp.Tid)^hashK1)
	b := mulFold(sp.Inv^hashK2, uint64(len(sp.Name))^hashK3)
	c := mulFold(uint64(sp.TS)^hashK1, uint64(sp.Dur)^hashK0)
	d := mulFold(first^hashK3, last^hashK2)
	return mulFold(a^c^hashK0, b^d^hashK1)
}

// nameWords returns a name's first and last eight bytes (fewer, zero
// padded, when it is shorter): equal names give equal words, and spans
// that differ only in a long name's middle are told apart by sameKey.
func nameWords(s string) (first, last uint64) {
	if len(s) < 8 {
		for i := 0; i < len(s); i++ {
			first |= uint64(s[i]) << (8 * i)
		}
		return first, 0
	}
	t := s[len(s)-8:]
	first = uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 | uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
	last = uint64(t[0]) | uint64(t[1])<<8 | uint64(t[2])<<16 | uint64(t[3])<<24 | uint64(t[4])<<32 | uint64(t[5])<<40 | uint64(t[6])<<48 | uint64(t[7])<<56
	return first, last
}

// A SharedSpan is a span the ring shares: its copy in the ring, valid until the
// ring tells its holder (NewRecentSpans) a number above n. A shared span of n
// 0 is no shared span: a span the holder must copy (unshared).
type SharedSpan struct {
	Span *strace.Span
	N    uint64 // the copy's number plus one
}

// Unshared is sp as a shared span of no ring: its holder keeps its own copy.
func Unshared(sp *strace.Span) SharedSpan { return SharedSpan{Span: sp} }

// Admit reports whether sp equals a recent span (repeated), and if not
// keeps a copy of it (sp need not outlive the call) and shares it. The
// shared span's attributes stay valid until the ring calls its holder's
// CopyOut (NewRecentSpans) with a number above the shared span's: a holder may keep
// the copy instead of one of its own if it copies the attributes out then
// (runCollector.CopyOut).
func (r *RecentSpans) Admit(sp *strace.Span) (l SharedSpan, repeated bool) {
	h := spanHash(sp)
	b := h & (dedupBuckets - 1)
	tag := uint32(h>>(64-linkTagBits)) | 1
	next := uint32(r.n) // the link of the last span remembered names it by n
	for l, last := r.heads[b], -1; l != 0; {
		// age: spans remembered since the one l names (0: the last one).
		age := int((next - l>>linkTagBits) & linkSeqMask)
		if age >= RecentSpanCount || age <= last {
			break // out of the ring, or not older than the last visited
		}
		last = age
		i := (l>>linkTagBits - 1) % RecentSpanCount
		if l&linkTagMask == tag {
			if e := &r.ring[i]; e.key == h && sameKey(&e.span, sp) {
				return SharedSpan{}, true
			}
		}
		l = r.links[i]
	}
	i := r.n % RecentSpanCount
	st := &r.stores[r.n/dedupGen%dedupStores]
	if r.n%dedupGen == 0 {
		// The store's generation has left the ring: the copies numbered
		// from n−(dedupStores−1)·dedupGen on stay valid.
		if r.n >= dedupStores*dedupGen && r.holder != nil {
			r.holder.CopyOut(r.n - (dedupStores-1)*dedupGen + 1)
		}
		st.Reset()
	}
	e := &r.ring[i]
	e.key, e.span = h, *sp
	e.span.Attrs = st.Keep(sp.Attrs) // in place: the span is not copied twice
	r.links[i] = r.heads[b]
	r.n++
	r.heads[b] = uint32(r.n)<<linkTagBits | tag
	return SharedSpan{&e.span, r.n}, false
}

// sameKey reports whether two spans are equal in (pid, tid, inv, name, ts,
// dur), what makes a span the same span again.
func sameKey(a, b *strace.Span) bool {
	return a.Pid == b.Pid && a.Tid == b.Tid && a.Inv == b.Inv && a.TS == b.TS && a.Dur == b.Dur && a.Name == b.Name
}

// recentKeysLen is how many record keys a RecentKeys remembers.
const recentKeysLen = 4096

// RecentKeys remembers the keys (recordKey) of the last recentKeysLen
// records given to it, so that a record given again close to its first —
// a log given twice is read together with its copy, record by record in
// the order they were written — is known as a repeat.
type RecentKeys struct {
	ring []uint64
	next int
	in   map[uint64]int32 // how many times each key is in ring
}

// Repeated reports whether key is among the last keys given, and
// remembers it when it is not.
func (r *RecentKeys) Repeated(key uint64) bool {
	if r.in[key] > 0 {
		return true
	}
	if r.ring == nil {
		r.ring = make([]uint64, 0, recentKeysLen)
		r.in = make(map[uint64]int32)
	}
	if len(r.ring) < recentKeysLen {
		r.ring = append(r.ring, key)
	} else {
		old := r.ring[r.next]
		if r.in[old]--; r.in[old] == 0 {
			delete(r.in, old)
		}
		r.ring[r.next] = key
		r.next = (r.next + 1) % recentKeysLen
	}
	r.in[key]++
	return false
}
