package phasetrace_test

import (
	"bytes"
	stdcmp "cmp"
	"encoding/csv"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/phasetrace/phasetrace"
	"github.com/phasetrace/phasetrace/perfetto/check"
	"github.com/phasetrace/phasetrace/perfetto/check/processor"
	"github.com/phasetrace/phasetrace/reduce/analysis"
	"github.com/phasetrace/phasetrace/strace"
	"github.com/phasetrace/phasetrace/strace/stracetest"
)

// counterLogs are generated logs of every shape the counters meet:
// pipelined runs, prewarm roots that last across many runs, parents
// written first, several ranks, huge ids, a wrapping producer.
var counterLogs = []struct {
	name string
	cfg  genConfig
}{
	{"plain", genConfig{Seed: 1, Rounds: 12, AnchorEvry: 50_000_000}},
	{"pipelined+prewarm", genConfig{Seed: 2, Rounds: 16, AnchorEvry: 50_000_000, Pipelined: true, Prewarm: true, Legacy: true}},
	{"ext+4 ranks", genConfig{Seed: 3, Rounds: 10, AnchorEvry: 50_000_000, Ext: true, Ranks: 4, HostExact: true}},
	{"parents first", genConfig{Seed: 4, Rounds: 10, AnchorEvry: 50_000_000, HostParentsFirst: true, DeviceChildrenFirst: true, Pipelined: true, Prewarm: true}},
	{"huge ids, runtime ns", genConfig{Seed: 5, Rounds: 9, AnchorEvry: 50_000_000, HugeIDs: true, RuntimeNs: true, Damage: stracetest.Damage{Quirks: true}}},
	{"sparse anchors", genConfig{Seed: 6, Rounds: 8, AnchorEvry: 50_000_000, SparseAnchors: true, Pipelined: true}},
}

// counterTracks returns the counter tracks of tr whose name starts with
// prefix, by uuid, with the pid of the process each is under.
func counterTracks(t *testing.T, tr *check.Trace, prefix string) map[uint64]check.Track {
	t.Helper()
	out := map[uint64]check.Track{}
	for _, k := range tr.Tracks {
		if k.Kind != "counter" || !strings.HasPrefix(k.Name, prefix) {
			continue
		}
		p, ok := tr.Track(k.Parent)
		if !ok || p.Kind != "process" {
			t.Fatalf("counter track %q is not under a process (its parent: %+v)", k.Name, p)
		}
		k.Pid = p.Pid
		out[k.UUID] = k
	}
	return out
}

// pidOf returns the pid of the process a track is under.
func pidOf(tr *check.Trace, uuid uint64) int32 {
	for {
		k, ok := tr.Track(uuid)
		if !ok {
			return 0
		}
		if k.Kind == "process" || k.Kind == "thread" {
			return k.Pid
		}
		uuid = k.Parent
	}
}

// TestCountersAgreeWithTPOT checks that the mean of each callable's
// counter, read back from the trace, is the TPOT table's chip.run mean for
// its hid, exactly, with as many values as the table has invocations —
// but the 0 that ends the track of a callable run once in a process, at
// its run's end, which it checks.
func TestCountersAgreeWithTPOT(t *testing.T) {
	t.Parallel()
	for _, c := range counterLogs {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			log := generated(c.cfg)
			var out bytes.Buffer
			sum, err := phasetrace.Convert(&out, []phasetrace.Input{phasetrace.Bytes("gen.log", log)})
			if err != nil {
				t.Fatal(err)
			}
			tr := wholeTrace(t, out.Bytes(), sum)
			l, err := analysis.ReadLog(bytes.NewReader(log))
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]analysis.DurStats{}
			for _, cl := range analysis.AnalyzeTPOT(l.Spans).Callables {
				if cl.Run.N > 0 {
					want["0x"+strconv.FormatUint(cl.Hid, 16)] = analysis.DurStats{N: cl.Run.N, Mean: cl.Run.Mean}
				}
			}
			tracks := counterTracks(t, tr, "chip.run ns · hid ")
			type acc struct{ n, sum int64 }
			by := map[string]*acc{}
			values := map[uint64][]check.Counter{}
			for _, v := range tr.Counters {
				values[v.Track] = append(values[v.Track], v)
			}
			for _, v := range tr.Counters {
				k, ok := tracks[v.Track]
				if !ok {
					continue
				}
				if v.Float {
					t.Fatalf("%s: a float value %v", k.Name, v.Value)
				}
				switch vs := values[v.Track]; {
				case len(vs) == 1:
					t.Errorf("%s of pid %d: one value %v, want the end of its run after it", k.Name, k.Pid, vs)
				case len(vs) == 2 && v == vs[1] && v.Int == 0 && v.TS == vs[0].TS+vs[0].Int:
					continue // the end of a callable run once
				}
				hid := strings.TrimPrefix(k.Name, "chip.run ns · hid ")
				a := by[hid]
				if a == nil {
					a = &acc{}
					by[hid] = a
				}
				a.n++
				a.sum += v.Int
			}
			got := map[string]analysis.DurStats{}
			for hid, a := range by {
				got[hid] = analysis.DurStats{N: int(a.n), Mean: a.sum / a.n}
			}
			if len(want) == 0 {
				t.Fatal("the log has no callable")
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("the callables' counters (-TPOT table +read back):\n%s", d)
			}
		})
	}
}

