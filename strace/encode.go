package strace

import "bytes"

// The runtime's field encoding, both ways.
//
// The emitter percent-encodes (as %XX, upper-case hex) every byte outside
// printable ASCII 0x20..0x7E, and '%', '[' and ']'. In a span name it also
// encodes ' ' and '='; in the attribute text those two are the grammar's own
// delimiters and stay raw. A field is capped (names at NameCap, the attribute
// text at AttrsCap bytes, encoded); a field that does not fit is cut at a
// whole unit (one byte, or one %XX escape) and ends in '~'. The '~' itself is
// never encoded, so a value ending in '~' is read as cut.

// Caps of the runtime's encoded span fields, in bytes including the '~'.
const (
	NameCap  = 64
	AttrsCap = 192
)

const hexUpper = "0123456789ABCDEF"

// hexValue maps a byte to its hex digit value, or 0xFF.
var hexValue = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xFF
	}
	for i := byte(0); i < 10; i++ {
		t['0'+i] = i
	}
	for i := byte(0); i < 6; i++ {
		t['a'+i] = 10 + i
		t['A'+i] = 10 + i
	}
	return t
}()

func unhex(c byte) (byte, bool) {
	v := hexValue[c]
	return v, v != 0xFF
}

// appendDecoded appends src with every valid %XX escape decoded; an invalid
// escape (such as the "%0~" of a foreign emitter) stays as it is.
func appendDecoded(dst, src []byte) []byte {
	for {
		i := bytes.IndexByte(src, '%')
		if i < 0 {
			return append(dst, src...)
		}
		dst = append(dst, src[:i]...)
		src = src[i:]
		if len(src) >= 3 {
			hi, ok1 := unhex(src[1])
			lo, ok2 := unhex(src[2])
			if ok1 && ok2 {
				dst = append(dst, hi<<4|lo)
				src = src[3:]
				continue
			}
		}
		dst = append(dst, '%')
		src = src[1:]
	}
}

// safeByte reports whether the emitter writes c raw in a name (attrs false)
// or in the attribute text (attrs true).
func safeByte(c byte, attrs bool) bool {
	if c < 0x20 || c > 0x7E || c == '%' || c == '[' || c == ']' {
		return false
	}
	if c == ' ' || c == '=' {
		return attrs
	}
	return true
}

// cappedField builds one encoded field the way the emitter does: units are
// appended until one does not fit in the cap, then the field is closed with
// '~' (dropping the last unit when the field is exactly full).
type cappedField struct {
	buf       []byte
	start     int // len(buf) when the field began
	cap       int
	lastUnit  int
	truncated bool
}

func (f *cappedField) begin(buf []byte, capacity int) {
	*f = cappedField{buf: buf, start: len(buf), cap: capacity}
}

// add appends byte c, raw when raw is true and as %XX otherwise.
func (f *cappedField) add(c byte, raw bool) {
	if f.truncated {
		return
	}
	need := 3
	if raw {
		need = 1
	}
	if len(f.buf)-f.start+need > f.cap {
		f.truncated = true
		return
	}
	if raw {
		f.buf = append(f.buf, c)
	} else {
		f.buf = append(f.buf, '%', hexUpper[c>>4], hexUpper[c&0x0F])
	}
	f.lastUnit = need
}

// finish closes the field and returns the buffer.
func (f *cappedField) finish() []byte {
	if f.truncated && f.cap != 0 {
		if len(f.buf)-f.start == f.cap {
			f.buf = f.buf[:len(f.buf)-f.lastUnit]
		}
		f.buf = append(f.buf, '~')
	}
	return f.buf
}

// appendName appends a span name encoded and capped as the runtime does.
func appendName(dst []byte, name string) []byte {
	var f cappedField
	f.begin(dst, NameCap)
	for i := 0; i < len(name) && !f.truncated; i++ {
		c := name[i]
		f.add(c, safeByte(c, false))
	}
	return f.finish()
}

