package phasetrace_test

import (
	"bytes"
	"os"
	"testing"

	"github.com/phasetrace/phasetrace/strace/stracetest"
)

// sampleConfig is the real-shaped sample examples/strace2perfetto converts
// when it is given no log: an L3 parent and two chip ranks (a2a3 at 50 MHz,
// pipelined; a5 at 1 GHz, with legacy bind lines) with device phases, clock
// anchors every 100 ms, hand-offs, bind segments, an external producer and
// the quirks real logs have.
var sampleConfig = genConfig{Seed: 7, Rounds: 12, AnchorEvry: 100_000_000, Pipelined: true, Legacy: true, Ext: true, Damage: stracetest.Damage{Quirks: true}}

const samplePath = "examples/strace2perfetto/sample.log"

func TestSampleIsCurrent(t *testing.T) {
	got := generated(sampleConfig)
	if stracetest.Updating() {
		if err := os.WriteFile(samplePath, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(samplePath)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is stale: run go test -run TestSampleIsCurrent -update", samplePath)
	}
}
