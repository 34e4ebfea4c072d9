package main

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/phasetrace/phasetrace"
	"github.com/phasetrace/phasetrace/strace"
	"github.com/phasetrace/phasetrace/strace/stracetest"
)

const data = "../../reduce/analysis/testdata/"

func runCmd(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

// TestCommands runs every command on the hand-made logs; its tables are
// the analysis package's golden files, checked there.
func TestCommands(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args   []string
		golden string
		then   string // a second golden, after a blank line
	}{
		{[]string{"tpot", data + "tpot.log"}, "tpot.golden", ""},
		{[]string{"rounds", data + "rounds.log"}, "rounds.golden", ""},
		{[]string{"rounds", data + "rounds_trim.log"}, "rounds_trim.golden", ""},
		{[]string{"tree", data + "tree.log"}, "tree.golden", ""},
		{[]string{"overlap", data + "overlap_ok.log"}, "overlap_ok.golden", ""},
		// The control plane's table as before, then the phases.
		{[]string{"compare", data + "compare_base.log", data + "compare_measure.log"}, "compare.golden", "compare_phases.golden"},
	} {
		t.Run(strings.Join(c.args[:1], " ")+" "+c.golden, func(t *testing.T) {
			code, out, errs := runCmd(t, "", c.args...)
			want, err := os.ReadFile(data + c.golden)
			if err != nil {
				t.Fatal(err)
			}
			if c.then != "" {
				then, err := os.ReadFile(data + c.then)
				if err != nil {
					t.Fatal(err)
				}
				want = append(append(want, '\n'), then...)
			}
			if code != exitOK || out != string(want) || errs != "" {
				t.Errorf("exit %d, stderr %q, stdout:\n%s\nwant:\n%s", code, errs, out, want)
			}
		})
	}
}

func TestBindCommand(t *testing.T) {
	t.Parallel()
	code, out, _ := runCmd(t, "", "bind", "-rounds", "3", data+"bind.log")
	if code != exitOK || !strings.Contains(out, "    total                  0.450     0.458     0.510    4   (ms)\n") {
		t.Errorf("exit %d:\n%s", code, out)
	}
	code, _, errs := runCmd(t, "", "bind", data+"bind_cold.log")
	if code != exitFail || !strings.Contains(errs, "every bind is a rank's cold bind") {
		t.Errorf("all cold: exit %d, %q", code, errs)
	}
	code, _, errs = runCmd(t, "", "bind", data+"tpot.log")
	if code != exitFail || !strings.Contains(errs, "no chip.run.bind.<segment> spans") {
		t.Errorf("no binds: exit %d, %q", code, errs)
	}
	code, out, _ = runCmd(t, "", "bind", "-keep-first", data+"bind_cold.log")
	if code != exitOK || !strings.Contains(out, "2 binds, 2 warm (0 cold dropped, ranks=2)") {
		t.Errorf("keep first: exit %d:\n%s", code, out)
	}
}

func TestOverlapCommand(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		code int
		err  string
	}{
		{[]string{"overlap", data + "overlap_not_overlapped.log"}, exitFail, "native overlap assertion failed: preparation did not overlap: pid=7 sequence=2 prepare=[210,230]"},
		{[]string{"overlap", data + "overlap_reordered.log"}, exitFail, "device execution reordered before the claim release"},
		{[]string{"overlap", data + "overlap_one_run.log"}, exitFail, "need at least two complete native runs"},
		{[]string{"overlap", data + "overlap_identity.log"}, exitFail, "missing identity field(s): run_id, dispatch_id"},
		{[]string{"overlap", "-require-hidden", data + "overlap_ok.log"}, exitFail, "preparation was not fully hidden: pid=8 sequence=2"},
	} {
		code, out, errs := runCmd(t, "", c.args...)
		if code != c.code || !strings.Contains(errs, c.err) || out != "" {
			t.Errorf("%v: exit %d, stderr %q, stdout %q", c.args, code, errs, out)
		}
	}
}

