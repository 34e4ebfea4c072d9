package check_test

import (
	"bytes"
	"io"
	"testing"

	"github.com/phasetrace/phasetrace/perfetto/check"
)

// BenchmarkReader reads a generated trace of 20 000 rounds (about 250 000
// events, out of order and compressed) as pftrace check does: no
// arguments, events sorted in runs of the default limit.
func BenchmarkReader(b *testing.B) {
	var trace bytes.Buffer
	writeRounds(b, &trace, 20_000, 1000, 3)
	dir := b.TempDir()
	b.SetBytes(int64(trace.Len()))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		rd := check.NewReader(bytes.NewReader(trace.Bytes()), check.WithTempDir(dir))
		for {
			_, err := rd.Read()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkRead reads the same trace whole into memory, every argument
// included.
func BenchmarkRead(b *testing.B) {
	var trace bytes.Buffer
	writeRounds(b, &trace, 20_000, 1000, 3)
	b.SetBytes(int64(trace.Len()))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := check.ReadBytes(trace.Bytes()); err != nil {
			b.Fatal(err)
		}
	}
}
