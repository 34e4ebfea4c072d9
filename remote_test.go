package phasetrace_test

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/phasetrace/phasetrace"
	"github.com/phasetrace/phasetrace/perfetto/check"
	"github.com/phasetrace/phasetrace/strace"
	"github.com/phasetrace/phasetrace/strace/stracetest"
)

// The remote scenarios of the accuracy table.
var remoteScenarios = []struct {
	name string
	cfg  stracetest.RemoteConfig
}{
	{"one remote host, 50 tasks over ~45 s, 30 ppm", stracetest.RemoteConfig{Seed: 1, Tasks: 50, GapMin: 600_000_000, GapMean: 300_000_000, GapMax: 1_300_000_000,
		WallErr: 1_000_000, SamePids: true, AnchorEvry: 100_000_000,
		Hosts: []stracetest.RemoteHost{{Machine: "machine1", DriftPPM: 30, FwdMin: 35_000, FwdJitter: 40_000, RetMin: 22_000, RetJitter: 30_000}}}},
	{"two remote hosts, 12 tasks over ~140 s, idle 8–40 s, −46 / +20 ppm", stracetest.RemoteConfig{Seed: 2, Tasks: 12, GapMin: 8_000_000_000, GapMean: 4_500_000_000, GapMax: 40_000_000_000,
		WallErr: 1_000_000, SamePids: true, AnchorEvry: 100_000_000,
		Hosts: []stracetest.RemoteHost{
			{Machine: "machine1", DriftPPM: -46, FwdMin: 28_000, FwdJitter: 30_000, RetMin: 24_000, RetJitter: 25_000},
			{Machine: "machine2", DriftPPM: 20, FwdMin: 40_000, FwdJitter: 35_000, RetMin: 30_000, RetJitter: 25_000}}}},
}

func remoteInputs(logs []stracetest.RemoteLog) []phasetrace.Input {
	var in []phasetrace.Input
	for _, l := range logs {
		in = append(in, phasetrace.Bytes(l.Name, l.Log))
	}
	return in
}

// remoteResult is how the remote spans of one machine were drawn.
type remoteResult struct {
	errs, bounds []int64
	wallErrs     []int64
	held         int
	limit        int64
}

