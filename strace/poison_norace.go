//go:build !race

package strace

// poison is set under the race detector only (see poison_race.go).
const poison = false

const mergeBatchLen = 256
