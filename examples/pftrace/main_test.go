package main

import (
	"bytes"
	"compress/zlib"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"google.golang.org/protobuf/proto"

	"github.com/phasetrace/phasetrace"
	"github.com/phasetrace/phasetrace/perfetto"
	"github.com/phasetrace/phasetrace/perfetto/open"
	pb "github.com/phasetrace/phasetrace/proto"
	"github.com/phasetrace/phasetrace/strace/stracetest"
)

// testdata is the absolute path of testdata, for tests that change directory.
var testdata, _ = filepath.Abs("testdata")

// writeTrace writes a small trace — two processes, threads, a device lane,
// nested slices with every kind of argument, an instant, a flow, a counter —
// and returns its path.
func writeTrace(t *testing.T) string {
	t.Helper()
	var buf bytes.Buffer
	w := perfetto.NewWriter(&buf)
	node := w.Process(perfetto.ProcessSpec{Pid: 10, Name: "node"})
	sched := w.Thread(perfetto.ThreadSpec{Pid: 10, Tid: 11, Name: "scheduler"})
	chip := w.Process(perfetto.ProcessSpec{Pid: 20, Name: "chip"})
	run := w.Thread(perfetto.ThreadSpec{Pid: 20, Tid: 21, Name: "runner"})
	dev := w.Track(chip, perfetto.TrackSpec{Name: "device 0"})
	cnt := w.CounterTrack(node, perfetto.CounterSpec{Name: "queue depth"})
	id := perfetto.FlowIDOf("run 3")
	w.Slice(sched, perfetto.Slice{Name: "node.dispatch", TS: 1000, Dur: 100, Flows: []perfetto.FlowID{id},
		Args: []perfetto.Arg{perfetto.Uint("inv", 3), perfetto.Bool("retry", false)}})
	w.Slice(run, perfetto.Slice{Name: "chip.run", TS: 1200, Dur: 2000, EndFlows: []perfetto.FlowID{id},
		Args: []perfetto.Arg{perfetto.Uint("inv", 3), perfetto.Uint("hid", math.MaxUint64), perfetto.Int("slot", -1), perfetto.String("model", "qwen3 14b")}})
	w.Slice(run, perfetto.Slice{Name: "chip.run.bind", TS: 1200, Dur: 300, Depth: 1,
		Args: []perfetto.Arg{perfetto.Float("cpu_ratio", 0.75), perfetto.Dict("seg", perfetto.Int("on", 200), perfetto.Int("off", 100)), perfetto.Array("cores", perfetto.Int("", 1), perfetto.Int("", 2))}})
	w.Slice(run, perfetto.Slice{Name: "chip.run.runner_run", TS: 1500, Dur: 1600, Depth: 1})
	w.Instant(run, perfetto.Instant{Name: "chip.ready", TS: 3100})
	w.Slice(dev, perfetto.Slice{Name: "device_wall", TS: 1600, Dur: 1400, Args: []perfetto.Arg{perfetto.String("placed", "aligned")}})
	w.Slice(sched, perfetto.Slice{Name: "node.submit", TS: 4000, Dur: 50})
	w.Counter(cnt, 1000, 2)
	w.Counter(cnt, 4000, 0)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "small.pftrace")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// runArgs runs the command.
func runArgs(args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = (&command{stdout: &o, stderr: &e}).run(context.Background(), args)
	return code, o.String(), e.String()
}

// golden compares got with testdata/name.golden; -update (the flag
// stracetest declares) rewrites it. On a mismatch the new output is kept
// beside it as .got.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join(testdata, name+".golden")
	if stracetest.Updating() {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		os.WriteFile(strings.TrimSuffix(path, ".golden")+".got", []byte(got), 0o644)
		t.Errorf("%s (-want +got):\n%s", path, diff)
	}
}

