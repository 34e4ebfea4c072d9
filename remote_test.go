package phasetrace_test

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/phasetrace/phasetrace"
	"github.com/phasetrace/phasetrace/perfetto/check"
	"github.com/phasetrace/phasetrace/perfetto/check/processor"
	"github.com/phasetrace/phasetrace/reduce"
	"github.com/phasetrace/phasetrace/strace"
	"github.com/phasetrace/phasetrace/strace/stracetest"
)

var genRemote = flag.String("genremote", "", "TestGenerateRemote writes the logs of the remote scenarios to this directory")

// TestGenerateRemote writes the logs of the accuracy table's scenarios, for
// the command line:
//
//	go test -run TestGenerateRemote -genremote /tmp/remote .
//	strace2perfetto /tmp/remote/2/l4.log /tmp/remote/2/machine1.log /tmp/remote/2/machine2.log
func TestGenerateRemote(t *testing.T) {
	if *genRemote == "" {
		t.Skip("no -genremote directory given")
	}
	for i, sc := range remoteScenarios {
		dir := filepath.Join(*genRemote, strconv.Itoa(i+1))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		logs, _ := stracetest.GenerateRemote(sc.cfg)
		for _, l := range logs {
			if err := os.WriteFile(filepath.Join(dir, l.Name), l.Log, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		t.Logf("%s: %s", sc.name, dir)
	}
}

// The remote scenarios of the accuracy table.
var remoteScenarios = []struct {
	name  string
	overS float64 // the seconds the name says its remote runs span
	cfg   stracetest.RemoteConfig
}{
	{"one remote host, 50 tasks over ~45 s, 30 ppm", 45, stracetest.RemoteConfig{Seed: 1, Tasks: 50, GapMin: 600_000_000, GapMean: 300_000_000, GapMax: 1_300_000_000,
		WallErr: 1_000_000, SamePids: true, AnchorEvry: 100_000_000,
		Hosts: []stracetest.RemoteHost{{Machine: "machine1", DriftPPM: 30, FwdMin: 35_000, FwdJitter: 40_000, RetMin: 22_000, RetJitter: 30_000}}}},
	{"two remote hosts, 12 tasks over ~140 s, idle 8–40 s, −46 / +20 ppm", 140, stracetest.RemoteConfig{Seed: 2, Tasks: 12, GapMin: 8_000_000_000, GapMean: 6_300_000_000, GapMax: 40_000_000_000,
		WallErr: 1_000_000, SamePids: true, AnchorEvry: 100_000_000,
		Hosts: []stracetest.RemoteHost{
			{Machine: "machine1", DriftPPM: -46, FwdMin: 28_000, FwdJitter: 30_000, RetMin: 24_000, RetJitter: 25_000},
			{Machine: "machine2", DriftPPM: 20, FwdMin: 40_000, FwdJitter: 35_000, RetMin: 30_000, RetJitter: 25_000}}}},
	{"three remote hosts, 18 tasks over ~100 s, idle 3–15 s, +35 / −25 / +60 ppm", 100, stracetest.RemoteConfig{Seed: 3, Tasks: 18, GapMin: 3_000_000_000, GapMean: 3_000_000_000, GapMax: 15_000_000_000,
		WallErr: 1_000_000, SamePids: true, AnchorEvry: 100_000_000,
		Hosts: []stracetest.RemoteHost{
			{Machine: "machine1", DriftPPM: 35, FwdMin: 30_000, FwdJitter: 30_000, RetMin: 25_000, RetJitter: 25_000},
			{Machine: "machine2", DriftPPM: -25, FwdMin: 35_000, FwdJitter: 40_000, RetMin: 28_000, RetJitter: 30_000},
			{Machine: "machine3", DriftPPM: 60, FwdMin: 25_000, FwdJitter: 25_000, RetMin: 30_000, RetJitter: 35_000}}}},
	{"two remote hosts, 60 tasks over ~60 s, rates wandering ±2 ppm", 60, stracetest.RemoteConfig{Seed: 4, Tasks: 60, GapMin: 700_000_000, GapMean: 300_000_000, GapMax: 2_000_000_000,
		WallErr: 1_000_000, SamePids: true, AnchorEvry: 100_000_000,
		Hosts: []stracetest.RemoteHost{
			{Machine: "machine1", DriftPPM: 30, Rate: stracetest.RateChange{WanderPPM: 2, WanderPeriod: 40_000_000_000}, FwdMin: 30_000, FwdJitter: 30_000, RetMin: 25_000, RetJitter: 25_000},
			{Machine: "machine2", DriftPPM: -40, Rate: stracetest.RateChange{StepPPM: 0.5, StepEvery: 10_000_000_000, WanderPPM: 1, WanderPeriod: 60_000_000_000}, FwdMin: 35_000, FwdJitter: 30_000, RetMin: 30_000, RetJitter: 25_000}}}},
	{"two remote hosts, 60 tasks over ~60 s, rates stepping ±5 ppm every 2 s", 60, stracetest.RemoteConfig{Seed: 5, Tasks: 60, GapMin: 700_000_000, GapMean: 300_000_000, GapMax: 2_000_000_000,
		WallErr: 1_000_000, SamePids: true, AnchorEvry: 100_000_000,
		Hosts: []stracetest.RemoteHost{
			{Machine: "machine1", DriftPPM: 15, Rate: stracetest.RateChange{StepPPM: 5, StepEvery: 2_000_000_000}, FwdMin: 30_000, FwdJitter: 30_000, RetMin: 25_000, RetJitter: 25_000},
			{Machine: "machine2", DriftPPM: -20, Rate: stracetest.RateChange{WanderPPM: 10, WanderPeriod: 30_000_000_000}, FwdMin: 35_000, FwdJitter: 30_000, RetMin: 30_000, RetJitter: 25_000}}}},
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
	hostErrs     []int64 // of the host spans alone
	wallErrs     []int64
	held         int
	limit        int64
	unbound      int // slices of a machine not placed by causality
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
	return measureTrace(t, out.Bytes(), sum, truth), sum, out.Bytes()
}

// measureTrace checks a trace's remote slices against the truth.
func measureTrace(t *testing.T, out []byte, sum *phasetrace.Summary, truth stracetest.RemoteTruth) map[string]*remoteResult {
	t.Helper()
	if err := sum.Spans.Check(); err != nil {
		t.Fatal(err)
	}
	tr, err := check.ReadBytes(out)
	if err != nil {
		t.Fatal(err)
	}
	fullNamed(t, tr)
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
	causal := map[string]bool{}
	for _, h := range sum.Hosts {
		res[h.Machine] = &remoteResult{limit: h.LimitNs}
		causal[h.Machine] = h.Method == "causal"
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
		if !causal[machine] {
			// Placed by its wall clock (or not at all): no host bound is
			// claimed, and the slice says how it was placed.
			if _, ok := args["host_bound_ns"]; ok {
				t.Errorf("%s %s on %s, not placed by causality, claims a host bound", s.Name, args["host_placement"], machine)
			}
			if _, ok := args["bound_ns"]; ok {
				t.Errorf("%s %s on %s, not placed by causality, claims a device bound (against its own clock, not the trace's)", s.Name, args["host_placement"], machine)
			}
			if p, _ := args["host_placement"].(string); p == "causal" || p == "" {
				t.Errorf("%s on %s: host_placement %q", s.Name, machine, p)
			}
			r.unbound++
			continue
		}
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
		if !want.Device {
			r.hostErrs = append(r.hostErrs, abs(e))
		}
		r.bounds = append(r.bounds, bound)
		if abs(e) <= bound {
			r.held++
		} else if len(r.errs)-r.held <= 5 {
			t.Errorf("%s %s run=%d: drawn at %d, truly %d: error %d ns > bound %d ns", machine, s.Name, run, s.TS, want.TrueStart, e, bound)
		}
	}
	return res
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
// README shows: go test -run TestRemoteAccuracy -v . Every machine is
// placed by causality; every bound holds; the maximum error is within the
// information limit, and that of the host spans at or below a plain causal
// aligner's (plainAlignerErrors); the median bound is at most 1.6 times
// the information limit (the rate may move by 10 ppm within 10 s, and the
// tasks are seconds apart).
func TestRemoteAccuracy(t *testing.T) {
	t.Parallel()
	var tab strings.Builder
	tab.WriteString("| scenario | machine | spans | wall shift: max / median error | causal: max / median error | host spans: causal max / plain aligner max | median bound | information limit | bound holds |\n")
	tab.WriteString("| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
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
			plain := plainAlignerErrors(ht, h.Machine, truth)
			fmt.Fprintf(&tab, "| %s | %s | %d | %s / %s | %s / %s | %s / %s | %s | %s | %.2f%% |\n", sc.name, h.Machine, len(r.errs),
				us(slices.Max(r.wallErrs)), us(median(r.wallErrs)), us(maxErr), us(median(r.errs)), us(slices.Max(r.hostErrs)), us(slices.Max(plain)),
				us(median(r.bounds)), us(limit), 100*float64(r.held)/float64(len(r.errs)))
			if slices.Max(r.hostErrs) > slices.Max(plain)+2 { // the reference's float rounding
				t.Errorf("%s: %s: host spans' max error %d ns above the plain causal aligner's %d ns", sc.name, h.Machine, slices.Max(r.hostErrs), slices.Max(plain))
			}
			if maxErr > limit {
				t.Errorf("%s: %s: max error %d ns above the information limit %d ns", sc.name, h.Machine, maxErr, limit)
			}
			if r.held != len(r.errs) {
				t.Errorf("%s: %s: the bound holds for %d of %d spans", sc.name, h.Machine, r.held, len(r.errs))
			}
			if mb := median(r.bounds); float64(mb) > 1.6*float64(limit) {
				t.Errorf("%s: %s: median bound %d ns above 1.6× the information limit %d ns", sc.name, h.Machine, mb, limit)
			}
		}
	}
	// The documents' tables are this one (the README's its headline
	// rows): go test -run TestRemoteAccuracy -update . rewrites them.
	stracetest.GoldenSection(t, "reduce/PLACEMENT.md", "remote accuracy", tab.String())
	stracetest.GoldenSection(t, "README.md", "remote accuracy", remoteBrief(tab.String()))
	t.Logf("\n%s", tab.String())
}

// remoteBrief keeps of the remote accuracy table its header and the rows
// of the scenarios the README shows: one steady host, and rates that step.
func remoteBrief(table string) string {
	var b strings.Builder
	for i, line := range strings.SplitAfter(table, "\n") {
		if i < 2 || strings.HasPrefix(line, "| one remote host,") || strings.Contains(line, "rates stepping") {
			b.WriteString(line)
		}
	}
	return b.String()
}

// plainAlignerErrors places a machine's host spans as a plain causal
// aligner does, a reference: the line of constant rate that keeps every
// run inside its task — the middle of the rates at which one exists, and
// the middle of the offsets at that rate — in floating point, and returns
// the error of each span's start and end (the larger).
func plainAlignerErrors(ht stracetest.RemoteHostTruth, machine string, truth stracetest.RemoteTruth) []int64 {
	ts := ht.Tasks
	x0 := float64(ts[0].Start)
	// For rate κ the offsets a with a + (1+κ)(x − x0) inside every task.
	offsets := func(k float64) (lo, hi float64) {
		lo, hi = math.Inf(-1), math.Inf(1)
		for _, b := range ts {
			lo = max(lo, float64(b.Sent)-(1+k)*(float64(b.Start)-x0))
			hi = min(hi, float64(b.Received)-(1+k)*(float64(b.End)-x0))
		}
		return lo, hi
	}
	gap := func(k float64) float64 { lo, hi := offsets(k); return hi - lo }
	// gap is concave: its peak by ternary search, then the feasible
	// rates' ends by bisection.
	a, b := -500e-6, 500e-6
	for range 200 {
		m1, m2 := a+(b-a)/3, b-(b-a)/3
		if gap(m1) < gap(m2) {
			a = m1
		} else {
			b = m2
		}
	}
	peak := (a + b) / 2
	k := peak
	if gap(peak) >= 0 {
		edge := func(lo, hi float64, feasibleAtLo bool) float64 {
			for range 200 {
				m := (lo + hi) / 2
				if (gap(m) >= 0) == feasibleAtLo {
					lo = m
				} else {
					hi = m
				}
			}
			return (lo + hi) / 2
		}
		k = (edge(-500e-6, peak, false) + edge(peak, 500e-6, true)) / 2
	}
	lo, hi := offsets(k)
	off := (lo + hi) / 2
	if math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		off = max(lo, hi)
	}
	line := func(x int64) int64 { return int64(math.Round(off + (1+k)*(float64(x)-x0))) }
	var errs []int64
	for key, sp := range truth.Spans {
		if key.Machine != machine || sp.Device {
			continue
		}
		errs = append(errs, max(abs(line(sp.Start)-sp.TrueStart), abs(line(sp.End)-sp.TrueEnd)))
	}
	return errs
}

// The scenarios span what the issue describes.
func TestRemoteScenarioShapes(t *testing.T) {
	t.Parallel()
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
		over := float64(last-first) / 1e9
		t.Logf("%s: %d logs, remote runs over %.1f s", sc.name, len(logs), over)
		if math.Abs(over-sc.overS) > 0.1*sc.overS {
			t.Errorf("%s: remote runs span %.1f s, not ~%.0f s", sc.name, over, sc.overS)
		}
	}
}

