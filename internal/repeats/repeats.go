package repeats

import (
	"cmp"
	"hash/maphash"
	"io"
	"math/bits"
	"slices"
	"strconv"

	"github.com/phasetrace/phasetrace/strace"
)

// A sketch's shape: three parts of sketchPart cells, a key in one cell of
// each.
const (
	sketchPart  = 341
	sketchCells = 3 * sketchPart
	// maxSketched bounds the captures compared in one conversion.
	MaxSketched = 64
	// maxPartners bounds the earlier captures a capture is compared with:
	// those it differs from least.
	maxPartners = 4
)

// Capture is a run of a log's lines whose write time never runs backwards
// by more than the cutter's gap.
type Capture struct {
	First, Last int64 // physical lines, 1-based, inclusive
	Bytes       int64
	Sum         uint64
}

// CaptureCutter cuts a log into captures as its lines go by. It is given
// the log's bytes in runs as long as its reader likes (write), told of the
// lines that start a new capture (startsCapture, then cut), and hashes each
// capture's bytes in as few calls as there are runs.
type CaptureCutter struct {
	h       maphash.Hash
	gap     int64 // how far back the write time runs where a capture starts
	maxMono int64
	hasMono bool
	open    bool // the last byte written did not end a line
	cur     Capture
	caps    []Capture
}

// NewCaptureCutter returns a cutter that starts a capture where the write
// time runs backwards by more than gap.
func NewCaptureCutter(seed maphash.Seed, gap int64) *CaptureCutter {
	c := &CaptureCutter{gap: gap}
	c.h.SetSeed(seed)
	c.cur.First = 1
	return c
}

var monoMark = []byte("[mono_ns=")

// StartsCapture is told of the log prefix's mono_ns at the start of a line,
// in log order. It reports whether a new capture starts with the line: the
// caller then writes the bytes before the line and calls cut.
func (c *CaptureCutter) StartsCapture(mono int64) bool {
	cut := c.hasMono && mono < c.maxMono-c.gap
	if cut {
		c.maxMono = mono // the new capture's own time
	}
	if !c.hasMono || mono > c.maxMono {
		c.maxMono, c.hasMono = mono, true
	}
	return cut
}

// Write adds the next bytes of the log to the current capture.
func (c *CaptureCutter) Write(b []byte) {
	if len(b) == 0 {
		return
	}
	c.h.Write(b)
	c.cur.Bytes += int64(len(b))
	c.open = b[len(b)-1] != '\n'
}

// Cut closes the current capture before line (1-based), which starts the
// next one.
func (c *CaptureCutter) Cut(line int64) {
	c.close(line - 1)
	c.cur.First = line
}

// close closes the current capture at its last line.
func (c *CaptureCutter) close(last int64) {
	if c.cur.Bytes == 0 {
		return
	}
	c.cur.Last = last
	c.cur.Sum = c.h.Sum64()
	c.caps = append(c.caps, c.cur)
	c.cur = Capture{}
	c.h.Reset()
}

// Finish closes the last capture, given the number of lines ended in the
// log, and returns them all.
func (c *CaptureCutter) Finish(ended int64) []Capture {
	last := ended
	if c.open {
		last++ // a last line without a line end
	}
	c.close(last)
	return c.caps
}

// PrefixMono reads the mono_ns of a log prefix at the start of a line.
func PrefixMono(b []byte) (int64, bool) {
	if len(b) < len(monoMark)+2 || string(b[:len(monoMark)]) != string(monoMark) {
		return 0, false
	}
	var v int64
	i := len(monoMark)
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9' && i < len(monoMark)+19; i++ {
		v = v*10 + int64(b[i]-'0')
	}
	if i == len(monoMark) || i >= len(b) || b[i] != ']' {
		return 0, false
	}
	return v, true
}

// Repeat is a capture left out because it repeats an earlier one.
type Repeat struct {
	First, Last int64  // its lines
	Of          string // what it repeats: "lines a–b of name"
}

