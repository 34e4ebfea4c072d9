package phasetrace

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phasetrace/phasetrace/internal/counters"
	"github.com/phasetrace/phasetrace/strace/stracetest"
)

// counterList is the README's list of the counter tracks, made from
// counters.Table.
func counterList() string {
	var b strings.Builder
	b.WriteString("| counter track | one per | what it shows |\n| --- | --- | --- |\n")
	for k := range counters.Kind(len(counters.Table)) {
		r := &counters.Table[k]
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", k.DocName(), r.Per, r.Doc)
	}
	return b.String()
}

// TestCounterDocs checks that every counter track is named and described,
// that the README's list of them is counters.Table's (go test -update
// rewrites it), and that no other document names them: they point to the
// README's list instead, so that none goes stale.
func TestCounterDocs(t *testing.T) {
	names := map[string]counters.Kind{}
	for k := range counters.Kind(len(counters.Table)) {
		r := &counters.Table[k]
		if r.Prefix == "" || r.Per == "" || r.Doc == "" || r.Suffix != "" && r.Slot == "" {
			t.Errorf("counter %d: %+v: want a name (a suffix only after a value), what one track is per and what it shows", k, *r)
		}
		if o, dup := names[k.DocName()]; dup {
			t.Errorf("counters %d and %d are both %q", o, k, k.DocName())
		}
		names[k.DocName()] = k
	}
	// Each name as a document quotes it, or the fixed part before (of more
	// than one word) or after its value.
	quoted := make([][]string, len(counters.Table))
	for k := range counters.Kind(len(counters.Table)) {
		r := &counters.Table[k]
		for _, q := range []string{"`", `"`} {
			quoted[k] = append(quoted[k], q+k.DocName()+q)
			if r.Slot != "" && len(strings.Fields(r.Prefix)) > 1 {
				quoted[k] = append(quoted[k], q+r.Prefix)
			}
			if r.Suffix != "" {
				quoted[k] = append(quoted[k], r.Suffix+q)
			}
		}
	}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") && path != "." {
				return filepath.SkipDir
			}
			return nil
		}
		doc := strings.HasSuffix(path, ".md") || filepath.Base(path) == "doc.go" ||
			strings.HasPrefix(path, "examples"+string(filepath.Separator)) && filepath.Base(path) == "main.go" ||
			filepath.Dir(path) == "." && strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go")
		if !doc {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		text := string(b)
		if path == "README.md" {
			begin, end := strings.Index(text, "<!-- begin counters -->"), strings.Index(text, "<!-- end counters -->")
			if begin >= 0 && end > begin {
				text = text[:begin] + text[end:]
			}
		}
		text = strings.Join(strings.Fields(strings.ReplaceAll(text, "//", " ")), " ")
		for k, qs := range quoted {
			for _, q := range qs {
				if strings.Contains(text, q) {
					t.Errorf("%s names the counter track %q (as %s): point to the README's list (counters.Table) instead", path, counters.Kind(k).DocName(), q)
					break
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	stracetest.GoldenSection(t, "README.md", "counters", counterList())
}