// A remote machine's log without the dispatching log: moved by its
// wall-clock anchor, every slice saying so, no bound claimed.
func TestRemoteWithoutDispatcher(t *testing.T) {
	t.Parallel()
	logs, _ := stracetest.GenerateRemote(remoteScenarios[1].cfg)
	var out bytes.Buffer
	sum, err := phasetrace.Convert(&out, remoteInputs(logs[1:]))
	if err != nil {
		t.Fatal(err)
	}
	if err := sum.Spans.Check(); err != nil {
		t.Fatal(err)
	}
	if len(sum.Hosts) != 2 {
		t.Fatalf("%d hosts in the summary, want 2", len(sum.Hosts))
	}
	for _, h := range sum.Hosts {
		// The first log's machine is the axis when no log dispatched.
		if h.Method != "wall" && h.Method != "unplaced" {
			t.Errorf("%s placed %s", h.Machine, h.Method)
		}
	}
	noHostBound(t, out.Bytes())
}

// noHostBound fails when a slice of trace claims a host bound.
func noHostBound(t *testing.T, trace []byte) {
	t.Helper()
	tr, err := check.ReadBytes(trace)
	if err != nil {
		t.Fatal(err)
	}
	fullNamed(t, tr)
	for _, s := range tr.Slices {
		for _, a := range s.Args {
			if a.Name == "host_bound_ns" {
				t.Fatalf("%s claims a host bound without causal evidence", s.Name)
			}
		}
	}
}

