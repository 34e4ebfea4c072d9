package cli

import (
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
)

// CutReader reads a log's decompressed bytes and turns a gzip stream that
// stops early — cut in its data or in its trailer (CRC-32 and length) —
// or whose checksum does not match, into the end of the log: what was read
// is kept, and Cut says why the log ended there. Both commands read a
// damaged .gz this way, so they keep the same records of it.
type CutReader struct {
	r    io.Reader
	read int64
	// Cut is why the log ended early; nil while it has not.
	Cut error
}

// NewCutReader reads r, a decompressing reader.
func NewCutReader(r io.Reader) *CutReader { return &CutReader{r: r} }

func (c *CutReader) Read(p []byte) (int, error) {
	if c.Cut != nil {
		return 0, io.EOF
	}
	n, err := c.r.Read(p)
	c.read += int64(n)
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF):
		c.Cut = fmt.Errorf("the gzip stream is cut: it ends after %d decompressed bytes without its end (the file was not written whole)", c.read)
		err = io.EOF
	case errors.Is(err, gzip.ErrChecksum):
		c.Cut = fmt.Errorf("the gzip stream's checksum does not match after %d decompressed bytes (the file is damaged)", c.read)
		err = io.EOF
	}
	return n, err
}

// Close closes r when it is an io.Closer. Once the log was cut, the
// decompressor's report of the cut at Close is not an error again.
func (c *CutReader) Close() error {
	rc, ok := c.r.(io.Closer)
	if !ok {
		return nil
	}
	err := rc.Close()
	if c.Cut != nil && (errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, gzip.ErrChecksum)) {
		err = nil
	}
	return err
}

// StdinIsTerminal reports whether f, standard input, is a terminal: a
// command given no log reads standard input unless it is one.
func StdinIsTerminal(f *os.File) bool { return isTerminal(f) }
