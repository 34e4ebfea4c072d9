package firstpass

import (
	"bufio"
	"bytes"
	"fmt"
	"hash/maphash"
	"io"
	"os"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/phasetrace/phasetrace/internal/repeats"
	"github.com/phasetrace/phasetrace/reduce/analysis"
	"github.com/phasetrace/phasetrace/strace"
	"github.com/phasetrace/phasetrace/strace/stracetest"
)

// The first pass reads only the lines its filter keeps; it must learn
// exactly what it learns from the whole log.
func TestScanFilterKeepsWhatThePassNeeds(t *testing.T) {
	for _, path := range []string{"../../examples/strace2perfetto/sample.log", "../../strace/testdata/realistic.log"} {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		whole, filtered := NewScan(), NewScan()
		rd := strace.NewReader(bytes.NewReader(b))
		for {
			rec, err := rd.Read()
			if err == io.EOF {
				break
			}
			switch rec.Kind {
			case strace.KindSpan:
				whole.ScanSpan(&rec.Span)
			case strace.KindWallAnchor, strace.KindDeviceAnchor:
				whole.ScanRecord(&rec)
			}
		}
		if _, err := filtered.ScanLog(bytes.NewReader(b), path, strace.DefaultMaxLine, maphash.MakeSeed(), nil); err != nil {
			t.Fatal(err)
		}
		whole.Decide()
		filtered.Decide()
		summarize := func(s *ScanResult) map[string]string {
			m := map[string]string{}
			for k, th := range s.Threads {
				m[itoa(int64(k.Pid))+"/"+itoa(k.Tid)] = th.ThreadName(false) + " split=" + map[bool]string{true: "yes", false: "no"}[th.Split]
			}
			for pid, p := range s.Procs {
				m["pid "+itoa(int64(pid))] = p.Label()
			}
			for d, as := range s.Anchors {
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
		s := NewScan()
		if _, err := s.ScanLog(strings.NewReader(line), "t.log", strace.DefaultMaxLine, maphash.MakeSeed(), nil); err != nil {
			t.Fatal(err)
		}
		got := 0
		for _, th := range s.Threads {
			got += int(th.ours) + len(th.Producers)
		}
		for _, as := range s.Anchors {
			got += len(as)
		}
		for _, p := range s.Procs {
			got += len(p.Wall)
			if p.ours && len(s.Threads) == 0 { // a device span: no thread of its own
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
	cut := repeats.NewCaptureCutter(maphash.MakeSeed(), HostGap)
	ch := newLineChunker(iotest.OneByteReader(strings.NewReader(log)), cut, []repeats.Repeat{{First: 2, Last: 3}}, strace.DefaultMaxLine)
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
	if caps := ch.finish(); len(caps) != 1 || caps[0].Bytes != int64(len(log)) || caps[0].Last != 5 {
		t.Errorf("captures %+v", caps)
	}
}

// A line longer than the parsers read becomes an empty line, and chunks
// end at line ends.
func TestLineChunkerLongLines(t *testing.T) {
	long := strings.Repeat("x", 3*strace.MinMaxLine)
	log := "a\n" + long + "\nb\n" + long
	cut := repeats.NewCaptureCutter(maphash.MakeSeed(), HostGap)
	ch := newLineChunker(strings.NewReader(log), cut, nil, strace.MinMaxLine)
	var j chunkJob
	if err := ch.fill(&j); err != io.EOF {
		t.Fatal(err)
	}
	if string(j.buf) != "a\n\nb\n" || j.line != 0 || ch.line != 3 {
		t.Errorf("got %q, %d lines", j.buf, ch.line)
	}
	if caps := ch.finish(); len(caps) != 1 || caps[0].Bytes != int64(len(log)) || caps[0].Last != 4 {
		t.Errorf("captures %+v", caps)
	}
}

// BenchmarkFirstPass scans a realistic log, repeated to 8 MiB, as the first
// pass does.
func BenchmarkFirstPass(b *testing.B) {
	one, err := os.ReadFile("../../strace/testdata/realistic.log")
	if err != nil {
		b.Fatal(err)
	}
	log := bytes.Repeat(one, (8<<20)/len(one)+1)
	seed := maphash.MakeSeed()
	b.SetBytes(int64(len(log)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := NewScan().ScanLog(bytes.NewReader(log), "bench.log", strace.DefaultMaxLine, seed, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// The first pass learns the same from a log whatever its chunks: cut into
// chunks of a few kilobytes, parsed on several goroutines, the survey is the
// one of a single chunk — also when many lines are too long to read, when
// a capture repeats another (and the pass runs again leaving it out), and
// when long lines straddle the chunks.
func TestScanChunksLearnTheSame(t *testing.T) {
	gen, _ := stracetest.GenerateTruth(stracetest.Config{Seed: 3, Rounds: 20, AnchorEvry: 50_000_000, Pipelined: true, Legacy: true, Ext: true})
	seed := maphash.MakeSeed()
	survey := func(log []byte, maxLine, size, workers int, skip []repeats.Repeat) (*ScanResult, []repeats.Capture) {
		s := NewScan()
		defer func(n int) { runtime.GOMAXPROCS(n) }(runtime.GOMAXPROCS(workers))
		caps, err := s.scanChunks(bytes.NewReader(log), "gen.log", maxLine, seed, skip, size)
		if err != nil {
			t.Fatal(err)
		}
		s.Decide()
		return s, caps
	}
	opts := cmp.Options{cmp.AllowUnexported(ScanResult{}, threadInfo{}, ProcInfo{}, slotState{}, repeats.Capture{}, ThreadKey{}, RemoteScan{}, taskKey{}, TaskRec{}, RunKey{}, RunRec{}, CallableKey{}, firstRun{}, analysis.Typical{}), cmpopts.EquateEmpty(), cmpopts.IgnoreFields(ScanResult{}, "TypicalRuns"), cmpopts.IgnoreFields(RemoteScan{}, "lastPid")}
	for _, maxLine := range []int{strace.DefaultMaxLine, strace.MinMaxLine} {
		for li, log := range [][]byte{gen, hardLog(t, maxLine, "[mono_ns=5][T0x1][INFO] f: cut")} {
			_, caps := survey(log, maxLine, len(log)+1, 1, nil)
			skips := [][]repeats.Repeat{nil}
			if rs := repeats.Repeats([]string{"gen.log"}, [][]repeats.Capture{caps}); rs != nil {
				skips = append(skips, rs[0])
			}
			if li == 1 && len(skips) != 2 {
				t.Fatal("the hard log repeats no capture")
			}
			for _, skip := range skips {
				want, wantCaps := survey(log, maxLine, len(log)+1, 1, skip)
				for _, size := range []int{2048, 16384} {
					for _, workers := range []int{1, 4} {
						got, gotCaps := survey(log, maxLine, size, workers, skip)
						name := fmt.Sprintf("log %d, lines up to %d bytes, %d left out, chunks of %d bytes, %d parsers", li, maxLine, len(skip), size, workers)
						if diff := cmp.Diff(want, got, opts); diff != "" {
							t.Errorf("%s: (-one chunk +chunks)\n%s", name, diff)
						}
						if diff := cmp.Diff(wantCaps, gotCaps, opts); diff != "" {
							t.Errorf("%s: captures (-one chunk +chunks)\n%s", name, diff)
						}
					}
				}
			}
		}
	}
}

// chunkLinesByLine is the chunker's contract, read line by line as the
// parsers' reader reads them: the text handed out (the lines of repeated
// captures and the lines longer than the parsers read replaced by empty
// lines, a last line without a line end left out with them) and the
// captures cut from every byte.
func chunkLinesByLine(t *testing.T, log []byte, skip []repeats.Repeat, maxLine int, seed maphash.Seed) (string, []repeats.Capture) {
	t.Helper()
	br := bufio.NewReaderSize(bytes.NewReader(log), max(maxLine, strace.MinMaxLine)+2)
	var out []byte
	var caps []repeats.Capture
	cur := repeats.Capture{First: 1}
	var h maphash.Hash
	h.SetSeed(seed)
	var maxMono int64
	hasMono, long, skipping, atStart := false, false, false, true
	line, next := int64(1), 0
	for {
		piece, err := br.ReadSlice('\n')
		if len(piece) > 0 {
			if atStart {
				if mono, ok := repeats.PrefixMono(piece); ok {
					if hasMono && mono < maxMono-HostGap {
						if cur.Bytes > 0 {
							cur.Last, cur.Sum = line-1, h.Sum64()
							caps = append(caps, cur)
							h.Reset()
						}
						cur = repeats.Capture{First: line}
						maxMono = mono
					}
					if !hasMono || mono > maxMono {
						maxMono, hasMono = mono, true
					}
				}
				_, skipping = repeats.RepeatOf(skip, &next, line)
			}
			h.Write(piece)
			cur.Bytes += int64(len(piece))
			wasLong := long
			long = err == bufio.ErrBufferFull
			ends := piece[len(piece)-1] == '\n'
			switch {
			case !skipping && !long && !wasLong:
				out = append(out, piece...)
			case ends:
				out = append(out, '\n')
			}
			atStart = ends
			if ends {
				line++
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil && err != bufio.ErrBufferFull {
			t.Fatal(err)
		}
	}
	if cur.Bytes > 0 {
		cur.Last, cur.Sum = line-1, h.Sum64()
		if !atStart {
			cur.Last = line
		}
		caps = append(caps, cur)
	}
	return string(out), caps
}

// hardLog is a generated log with what makes cutting it hard: a second
// capture repeating the first, then a third one of its own; lines around
// the longest the parsers read (some starting captures), CRLF line ends,
// and a last line without a line end.
func hardLog(t *testing.T, maxLine int, last string) []byte {
	t.Helper()
	log, _ := stracetest.GenerateTruth(stracetest.Config{Seed: 3, Rounds: 6, AnchorEvry: 50_000_000, Pipelined: true, Legacy: true, Ext: true})
	other, _ := stracetest.GenerateTruth(stracetest.Config{Seed: 4, Rounds: 3})
	piece := max(maxLine, strace.MinMaxLine) + 2
	lines := bytes.SplitAfter(log, []byte("\n"))
	var b bytes.Buffer
	for i, l := range lines {
		b.Write(l)
		switch i % 97 {
		case 5:
			for _, n := range []int{piece - 2, piece - 1, piece, piece + 1, 3*piece + 7} {
				b.Write(bytes.Repeat([]byte("x"), n))
				b.WriteByte('\n')
			}
		case 40:
			b.WriteString("[mono_ns=1][T0x1][INFO] f: " + strings.Repeat("y", 2*piece) + "\n") // starts a capture
		case 41:
			b.Write(bytes.TrimSuffix(l, []byte("\n")))
			b.WriteString("\r\n")
		}
	}
	one := b.Bytes()
	return append(append(append(append([]byte(nil), one...), one...), other...), last...)
}

// The chunker hands out what the parsers would read line by line, and cuts
// the same captures, whatever the chunks and the reads.
func TestLineChunkerAgreesWithLines(t *testing.T) {
	seed := maphash.MakeSeed()
	for _, maxLine := range []int{strace.MinMaxLine, 1000} {
		piece := maxLine + 2
		for _, last := range []string{"", "[mono_ns=5][T0x1][INFO] f: cut", strings.Repeat("z", piece-1), strings.Repeat("z", piece), strings.Repeat("z", 5*piece)} {
			log := hardLog(t, maxLine, last)
			_, caps := chunkLinesByLine(t, log, nil, maxLine, seed)
			if len(caps) < 4 {
				t.Fatalf("%d captures: the log does not test repeats", len(caps))
			}
			skips := repeats.Repeats([]string{"a"}, [][]repeats.Capture{caps})
			if len(skips) == 0 || len(skips[0]) == 0 {
				t.Fatal("no repeated capture")
			}
			for _, skip := range [][]repeats.Repeat{nil, skips[0]} {
				wantText, wantCaps := chunkLinesByLine(t, log, skip, maxLine, seed)
				for _, size := range []int{1, 300, 4096, 1 << 20} {
					for ri, rd := range []func(io.Reader) io.Reader{
						func(r io.Reader) io.Reader { return r },
						iotest.OneByteReader, iotest.HalfReader, iotest.DataErrReader,
					} {
						if size == 1<<20 && ri > 0 || ri == 1 && size != 300 {
							continue // one byte at a time only once
						}
						ch := newLineChunker(rd(bytes.NewReader(log)), repeats.NewCaptureCutter(seed, HostGap), skip, maxLine)
						ch.size = size
						var got []byte
						var j chunkJob
						for {
							err := ch.fill(&j)
							if j.line != int64(bytes.Count(got, []byte("\n"))) || j.off != int64(len(got)) {
								t.Fatalf("chunk at line %d, byte %d after %d lines, %d bytes", j.line, j.off, bytes.Count(got, []byte("\n")), len(got))
							}
							if err == nil && (len(j.buf) < size || j.buf[len(j.buf)-1] != '\n') {
								t.Fatalf("chunk of %d bytes, %q at its end", len(j.buf), j.buf[max(0, len(j.buf)-10):])
							}
							got = append(got, j.buf...)
							if err == io.EOF {
								break
							}
							if err != nil {
								t.Fatal(err)
							}
						}
						name := fmt.Sprintf("lines up to %d, last %.10q (%d bytes), skip %d, chunks of %d, reader %d", maxLine, last, len(last), len(skip), size, ri)
						if string(got) != wantText {
							t.Errorf("%s: text differs", name)
						}
						if diff := cmp.Diff(wantCaps, ch.finish(), cmp.AllowUnexported(repeats.Capture{})); diff != "" {
							t.Errorf("%s: captures (-line by line +chunker):\n%s", name, diff)
						}
					}
				}
			}
		}
	}
}

// emptyReader returns nothing, forever.
type emptyReader struct{}

func (emptyReader) Read([]byte) (int, error) { return 0, nil }

// A log whose reader returns nothing, forever, fails as through bufio.
func TestLineChunkerNoProgress(t *testing.T) {
	ch := newLineChunker(emptyReader{}, repeats.NewCaptureCutter(maphash.MakeSeed(), HostGap), nil, strace.DefaultMaxLine)
	var j chunkJob
	if err := ch.fill(&j); err != io.ErrNoProgress || len(j.buf) != 0 {
		t.Errorf("%d bytes, %v", len(j.buf), err)
	}
}

// firstPassAllocs returns the allocations of scanning log in chunks of size
// bytes, and the number of chunks.
func firstPassAllocs(t *testing.T, log []byte, size int) (allocs uint64, chunks int) {
	t.Helper()
	seed := maphash.MakeSeed()
	var ms0, ms1 runtime.MemStats
	s := NewScan()
	s.Remote.Single = true // as for one log: its remote tasks and runs are not kept
	runtime.GC()
	runtime.ReadMemStats(&ms0)
	if _, err := s.scanChunks(bytes.NewReader(log), "gen.log", strace.DefaultMaxLine, seed, nil, size); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&ms1)
	return ms1.Mallocs - ms0.Mallocs, (len(log) + size - 1) / size
}

// The first pass allocates nothing per chunk once its parsers' memory holds
// a chunk: scanning twice as many chunks costs only what the survey keeps
// of the chunks added (their clock anchors, in lists that grow by
// doubling).
func TestFirstPassAllocations(t *testing.T) {
	cfg := stracetest.Config{Seed: 5, Rounds: 400, AnchorEvry: 1_000_000_000, Pipelined: true, Legacy: true, Ext: true}
	one, _ := stracetest.GenerateTruth(cfg)
	cfg.Rounds *= 2
	two, _ := stracetest.GenerateTruth(cfg)
	const size = 32 << 10
	a1, n1 := firstPassAllocs(t, one, size)
	a2, n2 := firstPassAllocs(t, two, size)
	per := (float64(a2) - float64(a1)) / float64(n2-n1)
	t.Logf("%d allocations for %d chunks, %d for %d: %.2f per chunk added", a1, n1, a2, n2, per)
	if per > 0.5 {
		t.Errorf("%.2f allocations per chunk added, want about none", per)
	}
}
