package phasetrace

import (
	"errors"
	"flag"
	"io"
	"os"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"github.com/phasetrace/phasetrace/strace"
)

// The repeat detector drops exactly the spans equal in every field to one
// of the last dedupWindow, whatever memory the spans it was given held.
func TestRecentSpans(t *testing.T) {
	long := strings.Repeat("v", strace.CanonicalValueLen+1)
	span := func(ts int64, attrs ...strace.Attr) strace.Span {
		return strace.Span{Pid: 1, Tid: 2, Inv: 3, Hid: 4, Depth: 1, Name: "chip.run.bind", TS: ts, Dur: 10, Attrs: attrs}
	}
	r := newRecentSpans()
	// Each span is given in a scratch copy, overwritten after the call, as
	// the reader's recycled records are.
	scratch := make([]strace.Attr, 8)
	var text []byte
	repeated := func(sp strace.Span) bool {
		in := sp
		in.Attrs = append(scratch[:0], sp.Attrs...)
		for i := range in.Attrs {
			if v := in.Attrs[i].Value; len(v) > strace.CanonicalValueLen {
				text = append(text[:0], v...)
				in.Attrs[i].Value = unsafe.String(&text[0], len(text))
			}
		}
		got := r.repeated(&in)
		for i := range scratch {
			scratch[i] = strace.Attr{Key: "poison", Value: "poison", Int: -1}
		}
		for i := range text {
			text[i] = '#'
		}
		return got
	}
	first := span(100, strace.Int("n", 7), strace.String("s", "x"), strace.String("l", long))
	if repeated(first) {
		t.Fatal("first span taken for a repeat")
	}
	if !repeated(first) {
		t.Error("the same span again not taken for a repeat")
	}
	differ := []strace.Span{
		span(101, first.Attrs...),
		span(100, strace.Int("n", 8), strace.String("s", "x"), strace.String("l", long)),
		span(100, strace.Int("n", 7), strace.String("s", "y"), strace.String("l", long)),
		span(100, strace.Int("n", 7), strace.String("s", "x"), strace.String("l", long+"w")),
		span(100, strace.Int("n", 7), strace.String("s", "x")),
		span(100, strace.Int("m", 7), strace.String("s", "x"), strace.String("l", long)),
		span(100, strace.Attr{Key: "n", Bare: true}, strace.String("s", "x"), strace.String("l", long)),
		span(100, strace.Uint("n", 1<<63), strace.String("s", "x"), strace.String("l", long)),
	}
	truncated := span(100, first.Attrs...)
	truncated.AttrsTruncated = true
	differ = append(differ, truncated)
	renamed := span(100, first.Attrs...)
	renamed.Name = "chip.run.bOnd"
	differ = append(differ, renamed)
	for i, sp := range differ {
		if repeated(sp) {
			t.Errorf("span %d taken for a repeat of an unequal one", i)
		}
	}
	// The window: a span repeats while fewer than dedupWindow spans came
	// after it.
	r = newRecentSpans()
	for i := range dedupWindow {
		if repeated(span(int64(i), strace.Int("i", int64(i)))) {
			t.Fatalf("span %d taken for a repeat", i)
		}
	}
	if !repeated(span(0, strace.Int("i", 0))) {
		t.Error("the oldest span of the window not taken for a repeat")
	}
	for i := range 3 * dedupWindow {
		if repeated(span(int64(dedupWindow+i), strace.Int("i", int64(i)))) {
			t.Fatalf("span %d taken for a repeat", dedupWindow+i)
		}
	}
	// Span i of the loop is the (W+i)th remembered (W = dedupWindow): W-2
	// came after span 2W+1, W after span 2W-1, which left the window.
	if !repeated(span(int64(3*dedupWindow+1), strace.Int("i", int64(2*dedupWindow+1)))) {
		t.Error("a span in the window not taken for a repeat")
	}
	if repeated(span(int64(3*dedupWindow-1), strace.Int("i", int64(2*dedupWindow-1)))) {
		t.Error("a span out of the window taken for a repeat")
	}
}

// BenchmarkRecentSpans replays the spans of the -benchfile log through the
// repeat detector, each from one reused record as the converter gets them:
//
//	go test -run XXX -bench RecentSpans -benchfile /tmp/mid.log .
func BenchmarkRecentSpans(b *testing.B) {
	f := flag.Lookup("benchfile")
	if f == nil || f.Value.String() == "" {
		b.Skip("no -benchfile log given")
	}
	in, err := os.Open(f.Value.String())
	if err != nil {
		b.Fatal(err)
	}
	defer in.Close()
	var spans []strace.Span
	rd := strace.NewReader(in)
	for {
		rec, err := rd.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			b.Fatal(err)
		}
		if rec.Kind == strace.KindSpan {
			spans = append(spans, rec.Span.Clone())
		}
	}
	var rec strace.Span
	scratch := make([]strace.Attr, 64)
	runtime.GC()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		r := newRecentSpans()
		for i := range spans {
			rec = spans[i]
			rec.Attrs = scratch[:copy(scratch, spans[i].Attrs)]
			r.repeated(&rec)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(spans)), "ns/span")
}
