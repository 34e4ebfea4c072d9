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

// converterMix feeds a Writer what the converter of a runtime log gives
// it: a dozen tracks; runs of eight slices nested up to four deep, given
// children first; ten arguments a slice (integers of every size, a few
// short strings that repeat); a flow from each run's bind stage to its
// runner; a flush between runs once 4096 slices wait.
type converterMix struct {
	w       *perfetto.Writer
	tracks  []perfetto.Track
	args    []perfetto.Arg
	flow    [1]perfetto.FlowID
	ts      int64
	runs    int
	waiting int
}

func newConverterMix(w *perfetto.Writer) *converterMix {
	m := &converterMix{w: w, ts: 5_000_000_000}
	for i := range 12 {
		m.tracks = append(m.tracks, w.Thread(perfetto.ThreadSpec{Pid: int32(4000 + i/4*100), Tid: int64(4000 + i), Name: "worker"}))
	}
	return m
}

// mixSlices is how many slices converterMix.run gives.
const mixSlices = 8

// run gives the writer one run on the next track.
func (m *converterMix) run() {
	type span struct {
		name    string
		at, dur int64
		depth   int32
		start   bool // starts the run's flow
		ends    bool // ends it
	}
	spans := [mixSlices]span{
		{name: "chip.run.bind.args", at: 10, dur: 100, depth: 2},
		{name: "chip.run.bind.host_orch", at: 120, dur: 200, depth: 2, start: true},
		{name: "chip.run.bind", at: 0, dur: 400, depth: 1},
		{name: "chip.run.runner_run.device_wall.sched", at: 500, dur: 300, depth: 3},
		{name: "chip.run.runner_run.device_wall", at: 450, dur: 500, depth: 2},
		{name: "chip.run.runner_run", at: 420, dur: 560, depth: 1, ends: true},
		{name: "chip.run.claim_release", at: 990, dur: 10, depth: 1},
		{name: "chip.run", at: 0, dur: 1000, depth: 0},
	}
	hids := [...]string{"51a7c0de42f00d17", "9f3c2a11d00db1e5"}
	t := m.tracks[m.runs%len(m.tracks)]
	inv := uint64(m.runs)
	m.flow[0] = perfetto.FlowID(1 + m.runs)
	for i, s := range spans {
		cpu := int64(150_000 + i*7919 + m.runs%1000)
		m.args = append(m.args[:0],
			perfetto.Uint("inv", inv), perfetto.String("hid", hids[m.runs/64%2]), perfetto.Int("depth", int64(s.depth)),
			perfetto.Int("cpu_ns", cpu), perfetto.Int("rec_cpu_ns", cpu/3), perfetto.Int("minflt", int64(100+i)),
			perfetto.Int("tminflt", int64(i*5)), perfetto.Int("nvcsw", 8), perfetto.Int("nivcsw", 1),
			perfetto.String("src", "host_phase_records"))
		sl := perfetto.Slice{Name: s.name, TS: m.ts + s.at*1000, Dur: s.dur * 1000, Depth: s.depth, Args: m.args, Ref: uint64(m.runs*mixSlices + i)}
		if s.start {
			sl.Flows = m.flow[:]
		}
		if s.ends {
			sl.EndFlows = m.flow[:]
		}
		m.w.Slice(t, sl)
	}
	m.runs++
	m.ts += 125_000 // each track's runs come 1.5 ms apart
	if m.waiting += mixSlices; m.waiting >= 4096 {
		m.waiting = 0
		m.w.Flush()
	}
}

// BenchmarkSlicesMixed measures the writer on the converter's mix
// (converterMix), per slice.
func BenchmarkSlicesMixed(b *testing.B) {
	out := &countingDiscard{}
	w := perfetto.NewWriter(out)
	m := newConverterMix(w)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i += mixSlices {
		m.run()
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	b.ReportMetric(float64(out.n)/float64(b.N), "bytes/slice")
	b.SetBytes(out.n / int64(b.N))
}
