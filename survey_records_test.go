package phasetrace_test

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/phasetrace/phasetrace"
	"github.com/phasetrace/phasetrace/perfetto/check"
	"github.com/phasetrace/phasetrace/strace"
	"github.com/phasetrace/phasetrace/strace/stracetest"
)

// recordsName is the artifact's name in these tests.
const recordsName = "host_phase_records.jsonl"

// phasePassLines are host_phase_records.jsonl lines for every host
// chip.run.bind of log, in the order the log holds them (the runtime writes
// a pass as its bind ends): each records a host_orch operation over the
// first half of its bind, and one a worker thread recorded over the second.
func phasePassLines(t testing.TB, log []byte) []string {
	t.Helper()
	lines := bindPassLines(log)
	if len(lines) == 0 {
		t.Fatal("no bind to record")
	}
	return lines
}

// bindPassLines is a host_phase_records pass for every chip.run.bind of
// log, in the order written (phasePassLines without the test's verdict).
func bindPassLines(log []byte) []string {
	var lines []string
	rd := strace.NewReader(bytes.NewReader(log))
	for {
		rec, err := rd.Read()
		if err != nil {
			return lines
		}
		sp := &rec.Span
		if rec.Kind != strace.KindSpan || sp.Name != strace.SpanBind || sp.IsDevice() {
			continue
		}
		lines = append(lines, fmt.Sprintf(`{"pid": %d, "inv": %d, "clock": "host_monotonic_ns", "dropped": 0, "records": [`+
			`{"phase": "graph_submit", "start_ns": %d, "end_ns": %d}, {"phase": "record_node", "start_ns": %d, "end_ns": %d, "tid": 9999}]}`,
			sp.Pid, sp.Inv, sp.TS, sp.TS+sp.Dur/2, sp.TS+sp.Dur/2, sp.TS+sp.Dur))
	}
}

func jsonl(lines []string) []byte { return []byte(strings.Join(lines, "\n") + "\n") }

// convertWithRecords converts log with the artifact records and checks the
// account.
func convertWithRecords(t *testing.T, w io.Writer, log []byte, records phasetrace.Input) *phasetrace.Summary {
	t.Helper()
	sum, err := phasetrace.Convert(w, []phasetrace.Input{phasetrace.Bytes("gen.log", log)}, phasetrace.WithPhaseRecords(records))
	if err != nil {
		t.Fatal(err)
	}
	if err := sum.Spans.Check(); err != nil {
		t.Error(err)
	}
	return sum
}

// sameTrace reports how two traces differ, slice by slice.
func sameTrace(t *testing.T, want, got []byte) {
	t.Helper()
	sameTraceAs(want)(t, got, nil)
}

// sameTraceAs is sameTrace against want for several traces in turn: want
// is read back once, and a trace byte for byte one already found the same
// is not read back again. Given got's read-back (check.ReadBytes), it
// does not read got either.
func sameTraceAs(want []byte) func(t *testing.T, got []byte, gotRead *check.Trace) {
	var wantDump string
	var same [][]byte
	return func(t *testing.T, got []byte, gotRead *check.Trace) {
		t.Helper()
		if bytes.Equal(want, got) || slices.ContainsFunc(same, func(b []byte) bool { return bytes.Equal(b, got) }) {
			return
		}
		// Convert's trace names its inputs in the conversion instant, a
		// Builder's none: the rest is the same.
		if wantDump == "" {
			wantDump = traceDump(want, nil)
		}
		if diff := cmp.Diff(wantDump, traceDump(got, gotRead)); diff != "" {
			t.Errorf("the traces differ (-want +got):\n%s", diff)
			return
		}
		same = append(same, got)
	}
}

// traceDump is check's dump of trace b read back with readTrace; tr, when
// not nil, is b's read-back (check.ReadBytes), which it leaves whole.
func traceDump(b []byte, tr *check.Trace) string {
	if tr == nil {
		tr, _ = readTrace(b)
	} else {
		cp := *tr
		stripAbout(&cp)
		tr = &cp
	}
	var d bytes.Buffer
	tr.Dump(&d)
	return d.String()
}

