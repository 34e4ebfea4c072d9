package stracetest

import (
	"flag"
	"os"
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
