package strace

import (
	"bytes"
	"io"
	"os"
	"testing"
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