// TestInputs: standard input, gzip, several logs read as one, losses
// reported, unreadable input and usage errors.
func TestInputs(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(data + "rounds_hbg.log")
	if err != nil {
		t.Fatal(err)
	}
	code, out, _ := runCmd(t, string(raw), "rounds", "-")
	if code != exitOK || !strings.Contains(out, "Avg Host: 110.0 us  |  Avg Device: 22.0 us [2/2]  (2 rounds)") {
		t.Errorf("stdin: exit %d:\n%s", code, out)
	}
	gz := filepath.Join(t.TempDir(), "run.log.gz")
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	_, _ = zw.Write(raw)
	_ = zw.Close()
	if err := os.WriteFile(gz, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out2, _ := runCmd(t, "", "rounds", gz); code != exitOK || out2 != out {
		t.Errorf("gzip: exit %d:\n%s", code, out2)
	}
	// The two halves of a log read as one log.
	lines := strings.SplitAfter(string(raw), "\n")
	dir := t.TempDir()
	a, bb := filepath.Join(dir, "a.log"), filepath.Join(dir, "b.log")
	_ = os.WriteFile(a, []byte(strings.Join(lines[:2], "")), 0o644)
	_ = os.WriteFile(bb, []byte(strings.Join(lines[2:], "")), 0o644)
	if code, out3, _ := runCmd(t, "", "rounds", a, bb); code != exitOK || out3 != out {
		t.Errorf("two files: exit %d:\n%s", code, out3)
	}
	// A torn record is reported on stderr and left out.
	torn := string(raw) + "[mono_ns=9][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=1 tid=1 inv=3 hid=abc depth=0 name=chip.run ts=1\n"
	code, out, errs := runCmd(t, torn, "rounds", "-")
	if code != exitOK || !strings.Contains(errs, "lost 1 of 5 [STRACE] spans") || !strings.Contains(errs, "<stdin>:5: byte") || !strings.Contains(out, "(2 rounds)") {
		t.Errorf("torn: exit %d, stderr %q", code, errs)
	}
	for _, c := range []struct {
		args []string
		code int
	}{
		{nil, exitUsage},
		{[]string{"frobnicate", "x"}, exitUsage},
		{[]string{"rounds"}, exitFail}, // no LOG: stdin, empty here
		{[]string{"rounds", "-ranks", "2", "x"}, exitUsage},
		{[]string{"bind", "-ranks", "2", "-rounds", "3", "x"}, exitUsage},
		{[]string{"compare", data + "compare_base.log"}, exitUsage},
		{[]string{"rounds", "-keep-first", "x"}, exitUsage}, // not a rounds flag
		{[]string{"tpot", "-ranks", "2", "x"}, exitUsage},
		{[]string{"bind", "-ranks", "-1", "x"}, exitUsage},
		{[]string{"bind", "-records", "-", "-"}, exitUsage},
		{[]string{"rounds", "-", "-"}, exitUsage},
		{[]string{"rounds", filepath.Join(dir, "missing.log")}, exitFail},
		{[]string{"help"}, exitOK},
		{[]string{"tpot", "-h"}, exitOK},
	} {
		code, _, _ := runCmd(t, "", c.args...)
		if code != c.code {
			t.Errorf("%v: exit %d, want %d", c.args, code, c.code)
		}
	}
	// Unequal arms: two repetitions against one.
	if code, _, errs := runCmd(t, "", "compare", data+"compare_base.log", data+"bind.log"); code != exitFail || !strings.Contains(errs, "same, non-zero number of repetitions") {
		t.Errorf("unequal arms: exit %d, %q", code, errs)
	}
}

// TestFlagsAnywhere: flags before, between or after the logs; -- ends them.
func TestFlagsAnywhere(t *testing.T) {
	t.Parallel()
	_, want, _ := runCmd(t, "", "bind", "-keep-first", data+"bind_cold.log")
	dir := t.TempDir()
	dash := filepath.Join(dir, "-cold.log")
	raw, err := os.ReadFile(data + "bind_cold.log")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dash, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"bind", data + "bind_cold.log", "-keep-first"},
		{"bind", data + "bind_cold.log", "-keep-first", "-strict"},
		{"bind", "-keep-first", "--", dash},
	} {
		code, out, errs := runCmd(t, "", args...)
		out = strings.Replace(out, dash, data+"bind_cold.log", 1)
		if code != exitOK || out != want || !strings.Contains(out, "2 binds, 2 warm (0 cold dropped, ranks=2)") {
			t.Errorf("%q: exit %d, stderr %q:\n%s", args, code, errs, out)
		}
	}
	if code, out, _ := runCmd(t, "", "rounds", data+"rounds.log", "-strict"); code != exitOK || !strings.Contains(out, "Avg Host") {
		t.Errorf("rounds LOG -strict: exit %d", code)
	}
}

