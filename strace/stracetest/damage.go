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
// disk damages a .gz (GzipDamages, in that order; see DamageGzip).
func DamagedGzips(log []byte) []Damaged {
	z := Gzip(log)
	var out []Damaged
	for _, name := range GzipDamages() {
		if d, ok := DamageGzip(z, name); ok {
			out = append(out, Damaged{name, d})
		}
	}
	return out
}

// GzipDamages returns the names of the ways DamageGzip damages a .gz.
func GzipDamages() []string {
	return []string{"half", "no trailer", "half a trailer", "bad checksum", "corrupt data"}
}

// DamageGzip returns z, a gzip stream, damaged the way named: "half" (cut
// in half), "no trailer" (its CRC-32 and size missing), "half a trailer",
// "bad checksum" (a CRC-32 that does not match) or "corrupt data" (the
// first byte from the middle on whose flip makes the compressed data
// invalid). It reports false for another name, or for "corrupt data" when
// no flip does. z is left as it was.
func DamageGzip(z []byte, name string) ([]byte, bool) {
	switch name {
	case "half":
		return bytes.Clone(z[:len(z)/2]), true
	case "no trailer":
		return bytes.Clone(z[:len(z)-8]), true
	case "half a trailer":
		return bytes.Clone(z[:len(z)-3]), true
	case "bad checksum":
		b := bytes.Clone(z)
		b[len(b)-8] ^= 0xff
		return b, true
	case "corrupt data":
		b := bytes.Clone(z)
		for at := len(z) / 2; at < len(z)-8; at++ {
			b[at] ^= 0xff
			zr, err := gzip.NewReader(bytes.NewReader(b))
			if err == nil {
				var ce flate.CorruptInputError
				if _, err := io.Copy(io.Discard, zr); errors.As(err, &ce) {
					return b, true
				}
			}
			b[at] ^= 0xff
		}
	}
	return nil, false
}

// Gunzipped is what a gzip reader gives of z before it fails: the data a
// reader of a damaged .gz can keep (nil when z has no gzip header).
func Gunzipped(z []byte) []byte {
	zr, err := gzip.NewReader(bytes.NewReader(z))
	if err != nil {
		return nil
	}
	b, _ := io.ReadAll(zr)
	return b
}
