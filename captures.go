package phasetrace

import (
	"hash/maphash"
	"math/bits"
	"strconv"

	"github.com/phasetrace/phasetrace/strace"
)

// Repeated records. A log is sometimes handed over twice (the same file
// named twice) or holds two captures one after the other (a second capture
// appended to the first, so the log's write time runs backwards where the
// second begins). Drawn twice, such records pile up on overflow lanes and
// their hand-offs connect to the wrong ends. The converter finds them
// exactly and counts them, in two ways:
//
//   - Captures. The first pass cuts every log into captures where its write
//     time (the log prefixes' mono_ns) runs backwards by more than hostGap,
//     and hashes each capture's bytes. A capture whose bytes equal an
//     earlier capture's (of the same log or an earlier one) is left out of
//     both passes; its records are counted as duplicates with the lines
//     they repeat.
//   - Records. A span equal in every field to one of the last
//     dedupWindow (4096) spans is counted as a duplicate and not drawn
//     again.
//
// Repeats that are neither (a capture that overlaps an earlier one only in
// part, a record repeated far apart) are drawn; where they cannot nest on
// their track they are moved to an overflow lane and counted there.

// capture is a run of a log's lines whose write time never runs backwards
// by more than hostGap.
type capture struct {
	first, last int64 // physical lines, 1-based, inclusive
	bytes       int64
	sum         uint64
}

// captureCutter cuts a log into captures as its lines go by. It is given
// the log's bytes in runs as long as its reader likes (write), told of the
// lines that start a new capture (startsCapture, then cut), and hashes each
// capture's bytes in as few calls as there are runs.
type captureCutter struct {
	h       maphash.Hash
	maxMono int64
	hasMono bool
	open    bool // the last byte written did not end a line
	cur     capture
	caps    []capture
}

func newCaptureCutter(seed maphash.Seed) *captureCutter {
	c := &captureCutter{}
	c.h.SetSeed(seed)
	c.cur.first = 1
	return c
}

var monoMark = []byte("[mono_ns=")

// startsCapture is told of the log prefix's mono_ns at the start of a line,
// in log order. It reports whether a new capture starts with the line: the
// caller then writes the bytes before the line and calls cut.
func (c *captureCutter) startsCapture(mono int64) bool {
	cut := c.hasMono && mono < c.maxMono-hostGap
	if cut {
		c.maxMono = mono // the new capture's own time
	}
	if !c.hasMono || mono > c.maxMono {
		c.maxMono, c.hasMono = mono, true
	}
	return cut
}

// write adds the next bytes of the log to the current capture.
func (c *captureCutter) write(b []byte) {
	if len(b) == 0 {
		return
	}
	c.h.Write(b)
	c.cur.bytes += int64(len(b))
	c.open = b[len(b)-1] != '\n'
}

// cut closes the current capture before line (1-based), which starts the
// next one.
func (c *captureCutter) cut(line int64) {
	c.close(line - 1)
	c.cur.first = line
}

// close closes the current capture at its last line.
func (c *captureCutter) close(last int64) {
	if c.cur.bytes == 0 {
		return
	}
	c.cur.last = last
	c.cur.sum = c.h.Sum64()
	c.caps = append(c.caps, c.cur)
	c.cur = capture{}
	c.h.Reset()
}

// finish closes the last capture, given the number of lines ended in the
// log, and returns them all.
func (c *captureCutter) finish(ended int64) []capture {
	last := ended
	if c.open {
		last++ // a last line without a line end
	}
	c.close(last)
	return c.caps
}

// prefixMono reads the mono_ns of a log prefix at the start of a line.
func prefixMono(b []byte) (int64, bool) {
	if len(b) < len(monoMark)+2 || string(b[:len(monoMark)]) != string(monoMark) {
		return 0, false
	}
	var v int64
	i := len(monoMark)
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9' && i < len(monoMark)+19; i++ {
		v = v*10 + int64(b[i]-'0')
	}
	if i == len(monoMark) || i >= len(b) || b[i] != ']' {
		return 0, false
	}
	return v, true
}

// repeat is a capture left out because it repeats an earlier one.
type repeat struct {
	first, last int64  // its lines
	of          string // what it repeats: "lines a–b of name"
}

