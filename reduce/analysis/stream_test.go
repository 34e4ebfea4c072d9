package analysis

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"sync/atomic"
	"testing"
	"time"

	"github.com/phasetrace/phasetrace/strace"
	"github.com/phasetrace/phasetrace/strace/stracetest"
)

// generated returns a log of the runtime's shape (an L3 parent, chip
// ranks, an anchor per launch) with the given rounds.
func generated(rounds int) []byte {
	var b bytes.Buffer
	stracetest.Generate(&b, stracetest.Config{Seed: 99, Rounds: rounds, AnchorEvry: 100_000_000, Pipelined: true, Legacy: true, Ext: true})
	return b.Bytes()
}

// streamTables computes the tables of a log while reading it.
func streamTables(t testing.TB, data []byte, opts ...TablesOption) *Tables {
	t.Helper()
	tables := NewTables(opts...)
	if err := tables.ReadFrom(strace.NewReader(bytes.NewReader(data), strace.WithKinds(strace.KindSpan))); err != nil {
		t.Fatal(err)
	}
	return tables
}

// TestTablesMatchSlices checks that the streamed tables, with invocations
// closed as the log goes by, are the tables of the whole slice of spans.
func TestTablesMatchSlices(t *testing.T) {
	t.Parallel()
	data := generated(200)
	l, err := ReadLog(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	for _, maxOpen := range []int{16, DefaultMaxOpen} {
		tables := streamTables(t, data, WithMaxOpen(maxOpen))
		if n := tables.Late(); n != 0 {
			t.Errorf("max open %d: %d late spans", maxOpen, n)
		}
		if diff := quickDiff(AnalyzeTPOT(l.Spans), tables.TPOT()); diff != "" {
			t.Errorf("max open %d: TPOT (-slice +stream):\n%s", maxOpen, diff)
		}
		if diff := quickDiff(AnalyzeRounds(l.Spans), tables.Rounds()); diff != "" {
			t.Errorf("max open %d: rounds (-slice +stream):\n%s", maxOpen, diff)
		}
		if diff := quickDiff(AnalyzeTree(l.Spans), tables.Tree()); diff != "" {
			t.Errorf("max open %d: tree (-slice +stream):\n%s", maxOpen, diff)
		}
	}
}

// TestTablesLate checks that a span of a closed invocation is counted and
// left out.
func TestTablesLate(t *testing.T) {
	t.Parallel()
	span := func(inv uint64, name string, depth int32) *strace.Span {
		return &strace.Span{Pid: 1, Inv: inv, Hid: 0xab, Depth: depth, Name: name, Dur: 10}
	}
	tables := NewTables(WithMaxOpen(1))
	tables.Add(span(1, "chip.run", 0))
	tables.Add(span(2, "chip.run", 0)) // closes inv 1
	tables.Add(span(1, "chip.run.bind", 1))
	if got := tables.Late(); got != 1 {
		t.Errorf("Late() = %d, want 1", got)
	}
	if tp := tables.TPOT(); len(tp.Callables) != 1 || len(tp.Callables[0].Stages) != 0 {
		t.Errorf("TPOT = %+v, want no stage", tp)
	}
}

// peakHeap runs f and returns the most heap that any collection found
// live while it ran (runtime/metrics' /gc/heap/live:bytes, sampled every
// millisecond and after a last collection), above what was live before.
// Unlike a sampled HeapInuse it leaves out the garbage awaiting collection,
// whose amount depends on the GC's pacing, not on what the tables keep.
func peakHeap(f func()) uint64 {
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	live := func() uint64 {
		metrics.Read(sample)
		return sample[0].Value.Uint64()
	}
	runtime.GC()
	before := live()
	var peak atomic.Uint64
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
				peak.Store(max(peak.Load(), live()))
			}
		}
	}()
	f()
	close(stop)
	<-done
	runtime.GC()
	p := max(peak.Load(), live())
	return p - min(p, before)
}

// peakHeapReading is peakHeap of read given the file at path.
func peakHeapReading(t *testing.T, path string, read func(*os.File)) uint64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return peakHeap(func() { read(f) })
}