// TestHelp: each command's help says what its table is and lists only its
// flags.
func TestHelp(t *testing.T) {
	t.Parallel()
	for _, cmd := range []string{"tpot", "rounds", "tree", "overlap", "bind", "compare"} {
		t.Run(cmd, func(t *testing.T) {
			code, out, errs := runCmd(t, "", cmd, "-h")
			if code != exitOK || out != "" {
				t.Fatalf("exit %d, stdout %q", code, out)
			}
			stracetest.Golden(t, filepath.Join("testdata", "help_"+cmd+".golden"), []byte(errs))
			if code, _, errs2 := runCmd(t, "", "help", cmd); code != exitOK || errs2 != errs {
				t.Errorf("help %s differs from %s -h", cmd, cmd)
			}
		})
	}
	code, _, errs := runCmd(t, "", "tpot", "-h")
	for _, other := range []string{"-keep-first", "-ranks", "-rounds", "-require-hidden", "-records"} {
		if code != exitOK || strings.Contains(errs, other) {
			t.Errorf("tpot -h lists %s:\n%s", other, errs)
		}
	}
}

func TestVersion(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"-version"}, {"tpot", "-version"}, {"bind", "x.log", "-version"}} {
		code, out, errs := runCmd(t, "", args...)
		if code != exitOK || !strings.HasPrefix(out, "stracestat ") || errs != "" {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", args, code, out, errs)
		}
	}
}

// TestNothingToAnalyse: an empty or non-log file is a failure.
func TestNothingToAnalyse(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	empty, text := filepath.Join(dir, "empty.log"), filepath.Join(dir, "notes.txt")
	os.WriteFile(empty, nil, 0o644)
	os.WriteFile(text, []byte("just some text\nno markers here\n"), 0o644)
	for _, cmd := range []string{"tpot", "rounds", "tree"} {
		for _, f := range []string{empty, text} {
			code, out, _ := runCmd(t, "", cmd, f)
			if code != exitFail || out != "No [STRACE] markers found.\n" {
				t.Errorf("%s %s: exit %d, stdout %q", cmd, f, code, out)
			}
		}
	}
	for _, cmd := range []string{"overlap", "bind"} {
		if code, _, _ := runCmd(t, "", cmd, empty); code != exitFail {
			t.Errorf("%s empty: exit %d", cmd, code)
		}
	}
}

