package perfetto

import (
	"encoding/binary"
	"math"
	"slices"
	"unsafe"

	"google.golang.org/protobuf/encoding/protowire"
)

// Kind is the type of an argument's value.
type Kind uint8

// The kinds of argument values, each written as its own DebugAnnotation
// value field so the trace keeps the type.
const (
	KindInt Kind = iota + 1
	KindUint
	KindBool
	KindFloat
	KindString
	KindDict
	KindArray
)

// Arg is one typed argument of a slice or instant, shown in the UI's
// details panel. Build one with Int, Uint, Bool, Float, String, Dict or
// Array. Names and string values are interned on the track's sequence.
type Arg struct {
	Name string
	str  string
	// num is an int (two's complement), a uint, a bool (0/1) or float bits.
	num  uint64
	kids []Arg // a dictionary's entries or an array's elements
	kind Kind
}

// Int is an integer argument.
func Int(name string, v int64) Arg { return Arg{Name: name, kind: KindInt, num: uint64(v)} }

// Uint is an unsigned integer argument.
func Uint(name string, v uint64) Arg { return Arg{Name: name, kind: KindUint, num: v} }

// Bool is a boolean argument.
func Bool(name string, v bool) Arg {
	a := Arg{Name: name, kind: KindBool}
	if v {
		a.num = 1
	}
	return a
}

// Float is a floating-point argument. It is for measured ratios and the
// like; timestamps and durations are integers (use Int).
func Float(name string, v float64) Arg {
	return Arg{Name: name, kind: KindFloat, num: math.Float64bits(v)}
}

// String is a string argument.
func String(name, v string) Arg { return Arg{Name: name, kind: KindString, str: v} }

// Dict is a nested dictionary argument; its entries keep their order.
func Dict(name string, entries ...Arg) Arg {
	return Arg{Name: name, kind: KindDict, kids: entries}
}

// Array is an array argument; the elements' names are ignored.
func Array(name string, elems ...Arg) Arg {
	return Arg{Name: name, kind: KindArray, kids: elems}
}

// Kind reports the type of the value.
func (a Arg) Kind() Kind { return a.kind }

// appendAnnotations encodes args as DebugAnnotation fields numbered num
// (a field number under 16), interning names and string values on seq
// (named: the entries carry their names; array elements do not), looked up
// first in memo, if not nil (argMemo). Each annotation's value comes
// before its name (see eventStart). Named numbers and interned strings,
// the common case, go to appendScalars.
func appendAnnotations(b []byte, seq *sequence, args []Arg, num protowire.Number, named bool, memo *argMemo) []byte {
	tag := byte(num<<3) | byte(protowire.BytesType)
	for i := 0; i < len(args); i++ {
		if named {
			if b, i = appendScalars(b, seq, args, i, tag, memo); i == len(args) {
				break
			}
		}
		a := &args[i]
		var m message
		b, m = begin(b, num)
		switch a.kind {
		case KindInt:
			b = appendVarintField(b, fAnnInt, a.num)
		case KindUint:
			b = appendVarintField(b, fAnnUint, a.num)
		case KindBool:
			b = appendVarintField(b, fAnnBool, a.num)
		case KindFloat:
			b = appendFixed64Field(b, fAnnDouble, a.num)
		case KindString:
			if len(a.str) <= maxInternedValue {
				b = appendVarintField(b, fAnnStringIID, seq.internString(a.str))
			} else {
				b = appendStringField(b, fAnnString, a.str)
			}
		case KindDict:
			b = appendAnnotations(b, seq, a.kids, fAnnDictEntries, true, nil)
		case KindArray:
			b = appendAnnotations(b, seq, a.kids, fAnnArrayValues, false, nil)
		}
		if named {
			b = appendVarintField(b, fAnnNameIID, seq.memoized(memo.name(i), internAnnName, a.Name))
		}
		b = m.end(b)
	}
	return b
}

// appendScalars encodes args[i:], as appendAnnotations does under the
// field tag tag, as long as they are named numbers or interned strings,
// and returns where it stopped. Each is written in place, in room reserved
// for the longest (maxScalarAnnotation), its body under 128 bytes, so that
// its length takes one byte. The arguments the memo knows — the common
// case — are written by appendKnown, which calls nothing; the others one
// at a time here, interned and remembered.
func appendScalars(b []byte, seq *sequence, args []Arg, i int, tag byte, memo *argMemo) ([]byte, int) {
	for {
		if memo != nil {
			b, i = appendKnown(b, args, i, tag, memo)
		}
		if i == len(args) {
			return b, i
		}
		a := &args[i]
		v := a.num
		switch {
		case a.kind >= KindInt && a.kind <= KindBool:
		case a.kind == KindString && len(a.str) <= maxInternedValue:
			v = seq.memoized(memo.value(i), internString, a.str) // the value first, as interning always goes
		default:
			return b, i
		}
		b = appendScalar(b, tag, a.kind, v, seq.memoized(memo.name(i), internAnnName, a.Name))
		i++
	}
}