// measureRemote converts the logs and checks every remote slice against the
// truth: its drawn start (and, for host spans, end) against where it truly
// was, and its published bound.
func measureRemote(t *testing.T, logs []stracetest.RemoteLog, truth stracetest.RemoteTruth, opts ...phasetrace.Option) (map[string]*remoteResult, *phasetrace.Summary, []byte) {
	t.Helper()
	var out bytes.Buffer
	sum, err := phasetrace.Convert(&out, remoteInputs(logs), opts...)
	if err != nil {
		t.Fatal(err)
	}
	if err := sum.Spans.Check(); err != nil {
		t.Fatal(err)
	}
	tr, err := check.ReadBytes(out.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Err(); err != nil {
		t.Fatal(err)
	}
	// One daemon and one chip child per machine: a span is named by its
	// machine, its run (run_id or inv) and its name.
	byName := map[remoteTruthKey]stracetest.RemoteSpan{}
	for k, v := range truth.Spans {
		byName[remoteTruthKey{k.Machine, k.Run, k.Name}] = v
	}
	res := map[string]*remoteResult{}
	for _, h := range sum.Hosts {
		res[h.Machine] = &remoteResult{limit: h.LimitNs}
	}
	for _, s := range tr.Slices {
		args := map[string]any{}
		for _, a := range s.Args {
			args[a.Name] = a.Value
		}
		machine, _ := args["machine"].(string)
		if machine == "" {
			continue
		}
		r := res[machine]
		var run uint64
		if v, ok := args["run_id"].(int64); ok && strace.FamilyOf(s.Name) == strace.FamilyNode {
			run = uint64(v)
		} else if v, ok := args["inv"].(uint64); ok {
			run = v
		}
		bound, isDev := args["host_bound_ns"].(int64)
		isDev = !isDev
		if isDev {
			bound, _ = args["bound_ns"].(int64)
		}
		want, ok := byName[remoteTruthKey{machine, run, s.Name}]
		if !ok {
			continue
		}
		e := s.TS - want.TrueStart
		if !want.Device {
			if e2 := s.TS + s.Dur - want.TrueEnd; abs(e2) > abs(e) {
				e = e2
			}
			wallE := want.Start + truth.Hosts[machine].WallShift - want.TrueStart
			r.wallErrs = append(r.wallErrs, abs(wallE))
		}
		r.errs = append(r.errs, abs(e))
		r.bounds = append(r.bounds, bound)
		if abs(e) <= bound {
			r.held++
		} else if len(r.errs)-r.held <= 5 {
			t.Errorf("%s %s run=%d: drawn at %d, truly %d: error %d ns > bound %d ns", machine, s.Name, run, s.TS, want.TrueStart, e, bound)
		}
	}
	return res, sum, out.Bytes()
}

type remoteTruthKey struct {
	machine string
	run     uint64
	name    string
}

func abs(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

func median(v []int64) int64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

func us(ns int64) string { return fmt.Sprintf("%.1f µs", float64(ns)/1e3) }

// TestRemoteAccuracy converts the remote scenarios and prints the table the
// README shows: go test -run TestRemoteAccuracy -v .
func TestRemoteAccuracy(t *testing.T) {
	var tab strings.Builder
	tab.WriteString("| scenario | machine | spans | wall shift: max / median error | causal: max / median error | median bound | information limit | bound holds |\n")
	tab.WriteString("| --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, sc := range remoteScenarios {
		logs, truth := stracetest.GenerateRemote(sc.cfg)
		res, sum, _ := measureRemote(t, logs, truth)
		for _, h := range sum.Hosts {
			if h.Method != "causal" {
				t.Errorf("%s: %s placed %s: %s", sc.name, h.Machine, h.Method, h.Note)
			}
		}
		for _, h := range sc.cfg.Hosts {
			r := res[h.Machine]
			if r == nil || len(r.errs) == 0 {
				t.Errorf("%s: no spans of %s checked", sc.name, h.Machine)
				continue
			}
			ht := truth.Hosts[h.Machine]
			limit := ht.FwdMin + ht.RetMin
			maxErr := slices.Max(r.errs)
			fmt.Fprintf(&tab, "| %s | %s | %d | %s / %s | %s / %s | %s | %s | %.2f%% |\n", sc.name, h.Machine, len(r.errs),
				us(slices.Max(r.wallErrs)), us(median(r.wallErrs)), us(maxErr), us(median(r.errs)), us(median(r.bounds)), us(limit),
				100*float64(r.held)/float64(len(r.errs)))
			if maxErr > 15_000 {
				t.Errorf("%s: %s: max error %d ns > 15 µs", sc.name, h.Machine, maxErr)
			}
			if r.held != len(r.errs) {
				t.Errorf("%s: %s: the bound holds for %d of %d spans", sc.name, h.Machine, r.held, len(r.errs))
			}
			if mb := median(r.bounds); float64(mb) > 1.2*float64(limit) {
				t.Errorf("%s: %s: median bound %d ns above 1.2× the information limit %d ns", sc.name, h.Machine, mb, limit)
			}
		}
	}
	t.Logf("\n%s", tab.String())
}

var _ = math.MaxInt64

// The scenarios span what the issue describes.
func TestRemoteScenarioShapes(t *testing.T) {
	for _, sc := range remoteScenarios {
		logs, truth := stracetest.GenerateRemote(sc.cfg)
		var first, last int64
		for k, s := range truth.Spans {
			if k.Name == strace.SpanRemoteRunFirst && (first == 0 || s.TrueStart < first) {
				first = s.TrueStart
			}
			if k.Name == strace.SpanRemoteRunLast {
				last = max(last, s.TrueEnd)
			}
		}
		t.Logf("%s: %d logs, remote runs over %.1f s", sc.name, len(logs), float64(last-first)/1e9)
	}
}