// Repeats finds, per log, the captures that repeat an earlier capture byte
// for byte.
func Repeats(names []string, caps [][]Capture) [][]Repeat {
	type key struct{ bytes, sum uint64 }
	seen := map[key]string{}
	out := make([][]Repeat, len(caps))
	found := false
	for i, cs := range caps {
		for _, c := range cs {
			k := key{uint64(c.Bytes), c.Sum}
			if of, ok := seen[k]; ok {
				out[i] = append(out[i], Repeat{First: c.First, Last: c.Last, Of: of})
				found = true
				continue
			}
			seen[k] = "lines " + strconv.FormatInt(c.First, 10) + "–" + strconv.FormatInt(c.Last, 10) + " of " + names[i]
		}
	}
	if !found {
		return nil
	}
	return out
}

// RepeatOf returns the repeat holding line, advancing *next through the
// sorted list as the lines of a log go by in order.
func RepeatOf(rs []Repeat, next *int, line int64) (Repeat, bool) {
	for *next < len(rs) && rs[*next].Last < line {
		*next++
	}
	if *next < len(rs) && rs[*next].First <= line {
		return rs[*next], true
	}
	return Repeat{}, false
}

// Odd constants the hash multiplies by (wyhash's).
const (
	hashK0 = 0xa0761d6478bd642f
	hashK1 = 0xe7037ed1a0b428db
	hashK2 = 0x8ebc6af09c88c6e3
	hashK3 = 0x589965cc75374cc3
)

// mulFold folds two words into one through their 128-bit product.
func mulFold(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return hi ^ lo
}

// Near repeats. A capture given again with a few records changed (a line
// torn differently, one number rewritten) does not repeat its original
// byte for byte, and its spans come long after their twins, past the
// ring of recent spans. The captures of a log cut into several are compared with each
// other by their spans' keys, in memory that does not grow with the log.
// The rule, exactly:
//
//   - A span's key is its (pid, tid, inv, name, ts, dur) as the log holds
//     it, fingerprinted in 64 bits (spanKey, the same in every
//     conversion): two keys are taken as equal when their fingerprints are
//     (unequal keys share one with odds of 2^-64 a pair).
//   - Each capture of a log cut into several (the first maxSketched of a
//     conversion, those that repeat an earlier one byte for byte left out)
//     is summed up in a sketch of sketchCells cells — each key added to
//     one cell in each of three parts: an invertible Bloom lookup table —,
//     read in one more pass over those logs only.
//   - The difference of two captures' sketches gives back the keys each
//     holds more often than the other (extraKeys) when it can be read to
//     its last key. A difference of up to 400 keys was read back in every
//     draw of the tests; of 500, all but about one in 200; of 850 almost
//     never. Two captures whose difference is not read back are not
//     compared.
//   - A capture is compared with the earlier ones whose difference is read
//     back and holds fewer keys than the capture, up to maxPartners of
//     them, those with the smallest difference first. A span of it whose
//     key one of these holds at least as often (the key is not among the
//     capture's extra keys) repeats that capture's span: it is counted
//     as a duplicate, with the lines of the capture it repeats, and
//     neither drawn nor linked by a flow. Every span the later capture
//     holds on its own (a changed dur, another tid or inv, a span added)
//     is drawn, and the earlier capture's are drawn as they come.
//   - The other records are compared in the same way, by their own keys
//     (recordKey): a repeated bind phase line is counted as a duplicate
//     too, and the first pass, made again, learns nothing from repeated
//     spans and clock anchors (a thread's runs repeated would read as runs
//     it interleaved, a process's anchors as a second set).
//
// Limits: a capture that repeats only part of an earlier one (its first
// half, say) differs from it by more than a sketch gives back, and is
// drawn; so is a capture past the first maxSketched. A key a later capture
// holds once more than the earlier one (a span written twice in it, once
// in the earlier) is drawn every time, unless the ring of recent spans finds the repeat;
// a key one capture holds twice or more times more than the other (a line
// written twice in the copy only) leaves their difference unreadable: the
// two are not compared. Logs cut into one
// capture are not sketched: a log given twice is read together with its
// copy, record by record in the order they were written, so twins come
// together and the ring of recent spans finds the copy's spans, the last
// bind phase lines' keys (RecentKeys) the copy's bind phase lines, and the
// wall-clock anchors are taken once each; its device anchors, and what the
// first pass learns from its runs, are taken as they come.

