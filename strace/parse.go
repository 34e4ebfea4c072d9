package strace

import (
	"encoding/binary"
	"math/bits"
)

// status of a record parse.
type status uint8

const (
	stOK        status = iota
	stTorn             // the record's text ended where more grammar was due
	stMalformed        // a byte broke the grammar
	stUnknown          // a version this package does not define
	stCut              // the input ended inside the record, without a line end
)

// parser walks the text of one record, b, from i. A parse is torn when b
// ends before the grammar completes and every byte so far followed it, and
// malformed at the first byte that does not. The first failure sticks.
type parser struct {
	b       []byte
	i       int
	st      status
	field   string // the field being read when the parse failed
	what    string // what was wrong with it
	nameAt  int    // the span name's text, b[nameAt:nameEnd]
	nameEnd int
}

func (p *parser) fail(st status, field, what string) bool {
	if p.st == stOK {
		p.st, p.field, p.what = st, field, what
	}
	return false
}

func (p *parser) reasonText() string {
	if p.field == "" {
		return p.what
	}
	return p.field + ": " + p.what
}

func (p *parser) atEnd() bool { return p.i >= len(p.b) }

// space consumes one or more blanks before field.
func (p *parser) space(field string) bool {
	b, i := p.b, p.i
	if i >= len(b) {
		return p.fail(stTorn, field, "missing")
	}
	if b[i] != ' ' && b[i] != '\t' {
		return p.fail(stMalformed, field, "expected a blank before it")
	}
	for i++; i < len(b) && (b[i] == ' ' || b[i] == '\t'); i++ {
	}
	p.i = i
	return true
}

// next consumes the blanks and then the key k ("pid=") that start the
// next field.
func (p *parser) next(k string) bool {
	b, i := p.b, p.i
	if i < len(b) && b[i] == ' ' {
		i++
		for i < len(b) && (b[i] == ' ' || b[i] == '\t') {
			i++
		}
		if len(b)-i >= len(k) && string(b[i:i+len(k)]) == k {
			p.i = i + len(k)
			return true
		}
	}
	return p.space(k[:len(k)-1]) && p.key(k)
}

// blanks consumes one or more blanks (for the log prefix, no reasons).
func (p *parser) blanks() bool {
	s := p.i
	for p.i < len(p.b) && (p.b[p.i] == ' ' || p.b[p.i] == '\t') {
		p.i++
	}
	return p.i > s
}

// lit consumes the literal s (for the log prefix, no reasons).
func (p *parser) lit(s string) bool {
	if len(p.b)-p.i < len(s) || string(p.b[p.i:p.i+len(s)]) != s {
		return false
	}
	p.i += len(s)
	return true
}

// key consumes the literal k ("pid=").
func (p *parser) key(k string) bool {
	rest := p.b[p.i:]
	if len(rest) >= len(k) && string(rest[:len(k)]) == k {
		p.i += len(k)
		return true
	}
	n := min(len(k), len(rest))
	if string(rest[:n]) != k[:n] {
		return p.fail(stMalformed, k[:len(k)-1], "expected "+k)
	}
	return p.fail(stTorn, k[:len(k)-1], "cut in its key")
}

// uint consumes one or more decimal digits and returns their value,
// failing when it exceeds limit.
func (p *parser) uint(field string, limit uint64) (uint64, bool) {
	b, s := p.b, p.i
	i := s
	var u uint64
	for ; i < len(b) && i-s < 19; i++ { // 19 digits cannot overflow
		c := b[i] - '0'
		if c > 9 {
			break
		}
		u = u*10 + uint64(c)
	}
	for ; i < len(b); i++ {
		c := b[i] - '0'
		if c > 9 {
			break
		}
		if u > (1<<64-1)/10 || u == (1<<64-1)/10 && c > (1<<64-1)%10 {
			p.i = i
			return 0, p.fail(stMalformed, field, "out of range")
		}
		u = u*10 + uint64(c)
	}
	p.i = i
	if i == s {
		if i >= len(b) {
			return 0, p.fail(stTorn, field, "no value")
		}
		return 0, p.fail(stMalformed, field, "expected digits")
	}
	if u > limit {
		return 0, p.fail(stMalformed, field, "out of range")
	}
	return u, true
}

