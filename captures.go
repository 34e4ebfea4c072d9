package phasetrace

import (
	"hash/maphash"
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
//     dedupWindow spans is counted as a duplicate and not drawn again.
//
// Repeats that are neither (a capture that overlaps an earlier one only in
// part, a record repeated far apart) are drawn; where they cannot nest on
// their track they are moved to an overflow lane and counted there.

// capture is a run of a log's lines whose write time never runs backwards
// by more than hostGap.
type capture struct {
	first, last int64 // physical lines, 1-based, inclusive
	bytes       int64
	sum         [2]uint64
}

// captureCutter cuts a log into captures as its lines go by.
type captureCutter struct {
	seeds   [2]maphash.Seed
	h       [2]maphash.Hash
	line    int64 // the physical line being read, 1-based
	atStart bool  // the next byte starts a line
	maxMono int64
	hasMono bool
	cur     capture
	caps    []capture
}

func newCaptureCutter(seeds [2]maphash.Seed) *captureCutter {
	c := &captureCutter{seeds: seeds, line: 1, atStart: true}
	c.h[0].SetSeed(seeds[0])
	c.h[1].SetSeed(seeds[1])
	c.cur.first = 1
	return c
}

var monoMark = []byte("[mono_ns=")

// feed takes the next piece of the log: a whole line, or part of a long
// one. It returns the physical line the piece belongs to.
func (c *captureCutter) feed(piece []byte) int64 {
	line := c.line
	if c.atStart {
		if mono, ok := prefixMono(piece); ok {
			if c.hasMono && mono < c.maxMono-hostGap {
				c.cut()
				c.cur.first = line
				c.maxMono = mono // the new capture's own time
			}
			if !c.hasMono || mono > c.maxMono {
				c.maxMono, c.hasMono = mono, true
			}
		}
	}
	c.h[0].Write(piece)
	c.h[1].Write(piece)
	c.cur.bytes += int64(len(piece))
	c.atStart = len(piece) > 0 && piece[len(piece)-1] == '\n'
	if c.atStart {
		c.line++
	}
	return line
}

// cut closes the current capture.
func (c *captureCutter) cut() {
	if c.cur.bytes == 0 {
		return
	}
	c.cur.last = c.line - 1
	if !c.atStart {
		c.cur.last = c.line
	}
	c.cur.sum = [2]uint64{c.h[0].Sum64(), c.h[1].Sum64()}
	c.caps = append(c.caps, c.cur)
	c.cur = capture{}
	c.h[0].Reset()
	c.h[1].Reset()
}

// finish closes the last capture and returns them all.
func (c *captureCutter) finish() []capture {
	c.cut()
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
	type key struct {
		bytes int64
		sum   [2]uint64
	}
	seen := map[key]string{}
	out := make([][]repeat, len(caps))
	found := false
	for i, cs := range caps {
		for _, c := range cs {
			k := key{c.bytes, c.sum}
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
const dedupWindow = 1 << 16

// recentSpans remembers the last dedupWindow spans by a 128-bit hash of
// every field.
type recentSpans struct {
	seeds [2]maphash.Seed
	seen  map[[2]uint64]struct{}
	ring  [][2]uint64
	next  int
	buf   []byte
}

func newRecentSpans(seeds [2]maphash.Seed) *recentSpans {
	return &recentSpans{seeds: seeds, seen: map[[2]uint64]struct{}{}}
}

// repeated reports whether sp equals a recent span, and remembers it.
func (r *recentSpans) repeated(sp *strace.Span) bool {
	b := r.buf[:0]
	b = strconv.AppendInt(b, int64(sp.Pid), 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, sp.Tid, 10)
	b = append(b, ' ')
	b = strconv.AppendUint(b, sp.Inv, 16)
	b = append(b, ' ')
	b = strconv.AppendUint(b, sp.Hid, 16)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(sp.Depth), 10)
	b = append(b, ' ')
	b = append(b, sp.Name...)
	b = append(b, ' ')
	b = strconv.AppendInt(b, sp.TS, 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, sp.Dur, 10)
	for _, a := range sp.Attrs {
		b = append(b, 0)
		b = append(b, a.Key...)
		b = append(b, 0)
		b = append(b, a.Value...)
		if a.Bare {
			b = append(b, 1)
		}
	}
	if sp.NameTruncated || sp.AttrsTruncated {
		b = append(b, 2)
	}
	r.buf = b
	k := [2]uint64{maphash.Bytes(r.seeds[0], b), maphash.Bytes(r.seeds[1], b)}
	if _, ok := r.seen[k]; ok {
		return true
	}
	if len(r.ring) < dedupWindow {
		r.ring = append(r.ring, k)
	} else {
		delete(r.seen, r.ring[r.next])
		r.ring[r.next] = k
		r.next = (r.next + 1) % dedupWindow
	}
	r.seen[k] = struct{}{}
	return false
}
