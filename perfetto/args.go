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
// (named: the entries carry their names; array elements do not), the names
// looked up first in memo, if not nil (sequence.argName). Each
// annotation's value comes before its name (see eventStart).
func appendAnnotations(b []byte, seq *sequence, args []Arg, num protowire.Number, named bool, memo *argMemo) []byte {
	for i := range args {
		a := &args[i]
		if named && (a.kind != KindString || len(a.str) <= maxInternedValue) && a.kind >= KindInt && a.kind <= KindString {
			b = appendScalarAnnotation(b, seq, a, byte(num<<3)|byte(protowire.BytesType), memo, i)
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
			b = appendVarintField(b, fAnnNameIID, seq.argName(memo, i, a.Name))
		}
		b = m.end(b)
	}
	return b
}

// appendScalarAnnotation appends the named annotation a, whose value is a
// number or an interned string, as appendAnnotations does (the value, then
// the name), under the field tag tag, as argument i of an event whose
// argument names memo remembers. Its body is short — under 128 bytes,
// so its length takes one byte — and its size is known before it is
// written: the length goes first, instead of being patched in afterwards.
func appendScalarAnnotation(b []byte, seq *sequence, a *Arg, tag byte, memo *argMemo, i int) []byte {
	v := a.num
	var vtag byte
	switch a.kind {
	case KindInt:
		vtag = fAnnInt << 3
	case KindUint:
		vtag = fAnnUint << 3
	case KindBool:
		vtag = fAnnBool << 3
	case KindFloat:
		name := seq.argName(memo, i, a.Name)
		b = append(b, tag, byte(1+8+1+sizeVarint(name)), fAnnDouble<<3|byte(protowire.Fixed64Type))
		b = protowire.AppendFixed64(b, v)
		return appendVarint(append(b, fAnnNameIID<<3), name)
	case KindString:
		// string_value_iid's tag takes two bytes.
		const t = fAnnStringIID << 3
		v = seq.internString(a.str)
		name := seq.argName(memo, i, a.Name)
		b = append(b, tag, byte(2+sizeVarint(v)+1+sizeVarint(name)), t&0x7f|0x80, t>>7)
		b = appendVarint(b, v)
		return appendVarint(append(b, fAnnNameIID<<3), name)
	}
	name := seq.argName(memo, i, a.Name)
	b = append(b, tag, byte(1+sizeVarint(v)+1+sizeVarint(name)), vtag)
	b = appendVarint(b, v)
	return appendVarint(append(b, fAnnNameIID<<3), name)
}

// maxInternedValue is the longest string value that is interned; longer
// values are written inline, since they rarely repeat.
const maxInternedValue = 256
