package strace

import "unsafe"

// arena hands out strings carved from large byte chunks, so a record's names
// and values cost no allocation of their own. A byte of a chunk is written
// once, before the string over it is made, and never again: the strings are
// immutable and stay valid after the reader moves on. A kept string keeps its
// whole chunk alive.
type arena struct {
	buf []byte
}

const (
	arenaChunk = 32 << 10
	arenaLarge = arenaChunk / 8 // longer strings get their own allocation
)

// reserve makes room for n more bytes in the current chunk.
func (a *arena) reserve(n int) bool {
	if n > arenaLarge {
		return false
	}
	if cap(a.buf)-len(a.buf) < n {
		a.buf = make([]byte, 0, arenaChunk)
	}
	return true
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
