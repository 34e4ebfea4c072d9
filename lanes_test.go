package phasetrace_test

import (
	"fmt"
	"testing"

	"github.com/phasetrace/phasetrace"
)

// A clean log never puts a slice on an overflow lane, however long ago the
// writer flushed the slices around it: each rank's chip.prewarm.build,
// first in the log and drawn last (its run stays open to the end), lies in
// the gap before the hundreds of runs its thread drew before it.
//
// (A pipelined rank is left out with the prewarm: a root without a
// slot_id keeps its thread from being split into pipeline-slot lanes, so
// its overlapping runs are moved, which the prewarm's lane does not
// decide.)
func TestCleanLogNoOverflowLanes(t *testing.T) {
	for _, ranks := range []int{2, 4} {
		for _, seed := range []uint64{1, 2, 3} {
			cfg := genConfig{Seed: seed, Rounds: 300, AnchorEvry: 100_000_000, Legacy: true, Ext: true, Ranks: ranks, Prewarm: true}
			if seed == 3 {
				cfg.Pipelined, cfg.Prewarm = true, false
			}
			t.Run(fmt.Sprintf("ranks=%d/seed=%d/prewarm=%v", ranks, seed, cfg.Prewarm), func(t *testing.T) {
				tr, sum, _ := convert(t, []phasetrace.Input{phasetrace.Bytes("clean.log", generated(cfg))})
				if len(sum.Moved) != 0 {
					t.Errorf("moved to overflow lanes: %v", sum.Moved)
				}
				prewarm := 0
				for _, s := range tr.Slices {
					if s.Name == "chip.prewarm.build" {
						prewarm++
						if tk, _ := tr.Track(s.Track); s.Depth != 0 || tk.Kind != "thread" {
							t.Errorf("chip.prewarm.build at depth %d on %s %q", s.Depth, tk.Kind, tk.Name)
						}
					}
				}
				if want := map[bool]int{true: ranks}[cfg.Prewarm]; prewarm != want {
					t.Errorf("%d chip.prewarm.build drawn, want %d", prewarm, want)
				}
			})
		}
	}
}
