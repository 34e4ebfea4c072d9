package analysis

import (
	"fmt"
	"io"
	"strings"

	"github.com/phasetrace/phasetrace/strace"
)

// Tree is the median span tree of one callable: the structure comes from
// the dotted span names of its last invocation (never from timestamps:
// host and device spans are on different clocks), each node's duration is
// the median across every invocation that has the span, and the concurrent
// device windows orch and sched stand side by side under their merged
// window, Effective.
type Tree struct {
	Hid         uint64
	Role        strace.Role
	Invocations int
	Roots       []*TreeNode // ordered by start in the last invocation
}

// TreeNode is one span name of a [Tree], or the Effective window of a
// concurrent orch ∥ sched pair.
type TreeNode struct {
	Name   string // full dotted name; "Effective" for a concurrent pair
	Leaf   string // last component of the name
	Device bool   // a clk=dev span
	// Median is the median duration across the invocations that have the
	// span (N of them). For an Effective node it is the median, across the
	// invocations that have both windows, of max(ends) − min(starts).
	Median Median
	N      int
	// Orch and Sched are set on an Effective node: the two concurrent
	// windows, which are not its children in time but run side by side.
	Orch, Sched *TreeNode
	Children    []*TreeNode // ordered by start in the last invocation
}

// AnalyzeTree builds the median tree of every callable, most invoked first.
// A span name that occurs more than once in the last invocation is shown
// once, at its earliest start.
func AnalyzeTree(spans []strace.Span) []*Tree {
	t := NewTables(WithTables(TableTree), WithMaxOpen(len(spans)))
	t.AddAll(spans)
	return t.Tree()
}

func leafOf(name string) string {
	if dot := strings.LastIndexByte(name, '.'); dot >= 0 {
		return name[dot+1:]
	}
	return name
}

// pairConcurrent replaces an orch child and a sched child of n by one
// Effective node at orch's place; effs are max(ends) − min(starts) of the
// two in every invocation that has both.
func pairConcurrent(n *TreeNode, effs []int64) {
	oi, si := -1, -1
	for i, c := range n.Children {
		switch {
		case c.Leaf == strace.PhaseOrch && oi < 0:
			oi = i
		case c.Leaf == strace.PhaseSched && si < 0:
			si = i
		}
	}
	if oi < 0 || si < 0 {
		return
	}
	orch, sched := n.Children[oi], n.Children[si]
	spread := spreadOf(effs)
	eff := &TreeNode{Name: "Effective", Leaf: "Effective", Device: true, Median: spread.Median, N: spread.N, Orch: orch, Sched: sched}
	kids := make([]*TreeNode, 0, len(n.Children)-1)
	for i, c := range n.Children {
		switch i {
		case oi:
			kids = append(kids, eff)
		case si:
		default:
			kids = append(kids, c)
		}
	}
	n.Children = kids
}

// WriteTree prints every callable's tree in the runtime tool's layout,
// durations in µs:
//
//	callable hid=9f3c (decode) — median of 4 invocation(s)
//	chip.run                              72900.0 us
//	  runner_run                          70000.0 us
//	    device_wall           [dev]       69000.0 us
//	      Effective              [dev]     931.0 us
//	        orch 540.0  ∥  sched 930.0   (concurrent)
func WriteTree(w io.Writer, trees []*Tree) error {
	ew := &errWriter{w: w}
	if len(trees) == 0 {
		ew.println(noMarkers)
		return ew.err
	}
	for _, t := range trees {
		suffix := " — 1 invocation"
		if t.Invocations > 1 {
			suffix = fmt.Sprintf(" — median of %d invocation(s)", t.Invocations)
		}
		ew.printf("callable hid=%s (%s)%s\n", hidText(t.Hid), treeLabel(t), suffix)
		for _, r := range t.Roots {
			writeTreeNode(ew, r, 0)
		}
		ew.println("")
	}
	return ew.err
}

func treeLabel(t *Tree) string {
	switch t.Role {
	case strace.RoleDecode, strace.RolePrefill:
		return t.Role.String()
	}
	h := hidText(t.Hid)
	return h[:min(8, len(h))]
}

func writeTreeNode(ew *errWriter, n *TreeNode, indent int) {
	pad := strings.Repeat("  ", indent)
	if n.Orch != nil && n.Sched != nil {
		ew.printf("%s%-22s [dev]  %12s us\n", pad, "Effective", fmtF(medianUS(n.Median), 1))
		ew.printf("%s  orch %s  ∥  sched %s   (concurrent)\n", pad, fmtF(medianUS(n.Orch.Median), 1), fmtF(medianUS(n.Sched.Median), 1))
		return
	}
	tag := ""
	if n.Device {
		tag = " [dev]"
	}
	ew.printf("%s%-22s%6s  %12s us\n", pad, n.Leaf, tag, fmtF(medianUS(n.Median), 1))
	for _, c := range n.Children {
		writeTreeNode(ew, c, indent+1)
	}
}
