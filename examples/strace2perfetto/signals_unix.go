//go:build unix

package main

import (
	"os"
	"os/signal"
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

// brokenPipes takes the SIGPIPEs after the command stopped treating
// signals as interruptions; it is never read (signals past its one slot
// are dropped).
var brokenPipes = make(chan os.Signal, 1)

// ignoreBrokenPipe makes a write to a pipe whose reader is gone fail with
// EPIPE instead of ending the process with SIGPIPE: a SIGPIPE the program
// is notified of does not end it.
func ignoreBrokenPipe() { signal.Notify(brokenPipes, syscall.SIGPIPE) }
