package check

import (
	"encoding/binary"
	"math"

	pb "github.com/phasetrace/phasetrace/proto"
)

// A track event waits, from the packet that holds it to its turn in
// timestamp order, as a few bytes: its interned data resolved, its
// arguments encoded, nothing of the packet kept. The encoding, all
// varints but a double's 8 bytes:
//
//	event    type (zigzag), track, name, category,
//	         flow count, flow ids, terminating flow count, their ids,
//	         for a counter event: value kind (0 none, 1 int, 2 double) and value,
//	         argument count, arguments
//	argument name, value
//	value    tag, then: bool 0/1 | uint | int (zigzag) | double (8 bytes, little-endian bits)
//	         | string | dictionary: count, arguments | array: count, values
//	string   id<<1|1 for a string of the dictionary, or length<<1 and the bytes
//	track    id+1 for a track uuid of the dictionary, or 0 and the uuid
//
// Names, categories, argument names and track uuids repeat on nearly
// every event: each is written once into a dictionary and then by its id,
// which keeps the events short and their decoding free of allocations. A
// dictionary stops growing past maxDictStrings strings or maxDictBytes
// bytes (maxDictTracks uuids); later ones are written out in full.

// Value tags.
const (
	tagNil = iota
	tagBool
	tagUint
	tagInt
	tagDouble
	tagString
	tagDict
	tagArray
)

// Counter value kinds.
const (
	counterNone = iota
	counterInt
	counterDouble
)

// Bounds of the string dictionary.
const (
	maxDictStrings = 1 << 16
	maxDictBytes   = 4 << 20
	maxDictString  = 256 // a longer string is written out in full
	maxDictTracks  = 1 << 16
)

// dict numbers the strings and track uuids events hold.
type dict struct {
	ids      map[string]uint32
	strs     []string
	bytes    int
	trackIDs map[uint64]uint32
	tracks   []uint64
}

func (d *dict) trackID(uuid uint64) (uint32, bool) {
	if id, ok := d.trackIDs[uuid]; ok {
		return id, true
	}
	if len(d.tracks) >= maxDictTracks {
		return 0, false
	}
	if d.trackIDs == nil {
		d.trackIDs = map[uint64]uint32{}
	}
	id := uint32(len(d.tracks))
	d.trackIDs[uuid] = id
	d.tracks = append(d.tracks, uuid)
	return id, true
}

func (d *dict) id(s string) (uint32, bool) {
	if id, ok := d.ids[s]; ok {
		return id, true
	}
	if len(s) > maxDictString || len(d.strs) >= maxDictStrings || d.bytes+len(s) > maxDictBytes {
		return 0, false
	}
	if d.ids == nil {
		d.ids = map[string]uint32{}
	}
	id := uint32(len(d.strs))
	d.ids[s] = id
	d.strs = append(d.strs, s)
	d.bytes += len(s)
	return id, true
}

// encoder appends an event's encoding to b.
type encoder struct {
	b    []byte
	dict *dict
}

func (e *encoder) uvarint(v uint64) { e.b = binary.AppendUvarint(e.b, v) }
func (e *encoder) varint(v int64)   { e.b = binary.AppendVarint(e.b, v) }

func (e *encoder) str(s string) {
	if id, ok := e.dict.id(s); ok {
		e.uvarint(uint64(id)<<1 | 1)
		return
	}
	e.uvarint(uint64(len(s)) << 1)
	e.b = append(e.b, s...)
}

func (e *encoder) track(uuid uint64) {
	if id, ok := e.dict.trackID(uuid); ok {
		e.uvarint(uint64(id) + 1)
		return
	}
	e.b = append(e.b, 0)
	e.uvarint(uuid)
}

func (e *encoder) double(v float64) {
	e.b = binary.LittleEndian.AppendUint64(e.b, math.Float64bits(v))
}

