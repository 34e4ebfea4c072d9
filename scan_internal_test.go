package phasetrace

import (
	"bytes"
	"hash/maphash"
	"io"
	"os"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/phasetrace/phasetrace/strace"
	"github.com/phasetrace/phasetrace/strace/stracetest"
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

// The first pass's span filter, seen through the reader: which records of
// each line the pass reads.
func TestFirstPassSpan(t *testing.T) {
	for line, want := range map[string]int{
		"[STRACE] v=1 pid=1 tid=1 inv=1 hid=1 depth=0 name=chip.run ts=1 dur=1\n":                                                                         1,
		"[STRACE] v=1 pid=1 tid=1 inv=1 hid=1 depth=2 name=chip.run.bind.args ts=1 dur=1\n":                                                               0,
		"[STRACE] v=1 pid=1 tid=1 inv=0 hid=0 depth=1 name=node.submit ts=1 dur=1\n":                                                                      1,
		"[STRACE] v=1 pid=1 tid=1 inv=0 hid=0 depth=1 name=network2.submit ts=1 dur=1\n":                                                                  1,
		"[STRACE] v=1 pid=1 tid=1 inv=0 hid=0 depth=3 name=ext.p.s ts=1 dur=1\n":                                                                          1,
		"[STRACE] v=1 pid=1 tid=1 inv=0 hid=0 depth=10 name=x ts=1 dur=1\n":                                                                               0,
		"[STRACE] v=1 pid=1 tid=1 inv=1 hid=1 depth=2 name=chip.run.runner_run.device_wall ts=0 dur=1 clk=dev\n":                                          1,
		"[STRACE] v=1 pid=1 tid=1 inv=1 hid=1 depth=3 name=chip.run.runner_run.device_wall.orch ts=0 dur=1 clk=dev\n":                                     0,
		"a [STRACE] v=1 pid=1 tid=1 inv=1 hid=1 depth=2 name=chip.x ts=1 dur=1 b [STRACE] v=1 pid=1 tid=1 inv=1 hid=1 depth=0 name=chip.run ts=1 dur=1\n": 1,
		"[mono_ns=1][T0x1][TIMING] clock_anchor: [CLOCK_ANCHOR] v=1 pid=1 mono_ns=1 wall_ns=2\n":                                                          1,
		"[mono_ns=1][T0x1][INFO] launch_run: launching run 0\n":                                                                                           0,
		"[mono_ns=1][T0x1][INFO] f: [x.cpp:1] bind phase=args start_ns=1 dur_ns=1\n":                                                                      0,
	} {
		s := newScan()
		if _, err := s.scanLog(strings.NewReader(line), "t.log", strace.DefaultMaxLine, maphash.MakeSeed(), nil); err != nil {
			t.Fatal(err)
		}
		got := 0
		for _, th := range s.threads {
			got += int(th.ours) + len(th.producers)
		}
		for _, as := range s.anchors {
			got += len(as)
		}
		for _, p := range s.procs {
			got += len(p.wall)
			if p.ours && len(s.threads) == 0 { // a device span: no thread of its own
				got++
			}
		}
		if got != want {
			t.Errorf("%q: the pass read %d records, want %d", line, got, want)
		}
	}
}

// The chunker hands the parsers every line but those of repeated captures,
// which become empty lines, and the cutter sees every byte.
func TestLineChunker(t *testing.T) {
	log := "a\nb\nc\nd\ne"
	cut := newCaptureCutter(maphash.MakeSeed())
	ch := newLineChunker(iotest.OneByteReader(strings.NewReader(log)), cut, []repeat{{first: 2, last: 3}}, strace.DefaultMaxLine)
	var got []byte
	for {
		var j chunkJob
		err := ch.fill(&j)
		got = append(got, j.buf...)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if string(got) != "a\n\n\nd\ne" {
		t.Errorf("got %q", got)
	}
	if caps := cut.finish(); len(caps) != 1 || caps[0].bytes != int64(len(log)) || caps[0].last != 5 {
		t.Errorf("captures %+v", caps)
	}
}

// A line longer than the parsers read becomes an empty line, and chunks
// end at line ends.
func TestLineChunkerLongLines(t *testing.T) {
	long := strings.Repeat("x", 3*strace.MinMaxLine)
	log := "a\n" + long + "\nb\n" + long
	cut := newCaptureCutter(maphash.MakeSeed())
	ch := newLineChunker(strings.NewReader(log), cut, nil, strace.MinMaxLine)
	var j chunkJob
	if err := ch.fill(&j); err != io.EOF {
		t.Fatal(err)
	}
	if string(j.buf) != "a\n\nb\n" || j.line != 0 || ch.line != 3 {
		t.Errorf("got %q, %d lines", j.buf, ch.line)
	}
	if caps := cut.finish(); len(caps) != 1 || caps[0].bytes != int64(len(log)) || caps[0].last != 4 {
		t.Errorf("captures %+v", caps)
	}
}

// BenchmarkFirstPass scans a realistic log, repeated to 8 MiB, as the first
// pass does.
func BenchmarkFirstPass(b *testing.B) {
	one, err := os.ReadFile("strace/testdata/realistic.log")
	if err != nil {
		b.Fatal(err)
	}
	log := bytes.Repeat(one, (8<<20)/len(one)+1)
	seed := maphash.MakeSeed()
	b.SetBytes(int64(len(log)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := newScan().scanLog(bytes.NewReader(log), "bench.log", strace.DefaultMaxLine, seed, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// The first pass learns the same from a log whatever its chunks: cut into
// chunks of a few kilobytes, parsed on several goroutines, the survey is the
// one of a single chunk — also when many lines are too long to read.
func TestScanChunksLearnTheSame(t *testing.T) {
	log, _ := stracetest.GenerateTruth(stracetest.Config{Seed: 3, Rounds: 20, AnchorEvry: 50_000_000, Pipelined: true, Legacy: true, Ext: true})
	seed := maphash.MakeSeed()
	survey := func(maxLine, size, workers int) (*scanResult, []capture) {
		s := newScan()
		defer func(n int) { runtime.GOMAXPROCS(n) }(runtime.GOMAXPROCS(workers))
		caps, err := s.scanChunks(bytes.NewReader(log), "gen.log", maxLine, seed, nil, size)
		if err != nil {
			t.Fatal(err)
		}
		s.decide()
		return s, caps
	}
	opts := cmp.Options{cmp.AllowUnexported(scanResult{}, threadInfo{}, procInfo{}, slotState{}, capture{}, threadKey{}, remoteScan{}, taskKey{}, taskRec{}, runKey{}, runRec{}), cmpopts.EquateEmpty(), cmpopts.IgnoreFields(remoteScan{}, "lastPid")}
	for _, maxLine := range []int{strace.DefaultMaxLine, strace.MinMaxLine} {
		want, wantCaps := survey(maxLine, len(log)+1, 1)
		for _, size := range []int{2048, 16384} {
			for _, workers := range []int{1, 4} {
				got, gotCaps := survey(maxLine, size, workers)
				if diff := cmp.Diff(want, got, opts); diff != "" {
					t.Errorf("lines up to %d bytes, chunks of %d bytes, %d parsers: (-one chunk +chunks)\n%s", maxLine, size, workers, diff)
				}
				if diff := cmp.Diff(wantCaps, gotCaps, opts); diff != "" {
					t.Errorf("lines up to %d bytes, chunks of %d bytes, %d parsers: captures (-one chunk +chunks)\n%s", maxLine, size, workers, diff)
				}
			}
		}
	}
}
