package cli

import (
	"os"
)

// StdinIsTerminal reports whether f, standard input, is a terminal: a
// command given no log reads standard input unless it is one.
func StdinIsTerminal(f *os.File) bool { return isTerminal(f) }
