package phasetrace_test

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"testing"
	"time"

	"github.com/phasetrace/phasetrace"
	"github.com/phasetrace/phasetrace/perfetto"
)

var errBroken = errors.New("broken on purpose")

// failingReader fails after n bytes; with panics set it panics instead.
type failingReader struct {
	r      io.Reader
	n      int
	panics bool
}

func (f *failingReader) Read(b []byte) (int, error) {
	if f.n <= 0 {
		if f.panics {
			panic(errBroken)
		}
		return 0, errBroken
	}
	if len(b) > f.n {
		b = b[:f.n]
	}
	n, err := f.r.Read(b)
	f.n -= n
	return n, err
}

// failingWriter fails (or panics) after n bytes.
type failingWriter struct {
	n      int
	panics bool
}

func (f *failingWriter) Write(b []byte) (int, error) {
	if f.n < len(b) {
		if f.panics {
			panic(errBroken)
		}
		return 0, errBroken
	}
	f.n -= len(b)
	return len(b), nil
}

// failingParts opens the parts of a split trace: part n fails (or
// panics) after a few KB, the others take everything.
func failingParts(n int, panics bool) func(int) (io.WriteCloser, string, error) {
	return func(i int) (io.WriteCloser, string, error) {
		if i == n {
			return nopCloser{&failingWriter{n: 2_000, panics: panics}}, "", nil
		}
		return nopCloser{io.Discard}, "", nil
	}
}

// opensFailing is an input whose open number fail (1 or 2: the first or
// second pass) reads only n bytes before failing or panicking.
func opensFailing(log []byte, fail, n int, panics bool) phasetrace.Input {
	opens := 0
	return phasetrace.Input{Name: "failing.log", Open: func() (io.ReadCloser, error) {
		opens++
		if opens == fail {
			return io.NopCloser(&failingReader{r: bytes.NewReader(log), n: n, panics: panics}), nil
		}
		return io.NopCloser(bytes.NewReader(log)), nil
	}}
}

// convertRecovering runs Convert and returns the value it panicked with.
func convertRecovering(w io.Writer, in phasetrace.Input, opts ...phasetrace.Option) (panicked any, err error) {
	defer func() { panicked = recover() }()
	_, err = phasetrace.Convert(w, []phasetrace.Input{in}, opts...)
	return nil, err
}

// TestFailuresLeaveNothingBehind converts many times with inputs and
// outputs that fail or panic part way, with and without compression: each
// I/O failure is an error, each panic of the caller's reader or writer
// reaches the caller, and no goroutine or memory is left behind.
func TestFailuresLeaveNothingBehind(t *testing.T) {
	log := generated(genConfig{Seed: 7, Rounds: 12, AnchorEvry: 50_000_000, Pipelined: true, Legacy: true})
	// A log of several first-pass chunks, to fail while they are parsed.
	long := generated(genConfig{Seed: 7, Rounds: roundsFor(3 << 20), AnchorEvry: 50_000_000, Pipelined: true, Legacy: true})
	whole := func() phasetrace.Input { return phasetrace.Bytes("a.log", log) }
	compress := []phasetrace.Option{phasetrace.WithWriterOptions(perfetto.WithCompression(1), perfetto.WithFlushThreshold(4096))}
	cases := []struct {
		name      string
		in        func() phasetrace.Input
		w         io.Writer
		opts      []phasetrace.Option
		wantPanic bool
	}{
		{"input fails in the first pass", func() phasetrace.Input { return opensFailing(log, 1, len(log)/2, false) }, io.Discard, nil, false},
		{"input panics in the first pass", func() phasetrace.Input { return opensFailing(log, 1, len(log)/2, true) }, io.Discard, nil, true},
		{"long input fails in the first pass", func() phasetrace.Input { return opensFailing(long, 1, len(long)*3/4, false) }, io.Discard, nil, false},
		{"long input panics in the first pass", func() phasetrace.Input { return opensFailing(long, 1, len(long)*3/4, true) }, io.Discard, nil, true},
		{"input fails in the second pass", func() phasetrace.Input { return opensFailing(log, 2, len(log)/2, false) }, io.Discard, compress, false},
		{"input panics in the second pass", func() phasetrace.Input { return opensFailing(log, 2, len(log)/2, true) }, io.Discard, compress, true},
		{"output fails", whole, &failingWriter{n: 10_000}, nil, false},
		{"output fails, compressed", whole, &failingWriter{n: 10_000}, compress, false},
		{"output panics, compressed", whole, &failingWriter{n: 10_000, panics: true}, compress, true},
		{"a part fails, compressed", whole, io.Discard, append(compress, phasetrace.WithSplit(100, failingParts(3, false))), false},
		{"a part panics, compressed", whole, io.Discard, append(compress, phasetrace.WithSplit(100, failingParts(3, true))), true},
		{"the overview panics, split, compressed", whole, &failingWriter{n: 100, panics: true}, append(compress, phasetrace.WithSplit(100, failingParts(1<<30, false))), true},
		{"input panics in the second pass, split, compressed", func() phasetrace.Input { return opensFailing(log, 2, len(log)/2, true) }, io.Discard,
			append(compress, phasetrace.WithSplit(100, failingParts(1<<30, false))), true},
	}
	runtime.GC()
	baseGo := runtime.NumGoroutine()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	baseHeap := ms.HeapAlloc
	for range 10 {
		for _, tc := range cases {
			p, err := convertRecovering(tc.w, tc.in(), tc.opts...)
			switch {
			case tc.wantPanic && p != errBroken:
				t.Fatalf("%s: panic %v, want the caller's own panic", tc.name, p)
			case !tc.wantPanic && p != nil:
				t.Fatalf("%s: panicked: %v", tc.name, p)
			case !tc.wantPanic && !errors.Is(err, errBroken):
				t.Fatalf("%s: error %v, want the I/O error", tc.name, err)
			}
			if n := settledGoroutines(baseGo); n > baseGo {
				buf := make([]byte, 1<<16)
				t.Fatalf("%s: %d goroutines, %d before:\n%s", tc.name, n, baseGo, buf[:runtime.Stack(buf, true)])
			}
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&ms)
	if grown := int64(ms.HeapAlloc) - int64(baseHeap); grown > 8<<20 {
		t.Errorf("the heap grew by %d bytes over 60 failed conversions", grown)
	}
}

// settledGoroutines returns the number of goroutines once those that are
// ending have ended (a goroutine that closed its done channel may still be
// on its way out), giving up after a while.
func settledGoroutines(want int) int {
	n := runtime.NumGoroutine()
	for i := 0; i < 200 && n > want; i++ {
		time.Sleep(5 * time.Millisecond)
		n = runtime.NumGoroutine()
	}
	return n
}