func TestGolden(t *testing.T) {
	trace := writeTrace(t)
	t.Chdir(filepath.Dir(trace)) // file names in the output are as given
	for _, c := range []struct {
		name string
		args []string
	}{
		{"check", []string{"check", "small.pftrace"}},
		{"stats", []string{"stats", "small.pftrace"}},
		{"slices", []string{"slices", "small.pftrace"}},
		{"slices-dur", []string{"slices", "small.pftrace", "-sort", "dur", "-top", "3"}},
		{"slices-filter", []string{"slices", "-name", "chip.run*", "-track", "run*", "-from", "1400", "-to", "2000", "-min-dur", "500", "small.pftrace", "-sort=name"}},
		{"dump", []string{"dump", "small.pftrace"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := runArgs(c.args...)
			if code != exitOK || stderr != "" {
				t.Fatalf("%q: exit %d, stderr %q", c.args, code, stderr)
			}
			golden(t, c.name, stdout)
		})
	}
}

// Argument values print in their own type, never as 3u.
func TestArgValues(t *testing.T) {
	t.Parallel()
	trace := writeTrace(t)
	_, out, _ := runArgs("slices", trace, "-name", "chip.run")
	if !strings.Contains(out, `inv=3 hid=18446744073709551615 slot=-1 model="qwen3 14b"`) || strings.Contains(out, "3u") {
		t.Errorf("slices: %s", out)
	}
	_, out, _ = runArgs("slices", "-json", trace, "-name", "chip.run*")
	var rows []struct {
		Name string
		Args map[string]json.RawMessage
	}
	if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 3 {
		t.Fatalf("slices -json: %v\n%s", err, out)
	}
	want := map[string]string{"inv": "3", "hid": "18446744073709551615", "slot": "-1", "model": `"qwen3 14b"`,
		"cpu_ratio": "0.75", "seg": `{"on":200,"off":100}`, "cores": "[1,2]"}
	for _, r := range rows {
		for k, v := range r.Args {
			var c bytes.Buffer
			json.Compact(&c, v)
			if want[k] != c.String() {
				t.Errorf("%s: %s = %s, want %s", r.Name, k, v, want[k])
			}
		}
	}
	if !strings.Contains(out, `"args": {
      "inv": 3,
      "hid": 18446744073709551615,`) {
		t.Errorf("arguments not in their order, or not exact:\n%s", out)
	}
}

func TestJSONShapes(t *testing.T) {
	t.Parallel()
	trace := writeTrace(t)
	for _, c := range []struct {
		args []string
		into any
		ok   func(v any) bool
	}{
		{[]string{"check", "-json", trace}, &[]struct {
			File     string
			Problems []struct{ Name string }
		}{}, func(v any) bool {
			r := *v.(*[]struct {
				File     string
				Problems []struct{ Name string }
			})
			return len(r) == 1 && r[0].File == trace && r[0].Problems != nil && len(r[0].Problems) == 0
		}},
		{[]string{"stats", trace, "-json"}, &stats{}, func(v any) bool {
			s := v.(*stats)
			return s.Total.Slices == 6 && s.Total.Instants == 1 && s.Total.Flows == 1 && s.Total.Counters == 2 && len(s.Processes) == 2 && s.Processes[1].Slices == 4
		}},
		{[]string{"dump", trace, "-json"}, &struct {
			Slices   []struct{ Name string }
			Counters []struct{ Value json.RawMessage }
			Flows    []struct{ From, To int }
		}{}, func(v any) bool {
			d := v.(*struct {
				Slices   []struct{ Name string }
				Counters []struct{ Value json.RawMessage }
				Flows    []struct{ From, To int }
			})
			return len(d.Slices) == 7 && len(d.Counters) == 2 && string(d.Counters[0].Value) == "2" && len(d.Flows) == 1
		}},
	} {
		code, stdout, stderr := runArgs(c.args...)
		if code != exitOK {
			t.Errorf("%q: exit %d: %s", c.args, code, stderr)
			continue
		}
		if err := json.Unmarshal([]byte(stdout), c.into); err != nil || !c.ok(c.into) {
			t.Errorf("%q: %v:\n%s", c.args, err, stdout)
		}
	}
}