// version checks a version number just read.
func (p *parser) version(known bool) bool {
	if !p.atEnd() {
		if c := p.b[p.i]; c != ' ' && c != '\t' {
			return p.fail(stMalformed, "v", "expected digits")
		}
	}
	if !known {
		return p.fail(stUnknown, "v", "version not defined")
	}
	return true
}

func (p *parser) u64(dst *uint64, field string) bool {
	v, ok := p.uint(field, 1<<64-1)
	*dst = v
	return ok
}

// signed reads an optional '-' and digits in [-limit-1, limit].
func (p *parser) signed(field string, limit uint64) (int64, bool) {
	neg := p.i < len(p.b) && p.b[p.i] == '-'
	if neg {
		p.i++
		u, ok := p.uint(field, limit+1)
		return -int64(u), ok // -(limit+1) wraps to the minimum, as intended
	}
	u, ok := p.uint(field, limit)
	return int64(u), ok
}

func (p *parser) i64(dst *int64, field string) bool {
	v, ok := p.signed(field, maxInt64)
	*dst = v
	return ok
}

func (p *parser) i32(dst *int32, field string) bool {
	v, ok := p.signed(field, 1<<31-1)
	*dst = int32(v)
	return ok
}

// hex reads one or more hex digits into a uint64.
func (p *parser) hex(dst *uint64, field string) bool {
	b, s := p.b, p.i
	i := s
	var u uint64
	for ; i < len(b); i++ {
		d, ok := unhex(b[i])
		if !ok {
			break
		}
		if u>>60 != 0 {
			p.i = i
			return p.fail(stMalformed, field, "out of range")
		}
		u = u<<4 | uint64(d)
	}
	p.i = i
	if i == s {
		if i >= len(b) {
			return p.fail(stTorn, field, "no value")
		}
		return p.fail(stMalformed, field, "expected hex digits")
	}
	*dst = u
	return true
}

// name reads the span name: the bytes up to the next blank.
func (p *parser) name() bool {
	b, i := p.b, p.i
	p.nameAt = i
	for i < len(b) && b[i] != ' ' && b[i] != '\t' {
		i++
	}
	p.i, p.nameEnd = i, i
	return true
}

// word reads a bind phase name: one or more of [A-Za-z0-9_].
func (p *parser) word(field string) bool {
	s := p.i
	for p.i < len(p.b) {
		c := p.b[p.i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_') {
			break
		}
		p.i++
	}
	if p.i == s {
		if p.atEnd() {
			return p.fail(stTorn, field, "no value")
		}
		return p.fail(stMalformed, field, "expected a word")
	}
	return true
}

// tail accepts the end of the text, or blanks before attribute text, after
// the last fixed field.
func (p *parser) tail(field string) bool {
	if p.atEnd() {
		return true
	}
	if c := p.b[p.i]; c != ' ' && c != '\t' {
		return p.fail(stMalformed, field, "expected a blank after it")
	}
	for p.i < len(p.b) && (p.b[p.i] == ' ' || p.b[p.i] == '\t') {
		p.i++
	}
	return true
}

// end requires the end of the text after the last field.
func (p *parser) end(field string) bool {
	if !p.atEnd() {
		return p.fail(stMalformed, field, "trailing text after it")
	}
	return true
}

// spanGrammar reads a span's fixed fields, from after its [STRACE] marker to
// the attributes, by the grammar's rules.
func (p *parser) spanGrammar(s *Span) {
	if p.next("v=") {
		if v, ok := p.uint("v", 1<<32); ok && p.version(v == 1) {
			_ = p.next("pid=") && p.i32(&s.Pid, "pid") &&
				p.next("tid=") && p.i64(&s.Tid, "tid") &&
				p.next("inv=") && p.u64(&s.Inv, "inv") &&
				p.next("hid=") && p.hex(&s.Hid, "hid") &&
				p.next("depth=") && p.i32(&s.Depth, "depth") &&
				p.next("name=") && p.name() &&
				p.next("ts=") && p.i64(&s.TS, "ts") &&
				p.next("dur=") && p.i64(&s.Dur, "dur") &&
				p.tail("dur")
		}
	}
}

