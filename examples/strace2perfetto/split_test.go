package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/phasetrace/phasetrace"
	"github.com/phasetrace/phasetrace/perfetto/check"
	"github.com/phasetrace/phasetrace/perfetto/check/processor"
	"github.com/phasetrace/phasetrace/strace/stracetest"
)

// generatedLog is a generated log of many runs, with clock anchors,
// hand-offs and bind segments.
func generatedLog(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := stracetest.Generate(&b, stracetest.Config{Seed: 11, Rounds: 40, AnchorEvry: 2_000_000, Legacy: true, Ext: true}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// sliceKeys is the multiset of a trace's slices, by name, start and
// duration.
func sliceKeys(tr *check.Trace) map[string]int {
	m := map[string]int{}
	for _, s := range tr.Slices {
		m[fmt.Sprintf("%s@%d+%d", s.Name, s.TS, s.Dur)]++
	}
	return m
}

// readChecked reads a trace file back, requiring perfetto/check and, when
// PHASETRACE_TRACE_PROCESSOR names it, Perfetto's trace processor to read
// it with no problem.
func readChecked(t *testing.T, path string) *check.Trace {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	whole := decodeWhole(t, b) // its conversion instant too, as the trace processor reads it
	if sh, ok := processor.FromEnv(); ok {
		r, err := sh.Load(b)
		if err != nil {
			t.Fatalf("%s: trace processor: %v", path, err)
		}
		if err := processor.Agree(whole, r); err != nil {
			t.Errorf("%s: Perfetto's trace processor disagrees: %v", path, err)
		}
	}
	return logsOnly(whole)
}

// hiddenFiles lists the hidden files the command writes to before a
// rename.
func hiddenFiles(t *testing.T, dir string) []string {
	t.Helper()
	var hs []string
	for _, n := range names(t, dir) {
		if strings.HasPrefix(n, ".strace2perfetto-") {
			hs = append(hs, n)
		}
	}
	return hs
}

// TestSplit: -split N writes parts of at most N slices (or one invocation
// alone) beside the overview, each readable with no problem; the parts'
// slices are the slices of the trace written without -split; the overview
// names, for every invocation, a part file that is there; the summary
// JSON lists the parts, and the summary on stderr ends with where the
// overview and the parts are.
func TestSplit(t *testing.T) {
	for _, tc := range []struct {
		name string
		log  []byte // nil: the embedded sample
		max  int
	}{
		{"sample", nil, 60},
		{"sample, one slice a part", nil, 1},
		{"generated", generatedLog(t), 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := chdir(t)
			var logs []string
			var stdin io.Reader // nil: a terminal, the sample is converted
			if tc.log != nil {
				os.WriteFile("gen.log", tc.log, 0o644)
				logs, stdin = []string{"gen.log"}, strings.NewReader("")
			}
			if code, _, stderr := runArgs(append([]string{"-q", "-o", "plain.pftrace"}, logs...), stdin); code != exitOK {
				t.Fatalf("plain: exit %d: %s", code, stderr)
			}
			plain := readChecked(t, "plain.pftrace")
			code, _, stderr := runArgs(append([]string{"-split", fmt.Sprint(tc.max), "-o", "run.pftrace", "-summary-json", "sum.json"}, logs...), stdin)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			var sum phasetrace.Summary
			b, _ := os.ReadFile("sum.json")
			if err := json.Unmarshal(b, &sum); err != nil {
				t.Fatal(err)
			}
			if sum.Split == nil || len(sum.Split.Parts) < 2 || sum.Split.MaxSlices != tc.max {
				t.Fatalf("the summary's split: %+v", sum.Split)
			}
			n := len(sum.Split.Parts)
			union := map[string]int{}
			for i, ps := range sum.Split.Parts {
				path := phasetrace.PartName("run.pftrace", i+1)
				tr := readChecked(t, path)
				slices := 0 // not the anomalies' instants
				for _, s := range tr.Slices {
					if !s.Instant {
						slices++
					}
				}
				if ps.Part != i+1 || ps.Name != path || ps.Slices != int64(slices) {
					t.Errorf("part %d: the summary says %+v; %s holds %d slices", i+1, ps, path, slices)
				}
				if len(tr.Slices) > tc.max && ps.Invocations != 1 {
					t.Errorf("%s holds %d slices, over %d, and %d invocations", path, len(tr.Slices), tc.max, ps.Invocations)
				}
				for k, c := range sliceKeys(tr) {
					union[k] += c
				}
			}
			if want := sliceKeys(plain); !maps.Equal(want, union) { // cmp.Diff to explain a difference: it walks a large map slowly
				t.Errorf("the parts' slices differ from the plain conversion's (-plain +parts):\n%s", cmp.Diff(want, union))
			}
			// The overview names parts that are there: an invocation's
			// root names its part's file (a string), a slice of the parts
			// track is named as the file (its part argument the number).
			ov := readChecked(t, "run.pftrace")
			files := names(t, dir)
			roots, listed := 0, 0
			for _, s := range ov.Slices {
				for _, a := range s.Args {
					if a.Name != "part" {
						continue
					}
					file, root := a.Value.(string)
					if root {
						roots++
					} else {
						listed++
						file = s.Name
					}
					if !slices.Contains(files, file) {
						t.Errorf("the overview's %s names part %q, not a file beside it", s.Name, file)
					}
				}
			}
			if int64(roots) != sum.Invocations-sum.Incomplete || listed != n {
				t.Errorf("the overview names the part of %d invocations and lists %d parts; %d were drawn whole, in %d parts", roots, listed, sum.Invocations-sum.Incomplete, n)
			}
			var want []string
			for k := 1; k <= n; k++ {
				want = append(want, phasetrace.PartName("run.pftrace", k))
			}
			want = append(want, "plain.pftrace", "run.pftrace", "sum.json")
			if tc.log != nil {
				want = append(want, "gen.log")
			}
			slices.Sort(want)
			if got := names(t, dir); !slices.Equal(got, want) {
				t.Errorf("the directory holds %q, want %q", got, want)
			}
			last := fmt.Sprintf("overview: run.pftrace (%d invocations); parts: run.part001.pftrace … %s (at most %d slices each; a run larger than that in a part of its own)\n", sum.Invocations, phasetrace.PartName("run.pftrace", n), tc.max)
			if !strings.HasSuffix(stderr, last) {
				t.Errorf("the summary does not end with %q:\n%s", last, stderr)
			}
			// A part holds whole runs: the summary says at most what, and
			// that a larger run has a part of its own (-split 1: every run).
			said := fmt.Sprintf("of at most %d slice", tc.max)
			if !strings.Contains(stderr, said) || !strings.Contains(stderr, "split into") || strings.Count(stderr, "a run larger than that in a part of its own") != 2 {
				t.Errorf("the summary does not say that a run larger than a part has a part of its own:\n%s", stderr)
			}
		})
	}
}

// TestSplitUsage: -split wants a number of slices of 1 or more, and a
// regular output file; a usage error reads and writes nothing.
func TestSplitUsage(t *testing.T) {
	chdir(t)
	os.WriteFile("run.log", sample, 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-split", "0", "run.log"}, "want a number of slices, 1 or more"},
		{[]string{"-split", "-3", "run.log"}, "want a number of slices, 1 or more"},
		{[]string{"-split", "many", "run.log"}, "want a number of slices, 1 or more"},
		{[]string{"-split", "10", "-o", "-", "run.log"}, "-split writes the parts beside the overview's file: not with -o -"},
		{[]string{"-split", "10", "-o", os.DevNull, "run.log"}, "-o " + os.DevNull + " is not a regular file"},
	} {
		code, stdout, stderr := runArgs(c.args, failReader{t})
		if code != exitUsage || !strings.Contains(stderr, c.want) || stdout != "" {
			t.Errorf("%q: exit %d, stderr %q; want exit %d mentioning %q", c.args, code, stderr, exitUsage, c.want)
		}
	}
	if got := names(t, "."); !slices.Equal(got, []string{"run.log"}) {
		t.Errorf("the usage errors left %q", got)
	}
}

// TestSplitFails: a split conversion that fails — a part that cannot be
// written, an interruption while parts are being written — leaves no part
// and no hidden file, and the parts of an earlier conversion as they were.
func TestSplitFails(t *testing.T) {
	t.Run("a part cannot be written", func(t *testing.T) {
		dir := chdir(t)
		os.WriteFile("run.log", sample, 0o644)
		os.Mkdir(phasetrace.PartName("run.pftrace", 3), 0o755)
		code, _, stderr := runArgs([]string{"-q", "-split", "20", "-o", "run.pftrace", "run.log"}, strings.NewReader(""))
		if code != exitFail || !strings.Contains(stderr, "run.part003.pftrace: is a directory") {
			t.Errorf("exit %d, stderr %q; want exit %d, part 3 a directory", code, stderr, exitFail)
		}
		if got := names(t, dir); !slices.Equal(got, []string{"run.log", "run.part003.pftrace"}) {
			t.Errorf("the failed conversion left %q", got)
		}
	})
	t.Run("interrupted", func(t *testing.T) {
		dir := chdir(t)
		log := generatedLog(t)
		os.WriteFile("gen.log", log, 0o644)
		earlier := []byte("an earlier part")
		os.WriteFile("run.part002.pftrace", earlier, 0o644)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var opens int
		var mu sync.Mutex
		var stderr bytes.Buffer
		c := &command{stdin: strings.NewReader(""), stdout: io.Discard, stderr: &stderr,
			file: func(path string) phasetrace.Input {
				in := phasetrace.File(path)
				open := in.Open
				in.Open = func() (io.ReadCloser, error) {
					mu.Lock()
					opens++
					second := opens == 2
					mu.Unlock()
					rc, err := open()
					if err != nil || !second {
						return rc, err
					}
					// The second pass reads half the log, then waits for
					// the interruption.
					return readCloser{io.MultiReader(io.LimitReader(rc, int64(len(log)/2)), blockUntil{ctx}), rc}, nil
				}
				return in
			}}
		done := make(chan int)
		go func() { done <- c.run(ctx, []string{"-q", "-split", "100", "-o", "run.pftrace", "gen.log"}) }()
		// Parts are written while the second pass reads: wait until the
		// overview and at least one part are being written.
		for len(hiddenFiles(t, dir)) < 2 {
			time.Sleep(time.Millisecond)
		}
		cancel()
		if code := <-done; code != exitFail || !strings.Contains(stderr.String(), "interrupted") {
			t.Errorf("exit %d, stderr %q; want exit %d, interrupted", code, stderr.String(), exitFail)
		}
		if got := names(t, dir); !slices.Equal(got, []string{"gen.log", "run.part002.pftrace"}) {
			t.Errorf("the interrupted conversion left %q", got)
		}
		if b, _ := os.ReadFile("run.part002.pftrace"); !bytes.Equal(b, earlier) {
			t.Errorf("the earlier part was changed: %q", b)
		}
	})
}

type readCloser struct {
	io.Reader
	io.Closer
}

// blockUntil reads nothing until ctx is done, then fails with its error.
type blockUntil struct{ ctx context.Context }

func (b blockUntil) Read([]byte) (int, error) {
	<-b.ctx.Done()
	return 0, b.ctx.Err()
}

// TestSplitStaleParts: after a split conversion, the parts of an earlier
// one beyond the last part written are removed and said so (not under
// -q); a file past a gap in the numbers is not one of them.
func TestSplitStaleParts(t *testing.T) {
	dir := chdir(t)
	os.WriteFile("run.log", sample, 0o644)
	os.WriteFile("run.part999.pftrace", nil, 0o644)
	parts := func() (n int) {
		for _, name := range names(t, dir) {
			if name != "run.part999.pftrace" && isPartName("run.pftrace", name) {
				n++
			}
		}
		return n
	}
	if code, _, stderr := runArgs([]string{"-q", "-split", "10", "-o", "run.pftrace", "run.log"}, strings.NewReader("")); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	many := parts()
	code, _, stderr := runArgs([]string{"-split", "100", "-o", "run.pftrace", "run.log"}, strings.NewReader(""))
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	few := parts()
	if few >= many || few < 2 {
		t.Fatalf("-split 10 wrote %d parts, -split 100 %d", many, few)
	}
	for k := 1; k <= few; k++ {
		readTrace(t, phasetrace.PartName("run.pftrace", k))
	}
	want := fmt.Sprintf("removed %d stale parts of an earlier conversion: %s … %s\n", many-few, phasetrace.PartName("run.pftrace", few+1), phasetrace.PartName("run.pftrace", many))
	if !strings.Contains(stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr)
	}
	if _, err := os.Stat("run.part999.pftrace"); err != nil {
		t.Errorf("the file past the gap was removed: %v", err)
	}

	// Under -q the stale parts are removed, silently.
	runArgs([]string{"-q", "-split", "10", "-o", "run.pftrace", "run.log"}, strings.NewReader(""))
	code, _, stderr = runArgs([]string{"-q", "-split", "100", "-o", "run.pftrace", "run.log"}, strings.NewReader(""))
	if code != exitOK || stderr != "" || parts() != few {
		t.Errorf("-q: exit %d, stderr %q, %d parts left, want %d", code, stderr, parts(), few)
	}
}

