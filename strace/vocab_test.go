package strace

import (
	"strings"
	"testing"
)

// IsBindSegment must agree with the two lists it answers for.
func TestIsBindSegmentAgreesWithTheLists(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, list := range [][]string{BindSegments, RetiredBindSegments} {
		for _, s := range list {
			if seen[s] {
				t.Errorf("segment %q listed twice", s)
			}
			seen[s] = true
			if !IsBindSegment(s) {
				t.Errorf("IsBindSegment(%q) = false", s)
			}
		}
	}
	for _, s := range []string{"", "prebuilt", "compatibility", "bind", "args.x", "ARGS"} {
		if IsBindSegment(s) {
			t.Errorf("IsBindSegment(%q) = true", s)
		}
	}
}

// The span names are self-locating: each names its parent by its prefix.
func TestSpanNamesNest(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ child, parent string }{
		{SpanBind, SpanRun}, {SpanRunnerRun, SpanRun}, {SpanClaimRelease, SpanRun},
		{SpanValidate, SpanRun}, {SpanDeviceWall, SpanRunnerRun},
	} {
		p, _, ok := cutLast(c.child)
		if !ok || p != c.parent {
			t.Errorf("%s: parent %q, want %q", c.child, p, c.parent)
		}
		if strings.Count(c.child, ".") < 2 || FamilyOf(c.child) != FamilyChip {
			t.Errorf("%s: not a chip span below the root", c.child)
		}
	}
	if strings.Count(SpanDeviceWall, ".") != DeviceWallDepth+1 { // chip.run is at depth 0
		t.Errorf("%s is not at depth %d", SpanDeviceWall, DeviceWallDepth)
	}
}

func cutLast(s string) (string, string, bool) {
	i := strings.LastIndexByte(s, '.')
	if i < 0 {
		return "", "", false
	}
	return s[:i], s[i+1:], true
}

func TestDaemonBanner(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		line, machine string
		ok            bool
	}{
		{"[network1-daemon] machine1 listening on 10.0.0.2:7301\n", "machine1", true},
		{"[network1-daemon] machine12\r\n", "machine12", true},
		{"[network1-daemon] \n", "", false},
		{"[network1-daemon]machine1 listening\n", "", false},
		{"[mono_ns=1][T0x1][INFO] x: [network1-daemon] machine1 listening\n", "", false},
	} {
		m, ok := DaemonBanner([]byte(c.line))
		if m != c.machine || ok != c.ok {
			t.Errorf("DaemonBanner(%q) = %q, %v; want %q, %v", c.line, m, ok, c.machine, c.ok)
		}
	}
}
