//go:build race

package phasetrace_test

// raceEnabled: the race detector is on. It makes the conversions of
// hundreds of thousands of processes take minutes, and the heap it
// measures is its own as much as the converter's.
const raceEnabled = true
