package cli

import (
	"os"
	"path/filepath"
	"testing"
)

// Neither a regular file nor the null device (a character device) is a
// terminal.
func TestStdinIsTerminal(t *testing.T) {
	t.Parallel()
	f, err := os.Create(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if StdinIsTerminal(f) {
		t.Error("a regular file is a terminal")
	}
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Skip(err)
	}
	defer null.Close()
	if StdinIsTerminal(null) {
		t.Errorf("%s is a terminal", os.DevNull)
	}
}
