//go:build race

package check_test

// raceEnabled: the race detector is on (it makes TestReaderMemoryFlat take minutes).
const raceEnabled = true
