package phasetrace

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"strings"
)

// Input is one input file. The converter opens it more than once (it scans
// every log before it converts it, so that lanes, labels and clock anchors
// are known up front), so an Input is a way to open the data, not an open
// stream.
type Input struct {
	// Name is how summaries and errors refer to the input.
	Name string
	// Open returns a fresh reader of the input's bytes each time it is
	// called.
	Open func() (io.ReadCloser, error)
}

// File is the input at path. A file whose name ends in .gz, or which starts
// with the gzip magic bytes, is decompressed.
func File(path string) Input {
	return Input{Name: path, Open: func() (io.ReadCloser, error) {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		br := bufio.NewReaderSize(f, 1<<16)
		magic, _ := br.Peek(2)
		if strings.HasSuffix(path, ".gz") || bytes.Equal(magic, []byte{0x1f, 0x8b}) {
			zr, err := gzip.NewReader(br)
			if err != nil {
				f.Close()
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			return &gzipFile{Reader: zr, f: f}, nil
		}
		return &bufferedFile{Reader: br, f: f}, nil
	}}
}

// Bytes is an input held in memory.
func Bytes(name string, b []byte) Input {
	return Input{Name: name, Open: func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(b)), nil
	}}
}

type bufferedFile struct {
	*bufio.Reader
	f *os.File
}

func (b *bufferedFile) Close() error { return b.f.Close() }

type gzipFile struct {
	*gzip.Reader
	f *os.File
}

func (g *gzipFile) Close() error {
	err := g.Reader.Close()
	if cerr := g.f.Close(); err == nil {
		err = cerr
	}
	return err
}
