package analysis

import (
	"strings"
	"testing"

	"github.com/phasetrace/phasetrace/strace"
)

// TestTree works through testdata/tree.log: decode hid e1 runs
// twice with every duration doubled the second time (k = 1, 2), so each
// median is the mean of the two; prefill f2 runs once.
func TestTree(t *testing.T) {
	t.Parallel()
	trees := AnalyzeTree(testLog(t, "tree.log").Spans)
	if len(trees) != 2 || trees[0].Hid != 0xe1 || trees[0].Role != strace.RoleDecode || trees[1].Role != strace.RolePrefill {
		t.Fatalf("trees %+v", trees)
	}
	var lines []string
	var walk func(n *TreeNode, depth int)
	walk = func(n *TreeNode, depth int) {
		desc := strings.Repeat(" ", depth) + n.Leaf
		if n.Orch != nil {
			desc += "(" + n.Orch.Leaf + "∥" + n.Sched.Leaf + ")"
		}
		lines = append(lines, desc)
		for _, c := range n.Children {
			walk(c, depth+1)
		}
	}
	for _, r := range trees[0].Roots {
		walk(r, 0)
	}
	// Structure from the names; siblings by start in the last invocation:
	// bind's compatibility (logged at depth 1) starts at +5, args at +10,
	// host_orch at +300; under device_wall sched (ts 300) precedes orch
	// (310), and the pair is one Effective node at orch's place.
	want := []string{"run", " bind", "  compatibility", "  args", "  host_orch", " runner_run", "  device_wall",
		"   preamble", "   Effective(orch∥sched)", "   post_orch", " validate"}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("structure:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	run := trees[0].Roots[0]
	dw := run.Children[1].Children[0]
	eff := dw.Children[1]
	for _, c := range []struct {
		name string
		got  Median
		want Median
	}{
		{"chip.run", run.Median, Median{12000, 24000}},                      // 18000
		{"host_orch", run.Children[0].Children[2].Median, Median{401, 802}}, // 601.5: a half ns
		{"orch", eff.Orch.Median, Median{2500, 5000}},                       // 3750: prints 3.8, a tie to even
		{"sched", eff.Sched.Median, Median{5001, 10001}},                    // 7501
		// Effective per invocation: inv 1 orch [310,2810) sched [300,5301)
		// → 5001; inv 2 orch [310,5310) sched [300,10301) → 10001.
		{"Effective", eff.Median, Median{5001, 10001}},
	} {
		if c.got != c.want {
			t.Errorf("%s median %+v, want %+v", c.name, c.got, c.want)
		}
	}
	if !dw.Device || run.Device || !eff.Device {
		t.Error("device flags")
	}
	// f2: chip.run.teardown.unmap's parent was never logged, so it is a root.
	if r := trees[1].Roots; len(r) != 2 || r[1].Name != "chip.run.teardown.unmap" {
		t.Errorf("prefill roots %+v", r)
	}
	var b strings.Builder
	_ = WriteTree(&b, trees)
	for _, line := range []string{
		"callable hid=e1 (decode) — median of 2 invocation(s)\n",
		"      Effective              [dev]           7.5 us\n",
		"        orch 3.8  ∥  sched 7.5   (concurrent)\n",
		"    host_orch                              0.6 us\n",
		"callable hid=f2 (prefill) — 1 invocation\n",
	} {
		if !strings.Contains(b.String(), line) {
			t.Errorf("missing %q in\n%s", line, b.String())
		}
	}
}

// TestTreeOtherLabel: a callable neither busiest nor once-seen is labelled
// by its hash's first eight digits.
func TestTreeOtherLabel(t *testing.T) {
	t.Parallel()
	var lines []string
	for inv := 1; inv <= 3; inv++ {
		lines = append(lines, rec(1, inv, "a", 0, "chip.run", 0, 10, ""))
	}
	lines = append(lines, rec(1, 4, "123456789abc", 0, "chip.run", 0, 10, ""), rec(1, 5, "123456789abc", 0, "chip.run", 0, 10, ""))
	var b strings.Builder
	_ = WriteTree(&b, AnalyzeTree(logOf(t, "x", lines...).Spans))
	if !strings.Contains(b.String(), "callable hid=123456789abc (12345678) — median of 2 invocation(s)") {
		t.Errorf("label:\n%s", b.String())
	}
	b.Reset()
	_ = WriteTree(&b, nil)
	if b.String() != noMarkers+"\n" {
		t.Errorf("empty tree %q", b.String())
	}
}