// spanFields reads a span's fixed fields, from after its [STRACE] marker to
// the attributes, in the form the runtime writes them: one space before each
// field, version 1, decimal values of at most 18 digits within their ranges,
// a hid of at most 16 hex digits. It reports whether b follows that form;
// when it does not, p.i is unchanged, the fields of *s it set before giving
// up are left as they are (the grammar, which must then read them, sets
// every field it reads), and the fields are to be read with the grammar's
// rules, which read the same values from any text the form accepts.
func (p *parser) spanFields(s *Span) bool {
	b, i := p.b, p.i
	if !keyAt(b, i, " v=1 pid=") {
		return false
	}
	var ok bool
	var v int64
	if v, i, ok = decimal(b, i+len(" v=1 pid=")); !ok || v != int64(int32(v)) || !keyAt(b, i, " tid=") {
		return false
	}
	s.Pid = int32(v)
	if s.Tid, i, ok = decimal(b, i+len(" tid=")); !ok || !keyAt(b, i, " inv=") {
		return false
	}
	if i += len(" inv="); i < len(b) && b[i] == '-' {
		return false
	}
	if v, i, ok = decimal(b, i); !ok || !keyAt(b, i, " hid=") {
		return false
	}
	s.Inv = uint64(v)
	h, i, ok := hex16(b, i+len(" hid="))
	if !ok || !keyAt(b, i, " depth=") {
		return false
	}
	s.Hid = h
	if v, i, ok = decimal(b, i+len(" depth=")); !ok || v != int64(int32(v)) || !keyAt(b, i, " name=") {
		return false
	}
	s.Depth = int32(v)
	nameAt := i + len(" name=")
	i = blankAt(b, nameAt)
	nameEnd := i
	if !keyAt(b, i, " ts=") {
		return false
	}
	if s.TS, i, ok = decimal(b, i+len(" ts=")); !ok || !keyAt(b, i, " dur=") {
		return false
	}
	if s.Dur, i, ok = decimal(b, i+len(" dur=")); !ok {
		return false
	}
	if i < len(b) {
		if b[i] != ' ' && b[i] != '\t' {
			return false
		}
		for i < len(b) && (b[i] == ' ' || b[i] == '\t') {
			i++
		}
	}
	p.i, p.nameAt, p.nameEnd = i, nameAt, nameEnd
	return true
}

// blankAt returns where the first blank at or after b[i] is, or len(b),
// looking at eight bytes at once.
func blankAt(b []byte, i int) int {
	for len(b)-i >= 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		if m := zeroBytes(x^0x2020202020202020) | zeroBytes(x^0x0909090909090909); m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
		i += 8
	}
	for i < len(b) && b[i] != ' ' && b[i] != '\t' {
		i++
	}
	return i
}

// zeroBytes marks the zero bytes of x with their high bit, exactly up to
// the first (a borrow may mark bytes after it).
func zeroBytes(x uint64) uint64 {
	return (x - 0x0101010101010101) &^ x & 0x8080808080808080
}

// keyAt reports whether b[i:] starts with k.
func keyAt(b []byte, i int, k string) bool {
	return len(b)-i >= len(k) && string(b[i:i+len(k)]) == k
}

// decimal reads an optional '-' and 1 to 18 decimal digits at b[i:],
// returning the value and where the digits end.
func decimal(b []byte, i int) (int64, int, bool) {
	neg := i < len(b) && b[i] == '-'
	if neg {
		i++
	}
	s := i
	var u uint64
	for len(b)-i >= 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		if x&0xF0F0F0F0F0F0F0F0 != 0x3030303030303030 || (x+0x0606060606060606)&0xF0F0F0F0F0F0F0F0 != 0x3030303030303030 {
			break // not eight digits
		}
		u = u*100_000_000 + eightDigits(x)
		i += 8
	}
	for ; i < len(b) && b[i]-'0' < 10; i++ {
		u = u*10 + uint64(b[i]-'0')
	}
	if i == s || i-s > 18 {
		return 0, 0, false
	}
	if neg {
		return -int64(u), i, true
	}
	return int64(u), i, true
}

// eightDigits returns the value of eight decimal digits, the first in the
// lowest byte of x.
func eightDigits(x uint64) uint64 {
	x -= 0x3030303030303030
	x = (x*10 + x>>8) & 0x00FF00FF00FF00FF
	x = (x*100 + x>>16) & 0x0000FFFF0000FFFF
	return (x*10000 + x>>32) & 0xFFFFFFFF
}