// appendKnown encodes args[i:], as appendScalars does, as long as the memo
// knows their names and, for strings, their values at their positions, and
// returns where it stopped. It calls nothing: it makes room once for every
// argument the memo can know, and writes each annotation in room of
// knownRoom bytes at its place, indexed within it, so that no store is
// checked against the slice's bounds.
func appendKnown(b []byte, args []Arg, i int, tag byte, m *argMemo) ([]byte, int) {
	args = args[:min(len(args), memoArgs)]
	if i >= len(args) {
		return b, i
	}
	if room := (len(args) - i) * knownRoom; cap(b)-len(b) < room {
		b = slices.Grow(b, room)
	}
	n, base := len(b), unsafe.Pointer(unsafe.SliceData(b))
	names, values := m.names[:len(args)], m.values[:len(args)]
	prevNames, prevValues := m.prevNames[:len(args)], m.prevValues[:len(args)]
	// The first bytes of an annotation — tag, length (set last) and value
	// tag — by kind: numbers' and interned strings'.
	const t = fAnnStringIID << 3 // a tag of two bytes
	heads := [4]uint32{
		KindInt:  uint32(tag) | uint32(valueTags[KindInt])<<16,
		KindUint: uint32(tag) | uint32(valueTags[KindUint])<<16,
		KindBool: uint32(tag) | uint32(valueTags[KindBool])<<16,
		0:        uint32(tag) | (t&0x7f|0x80)<<16 | t>>7<<24, // an interned string's: a number's kind&3 is never 0
	}
	for ; uint(i) < uint(len(args)); i++ {
		a, e := &args[i], &names[i]
		if e.p != unsafe.StringData(a.Name) || int(e.n) != len(a.Name) { // an unset entry never matches
			pe := &prevNames[i]
			if pe.p != unsafe.StringData(a.Name) || int(pe.n) != len(a.Name) {
				break
			}
			*e, *pe = *pe, *e // the other layout of the name's events
		}
		// (These checks are memoized's, written out: shared as a function,
		// even inlined, they took six more instructions per argument under
		// BenchmarkAnnotations, counted with cachegrind.)
		v, k, head := a.num, 3, heads[a.kind&3]
		if a.kind-KindInt >= 3 { // not a number
			ve := &values[i]
			if a.kind != KindString {
				return b[:n], i
			}
			if ve.p != unsafe.StringData(a.str) || int(ve.n) != len(a.str) {
				pe := &prevValues[i]
				if pe.p != unsafe.StringData(a.str) || int(pe.n) != len(a.str) {
					return b[:n], i
				}
				*ve, *pe = *pe, *ve
			}
			v, k, head = uint64(ve.iid), 4, heads[0]
		}
		// Within the room made above: n+knownRoom ≤ cap(b).
		d := (*[knownRoom]byte)(unsafe.Add(base, n))
		binary.LittleEndian.PutUint32(d[:4], head)
		for ; v >= 0x80; k++ { // at most nine bytes: k stays under 14
			d[k&15] = byte(v) | 0x80
			v >>= 7
		}
		// The value's last byte, then the name's tag and iid: with an iid
		// under 128 — most names — in one store of four bytes (the last
		// one past the annotation, in the room).
		if name := e.iid; name < 0x80 {
			binary.LittleEndian.PutUint32(d[k&15:], uint32(v)|fAnnNameIID<<3<<8|name<<16)
			k += 3
		} else {
			d[k&15] = byte(v)
			d[(k+1)&15] = fAnnNameIID << 3
			k += 2
			for ; name >= 0x80; k++ {
				d[k&(knownRoom-1)] = byte(name) | 0x80
				name >>= 7
			}
			d[k&(knownRoom-1)] = byte(name)
			k++
		}
		d[1] = byte(k - 2)
		n += k
	}
	return b[:n], i
}

// knownRoom is the room appendKnown writes an annotation in: a power of
// two at least maxScalarAnnotation.
const knownRoom = 32

// appendScalar appends one annotation under tag: a value v of kind (a
// string's: its iid), then the name's iid.
func appendScalar(b []byte, tag byte, kind Kind, v, name uint64) []byte {
	n := len(b)
	if cap(b)-n < maxScalarAnnotation {
		b = slices.Grow(b, maxScalarAnnotation)
	}
	d := b[n : n+maxScalarAnnotation]
	d[0] = tag
	k := 3
	if kind == KindString {
		const t = fAnnStringIID << 3 // a tag of two bytes
		d[2], d[3] = t&0x7f|0x80, t>>7
		k = 4
	} else {
		d[2] = valueTags[kind&3]
	}
	k += putVarint(d[k:], v)
	d[k] = fAnnNameIID << 3
	k++
	k += putVarint(d[k:], name)
	d[1] = byte(k - 2)
	return b[:n+k]
}

// maxScalarAnnotation is the size of the longest annotation appendScalars
// writes: its tag and length, a value tag of two bytes and a varint value
// of ten, the name's tag and a varint iid of five.
const maxScalarAnnotation = 1 + 1 + 2 + 10 + 1 + 5

// valueTags are the tags of the varint value fields of a DebugAnnotation,
// by Kind.
var valueTags = [...]byte{KindInt: fAnnInt << 3, KindUint: fAnnUint << 3, KindBool: fAnnBool << 3}

// maxInternedValue is the longest string value that is interned; longer
// values are written inline, since they rarely repeat.
const maxInternedValue = 256
