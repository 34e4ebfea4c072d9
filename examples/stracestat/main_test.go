package main

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	for _, c := range []struct {
		args   []string
		golden string
	}{
		{[]string{"tpot", data + "tpot.log"}, "tpot.golden"},
		{[]string{"rounds", data + "rounds.log"}, "rounds.golden"},
		{[]string{"rounds", data + "rounds_trim.log"}, "rounds_trim.golden"},
		{[]string{"tree", data + "tree.log"}, "tree.golden"},
		{[]string{"overlap", data + "overlap_ok.log"}, "overlap_ok.golden"},
		{[]string{"compare", data + "compare_base.log", data + "compare_measure.log"}, "compare.golden"},
	} {
		t.Run(strings.Join(c.args[:1], " ")+" "+c.golden, func(t *testing.T) {
			code, out, errs := runCmd(t, "", c.args...)
			want, err := os.ReadFile(data + c.golden)
			if err != nil {
				t.Fatal(err)
			}
			if code != exitOK || out != string(want) || errs != "" {
				t.Errorf("exit %d, stderr %q, stdout:\n%s\nwant:\n%s", code, errs, out, want)
			}
		})
	}
}

func TestBindCommand(t *testing.T) {
	code, out, _ := runCmd(t, "", "bind", "-rounds", "3", data+"bind.log")
	if code != exitOK || !strings.Contains(out, "    total                  0.450     0.458     0.510    4   (ms)\n") {
		t.Errorf("exit %d:\n%s", code, out)
	}
	code, _, errs := runCmd(t, "", "bind", data+"bind_cold.log")
	if code != exitInput || !strings.Contains(errs, "every bind is a rank's cold bind") {
		t.Errorf("all cold: exit %d, %q", code, errs)
	}
	code, _, errs = runCmd(t, "", "bind", data+"tpot.log")
	if code != exitInput || !strings.Contains(errs, "no chip.run.bind.<segment> spans") {
		t.Errorf("no binds: exit %d, %q", code, errs)
	}
	code, out, _ = runCmd(t, "", "bind", "-keep-first", data+"bind_cold.log")
	if code != exitOK || !strings.Contains(out, "2 binds, 2 warm (0 cold dropped, ranks=2)") {
		t.Errorf("keep first: exit %d:\n%s", code, out)
	}
}

func TestOverlapCommand(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		err  string
	}{
		{[]string{"overlap", data + "overlap_not_overlapped.log"}, exitProof, "native overlap assertion failed: preparation did not overlap: pid=7 sequence=2 prepare=[210,230]"},
		{[]string{"overlap", data + "overlap_reordered.log"}, exitProof, "device execution reordered before the claim release"},
		{[]string{"overlap", data + "overlap_one_run.log"}, exitProof, "need at least two complete native runs"},
		{[]string{"overlap", data + "overlap_identity.log"}, exitProof, "missing identity field(s): run_id, dispatch_id"},
		{[]string{"overlap", "-require-hidden", data + "overlap_ok.log"}, exitProof, "preparation was not fully hidden: pid=8 sequence=2"},
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
	if code != exitOK || !strings.Contains(errs, "1 record(s) lost (1 torn)") || !strings.Contains(errs, "1 of 5 [STRACE] records are incomplete") || !strings.Contains(out, "(2 rounds)") {
		t.Errorf("torn: exit %d, stderr %q", code, errs)
	}
	for _, c := range []struct {
		args []string
		code int
	}{
		{nil, exitUsage},
		{[]string{"frobnicate", "x"}, exitUsage},
		{[]string{"rounds"}, exitUsage},
		{[]string{"rounds", "-ranks", "2", "x"}, exitUsage},
		{[]string{"bind", "-ranks", "2", "-rounds", "3", "x"}, exitUsage},
		{[]string{"compare", data + "compare_base.log"}, exitUsage},
		{[]string{"rounds", "-", "-"}, exitUsage},
		{[]string{"rounds", filepath.Join(dir, "missing.log")}, exitInput},
		{[]string{"help"}, exitOK},
		{[]string{"tpot", "-h"}, exitOK},
	} {
		code, _, _ := runCmd(t, "", c.args...)
		if code != c.code {
			t.Errorf("%v: exit %d, want %d", c.args, code, c.code)
		}
	}
	// Unequal arms: two repetitions against one.
	if code, _, errs := runCmd(t, "", "compare", data+"compare_base.log", data+"bind.log"); code != exitInput || !strings.Contains(errs, "same, non-zero number of repetitions") {
		t.Errorf("unequal arms: exit %d, %q", code, errs)
	}
}
