package remoteplan

import (
	"bytes"
	"hash/maphash"
	"testing"

	"github.com/phasetrace/phasetrace/internal/firstpass"
	"github.com/phasetrace/phasetrace/reduce"
	"github.com/phasetrace/phasetrace/strace"
	"github.com/phasetrace/phasetrace/strace/stracetest"
)

// TestPlannerAlone runs the plan stage on its own: a survey of generated
// logs of a dispatching host and two remote machines, then a planner — no
// converter. Each machine is placed by causality, on the worker it served,
// and every remote host span's start, carried onto the dispatching host's
// axis, lies within the bound its machine's fit publishes there.
func TestPlannerAlone(t *testing.T) {
	cfg := stracetest.RemoteConfig{Seed: 7, Tasks: 24, GapMin: 600_000_000, GapMean: 300_000_000, GapMax: 1_300_000_000,
		WallErr: 1_000_000, AnchorEvry: 100_000_000,
		Hosts: []stracetest.RemoteHost{
			{Machine: "machine1", DriftPPM: -40, FwdMin: 30_000, FwdJitter: 30_000, RetMin: 25_000, RetJitter: 25_000},
			{Machine: "machine2", DriftPPM: 25, FwdMin: 40_000, FwdJitter: 35_000, RetMin: 30_000, RetJitter: 25_000}}}
	logs, truth := stracetest.GenerateRemote(cfg)
	scan := firstpass.NewScan()
	scan.Remote.Single = len(logs) == 1
	names := make([]string, len(logs))
	for i, l := range logs {
		names[i] = l.Name
		scan.Input = i
		if _, err := scan.ScanLog(bytes.NewReader(l.Log), l.Name, strace.DefaultMaxLine, maphash.MakeSeed(), nil); err != nil {
			t.Fatal(err)
		}
	}
	pl := &Planner{Scan: scan, Names: names}
	p := pl.Group(len(logs))
	if p == nil {
		t.Fatal("no remote machine found")
	}
	if pm := p.PidMaps(&scan.Remote, len(logs)); pm != nil {
		t.Fatalf("pids repeat across machines: %v", pm)
	}
	pl.Settle(p, nil)
	byMachine := map[string]*Host{}
	for _, h := range p.Hosts {
		byMachine[h.Machine] = h
		if h.Method != reduce.HostCausal || h.Fit == nil {
			t.Fatalf("%s placed %v: %s", h.Machine, h.Method, h.Note)
		}
		if want := truth.Hosts[h.Machine].Worker; len(h.Workers) != 1 || h.Workers[0] != want {
			t.Errorf("%s matched to workers %v, served %d", h.Machine, h.Workers, want)
		}
	}
	checked := 0
	for k, s := range truth.Spans {
		h := byMachine[k.Machine]
		if k.Machine == "" || s.Device {
			continue
		}
		if h == nil {
			t.Fatalf("machine %s not planned", k.Machine)
		}
		y, ok := h.drawn(s.Start)
		b, err := h.Fit.Drawn(reduce.HostNanos(y))
		if !ok || err != nil {
			t.Fatalf("%s %s at %d: not carried (%v)", k.Machine, k.Name, s.Start, err)
		}
		if e := max(y-s.TrueStart, s.TrueStart-y); e > int64(b) {
			t.Errorf("%s %s drawn at %d, truly at %d: %d ns off, bound %d ns", k.Machine, k.Name, y, s.TrueStart, e, b)
		}
		checked++
	}
	if checked == 0 {
		t.Fatal("no remote span checked")
	}
	t.Logf("%d remote host spans within their bounds", checked)
}

// TestMachineNamedAfterItsLog: a machine no banner names is named by the
// words of its log's path that the reference log's path does not share.
func TestMachineNamedAfterItsLog(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		ref, log, want string
	}{
		{"trace.log", "trace.hostB.log", "hostB"},
		{"trace.log", "trace.hostB.log.gz", "hostB"},
		{"/runs/hostA/run.log", "/runs/hostB/run.log", "hostB"},
		{"hostA.log", "hostB.log", "hostB"},
		{"run.log", "run.log", "host 2"},
		{"a/run.log", "run.log", "host 2"},
	} {
		pl := &Planner{Names: []string{c.ref, c.log}}
		if got := pl.machineName(1, 0, map[string]*Host{}, 2); got != c.want {
			t.Errorf("%s beside %s: machine %q, want %q", c.log, c.ref, got, c.want)
		}
	}
	pl := &Planner{Names: []string{"trace.log", "trace.hostB.log"}}
	if got := pl.machineName(1, 0, map[string]*Host{"hostB": {}}, 3); got != "host 3" {
		t.Errorf("a name taken: %q, want host 3", got)
	}
}

// TestNilPlan: a nil plan, of a conversion whose logs are all the
// dispatching host's, answers as that host.
func TestNilPlan(t *testing.T) {
	t.Parallel()
	var p *Plan
	if p.Input(0) != nil || p.Machine(1) != -1 || p.Placed(1) != nil || p.MergeShift(0) != 0 {
		t.Error("a nil plan puts a log or a pid on a remote machine")
	}
	if _, ok := p.OsPid(1); ok {
		t.Error("a nil plan gives a trace pid an OS pid")
	}
	if !p.OnAxis(1) || !p.SameHost(1, 2) || p.WallSuperseded(1) || p.WallOffAxis(1) {
		t.Error("a nil plan moves a pid off the axis")
	}
	rec := strace.Record{Kind: strace.KindSpan, Span: strace.Span{Pid: 1, TS: 5, Dur: 2}}
	if !p.Adjust(0, &rec, nil) || rec.Span.TS != 5 || rec.Span.Dur != 2 {
		t.Errorf("a nil plan moved a span: %+v", rec.Span)
	}
}
