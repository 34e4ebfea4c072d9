package phasetrace_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"os"
	"runtime"
	"sync"
	"testing"

	"github.com/phasetrace/phasetrace"
	"github.com/phasetrace/phasetrace/perfetto"
	"github.com/phasetrace/phasetrace/strace"
	"github.com/phasetrace/phasetrace/strace/stracetest"
)

var benchSize = flag.Int("convsize", 8<<20, "bytes of generated log BenchmarkConvert converts")

// benchConfig is the shape of the benchmark logs (stracetest.Realistic)
// with the rounds given.
func benchConfig(rounds int) genConfig {
	cfg := stracetest.Realistic(0)
	cfg.Rounds = rounds
	return cfg
}

// roundsFor estimates the rounds that make a log of the benchmarks' shape
// size bytes long.
func roundsFor(size int64) int { return stracetest.RoundsFor(stracetest.Realistic(0), size) }

// doublingLogs returns the logs of the benchmarks' shape that the tests
// of what a log twice as long costs convert: one of about 4 MB and one of
// twice its rounds. They are generated once for all those tests, which
// only read them.
var doublingLogs = sync.OnceValues(func() (small, large []byte) {
	rounds := roundsFor(4 << 20)
	return generated(benchConfig(rounds)), generated(benchConfig(2 * rounds))
})

// BenchmarkConvert converts a generated log in memory end to end (both
// passes, placement, flows, the trace writer) and reports its throughput,
// the conversion's cost per span (time and allocations), the trace's size
// against the same spans as Chrome-trace JSON (the format of the runtime's
// own swimlane tool), and allocations. "deflate" is the command's default.
//
//	go test -run XXX -bench 'Convert$' -benchtime 3x -convsize 104857600 .
func BenchmarkConvert(b *testing.B) {
	log := generated(stracetest.Realistic(int64(*benchSize)))
	in := []phasetrace.Input{phasetrace.Bytes("bench.log", log)}
	for _, c := range []struct {
		name string
		opts []phasetrace.Option
	}{
		{"plain", nil},
		{"deflate", []phasetrace.Option{phasetrace.WithWriterOptions(perfetto.WithCompression(perfetto.DefaultCompressionLevel))}},
	} {
		b.Run(c.name, func(b *testing.B) {
			var out countingWriter
			out.n = benchConvert(b, in, int64(len(log)), c.opts)
			js := chromeJSONSize(b, log)
			b.ReportMetric(float64(out.n)/float64(len(log)), "trace/log")
			b.ReportMetric(float64(js)/float64(out.n), "json/trace")
		})
	}
}

var benchFile = flag.String("benchfile", "", "BenchmarkConvertFile converts this log (e.g. /tmp/mid.log)")

// BenchmarkConvertFile converts a log from a file as the command does with
// its defaults (perfetto.DefaultCompressionLevel), the trace written nowhere:
//
//	go run ./examples/loggen -size 100MB -o /tmp/mid.log
//	go test -run XXX -bench ConvertFile -benchtime 3x -benchfile /tmp/mid.log .
func BenchmarkConvertFile(b *testing.B) {
	if *benchFile == "" {
		b.Skip("no -benchfile log given (see README, Performance)")
	}
	st, err := os.Stat(*benchFile)
	if err != nil {
		b.Fatal(err)
	}
	in := []phasetrace.Input{phasetrace.File(*benchFile)}
	n := benchConvert(b, in, st.Size(), []phasetrace.Option{phasetrace.WithWriterOptions(perfetto.WithCompression(perfetto.DefaultCompressionLevel))})
	b.ReportMetric(float64(n), "trace-bytes")
}

var (
	benchSplit  = flag.Int("benchsplit", 200_000, "BenchmarkBigLogs: the most slices of a part")
	benchWindow = flag.String("benchwindow", "10s:20s", "BenchmarkBigLogs: the window")
)

