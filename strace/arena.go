package strace

import "unsafe"

// arena hands out strings carved from large byte chunks, so a record's names
// and values cost no allocation of their own. They are views made with
// unsafe.String; TestArenaAsPlainStrings checks them against string(b).
// Plain conversions instead cost 1.7 allocations more per span and 6 % of a
// conversion (median of 24 interleaved pairs, 623 → 681 ms, of
// go test -run XXX -bench 'ConvertFile$' -benchtime 1x -benchfile F . on a
// log of 100 MB from TestGenerateLog).
//
// By default a byte of a chunk is written once, before the string over it is
// made, and never again: the strings are immutable and stay valid after the
// reader moves on. A kept string keeps its whole chunk alive.
//
// A recycling arena (reuse set) keeps its chunks instead: rewind makes them
// free again, and the strings carved from them before become invalid. It
// then costs no allocation once its chunks hold what is carved between two
// rewinds (a string longer than a chunk gets a chunk of its own, kept too).
type arena struct {
	buf []byte

	reuse  bool
	blocks blockList[byte] // when reusing: its chunks
}

const (
	arenaChunk = 32 << 10
	arenaLarge = arenaChunk / 8 // longer strings get their own allocation (unless reusing)
)

// reserve makes room for n more bytes in the current chunk.
func (a *arena) reserve(n int) bool {
	if a.reuse {
		if cap(a.buf)-len(a.buf) < n {
			a.advance(n)
		}
		return true
	}
	if n > arenaLarge {
		return false
	}
	if cap(a.buf)-len(a.buf) < n {
		a.buf = make([]byte, 0, arenaChunk)
	}
	return true
}

// advance moves a reusing arena to its next chunk with room for n bytes.
func (a *arena) advance(n int) { a.buf = a.blocks.take(n, max(arenaChunk, n)) }

// rewind makes the arena reuse its chunks from the first: every string it
// handed out before is invalid. Under the race detector the chunks are
// poisoned, so that a string kept too long reads as garbage. An arena that
// did not reuse its chunks does from then on.
func (a *arena) rewind() {
	a.reuse = true
	a.blocks.rewind(poisonByte)
	a.buf = nil
}

// blockList is the blocks of a reusing arena, filled in turn and again
// after each rewind.
type blockList[T any] struct {
	blocks [][]T
	next   int // the next of blocks to fill
}

// take returns, empty, the next block with room for n, skipping smaller
// ones; past the last, a new block of capacity size (at least n).
func (l *blockList[T]) take(n, size int) []T {
	for l.next < len(l.blocks) {
		b := l.blocks[l.next]
		l.next++
		if cap(b) >= n {
			return b[:0]
		}
	}
	b := make([]T, 0, size)
	l.blocks = append(l.blocks, b)
	l.next = len(l.blocks)
	return b
}

// rewind makes take start again from the first block. Under the race
// detector every element of the blocks, up to their capacity, is
// overwritten with v first, so that what they held reads as garbage.
func (l *blockList[T]) rewind(v T) {
	if poison {
		for _, b := range l.blocks {
			b = b[:cap(b)]
			for i := range b {
				b[i] = v
			}
		}
	}
	l.next = 0
}

// str returns b as a string.
func (a *arena) str(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if !a.reserve(len(b)) {
		return string(b)
	}
	start := len(a.buf)
	a.buf = append(a.buf, b...) // within capacity: never moves the chunk
	return unsafe.String(&a.buf[start], len(b))
}

// decoded returns b with its %XX escapes decoded.
func (a *arena) decoded(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if !a.reserve(len(b)) {
		return string(appendDecoded(make([]byte, 0, len(b)), b))
	}
	start := len(a.buf)
	a.buf = appendDecoded(a.buf, b) // decoding never grows the text: stays within capacity
	n := len(a.buf) - start
	if n == 0 {
		return ""
	}
	return unsafe.String(&a.buf[start], n)
}

// poisonByte is what recycled string memory is overwritten with under the
// race detector: never valid UTF-8, never a byte of the grammar.
const poisonByte = 0xFF
