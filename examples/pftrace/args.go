package main

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"

	"github.com/phasetrace/phasetrace/perfetto/check"
)

// argList is a slice's arguments: a JSON object in their order, and
// name=value pairs in text.
type argList []check.Arg

// String is the arguments as name=value pairs, values as written: 3, not 3u.
func (l argList) String() string {
	parts := make([]string, len(l))
	for i, a := range l {
		parts[i] = a.Name + "=" + check.FormatValue(a.Value)
	}
	return strings.Join(parts, " ")
}

// MarshalJSON writes an object with the arguments in their order.
func (l argList) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, a := range l {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(a.Name)
		if err != nil {
			return nil, err
		}
		v, err := argValue{a.Value}.MarshalJSON()
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// argValue is an argument value in its JSON type: int64 and uint64 as exact
// numbers, bools, floats (NaN and infinities, which JSON lacks, as
// strings), strings, dictionaries as objects, arrays as arrays.
type argValue struct{ v any }

func (a argValue) MarshalJSON() ([]byte, error) {
	switch v := a.v.(type) {
	case int64:
		return strconv.AppendInt(nil, v, 10), nil
	case uint64:
		return strconv.AppendUint(nil, v, 10), nil
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return json.Marshal(strconv.FormatFloat(v, 'g', -1, 64))
		}
		return json.Marshal(v)
	case []check.Arg:
		return argList(v).MarshalJSON()
	case []any:
		elems := make([]argValue, len(v))
		for i, e := range v {
			elems[i] = argValue{e}
		}
		return json.Marshal(elems)
	}
	return json.Marshal(a.v)
}
