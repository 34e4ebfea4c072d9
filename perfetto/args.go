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

// appendAnnotations encodes args as DebugAnnotation fields numbered num,
// interning names and string values on seq (named: the entries carry their
// names; array elements do not). Each annotation's value comes before its
// name (see eventStart).
func appendAnnotations(b []byte, seq *sequence, args []Arg, num protowire.Number, named bool) []byte {
	for i := range args {
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
			b = appendAnnotations(b, seq, a.kids, fAnnDictEntries, true)
		case KindArray:
			b = appendAnnotations(b, seq, a.kids, fAnnArrayValues, false)
		}
		if named {
			b = appendVarintField(b, fAnnNameIID, seq.internAnnName(a.Name))
		}
		b = m.end(b)
	}
	return b
}

// maxInternedValue is the longest string value that is interned; longer
// values are written inline, since they rarely repeat.
const maxInternedValue = 256
