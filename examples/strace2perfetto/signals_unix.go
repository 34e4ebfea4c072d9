//go:build unix

package main

import (
	"os"
	"syscall"
)

// terminating are the signals whose default action ends the process and
// that a process can catch: the command catches them all, so that whichever
// ends it (Ctrl-C, kill, a closed terminal, Ctrl-\, a reader of its output
// gone, a CPU or file size limit) leaves no partial file behind.
var terminating = []os.Signal{
	syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT,
	syscall.SIGPIPE, syscall.SIGXCPU, syscall.SIGXFSZ,
	syscall.SIGALRM, syscall.SIGVTALRM, syscall.SIGUSR1, syscall.SIGUSR2,
}
