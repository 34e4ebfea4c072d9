//go:build !unix

package main

import (
	"os"
	"syscall"
)

// terminating are the signals that end the process on this platform
// (Ctrl-C, Ctrl-Break, the console closed, a shutdown).
var terminating = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

// ignoreBrokenPipe: no SIGPIPE here.
func ignoreBrokenPipe() {}
