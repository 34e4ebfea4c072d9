package phasetrace

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
	pl := &planner{cfg: &config{}, scan: scan, names: names, led: newLedger(&Summary{})}
	p := pl.hosts(len(logs))
	if p == nil {
		t.Fatal("no remote machine found")
	}
	if pm := p.pidMaps(&scan.Remote, len(logs)); pm != nil {
		t.Fatalf("pids repeat across machines: %v", pm)
	}
	pl.settle(p, nil)
	byMachine := map[string]*remoteHost{}
	for _, h := range p.hosts {
		byMachine[h.machine] = h
		if h.method != reduce.HostCausal || h.fit == nil {
			t.Fatalf("%s placed %v: %s", h.machine, h.method, h.sum.Note)
		}
		if want := truth.Hosts[h.machine].Worker; len(h.sum.Workers) != 1 || h.sum.Workers[0] != want {
			t.Errorf("%s matched to workers %v, served %d", h.machine, h.sum.Workers, want)
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
		b, err := h.fit.Drawn(reduce.HostNanos(y))
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
		pl := &planner{names: []string{c.ref, c.log}}
		if got := pl.machineName(1, 0, map[string]*remoteHost{}, 2); got != c.want {
			t.Errorf("%s beside %s: machine %q, want %q", c.log, c.ref, got, c.want)
		}
	}
	pl := &planner{names: []string{"trace.log", "trace.hostB.log"}}
	if got := pl.machineName(1, 0, map[string]*remoteHost{"hostB": {}}, 3); got != "host 3" {
		t.Errorf("a name taken: %q, want host 3", got)
	}
}