// Byte masks of the eight-bytes-at-once readers.
const (
	low7s = 0x7F7F7F7F7F7F7F7F
	high1 = 0x8080808080808080
	ones8 = 0x0101010101010101
)

// prefixTimes reads "<mono_ns>][T0x<thread>][" of a log prefix in the form
// the runtime writes it (at most 18 digits, at most 16 hex digits),
// reporting whether b follows that form; when it does not, nothing is read
// (p.i is unchanged), and the grammar's rules read the same values from any
// text the form accepts.
func (p *parser) prefixTimes(pf *Prefix) bool {
	b := p.b
	mono, i, ok := decimal(b, p.i)
	if !ok || !keyAt(b, i, "][T0x") {
		return false
	}
	h, i, ok := hex16(b, i+len("][T0x"))
	if !ok || len(b)-i < 2 || b[i] != ']' || b[i+1] != '[' {
		return false
	}
	pf.MonoNS, pf.Thread, p.i = mono, h, i+2
	return true
}

// hex16 reads the hex digits at b[i:], in the form the runtime writes them:
// one to sixteen, and returns their value and where they end. It declines
// no digit and more than sixteen (the grammar reads those). With sixteen
// bytes or more left it reads eight at a time (notHex, hexValues), as
// hex16Plain reads them one by one (TestHex16AsPlain, FuzzNumbers): the
// thread of every log prefix and the hid of every span took 3.3 % of a
// conversion's instructions one by one, 1.8 % eight at a time
// (BenchmarkPrefixNumbers; perfetto/PERFORMANCE.md).
func hex16(b []byte, i int) (v uint64, end int, ok bool) {
	if len(b)-i < 16 {
		return hex16Plain(b, i)
	}
	x := binary.LittleEndian.Uint64(b[i:])
	if o := notHex(x); o != 0 {
		n := bits.TrailingZeros64(o) >> 3
		return hexValues(x << (64 - 8*n)), i + n, n > 0
	}
	y := binary.LittleEndian.Uint64(b[i+8:])
	m := 8
	if o := notHex(y); o != 0 {
		m = bits.TrailingZeros64(o) >> 3
		y <<= 64 - 8*m
	} else if i+16 < len(b) && hexValue[b[i+16]] != 0xFF {
		return 0, i + 17, false // a seventeenth digit
	}
	return hexValues(x)<<(4*m) | hexValues(y), i + 8 + m, true
}

// hex16Plain is hex16 one byte at a time.
func hex16Plain(b []byte, i int) (v uint64, end int, ok bool) {
	s := i
	for ; i < len(b) && i-s <= 16; i++ {
		d := hexValue[b[i]]
		if d == 0xFF {
			break
		}
		v = v<<4 | uint64(d)
	}
	return v, i, i > s && i-s <= 16
}

// notHex marks the bytes of x that are not hex digits (of either case)
// with their high bit.
func notHex(x uint64) uint64 {
	x7 := x & low7s // each byte plus 0x80-c sets its high bit when it is c or more
	digit := (x7 + (0x80-'0')*ones8) &^ (x7 + (0x80-'9'-1)*ones8)
	l := x7 | 0x20*ones8 // 'A'..'F' as 'a'..'f'
	letter := (l + (0x80-'a')*ones8) &^ (l + (0x80-'f'-1)*ones8)
	return (^(digit | letter) | x) & high1
}

// hexValues returns the value of the eight hex digits of x, the first in
// its lowest byte; a zero byte reads as a 0 digit.
func hexValues(x uint64) uint64 {
	// Each byte to its value: the low nibble, plus 9 for a letter (bit 6).
	d := x&0x0F0F0F0F0F0F0F0F + x>>6&ones8*9
	// Pairs of digits, the first (lower byte) the higher nibble; then pairs
	// of pairs; then the two halves.
	d = (d<<4 | d>>8) & 0x00FF00FF00FF00FF
	d = (d<<8 | d>>16) & 0x0000FFFF0000FFFF
	return (d<<16 | d>>32) & 0xFFFFFFFF
}