// A dispatching log without its completions bounds the remote clock from
// one side only: the machine falls back to its wall-clock anchor, and no
// slice claims a bound.
func TestRemoteOneSided(t *testing.T) {
	t.Parallel()
	logs, _ := stracetest.GenerateRemote(remoteScenarios[0].cfg)
	var kept []byte
	for _, line := range bytes.SplitAfter(logs[0].Log, []byte("\n")) {
		if !bytes.Contains(line, []byte("name=network1.complete ")) {
			kept = append(kept, line...)
		}
	}
	logs[0].Log = kept
	var out bytes.Buffer
	sum, err := phasetrace.Convert(&out, remoteInputs(logs))
	if err != nil {
		t.Fatal(err)
	}
	if err := sum.Spans.Check(); err != nil {
		t.Fatal(err)
	}
	for _, h := range sum.Hosts {
		if h.Method != "wall" {
			t.Errorf("%s placed %s, want wall", h.Machine, h.Method)
		}
	}
	noHostBound(t, out.Bytes())
}

// With the MPI transport the frame may leave during network1.dispatch:
// the bound still holds when the converter is told so.
func TestRemoteMPI(t *testing.T) {
	t.Parallel()
	cfg := remoteScenarios[0].cfg
	cfg.MPI, cfg.Tasks = true, 20
	logs, truth := stracetest.GenerateRemote(cfg)
	res, sum, _ := measureRemote(t, logs, truth, phasetrace.WithTransport(phasetrace.TransportMPI))
	if sum.Hosts[0].Transport != "mpi" || sum.Hosts[0].Method != "causal" {
		t.Errorf("host summary %+v", sum.Hosts[0])
	}
	r := res["machine1"]
	if r.held != len(r.errs) || len(r.errs) == 0 {
		t.Errorf("bound holds for %d of %d spans", r.held, len(r.errs))
	}
}