// TestTablesFlatHeap checks what the doc says grows with the log: the
// peak heap (above the log's bytes) of a log 4× as long grows by no more
// than the invocations' keys (and, for rounds, rows) and, for the tree, the
// 8 bytes of each span's duration, plus a fixed allowance. The logs are
// read from files, so that the heap holds only what the tables keep and
// the garbage the GC lets pile up stays as small as that.
func TestTablesFlatHeap(t *testing.T) {
	if testing.Short() {
		t.Skip("reads logs of 8 and 32 MB")
	}
	small, large := smallAndLargeLogs(t)
	type run struct {
		heap        uint64
		spans, invs int64
	}
	measure := func(path string, tables Table) run {
		var r run
		r.heap = peakHeapReading(t, path, func(f *os.File) {
			rd := strace.NewReader(f, strace.WithKinds(strace.KindSpan))
			tb := NewTables(WithTables(tables))
			if err := tb.ReadFrom(rd); err != nil {
				t.Error(err)
			}
			tb.finish()
			r.spans, r.invs = rd.Stats().Records.Spans, int64(len(tb.closed))
		})
		return r
	}
	const allowance = 4 << 20
	for _, c := range []struct {
		name   string
		tables Table
		per    func(spans, invs int64) int64 // bytes the doc lets grow
	}{
		{"tpot", TableTPOT, func(spans, invs int64) int64 { return 64 * invs }},
		{"rounds", TableRounds, func(spans, invs int64) int64 { return (64 + 2*56) * invs }},
		{"tree", TableTree, func(spans, invs int64) int64 { return 64*invs + 2*8*spans }},
	} {
		s, l := measure(small, c.tables), measure(large, c.tables)
		grew := int64(l.heap) - int64(s.heap)
		limit := c.per(l.spans-s.spans, l.invs-s.invs) + allowance
		t.Logf("%s: peak heap %d → %d bytes for %d → %d spans, %d → %d invocations (grew %d, allowed %d)",
			c.name, s.heap, l.heap, s.spans, l.spans, s.invs, l.invs, grew, limit)
		if grew > limit {
			t.Errorf("%s: peak heap grew by %d bytes for a log 4× as long, allowed %d", c.name, grew, limit)
		}
	}
}

// BenchmarkTables reads a generated log and computes the three span
// tables in one pass.
func BenchmarkTables(b *testing.B) {
	data := generated(3000)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		tables := streamTables(b, data)
		_ = WriteTPOT(io.Discard, tables.TPOT())
		_ = WriteRounds(io.Discard, tables.Rounds())
		_ = WriteTree(io.Discard, tables.Tree())
	}
}

// BenchmarkReadLogTables is the slice path: ReadLog, then each table.
func BenchmarkReadLogTables(b *testing.B) {
	data := generated(3000)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		l, err := ReadLog(bytes.NewReader(data))
		if err != nil {
			b.Fatal(err)
		}
		_ = WriteTPOT(io.Discard, AnalyzeTPOT(l.Spans))
		_ = WriteRounds(io.Discard, AnalyzeRounds(l.Spans))
		_ = WriteTree(io.Discard, AnalyzeTree(l.Spans))
	}
}

// smallAndLargeLogs writes two generated logs to files, the second 4× as
// long as the first, for the tests that the heap stays flat.
func smallAndLargeLogs(t *testing.T) (small, large string) {
	t.Helper()
	dir := t.TempDir()
	write := func(name string, rounds int) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, generated(rounds), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	return write("small.log", 1500), write("large.log", 6000)
}

// distinctNames adds n spans of n distinct names (ten to an invocation,
// each closed by its chip.run) to tb and returns the bytes of the names.
func distinctNames(tb *Tables, n int) int64 {
	var nameBytes int64
	for i := range n {
		inv := uint64(i / 10)
		ts := int64(1e12) + int64(i)*1000
		name := fmt.Sprintf("chip.run.stage%d", i)
		nameBytes += int64(len(name))
		tb.Add(&strace.Span{Pid: 5, Tid: 5, Inv: inv, Hid: 0x9f3c, Depth: 1, Name: name, TS: ts, Dur: 500})
		if i%10 == 9 {
			start := ts - 9000
			tb.Add(&strace.Span{Pid: 5, Tid: 5, Inv: inv, Hid: 0x9f3c, Name: "chip.run", TS: start, Dur: ts + 800 - start})
		}
	}
	return nameBytes
}

// TestTablesHeapPerName checks what a distinct span name costs the tables
// beyond its own bytes, kept after every invocation closed: a log of
// millions of distinct names must not take gigabytes.
func TestTablesHeapPerName(t *testing.T) {
	if testing.Short() {
		t.Skip("adds 240 000 spans")
	}
	const small, large = 40_000, 200_000
	for _, c := range []struct {
		name   string
		tables Table
		limit  int64 // bytes per name beyond its bytes
	}{
		{"tpot", TableTPOT, 96},
		{"rounds", TableRounds, 40},
		{"tree", TableTree, 96},
		{"all", AllTables, 176},
	} {
		heap := func(n int) (uint64, int64) {
			runtime.GC()
			var before runtime.MemStats
			runtime.ReadMemStats(&before)
			tb := NewTables(WithTables(c.tables))
			nameBytes := distinctNames(tb, n)
			tb.finish()
			runtime.GC()
			var after runtime.MemStats
			runtime.ReadMemStats(&after)
			runtime.KeepAlive(tb)
			return after.HeapAlloc - before.HeapAlloc, nameBytes
		}
		hs, bs := heap(small)
		hl, bl := heap(large)
		per := (int64(hl) - int64(hs) - (bl - bs)) / (large - small)
		t.Logf("%s: %d bytes a distinct name beyond its bytes (heap %d → %d for %d → %d names)", c.name, per, hs, hl, small, large)
		if per > c.limit {
			t.Errorf("%s: a distinct name costs %d bytes beyond its bytes, want at most %d", c.name, per, c.limit)
		}
	}
}