func TestExitCodes(t *testing.T) {
	t.Parallel()
	trace := writeTrace(t)
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.pftrace")
	os.WriteFile(bad, []byte{0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f}, 0o644) // a packet longer than the file
	// A trace with a problem: an event on a track never described.
	b, err := proto.Marshal(&pb.Trace{Packet: []*pb.TracePacket{{
		Timestamp:                       proto.Uint64(10),
		OptionalTrustedPacketSequenceId: &pb.TracePacket_TrustedPacketSequenceId{TrustedPacketSequenceId: 1},
		Data: &pb.TracePacket_TrackEvent{TrackEvent: &pb.TrackEvent{
			Type: pb.TrackEvent_TYPE_INSTANT.Enum(), TrackUuid: proto.Uint64(9), NameField: &pb.TrackEvent_Name{Name: "a"},
		}},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	problem := filepath.Join(dir, "problem.pftrace")
	os.WriteFile(problem, b, 0o644)
	for _, c := range []struct {
		args   []string
		code   int
		stdout string // in stdout
		stderr string // in stderr
	}{
		{nil, exitUsage, "", "usage: pftrace"},
		{[]string{"-h"}, exitOK, "", "usage: pftrace"},
		{[]string{"bogus"}, exitUsage, "", `unknown subcommand "bogus"`},
		{[]string{"stats"}, exitUsage, "", "want FILE, got 0 files"},
		{[]string{"stats", trace, trace}, exitUsage, "", "got 2 files"},
		{[]string{"check"}, exitUsage, "", "want FILE ..., got 0"},
		{[]string{"slices", trace, "-bogus"}, exitUsage, "", "flag provided but not defined: -bogus"},
		{[]string{"slices", trace, "-sort", "size"}, exitUsage, "", `-sort "size"`},
		{[]string{"slices", trace, "-name", "[x"}, exitUsage, "", `-name "[x"`},
		{[]string{"slices", trace, "-from", "10", "-to", "5"}, exitUsage, "", "-from 10 is after -to 5"},
		{[]string{"slices", trace, "-top", "-1"}, exitUsage, "", "-top -1"},
		{[]string{"open", trace, "-port", "-3"}, exitUsage, "", "-port -3"},
		{[]string{"stats", filepath.Join(dir, "missing")}, exitFail, "", "no such file"},
		{[]string{"dump", bad}, exitFail, "", "malformed trace"},
		{[]string{"check", trace, problem}, exitFail, "small.pftrace: ok\n" + problem + ": track_event_unknown_track: event \"a\" on track 9", ""},
		{[]string{"check", bad, trace}, exitFail, "malformed trace", ""},
		{[]string{"check", "--", trace}, exitOK, "ok", ""},
	} {
		code, stdout, stderr := runArgs(c.args...)
		if code != c.code || !strings.Contains(stdout, c.stdout) || !strings.Contains(stderr, c.stderr) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit %d, %q, %q", c.args, code, stdout, stderr, c.code, c.stdout, c.stderr)
		}
	}
}

// pftrace SUBCOMMAND -h lists that subcommand's flags only.
func TestSubcommandHelp(t *testing.T) {
	t.Parallel()
	for sub, c := range map[string]struct{ has, lacks []string }{
		"slices": {[]string{"-name glob", "-track glob", "-from ns", "-to ns", "-min-dur ns", "-arg KEY=VALUE", "-sort key", "-top N", "-json"}, []string{"-port"}},
		"open":   {[]string{"-port port"}, []string{"-json", "-sort"}},
		"check":  {[]string{"-json"}, []string{"-sort", "-port"}},
	} {
		code, _, stderr := runArgs(sub, "-h")
		if code != exitOK || !strings.HasPrefix(stderr, "usage: pftrace "+sub) {
			t.Errorf("%s -h: exit %d: %s", sub, code, stderr)
		}
		for _, w := range c.has {
			if !strings.Contains(stderr, w) {
				t.Errorf("%s -h lacks %q:\n%s", sub, w, stderr)
			}
		}
		for _, w := range c.lacks {
			if strings.Contains(stderr, w) {
				t.Errorf("%s -h lists %q:\n%s", sub, w, stderr)
			}
		}
	}
}

func TestVersion(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"-version"}, {"slices", "x", "-version"}} {
		code, stdout, stderr := runArgs(args...)
		if code != exitOK || !strings.HasPrefix(stdout, "pftrace ") || stderr != "" {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", args, code, stdout, stderr)
		}
	}
}

func TestOpen(t *testing.T) {
	t.Parallel()
	trace := writeTrace(t)
	want, _ := os.ReadFile(trace)
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	got := make(chan []byte, 1)
	var stderr bytes.Buffer
	c := &command{stdout: io.Discard, stderr: &stderr, browser: func(ui string) error {
		_, arg, _ := strings.Cut(ui, "#!/?url=")
		u, _, _ := strings.Cut(arg, "&")
		go func() {
			req, _ := http.NewRequest(http.MethodGet, u, nil)
			req.Header.Set("Origin", open.DefaultOrigin)
			resp, err := (&http.Client{Transport: tr}).Do(req)
			if err != nil {
				t.Error(err)
				got <- nil
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			got <- b
		}()
		return nil
	}}
	if code := c.run(context.Background(), []string{"open", "-port", "0", trace}); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if b := <-got; !bytes.Equal(b, want) {
		t.Errorf("the UI fetched %d bytes, the trace is %d", len(b), len(want))
	}
	if !strings.Contains(stderr.String(), "/small.pftrace&referrer=phasetrace") || !strings.Contains(stderr.String(), "the UI has fetched the trace") {
		t.Errorf("stderr: %s", stderr.String())
	}

	// Ctrl-C while serving: exit 0.
	ctx, cancel := context.WithCancel(context.Background())
	stderr.Reset()
	c.browser = func(string) error { cancel(); return os.ErrNotExist }
	if code := c.run(ctx, []string{"open", trace, "-port=0"}); code != exitOK || !strings.Contains(stderr.String(), "stopped serving") {
		t.Errorf("interrupted: exit %d: %s", code, stderr.String())
	}
}

// slices lists every slice by default, those on tracks whose names hold
// "/" too; a glob's * matches "/"; filters that select nothing say so and
// exit 1.
func TestSlicesDefaultEverySlice(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	w := perfetto.NewWriter(&buf)
	node := w.Process(perfetto.ProcessSpec{Pid: 10, Name: "node"})
	facade := w.Track(node, perfetto.TrackSpec{Name: "orchestrator / facade"})
	plain := w.Track(node, perfetto.TrackSpec{Name: "scheduler"})
	w.Slice(facade, perfetto.Slice{Name: "l3/submit", TS: 1000, Dur: 100})
	w.Slice(plain, perfetto.Slice{Name: "dispatch", TS: 2000, Dur: 100})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	trace := filepath.Join(t.TempDir(), "t.pftrace")
	os.WriteFile(trace, buf.Bytes(), 0o644)
	var nb bytes.Buffer
	nw := perfetto.NewWriter(&nb)
	nw.Process(perfetto.ProcessSpec{Pid: 10, Name: "node"})
	if err := nw.Close(); err != nil {
		t.Fatal(err)
	}
	none := filepath.Join(t.TempDir(), "none.pftrace")
	os.WriteFile(none, nb.Bytes(), 0o644)
	for _, c := range []struct {
		args   []string
		code   int
		rows   []string // names listed
		stderr string
	}{
		{[]string{"slices", trace}, exitOK, []string{"l3/submit", "dispatch"}, ""},
		{[]string{"slices", "-track", "orchestrator / *", trace}, exitOK, []string{"l3/submit"}, ""},
		{[]string{"slices", "-track", "*", trace}, exitOK, []string{"l3/submit", "dispatch"}, ""},
		{[]string{"slices", "-name", "l3*", trace}, exitOK, []string{"l3/submit"}, ""},
		{[]string{"slices", "-track", "nothing*", trace}, exitFail, nil, "none of the 2 slices of " + trace + " matches the filters"},
		{[]string{"slices", "-min-dur", "1000", "-json", trace}, exitFail, nil, "matches the filters"},
		{[]string{"slices", "-track", "x", none}, exitOK, nil, none + " holds no slice"},
	} {
		code, stdout, stderr := runArgs(c.args...)
		var rows []string
		for _, n := range []string{"l3/submit", "dispatch"} {
			if strings.Contains(stdout, n) {
				rows = append(rows, n)
			}
		}
		if code != c.code || strings.Join(rows, ",") != strings.Join(c.rows, ",") || !strings.Contains(stderr, c.stderr) || c.stderr == "" && stderr != "" {
			t.Errorf("%q: exit %d, rows %q, stderr %q; want exit %d, %q, %q", c.args, code, rows, stderr, c.code, c.rows, c.stderr)
		}
	}
}

// check (and every subcommand) refuses an empty file: it holds no packet,
// so it is not a trace.
func TestEmptyFileIsNoTrace(t *testing.T) {
	t.Parallel()
	empty := filepath.Join(t.TempDir(), "empty.pftrace")
	os.WriteFile(empty, nil, 0o644)
	for _, sub := range []string{"check", "stats", "slices", "dump"} {
		code, stdout, stderr := runArgs(sub, empty)
		if code != exitFail || strings.Contains(stdout, "ok") || !strings.Contains(stdout+stderr, "not a trace: it holds no packet") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", sub, code, stdout, stderr)
		}
	}
}

// A compressed bundle that inflates past the 256 MiB a packet may hold
// is an error, not a trace read up to the cut.
func TestCheckInflatePastLimit(t *testing.T) {
	t.Parallel()
	if testing.Short() || raceEnabled {
		t.Skip("inflates 256 MiB")
	}
	var z bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&z, zlib.BestSpeed)
	// A valid packet first, so that what is read before the cut parses.
	pkt, _ := proto.Marshal(&pb.Trace{Packet: []*pb.TracePacket{{Timestamp: proto.Uint64(1)}}})
	zw.Write(pkt)
	io.CopyN(zw, zeros{}, 256<<20) // past the limit
	zw.Close()
	b, err := proto.Marshal(&pb.Trace{Packet: []*pb.TracePacket{{Data: &pb.TracePacket_CompressedPackets{CompressedPackets: z.Bytes()}}}})
	if err != nil {
		t.Fatal(err)
	}
	bomb := filepath.Join(t.TempDir(), "bomb.pftrace")
	os.WriteFile(bomb, b, 0o644)
	code, stdout, stderr := runArgs("check", bomb)
	if code != exitFail || strings.Contains(stdout, ": ok") || !strings.Contains(stdout, "inflate past 268435456 bytes") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// writeSplit converts a generated log split into parts of at most
// maxSlices slices, written in dir as run.pftrace and run.partNNN.pftrace,
// and returns the overview's path and the conversion's parts.
func writeSplit(t *testing.T, dir string, maxSlices int) (string, []phasetrace.PartSummary) {
	t.Helper()
	var log bytes.Buffer
	if err := stracetest.Generate(&log, stracetest.Realistic(64<<10)); err != nil {
		t.Fatal(err)
	}
	overview := filepath.Join(dir, "run.pftrace")
	open := func(part int) (io.WriteCloser, string, error) {
		name := phasetrace.PartName("run.pftrace", part)
		f, err := os.Create(filepath.Join(dir, name))
		return f, name, err
	}
	var ov bytes.Buffer
	sum, err := phasetrace.Convert(&ov, []phasetrace.Input{phasetrace.Bytes("run.log", log.Bytes())}, phasetrace.WithSplit(maxSlices, open))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(overview, ov.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if sum.Split == nil || len(sum.Split.Parts) < 3 {
		t.Fatalf("want 3 parts or more, got %+v", sum.Split)
	}
	return overview, sum.Split.Parts
}

// partsTable parses the rows of the parts table in stats' output.
func partsTable(t *testing.T, out string) []partStats {
	t.Helper()
	_, table, ok := strings.Cut(out, "\npart ")
	if !ok {
		return nil
	}
	table, _, _ = strings.Cut(table, "\n\n")
	var parts []partStats
	for _, line := range strings.Split(table, "\n")[1:] {
		var p partStats
		var file string
		if _, err := fmt.Sscan(line, &p.Part, &p.Name, &p.Slices, &p.Invocations, &p.Start, &p.End, &file); err != nil {
			t.Fatalf("parts row %q: %v", line, err)
		}
		p.Exists = file == "ok"
		if file != "ok" && file != "missing" {
			t.Errorf("parts row %q: file %q", line, file)
		}
		parts = append(parts, p)
	}
	return parts
}

// stats lists the parts of a split trace's overview as the conversion
// wrote them, says which part files are beside it, and how to open one.
func TestStatsParts(t *testing.T) {
	dir := t.TempDir()
	overview, sum := writeSplit(t, dir, 100)
	var want []partStats
	for _, p := range sum {
		want = append(want, partStats{Part: p.Part, Name: p.Name, Slices: p.Slices, Invocations: p.Invocations,
			Path: filepath.Join(dir, p.Name), Exists: true})
	}
	// The times are the overview's: the stretch each part covers, within
	// the extent of its slices.
	within := func(t *testing.T, got []partStats) {
		t.Helper()
		for i, p := range got {
			if i < len(sum) && (p.Start < sum[i].Start || p.End > sum[i].End || p.Start > p.End) {
				t.Errorf("part %d covers [%d, %d], its slices [%d, %d]", p.Part, p.Start, p.End, sum[i].Start, sum[i].End)
			}
		}
	}
	ignoreTimes := cmpopts.IgnoreFields(partStats{}, "Start", "End")

	code, out, stderr := runArgs("stats", overview)
	if code != exitOK || stderr != "" {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	got := partsTable(t, out)
	if diff := cmp.Diff(want, got, ignoreTimes, cmpopts.IgnoreFields(partStats{}, "Path")); diff != "" {
		t.Errorf("parts (-want +got):\n%s\n%s", diff, out)
	}
	within(t, got)
	if line := "\nopen a part: pftrace open " + filepath.Join(dir, sum[0].Name) + "\n"; !strings.HasSuffix(out, line) {
		t.Errorf("output does not end with %q:\n%s", line, out)
	}

	code, out, stderr = runArgs("stats", "-json", overview)
	var st stats
	if err := json.Unmarshal([]byte(out), &st); code != exitOK || err != nil {
		t.Fatalf("-json: exit %d, %v: %s\n%s", code, err, stderr, out)
	}
	if diff := cmp.Diff(want, st.Parts, ignoreTimes); diff != "" {
		t.Errorf("-json parts (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(got, st.Parts, cmpopts.IgnoreFields(partStats{}, "Path")); diff != "" {
		t.Errorf("-json and the table differ (-table +json):\n%s", diff)
	}

	// A part file removed is said missing.
	if err := os.Remove(want[1].Path); err != nil {
		t.Fatal(err)
	}
	want[1].Exists = false
	_, out, _ = runArgs("stats", overview)
	if diff := cmp.Diff(want, partsTable(t, out), ignoreTimes, cmpopts.IgnoreFields(partStats{}, "Path")); diff != "" {
		t.Errorf("a part removed (-want +got):\n%s", diff)
	}
	_, out, _ = runArgs("stats", "-json", overview)
	st = stats{}
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, st.Parts, ignoreTimes); diff != "" {
		t.Errorf("-json, a part removed (-want +got):\n%s", diff)
	}

	// Given as a relative name, the parts are looked for in its directory.
	t.Chdir(filepath.Dir(dir))
	_, out, _ = runArgs("stats", filepath.Join(filepath.Base(dir), "run.pftrace"))
	if line := "pftrace open " + filepath.Join(filepath.Base(dir), sum[0].Name) + "\n"; !strings.HasSuffix(out, line) || len(partsTable(t, out)) != len(sum) {
		t.Errorf("relative: want %d parts and %q:\n%s", len(sum), line, out)
	}
}

// A trace without a parts track has no parts section, nor one whose
// "parts" track is not at the top or holds no integer part argument; the
// overflow lanes of the parts track list parts too.
func TestStatsPartsTrack(t *testing.T) {
	t.Parallel()
	plain := writeTrace(t)
	for _, args := range [][]string{{"stats", plain}, {"stats", "-json", plain}} {
		_, out, _ := runArgs(args...)
		if strings.Contains(out, "part") {
			t.Errorf("%q lists parts:\n%s", args, out)
		}
	}

	var buf bytes.Buffer
	w := perfetto.NewWriter(&buf)
	node := w.Process(perfetto.ProcessSpec{Pid: 10, Name: "node"})
	nested := w.Track(node, perfetto.TrackSpec{Name: phasetrace.PartsTrack})
	w.Slice(nested, perfetto.Slice{Name: "nested.pftrace", TS: 100, Dur: 10, Args: []perfetto.Arg{perfetto.Int("part", 7)}})
	other := w.Track(perfetto.Track{}, perfetto.TrackSpec{Name: "partsx"})
	w.Slice(other, perfetto.Slice{Name: "other.pftrace", TS: 100, Dur: 10, Args: []perfetto.Arg{perfetto.Int("part", 8)}})
	parts := w.Track(perfetto.Track{}, perfetto.TrackSpec{Name: phasetrace.PartsTrack})
	w.Slice(parts, perfetto.Slice{Name: "t.part002.pftrace", TS: 100, Dur: 50, Args: []perfetto.Arg{perfetto.Int("part", 2), perfetto.Int("slices", 5), perfetto.Int("invocations", 1)}})
	w.Slice(parts, perfetto.Slice{Name: "t.part001.pftrace", TS: 120, Dur: 50, Args: []perfetto.Arg{perfetto.Uint("part", 1), perfetto.Int("slices", 4), perfetto.Int("invocations", 2)}}) // overlaps: on an overflow lane
	w.Slice(parts, perfetto.Slice{Name: "t.part009.pftrace", TS: 200, Dur: 50, Args: []perfetto.Arg{perfetto.String("part", "9")}})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	trace := filepath.Join(dir, "t.pftrace")
	os.WriteFile(trace, buf.Bytes(), 0o644)
	os.WriteFile(filepath.Join(dir, "t.part002.pftrace"), nil, 0o644)
	_, out, _ := runArgs("stats", trace)
	if !strings.Contains(out, `"parts (overflow 1)"`) {
		t.Fatalf("no overflow lane:\n%s", out)
	}
	want := []partStats{
		{Part: 1, Name: "t.part001.pftrace", Slices: 4, Invocations: 2, Start: 120, End: 170},
		{Part: 2, Name: "t.part002.pftrace", Slices: 5, Invocations: 1, Start: 100, End: 150, Exists: true},
	}
	if diff := cmp.Diff(want, partsTable(t, out)); diff != "" {
		t.Errorf("parts (-want +got):\n%s\n%s", diff, out)
	}
}

// -arg KEY=VALUE selects slices by an argument's value as slices prints
// it (a string also unquoted, a dictionary's entry as DICT.KEY); every
// -arg must match.
func TestSlicesArgFilter(t *testing.T) {
	t.Parallel()
	trace := writeTrace(t)
	for _, c := range []struct {
		args  []string
		names []string // slices listed; none: exit 1
	}{
		{[]string{"inv=3"}, []string{"node.dispatch", "chip.run"}},
		{[]string{"inv=3", "slot=-1"}, []string{"chip.run"}},
		{[]string{"inv=3", "slot=0"}, nil},
		{[]string{"hid=18446744073709551615"}, []string{"chip.run"}},
		{[]string{"model=qwen3 14b"}, []string{"chip.run"}},
		{[]string{`model="qwen3 14b"`}, []string{"chip.run"}},
		{[]string{"model=qwen3"}, nil},
		{[]string{"retry=false"}, []string{"node.dispatch"}},
		{[]string{"cpu_ratio=0.75"}, []string{"chip.run.bind"}},
		{[]string{"seg.on=200"}, []string{"chip.run.bind"}},
		{[]string{"seg.off=200"}, nil},
		{[]string{"seg={on=200 off=100}"}, []string{"chip.run.bind"}},
		{[]string{"cores=[1 2]"}, []string{"chip.run.bind"}},
		{[]string{"placed=aligned"}, []string{"device_wall"}},
		{[]string{"inv="}, nil},
	} {
		args := []string{"slices", trace, "-json"}
		for _, a := range c.args {
			args = append(args, "-arg", a)
		}
		code, stdout, stderr := runArgs(args...)
		var rows []struct{ Name string }
		if err := json.Unmarshal([]byte(stdout), &rows); err != nil {
			t.Fatalf("%q: %v\n%s", args, err, stdout)
		}
		var names []string
		for _, r := range rows {
			names = append(names, r.Name)
		}
		wantCode := exitOK
		if c.names == nil {
			wantCode = exitFail
		}
		if diff := cmp.Diff(c.names, names); diff != "" || code != wantCode {
			t.Errorf("-arg %q: exit %d (want %d), %s, names (-want +got):\n%s", c.args, code, wantCode, stderr, diff)
		}
		if c.names == nil && !strings.Contains(stderr, "none of the 7 slices") {
			t.Errorf("-arg %q: stderr %q", c.args, stderr)
		}
	}
	for _, bad := range []string{"inv", "=3"} {
		if code, _, stderr := runArgs("slices", trace, "-arg", bad); code != exitUsage || !strings.Contains(stderr, "want KEY=VALUE") {
			t.Errorf("-arg %q: exit %d, %s", bad, code, stderr)
		}
	}
}

// Each slice shows its process: the pid of its thread, or of the process
// its track is under; "-" (and no "pid" in JSON) for a track of none.
func TestSlicesPid(t *testing.T) {
	t.Parallel()
	trace := writeTrace(t)
	_, stdout, _ := runArgs("slices", "-json", trace)
	var rows []struct {
		Name string
		Pid  *int32
	}
	if err := json.Unmarshal([]byte(stdout), &rows); err != nil {
		t.Fatal(err)
	}
	pids := map[string]int32{}
	for _, r := range rows {
		if r.Pid == nil {
			t.Fatalf("%s has no pid:\n%s", r.Name, stdout)
		}
		pids[r.Name] = *r.Pid
	}
	want := map[string]int32{"node.dispatch": 10, "node.submit": 10, "chip.run": 20, "chip.run.bind": 20, "chip.run.runner_run": 20, "chip.ready": 20, "device_wall": 20}
	if diff := cmp.Diff(want, pids); diff != "" {
		t.Errorf("pids (-want +got):\n%s", diff)
	}

	none := troubledTrace(t) // tracks under no process
	_, stdout, _ = runArgs("slices", "-json", "-name", "outer", none)
	if strings.Contains(stdout, "pid") {
		t.Errorf("a slice of no process has a pid:\n%s", stdout)
	}
	_, stdout, _ = runArgs("slices", "-name", "outer", none)
	if !strings.Contains(stdout, "10  10   -    a      outer") {
		t.Errorf("a slice of no process:\n%s", stdout)
	}
}

// slices -name matches a slice's label or its full_name argument, the whole
// dotted name phasetrace keeps beside the label.
func TestSlicesNameMatchesFullName(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	w := perfetto.NewWriter(&b)
	th := w.Thread(perfetto.ThreadSpec{Pid: 1, Tid: 1, Name: "main"})
	w.Slice(th, perfetto.Slice{Name: "chip.run", TS: 100, Dur: 900, Args: []perfetto.Arg{perfetto.String("full_name", "chip.run")}})
	w.Slice(th, perfetto.Slice{Name: "graph_build", TS: 200, Dur: 100, Args: []perfetto.Arg{perfetto.String("full_name", "chip.run.runner_run.device_wall.graph_build")}})
	w.Slice(th, perfetto.Slice{Name: "node.graph_build", TS: 400, Dur: 100})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	trace := filepath.Join(t.TempDir(), "labels.pftrace")
	if err := os.WriteFile(trace, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		glob string
		want []string
	}{
		{"chip.run", []string{"chip.run"}},
		{"chip.run*", []string{"chip.run", "graph_build"}},
		{"graph_build", []string{"graph_build"}},
		{"*graph_build", []string{"graph_build", "node.graph_build"}},
		{"runner_run", nil},
	} {
		code, out, _ := runArgs("slices", "-json", trace, "-name", c.glob)
		var rows []struct{ Name string }
		if err := json.Unmarshal([]byte(out), &rows); err != nil {
			t.Fatalf("-name %q: %v\n%s", c.glob, err, out)
		}
		var got []string
		for _, r := range rows {
			got = append(got, r.Name)
		}
		if d := cmp.Diff(c.want, got); d != "" || (code == exitOK) != (len(c.want) > 0) {
			t.Errorf("-name %q: exit %d, slices (-want +got):\n%s", c.glob, code, d)
		}
	}
}