// TestLosses: only losses that change the table are warned about, with
// where the first ones are; -strict exits 3 on any loss.
func TestLosses(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(data + "rounds_hbg.log")
	if err != nil {
		t.Fatal(err)
	}
	const (
		tornAnchor = "[mono_ns=9][T0x1][TIMING] clock_anchor: [CLOCK_ANCHOR] v=1 pid=1 mono_ns=5\n"
		tornSpan   = "[mono_ns=9][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=1 tid=1 inv=3 hid=abc depth=0 name=chip.run ts=1\n"
		tornStamp  = "[stamp]\n"
	)
	for _, c := range []struct {
		name   string
		args   []string
		log    string
		code   int
		golden string // the warnings on stderr; "" when there are none
	}{
		{"anchor", []string{"rounds", "-"}, string(raw) + tornAnchor, exitOK, ""},
		{"anchor strict", []string{"rounds", "-strict", "-"}, string(raw) + tornAnchor, exitStrict, "losses_anchor_strict"},
		{"span", []string{"rounds", "-"}, string(raw) + tornSpan + tornAnchor, exitOK, "losses_span"},
		{"span strict", []string{"rounds", "-", "-strict"}, string(raw) + tornSpan, exitStrict, "losses_span_strict"},
		{"stamp in rounds", []string{"rounds", "-"}, tornStamp + string(raw), exitOK, ""},
		{"stamp in bind", []string{"bind", "-rounds", "3", "-"}, tornStamp + tornAnchor + readFile(t, data+"bind.log"), exitOK, "losses_bind_stamp"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, _, errs := runCmd(t, c.log, c.args...)
			if code != c.code {
				t.Errorf("exit %d, want %d; stderr %q", code, c.code, errs)
			}
			if c.golden == "" {
				if errs != "" {
					t.Errorf("stderr %q, want nothing", errs)
				}
				return
			}
			stracetest.Golden(t, filepath.Join("testdata", c.golden+".golden"), []byte(errs))
		})
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestBindInputs: legacy bind lines and a host_phase_records file give the
// bind tables of the analysis package's goldens.
func TestBindInputs(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args   []string
		golden string
	}{
		{[]string{"bind", data + "bind_legacy.log"}, "bind_legacy.golden"},
		{[]string{"bind", data + "bind_records.log", "-records", data + "bind_records.jsonl"}, "bind_records.golden"},
		{[]string{"bind", "-records", data + "bind_records.jsonl", data + "bind_records.log"}, "bind_records.golden"},
	} {
		code, out, errs := runCmd(t, "", c.args...)
		out = strings.ReplaceAll(out, data, "") // the goldens name the files as in testdata
		if code != exitOK || out != readFile(t, data+c.golden) || errs != "" {
			t.Errorf("%q: exit %d, stderr %q:\n%s", c.args, code, errs, out)
		}
	}
	// Torn passes are warned about and count for -strict.
	torn := readFile(t, data+"bind_records.jsonl") + `{"pid": 400, "inv": 3, "records": [`
	code, _, errs := runCmd(t, torn, "bind", "-strict", "-records", "-", data+"bind_records.log")
	if code != exitStrict || !strings.Contains(errs, "<stdin>: 1 line(s) lost (1 torn, 0 malformed, 0 over-long)") {
		t.Errorf("torn pass: exit %d, stderr %q", code, errs)
	}
	if code, _, errs := runCmd(t, "", "bind", "-records", filepath.Join(t.TempDir(), "missing.jsonl"), data+"bind_records.log"); code != exitFail || !strings.Contains(errs, "missing.jsonl") {
		t.Errorf("missing records: exit %d, %q", code, errs)
	}
}

// TestReadAhead reads an input of several chunks through readAhead, and
// one whose source fails.
func TestReadAhead(t *testing.T) {
	t.Parallel()
	data := bytes.Repeat([]byte("0123456789abcdef\n"), (readAheadChunks*readAheadChunk)/8)
	ra := newReadAhead(bytes.NewReader(data))
	got, err := io.ReadAll(ra)
	ra.Close()
	if err != nil || !bytes.Equal(got, data) {
		t.Errorf("read %d bytes of %d, err %v", len(got), len(data), err)
	}
	ra = newReadAhead(io.MultiReader(bytes.NewReader(data[:100]), iotest.ErrReader(errBroken)))
	got, err = io.ReadAll(ra)
	ra.Close()
	if !errors.Is(err, errBroken) || len(got) != 100 {
		t.Errorf("read %d bytes, err %v; want 100, %v", len(got), err, errBroken)
	}
	// Closed before the end: the goroutine stops.
	ra = newReadAhead(bytes.NewReader(data))
	if _, err := ra.Read(make([]byte, 10)); err != nil {
		t.Fatal(err)
	}
	ra.Close()
}

