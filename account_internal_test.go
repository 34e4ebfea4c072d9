package phasetrace

import "testing"
import "github.com/phasetrace/phasetrace/internal/held"

// A slice's Ref gives back where it was read and what it is, whatever the
// position; a span's Ref is its position.
func TestSliceRefs(t *testing.T) {
	l := newAccount(&Summary{})
	at := held.PosAt(l.file("a.log"), 1<<47+5)
	if got := l.sliceRef("", at); got != uint64(at) {
		t.Errorf("a span's Ref is %#x, want its position %#x", got, uint64(at))
	}
	for _, what := range []string{"", "bind phase lines", "derived Effective windows", "bind phase lines", "a", "b", "c", "d", "e", "f"} {
		gotWhat, gotAt := l.fromSliceRef(l.sliceRef(what, at))
		want := what
		if what == "f" { // the eighth kind of other slice, past the table: the last one's name
			want = "e"
		}
		if gotWhat != want || gotAt != at {
			t.Errorf("%q: back as %q at %s", what, gotWhat, l.fileLine(gotAt))
		}
	}
}
