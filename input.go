package phasetrace

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
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
		return bytesInput{bytes.NewReader(b)}, nil
	}}
}

// bytesInput is a Bytes input opened: it can seek, as a file not
// compressed can (see seekableInput).
type bytesInput struct{ *bytes.Reader }

func (bytesInput) Close() error { return nil }

type bufferedFile struct {
	*bufio.Reader
	f *os.File
}

func (b *bufferedFile) Close() error { return b.f.Close() }

// Seek seeks the file and lets go of what was buffered.
func (b *bufferedFile) Seek(offset int64, whence int) (int64, error) {
	n, err := b.f.Seek(offset, whence)
	b.Reader.Reset(b.f)
	return n, err
}

// seekableInput: an opened input that can seek to a byte of its data —
// a file not compressed (File) or bytes (Bytes) — is read at the passes of
// a host_phase_records artifact a run needs, wherever they are
// (recordsInput). Compile-time checks:
var (
	_ io.Seeker = (*bufferedFile)(nil)
	_ io.Seeker = bytesInput{}
)

// recordsInput opens a host_phase_records artifact for the second pass:
// read through a CutReader, its bytes counted as progress, and an
// io.Seeker when the input opened is one.
type recordsInput struct {
	in       Input
	progress *progressCounter
}

func (r recordsInput) Open() (io.ReadCloser, error) {
	rc, err := r.in.Open()
	if err != nil {
		return nil, err
	}
	cr := NewCutReader(rc)
	opened := cutReadCloser{r.progress.wrap(cr), cr}
	if s, ok := rc.(io.Seeker); ok {
		return seekingReadCloser{opened, s}, nil
	}
	return opened, nil
}

// cutReadCloser reads through a CutReader and closes it: a cut's report
// at Close is not an error again.
type cutReadCloser struct {
	io.Reader
	cut *CutReader
}

func (c cutReadCloser) Close() error { return c.cut.Close() }

// seekingReadCloser is a cutReadCloser that seeks the input it reads.
type seekingReadCloser struct {
	cutReadCloser
	io.Seeker
}

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

// A CutReader reads a log's decompressed bytes and turns a stream that
// stops early or is damaged — a compressed file cut in its data or its
// trailer (io.ErrUnexpectedEOF), a gzip checksum that does not match
// (gzip.ErrChecksum), corrupt compressed data (flate.CorruptInputError) —
// into the end of the log: what was read before it is kept, and Cut says
// why the log ended there, in the words of InputSummary.Cut. Any other
// read error stays an error. Convert reads every input through one; a
// program that reads logs itself can too, and then says the same cut.
type CutReader struct {
	r    io.Reader
	read int64  // bytes read (decompressed)
	cut  string // why the log ended early; "" while it has not
}

// NewCutReader reads r, a decompressing reader (or any other).
func NewCutReader(r io.Reader) *CutReader { return &CutReader{r: r} }

func (c *CutReader) Read(p []byte) (int, error) {
	if c.cut != "" {
		return 0, io.EOF
	}
	n, err := c.r.Read(p)
	c.read += int64(n)
	if err != nil && err != io.EOF {
		if why := cutReason(err, c.read); why != "" {
			c.cut, err = why, io.EOF
		}
	}
	return n, err
}

// Cut says why the log ended early ("" when it did not) and after how
// many bytes of data (decompressed).
func (c *CutReader) Cut() (why string, after int64) { return c.cut, c.read }

// Close closes the reader it reads when that is an io.Closer. Once the log
// was cut, the decompressor's report of the cut at Close is not an error
// again.
func (c *CutReader) Close() error {
	rc, ok := c.r.(io.Closer)
	if !ok {
		return nil
	}
	err := rc.Close()
	if c.cut != "" && cutReason(err, c.read) != "" {
		err = nil
	}
	return err
}

// cutReason says why a read that failed with err after read bytes ended
// the input early, or is "" when err is not a cut or damaged stream.
func cutReason(err error, read int64) string {
	var corrupt flate.CorruptInputError
	switch {
	case err == nil:
		return ""
	case errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Sprintf("the compressed stream is cut after %d bytes of data (the file was not written whole)", read)
	case errors.Is(err, gzip.ErrChecksum):
		return fmt.Sprintf("the gzip checksum does not match after %d bytes of data (the file is damaged)", read)
	case errors.As(err, &corrupt):
		return fmt.Sprintf("the compressed data is damaged after %d bytes of data (%v)", read, err)
	}
	return ""
}

// progressCounter counts the bytes read through the readers it wraps
// (from several goroutines in the second pass) and reports now and then.
type progressCounter struct {
	fn   func(int64)
	mu   sync.Mutex
	n    int64
	last int64
}

func (p *progressCounter) wrap(r io.Reader) io.Reader {
	if p.fn == nil {
		return r
	}
	return &countingReader{r: r, p: p}
}

type countingReader struct {
	r io.Reader
	p *progressCounter
}

func (c *countingReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	p := c.p
	p.mu.Lock()
	p.n += int64(n)
	if p.n-p.last >= 4<<20 || err == io.EOF {
		p.last = p.n
		p.fn(p.n)
	}
	p.mu.Unlock()
	return n, err
}
