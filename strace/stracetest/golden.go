package stracetest

import (
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files and generated test data")

// Updating reports whether the test binary was run with -update: golden
// files and other generated test data are to be rewritten, not compared.
func Updating() bool { return *update }

// Golden compares got with the golden file at path. With -update it
// rewrites the file instead. On a mismatch the new output is kept beside
// it, as path+".got", and the test fails with the difference.
func Golden(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		_ = os.WriteFile(path+".got", got, 0o644)
		t.Errorf("%s differs (-want +got), new output kept in %s.got:\n%s", path, path, diff)
	}
}

// GoldenSection compares got with the part of the file at path between the
// lines <!-- begin NAME --> and <!-- end NAME -->; with -update it
// rewrites that part instead. A document's generated table is kept
// current this way.
func GoldenSection(t testing.TB, path, name string, got string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	begin, end := "<!-- begin "+name+" -->\n", "<!-- end "+name+" -->"
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	if i < 0 || j < i {
		t.Fatalf("%s has no %q … %q section", path, strings.TrimSpace(begin), end)
	}
	want := doc[i+len(begin) : j]
	if *update {
		if err := os.WriteFile(path, []byte(doc[:i+len(begin)]+got+doc[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s: section %s is not current (go test -update rewrites it) (-want +got):\n%s", path, name, diff)
	}
}
