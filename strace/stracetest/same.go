package stracetest

import "github.com/phasetrace/phasetrace/strace"

// SameSpan reports whether two spans are equal in every field (a number's
// text is not compared: its value says the same, and a kept span drops it).
func SameSpan(a, b *strace.Span) bool {
	if a.Pid != b.Pid || a.Tid != b.Tid || a.Inv != b.Inv || a.Hid != b.Hid || a.Depth != b.Depth || a.Name != b.Name ||
		a.TS != b.TS || a.Dur != b.Dur || a.NameTruncated != b.NameTruncated || a.AttrsTruncated != b.AttrsTruncated || len(a.Attrs) != len(b.Attrs) {
		return false
	}
	for i := range a.Attrs {
		x, y := &a.Attrs[i], &b.Attrs[i]
		if x.Key != y.Key || x.Type != y.Type || x.Bare != y.Bare || x.Truncated != y.Truncated {
			return false
		}
		if x.Type == strace.TypeString && x.Value != y.Value || x.Int != y.Int || x.Uint != y.Uint {
			return false
		}
	}
	return true
}