// randomRemote is a random remote scenario of seed: one or two machines,
// 2–21 tasks, any drift within ±100 ppm, latencies, spacing and transport.
func randomRemote(seed uint64) (stracetest.RemoteConfig, []phasetrace.Option) {
	r := rand.New(rand.NewPCG(seed, 77))
	hosts := make([]stracetest.RemoteHost, 1+r.IntN(2))
	for i := range hosts {
		hosts[i] = stracetest.RemoteHost{Machine: fmt.Sprintf("m%d", i+1), DriftPPM: r.Float64()*200 - 100,
			FwdMin: 20_000 + r.Int64N(150_000), FwdJitter: 1 + r.Int64N(150_000), RetMin: 20_000 + r.Int64N(150_000), RetJitter: 1 + r.Int64N(150_000)}
	}
	cfg := stracetest.RemoteConfig{Seed: 100 + seed}
	cfg.Hosts, cfg.Tasks = hosts, 2+r.IntN(20)
	cfg.GapMin, cfg.GapMean, cfg.GapMax = r.Int64N(2e9), r.Int64N(10e9), 40e9
	cfg.WallErr, cfg.SamePids, cfg.AnchorEvry = 1e6, r.IntN(2) == 0, []int64{0, 1e8, 1e9}[r.IntN(3)]
	cfg.MPI = r.IntN(3) == 0
	var opts []phasetrace.Option
	if cfg.MPI {
		opts = append(opts, phasetrace.WithTransport(phasetrace.TransportMPI))
	}
	return cfg, opts
}

// Property: whatever the drift, latencies and task spacing, every remote
// span lies within its published bound; a machine is placed by causality
// whenever its tasks prove it (checkOwnMachine), and else by its wall
// clock, with no bound.
func TestRemoteBoundAlwaysHolds(t *testing.T) {
	t.Parallel()
	n := 24
	if testing.Short() {
		n = 6
	}
	for seed := range uint64(n) {
		cfg, opts := randomRemote(seed)
		logs, truth := stracetest.GenerateRemote(cfg)
		res, sum, _ := measureRemote(t, logs, truth, opts...)
		for i, h := range sum.Hosts {
			checkOwnMachine(t, fmt.Sprintf("seed %d", seed), cfg, i, h, res[h.Machine])
		}
	}
}

