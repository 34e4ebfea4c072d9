package strace

import (
	"bytes"
	"io"
	"os"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func openFile(t testing.TB, path string) io.Reader {
	return bytes.NewReader(readFile(t, path))
}

// quickDiff is cmp.Diff(want, got, opts...) for values that are usually
// equal: it tells equal values apart with reflect.DeepEqual first, since
// cmp.Diff walks a large value slowly, and calls cmp.Diff only to explain
// a difference (or to find values equal under opts).
func quickDiff(want, got any, opts ...cmp.Option) string {
	if reflect.DeepEqual(want, got) {
		return ""
	}
	return cmp.Diff(want, got, opts...)
}
