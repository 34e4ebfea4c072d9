package processor

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/phasetrace/phasetrace/perfetto"
	"github.com/phasetrace/phasetrace/perfetto/check"
)

func TestFromEnv(t *testing.T) {
	t.Setenv(EnvVar, "")
	if sh, ok := FromEnv(); ok || sh != nil {
		t.Errorf("FromEnv() = %v, %v with %s empty", sh, ok, EnvVar)
	}
	t.Setenv(EnvVar, "/opt/tp")
	if sh, ok := FromEnv(); !ok || sh.Path != "/opt/tp" {
		t.Errorf("FromEnv() = %v, %v", sh, ok)
	}
}

const goodOutput = `"kind","name","idx","severity","source","value"
"stat","clock_sync_cache_miss",-1,"info","analysis",3
"stat","misplaced_end_event",-1,"data_loss","analysis",2
"stat","ftrace_cpu_overrun_end",1,"data_loss","trace",4
"count","slices",-1,"","",15
"count","unended",-1,"","",1
"count","max_depth",-1,"","",2
"count","slice_ts",-1,"","",75003345000
"count","slice_dur",-1,"","",-1
"count","slice_depth",-1,"","",9
"count","slice_ts_depth",-1,"","",12
"count","flows",-1,"","",1
"count","flow_sum",-1,"","",3
"count","counters",-1,"","",3
"count","counter_sum",-1,"","",30
"count","tracks",-1,"","",9
`

func TestParse(t *testing.T) {
	t.Parallel()
	r, err := parse([]byte(goodOutput))
	if err != nil {
		t.Fatal(err)
	}
	want := &Result{
		Stats: []Stat{
			{Name: "clock_sync_cache_miss", Idx: -1, Severity: "info", Source: "analysis", Value: 3},
			{Name: "misplaced_end_event", Idx: -1, Severity: "data_loss", Source: "analysis", Value: 2},
			{Name: "ftrace_cpu_overrun_end", Idx: 1, Severity: "data_loss", Source: "trace", Value: 4},
		},
		Slices: 15, Unended: 1, MaxDepth: 2,
		SliceSums: SliceSums{TS: 75003345000, Dur: -1, Depth: 9, TSDepth: 12},
		Flows:     1, FlowSum: 3, Counters: 3, CounterSum: 30, Tracks: 9,
	}
	want.Problems = want.Stats[1:]
	if diff := cmp.Diff(want, r); diff != "" {
		t.Errorf("parse (-want +got):\n%s", diff)
	}
	if err := r.Err(); !errors.Is(err, ErrProblems) || !strings.Contains(err.Error(), "ftrace_cpu_overrun_end[1] = 4 (data_loss, trace)") {
		t.Errorf("Err() = %v", err)
	}
	if got := r.Value("misplaced_end_event"); got != 2 {
		t.Errorf("Value = %d", got)
	}

	// CRLF line ends and a blank line are read too.
	if _, err := parse([]byte(strings.ReplaceAll(goodOutput, "\n", "\r\n") + "\r\n")); err != nil {
		t.Errorf("CRLF: %v", err)
	}
	for name, out := range map[string]string{
		"empty":            "",
		"another header":   strings.Replace(goodOutput, `"kind"`, `"what"`, 1),
		"a figure missing": strings.Replace(goodOutput, `"count","tracks",-1,"","",9`+"\n", "", 1),
		"a figure twice":   goodOutput + `"count","tracks",-1,"","",9` + "\n",
		"an unknown row":   goodOutput + `"other","x",-1,"","",9` + "\n",
		"not a number":     strings.Replace(goodOutput, ",15\n", ",[NULL]\n", 1),
		"too many fields":  strings.Replace(goodOutput, ",15\n", ",15,16\n", 1),
	} {
		if r, err := parse([]byte(out)); err == nil {
			t.Errorf("%s: no error, read %+v", name, r)
		}
	}
}

// fakeShell writes a script that stands in for trace_processor_shell.
func fakeShell(t *testing.T, script string) *Shell {
	t.Helper()
	path := filepath.Join(t.TempDir(), "trace_processor_shell")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	return &Shell{Path: path}
}

func TestLoadRunsOneQueryAndCleansUp(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh to stand in for the trace processor")
	}
	args := filepath.Join(t.TempDir(), "args")
	// The fake keeps its arguments and the trace it was given, and prints
	// canned output with the shell's stderr chatter.
	sh := fakeShell(t, `echo "$1" "$2" "$3" > `+args+`
cat "$3" > `+args+`.trace
printf 'Loading trace: 0.00 MB\r' >&2
cat <<'EOF'
`+goodOutput+`EOF
`)
	r, err := sh.Load([]byte("trace bytes"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Slices != 15 {
		t.Errorf("read %+v", r)
	}
	got, _ := os.ReadFile(args)
	f := strings.Fields(string(got))
	if len(f) != 3 || f[0] != "-q" {
		t.Fatalf("arguments %q, want -q query trace", got)
	}
	if trace, _ := os.ReadFile(args + ".trace"); string(trace) != "trace bytes" {
		t.Errorf("the shell read the trace %q", trace)
	}
	if _, err := os.Stat(filepath.Dir(f[2])); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the temporary directory %s is left behind (%v)", filepath.Dir(f[2]), err)
	}
}

