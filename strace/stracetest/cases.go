package stracetest

import "math"

// The wall clocks and the device phase of the cases "wall_ns" and
// "impossible_phase": the L3 parent's anchor absurd, rank 1's a clock 24
// years off, and a phase 11 days past its run's origin.
var (
	badWall      = []int64{math.MinInt64, 0, 1_000_000_000_000_000_000}
	impossibleTS = int64(1_000_000_000_000_000)
)

// Case is a generated log made to hold one case real logs can hold.
type Case struct {
	Name   string
	Config Config
	Log    []byte
}

// Cases returns small generated logs: one without any knob ("base"), one
// per knob of Config, and one with every knob ("all"). A test can iterate
// over them to see every case at least once.
func Cases() []Case {
	base := Config{Seed: 17, Rounds: 8, AnchorEvry: 100_000_000}
	all := base
	all.Rounds = 48
	all.Pipelined, all.Legacy, all.Ext, all.Quirks = true, true, true, true
	all.RuntimeNs, all.HostExact, all.HostParentsFirst, all.DeviceChildrenFirst = true, true, true, true
	all.SparseAnchors, all.TornAnchors, all.DriftPPM, all.HugeIDs, all.SharedLine, all.CutAtEnd = true, true, 100, true, true, true
	all.JoinRate = 0.01
	all.WallNS, all.ImpossiblePhaseTS = badWall, impossibleTS
	cases := []struct {
		name string
		set  func(*Config)
	}{
		{"base", func(*Config) {}},
		{"runtime_ns", func(c *Config) { c.RuntimeNs = true }},
		{"host_exact", func(c *Config) { c.HostExact = true }},
		{"host_parents_first", func(c *Config) { c.HostParentsFirst = true }},
		{"device_children_first", func(c *Config) { c.DeviceChildrenFirst = true }},
		{"sparse_anchors", func(c *Config) { c.SparseAnchors = true }},
		{"torn_anchors", func(c *Config) { c.TornAnchors = true }},
		// Drift shows only over seconds of anchors.
		{"drift", func(c *Config) { c.DriftPPM, c.Rounds = 100, 48 }},
		{"huge_ids", func(c *Config) { c.HugeIDs = true }},
		{"shared_line", func(c *Config) { c.SharedLine = true }},
		{"cut_at_end", func(c *Config) { c.CutAtEnd = true }},
		// Bind lines are joined too.
		{"joins", func(c *Config) { c.JoinRate, c.Legacy = 0.02, true }},
		{"unterminated", func(c *Config) { c.Unterminated = true }},
		{"wall_ns", func(c *Config) { c.WallNS = badWall }},
		{"impossible_phase", func(c *Config) { c.ImpossiblePhaseTS = impossibleTS }},
		{"all", func(c *Config) { *c = all }},
	}
	var out []Case
	for _, c := range cases {
		cfg := base
		c.set(&cfg)
		log, _ := GenerateTruth(cfg)
		out = append(out, Case{Name: c.name, Config: cfg, Log: log})
	}
	return out
}
