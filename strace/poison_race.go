//go:build race

package strace

// poison is set under the race detector: memory a reader or a Merger
// recycles is overwritten before it is used again, so that a test keeping
// a string or an attribute past its validity reads garbage. A Merger then
// hands over its records a few at a time, so that even a short log's
// batches are recycled, and poisons a batch as soon as Read has moved past
// it.
const poison = true

const mergeBatchLen = 4
