package held

import (
	"unsafe"

	"github.com/phasetrace/phasetrace/strace"
)

// Hold appends a copy of sp read at at to spans, its attributes kept in st
// (nil: sp's own, shared), built in its place.
func Hold(spans []Span, sp *strace.Span, at Pos, st *Store) []Span {
	n := len(spans)
	if n == cap(spans) {
		spans = append(spans, Span{})
	}
	spans = spans[:n+1]
	h := &spans[n]
	h.Span, h.At = *sp, at
	if st != nil {
		h.Attrs = st.Keep(sp.Attrs)
	}
	return spans
}

// A Store holds copies of kept spans' attributes and the text of their
// long values. A kept number drops its text (its Value is ""): the reader
// types only canonical decimal text as a number, so Int or Uint says all
// the text did, and nothing drawn reads it. Its memory is reused after
// Reset, so a copy is valid until the holder resets the store; growing it
// never moves what it holds (a full buffer is replaced, not copied).
type Store struct {
	Attrs []strace.Attr
	text  []byte
}

// Keep returns a copy of attrs that is valid until the next Reset.
func (s *Store) Keep(attrs []strace.Attr) []strace.Attr {
	if len(attrs) == 0 {
		return nil
	}
	if cap(s.Attrs)-len(s.Attrs) < len(attrs) {
		s.Attrs = make([]strace.Attr, 0, max(2*cap(s.Attrs), len(attrs)))
	}
	n := len(s.Attrs)
	s.Attrs = append(s.Attrs, attrs...)
	kept := s.Attrs[n:len(s.Attrs):len(s.Attrs)]
	for i := range kept {
		switch a := &kept[i]; {
		case a.Type != strace.TypeString:
			a.Value = ""
		case len(a.Value) > strace.CanonicalValueLen:
			a.Value = s.str(a.Value)
		}
	}
	return kept
}

// str returns a copy of v valid until the next Reset.
func (s *Store) str(v string) string {
	if cap(s.text)-len(s.text) < len(v) {
		s.text = make([]byte, 0, max(2*cap(s.text), len(v), 32))
	}
	n := len(s.text)
	s.text = append(s.text, v...)
	return unsafe.String(&s.text[n], len(v))
}

// Reset lets go of everything kept: the memory serves the next copies.
func (s *Store) Reset() {
	s.Attrs = s.Attrs[:0]
	s.text = s.text[:0]
}

// A Span is a span waiting to be drawn, with where it was read.
type Span struct {
	strace.Span
	At Pos
}

// A Pos is a record's position packed in 64 bits: the index of its file
// among the account's and its line. It is also the opaque reference a slice
// carries through the trace writer, so that a slice the writer moves can
// be traced back to its line.
type Pos uint64

// PosAt is the position of line n of file f (an index from file).
func PosAt(f uint64, n int64) Pos { return Pos(f<<48 | uint64(n)&(1<<48-1)) }
