//go:build !race

package phasetrace_test

const raceEnabled = false
