package cli

import (
	"compress/flate"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
)

// CutReader reads a log's decompressed bytes and turns a gzip stream that
// stops early — cut in its data or in its trailer (CRC-32 and length) —,
// whose checksum does not match or whose compressed data is corrupt, into
// the end of the log: what was read is kept, and Cut says why the log ended
// there, in the words of the converter's phasetrace.InputSummary.Cut (the
// converter reads a damaged .gz the same way). Both commands keep the same
// records of it and say the same cut.
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
	if err != nil && err != io.EOF {
		if c.Cut = cutReason(err, c.read); c.Cut != nil {
			err = io.EOF
		}
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
	if c.Cut != nil && cutReason(err, c.read) != nil {
		err = nil
	}
	return err
}

// cutReason says why a read that failed with err after read bytes ended
// the log early, or is nil when err is not a cut or damaged stream.
func cutReason(err error, read int64) error {
	var corrupt flate.CorruptInputError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("the compressed stream is cut after %d bytes of data (the file was not written whole)", read)
	case errors.Is(err, gzip.ErrChecksum):
		return fmt.Errorf("the gzip checksum does not match after %d bytes of data (the file is damaged)", read)
	case errors.As(err, &corrupt):
		return fmt.Errorf("the compressed data is damaged after %d bytes of data (%v)", read, err)
	}
	return nil
}

// StdinIsTerminal reports whether f, standard input, is a terminal: a
// command given no log reads standard input unless it is one.
func StdinIsTerminal(f *os.File) bool { return isTerminal(f) }
