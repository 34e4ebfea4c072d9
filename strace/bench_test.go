package strace

import (
	"bytes"
	"flag"
	"io"
	"os"
	"runtime"
	"testing"
)

// BenchmarkRead parses a generated realistic log (chip runs with bind
// segments and device phases, node spans, anchors) of about 16 MB.
func BenchmarkRead(b *testing.B) {
	var buf bytes.Buffer
	spans, err := generateLog(&buf, 16<<20, 1)
	if err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	cpu0 := cpuTime()
	b.ResetTimer()
	for b.Loop() {
		r := NewReader(bytes.NewReader(data))
		var n int64
		for {
			rec, err := r.Read()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			if rec.Kind == KindSpan {
				n++
			}
		}
		if n != spans {
			b.Fatalf("read %d spans, want %d", n, spans)
		}
	}
	b.StopTimer()
	cpu := cpuTime() - cpu0
	runtime.ReadMemStats(&ms1)
	if cpu > 0 {
		// Throughput per second of CPU used: the single-core figure, even
		// when other processes compete for the cores.
		b.ReportMetric(float64(len(data))*float64(b.N)/cpu.Seconds()/1e6, "MB/cpu-s")
	}
	total := float64(spans) * float64(b.N)
	b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/total, "allocs/span")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/total, "ns/span")
}

// BenchmarkWrite writes spans with attributes through a Writer.
func BenchmarkWrite(b *testing.B) {
	w := NewWriter(io.Discard, WithProcess(1, 1), WithClock(func() int64 { return 1 }, func() int64 { return 2 }))
	attrs := kernelCounters(newLogGen(io.Discard, 1).rng, 12345)
	b.ReportAllocs()
	for b.Loop() {
		if err := w.HostSpan("chip.run.bind.host_orch", 1000, 2000, 2, attrs...); err != nil {
			b.Fatal(err)
		}
	}
}

var benchFile = flag.String("benchfile", "", "a log for BenchmarkReadFile (e.g. one written with -bigsample)")

// BenchmarkReadFile reads the -benchfile log from disk, the figure to set
// beside `wc -l` on the same file.
func BenchmarkReadFile(b *testing.B) {
	if *benchFile == "" {
		b.Skip("no -benchfile")
	}
	fi, err := os.Stat(*benchFile)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(fi.Size())
	b.ReportAllocs()
	var spans int64
	cpu0 := cpuTime()
	for b.Loop() {
		f, err := os.Open(*benchFile)
		if err != nil {
			b.Fatal(err)
		}
		r := NewReader(f)
		spans = 0
		for {
			rec, err := r.Read()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			if rec.Kind == KindSpan {
				spans++
			}
		}
		f.Close()
	}
	if cpu := cpuTime() - cpu0; cpu > 0 {
		b.ReportMetric(float64(fi.Size())*float64(b.N)/cpu.Seconds()/1e6, "MB/cpu-s")
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(spans)/float64(b.N), "ns/span")
}