// checkOwnMachine checks how the i-th machine of a generated session was
// placed: by causality, every bound holding, whenever it ran
// reduce.MinHostTasks tasks or more spaced irregularly (idle times of a
// mean of 0.5 s or more between tasks); by its wall clock, with no bound
// and a reason (too few tasks, or which worker it served is ambiguous),
// when it ran fewer; either, when its tasks came at a steadier pace
// (reduce.HostEvidence; beside foreign machines of the same pace, which
// worker it served may then be ambiguous).
func checkOwnMachine(t *testing.T, what string, cfg stracetest.RemoteConfig, i int, h phasetrace.HostSummary, r *remoteResult) {
	t.Helper()
	tasks := (cfg.Tasks + len(cfg.Hosts) - 1 - i) / len(cfg.Hosts) // task k went to host k mod len
	switch {
	case tasks < reduce.MinHostTasks:
		if h.Method != "wall" || h.Reason == "" || h.Bound.Count != 0 {
			t.Errorf("%s: %s, %d tasks: placed %s (%s), %d bounds", what, h.Machine, tasks, h.Method, h.Reason, h.Bound.Count)
		}
	case h.Method == "causal":
		if len(r.errs) == 0 || r.held != len(r.errs) {
			t.Errorf("%s: %s: bound holds for %d of %d spans", what, h.Machine, r.held, len(r.errs))
		}
	case cfg.GapMean < 500_000_000 && (h.Reason == phasetrace.ReasonHostRegular || h.Reason == phasetrace.ReasonHostAmbiguous):
		// Steady: another session of the same pace may fit as well.
		if h.Method != "wall" || h.Bound.Count != 0 {
			t.Errorf("%s: %s: placed %s, %d bounds", what, h.Machine, h.Method, h.Bound.Count)
		}
	default:
		t.Errorf("%s: %s, %d tasks, idle %d ns on average: placed %s: %s", what, h.Machine, tasks, cfg.GapMean, h.Method, h.Note)
	}
}

// Property: the dispatching log of one session with the remote logs of
// another of the same shape (other machines, other runs) never yields a
// published bound: every foreign machine is placed by its wall clock (or
// not at all), its slices say so, and the summary says why. Alongside the
// session's own machines, those are still placed by causality, their
// bounds holding.
func TestRemoteForeignSessions(t *testing.T) {
	t.Parallel()
	n := 16
	if testing.Short() {
		n = 4
	}
	reasons := map[phasetrace.Reason]int{}
	for seed := range uint64(n) {
		cfg, opts := randomRemote(seed)
		if seed%4 == 3 {
			cfg.GapMean = 0 // tasks at a steady pace: sessions alike but for their runs
		}
		// Foreign only.
		logs, truth := stracetest.GenerateForeignRemote(cfg, 1_000_000+seed)
		_, sum, _ := measureRemote(t, logs, truth, opts...)
		for _, h := range sum.Hosts {
			reasons[h.Reason]++
			if h.Method == "causal" || h.Reason == "" || h.Bound.Count != 0 || len(h.Workers) != 0 {
				t.Errorf("seed %d: foreign %s placed %s (%s, %d bounds, workers %v): %s", seed, h.Machine, h.Method, h.Reason, h.Bound.Count, h.Workers, h.Note)
			}
		}
		// The session's own machines and foreign ones together.
		fc := cfg
		fc.Hosts = slices.Clone(cfg.Hosts)
		for i := range fc.Hosts {
			fc.Hosts[i].Machine = "foreign-" + fc.Hosts[i].Machine
		}
		own, ownTruth := stracetest.GenerateRemote(cfg)
		foreign, foreignTruth := stracetest.GenerateForeignRemote(fc, 2_000_000+seed)
		for k, v := range foreignTruth.Spans {
			ownTruth.Spans[k] = v
		}
		for k, v := range foreignTruth.Hosts {
			ownTruth.Hosts[k] = v
		}
		res, sum, _ := measureRemote(t, append(own, foreign[1:]...), ownTruth, opts...)
		for i, h := range sum.Hosts {
			ht := ownTruth.Hosts[h.Machine]
			if ht.Worker < 0 {
				reasons[h.Reason]++
				if h.Method == "causal" || h.Bound.Count != 0 {
					t.Errorf("seed %d: foreign %s placed %s beside the session's own: %s", seed, h.Machine, h.Method, h.Note)
				}
				continue
			}
			checkOwnMachine(t, fmt.Sprintf("seed %d, beside foreign machines", seed), cfg, i, h, res[h.Machine])
		}
	}
	for r := range reasons {
		if !slices.Contains(phasetrace.Reasons(), r) {
			t.Errorf("foreign machines counted under %q, not a declared reason", r)
		}
	}
	t.Logf("foreign machines, by reason: %v", reasons)
}

