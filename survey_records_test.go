package phasetrace_test

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
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
	var lines []string
	rd := strace.NewReader(bytes.NewReader(log))
	for {
		rec, err := rd.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		sp := &rec.Span
		if rec.Kind != strace.KindSpan || sp.Name != strace.SpanBind || sp.IsDevice() {
			continue
		}
		lines = append(lines, fmt.Sprintf(`{"pid": %d, "inv": %d, "clock": "host_monotonic_ns", "dropped": 0, "records": [`+
			`{"phase": "graph_submit", "start_ns": %d, "end_ns": %d}, {"phase": "record_node", "start_ns": %d, "end_ns": %d, "tid": 9999}]}`,
			sp.Pid, sp.Inv, sp.TS, sp.TS+sp.Dur/2, sp.TS+sp.Dur/2, sp.TS+sp.Dur))
	}
	if len(lines) == 0 {
		t.Fatal("no bind to record")
	}
	return lines
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
	if bytes.Equal(want, got) {
		return
	}
	// Convert's trace names its inputs in the conversion instant, a
	// Builder's none: the rest is the same.
	wt, _ := readTrace(want)
	gt, _ := readTrace(got)
	var wd, gd bytes.Buffer
	wt.Dump(&wd)
	gt.Dump(&gd)
	if diff := cmp.Diff(wd.String(), gd.String()); diff != "" {
		t.Errorf("the traces differ (-want +got):\n%s", diff)
	}
}

// TestPhaseRecordsStreamedAsHeld converts generated logs with a pass for
// every run, in the order the runtime writes them — the realistic shape,
// and 20 000 runs of four threads, more than twice Convert's window — and
// gives the same values to a Builder, which holds the artifact whole: the
// traces are the same bytes, every pass is drawn in its bind, and the
// accounts agree.
func TestPhaseRecordsStreamedAsHeld(t *testing.T) {
	if testing.Short() {
		t.Skip("converts a log of 20 000 runs twice")
	}
	for name, log := range map[string][]byte{
		"realistic": generated(stracetest.Realistic(1 << 20)),
		"threads":   stracetest.Threads(4, 5000),
	} {
		t.Run(name, func(t *testing.T) {
			lines := phasePassLines(t, log)
			if name == "threads" && len(lines) < 2*8192 {
				t.Fatalf("%d passes, want more than twice the window's 8192", len(lines))
			}
			art := phasetrace.Bytes(recordsName, jsonl(lines))
			var streamed bytes.Buffer
			sum := convertWithRecords(t, &streamed, log, art)
			held, heldSum := buildFromRecords(t, log, phasetrace.WithPhaseRecords(art))
			sameTrace(t, held, streamed.Bytes())
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
			tr, err := check.ReadBytes(streamed.Bytes())
			if err != nil {
				t.Fatal(err)
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
// Convert holds a window of the artifact, not the artifact, so the peak of
// live heap does not grow with it.
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
	if int64(p2)-int64(p1) > 1<<20 {
		t.Errorf("the peak of live heap grows by %d B with the artifact: want at most 1 MiB", int64(p2)-int64(p1))
	}
}

// TestPhaseRecordsOutOfOrder converts a log of 8 800 runs with an
// artifact whose last 100 passes were written first, more than Convert's
// window before the runs that take them: they are pushed out of the window untaken and counted
// under ReasonPassesWithoutBind, the first at the artifact's first line;
// every other pass is drawn, and the account holds.
func TestPhaseRecordsOutOfOrder(t *testing.T) {
	if testing.Short() {
		t.Skip("converts a log of 8 800 runs")
	}
	log := stracetest.Threads(4, 2200) // more passes than the window and the early ones
	lines := phasePassLines(t, log)
	const early = 100
	if len(lines) < 8192+early {
		t.Fatalf("%d passes, want more than the window's 8192", len(lines))
	}
	n := len(lines)
	moved := append(append([]string(nil), lines[n-early:]...), lines[:n-early]...)
	sum := convertWithRecords(t, io.Discard, log, phasetrace.Bytes(recordsName, jsonl(moved)))
	if got := sum.NotDrawn[phasetrace.ReasonPassesWithoutBind]; got != early {
		t.Errorf("%d passes not drawn, want the %d written early", got, early)
	}
	var at []string
	for _, e := range sum.Examples {
		if e.Reason == phasetrace.ReasonPassesWithoutBind {
			at = append(at, e.At)
		}
	}
	if len(at) == 0 || at[0] != recordsName+":1" {
		t.Errorf("passes without bind at %v, want the first at %s:1", at, recordsName)
	}
	// Held whole, the same artifact draws every pass.
	_, heldSum := buildFromRecords(t, log, phasetrace.WithPhaseRecords(phasetrace.Bytes(recordsName, jsonl(moved))))
	if got := heldSum.NotDrawn[phasetrace.ReasonPassesWithoutBind]; got != 0 {
		t.Errorf("held whole: %d passes not drawn, want 0", got)
	}
}

// TestPhaseRecordsCutGzip converts a log with a gzip artifact cut in its
// data: Convert reads in its second pass what it read in its first, up to
// the cut, and draws what a Builder draws from it.
func TestPhaseRecordsCutGzip(t *testing.T) {
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