// repeats finds, per log, the captures that repeat an earlier capture byte
// for byte.
func repeats(names []string, caps [][]capture) [][]repeat {
	type key struct{ bytes, sum uint64 }
	seen := map[key]string{}
	out := make([][]repeat, len(caps))
	found := false
	for i, cs := range caps {
		for _, c := range cs {
			k := key{uint64(c.bytes), c.sum}
			if of, ok := seen[k]; ok {
				out[i] = append(out[i], repeat{first: c.first, last: c.last, of: of})
				found = true
				continue
			}
			seen[k] = "lines " + strconv.FormatInt(c.first, 10) + "–" + strconv.FormatInt(c.last, 10) + " of " + names[i]
		}
	}
	if !found {
		return nil
	}
	return out
}

// repeatOf returns the repeat holding line, advancing *next through the
// sorted list as the lines of a log go by in order.
func repeatOf(rs []repeat, next *int, line int64) (repeat, bool) {
	for *next < len(rs) && rs[*next].last < line {
		*next++
	}
	if *next < len(rs) && rs[*next].first <= line {
		return rs[*next], true
	}
	return repeat{}, false
}

// dedupWindow is how many recent spans a span is compared with.
const dedupWindow = 1 << 12

// recentSpans remembers the last dedupWindow spans in a ring, chained by a
// hash of their identity, time and name; a span whose hash matches is
// compared field by field. A chain runs from the newest span to the oldest,
// so a walk of its own chain is done at the first span that has left the
// window.
//
// The chains are small enough to stay in the processor's cache while the
// spans stream by (heads and links, 32 KiB), so most walks read nothing
// else: a link is 32 bits, a span's sequence number plus one, modulo
// 2^linkSeqBits, above the top bits of the span's hash (its tag, never
// zero, so that a link is never 0 and 0 is none). A walk reads a span only
// when its tag is the hash's own.
//
// A link's sequence number is exact while the span it names is in the
// window, which every link the walk follows from a head is until the chain
// leaves it. A link to a span that has left it reads as one in the window
// again when the span was remembered k·2^linkSeqBits + a spans ago (a under
// dedupWindow, k at least 1); it then names the span of the window in the
// same ring slot, whose own links are exact, and the walk goes on along
// that span's chain. Walking only to older spans (a link to a span not
// older than the last one visited ends the walk) keeps such a walk finite,
// at most dedupWindow visits, and it has visited every span of its own
// chain in the window first. Whatever span a walk visits is in the window,
// and one whose tag is the hash's own is compared in full.
type recentSpans struct {
	ring  []recentSpan
	links []uint32 // per ring slot: the link to the previous span of its chain
	heads []uint32 // per bucket: the link to its newest span (0: none)
	// The ring's spans' attributes: those of the spans numbered [k·G,
	// (k+1)·G) live in stores[k%dedupStores] (G = dedupGen), which is reset
	// when span (k+dedupStores)·G comes, its spans out of the window by
	// then. The stores hold little more than the window's attributes.
	stores [dedupStores]spanStore
	n      uint64 // spans remembered so far
}

// A link's fields (see recentSpans).
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
// the window's, and one more.
const (
	dedupGen    = dedupWindow / 8
	dedupStores = dedupWindow/dedupGen + 1
)

// dedupBuckets is the number of chains: as many as the window holds, so a
// chain has one span in the window on average.
const dedupBuckets = dedupWindow

func newRecentSpans() *recentSpans {
	return &recentSpans{ring: make([]recentSpan, dedupWindow), links: make([]uint32, dedupWindow), heads: make([]uint32, dedupBuckets)}
}

// Odd constants the hash multiplies by (wyhash's).
const (
	hashK0 = 0xa0761d6478bd642f
	hashK1 = 0xe7037ed1a0b428db
	hashK2 = 0x8ebc6af09c88c6e3
	hashK3 = 0x589965cc75374cc3
)

// mum folds two words into one through their 128-bit product.
func mum(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return hi ^ lo
}