// TestSplitRefusesInputs: a file read that is named like a part of the
// output — a part, or a stale part removed, would destroy it — is refused
// before anything is read, whatever the path that leads to it; one that
// takes a part's name while converting fails the conversion.
func TestSplitRefusesInputs(t *testing.T) {
	dir := chdir(t)
	os.WriteFile("run.log", sample, 0o644)
	os.WriteFile("run.part002.pftrace", sample, 0o644)
	os.Link("run.log", "run.part017.pftrace")
	os.WriteFile("records.jsonl", nil, 0o644)
	os.Symlink("records.jsonl", "run.part005.pftrace")
	before := names(t, dir)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-split", "5", "-o", "run.pftrace", "run.part002.pftrace"}, "-split part run.part002.pftrace is the log run.part002.pftrace: refusing to overwrite an input"},
		{[]string{"-split", "5", "-o", "run.pftrace", "run.log"}, "-split part run.part017.pftrace is the log run.log: refusing to overwrite an input"},
		{[]string{"-split", "5", "-o", "./run.pftrace", "-no-records-beside", "-records", "records.jsonl", "run.log"}, "is the -records file records.jsonl"},
		{[]string{"-split", "5", "-o", "run.pftrace", "-summary-json", "run.part001.pftrace", "-"}, "-summary-json run.part001.pftrace is named like a part of -o run.pftrace"},
	} {
		code, _, stderr := runArgs(c.args, failReader{t})
		if code != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%q: exit %d, stderr %q; want exit %d mentioning %q", c.args, code, stderr, exitUsage, c.want)
		}
	}
	if got := names(t, dir); !slices.Equal(got, before) {
		t.Errorf("the refused runs left %q, want %q", got, before)
	}
	for _, p := range []string{"run.log", "run.part002.pftrace"} {
		if b, _ := os.ReadFile(p); !bytes.Equal(b, sample) {
			t.Errorf("%s was changed", p)
		}
	}

	// The log takes part 1's name once the conversion has read it.
	os.Remove("run.part017.pftrace")
	os.Remove("run.part005.pftrace")
	var stderr bytes.Buffer
	c := &command{stdin: strings.NewReader(""), stdout: io.Discard, stderr: &stderr,
		file: func(path string) phasetrace.Input {
			in := phasetrace.File(path)
			open := in.Open
			in.Open = func() (io.ReadCloser, error) {
				os.Link(path, "other.part001.pftrace")
				return open()
			}
			return in
		}}
	code := c.run(context.Background(), []string{"-q", "-split", "5", "-o", "other.pftrace", "run.log"})
	if code != exitFail || !strings.Contains(stderr.String(), "-split part other.part001.pftrace is the log run.log: refusing to overwrite an input") {
		t.Errorf("exit %d, stderr %q; want exit %d, the part refused", code, stderr.String(), exitFail)
	}
	if b, _ := os.ReadFile("run.log"); !bytes.Equal(b, sample) {
		t.Error("the log was changed")
	}
	if got, want := names(t, dir), []string{"other.part001.pftrace", "records.jsonl", "run.log", "run.part002.pftrace"}; !slices.Equal(got, want) {
		t.Errorf("the failed conversion left %q, want %q", got, want)
	}
}

// TestSplitOpen: -open with -split serves the overview and says how to
// open a part.
func TestSplitOpen(t *testing.T) {
	chdir(t)
	os.WriteFile("run.log", sample, 0o644)
	browser, fetched := uiFetch(t)
	var stderr bytes.Buffer
	c := &command{stdin: strings.NewReader(""), stdout: io.Discard, stderr: &stderr, file: phasetrace.File, browser: browser}
	if code := c.run(context.Background(), []string{"run.log", "-split", "50", "-open", "-port", "0"}); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	b := <-fetched
	want, _ := os.ReadFile("run.pftrace")
	if len(want) == 0 || !bytes.Equal(b, want) {
		t.Errorf("the UI fetched %d bytes, the overview is %d", len(b), len(want))
	}
	out := stderr.String()
	hint := "open a part with: go run ./examples/pftrace open run.part001.pftrace\n"
	i, j := strings.Index(out, "overview: run.pftrace ("), strings.Index(out, hint)
	if i < 0 || j < i || !strings.Contains(out[j:], "/run.pftrace&referrer=phasetrace") {
		t.Errorf("stderr does not say where the parts are, then how to open one, then serve the overview:\n%s", out)
	}
}
