package phasetrace

import (
	"unsafe"

	"github.com/phasetrace/phasetrace/strace"
)

// hold appends a copy of sp read at at to spans, its attributes kept in st
// (nil: sp's own, shared), built in its place.
func hold(spans []heldSpan, sp *strace.Span, at linePos, st *spanStore) []heldSpan {
	n := len(spans)
	if n == cap(spans) {
		spans = append(spans, heldSpan{})
	}
	spans = spans[:n+1]
	h := &spans[n]
	h.Span, h.at = *sp, at
	if st != nil {
		h.Attrs = st.keep(sp.Attrs)
	}
	return spans
}

// The second pass reads its records from a Merger that recycles their
// memory (strace.WithRecycledMemory): a record's attributes and its
// non-canonical strings are valid only until the next Read. What the
// converter keeps longer — the recent spans' recent spans, node spans
// in the hand-offs, bind phase lines waiting for their bind — it copies
// into a spanStore of the holder's own, which the holder reuses once it
// has let go of what the store held. A run's spans, waiting for their
// root, are the recent spans' copies, shared (recentSpans.admit): a run
// copies them into a store of its own only before the ring lets go of
// them (runCollector.copyOut). The canonical strings (names, keys, short text
// values) are shared: they stay valid for good, and the trace writer may
// remember them by address.

// spanStore holds copies of kept spans' attributes and the text of their
// long values. A kept number drops its text (its Value is ""): the reader
// types only canonical decimal text as a number, so Int or Uint says all
// the text did, and nothing drawn reads it. Its memory is reused after
// reset, so a copy is valid until the holder resets the store; growing it
// never moves what it holds (a full buffer is replaced, not copied).
type spanStore struct {
	attrs []strace.Attr
	text  []byte
}

// keep returns a copy of attrs that is valid until the next reset.
func (s *spanStore) keep(attrs []strace.Attr) []strace.Attr {
	if len(attrs) == 0 {
		return nil
	}
	if cap(s.attrs)-len(s.attrs) < len(attrs) {
		s.attrs = make([]strace.Attr, 0, max(2*cap(s.attrs), len(attrs)))
	}
	n := len(s.attrs)
	s.attrs = append(s.attrs, attrs...)
	kept := s.attrs[n:len(s.attrs):len(s.attrs)]
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

// str returns a copy of v valid until the next reset.
func (s *spanStore) str(v string) string {
	if cap(s.text)-len(s.text) < len(v) {
		s.text = make([]byte, 0, max(2*cap(s.text), len(v), 32))
	}
	n := len(s.text)
	s.text = append(s.text, v...)
	return unsafe.String(&s.text[n], len(v))
}

// reset lets go of everything kept: the memory serves the next copies.
func (s *spanStore) reset() {
	s.attrs = s.attrs[:0]
	s.text = s.text[:0]
}

// heldSpan is a span waiting to be drawn, with where it was read.
type heldSpan struct {
	strace.Span
	at linePos
}
