package strace

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFamilies(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		family   Family
		leaf     string
		producer string
		span     string
	}{
		{"chip.run.bind", FamilyChip, "", "", ""},
		{"chip", FamilyChip, "", "", ""},
		{"core.exec", FamilyCore, "", "", ""},
		{"node.submit", FamilyNode, "submit", "", ""},
		{"network1.dispatch", FamilyNode, "dispatch", "", ""},
		{"network3.post_fence_retirement", FamilyNode, "post_fence_retirement", "", ""},
		{"network4.submit", FamilyUnknown, "", "", ""},
		{"ext.pypto.decode_layer", FamilyExt, "", "pypto", "decode_layer"},
		{"ext.host.foo", FamilyExt, "", "host", "foo"},
		{"ext.pypto.layer.attn", FamilyExt, "", "pypto", "layer.attn"},
		{"ext.foo", FamilyExt, "", "", ""},
		{"ext..foo", FamilyExt, "", "", ""},
		{"ext.pypto.", FamilyExt, "", "", ""},
		{"ext.pypto..x", FamilyExt, "", "", ""},
		{"extra.thing", FamilyUnknown, "", "", ""},
		{"chip.prewarm.build", FamilyChip, "", "", ""},
		{"", FamilyUnknown, "", "", ""},
	}
	for _, tc := range tests {
		if f := FamilyOf(tc.name); f != tc.family {
			t.Errorf("FamilyOf(%q) = %v, want %v", tc.name, f, tc.family)
		}
		leaf, ok := NodeLeaf(tc.name)
		if leaf != tc.leaf || ok != (tc.family == FamilyNode) {
			t.Errorf("NodeLeaf(%q) = %q, %v", tc.name, leaf, ok)
		}
		p, s, ok := ExtProducer(tc.name)
		if p != tc.producer || s != tc.span || ok != (tc.producer != "") {
			t.Errorf("ExtProducer(%q) = %q, %q, %v", tc.name, p, s, ok)
		}
	}
	if FamilyNode.HasInvocation() || FamilyExt.HasInvocation() || !FamilyUnknown.HasInvocation() || !FamilyChip.HasInvocation() {
		t.Error("HasInvocation")
	}
}

func spanList(t *testing.T, path string) []Span {
	t.Helper()
	recs, _ := readAll(t, openFile(t, path))
	var spans []Span
	for _, r := range recs {
		if r.Kind == KindSpan {
			spans = append(spans, r.Span)
		}
	}
	return spans
}

// treeOf renders a tree as "name(children...)".
func treeOf(n *Node) string {
	s := n.Span.Name
	if n.DepthMismatch {
		s += "!"
	}
	if len(n.Children) > 0 {
		s += "("
		for i, c := range n.Children {
			if i > 0 {
				s += " "
			}
			s += treeOf(c)
		}
		s += ")"
	}
	return s
}

func TestGroupInvocationsSeedShaped(t *testing.T) {
	t.Parallel()
	invs := GroupInvocations(spanList(t, "testdata/logs/seed_shaped.log"))
	if len(invs) != 1 {
		t.Fatalf("%d invocations; node and ext spans must be left out", len(invs))
	}
	inv := invs[0]
	if inv.Pid != 3200 || inv.Inv != 7 || inv.Hid != 0x9f3c2a11d00db1e5 || len(inv.Orphans) != 0 || len(inv.Roots) != 1 {
		t.Fatalf("invocation %+v", inv)
	}
	want := "chip.run(chip.run.bind(chip.run.bind.host_orch chip.run.bind.graph_pack chip.run.bind.arena_h2d chip.run.bind.compatibility!) " +
		"chip.run.runner_run(chip.run.runner_run.device_wall(chip.run.runner_run.device_wall.orch chip.run.runner_run.device_wall.sched chip.run.runner_run.device_wall.task_slot_0)) " +
		"chip.run.validate)"
	if diff := cmp.Diff(want, treeOf(inv.Root("chip.run"))); diff != "" {
		t.Errorf("tree (-want +got):\n%s", diff)
	}
	if inv.Find("chip.run.runner_run.device_wall") == nil || !inv.Find("chip.run.runner_run.device_wall").IsDevice() {
		t.Error("device_wall not found as a device span")
	}
}

func TestOrphansAndDuplicates(t *testing.T) {
	t.Parallel()
	mk := func(inv uint64, depth int32, name string) Span {
		return Span{Pid: 1, Inv: inv, Hid: 0xa, Depth: depth, Name: name}
	}
	spans := []Span{
		// a run whose host_orch segment never appears
		mk(1, 3, "chip.run.bind.host_orch.submit_task"),
		mk(1, 1, "chip.run.bind"),
		mk(1, 0, "chip.run"),
		// two runs' spans on one pid, interleaved; same names, found by (pid, inv)
		mk(2, 1, "chip.run.bind"),
		mk(3, 1, "chip.run.bind"),
		mk(3, 0, "chip.run"),
		mk(2, 0, "chip.run"),
		// the same name twice in one run: the nearer span at depth-1 wins
		mk(4, 0, "chip.run"),
		mk(4, 2, "chip.run.x.y"),
		mk(4, 1, "chip.run.x"),
		mk(4, 1, "chip.run.x"),
		// depth 0 with no parent named: a root; deeper: an orphan
		mk(5, 0, "chip.prewarm.build"),
		mk(5, 2, "chip.prewarm.build.x.y"),
	}
	invs := GroupInvocations(spans)
	got := map[uint64]string{}
	for _, inv := range invs {
		s := ""
		for _, r := range inv.Roots {
			s += treeOf(r) + ";"
		}
		for _, o := range inv.Orphans {
			s += " orphan " + o.Node.Span.Name + " wants " + o.Parent
		}
		got[inv.Inv] = s
	}
	want := map[uint64]string{
		1: "chip.run(chip.run.bind); orphan chip.run.bind.host_orch.submit_task wants chip.run.bind.host_orch",
		2: "chip.run(chip.run.bind);",
		3: "chip.run(chip.run.bind);",
		4: "chip.run(chip.run.x(chip.run.x.y) chip.run.x);",
		5: "chip.prewarm.build; orphan chip.prewarm.build.x.y wants chip.prewarm.build.x",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("trees (-want +got):\n%s", diff)
	}
}

func TestBucketByHid(t *testing.T) {
	t.Parallel()
	var spans []Span
	for i := range 5 {
		spans = append(spans, Span{Pid: 1, Inv: uint64(i + 1), Hid: 0xdec0de, Name: "chip.run"})
	}
	spans = append(spans, Span{Pid: 1, Inv: 10, Hid: 0xf111, Name: "chip.run"},
		Span{Pid: 2, Inv: 1, Hid: 0xaaaa, Name: "chip.run"}, Span{Pid: 2, Inv: 2, Hid: 0xaaaa, Name: "chip.run"})
	buckets := BucketByHid(GroupInvocations(spans))
	type row struct {
		Hid  uint64
		Role Role
		N    int
	}
	var got []row
	for _, b := range buckets {
		got = append(got, row{b.Hid, b.Role, len(b.Invocations)})
	}
	want := []row{{0xdec0de, RoleDecode, 5}, {0xaaaa, RoleOther, 2}, {0xf111, RolePrefill, 1}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("buckets (-want +got):\n%s", diff)
	}
	if RoleDecode.String() != "decode" || FamilyExt.String() != "ext" || KindDeviceAnchor.String() != "device-anchor" {
		t.Error("String methods")
	}
}
