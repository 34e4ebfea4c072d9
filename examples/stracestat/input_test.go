package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/phasetrace/phasetrace"
	"github.com/phasetrace/phasetrace/strace"
)

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

func gzipped(b []byte) []byte {
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(b)
	zw.Close()
	return z.Bytes()
}

// gunzipped is what a gzip reader gives of z before it fails.
func gunzipped(z []byte) []byte {
	zr, err := gzip.NewReader(bytes.NewReader(z))
	if err != nil {
		return nil
	}
	b, _ := io.ReadAll(zr)
	return b
}

// A .gz cut in half, cut in its trailer, or with a wrong checksum: the
// table is computed from what was read, a warning says the log was cut,
// -strict exits 3; the spans kept are those strace2perfetto keeps (the
// complete spans of what gzip yields before the damage).
func TestCutGzip(t *testing.T) {
	log := sampleLog(t)
	z := gzipped(log)
	badCRC := bytes.Clone(z)
	badCRC[len(badCRC)-8] ^= 0xff
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		z    []byte
		want string
	}{
		{"half", z[:len(z)/2], "the gzip stream is cut"},
		{"no trailer", z[:len(z)-8], "the gzip stream is cut"},
		{"half a trailer", z[:len(z)-3], "the gzip stream is cut"},
		{"bad checksum", badCRC, "checksum does not match"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+".log.gz")
			os.WriteFile(path, c.z, 0o644)
			read := gunzipped(c.z)
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
	log := sampleLog(t)
	lines := bytes.SplitAfter(log, []byte("\n"))
	if !bytes.Contains(lines[1], []byte("[CLOCK_ANCHOR] v=1 pid=4100 ")) {
		t.Fatalf("line 2 is not pid 4100's wall-clock anchor: %s", lines[1])
	}
	twice := slices.Concat(log, lines[1])
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
	sum, err := phasetrace.Convert(io.Discard, []phasetrace.Input{phasetrace.File(path)})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(sum.Notes, want) {
		t.Errorf("the converter notes %q, stracestat warns %q", sum.Notes, want)
	}
}