// point is a counter value, or a slice's start and duration, in a process.
type point struct {
	Pid   int32
	Track string
	TS, V int64
}

func sortPoints(ps []point) {
	slices.SortFunc(ps, func(a, b point) int {
		switch {
		case a.Pid != b.Pid:
			return int(a.Pid) - int(b.Pid)
		case a.Track != b.Track:
			return strings.Compare(a.Track, b.Track)
		case a.TS != b.TS:
			return stdcmp.Compare(a.TS, b.TS)
		}
		return stdcmp.Compare(a.V, b.V)
	})
}

// TestDeviceWallCounters checks that each device's counter holds, value
// for value, the durations of its device_wall slices at their starts.
func TestDeviceWallCounters(t *testing.T) {
	t.Parallel()
	for _, c := range counterLogs {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tr, _ := convertWhole(t, []phasetrace.Input{phasetrace.Bytes("gen.log", generated(c.cfg))})
			var want, got []point
			for _, s := range tr.Slices {
				if s.Name != strace.SpanDeviceWall {
					continue
				}
				lane, _ := tr.Track(s.Track)
				group, _ := tr.Track(lane.Parent)
				want = append(want, point{pidOf(tr, s.Track), group.Name, s.TS, s.Dur})
			}
			tracks := counterTracks(t, tr, "device ")
			for _, v := range tr.Counters {
				if k, ok := tracks[v.Track]; ok {
					got = append(got, point{k.Pid, strings.TrimSuffix(k.Name, " device_wall ns"), v.TS, v.Int})
				}
			}
			if len(want) == 0 {
				t.Fatal("no device_wall drawn")
			}
			sortPoints(want)
			sortPoints(got)
			if d := quickDiff(want, got); d != "" {
				t.Errorf("device_wall counters (-slices +counters):\n%s", d)
			}
		})
	}
}

// TestRunsInFlightCounters checks each process's runs in flight against a
// count made by brute force from the trace's root slices (inFlightAgrees),
// in the generated logs and in one whose 5 000 roots come within 5 ms,
// more than the events held (the oldest are written early).
func TestRunsInFlightCounters(t *testing.T) {
	t.Parallel()
	for _, c := range counterLogs {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tr, sum := convertWhole(t, []phasetrace.Input{phasetrace.Bytes("gen.log", generated(c.cfg))})
			inFlightAgrees(t, tr, sum)
		})
	}
	t.Run("5000 threads", func(t *testing.T) {
		t.Parallel()
		tr, sum := convertWhole(t, []phasetrace.Input{phasetrace.Bytes("threads.log", stracetest.Threads(5000, 1))})
		inFlightAgrees(t, tr, sum)
	})
}

