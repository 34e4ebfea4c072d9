package phasetrace_test

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/phasetrace/phasetrace"
)

// A gzip stream cut in its data or its trailer, with a wrong checksum or
// with corrupt compressed data, reads as the bytes before the damage and a
// clean end, with Cut saying why and after how many bytes; a whole stream reads whole
// with no cut.
func TestCutReader(t *testing.T) {
	t.Parallel()
	data := []byte(strings.Repeat("[STRACE] v=1 pid=1 tid=1 inv=1 hid=1 depth=0 name=chip.run ts=1 dur=2\n", 2000))
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(data)
	zw.Close()
	whole := z.Bytes()
	badCRC := bytes.Clone(whole)
	badCRC[len(badCRC)-8] ^= 0xff
	corrupt := bytes.Clone(whole)
	for at := len(whole) / 2; ; at++ { // the first flip from the middle on that makes the data corrupt
		corrupt[at] ^= 0xff
		zr, _ := gzip.NewReader(bytes.NewReader(corrupt))
		var ce flate.CorruptInputError
		if _, err := io.ReadAll(zr); errors.As(err, &ce) {
			break
		}
		corrupt[at] ^= 0xff
	}
	for _, c := range []struct {
		name string
		z    []byte
		cut  string // in Cut's text; "" for none
	}{
		{"whole", whole, ""},
		{"half", whole[:len(whole)/2], "is cut"},
		{"no trailer", whole[:len(whole)-8], "is cut"},
		{"half a trailer", whole[:len(whole)-3], "is cut"},
		{"bad checksum", badCRC, "checksum does not match"},
		{"corrupt data", corrupt, "compressed data is damaged"},
	} {
		zr, err := gzip.NewReader(bytes.NewReader(c.z))
		if err != nil {
			t.Fatal(err)
		}
		cr := phasetrace.NewCutReader(zr)
		got, err := io.ReadAll(cr)
		if err != nil || !bytes.HasPrefix(data, got) || c.cut == "" && len(got) != len(data) {
			t.Errorf("%s: read %d of %d bytes, %v", c.name, len(got), len(data), err)
		}
		why, after := cr.Cut()
		if c.cut == "" && why != "" || c.cut != "" && !strings.Contains(why, c.cut) || why != "" && after != int64(len(got)) {
			t.Errorf("%s: Cut = %q after %d bytes (%d read), want %q", c.name, why, after, len(got), c.cut)
		}
		if err := cr.Close(); err != nil {
			t.Errorf("%s: Close: %v", c.name, err)
		}
	}
}
