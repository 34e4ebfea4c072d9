package phasetrace

import (
	"compress/flate"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
)

// cutInput reads an input and turns a stream that stops early or is
// damaged — a compressed file cut in its data or its trailer
// (io.ErrUnexpectedEOF), a gzip checksum that does not match
// (gzip.ErrChecksum), corrupt compressed data (flate.CorruptInputError) —
// into the end of the input: what was read before it is kept, and cut says
// why the input ended there. Any other read error stays an error.
type cutInput struct {
	rc   io.ReadCloser
	read int64  // bytes read (decompressed)
	cut  string // why the input ended early; "" while it has not
}

// openInput opens in, to be read through a cutInput.
func openInput(in Input) (*cutInput, error) {
	rc, err := in.Open()
	if err != nil {
		return nil, err
	}
	return &cutInput{rc: rc}, nil
}

func (c *cutInput) Read(p []byte) (int, error) {
	if c.cut != "" {
		return 0, io.EOF
	}
	n, err := c.rc.Read(p)
	c.read += int64(n)
	if err != nil && err != io.EOF {
		if why := cutReason(err, c.read); why != "" {
			c.cut, err = why, io.EOF
		}
	}
	return n, err
}

// Close closes the input. Once it was cut, the decompressor's report of
// the cut at Close is not an error again.
func (c *cutInput) Close() error {
	err := c.rc.Close()
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
