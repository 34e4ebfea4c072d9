// Package cli holds what phasetrace's commands share: their exit-code
// convention, their command-line parsing, whether standard input is a
// terminal and how a path is quoted in a command they print.
package cli

import (
	"flag"
	"strings"
)

// The exit codes of every command.
const (
	ExitOK     = 0 // done
	ExitFail   = 1 // failure: I/O, unreadable or empty input, interrupted, a failed proof or check
	ExitUsage  = 2 // bad command, flags or flag values
	ExitStrict = 3 // -strict: done, but something was lost
)

// ParseAnywhere parses fs's flags wherever they are among args: parsing
// resumes after each positional argument, and -- ends the flags. It
// returns the positional arguments.
func ParseAnywhere(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if n := len(args) - len(rest); len(rest) == 0 || n > 0 && args[n-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// ShellQuote quotes s for a POSIX shell where it needs it, so that a
// command a command prints can be pasted as it is.
func ShellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./-+=:,@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
