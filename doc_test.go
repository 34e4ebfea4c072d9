package phasetrace_test

import (
	"go/ast"
	"go/doc"
	"go/doc/comment"
	"go/parser"
	"go/token"
	"strings"
	"testing"
	"unicode"
)

// The package doc is an overview: what the package does, its front door
// and its model. The rules live on the types they govern, and how the
// stages fit is in DESIGN.md.
const (
	maxDocWords         = 600
	maxWordsPerSentence = 25
)

// TestPackageDocIsAnOverview checks that doc.go's package comment stays
// short: at most maxDocWords words of prose, and at most
// maxWordsPerSentence words a sentence on average. Code blocks are not
// prose; a heading and a list item without a full stop are a sentence
// each.
func TestPackageDocIsAnOverview(t *testing.T) {
	words, sentences, longest := docProse(t, "doc.go")
	if sentences == 0 {
		t.Fatal("doc.go has no package comment")
	}
	avg := float64(words) / float64(sentences)
	t.Logf("doc.go: %d words, %d sentences, %.1f words a sentence; the longest: %q", words, sentences, avg, longest)
	if words > maxDocWords {
		t.Errorf("the package doc has %d words, want at most %d: move rules onto the types they govern, design notes into DESIGN.md", words, maxDocWords)
	}
	if avg > maxWordsPerSentence {
		t.Errorf("the package doc has %.1f words a sentence, want at most %d", avg, maxWordsPerSentence)
	}
}

// docProse counts the words and sentences of the package comment of file
// as go doc shows it, and returns its longest sentence.
func docProse(t *testing.T, file string) (words, sentences int, longest string) {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, nil, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		t.Fatal(err)
	}
	pkg, err := doc.NewFromFiles(fset, []*ast.File{f}, "github.com/phasetrace/phasetrace")
	if err != nil {
		t.Fatal(err)
	}
	most := 0
	count := func(text string) {
		for _, s := range splitSentences(text) {
			n := countWords(s)
			if n == 0 {
				continue
			}
			words += n
			sentences++
			if n > most {
				most, longest = n, s
			}
		}
	}
	for _, b := range pkg.Parser().Parse(pkg.Doc).Content {
		switch b := b.(type) {
		case *comment.Heading:
			count(plain(b.Text))
		case *comment.Paragraph:
			count(plain(b.Text))
		case *comment.List:
			for _, it := range b.Items {
				for _, c := range it.Content {
					if p, ok := c.(*comment.Paragraph); ok {
						count(plain(p.Text))
					}
				}
			}
		}
	}
	return words, sentences, longest
}

// plain is the text of a comment's inline elements.
func plain(text []comment.Text) string {
	var b strings.Builder
	for _, x := range text {
		switch x := x.(type) {
		case comment.Plain:
			b.WriteString(string(x))
		case comment.Italic:
			b.WriteString(string(x))
		case *comment.Link:
			b.WriteString(plain(x.Text))
		case *comment.DocLink:
			b.WriteString(plain(x.Text))
		}
	}
	return b.String()
}

// splitSentences cuts text after each '.', '?' or '!' followed by a space
// or the end: "chip.run" and "0.5" stay whole.
func splitSentences(text string) []string {
	text = strings.Join(strings.Fields(text), " ")
	var out []string
	start := 0
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '.', '?', '!':
			if i+1 == len(text) || text[i+1] == ' ' {
				out = append(out, text[start:i+1])
				start = i + 1
			}
		}
	}
	if rest := strings.TrimSpace(text[start:]); rest != "" {
		out = append(out, rest)
	}
	return out
}

// countWords counts the fields of s that hold a letter or a digit: "—"
// and "→" are not words.
func countWords(s string) int {
	n := 0
	for _, w := range strings.Fields(s) {
		if strings.IndexFunc(w, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) >= 0 {
			n++
		}
	}
	return n
}