// A dispatching log with the remote logs of another session (same shape,
// other machines): machine1's runs count as many as worker 1's tasks and
// fit them only with the remote clock 500 ppm slow, the edge of the
// allowed range. Not a clock, a wrong match: it is placed by its wall
// clock, every slice saying so, no bound published, and the summary says
// why.
func TestRemoteForeignSessionAtRateLimit(t *testing.T) {
	t.Parallel()
	cfg := remoteScenarios[1].cfg
	cfg.GapMin, cfg.GapMean, cfg.GapMax = 1e9, 2e9, 10e9
	logs, truth := stracetest.GenerateForeignRemote(cfg, 1000)
	_, sum, out := measureRemote(t, logs, truth)
	h := sum.Hosts[0]
	if h.Machine != "machine1" || h.Method != "wall" || h.Reason != phasetrace.ReasonHostRateAtLimit || h.Bound.Count != 0 || h.Workers != nil {
		t.Fatalf("machine1: %+v", h)
	}
	checkSummaryJSON(t, sum)
	for _, want := range []string{"worker 1", "drawn with -500.000 ppm", "no constant rate within ±2000.000 ppm carries every run inside its task"} {
		if !strings.Contains(h.Note, want) {
			t.Errorf("note %q does not say %q", h.Note, want)
		}
	}
	var text strings.Builder
	if err := sum.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "machine1 (machine1.log): wall: moved") || !strings.Contains(text.String(), "do not prove its runs served them") {
		t.Errorf("the summary does not say machine1 was moved by its wall clock, and why:\n%s", text.String())
	}
	noHostBound(t, out)
	tr, err := check.ReadBytes(out)
	if err != nil {
		t.Fatal(err)
	}
	fullNamed(t, tr)
	marked := 0
	for _, s := range tr.Slices {
		for _, a := range s.Args {
			if a.Name == "machine" && a.Value == "machine1" {
				marked++
				if p, _ := argOf(s, "host_placement"); p != "wall" {
					t.Fatalf("%s on machine1: host_placement %v", s.Name, p)
				}
			}
		}
	}
	if marked == 0 {
		t.Fatal("no slice of machine1 drawn")
	}
	processorAgrees(t, out, tr, sum)
}

// A dispatching log sending a task every second, with the remote log of
// another session of the same pace: its 5 runs fit the 5 tasks at 299 ppm,
// its wall clock 11 ms from where they put it (before the evidence rule:
// placed "causal", bounds of 355 µs, drawn 9.7 ms from the truth). The
// tasks, so evenly spaced, give 11 bits of evidence, not 16: placed by
// its wall clock, no bound.
func TestRemoteForeignSessionSteadyPace(t *testing.T) {
	t.Parallel()
	cfg := stracetest.RemoteConfig{Seed: 221, Tasks: 5, GapMin: 996840873, GapMax: 40e9, WallErr: 1e6, SamePids: true, AnchorEvry: 1e8,
		Hosts: []stracetest.RemoteHost{{Machine: "m1", DriftPPM: -51.444562228801956, FwdMin: 131475, FwdJitter: 9557, RetMin: 37183, RetJitter: 102535}}}
	logs, truth := stracetest.GenerateForeignRemote(cfg, 3_000_121)
	_, sum, out := measureRemote(t, logs, truth)
	if h := sum.Hosts[0]; h.Method != "wall" || h.Reason != phasetrace.ReasonHostRegular || h.Bound.Count != 0 {
		t.Errorf("m1: %s (%s): %s", h.Method, h.Reason, h.Note)
	}
	noHostBound(t, out)
	// Named, the match is the user's (here wrongly): placed by the tasks,
	// whose rates and brackets are all the rule then asks of them.
	sum, err := phasetrace.Convert(io.Discard, remoteInputs(logs), phasetrace.WithRemoteWorker("m1", 0))
	if err != nil {
		t.Fatal(err)
	}
	if h := sum.Hosts[0]; h.Method != "causal" {
		t.Errorf("m1 named: %s (%s): %s", h.Method, h.Reason, h.Note)
	}
}

// A machine whose wall clock is 200 ms off the dispatching host's: its
// tasks place it, but the anchors say another clock, so nothing proves
// the match (it may be another session's); it is placed by its wall
// clock. Named by the user, the match is theirs: placed by its tasks.
func TestRemoteWallDisagrees(t *testing.T) {
	t.Parallel()
	cfg := remoteScenarios[0].cfg
	cfg.Tasks, cfg.WallErr = 10, 0
	logs, truth := stracetest.GenerateRemote(cfg)
	// Move the remote machine's wall clock 200 ms.
	logs[1].Log = shiftWall(t, logs[1].Log, 200_000_000)
	_, sum, out := measureRemote(t, logs, truth)
	if h := sum.Hosts[0]; h.Method != "wall" || h.Reason != phasetrace.ReasonHostWallDisagrees {
		t.Errorf("unnamed: %+v", h)
	}
	checkSummaryJSON(t, sum)
	noHostBound(t, out)
	res, sum, _ := measureRemote(t, logs, truth, phasetrace.WithRemoteWorker("machine1", 0))
	if h, r := sum.Hosts[0], res["machine1"]; h.Method != "causal" || len(r.errs) == 0 || r.held != len(r.errs) {
		t.Errorf("named: %s (%s), bound holds for %d of %d spans", h.Method, h.Note, r.held, len(r.errs))
	}
}

