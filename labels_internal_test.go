package phasetrace

import (
	"testing"

	"github.com/phasetrace/phasetrace/strace"
)

// TestSliceLabel: a slice is labelled by the last word of its name, a root
// by its whole name.
func TestSliceLabel(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, want string }{
		{strace.SpanRun, "chip.run"},
		{strace.SpanRunnerRun, "runner_run"},
		{strace.SpanDeviceWall, "device_wall"},
		{strace.SpanDeviceWall + ".graph_build", "graph_build"},
		{strace.SpanDeviceWall + ".task_slot_3", "task_slot_3"},
		{effectiveName, "effective"},
		{strace.SpanBind, "bind"},
		{strace.SpanBind + ".args", "args"},
		{strace.SpanBind + ".host_orch.record_node", "record_node"},
		{strace.SpanClaimRelease, "claim_release"},
		{"chip.prewarm.build", "build"},
		{"node.dispatch", "node.dispatch"},
		{strace.SpanRemoteRunFirst, "node.graph_build"},
		{strace.SpanRemoteDispatch, "network1.dispatch"},
		{"ext.pypto.decode_step", "ext.pypto.decode_step"},
		{"ext.pypto.decode_step.sample", "sample"},
		{"ext.app", "ext.app"},
		{"core.x.y", "y"},
		{"step", "step"},
		{"chip.run.", "chip.run."},
		{"chip.run.runner_ru~", "runner_ru~"},
		{"", ""},
	} {
		if got := sliceLabel(c.name); got != c.want {
			t.Errorf("sliceLabel(%q) = %q, want %q", c.name, got, c.want)
		}
	}
}

// TestSliceLabelAllocatesNothing: a label is part of its name.
func TestSliceLabelAllocatesNothing(t *testing.T) {
	name := strace.SpanDeviceWall + ".graph_build"
	if n := testing.AllocsPerRun(100, func() { _ = sliceLabel(name) }); n != 0 {
		t.Errorf("sliceLabel allocates %v times", n)
	}
}
