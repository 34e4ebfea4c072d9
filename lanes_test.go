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
// the gap before the 150 runs its thread drew before it. On a pipelined
// rank the prewarm, a root without a slot_id that overlaps no other run,
// is drawn on its thread's own track and the runs on their slot lanes.
func TestCleanLogNoOverflowLanes(t *testing.T) {
	t.Parallel()
	type tc struct {
		name string
		cfg  genConfig
	}
	var cases []tc
	for _, ranks := range []int{2, 4} {
		for _, seed := range []uint64{1, 2, 3} {
			cfg := genConfig{Seed: seed, Rounds: 150, AnchorEvry: 100_000_000, Legacy: true, Ext: true, Ranks: ranks, Prewarm: true}
			cfg.Pipelined = seed == 3
			cases = append(cases, tc{fmt.Sprintf("ranks=%d/seed=%d/prewarm=%v", ranks, seed, cfg.Prewarm), cfg})
		}
	}
	for _, c := range stracetest.Cases() {
		if c.Name == "all" {
			cfg := c.Config
			cfg.Rounds, cfg.Ranks, cfg.Prewarm = 150, 4, true
			cases = append(cases, tc{"ranks=4/every knob/prewarm=true", cfg})
		}
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
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
