package perfetto

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/klauspost/compress/flate"
)

// zlibWriter writes one zlib stream (RFC 1950) per bundle: the two-byte
// header, the deflate of github.com/klauspost/compress/flate at the
// writer's level and the Adler-32 checksum of the bundle, the same bytes
// as github.com/klauspost/compress/zlib's Writer (TestZlibWriterAsZlib).
// It exists for the checksum: zlib's hash/adler32 adds each byte on its
// own and took 2.6 % of a conversion's instructions, adler32 below a
// third of that (BenchmarkAdler32, and perfetto/PERFORMANCE.md).
type zlibWriter struct {
	hdr [2]byte // CMF and FLG: deflate, 32 KiB window, the level's bits, the check bits
	fw  *flate.Writer
}

func newZlibWriter(level int) (*zlibWriter, error) {
	flevel, err := zlibLevelBits(level)
	if err != nil {
		return nil, err
	}
	fw, err := flate.NewWriter(io.Discard, level)
	if err != nil {
		return nil, err
	}
	z := &zlibWriter{hdr: [2]byte{0x78, flevel}, fw: fw}
	z.hdr[1] += uint8(31 - binary.BigEndian.Uint16(z.hdr[:])%31)
	return z, nil
}

// zlibLevelBits returns the header's FLEVEL bits for a deflate level, as
// klauspost's zlib writes them.
func zlibLevelBits(level int) (byte, error) {
	switch level {
	case -2, 0, 1:
		return 0 << 6, nil
	case 2, 3, 4, 5:
		return 1 << 6, nil
	case 6, -1:
		return 2 << 6, nil
	case 7, 8, 9:
		return 3 << 6, nil
	}
	return 0, fmt.Errorf("zlib: invalid compression level: %d", level)
}

// compress writes the zlib stream of b to dst (a *bytes.Buffer, so that
// the header's bytes need not escape: no allocation per bundle).
func (z *zlibWriter) compress(dst *bytes.Buffer, b []byte) error {
	dst.Write(z.hdr[:])
	z.fw.Reset(dst)
	if len(b) > 0 {
		if _, err := z.fw.Write(b); err != nil {
			return err
		}
	}
	if err := z.fw.Close(); err != nil {
		return err
	}
	var sum [4]byte
	binary.BigEndian.PutUint32(sum[:], adler32(1, b))
	dst.Write(sum[:])
	return nil
}

// adlerMod is Adler-32's modulus; adlerBlock is how many bytes adler32
// adds before it reduces its sums, far below where its 64-bit sums could
// overflow.
const (
	adlerMod   = 65521
	adlerBlock = 1 << 16
)

// adler32 continues the Adler-32 checksum adler (1 for a new one) over p,
// as hash/adler32 does (TestAdler32, FuzzAdler32), 32 bytes a step. Of a
// step's four little-endian words, the even bytes and the odd bytes go in
// 16-bit lanes (e, o; t = e+o); a multiplication by a constant leaves in
// its top lane a weighted sum of the lanes, every lane kept below 2^16 so
// that no carry crosses. Byte j of word k adds 32-8k-j times to s2: once
// for each of the 8-j later bytes of its word and itself (the sum over
// the words of t·(7,5,3,1) + e·(1,1,1,1), as 8-j is 7-j+1 for an even j,
// 8-j for an odd one), and 8 times for each of the 3-k later words (the
// prefix sums of t).
func adler32(adler uint32, p []byte) uint32 {
	const (
		lanes = 0x00FF00FF00FF00FF
		ones  = 0x0001000100010001
		odd   = 0x0007_0005_0003_0001 // lane i weighs 7-2i in the top lane
	)
	s1, s2 := uint64(adler&0xffff), uint64(adler>>16)
	for len(p) > 0 {
		q := p
		if len(q) > adlerBlock {
			q = q[:adlerBlock]
		}
		p = p[len(q):]
		for len(q) >= 32 {
			a := binary.LittleEndian.Uint64(q)
			b := binary.LittleEndian.Uint64(q[8:])
			c := binary.LittleEndian.Uint64(q[16:])
			d := binary.LittleEndian.Uint64(q[24:])
			ea, eb, ec, ed := a&lanes, b&lanes, c&lanes, d&lanes
			p1 := ea + a>>8&lanes
			p2 := p1 + eb + b>>8&lanes
			p3 := p2 + ec + c>>8&lanes
			u := p3 + ed + d>>8&lanes // lanes below 2040
			e := ea + eb + ec + ed    // below 1020
			x := p1 + p2 + p3         // below 3060
			s2 += s1<<5 + (u*odd+e*ones)>>48 + (x*ones)>>48<<3
			s1 += u * ones >> 48
			q = q[32:]
		}
		for _, c := range q {
			s1 += uint64(c)
			s2 += s1
		}
		s1 %= adlerMod
		s2 %= adlerMod
	}
	return uint32(s2<<16 | s1)
}
