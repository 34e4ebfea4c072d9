package check_test

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/phasetrace/phasetrace"
	"github.com/phasetrace/phasetrace/perfetto"
	"github.com/phasetrace/phasetrace/perfetto/check"
	"github.com/phasetrace/phasetrace/strace/stracetest"
)

// writeRounds writes a trace of rounds rounds to out, in the order a log
// gives them: each round's children before their parent, which comes one
// flush later and so lies, in the file, after slices later than it. A round
// has a parent slice and its children on a thread of one of two processes
// (one child an instant, one with a flow to the other process), a slice
// with arguments of every kind — one of distinct strings among them — on
// a custom track, a Begin/End pair, and an integer and a double counter
// value.
func writeRounds(t testing.TB, out io.Writer, rounds, distinct int, seed uint64) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 1))
	w := perfetto.NewWriter(out, perfetto.WithCompression(1), perfetto.WithFlushThreshold(64<<10))
	var threads, customs [2]perfetto.Track
	for i := range threads {
		p := w.Process(perfetto.ProcessSpec{Pid: int32(10 * (i + 1)), Name: fmt.Sprint("process ", i)})
		threads[i] = w.Thread(perfetto.ThreadSpec{Pid: int32(10 * (i + 1)), Tid: int64(10*(i+1) + 1), Name: "main"})
		customs[i] = w.Track(p, perfetto.TrackSpec{Name: "device"})
	}
	streamed := w.Track(perfetto.Track{}, perfetto.TrackSpec{Name: "streamed"})
	ints := w.CounterTrack(threads[0], perfetto.CounterSpec{Name: "depth"})
	floats := w.CounterTrack(threads[1], perfetto.CounterSpec{Name: "ratio"})
	w.WallClock(0, 1_700_000_000_000_000_000)
	var parent *perfetto.Slice
	var parentOn perfetto.Track
	for i := range rounds {
		ts := int64(i) * 10_000
		th := threads[i%2]
		flow := perfetto.FlowIDOf(fmt.Sprint("round ", i))
		w.Slice(th, perfetto.Slice{Name: "child", TS: ts + 100, Dur: 1000 + r.Int64N(500), Flows: []perfetto.FlowID{flow},
			Args: []perfetto.Arg{perfetto.Uint("inv", uint64(i)), perfetto.String("hid", fmt.Sprintf("0x%x", i%7))}})
		w.Instant(th, perfetto.Instant{Name: "ready", TS: ts + 2000})
		w.Slice(threads[1-i%2], perfetto.Slice{Name: "peer", TS: ts + 3000, Dur: 100, EndFlows: []perfetto.FlowID{flow}})
		w.Slice(customs[i%2], perfetto.Slice{Name: "device_wall", TS: ts + 500, Dur: 4000, Args: []perfetto.Arg{
			perfetto.Int("slot", -int64(i%3)), perfetto.Bool("cold", i%5 == 0), perfetto.Float("ratio", r.Float64()),
			perfetto.String("request", fmt.Sprint("request ", i%distinct)),
			perfetto.Dict("seg", perfetto.Int("on", r.Int64N(100)), perfetto.Int("off", 3)),
			perfetto.Array("cores", perfetto.Int("", 1), perfetto.Int("", int64(i%4))),
		}})
		w.Begin(streamed, perfetto.Slice{Name: "streaming", TS: ts + 10})
		w.End(streamed, ts+9000)
		w.Counter(ints, ts+1, int64(i%11))
		w.CounterFloat(floats, ts+2, float64(i)/3)
		if i%16 == 15 {
			w.CounterFloat(floats, ts+3, math.NaN())
		}
		// The parent of the previous round comes now, after a flush.
		if parent != nil {
			w.Slice(parentOn, *parent)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		parent, parentOn = &perfetto.Slice{Name: "parent", TS: ts, Dur: 9000, Args: []perfetto.Arg{perfetto.Uint("inv", uint64(i))}}, th
	}
	if parent != nil {
		w.Slice(parentOn, *parent)
	}
	w.WallClock(int64(rounds)*10_000, 1_700_000_000_000_000_000+int64(rounds)*10_000)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// Every way of reading a generated trace, out of order and compressed,
// gives what the reference reader gives.
func TestReaderAgreesOnGeneratedTrace(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	writeRounds(t, &b, 300, 300, 1)
	agreeOn(t, b.Bytes())
	tr, err := check.ReadBytes(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Err(); err != nil || len(tr.Slices) < 300*5 || len(tr.Flows) != 300 {
		t.Fatalf("%d slices, %d flows: %v", len(tr.Slices), len(tr.Flows), err)
	}
}

// ... and so does a converted runtime log.
func TestReaderAgreesOnConvertedLog(t *testing.T) {
	t.Parallel()
	var log bytes.Buffer
	if err := stracetest.Generate(&log, stracetest.Realistic(256<<10)); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if _, err := phasetrace.Convert(&b, []phasetrace.Input{phasetrace.Bytes("run.log", log.Bytes())}); err != nil {
		t.Fatal(err)
	}
	agreeOn(t, b.Bytes())
}

// heapPeak records the largest live heap seen at its samples.
type heapPeak struct {
	peak uint64
}

// sample measures the live heap at every period-th call (counted by n).
func (h *heapPeak) sample(n *int, period int) {
	*n++
	if *n%period != 1 {
		return
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	h.peak = max(h.peak, ms.HeapInuse)
}

// sampledReader samples the heap as the trace is read.
type sampledReader struct {
	r     io.Reader
	h     *heapPeak
	calls int
}

func (s *sampledReader) Read(p []byte) (int, error) {
	s.h.sample(&s.calls, 8)
	return s.r.Read(p)
}

// A Reader's memory does not grow with the trace: the live heap's peak
// while a trace is read (as pftrace check reads it: no arguments) is the
// same, within the memory limit (the read buffers of the runs merged at
// the end share it), for a trace eight times longer, both many times the
// limit. (The interned strings are a
// thousand: their tables grow with the distinct strings, up to the
// writer's limit, not with the trace.)
func TestReaderMemoryFlat(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("writes and reads traces of 0.3 and 2.6 million events")
	}
	dir := t.TempDir()
	const limit = 1 << 20
	peak := func(rounds int) (uint64, int) {
		path := filepath.Join(dir, fmt.Sprint(rounds, ".pftrace"))
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		writeRounds(t, f, rounds, 1000, 2)
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		f, err = os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		var h heapPeak
		rd := check.NewReader(&sampledReader{r: f, h: &h}, check.WithTempDir(dir), check.WithMemoryLimit(limit))
		defer rd.Close()
		slices := 0
		for {
			rec, err := rd.Read()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if rec.Kind == check.KindProblem {
				t.Fatalf("problem: %v", rec.Problem)
			}
			if rec.Kind == check.KindSlice {
				h.sample(&slices, 1<<14)
			}
		}
		return h.peak, slices
	}
	small, n := peak(25_000)
	large, m := peak(200_000)
	t.Logf("live heap's peak: %d MiB for %d slices, %d MiB for %d", small>>20, n, large>>20, m)
	if m < 8*n {
		t.Fatalf("%d and %d slices", n, m)
	}
	if large > small+limit || large > 6*limit {
		t.Errorf("live heap's peak %d B for %d slices, %d B for %d: it grows with the trace", small, n, large, m)
	}
}
