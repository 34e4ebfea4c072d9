package phasetrace_test

import (
	"fmt"
	"testing"

	"github.com/phasetrace/phasetrace"
	"github.com/phasetrace/phasetrace/strace/stracetest"
)

// A clean log never puts a slice on an overflow lane, however long ago the
// writer flushed the slices around it: each rank's chip.prewarm.build,
// first in the log and drawn last (its run stays open to the end), lies in
// the gap before the 150 runs its thread drew before it.
//
// (A pipelined rank is left out with the prewarm: a root without a
// slot_id keeps its thread from being split into pipeline-slot lanes, so
// its overlapping runs conflict on one track, which is the converter's
// lane split to decide, not the writer's memory.)
func TestCleanLogNoOverflowLanes(t *testing.T) {
	type tc struct {
		name string
		cfg  genConfig
	}
	var cases []tc
	for _, ranks := range []int{2, 4} {
		for _, seed := range []uint64{1, 2, 3} {
			cfg := genConfig{Seed: seed, Rounds: 150, AnchorEvry: 100_000_000, Legacy: true, Ext: true, Ranks: ranks, Prewarm: true}
			if seed == 3 {
				cfg.Pipelined, cfg.Prewarm = true, false
			}
			cases = append(cases, tc{fmt.Sprintf("ranks=%d/seed=%d/prewarm=%v", ranks, seed, cfg.Prewarm), cfg})
		}
	}
	for _, c := range stracetest.Cases() {
		if c.Name == "all" {
			cfg := c.Config
			cfg.Rounds, cfg.Ranks, cfg.Prewarm, cfg.Pipelined = 150, 4, true, false
			cases = append(cases, tc{"ranks=4/every knob but pipelining/prewarm=true", cfg})
		}
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr, sum, _ := convert(t, []phasetrace.Input{phasetrace.Bytes("clean.log", generated(c.cfg))})
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
			ranks := max(c.cfg.Ranks, 2)
			if want := map[bool]int{true: ranks}[c.cfg.Prewarm]; prewarm != want {
				t.Errorf("%d chip.prewarm.build drawn, want %d", prewarm, want)
			}
		})
	}
}
