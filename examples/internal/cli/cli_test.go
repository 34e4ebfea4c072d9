package cli

import (
	"flag"
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseAnywhere(t *testing.T) {
	for _, c := range []struct {
		args []string
		pos  []string
		o    string
	}{
		{[]string{"a.log", "-o", "x", "b.log"}, []string{"a.log", "b.log"}, "x"},
		{[]string{"-o", "x", "a.log"}, []string{"a.log"}, "x"},
		{[]string{"a.log", "--", "-o", "x"}, []string{"a.log", "-o", "x"}, ""},
		{nil, nil, ""},
	} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		o := fs.String("o", "", "")
		pos, err := ParseAnywhere(fs, c.args)
		if err != nil || !cmp.Equal(pos, c.pos) || *o != c.o {
			t.Errorf("%q: %q %q %v, want %q %q", c.args, pos, *o, err, c.pos, c.o)
		}
	}
}
