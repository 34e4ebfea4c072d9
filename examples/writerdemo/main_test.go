package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/phasetrace/phasetrace/perfetto/check"
)

// demoTrace runs the demo and reads its trace back.
func demoTrace(t *testing.T) ([]byte, *check.Trace) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "demo.pftrace")
	if err := run(out, false); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := check.ReadBytes(b)
	if err != nil {
		t.Fatal(err)
	}
	return b, tr
}

func TestWriterDemo(t *testing.T) {
	t.Parallel()
	_, tr := demoTrace(t)
	if err := tr.Err(); err != nil {
		t.Fatal(err)
	}
	// Every feature is in the file: tracks of each kind, slices, an
	// instant, flows, counters and wall time.
	kinds := map[string]int{}
	for _, tk := range tr.Tracks {
		kinds[tk.Kind]++
	}
	instants := 0
	for _, s := range tr.Slices {
		if s.Instant {
			instants++
		}
	}
	if kinds["process"] != 2 || kinds["thread"] != 3 || kinds["track"] < 3 || kinds["counter"] != 2 ||
		instants != 1 || len(tr.Flows) != 1 || len(tr.Counters) != 3 || len(tr.Wall) != 2 { // the pair, and the first snapshot's extrapolation
		t.Errorf("tracks %v, %d instants, %d flows, %d counter values, %d wall snapshots", kinds, instants, len(tr.Flows), len(tr.Counters), len(tr.Wall))
	}
}