var errBroken = errors.New("broken source")

// TestSeveralTables checks that "tpot,rounds,tree" prints the three tables
// in turn, as the three commands do one after another.
func TestSeveralTables(t *testing.T) {
	t.Parallel()
	var want string
	for _, cmd := range []string{"tpot", "rounds", "tree"} {
		code, out, _ := runCmd(t, "", cmd, data+"tree.log")
		if code != exitOK {
			t.Fatalf("%s: exit %d", cmd, code)
		}
		want += out
	}
	code, out, errs := runCmd(t, "", "tpot,rounds,tree", data+"tree.log")
	if code != exitOK || out != want || errs != "" {
		t.Errorf("exit %d, stderr %q, stdout:\n%s\nwant:\n%s", code, errs, out, want)
	}
	code, out, _ = runCmd(t, "", "tree,overlap", data+"overlap_ok.log")
	if code != exitOK || !strings.Contains(out, "callable hid=") {
		t.Errorf("tree,overlap: exit %d:\n%s", code, out)
	}
	for _, bad := range []string{"tpot,compare", "tpot,tpot", "tpot,nope"} {
		if code, _, _ := runCmd(t, "", bad, data+"tree.log"); code != exitUsage {
			t.Errorf("%s: exit %d, want %d", bad, code, exitUsage)
		}
	}
}

// sampleLog is strace2perfetto's embedded sample without its last line (a
// torn record): a clean, real-shaped log.
func sampleLog(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile("../strace2perfetto/sample.log")
	if err != nil {
		t.Fatal(err)
	}
	b = bytes.TrimSuffix(b, []byte("\n"))
	return b[:bytes.LastIndexByte(b, '\n')+1]
}

// terminal is a standard input that is a terminal.
type terminal struct{ io.Reader }

func (terminal) IsTerminal() bool { return true }

// With no LOG, standard input is read unless it is a terminal.
func TestNoLogReadsStdin(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(data + "rounds_hbg.log")
	if err != nil {
		t.Fatal(err)
	}
	_, want, _ := runCmd(t, string(raw), "rounds", "-")
	if code, out, errs := runCmd(t, string(raw), "rounds"); code != exitOK || out != want {
		t.Errorf("piped stdin: exit %d, %s\n%s", code, errs, out)
	}
	var out, errb bytes.Buffer
	if code := run([]string{"rounds"}, terminal{strings.NewReader(string(raw))}, &out, &errb); code != exitUsage || !strings.Contains(errb.String(), "no LOG given, and standard input is a terminal") {
		t.Errorf("terminal: exit %d, %s", code, errb.String())
	}
	if code, _, errs := runCmd(t, string(raw), "compare"); code != exitUsage || !strings.Contains(errs, "in pairs") {
		t.Errorf("compare on stdin: exit %d, %s", code, errs)
	}
}

