//go:build race

package strace

// poison is set under the race detector: memory a reader or a Merger
// recycles is overwritten before it is used again, so that a test keeping
// a string or an attribute past its validity reads garbage.
const poison = true