// spanHash hashes a span's identity, time and name. Its four products are
// independent, so they overlap in the processor.
func spanHash(sp *strace.Span) uint64 {
	first, last := nameWords(sp.Name)
	a := mum(uint64(uint32(sp.Pid))|uint64(sp.Depth)<<32^hashK0, uint64(sp.Tid)^hashK1)
	b := mum(sp.Inv^hashK2, sp.Hid^hashK3)
	c := mum(uint64(sp.TS)^hashK1, uint64(sp.Dur)^hashK0)
	d := mum(first^hashK3, last^uint64(len(sp.Name))^hashK2)
	return mum(a^c^hashK0, b^d^hashK1)
}

// nameWords returns a name's first and last eight bytes (fewer, zero
// padded, when it is shorter): equal names give equal words, and spans
// that differ only in a long name's middle are told apart by sameSpan.
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

// lent returns the copy of the span remembered last, and its number plus
// one (never 0). The copy's attributes stay valid until lending reports a
// number above its own: a holder may keep it instead of a copy of its own
// if it copies it out then (runCollector.rehome).
func (r *recentSpans) lent() (*strace.Span, uint64) {
	return &r.ring[(r.n-1)%dedupWindow].span, r.n
}

// lending reports, before the next call to repeated, whether that call
// lets go of the attributes of the oldest copies, and if so the number
// (plus one, as lent gives it) of the oldest copy still valid after it.
// The call resets the store of the generation that has left the window:
// after it, the copies numbered from n−(dedupStores−1)·dedupGen on are
// valid, n being the number the call gives its span.
func (r *recentSpans) lending() (valid uint64, lets bool) {
	if r.n%dedupGen != 0 || r.n < dedupStores*dedupGen {
		return 0, false
	}
	return r.n - (dedupStores-1)*dedupGen + 1, true
}

// repeated reports whether sp equals a recent span, and remembers it (a
// copy: sp need not outlive the call; lent returns the copy).
func (r *recentSpans) repeated(sp *strace.Span) bool {
	h := spanHash(sp)
	b := h & (dedupBuckets - 1)
	tag := uint32(h>>(64-linkTagBits)) | 1
	next := uint32(r.n) // the link of the last span remembered names it by n
	for l, last := r.heads[b], -1; l != 0; {
		// age: spans remembered since the one l names (0: the last one).
		age := int((next - l>>linkTagBits) & linkSeqMask)
		if age >= dedupWindow || age <= last {
			break // out of the window, or not older than the last visited
		}
		last = age
		i := (l>>linkTagBits - 1) % dedupWindow
		if l&linkTagMask == tag {
			if e := &r.ring[i]; e.key == h && sameSpan(&e.span, sp) {
				return true
			}
		}
		l = r.links[i]
	}
	i := r.n % dedupWindow
	st := &r.stores[r.n/dedupGen%dedupStores]
	if r.n%dedupGen == 0 {
		st.reset()
	}
	e := &r.ring[i]
	e.key, e.span = h, *sp
	e.span.Attrs = st.keep(sp.Attrs) // in place: the span is not copied twice
	r.links[i] = r.heads[b]
	r.n++
	r.heads[b] = uint32(r.n)<<linkTagBits | tag
	return false
}

// sameSpan reports whether two spans are equal in every field (a number's
// text is not compared: its value says the same, and a kept span drops it).
func sameSpan(a, b *strace.Span) bool {
	if a.Pid != b.Pid || a.Tid != b.Tid || a.Inv != b.Inv || a.Hid != b.Hid || a.Depth != b.Depth || a.Name != b.Name ||
		a.TS != b.TS || a.Dur != b.Dur || a.NameTruncated != b.NameTruncated || a.AttrsTruncated != b.AttrsTruncated || len(a.Attrs) != len(b.Attrs) {
		return false
	}
	for i := range a.Attrs {
		x, y := &a.Attrs[i], &b.Attrs[i]
		if x.Key != y.Key || x.Type != y.Type || x.Bare != y.Bare || x.Truncated != y.Truncated || x.MaybeCut != y.MaybeCut {
			return false
		}
		if x.Type == strace.TypeString && x.Value != y.Value || x.Int != y.Int || x.Uint != y.Uint {
			return false
		}
	}
	return true
}