// appendAttrText appends attributes as the runtime's attribute text: tokens
// "key=value" joined by single spaces, encoded, and capped at AttrsCap as one
// field. A space inside a key or value, or '=' inside a key, is encoded so
// the text reads back as the same attributes (the runtime's callers never
// put those bytes there, so its own output is unchanged by this).
func appendAttrText(dst []byte, attrs []Attr) []byte {
	var f cappedField
	f.begin(dst, AttrsCap)
	first := true
	for i := range attrs {
		a := &attrs[i]
		if a.Bare && a.Key == "" {
			continue
		}
		if !first {
			f.add(' ', true)
		}
		first = false
		for j := 0; j < len(a.Key); j++ {
			c := a.Key[j]
			f.add(c, c != ' ' && c != '=' && safeByte(c, true))
		}
		if a.Bare {
			continue
		}
		f.add('=', true)
		addValue(&f, a)
		if f.truncated {
			break
		}
	}
	return f.finish()
}

func addValue(f *cappedField, a *Attr) {
	var num [24]byte
	var text []byte
	switch a.Type {
	case TypeInt:
		text = appendInt(num[:0], a.Int)
	case TypeUint:
		text = appendUint(num[:0], a.Uint)
	default:
		for j := 0; j < len(a.Value); j++ {
			c := a.Value[j]
			f.add(c, c != ' ' && safeByte(c, true))
		}
		return
	}
	for _, c := range text {
		f.add(c, true)
	}
}

// appendRawAttrs appends attributes unencoded, as a bind phase line carries
// them.
func appendRawAttrs(dst []byte, attrs []Attr) []byte {
	first := true
	for i := range attrs {
		a := &attrs[i]
		if a.Bare && a.Key == "" {
			continue
		}
		if !first {
			dst = append(dst, ' ')
		}
		first = false
		dst = append(dst, a.Key...)
		if a.Bare {
			continue
		}
		dst = append(dst, '=')
		switch a.Type {
		case TypeInt:
			dst = appendInt(dst, a.Int)
		case TypeUint:
			dst = appendUint(dst, a.Uint)
		default:
			dst = append(dst, a.Value...)
		}
	}
	return dst
}

// typeValue types a decoded value: canonical decimal integers only.
func typeValue(b []byte) (ValueType, int64, uint64) {
	if len(b) == 0 || len(b) > 20 {
		return TypeString, 0, 0
	}
	neg := b[0] == '-'
	d := b
	if neg {
		d = b[1:]
		if len(d) == 0 {
			return TypeString, 0, 0
		}
	}
	if d[0] == '0' && (len(d) > 1 || neg) {
		return TypeString, 0, 0
	}
	var u uint64
	for i, c := range d {
		if c < '0' || c > '9' {
			return TypeString, 0, 0
		}
		v := uint64(c - '0')
		if i >= 19 && u > (1<<64-1-v)/10 { // 19 digits cannot overflow
			return TypeString, 0, 0
		}
		u = u*10 + v
	}
	switch {
	case neg && u <= 1<<63:
		return TypeInt, int64(-u), 0 // -(1<<63) wraps to itself, the right value
	case neg:
		return TypeString, 0, 0
	case u <= maxInt64:
		return TypeInt, int64(u), 0
	default:
		return TypeUint, 0, u
	}
}

func appendInt(dst []byte, v int64) []byte {
	if v < 0 {
		dst = append(dst, '-')
		return appendUint(dst, uint64(-v)) // -MinInt64 wraps to 1<<63, the right magnitude
	}
	return appendUint(dst, uint64(v))
}

func appendUint(dst []byte, v uint64) []byte {
	var b [20]byte
	i := len(b)
	for v >= 10 {
		i--
		b[i] = byte('0' + v%10)
		v /= 10
	}
	i--
	b[i] = byte('0' + v)
	return append(dst, b[i:]...)
}

func appendHex(dst []byte, v uint64) []byte {
	var b [16]byte
	i := len(b)
	for v >= 16 {
		i--
		b[i] = "0123456789abcdef"[v&0xF]
		v >>= 4
	}
	i--
	b[i] = "0123456789abcdef"[v]
	return append(dst, b[i:]...)
}
