package analysis

import (
	"bytes"
	"errors"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/phasetrace/phasetrace/strace"
)

// streamOverlap proves the overlap of a log while reading it, with at most
// maxOpen invocations open.
func streamOverlap(t testing.TB, data []byte, maxOpen int, opts ...OverlapOption) (*Overlap, *OverlapProof, error) {
	t.Helper()
	o := NewOverlap(opts...)
	o.maxOpen = maxOpen
	if err := o.ReadFrom(strace.NewReader(bytes.NewReader(data), strace.WithKinds(strace.KindSpan))); err != nil {
		t.Fatal(err)
	}
	p, err := o.Proof()
	return o, p, err
}

// TestOverlapMatchesSlice checks that the streamed proof, with invocations
// closed as the log goes by, is the proof of the whole slice of spans.
func TestOverlapMatchesSlice(t *testing.T) {
	t.Parallel()
	data := generated(200)
	l, err := ReadLog(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	for _, hidden := range []bool{false, true} {
		var opts []OverlapOption
		if hidden {
			opts = append(opts, WithRequireHidden())
		}
		want, werr := ProveOverlap(l.Spans, opts...)
		if len(want.Pairs) == 0 {
			t.Fatalf("the generated log has no pair to prove: %v", werr)
		}
		for _, maxOpen := range []int{16, DefaultMaxOpen} {
			o, got, gerr := streamOverlap(t, data, maxOpen, opts...)
			if n := o.Late(); n != 0 {
				t.Errorf("max open %d: %d late spans", maxOpen, n)
			}
			if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b error) bool { return errors.Is(a, b) || a.Error() == b.Error() })); diff != "" {
				t.Errorf("hidden %v, max open %d: proof (-slice +stream):\n%s", hidden, maxOpen, diff)
			}
			if (werr == nil) != (gerr == nil) || (werr != nil && werr.Error() != gerr.Error()) {
				t.Errorf("hidden %v, max open %d: error %v, want %v", hidden, maxOpen, gerr, werr)
			}
		}
	}
}

// TestOverlapFlatHeap checks what the doc says grows with the log: the
// peak heap of a log 4× as long grows by no more than the invocations'
// keys and the native runs' identities and intervals (with the proof's
// pair for each), plus a fixed allowance.
func TestOverlapFlatHeap(t *testing.T) {
	if testing.Short() {
		t.Skip("reads logs of 8 and 32 MB")
	}
	small, large := smallAndLargeLogs(t)
	type run struct {
		heap       uint64
		invs, runs int64
	}
	measure := func(path string) run {
		var r run
		r.heap = peakHeapReading(t, path, func(f *os.File) {
			o := NewOverlap()
			if err := o.ReadFrom(strace.NewReader(f, strace.WithKinds(strace.KindSpan))); err != nil {
				t.Error(err)
			}
			r.invs = int64(len(o.closed) + len(o.open))
			_, _ = o.Proof()
			r.runs = int64(len(o.runs))
		})
		return r
	}
	const allowance = 4 << 20
	s, l := measure(small), measure(large)
	grew := int64(l.heap) - int64(s.heap)
	// per invocation its key in a map; per run ~100 bytes kept, a pair of
	// ~200 bytes with its error, and the slices' doubling.
	limit := 64*(l.invs-s.invs) + 2*400*(l.runs-s.runs) + allowance
	t.Logf("overlap: peak heap %d → %d bytes for %d → %d invocations, %d → %d native runs (grew %d, allowed %d)",
		s.heap, l.heap, s.invs, l.invs, s.runs, l.runs, grew, limit)
	if grew > limit {
		t.Errorf("peak heap grew by %d bytes for a log 4× as long, allowed %d", grew, limit)
	}
}

// BenchmarkOverlap reads a generated log and proves the overlap.
func BenchmarkOverlap(b *testing.B) {
	data := generated(3000)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		_, _, _ = streamOverlap(b, data, DefaultMaxOpen)
	}
}