// SpanKey fingerprints a span's (pid, tid, inv, name, ts, dur). The same
// key gives the same fingerprint in every conversion.
func SpanKey(sp *strace.Span) uint64 {
	a := mulFold(uint64(uint32(sp.Pid))^hashK0, uint64(sp.Tid)^hashK1)
	b := mulFold(sp.Inv^hashK2, nameHash(sp.Name)^hashK3)
	c := mulFold(uint64(sp.TS)^hashK1, uint64(sp.Dur)^hashK2)
	return mulFold(a^c^hashK0, b^hashK1)
}

// Tags that tell the keys of records of other kinds apart.
const (
	keyBindPhase = 0x62696e64 << 32
	keyWall      = 0x77616c6c << 32
	keyDevice    = 0x64657669 << 32
)

// RecordKey fingerprints what makes a record the same record again: a
// span's key (spanKey); a bind phase line's phase, start, duration, source
// tag and log thread; every field of a clock anchor. ok is false for the
// other kinds, which are not compared.
func RecordKey(rec *strace.Record) (key uint64, ok bool) {
	switch rec.Kind {
	case strace.KindSpan:
		return SpanKey(&rec.Span), true
	case strace.KindBindPhase:
		b := &rec.BindPhase
		a := mulFold(b.StartNS^hashK0, b.DurNS^hashK1)
		c := mulFold(nameHash(b.Phase)^keyBindPhase, nameHash(b.Source)^rec.Prefix.Thread^hashK2)
		return mulFold(a^hashK3, c^hashK0), true
	case strace.KindWallAnchor:
		w := &rec.WallAnchor
		return mulFold(mulFold(uint64(uint32(w.Pid))^keyWall, uint64(w.MonoNS)^hashK1)^hashK2, uint64(w.WallNS)^hashK3), true
	case strace.KindDeviceAnchor:
		d := &rec.DeviceAnchor
		a := mulFold(uint64(uint32(d.Pid))|uint64(uint32(d.Dev))<<32^keyDevice, uint64(d.Tid)^hashK1)
		b := mulFold(uint64(d.HostNS)^hashK2, uint64(d.WindowNS)^hashK3)
		c := mulFold(d.DevCyc^hashK0, d.DevFreq^hashK2)
		return mulFold(a^c^hashK1, b^hashK0), true
	}
	return 0, false
}

// nameHash hashes every byte of a name.
func nameHash(s string) uint64 {
	h := uint64(len(s)) ^ hashK0
	for ; len(s) >= 8; s = s[8:] {
		w := uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 | uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
		h = mulFold(h^w^hashK1, hashK3)
	}
	var w uint64
	for i := 0; i < len(s); i++ {
		w |= uint64(s[i]) << (8 * i)
	}
	return mulFold(h^w^hashK2, hashK3)
}

// Sketch sums up a capture's span keys.
type Sketch [sketchCells]sketchCell

// sketchCell holds how many keys were added to it, and the exclusive or of
// the keys and of their checks.
type sketchCell struct {
	n        int64
	sum, chk uint64
}

// add adds n copies of key (n is 1 or −1: a copy taken away).
func (s *Sketch) add(key uint64, n int64) {
	chk := keyCheck(key)
	for j := range 3 {
		c := &s[cellOf(key, j)]
		c.n += n
		c.sum ^= key
		c.chk ^= chk
	}
}

// cellOf returns the cell of key in part j.
func cellOf(key uint64, j int) int {
	return j*sketchPart + int(key>>(21*j)&(1<<21-1)%sketchPart)
}

// keyCheck is a second fingerprint of a key: a cell holding one key, and
// only it, holds the key's check.
func keyCheck(key uint64) uint64 { return mulFold(key^hashK2, hashK3) }

// extraKeys returns the keys that b holds more often than a, when the two
// sketches' difference can be read back to its last key (ok); the keys a
// holds more often are read back too, and left out. A cell of the
// difference that holds one key alone gives it; taking the key out of its
// three cells may leave another alone, and so on: this reads back all of a
// small difference (a few hundred keys) and stops short of a large one.
func extraKeys(a, b *Sketch) (extra []uint64, ok bool) {
	d := new(Sketch)
	var todo []int
	for i := range d {
		d[i] = sketchCell{b[i].n - a[i].n, b[i].sum ^ a[i].sum, b[i].chk ^ a[i].chk}
		todo = append(todo, i)
	}
	for len(todo) > 0 {
		i := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		c := d[i]
		if c.n != 1 && c.n != -1 || c.chk != keyCheck(c.sum) || cellOf(c.sum, i/sketchPart) != i {
			continue
		}
		if c.n == 1 {
			extra = append(extra, c.sum)
		}
		d.add(c.sum, -c.n)
		for j := range 3 {
			todo = append(todo, cellOf(c.sum, j))
		}
	}
	for i := range d {
		if d[i] != (sketchCell{}) {
			return nil, false
		}
	}
	slices.Sort(extra)
	return extra, true
}