func TestLoadFailureQuotesStderr(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh to stand in for the trace processor")
	}
	sh := fakeShell(t, `printf 'Loading trace: 0.00 MB\r' >&2
echo "failed to read trace file: Unknown trace type provided (ERR:fmt)" >&2
exit 1
`)
	_, err := sh.Load([]byte("junk"))
	if !errors.Is(err, ErrRun) || !strings.Contains(err.Error(), "Unknown trace type provided") || strings.Contains(err.Error(), "Loading trace") {
		t.Errorf("Load: %v, want ErrRun quoting the shell's error without its progress lines", err)
	}
	sh = fakeShell(t, "echo 'not what was asked'\n")
	if _, err := sh.Load(nil); !errors.Is(err, ErrRun) {
		t.Errorf("Load of unreadable output: %v, want ErrRun", err)
	}
	if _, err := (&Shell{Path: filepath.Join(t.TempDir(), "missing")}).Load(nil); !errors.Is(err, ErrRun) {
		t.Errorf("Load with no shell: %v, want ErrRun", err)
	}
}

func sampleTrace(t *testing.T) []byte {
	var buf bytes.Buffer
	w := perfetto.NewWriter(&buf)
	th := w.Thread(perfetto.ThreadSpec{Pid: 1, Tid: 2, Name: "main"})
	c := w.CounterTrack(th, perfetto.CounterSpec{Name: "c"})
	id := perfetto.FlowIDOf("x")
	w.Slice(th, perfetto.Slice{Name: "a", TS: 1_700_000_000_000_000_010, Dur: 5, Flows: []perfetto.FlowID{id}})
	w.Slice(th, perfetto.Slice{Name: "a.child", TS: 1_700_000_000_000_000_010, Dur: 5, Depth: 1})
	w.Instant(th, perfetto.Instant{Name: "i", TS: 1_700_000_000_000_000_012})
	w.Slice(th, perfetto.Slice{Name: "b", TS: 1_700_000_000_000_000_020, Dur: 5, EndFlows: []perfetto.FlowID{id}})
	w.Counter(c, 1_700_000_000_000_000_012, 3)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestFiguresAndCompare(t *testing.T) {
	t.Parallel()
	tr, err := check.ReadBytes(sampleTrace(t))
	if err != nil {
		t.Fatal(err)
	}
	f := Figures(tr)
	const ts = 1_700_000_000_000_000_000 % Modulus
	want := &Result{
		Slices: 4, MaxDepth: 2,
		SliceSums: SliceSums{
			TS:      4*ts + 10 + 10 + 12 + 20,
			Dur:     15,
			Depth:   0 + 1 + 2 + 0,
			TSDepth: (ts+10)*1%Modulus + (ts+12)*2%Modulus,
		},
		Flows: 1, FlowSum: (ts + 10) + 2*(ts+20),
		Counters: 1, CounterSum: ts + 12,
	}
	if diff := cmp.Diff(want, f); diff != "" {
		t.Errorf("Figures (-want +got):\n%s", diff)
	}
	if ms := Compare(tr, f); len(ms) != 0 {
		t.Errorf("Compare with check's own figures: %v", ms)
	}
	if err := Agree(tr, f); err != nil {
		t.Errorf("Agree: %v", err)
	}

	r := *f
	r.Slices++
	r.Stats = []Stat{{Name: "misplaced_end_event", Idx: -1, Severity: "data_loss", Value: 1}, {Name: "interned_data_tokenizer_errors", Idx: -1, Severity: "info", Value: 1}, {Name: "clock_sync_cache_miss", Idx: -1, Severity: "info", Value: 1}}
	r.Problems = r.Stats[:1]
	wantMs := []Mismatch{
		{What: "slices", Check: 4, Processor: 5},
		{What: "stat interned_data_tokenizer_errors", Check: 0, Processor: 1},
		{What: "stat misplaced_end_event", Check: 0, Processor: 1},
	}
	if diff := cmp.Diff(wantMs, Compare(tr, &r)); diff != "" {
		t.Errorf("Compare (-want +got):\n%s", diff)
	}
	err = Agree(tr, &r)
	var m Mismatch
	if !errors.Is(err, ErrProblems) || !errors.Is(err, ErrDisagree) || !errors.As(err, &m) || m.What != "slices" {
		t.Errorf("Agree: %v", err)
	}
}

// TestProblemNames keeps the lists of check's problem names here in step
// with check's source, and, with a trace processor at hand, with its stats.
func TestProblemNames(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("../*.go")
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{}
	re := regexp.MustCompile(`problem\("([a-z_]+)"`)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range re.FindAllSubmatch(b, -1) {
			used[string(m[1])] = true
		}
	}
	if len(used) < 20 {
		t.Fatalf("found only %d problem names in check's source: %v", len(used), used)
	}
	for name := range used {
		if sharedStats[name] == checkOnly[name] {
			t.Errorf("check reports %q: list it in exactly one of sharedStats and checkOnly", name)
		}
	}
	for _, m := range []map[string]bool{sharedStats, checkOnly} {
		for name := range m {
			if !used[name] {
				t.Errorf("%q is listed but check never reports it", name)
			}
		}
	}

	sh, ok := FromEnv()
	if !ok {
		t.Skip("set " + EnvVar + " to a trace_processor_shell to compare the names with its stats")
	}
	dir := t.TempDir()
	trace, query := filepath.Join(dir, "t.pftrace"), filepath.Join(dir, "q.sql")
	if err := os.WriteFile(trace, sampleTrace(t), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(query, []byte("select distinct name from stats;\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(sh.Path, "-q", query, trace).Output()
	if err != nil {
		t.Fatal(err)
	}
	stats := map[string]bool{}
	for _, l := range strings.Split(string(out), "\n") {
		stats[strings.Trim(strings.TrimSpace(l), `"`)] = true
	}
	for name := range used {
		if stats[name] != sharedStats[name] {
			t.Errorf("%q: a stat of the trace processor: %v; listed in sharedStats: %v", name, stats[name], sharedStats[name])
		}
	}
	if !slices.Contains(strings.Fields(string(out)), `"misplaced_end_event"`) {
		t.Errorf("the stats table looks wrong:\n%.500s", out)
	}
}
