package cli

import (
	"flag"
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseAnywhere(t *testing.T) {
	t.Parallel()
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

// TestShellQuote: a word a shell takes as it is stays bare; anything else
// is quoted so that the shell gives back exactly s.
func TestShellQuote(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]string{
		"run.part001.pftrace": "run.part001.pftrace",
		"/tmp/a b.log":        "'/tmp/a b.log'",
		"it's":                `'it'\''s'`,
		"":                    "''",
		"$HOME":               "'$HOME'",
	} {
		if got := ShellQuote(s); got != want {
			t.Errorf("ShellQuote(%q) = %s, want %s", s, got, want)
		}
	}
}
