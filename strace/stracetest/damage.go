package stracetest

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"errors"
	"io"
)

// Damaged is a compressed log that arrived damaged, and how (its Name).
type Damaged struct {
	Name string
	Gz   []byte
}

// Gzip compresses log as gzip does.
func Gzip(log []byte) []byte {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write(log)
	zw.Close()
	return b.Bytes()
}

// DamagedGzips returns log compressed, then damaged each way a copy or a
// disk damages a .gz: "half" (cut in half), "no trailer" (its CRC-32 and
// size missing), "half a trailer", "bad checksum" (a CRC-32 that does not
// match) and "corrupt data" (the first byte from the middle on whose flip
// makes the compressed data invalid; left out when no flip does).
func DamagedGzips(log []byte) []Damaged {
	z := Gzip(log)
	badCRC := bytes.Clone(z)
	badCRC[len(badCRC)-8] ^= 0xff
	out := []Damaged{
		{"half", z[:len(z)/2]},
		{"no trailer", z[:len(z)-8]},
		{"half a trailer", z[:len(z)-3]},
		{"bad checksum", badCRC},
	}
	for at := len(z) / 2; at < len(z)-8; at++ {
		b := bytes.Clone(z)
		b[at] ^= 0xff
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			continue
		}
		var ce flate.CorruptInputError
		if _, err := io.ReadAll(zr); errors.As(err, &ce) {
			return append(out, Damaged{"corrupt data", b})
		}
	}
	return out
}