// shiftWall moves every wall-clock anchor of a log by d ns.
func shiftWall(t *testing.T, log []byte, d int64) []byte {
	t.Helper()
	var out []byte
	n := 0
	for _, line := range bytes.SplitAfter(log, []byte("\n")) {
		if i := bytes.Index(line, []byte("wall_ns=")); i >= 0 {
			j := i + len("wall_ns=")
			k := j
			for k < len(line) && line[k] >= '0' && line[k] <= '9' {
				k++
			}
			v, err := strconv.ParseInt(string(line[j:k]), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			line = append(append(append([]byte(nil), line[:j]...), strconv.FormatInt(v+d, 10)...), line[k:]...)
			n++
		}
		out = append(out, line...)
	}
	if n == 0 {
		t.Fatal("no wall-clock anchor in the log")
	}
	return out
}

// The multi-machine trace loads into Perfetto's trace processor: no error
// or data loss, the same slices and flows as perfetto/check builds.
func TestRemoteInTheTraceProcessor(t *testing.T) {
	t.Parallel()
	if _, ok := processor.FromEnv(); !ok {
		t.Skipf("%s is not set: Perfetto's trace processor is not run", processor.EnvVar)
	}
	logs, truth := stracetest.GenerateRemote(remoteScenarios[1].cfg)
	_, sum, out := measureRemote(t, logs, truth)
	tr, err := check.ReadBytes(out)
	if err != nil {
		t.Fatal(err)
	}
	fullNamed(t, tr)
	if len(tr.Flows) == 0 || sum.Flows[phasetrace.FlowRemoteDispatchToRun] == 0 {
		t.Errorf("no remote flows: %v", sum.Flows)
	}
	processorAgrees(t, out, tr, sum)
}

// A Builder given the same values as the logs, each remote machine's by
// RemoteSpan and the Survey's Remote… methods, places them as Convert does.
func TestRemoteBuilder(t *testing.T) {
	t.Parallel()
	logs, truth := stracetest.GenerateRemote(remoteScenarios[1].cfg)
	type value struct {
		machine string
		rec     strace.Record
	}
	var values []value
	for _, l := range logs {
		r := strace.NewReader(bytes.NewReader(l.Log))
		for {
			rec, err := r.Read()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			rec.Span = rec.Span.Clone()
			values = append(values, value{l.Machine, rec})
		}
	}
	s := phasetrace.NewSurvey()
	for _, v := range values {
		switch {
		case v.rec.Kind == strace.KindSpan && v.machine == "":
			s.Span(v.rec.Span)
		case v.rec.Kind == strace.KindSpan:
			s.RemoteSpan(v.machine, v.rec.Span)
		case v.rec.Kind == strace.KindWallAnchor && v.machine == "":
			s.WallAnchor(v.rec.WallAnchor)
		case v.rec.Kind == strace.KindWallAnchor:
			s.RemoteWallAnchor(v.machine, v.rec.WallAnchor)
		case v.rec.Kind == strace.KindDeviceAnchor && v.machine == "":
			s.DeviceAnchor(v.rec.DeviceAnchor)
		case v.rec.Kind == strace.KindDeviceAnchor:
			s.RemoteDeviceAnchor(v.machine, v.rec.DeviceAnchor)
		}
	}
	var out bytes.Buffer
	b, err := phasetrace.NewBuilder(&out, s)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range values {
		switch {
		case v.rec.Kind != strace.KindSpan:
		case v.machine == "":
			b.Span(v.rec.Span)
		default:
			b.RemoteSpan(v.machine, v.rec.Span)
		}
	}
	sum, err := b.Close()
	if err != nil {
		t.Fatal(err)
	}
	res := measureTrace(t, out.Bytes(), sum, truth)
	_, want, _ := measureRemote(t, logs, truth)
	if len(sum.Hosts) != len(want.Hosts) {
		t.Fatalf("%d hosts, Convert finds %d", len(sum.Hosts), len(want.Hosts))
	}
	for i, h := range sum.Hosts {
		w := want.Hosts[i]
		if h.Method != "causal" || h.RatePPB != w.RatePPB || h.OffsetNs != w.OffsetNs || fmt.Sprint(h.Workers) != fmt.Sprint(w.Workers) {
			t.Errorf("Builder: %s %s worker %v offset %d rate %d; Convert: %s worker %v offset %d rate %d",
				h.Machine, h.Method, h.Workers, h.OffsetNs, h.RatePPB, w.Method, w.Workers, w.OffsetNs, w.RatePPB)
		}
		if r := res[h.Machine]; r == nil || len(r.errs) == 0 || r.held != len(r.errs) {
			t.Errorf("Builder: %s: bound checks %+v", h.Machine, r)
		}
	}
}

// FuzzConvertRemote: any dispatching log and any remote machine's log
// convert, without a panic, to a trace that reads back clean with every
// span accounted for.
func FuzzConvertRemote(f *testing.F) {
	logs, _ := stracetest.GenerateRemote(stracetest.RemoteConfig{Seed: 9, Tasks: 3, GapMin: 1e8, SamePids: true, WallErr: 1e6,
		Hosts: []stracetest.RemoteHost{{Machine: "machine1", DriftPPM: 50, FwdMin: 30e3, RetMin: 30e3}}})
	f.Add(logs[0].Log, logs[1].Log)
	f.Add(logs[0].Log[:len(logs[0].Log)/2], logs[1].Log[len(logs[1].Log)/3:])
	f.Add([]byte("[mono_ns=5][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=1 tid=1 inv=1 hid=0 depth=0 name=network1.dispatch ts=10 dur=5 worker_id=0 dispatch_id=1 endpoint_kind=remote_l3\n"),
		[]byte("[network1-daemon] m listening\n[mono_ns=9][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=1 tid=1 inv=0 hid=0 depth=0 name=node.graph_build ts=9223372036854775000 dur=5 run_id=1\n"))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		t.Parallel() // the seeds side by side; no effect while fuzzing
		var out bytes.Buffer
		sum, err := phasetrace.Convert(&out, []phasetrace.Input{phasetrace.Bytes("a.log", a), phasetrace.Bytes("b.log", b)})
		if err != nil {
			t.Fatalf("Convert failed on data: %v", err)
		}
		tr := wholeTrace(t, out.Bytes(), sum)
		causal := map[string]bool{}
		for _, h := range sum.Hosts {
			switch h.Method {
			case "causal":
				causal[h.Machine] = true
			case "wall", "unplaced":
			default:
				t.Fatalf("%s placed %q", h.Machine, h.Method)
			}
		}
		// A bound is published only by a causally placed machine, and
		// never below zero.
		for _, sl := range tr.Slices {
			var machine string
			var bound any
			for _, a := range sl.Args {
				switch a.Name {
				case "machine":
					machine, _ = a.Value.(string)
				case "host_bound_ns":
					bound = a.Value
				}
			}
			if bound == nil {
				continue
			}
			if b, ok := bound.(int64); !ok || b < 0 || !causal[machine] {
				t.Fatalf("%s on %q: host_bound_ns %v", sl.Name, machine, bound)
			}
		}
	})
}

