package perfetto_test

import (
	"io"
	"testing"

	"github.com/phasetrace/phasetrace/perfetto"
)

// countingDiscard counts the bytes a writer produced.
type countingDiscard struct{ n int64 }

func (c *countingDiscard) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return len(p), nil
}

var _ io.Writer = (*countingDiscard)(nil)

// benchSlices writes b.N complete slices in the realistic mix: interned
// names from a small set, two small integer annotations each, nested three
// deep (a root, a child, a grandchild), given children first as a log
// gives them, flushed every 3072 slices.
func benchSlices(b *testing.B, opts ...perfetto.Option) {
	names := [...]string{"chip.run", "chip.run.bind", "chip.run.bind.args", "chip.run.runner_run", "chip.run.validate"}
	out := &countingDiscard{}
	w := perfetto.NewWriter(out, opts...)
	th := w.Thread(perfetto.ThreadSpec{Pid: 1000, Tid: 1001, Name: "main"})
	args := make([]perfetto.Arg, 2)
	ts := int64(1_000_000_000)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		depth := int64(2 - i%3) // grandchild, child, then root
		inv := int64(i / 3)
		args[0] = perfetto.Int("inv", inv)
		args[1] = perfetto.Int("depth", depth)
		// grandchild [ts+200, +300], child [ts+100, +600], root [ts, +1000]
		w.Slice(th, perfetto.Slice{
			Name:  names[(i/3)%2*2+int(depth)],
			TS:    ts + 100*(2-depth),
			Dur:   1000 - 200*(2-depth) - 100*(2-depth),
			Depth: int32(depth),
			Args:  args,
		})
		if depth == 0 {
			ts += 1500
		}
		if i%3072 == 3071 {
			if err := w.Flush(); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	b.ReportMetric(float64(out.n)/float64(b.N), "bytes/slice")
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "slices/s")
	b.SetBytes(out.n / int64(b.N))
}

// BenchmarkSlices measures complete slices per second, output bytes per
// slice and allocations per slice with the default options.
func BenchmarkSlices(b *testing.B) { benchSlices(b) }

// BenchmarkSlicesCompressed is BenchmarkSlices with deflate bundles.
func BenchmarkSlicesCompressed(b *testing.B) { benchSlices(b, perfetto.WithCompression(1)) }

// BenchmarkSlicesAbsolute is BenchmarkSlices without delta timestamps.
func BenchmarkSlicesAbsolute(b *testing.B) { benchSlices(b, perfetto.WithDeltaTimestamps(false)) }
