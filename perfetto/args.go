package perfetto

import (
	"math"

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
	kind Kind
	num  uint64 // int (two's complement), uint, bool (0/1) or float bits
	str  string
	kids []Arg // dictionary entries or array elements
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
func Dict(name string, entries ...Arg) Arg { return Arg{Name: name, kind: KindDict, kids: entries} }

// Array is an array argument; the elements' names are ignored.
func Array(name string, elems ...Arg) Arg { return Arg{Name: name, kind: KindArray, kids: elems} }

// Kind reports the type of the value.
func (a Arg) Kind() Kind { return a.kind }

// appendAnnotations encodes args as DebugAnnotation fields numbered num
// (a field number under 16), interning names and string values on seq
// (named: the entries carry their names; array elements do not), looked up
// first in memo, if not nil (argMemo). Each annotation's value comes
// before its name (see eventStart).
//
// A named annotation whose value is a number or an interned string — the
// common case — has a body under 128 bytes whose size is known before it
// is written: its length goes first, instead of being patched in
// afterwards.
func appendAnnotations(b []byte, seq *sequence, args []Arg, num protowire.Number, named bool, memo *argMemo) []byte {
	tag := byte(num<<3) | byte(protowire.BytesType)
	for i := range args {
		a := &args[i]
		switch {
		case !named:
		case a.kind >= KindInt && a.kind <= KindBool:
			e := memo.name(i)
			name := e.hit(a.Name)
			if name == 0 {
				name = seq.memoized(e, internAnnName, a.Name)
			}
			b = append(b, tag, byte(1+sizeVarint(a.num)+1+sizeVarint(name)), valueTags[a.kind])
			b = appendVarint(b, a.num)
			b = appendVarint(append(b, fAnnNameIID<<3), name)
			continue
		case a.kind == KindString && len(a.str) <= maxInternedValue:
			ev := memo.value(i)
			v := ev.hit(a.str) // the value first, as interning always goes
			if v == 0 {
				v = seq.memoized(ev, internString, a.str)
			}
			e := memo.name(i)
			name := e.hit(a.Name)
			if name == 0 {
				name = seq.memoized(e, internAnnName, a.Name)
			}
			const t = fAnnStringIID << 3 // a tag of two bytes
			b = append(b, tag, byte(2+sizeVarint(v)+1+sizeVarint(name)), t&0x7f|0x80, t>>7)
			b = appendVarint(b, v)
			b = appendVarint(append(b, fAnnNameIID<<3), name)
			continue
		}
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

// valueTags are the tags of the varint value fields of a DebugAnnotation,
// by Kind.
var valueTags = [...]byte{KindInt: fAnnInt << 3, KindUint: fAnnUint << 3, KindBool: fAnnBool << 3}

// maxInternedValue is the longest string value that is interned; longer
// values are written inline, since they rarely repeat.
const maxInternedValue = 256
