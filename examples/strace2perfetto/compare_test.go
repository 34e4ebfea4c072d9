package main

import (
	"bytes"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/phasetrace/phasetrace"
	"github.com/phasetrace/phasetrace/strace/stracetest"
)

// writeRun writes a generated run as two logs, as two hosts' ranks would
// leave them: the L3 parent and rank 0 in name.log, the other ranks in
// name.rank1.log.
func writeRun(t *testing.T, name string, cfg stracetest.Config) {
	t.Helper()
	var b bytes.Buffer
	if err := stracetest.Generate(&b, cfg); err != nil {
		t.Fatal(err)
	}
	var first, second bytes.Buffer
	for line := range bytes.Lines(b.Bytes()) {
		if bytes.Contains(line, []byte("pid=4200 ")) || bytes.Contains(line, []byte("pid=4400 ")) {
			second.Write(line)
		} else {
			first.Write(line)
		}
	}
	for file, data := range map[string][]byte{name + ".log": first.Bytes(), name + ".rank1.log": second.Bytes()} {
		if err := os.WriteFile(file, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestCompare(t *testing.T) {
	chdir(t)
	cfg := stracetest.Config{Seed: 3, Rounds: 6, AnchorPerLaunch: true, Ranks: 3}
	writeRun(t, "base", cfg)
	cfg.Slower, cfg.Start = stracetest.Slower{Phase: "orch", Ns: 500_000}, 30_000_000_000
	writeRun(t, "measure", cfg)
	code, _, stderr := runArgs([]string{"-compare", "base.log,base.rank1.log", "measure.log,measure.rank1.log", "-summary-json", "ab.json", "-strict"}, nil)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "compare: base base.log,base.rank1.log, measure measure.log,measure.rank1.log; aligned by the first decode step") {
		t.Errorf("the summary does not say the comparison:\n%s", stderr)
	}
	tr := readTrace(t, "base.compare.pftrace") // the default output
	var procs []string
	for _, tk := range tr.Tracks {
		if tk.Kind == "process" {
			procs = append(procs, tk.Name)
		}
	}
	slices.Sort(procs)
	if len(procs) != 8 || !strings.HasPrefix(procs[0], "base · ") || !strings.HasPrefix(procs[7], "measure · ") {
		t.Errorf("processes %q: want 4 of each side, named by it", procs)
	}
	b, err := os.ReadFile("ab.json")
	if err != nil {
		t.Fatal(err)
	}
	var sum phasetrace.Summary
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	if c := sum.Compare; c == nil || c.Aligned != "decode" || c.ShiftNs != c.BaseStart-c.MeasureStart || len(c.Pairs) != 3 || len(c.MeasureInputs) != 2 {
		t.Errorf("summary's compare: %+v", sum.Compare)
	}
}

func TestCompareUsage(t *testing.T) {
	chdir(t)
	if err := os.WriteFile("a.log", cleanLog(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"-compare", "a.log"},
		{"-compare", "a.log", "a.log", "a.log"},
		{"-compare", "a.log,", "a.log"},
		{"-compare", "-records", "a.log", "a.log", "a.log"},
		{"-compare", "-worker", "m=1", "a.log", "a.log"},
	} {
		if code, _, stderr := runArgs(args, nil); code != exitUsage || !strings.Contains(stderr, "-compare") {
			t.Errorf("%q: exit %d, %q; want a usage error naming -compare", args, code, stderr)
		}
	}
	// A run compared with itself: its captures are the other side's, not
	// repeats.
	code, _, stderr := runArgs([]string{"-compare", "-strict", "-o", "self.pftrace", "a.log", "a.log"}, nil)
	if code != exitOK || !strings.Contains(stderr, "measure moved by 0 ns") {
		t.Errorf("a log compared with itself: exit %d\n%s", code, stderr)
	}
}
