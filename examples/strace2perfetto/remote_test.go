package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phasetrace/phasetrace"
	"github.com/phasetrace/phasetrace/strace/stracetest"
)

// Logs of a dispatching host and two remote machines convert with no flag:
// the logs tell which machine served which worker. -worker overrides it
// (here wrongly: the tasks then admit no clock mapping, and the machines
// fall back to their wall-clock anchors, saying so).
func TestRemoteMachines(t *testing.T) {
	dir := chdir(t)
	logs, _ := stracetest.GenerateRemote(stracetest.RemoteConfig{Seed: 5, Tasks: 8, GapMin: 1e9, GapMean: 1e9, GapMax: 3e9, WallErr: 1e6, SamePids: true,
		Hosts: []stracetest.RemoteHost{{Machine: "machine1", DriftPPM: 30, FwdMin: 30e3, FwdJitter: 20e3, RetMin: 25e3, RetJitter: 20e3},
			{Machine: "machine2", DriftPPM: -40, FwdMin: 30e3, FwdJitter: 20e3, RetMin: 25e3, RetJitter: 20e3}}})
	var args []string
	for _, l := range logs {
		if err := os.WriteFile(filepath.Join(dir, l.Name), l.Log, 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, l.Name)
	}
	code, _, stderr := runArgs(append(args, "-o", "run.pftrace"), nil)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"machine1 (machine1.log): causal (socket transport), worker 0", "machine2 (machine2.log): causal (socket transport), worker 1",
		"flows network1.dispatch → remote run: 8", "flows remote run → network1.complete: 8"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("summary lacks %q:\n%s", want, stderr)
		}
	}
	tr := readTrace(t, "run.pftrace")
	machines := map[string]bool{}
	for _, p := range tr.Tracks {
		if strings.Contains(p.Name, " on machine") {
			machines[p.Name[strings.Index(p.Name, " on machine")+4:]] = true
		}
	}
	if len(machines) != 2 {
		t.Errorf("process tracks name machines %v, want both", machines)
	}

	code, _, stderr = runArgs(append(args, "-o", "swapped.pftrace", "-worker", "machine1=1", "-worker", "machine2.log=0", "-mpi"), nil)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"machine1 (machine1.log): wall: moved", "its tasks do not place its clock"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("summary lacks %q:\n%s", want, stderr)
		}
	}
	if code, _, stderr := runArgs(append(args, "-worker", "machine1"), nil); code != exitUsage {
		t.Errorf("-worker machine1: exit %d, want %d: %s", code, exitUsage, stderr)
	}
}

// -host-rate-stability and -host-rate-horizon reach the remote hosts' clock
// model: a steady clock's assumptions (0.02 ppm over every task) give
// tighter bounds than the default's.
func TestHostClockFlags(t *testing.T) {
	dir := chdir(t)
	logs, _ := stracetest.GenerateRemote(stracetest.RemoteConfig{Seed: 5, Tasks: 8, GapMin: 1e9, GapMean: 1e9, GapMax: 3e9, WallErr: 1e6, SamePids: true,
		Hosts: []stracetest.RemoteHost{{Machine: "machine1", DriftPPM: 30, FwdMin: 30e3, FwdJitter: 20e3, RetMin: 25e3, RetJitter: 20e3}}})
	var args []string
	for _, l := range logs {
		if err := os.WriteFile(filepath.Join(dir, l.Name), l.Log, 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, l.Name)
	}
	median := func(flags ...string) int64 {
		t.Helper()
		code, stdout, stderr := runArgs(append(append(flags, "-q", "-o", "run.pftrace", "-summary-json", "-"), args...), nil)
		if code != exitOK {
			t.Fatalf("%q: exit %d: %s", flags, code, stderr)
		}
		var sum phasetrace.Summary
		if err := json.Unmarshal([]byte(stdout), &sum); err != nil || len(sum.Hosts) != 1 || sum.Hosts[0].Method != "causal" {
			t.Fatalf("%q: summary %v %+v", flags, err, sum.Hosts)
		}
		return sum.Hosts[0].Bound.Median
	}
	if def, steady := median(), median("-host-rate-stability", "0.02", "-host-rate-horizon", "1000s"); steady >= def {
		t.Errorf("median host bound %d ns with a steady clock's model, %d ns by default: want it tighter", steady, def)
	}
}