// A .gz cut in half, cut in its trailer, or with a wrong checksum: the
// table is computed from what was read, a warning says the log was cut,
// -strict exits 3; the spans kept are those strace2perfetto keeps (the
// complete spans of what gzip yields before the damage).
func TestCutGzip(t *testing.T) {
	t.Parallel()
	log := sampleLog(t)
	want := map[string]string{"half": "the compressed stream is cut", "no trailer": "the compressed stream is cut", "half a trailer": "the compressed stream is cut",
		"bad checksum": "checksum does not match", "corrupt data": "compressed data is damaged"}
	dir := t.TempDir()
	for _, d := range stracetest.DamagedGzips(log) {
		c := struct {
			name string
			z    []byte
			want string
		}{d.Name, d.Gz, want[d.Name]}
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+".log.gz")
			os.WriteFile(path, c.z, 0o644)
			read := stracetest.Gunzipped(c.z)
			rd := strace.NewReader(bytes.NewReader(read))
			for {
				if _, err := rd.Read(); err == io.EOF {
					break
				}
			}
			st := rd.Stats()
			for _, args := range [][]string{{"tpot", path}, {"tpot", "-strict", path}, {"tpot", "-strict", "-"}} {
				code, out, errs := runCmd(t, string(c.z), args...)
				wantCode := exitOK
				if slices.Contains(args, "-strict") {
					wantCode = exitStrict
				}
				if code != wantCode || !strings.Contains(errs, c.want) || !strings.Contains(out, "chip.run") {
					t.Errorf("%q: exit %d, want %d saying %q:\n%s", args, code, wantCode, c.want, errs)
				}
				lost := fmt.Sprintf("lost %d of %d [STRACE] spans", st.LostSpans(), st.Heads.Strace)
				if st.LostSpans() > 0 != strings.Contains(errs, lost) {
					t.Errorf("%q: the reader kept %d of %d spans of what gzip gave; stderr:\n%s", args, st.Records.Spans, st.Heads.Strace, errs)
				}
			}
		})
	}
}

// A process that wrote two wall-clock anchors is warned about, in the
// words of the converter's note, with where the first two are: once, or
// once per log for compare (each log is a run of its own).
func TestSeveralWallAnchors(t *testing.T) {
	t.Parallel()
	log := sampleLog(t)
	lines := bytes.SplitAfter(log, []byte("\n"))
	if !bytes.Contains(lines[1], []byte("[CLOCK_ANCHOR] v=1 pid=4100 ")) {
		t.Fatalf("line 2 is not pid 4100's wall-clock anchor: %s", lines[1])
	}
	// The same anchor again would be the same anchor: a second one says
	// another wall time.
	second := bytes.Replace(lines[1], []byte(" wall_ns=17"), []byte(" wall_ns=16"), 1)
	twice := slices.Concat(log, second)
	path := filepath.Join(t.TempDir(), "twice.log")
	os.WriteFile(path, twice, 0o644)
	want := phasetrace.SeveralWallAnchors(4100, 2, path+":2", fmt.Sprintf("%s:%d", path, bytes.Count(twice, []byte("\n"))))
	for _, args := range [][]string{{"tpot", path}, {"bind", path}, {"tpot,rounds", path}, {"compare", path, path}} {
		code, _, errs := runCmd(t, "", args...)
		if code != exitOK || !strings.Contains(errs, "stracestat: warning: "+want+"\n") || strings.Count(errs, "wall-clock anchors") != len(args)-1 {
			t.Errorf("%q: exit %d, stderr:\n%s\nwant the warning %q", args, code, errs, want)
		}
	}
	if _, _, errs := runCmd(t, "", "tpot", filepath.Join(data, "rounds_hbg.log")); strings.Contains(errs, "wall-clock") {
		t.Errorf("a log with one anchor per process: %s", errs)
	}
	// The same anchor written again is one anchor, to both.
	same := filepath.Join(t.TempDir(), "same.log")
	os.WriteFile(same, slices.Concat(log, lines[1]), 0o644)
	if _, _, errs := runCmd(t, "", "tpot", same); strings.Contains(errs, "wall-clock") {
		t.Errorf("an anchor written twice: %s", errs)
	}
	if sum, err := phasetrace.Convert(io.Discard, []phasetrace.Input{phasetrace.File(same)}); err != nil || len(sum.Notes) != 0 || sum.NotDrawn[phasetrace.ReasonRepeatedWall] != 1 {
		t.Errorf("an anchor written twice: notes %q, not drawn %v, %v", sum.Notes, sum.NotDrawn, err)
	}
	sum, err := phasetrace.Convert(io.Discard, []phasetrace.Input{phasetrace.File(path)})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(sum.Notes, want) {
		t.Errorf("the converter notes %q, stracestat warns %q", sum.Notes, want)
	}
}