// inFlightAgrees checks the runs in flight of a trace: at each time a
// root starts or ends, the number of roots of its process that have
// started and not ended, written where it changes.
func inFlightAgrees(t *testing.T, tr *check.Trace, sum *phasetrace.Summary) {
	t.Helper()
	if len(sum.CountersNotDrawn) > 0 {
		t.Errorf("counters not drawn: %v", sum.CountersNotDrawn)
	}
	type event struct{ ts, d int64 }
	events := map[int32][]event{}
	for _, s := range tr.Slices {
		depth, _ := argOf(s, "depth")
		_, dev := argOf(s, "device_ts")
		if depth != int64(0) || dev || !isSpanSlice(s) || !strace.FamilyOf(s.Name).HasInvocation() {
			continue
		}
		pid := pidOf(tr, s.Track)
		events[pid] = append(events[pid], event{s.TS, 1}, event{s.TS + s.Dur, -1})
	}
	var want, got []point
	for pid, es := range events {
		slices.SortFunc(es, func(a, b event) int { return stdcmp.Compare(a.ts, b.ts) })
		var n, last int64
		for i, e := range es {
			n += e.d
			if i+1 < len(es) && es[i+1].ts == e.ts {
				continue
			}
			if n != last {
				want = append(want, point{pid, "runs in flight", e.ts, n})
				last = n
			}
		}
	}
	tracks := counterTracks(t, tr, "runs in flight")
	for _, v := range tr.Counters {
		if k, ok := tracks[v.Track]; ok {
			got = append(got, point{k.Pid, k.Name, v.TS, v.Int})
		}
	}
	if len(want) == 0 {
		t.Fatal("no root drawn")
	}
	sortPoints(want)
	sortPoints(got)
	if d := quickDiff(want, got); d != "" {
		t.Errorf("runs in flight (-brute force +counters):\n%s", d)
	}
}

// TestCountersInTheTraceProcessor loads a trace into Perfetto's trace
// processor and checks that every counter track is a process counter track
// of the process perfetto/check reads it under, with as many values.
func TestCountersInTheTraceProcessor(t *testing.T) {
	t.Parallel()
	sh, ok := processor.FromEnv()
	if !ok {
		t.Skipf("%s is not set: Perfetto's trace processor is not run", processor.EnvVar)
	}
	cfg := counterLogs[1].cfg
	tr, sum, out := convert(t, []phasetrace.Input{phasetrace.Bytes("gen.log", generated(cfg))})
	processorAgrees(t, out, tr, sum)
	type row struct {
		Name   string
		Pid, N int64
	}
	var want []row
	n := map[uint64]int64{}
	for _, c := range tr.Counters {
		n[c.Track]++
	}
	for _, k := range counterTracks(t, tr, "") {
		want = append(want, row{k.Name, int64(k.Pid), n[k.UUID]})
	}
	dir := t.TempDir()
	trace, query := filepath.Join(dir, "trace.pftrace"), filepath.Join(dir, "q.sql")
	if err := os.WriteFile(trace, out, 0o600); err != nil {
		t.Fatal(err)
	}
	q := "select t.name, ifnull(p.pid, -1), (select count(*) from counter c where c.track_id = t.id) " +
		"from counter_track t left join process_counter_track pt using(id) left join process p on pt.upid = p.upid;\n"
	if err := os.WriteFile(query, []byte(q), 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := exec.Command(sh.Path, "-q", query, trace).Output()
	if err != nil {
		t.Fatalf("trace processor: %v", err)
	}
	recs, err := csv.NewReader(bytes.NewReader(res)).ReadAll()
	if err != nil || len(recs) == 0 {
		t.Fatalf("trace processor printed %q: %v", res, err)
	}
	var got []row
	for _, r := range recs[1:] {
		if len(r) != 3 {
			t.Fatalf("trace processor printed %q", r)
		}
		pid, err1 := strconv.ParseInt(r[1], 10, 64)
		cnt, err2 := strconv.ParseInt(r[2], 10, 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("trace processor printed %q", r)
		}
		got = append(got, row{r[0], pid, cnt})
	}
	order := func(rs []row) {
		slices.SortFunc(rs, func(a, b row) int {
			if c := strings.Compare(a.Name, b.Name); c != 0 {
				return c
			}
			return stdcmp.Compare(a.Pid, b.Pid)
		})
	}
	order(want)
	order(got)
	if len(want) == 0 {
		t.Fatal("no counter track")
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("counter tracks (-perfetto/check +trace processor: name, pid of its process, values):\n%s", d)
	}
}

// convertWhole converts inputs and reads the trace back once, with
// wholeTrace's checks: a clean read-back and an account that holds.
func convertWhole(t *testing.T, inputs []phasetrace.Input, opts ...phasetrace.Option) (*check.Trace, *phasetrace.Summary) {
	t.Helper()
	var out bytes.Buffer
	sum, err := phasetrace.Convert(&out, inputs, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return wholeTrace(t, out.Bytes(), sum), sum
}