// TestPhaseRecordsStreamedAsHeld converts generated logs with a pass for
// every run, in the order the runtime writes them — the realistic shape,
// and 20 000 runs of four threads, more than twice Convert's window — and
// gives the same values to a Builder, which holds the artifact whole: the
// traces are the same bytes, every pass is drawn in its bind, and the
// accounts agree.
func TestPhaseRecordsStreamedAsHeld(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("converts a log of 20 000 runs twice")
	}
	for name, log := range map[string][]byte{
		"realistic": generated(stracetest.Realistic(1 << 20)),
		"threads":   stracetest.Threads(4, 5000),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			lines := phasePassLines(t, log)
			if name == "threads" && len(lines) < 2*8192 {
				t.Fatalf("%d passes, want more than twice the window's 8192", len(lines))
			}
			art := phasetrace.Bytes(recordsName, jsonl(lines))
			var streamed bytes.Buffer
			sum := convertWithRecords(t, &streamed, log, art)
			held, heldSum := buildFromRecords(t, log, phasetrace.WithPhaseRecords(art))
			tr, err := check.ReadBytes(streamed.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			sameTraceAs(held)(t, streamed.Bytes(), tr)
			if n := sum.NotDrawn[phasetrace.ReasonPassesWithoutBind]; n != 0 {
				t.Errorf("%d of %d passes not drawn, want every one in its bind", n, len(lines))
			}
			if diff := cmp.Diff(heldSum.NotDrawn, sum.NotDrawn); diff != "" {
				t.Errorf("records not drawn (-held +streamed):\n%s", diff)
			}
			if diff := cmp.Diff(heldSum.Spans, sum.Spans); diff != "" {
				t.Errorf("span account (-held +streamed):\n%s", diff)
			}
			if diff := cmp.Diff(heldSum.Artifacts, sum.Artifacts); diff != "" {
				t.Errorf("artifacts (-held +streamed):\n%s", diff)
			}
			fullNamed(t, tr)
			orch := 0
			for _, s := range tr.Slices {
				if strings.HasPrefix(s.Name, strace.SpanBind+".host_orch.") {
					orch++
				}
			}
			if orch != 2*len(lines) {
				t.Errorf("%d host_orch slices, want 2 for each of %d passes", orch, len(lines))
			}
		})
	}
}

// TestPhaseRecordsMemoryIsFlat converts generated logs of 20 000 and
// 40 000 runs (four threads, 6 and 12 MB), each with a pass for every run:
// Convert holds where each pass is (24 bytes a pass), not the passes, so
// the peak of live heap grows with the artifact by that index only.
func TestPhaseRecordsMemoryIsFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("converts 18 MB of logs")
	}
	peak := func(runs int) (uint64, int) {
		log := stracetest.Threads(4, runs/4)
		art := jsonl(phasePassLines(t, log))
		h := &heapSampler{}
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		base := ms.HeapAlloc
		sum, err := phasetrace.Convert(h, []phasetrace.Input{phasetrace.Bytes("gen.log", log)}, phasetrace.WithPhaseRecords(phasetrace.Bytes(recordsName, art)))
		if err != nil {
			t.Fatal(err)
		}
		if n := sum.NotDrawn[phasetrace.ReasonPassesWithoutBind]; n != 0 {
			t.Errorf("%d passes not drawn", n)
		}
		runtime.KeepAlive(log)
		runtime.KeepAlive(art)
		return h.peak - base, int(sum.Artifacts[0].Items)
	}
	p1, n1 := peak(20_000)
	p2, n2 := peak(40_000)
	t.Logf("peak live heap %d B with %d passes, %d B with %d passes", p1, n1, p2, n2)
	if n1 < 2*8192 || n2 < 2*n1-2 {
		t.Fatalf("%d and %d passes: the test wants twice the passes, both more than twice the window", n1, n2)
	}
	if grow, index := int64(p2)-int64(p1), int64(n2-n1)*24; grow > 2*index+256<<10 {
		t.Errorf("the peak of live heap grows by %d B with the artifact: want at most twice its index's %d B and 256 KiB", grow, index)
	}
}

// TestPhaseRecordsOutOfOrder converts a log of 8 800 runs with its
// artifact written in other orders — its last 100 passes first, reversed,
// shuffled — read from bytes (an input that seeks) and through an input
// that cannot seek: every pass is drawn, as a Builder holding the artifact
// whole draws it, the account holds, and nothing is said to be without
// its bind. A pass whose run is not in the log is counted as such, at its
// line.
func TestPhaseRecordsOutOfOrder(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("converts a log of 8 800 runs")
	}
	log := stracetest.Threads(4, 2200) // more passes than an unseekable input keeps
	lines := phasePassLines(t, log)
	n := len(lines)
	if n < 8192+100 {
		t.Fatalf("%d passes, want more than the 8192 an unseekable input keeps", n)
	}
	reversed := slices.Clone(lines)
	slices.Reverse(reversed)
	shuffled := slices.Clone(lines)
	rand.New(rand.NewPCG(1, 2)).Shuffle(n, func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	orders := map[string][]string{
		"last 100 first": append(slices.Clone(lines[n-100:]), lines[:n-100]...),
		"reversed":       reversed,
		"shuffled":       shuffled,
	}
	held, heldSum := buildFromRecords(t, log, phasetrace.WithPhaseRecords(phasetrace.Bytes(recordsName, jsonl(lines))))
	sameAsHeld := sameTraceAs(held)
	for name, order := range orders {
		art := jsonl(order)
		unseekable := phasetrace.Input{Name: recordsName, Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(art)), nil }}
		for _, in := range []phasetrace.Input{phasetrace.Bytes(recordsName, art), unseekable} {
			if name == "shuffled" && !seeks(t, in) {
				continue // far out of order without seeking: a read from the start per pass, below on a small log
			}
			var streamed bytes.Buffer
			sum := convertWithRecords(t, &streamed, log, in)
			if got := sum.NotDrawn[phasetrace.ReasonPassesWithoutBind]; got != 0 {
				t.Errorf("%s (seeks: %v): %d passes said without their chip.run.bind", name, seeks(t, in), got)
			}
			sameAsHeld(t, streamed.Bytes(), nil)
			if diff := cmp.Diff(heldSum.Spans, sum.Spans); diff != "" {
				t.Errorf("%s: span account (-held +streamed):\n%s", name, diff)
			}
		}
	}

	// Shuffled, a small log through an input that cannot seek.
	small := stracetest.Threads(4, 50)
	smallLines := phasePassLines(t, small)
	rand.New(rand.NewPCG(3, 4)).Shuffle(len(smallLines), func(i, j int) { smallLines[i], smallLines[j] = smallLines[j], smallLines[i] })
	// A pass of a run the log does not hold, written third.
	stray := `{"pid": 4100, "inv": 999999, "records": [{"phase": "args", "start_ns": 1000, "end_ns": 2000}]}`
	smallLines = slices.Insert(smallLines, 2, stray)
	art := jsonl(smallLines)
	opens := 0
	unseekable := phasetrace.Input{Name: recordsName, Open: func() (io.ReadCloser, error) {
		opens++
		return io.NopCloser(bytes.NewReader(art)), nil
	}}
	sum := convertWithRecords(t, io.Discard, small, unseekable)
	if got := sum.NotDrawn[phasetrace.ReasonPassesWithoutBind]; got != 1 {
		t.Errorf("small, shuffled, unseekable: %d passes without their bind, want the stray one", got)
	}
	var at []string
	for _, e := range sum.Examples {
		if e.Reason == phasetrace.ReasonPassesWithoutBind {
			at = append(at, e.At)
		}
	}
	if len(at) != 1 || at[0] != recordsName+":3" {
		t.Errorf("passes without bind at %v, want the stray one at %s:3", at, recordsName)
	}
	t.Logf("a shuffled artifact of %d passes that cannot seek opened %d times", len(smallLines), opens)
}

