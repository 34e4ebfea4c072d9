package perfetto

import (
	"bytes"
	"flag"
	stdadler "hash/adler32"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/klauspost/compress/zlib"
)

// adlerInputs are inputs of every length up to a few steps, of all-0xFF
// bytes (the largest lane sums), and longer than a block.
func adlerInputs() [][]byte {
	rng := rand.New(rand.NewPCG(1, 2))
	var ins [][]byte
	for n := range 100 {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		ins = append(ins, b, bytes.Repeat([]byte{0xFF}, n))
	}
	for _, n := range []int{adlerBlock - 1, adlerBlock, adlerBlock + 17, 3*adlerBlock + 5, 1 << 20} {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		ins = append(ins, b, bytes.Repeat([]byte{0xFF}, n))
	}
	return ins
}

func TestAdler32(t *testing.T) {
	t.Parallel()
	for _, b := range adlerInputs() {
		if got, want := adler32(1, b), stdadler.Checksum(b); got != want {
			t.Fatalf("adler32 of %d bytes = %#x, hash/adler32 %#x", len(b), got, want)
		}
		// Continued from a checksum with sums near the modulus.
		h := stdadler.New()
		h.Write(bytes.Repeat([]byte{0xFF}, 5000))
		h.Write(b)
		if got, want := adler32(adler32(1, bytes.Repeat([]byte{0xFF}, 5000)), b), h.Sum32(); got != want {
			t.Fatalf("adler32 continued over %d bytes = %#x, hash/adler32 %#x", len(b), got, want)
		}
	}
}

func FuzzAdler32(f *testing.F) {
	for _, b := range adlerInputs()[:60] {
		f.Add(uint32(1), b)
	}
	f.Add(uint32(0xFFF0FFF0), bytes.Repeat([]byte{0xFF}, 40))
	f.Fuzz(func(t *testing.T, start uint32, b []byte) {
		// A checksum's sums are below the modulus.
		start = (start>>16%adlerMod)<<16 | start&0xFFFF%adlerMod
		h := stdadler.New()
		// hash/adler32 continues a checksum only through its binary state.
		state := append([]byte("adl\x01"), byte(start>>24), byte(start>>16), byte(start>>8), byte(start))
		if err := h.(interface{ UnmarshalBinary([]byte) error }).UnmarshalBinary(state); err != nil {
			t.Fatal(err)
		}
		h.Write(b)
		if got, want := adler32(start, b), h.Sum32(); got != want {
			t.Fatalf("adler32(%#x, %d bytes) = %#x, hash/adler32 %#x", start, len(b), got, want)
		}
	})
}

// TestZlibWriterAsZlib checks zlibWriter byte for byte against
// klauspost's zlib Writer, at every level, on a trace's bundles and on
// other bytes, with the writer reused as the compressor reuses it.
func TestZlibWriterAsZlib(t *testing.T) {
	t.Parallel()
	var trace bytes.Buffer
	w := NewWriter(&trace)
	tr := w.Thread(ThreadSpec{Pid: 1, Tid: 2, Name: "main"})
	for i := range 20000 {
		w.Slice(tr, Slice{Name: "step", TS: int64(i) * 1000, Dur: 500, Args: []Arg{Int("i", int64(i%37)), String("phase", "bind")}})
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	noise := make([]byte, 70000)
	for i := range noise {
		noise[i] = byte(rng.Uint32() % 7)
	}
	inputs := [][]byte{nil, {0}, []byte("x"), trace.Bytes(), trace.Bytes()[:DefaultBundleSize/3], noise}
	for level := -2; level <= 9; level++ {
		zw, err := newZlibWriter(level)
		if err != nil {
			t.Fatal(err)
		}
		for i, in := range inputs {
			var want bytes.Buffer
			ref, err := zlib.NewWriterLevel(&want, level)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := ref.Write(in); err != nil {
				t.Fatal(err)
			}
			if err := ref.Close(); err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			if err := zw.compress(&got, in); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want.Bytes()) {
				t.Fatalf("level %d, input %d (%d bytes): %d bytes, zlib's %d, not the same", level, i, len(in), got.Len(), want.Len())
			}
		}
	}
	for _, level := range []int{-3, 10} {
		if _, err := newZlibWriter(level); err == nil {
			t.Errorf("newZlibWriter(%d) accepted", level)
		}
	}
}

// BenchmarkAdler32 compares adler32 with hash/adler32 on a bundle of trace
// bytes:
//
//	go test ./perfetto -run XXX -bench Adler32
func BenchmarkAdler32(b *testing.B) {
	var trace bytes.Buffer
	w := NewWriter(&trace)
	tr := w.Thread(ThreadSpec{Pid: 1, Tid: 2, Name: "main"})
	for i := 0; trace.Len() < DefaultBundleSize; i++ {
		w.Slice(tr, Slice{Name: "step", TS: int64(i) * 1000, Dur: 500, Args: []Arg{Int("i", int64(i%37)), String("phase", "bind")}})
		if i%1000 == 0 {
			w.Flush()
		}
	}
	w.Close()
	in := trace.Bytes()[:DefaultBundleSize]
	b.Run("adler32", func(b *testing.B) {
		b.SetBytes(int64(len(in)))
		b.ReportAllocs()
		for b.Loop() {
			adler32(1, in)
		}
	})
	b.Run("hash-adler32", func(b *testing.B) {
		b.SetBytes(int64(len(in)))
		b.ReportAllocs()
		for b.Loop() {
			stdadler.Checksum(in)
		}
	})
}

var benchTrace = flag.String("benchtrace", "", "BenchmarkDeflateTrace deflates this uncompressed trace (-compress 0) in bundles")

// BenchmarkDeflateTrace deflates an uncompressed trace much as the Writer
// does with compression on, and nothing else: in bundles of
// DefaultBundleSize bytes (the Writer's end with the packet that reaches that
// size), each a zlib stream at DefaultCompressionLevel. It measures the
// part of a conversion's CPU that identical bytes at that level fix.
//
//	go run ./examples/strace2perfetto -q -compress 0 -o /tmp/mid0.pftrace /tmp/mid.log
//	go test ./perfetto -run XXX -bench DeflateTrace -benchtime 5x -benchtrace /tmp/mid0.pftrace
func BenchmarkDeflateTrace(b *testing.B) {
	if *benchTrace == "" {
		b.Skip("no -benchtrace given (see perfetto/PERFORMANCE.md)")
	}
	in, err := os.ReadFile(*benchTrace)
	if err != nil {
		b.Fatal(err)
	}
	zw, err := newZlibWriter(DefaultCompressionLevel)
	if err != nil {
		b.Fatal(err)
	}
	var out bytes.Buffer
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	var n int
	for b.Loop() {
		n = 0
		for rest := in; len(rest) > 0; {
			bundle := rest[:min(len(rest), DefaultBundleSize)]
			rest = rest[len(bundle):]
			out.Reset()
			if err := zw.compress(&out, bundle); err != nil {
				b.Fatal(err)
			}
			n += out.Len()
		}
	}
	b.ReportMetric(float64(n), "deflated-bytes")
}
