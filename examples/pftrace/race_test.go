//go:build race

package main

// raceEnabled: the race detector is on (it makes inflating 256 MiB take minutes).
const raceEnabled = true
