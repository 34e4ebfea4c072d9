package phasetrace

import (
	"compress/flate"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/phasetrace/phasetrace/strace"
)

func (c *converter) withInput(in Input, fn func(io.Reader) error) error {
	_, err := c.withInputCut(in, fn)
	return err
}

// withInputCut is withInput that also says why the input ended early when
// its stream was cut or damaged ("" when it was not): fn reads the bytes
// before the cut.
func (c *converter) withInputCut(in Input, fn func(io.Reader) error) (cut string, err error) {
	rc, err := openInput(in)
	if err != nil {
		return "", fmt.Errorf("phasetrace: %s: %w", in.Name, err)
	}
	err = fn(c.progress.wrap(rc))
	if cerr := rc.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return rc.cut, fmt.Errorf("phasetrace: %s: %w", in.Name, err)
	}
	return rc.cut, nil
}

func inputSummary(name string, st strace.Stats, cut *cutInput) InputSummary {
	s := InputSummary{
		Name: name, Bytes: st.Bytes, Lines: st.Lines,
		Records: map[string]int64{
			"span": st.Records.Spans, "wall-anchor": st.Records.WallAnchors, "device-anchor": st.Records.DeviceAnchors,
			"bind-phase": st.Records.BindPhases, "stamp": st.Records.Stamps, "autoload": st.Records.Autoloads,
		},
		Torn: st.Torn, UnknownVersion: st.UnknownVersion, Malformed: st.Malformed, LongLines: st.LongLines, InLongLines: st.InLongLines,
		Joined: st.Joined, MaybeCut: st.MaybeCut,
	}
	for _, p := range st.Problems {
		s.Problems = append(s.Problems, p.Error())
	}
	s.ProblemsOmitted = st.ProblemsOmitted
	if cut != nil && cut.cut != "" {
		s.Cut, s.CutAfter = cut.cut, cut.read
	}
	return s
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
