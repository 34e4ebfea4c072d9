package strace

import (
	"bytes"
	"strings"
	"testing"
)

// The arena's strings read as the plain conversions: str(b) is string(b)
// and decoded(b) is string(appendDecoded(nil, b)), for empty, short,
// escaped, malformed-escape and long texts (past arenaLarge, past a
// chunk), carved from a buffer that is overwritten right after, as the
// reader's line buffer is. Every string handed out stays unchanged while
// more are carved: for good by default, until the rewind in a recycling
// arena.
func TestArenaAsPlainStrings(t *testing.T) {
	t.Parallel()
	texts := []string{
		"", "a", "chip.run.bind", "%41%42", "%2", "%zz%", "%25%25", "100%",
		strings.Repeat("x", arenaLarge), strings.Repeat("y", arenaLarge+1),
		strings.Repeat("%41", arenaChunk/3+1), strings.Repeat("z", arenaChunk+5),
	}
	for _, reuse := range []bool{false, true} {
		var a arena
		if reuse {
			a.rewind()
		}
		var got, want []string
		for round := range 3 {
			for i := range 50 {
				text := texts[i%len(texts)]
				buf := []byte(text)
				got = append(got, a.str(buf), a.decoded(buf))
				want = append(want, text, string(appendDecoded(nil, []byte(text))))
				clear(buf)
			}
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("reuse %t, round %d: string %d reads %.40q, want %.40q", reuse, round, i, got[i], want[i])
				}
			}
			if reuse {
				a.rewind()
				got, want = got[:0], want[:0]
			}
		}
	}
	if s := new(arena).str(nil); s != "" {
		t.Errorf("str(nil) = %q", s)
	}
	if s := new(arena).decoded(bytes.Clone([]byte{})); s != "" {
		t.Errorf("decoded of nothing = %q", s)
	}
}

// The span filter is asked about the name as the plain conversion of its
// decoded bytes reads: empty, plain, escaped, malformed escapes, and a
// name longer than a chunk of the arena.
func TestSpanFilterNameAsPlain(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"", "a", "chip.run.bind", "ext.p%2Eq.s", "%41%42%43", "%2", "%zz", strings.Repeat("n%2E", arenaChunk/4)} {
		var asked []string
		r := NewBytesReader(nil, WithSpanFilter(func(depth int32, name string) bool {
			asked = append(asked, strings.Clone(name))
			return true
		}))
		b := []byte(name)
		r.keepSpan(b, 1)
		if want := string(appendDecoded(nil, []byte(name))); len(asked) != 1 || asked[0] != want {
			t.Errorf("%.40q: filter asked about %.40q, want %.40q", name, asked, want)
		}
	}
}