// A remote log copied while the daemon still ran ends early: its runs pair
// with the first tasks, and are placed all the same.
func TestRemoteLogCutShort(t *testing.T) {
	t.Parallel()
	logs, truth := stracetest.GenerateRemote(remoteScenarios[0].cfg)
	lines := bytes.SplitAfter(logs[1].Log, []byte("\n"))
	logs[1].Log = bytes.Join(lines[:len(lines)/3], nil)
	res, sum, _ := measureRemote(t, logs, truth)
	if h := sum.Hosts[0]; h.Method != "causal" || h.Tasks == 0 || h.Tasks >= 50 {
		t.Fatalf("host summary %+v", h)
	}
	if r := res["machine1"]; len(r.errs) == 0 || r.held != len(r.errs) {
		t.Errorf("bound holds for %d of %d spans", r.held, len(r.errs))
	}
}

// A small two-machine conversion, pinned: the trace as the trace processor
// would build it, and the summary (go test -run TestRemoteGolden -update .).
func TestRemoteGolden(t *testing.T) {
	t.Parallel()
	logs, _ := stracetest.GenerateRemote(stracetest.RemoteConfig{Seed: 11, Tasks: 8, GapMin: 5e8, GapMean: 5e8, GapMax: 2e9, WallErr: 1e6, SamePids: true, AnchorEvry: 2e8,
		Hosts: []stracetest.RemoteHost{{Machine: "machine1", DriftPPM: 30, FwdMin: 30e3, FwdJitter: 20e3, RetMin: 25e3, RetJitter: 20e3},
			{Machine: "machine2", DriftPPM: -40, FwdMin: 35e3, FwdJitter: 20e3, RetMin: 25e3, RetJitter: 20e3}}})
	_, sum, out := convert(t, remoteInputs(logs))
	goldenConversion(t, "remote", out, sum)
}