// seeks reports whether the input, opened, can seek.
func seeks(t *testing.T, in phasetrace.Input) bool {
	rc, err := in.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	_, ok := rc.(io.Seeker)
	return ok
}

// TestPhaseRecordsCutGzip converts a log with a gzip artifact cut in its
// data: Convert reads in its second pass what it read in its first, up to
// the cut, and draws what a Builder draws from it.
func TestPhaseRecordsCutGzip(t *testing.T) {
	t.Parallel()
	log := generated(stracetest.Realistic(200 << 10))
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(jsonl(phasePassLines(t, log)))
	zw.Close()
	path := filepath.Join(t.TempDir(), recordsName+".gz")
	if err := os.WriteFile(path, z.Bytes()[:z.Len()/2], 0o644); err != nil {
		t.Fatal(err)
	}
	art := phasetrace.File(path)
	var streamed bytes.Buffer
	sum := convertWithRecords(t, &streamed, log, art)
	if len(sum.Artifacts) != 1 || sum.Artifacts[0].Cut == "" || sum.Artifacts[0].Items == 0 {
		t.Fatalf("artifacts %+v, want one cut after some passes", sum.Artifacts)
	}
	held, heldSum := buildFromRecords(t, log, phasetrace.WithPhaseRecords(art))
	sameTrace(t, held, streamed.Bytes())
	if diff := cmp.Diff(heldSum.NotDrawn, sum.NotDrawn); diff != "" {
		t.Errorf("records not drawn (-held +streamed):\n%s", diff)
	}
	if diff := cmp.Diff(heldSum.Artifacts, sum.Artifacts); diff != "" {
		t.Errorf("artifacts (-held +streamed):\n%s", diff)
	}
}

// failAfter reads r and fails with errRead after n bytes.
type failAfter struct {
	r io.Reader
	n int
}

var errRead = errors.New("read failed")

func (f *failAfter) Read(p []byte) (int, error) {
	if f.n <= 0 {
		return 0, errRead
	}
	if len(p) > f.n {
		p = p[:f.n]
	}
	n, err := f.r.Read(p)
	f.n -= n
	return n, err
}

// TestPhaseRecordsSecondReadFails: an artifact that the first pass reads
// whole but whose second reading fails is an error of Convert, which
// unwraps to the reader's and names the artifact.
func TestPhaseRecordsSecondReadFails(t *testing.T) {
	t.Parallel()
	log := generated(stracetest.Realistic(200 << 10))
	art := jsonl(phasePassLines(t, log))
	opens := 0
	in := phasetrace.Input{Name: recordsName, Open: func() (io.ReadCloser, error) {
		opens++
		if opens == 1 {
			return io.NopCloser(bytes.NewReader(art)), nil
		}
		return io.NopCloser(&failAfter{r: bytes.NewReader(art), n: len(art) / 2}), nil
	}}
	_, err := phasetrace.Convert(io.Discard, []phasetrace.Input{phasetrace.Bytes("gen.log", log)}, phasetrace.WithPhaseRecords(in))
	if !errors.Is(err, errRead) || !strings.Contains(err.Error(), recordsName) {
		t.Errorf("Convert: %v, want the second reading's error, naming %s", err, recordsName)
	}
	if opens != 2 {
		t.Errorf("the artifact opened %d times, want 2", opens)
	}
}