// NearRepeat is a capture compared with the earlier ones: its spans whose
// keys an earlier one holds repeat that capture's.
type NearRepeat struct {
	first, last int64 // its lines
	of          []nearOf
}

// nearOf is an earlier capture a later one repeats in part.
type nearOf struct {
	of    string   // "lines a–b of name"
	extra []uint64 // the keys of the later capture it does not hold as often, sorted
}

// Repeated returns the earlier capture whose record a record of key
// repeats, if any.
func (n *NearRepeat) Repeated(key uint64) (of string, ok bool) {
	for i := range n.of {
		if _, found := slices.BinarySearch(n.of[i].extra, key); !found {
			return n.of[i].of, true
		}
	}
	return "", false
}

// NearRepeatOf returns the compared capture holding line, advancing *next
// through the sorted list as the lines of a log go by in order.
func NearRepeatOf(ns []NearRepeat, next *int, line int64) *NearRepeat {
	for *next < len(ns) && ns[*next].last < line {
		*next++
	}
	if *next < len(ns) && ns[*next].first <= line {
		return &ns[*next]
	}
	return nil
}

// Sketched is a capture of a log with its sketch.
type Sketched struct {
	Log int
	Capture
	Sk   *Sketch
	keys int // the records added to it
}

// NearRepeats compares the sketched captures, each with the earlier ones,
// and returns per log its captures that repeat earlier ones in part (nil
// when none does).
func NearRepeats(names []string, caps []Sketched, logs int) [][]NearRepeat {
	var out [][]NearRepeat
	for j := range caps {
		b := &caps[j]
		var of []nearOf
		for i := range caps[:j] {
			a := &caps[i]
			if extra, ok := extraKeys(a.Sk, b.Sk); ok && len(extra) < b.keys { // else none of b's records is a's
				of = append(of, nearOf{of: "lines " + strconv.FormatInt(a.First, 10) + "–" + strconv.FormatInt(a.Last, 10) + " of " + names[a.Log], extra: extra})
			}
		}
		if of == nil {
			continue
		}
		// The captures it differs from least, first.
		slices.SortStableFunc(of, func(x, y nearOf) int { return cmp.Compare(len(x.extra), len(y.extra)) })
		of = of[:min(len(of), maxPartners)]
		if out == nil {
			out = make([][]NearRepeat, logs)
		}
		out[b.Log] = append(out[b.Log], NearRepeat{first: b.First, last: b.Last, of: of})
	}
	return out
}

// RepeatedCaptures is what the survey learns of captures that repeat
// earlier ones: per log, its captures (until compared), the stretches
// that repeat an earlier capture byte for byte (whole) and the captures
// that repeat earlier ones in part (near).
type RepeatedCaptures struct {
	Seed  maphash.Seed
	Caps  [][]Capture
	Whole [][]Repeat
	Near  [][]NearRepeat
}

// SketchLog adds the keys of a log's records (recordKey) to the sketches
// of the captures holding them (sorted by line).
func SketchLog(r io.Reader, name string, maxLine int, caps []Sketched) error {
	rd := strace.NewReader(r, strace.WithName(name), strace.WithMaxLine(maxLine),
		strace.WithKinds(strace.KindSpan, strace.KindBindPhase, strace.KindWallAnchor, strace.KindDeviceAnchor))
	k := 0
	for {
		rec, err := rd.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		line := rec.Pos.Line
		for k < len(caps) && caps[k].Last < line {
			k++
		}
		if k == len(caps) {
			return nil
		}
		if key, ok := RecordKey(&rec); ok && caps[k].First <= line {
			caps[k].Sk.add(key, 1)
			caps[k].keys++
		}
	}
}
