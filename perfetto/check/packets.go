package check

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"fmt"
	"io"
	"slices"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	pb "github.com/phasetrace/phasetrace/proto"
)

type byteReader interface {
	io.Reader
	io.ByteReader
}

// countingReader counts the bytes of the varints read through it.
type countingReader struct {
	r byteReader
	n int64
}

func (c *countingReader) ReadByte() (byte, error) {
	b, err := c.r.ReadByte()
	if err == nil {
		c.n++
	}
	return b, err
}

// framer cuts a trace into its TracePackets, one at a time, the packets of
// a compressed_packets bundle in place of the bundle: a bundle is a
// deflated Trace message, inflated whole (at most maxPacket bytes) and
// read before the packet after it. It keeps one packet's bytes and one
// inflated bundle, whatever the trace's length.
type framer struct {
	outer  countingReader
	inner  countingReader // the inflated bundle, while nested
	nested bool
	base   int64 // offset in the file of the bundle's packet, while nested
	buf    []byte
	bundle bytes.Buffer
	zr     io.ReadCloser
	// skipped lists the fields of Trace other than packet read since the
	// last call of next, by number and offset in the file.
	skipped []skippedField
}

type skippedField struct {
	num    protowire.Number
	offset int64
}

func newFramer(r io.Reader) *framer {
	br, ok := r.(byteReader)
	if !ok {
		br = bufio.NewReaderSize(r, 64<<10)
	}
	return &framer{outer: countingReader{r: br}}
}

// shrinkPast is the size past which a buffer that held one large packet
// or bundle is let go rather than kept for the next.
const shrinkPast = 4 << 20

// next unmarshals the next packet into pkt; io.EOF at the end of the
// trace. Any other error is a *FormatError that says where.
func (f *framer) next(pkt *pb.TracePacket) error {
	f.skipped = f.skipped[:0]
	for {
		cr, base := &f.outer, int64(0)
		if f.nested {
			cr, base = &f.inner, f.base
		}
		start := cr.n
		tag, err := binary.ReadUvarint(cr)
		if err == io.EOF {
			if f.nested {
				f.nested = false
				f.shrink()
				continue
			}
			return io.EOF
		}
		if err != nil {
			return &FormatError{Offset: base + start, Err: fmt.Errorf("%w: reading a field tag: %w", ErrFormat, err)}
		}
		num, typ := protowire.DecodeTag(tag)
		if num < 1 {
			return &FormatError{Offset: base + start, Err: fmt.Errorf("%w: invalid field tag %#x", ErrFormat, tag)}
		}
		if typ != protowire.BytesType {
			return &FormatError{Offset: base + start, Err: fmt.Errorf("%w: field %d of Trace has wire type %d, want length-delimited", ErrFormat, num, typ)}
		}
		n, err := binary.ReadUvarint(cr)
		if err != nil {
			return &FormatError{Offset: base + cr.n, Err: fmt.Errorf("%w: reading a length: %w", ErrFormat, err)}
		}
		if n > maxPacket {
			return &FormatError{Offset: base + start, Err: fmt.Errorf("%w: packet of %d bytes", ErrFormat, n)}
		}
		buf, err := f.readN(cr.r, int(n))
		if err != nil {
			return &FormatError{Offset: base + cr.n, Err: fmt.Errorf("%w: packet of %d bytes cut short: %w", ErrFormat, n, err)}
		}
		cr.n += int64(n)
		if num != 1 {
			// Not a packet: the trace processor's protobuf reader skips it,
			// but a file of such fields may sniff as another format.
			f.skipped = append(f.skipped, skippedField{num, base + start})
			continue
		}
		err = proto.Unmarshal(buf, pkt)
		if cap(f.buf) > shrinkPast {
			f.buf = nil
		}
		if err != nil {
			return &FormatError{Offset: base + start, Err: fmt.Errorf("%w: packet: %w", ErrFormat, err)}
		}
		c := pkt.GetCompressedPackets()
		if c == nil {
			return nil
		}
		if f.nested {
			return &FormatError{Offset: base + start, Err: fmt.Errorf("%w: compressed packets inside compressed packets", ErrFormat)}
		}
		if err := f.inflate(c); err != nil {
			return &FormatError{Offset: start, Err: err}
		}
		f.nested, f.base = true, start
		f.inner = countingReader{r: bytes.NewReader(f.bundle.Bytes())}
	}
}

// readN reads n bytes into the framer's buffer. It trusts the length with
// memory only as the bytes arrive: a corrupt length must not cost its
// size.
func (f *framer) readN(r io.Reader, n int) ([]byte, error) {
	if n <= cap(f.buf) {
		b := f.buf[:n]
		_, err := io.ReadFull(r, b)
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return b, err
	}
	b := f.buf[:0]
	for len(b) < n {
		chunk := min(n-len(b), max(len(b), 64<<10))
		b = slices.Grow(b, chunk)[:len(b)+chunk]
		m, err := io.ReadFull(r, b[len(b)-chunk:])
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return b[:len(b)-chunk+m], err
		}
	}
	f.buf = b
	return b, nil
}

// inflate inflates a bundle into f.bundle.
func (f *framer) inflate(c []byte) error {
	var err error
	if f.zr == nil {
		f.zr, err = zlib.NewReader(bytes.NewReader(c))
	} else {
		err = f.zr.(zlib.Resetter).Reset(bytes.NewReader(c), nil)
	}
	if err != nil {
		f.zr = nil
		return fmt.Errorf("%w: compressed packets: %w", ErrFormat, err)
	}
	f.bundle.Reset()
	if _, err := f.bundle.ReadFrom(io.LimitReader(f.zr, maxPacket+1)); err != nil {
		return fmt.Errorf("%w: compressed packets: %w", ErrFormat, err)
	}
	if f.bundle.Len() > maxPacket {
		// Cutting it would read part of a bundle as if it were all of it.
		return fmt.Errorf("%w: compressed packets inflate past %d bytes", ErrFormat, maxPacket)
	}
	return nil
}

// shrink lets go of a bundle buffer grown for one unusually large bundle.
func (f *framer) shrink() {
	if f.bundle.Cap() > shrinkPast {
		f.bundle = bytes.Buffer{}
	}
}
