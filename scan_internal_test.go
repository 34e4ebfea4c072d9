package phasetrace

import (
	"bytes"
	"hash/maphash"
	"io"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/phasetrace/phasetrace/strace"
)

// The first pass reads only the lines its filter keeps; it must learn
// exactly what it learns from the whole log.
func TestScanFilterKeepsWhatThePassNeeds(t *testing.T) {
	for _, path := range []string{"examples/strace2perfetto/sample.log", "strace/testdata/realistic.log"} {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		whole, filtered := newScan(), newScan()
		rd := strace.NewReader(bytes.NewReader(b))
		for {
			rec, err := rd.Read()
			if err == io.EOF {
				break
			}
			switch rec.Kind {
			case strace.KindSpan:
				whole.scanSpan(&rec.Span)
			case strace.KindWallAnchor, strace.KindDeviceAnchor:
				whole.scanRecord(&rec)
			}
		}
		if _, err := filtered.scanLog(bytes.NewReader(b), path, strace.DefaultMaxLine, maphash.MakeSeed(), nil); err != nil {
			t.Fatal(err)
		}
		whole.decide()
		filtered.decide()
		summarize := func(s *scanResult) map[string]string {
			m := map[string]string{}
			for k, th := range s.threads {
				m[itoa(int64(k.pid))+"/"+itoa(k.tid)] = th.threadName() + " split=" + map[bool]string{true: "yes", false: "no"}[th.split]
			}
			for pid, p := range s.procs {
				m["pid "+itoa(int64(pid))] = p.label()
			}
			for d, as := range s.anchors {
				m["anchors "+d.String()] = itoa(int64(len(as)))
			}
			return m
		}
		if diff := cmp.Diff(summarize(whole), summarize(filtered)); diff != "" {
			t.Errorf("%s: first pass with the filter differs (-whole +filtered):\n%s", path, diff)
		}
	}
}

func TestKeepLine(t *testing.T) {
	for line, want := range map[string]bool{
		"[STRACE] v=1 pid=1 tid=1 inv=1 hid=1 depth=0 name=chip.run ts=1 dur=1\n":                         true,
		"[STRACE] v=1 pid=1 tid=1 inv=1 hid=1 depth=2 name=chip.run.bind.args ts=1 dur=1\n":               false,
		"[STRACE] v=1 pid=1 tid=1 inv=0 hid=0 depth=1 name=node.submit ts=1 dur=1\n":                      true,
		"[STRACE] v=1 pid=1 tid=1 inv=0 hid=0 depth=3 name=ext.p.s ts=1 dur=1\n":                          true,
		"[STRACE] v=1 pid=1 tid=1 inv=0 hid=0 depth=10 name=x ts=1 dur=1\n":                               false,
		"a [STRACE] v=1 depth=2 name=chip.x ts=1 dur=1 b [STRACE] v=1 depth=0 name=chip.run ts=1 dur=1\n": true,
		"[mono_ns=1][T0x1][TIMING] clock_anchor: [CLOCK_ANCHOR] v=1 pid=1 mono_ns=1 wall_ns=2\n":          true,
		"[mono_ns=1][T0x1][INFO] launch_run: launching run 0\n":                                           false,
	} {
		if got := keepLine([]byte(line)); got != want {
			t.Errorf("keepLine(%q) = %v, want %v", line, got, want)
		}
	}
}