// BenchmarkBigLogs converts a log from a file whole, split into parts
// (-benchsplit slices each, every part and the overview written nowhere)
// and through a window (-benchwindow), as the command does with its
// defaults, so that the three can be compared in one run:
//
//	go test -run XXX -bench BigLogs -benchtime 5x -benchfile /tmp/mid.log .
func BenchmarkBigLogs(b *testing.B) {
	if *benchFile == "" {
		b.Skip("no -benchfile log given (see README, Big logs)")
	}
	st, err := os.Stat(*benchFile)
	if err != nil {
		b.Fatal(err)
	}
	w, err := phasetrace.ParseWindow(*benchWindow)
	if err != nil {
		b.Fatal(err)
	}
	in := []phasetrace.Input{phasetrace.File(*benchFile)}
	deflate := phasetrace.WithWriterOptions(perfetto.WithCompression(perfetto.DefaultCompressionLevel))
	parts := func(int) (io.WriteCloser, string, error) { return nopCloser{&countingWriter{}}, "", nil }
	for _, c := range []struct {
		name string
		opts []phasetrace.Option
	}{
		{"whole", []phasetrace.Option{deflate}},
		{"split", []phasetrace.Option{deflate, phasetrace.WithSplit(*benchSplit, parts)}},
		{"window", []phasetrace.Option{deflate, phasetrace.WithWindowOf(w)}},
	} {
		b.Run(c.name, func(b *testing.B) { benchConvert(b, in, st.Size(), c.opts) })
	}
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// benchConvert runs the benchmark's conversions of in (size bytes of logs)
// and reports, besides throughput and allocations, the spans of a
// conversion and its time and allocations per span. It returns the trace's
// size.
func benchConvert(b *testing.B, in []phasetrace.Input, size int64, opts []phasetrace.Option) int64 {
	var out countingWriter
	var spans int64
	var before, after runtime.MemStats
	b.SetBytes(size)
	b.ReportAllocs()
	b.ResetTimer()
	runtime.ReadMemStats(&before)
	for i := 0; i < b.N; i++ {
		out.n = 0
		sum, err := phasetrace.Convert(&out, in, opts...)
		if err != nil {
			b.Fatal(err)
		}
		spans = sum.Spans.Read
	}
	runtime.ReadMemStats(&after)
	b.StopTimer()
	if spans > 0 {
		total := float64(spans) * float64(b.N)
		b.ReportMetric(total/float64(b.N), "spans/op")
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/total, "ns/span")
		b.ReportMetric(float64(after.Mallocs-before.Mallocs)/total, "allocs/span")
	}
	return out.n
}

type countingWriter struct{ n int64 }

func (c *countingWriter) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return len(p), nil
}

// chromeJSONSize is the size of the log's spans as Chrome-trace JSON
// complete events with their attributes as args, as the runtime's swimlane
// tool writes them.
func chromeJSONSize(tb testing.TB, log []byte) int64 {
	r := strace.NewReader(bytes.NewReader(log))
	var out countingWriter
	bw := bufio.NewWriter(&out)
	bw.WriteString(`{"traceEvents":[`)
	enc := json.NewEncoder(bw)
	first := true
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			tb.Fatal(err)
		}
		if rec.Kind != strace.KindSpan {
			continue
		}
		s := &rec.Span
		args := map[string]any{"inv": s.Inv, "hid": hexString(s.Hid), "depth": s.Depth, "os_tid": s.Tid}
		for _, a := range s.Attrs {
			switch a.Type {
			case strace.TypeInt:
				args[a.Key] = a.Int
			case strace.TypeUint:
				args[a.Key] = a.Uint
			default:
				args[a.Key] = a.Value
			}
		}
		if !first {
			bw.WriteByte(',')
		}
		first = false
		enc.Encode(map[string]any{"name": s.Name, "ph": "X", "ts": float64(s.TS) / 1000, "dur": float64(s.Dur) / 1000, "pid": s.Pid, "tid": s.Tid, "args": args})
	}
	bw.WriteString("]}")
	bw.Flush()
	return out.n
}

func hexString(v uint64) string {
	const digits = "0123456789abcdef"
	if v == 0 {
		return "0"
	}
	var b [16]byte
	i := len(b)
	for v > 0 {
		i--
		b[i] = digits[v&15]
		v >>= 4
	}
	return string(b[i:])
}

var jsonOf = flag.String("jsonof", "", "TestChromeJSONSize reports the size of this log's spans as Chrome-trace JSON")

// TestChromeJSONSize reports how large a log's spans are as Chrome-trace
// JSON, to compare a converted trace against:
//
//	go test -run TestChromeJSONSize -jsonof /tmp/mid.log -v .
func TestChromeJSONSize(t *testing.T) {
	if *jsonOf == "" {
		t.Skip("no -jsonof file given")
	}
	b, err := os.ReadFile(*jsonOf)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %d bytes of log, %d bytes as Chrome-trace JSON", *jsonOf, len(b), chromeJSONSize(t, b))
}