// decoder reads an encoding. A malformed one (which only a bug could
// make) reads as zeros and sets bad.
type decoder struct {
	b    []byte
	dict *dict
	bad  bool
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.bad, d.b = true, nil
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.bad, d.b = true, nil
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) byte() byte {
	if len(d.b) == 0 {
		d.bad = true
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *decoder) bytes(n uint64) []byte {
	if uint64(len(d.b)) < n {
		d.bad, d.b = true, nil
		return nil
	}
	b := d.b[:n]
	d.b = d.b[n:]
	return b
}

func (d *decoder) str() string {
	v := d.uvarint()
	if v&1 == 1 {
		if v>>1 >= uint64(len(d.dict.strs)) {
			d.bad = true
			return ""
		}
		return d.dict.strs[v>>1]
	}
	return string(d.bytes(v >> 1))
}

func (d *decoder) track() uint64 {
	v := d.uvarint()
	if v == 0 {
		return d.uvarint()
	}
	if v-1 >= uint64(len(d.dict.tracks)) {
		d.bad = true
		return 0
	}
	return d.dict.tracks[v-1]
}

func (d *decoder) double() float64 {
	b := d.bytes(8)
	if b == nil {
		return 0
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(b))
}

// event is a decoded track event, its slices reused from one event to the
// next; args still encoded, aliasing the bytes decoded.
type event struct {
	packet       int
	ts           int64
	typ          pb.TrackEvent_Type
	track        uint64
	name, cat    string
	flows        []uint64
	tflows       []uint64
	counter      byte // counterNone, counterInt, counterDouble
	counterInt   int64
	counterFloat float64
	args         []byte // the argument count and arguments
}

// decodeEvent decodes b, the encoding of an event, into ev; false when it
// is malformed.
func decodeEvent(b []byte, d *dict, ev *event) bool {
	dec := decoder{b: b, dict: d}
	ev.typ = pb.TrackEvent_Type(dec.varint())
	ev.track = dec.track()
	ev.name = dec.str()
	ev.cat = dec.str()
	ev.flows = decodeIDs(&dec, ev.flows[:0])
	ev.tflows = decodeIDs(&dec, ev.tflows[:0])
	ev.counter = counterNone
	if ev.typ == pb.TrackEvent_TYPE_COUNTER {
		switch ev.counter = dec.byte(); ev.counter {
		case counterInt:
			ev.counterInt = dec.varint()
		case counterDouble:
			ev.counterFloat = dec.double()
		}
	}
	ev.args = dec.b
	return !dec.bad
}

func decodeIDs(dec *decoder, ids []uint64) []uint64 {
	n := dec.uvarint()
	for i := uint64(0); i < n && !dec.bad; i++ {
		ids = append(ids, dec.uvarint())
	}
	return ids
}

// decodeArgs decodes the arguments encoded in b (the count, then each
// argument): nil when there are none.
func decodeArgs(b []byte, d *dict) []Arg {
	dec := decoder{b: b, dict: d}
	n := dec.uvarint()
	if n == 0 {
		return nil
	}
	args := make([]Arg, 0, min(n, uint64(len(b))))
	for i := uint64(0); i < n && !dec.bad; i++ {
		args = append(args, decodeArg(&dec))
	}
	return args
}

func decodeArg(dec *decoder) Arg {
	name := dec.str()
	return Arg{Name: name, Value: decodeValue(dec)}
}

func decodeValue(dec *decoder) any {
	switch dec.byte() {
	case tagBool:
		return dec.byte() == 1
	case tagUint:
		return dec.uvarint()
	case tagInt:
		return dec.varint()
	case tagDouble:
		return dec.double()
	case tagString:
		return dec.str()
	case tagDict:
		n := dec.uvarint()
		dict := make([]Arg, 0, min(n, uint64(len(dec.b))))
		for i := uint64(0); i < n && !dec.bad; i++ {
			dict = append(dict, decodeArg(dec))
		}
		return dict
	case tagArray:
		n := dec.uvarint()
		arr := make([]any, 0, min(n, uint64(len(dec.b))))
		for i := uint64(0); i < n && !dec.bad; i++ {
			arr = append(arr, decodeValue(dec))
		}
		return arr
	}
	return nil
}
