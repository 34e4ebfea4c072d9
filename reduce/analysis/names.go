package analysis

import "hash/maphash"

// names interns strings as dense ids 0, 1, 2, ... in the order first seen.
//
// A log may hold millions of distinct span names, so a name costs its bytes
// plus 16: its place (8) and a slot of an open-addressed table kept at most
// half full (4 to 8 per name). The bytes are kept in chunks that are never
// moved, so only the small tables grow by copying. A map[string]uint32
// with a []string beside it costs about 90 bytes a name.
type names struct {
	seed   maphash.Seed
	chunks [][]byte // every name's bytes, one after another; a chunk is never moved
	spans  []uint64 // name id → chunk (high 22 bits), offset (21), length (21)
	slots  []uint32 // open addressing, linear probing: id+1, or 0 when empty
}

const (
	nameChunk  = 1 << 21       // the largest chunk
	maxNameLen = nameChunk - 1 // the longest name kept whole; a longer one is cut
)

// id returns the id of name, interning a copy of it when new.
func (n *names) id(name []byte) uint32 {
	if len(name) > maxNameLen {
		name = name[:maxNameLen]
	}
	if id, ok := n.lookup(name); ok {
		return id
	}
	if n.slots == nil {
		n.seed = maphash.MakeSeed()
		n.slots = make([]uint32, 64)
	}
	last := len(n.chunks) - 1
	if last < 0 || len(n.chunks[last])+len(name) > cap(n.chunks[last]) {
		// Chunks grow from 4 KiB to nameChunk, so that a few names cost
		// little.
		size := max(len(name), min(nameChunk, 4<<10<<min(len(n.chunks), 16)))
		n.chunks = append(n.chunks, make([]byte, 0, size))
		last++
	}
	off := len(n.chunks[last])
	n.chunks[last] = append(n.chunks[last], name...)
	id := uint32(len(n.spans))
	n.spans = append(n.spans, uint64(last)<<42|uint64(off)<<21|uint64(len(name)))
	if 2*len(n.spans) > len(n.slots) {
		n.slots = make([]uint32, 2*len(n.slots))
		for i := range n.spans {
			n.place(uint32(i))
		}
	} else {
		n.place(id)
	}
	return id
}

// idString is id for a string.
func (n *names) idString(name string) uint32 {
	if id, ok := n.lookupString(name); ok {
		return id
	}
	return n.id([]byte(name))
}

// lookup returns the id of name without interning it.
func (n *names) lookup(name []byte) (uint32, bool) {
	if n.slots == nil {
		return 0, false
	}
	mask := uint64(len(n.slots) - 1)
	for i := maphash.Bytes(n.seed, name) & mask; ; i = (i + 1) & mask {
		s := n.slots[i]
		if s == 0 {
			return 0, false
		}
		if string(n.bytes(s-1)) == string(name) {
			return s - 1, true
		}
	}
}

// lookupString is lookup for a string.
func (n *names) lookupString(name string) (uint32, bool) {
	if n.slots == nil {
		return 0, false
	}
	mask := uint64(len(n.slots) - 1)
	for i := maphash.String(n.seed, name) & mask; ; i = (i + 1) & mask {
		s := n.slots[i]
		if s == 0 {
			return 0, false
		}
		if string(n.bytes(s-1)) == name {
			return s - 1, true
		}
	}
}

// bytes returns the name of id in the table's memory, which the caller
// must not change.
func (n *names) bytes(id uint32) []byte {
	sp := n.spans[id]
	c, off, l := sp>>42, sp>>21&maxNameLen, sp&maxNameLen
	return n.chunks[c][off : off+l : off+l]
}

// name returns the name of id.
func (n *names) name(id uint32) string { return string(n.bytes(id)) }

func (n *names) place(id uint32) {
	mask := uint64(len(n.slots) - 1)
	i := maphash.Bytes(n.seed, n.bytes(id)) & mask
	for n.slots[i] != 0 {
		i = (i + 1) & mask
	}
	n.slots[i] = id + 1
}

// perName holds a value per name id, packed in a slice: about 12 bytes
// of index per name besides the value, where a map of pointers costs the
// value's own allocation too.
type perName[V any] struct {
	index map[uint32]uint32 // name id → position in vals
	ids   []uint32
	vals  []V
}

// get returns the value of id, adding a zero one when it has none. The
// pointer is valid until the next get.
func (p *perName[V]) get(id uint32) *V {
	i, ok := p.index[id]
	if !ok {
		if p.index == nil {
			p.index = make(map[uint32]uint32)
		}
		i = uint32(len(p.vals))
		p.index[id] = i
		p.ids = append(p.ids, id)
		var zero V
		p.vals = append(p.vals, zero)
	}
	return &p.vals[i]
}

// lookup returns the value of id, nil when it has none.
func (p *perName[V]) lookup(id uint32) *V {
	if i, ok := p.index[id]; ok {
		return &p.vals[i]
	}
	return nil
}

// each calls f with every id and its value, in the order they were added.
func (p *perName[V]) each(f func(id uint32, v *V)) {
	for i := range p.vals {
		f(p.ids[i], &p.vals[i])
	}
}
