package passes

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/phasetrace/phasetrace/strace"
)

// seekAhead is how far ahead a pass may be and still be reached by reading
// on rather than by seeking: runs are drawn in about the order the
// runtime writes their passes, and reading on keeps the input's buffer.
const seekAhead = 1 << 20

// cacheSize is how many passes read past an input that cannot seek
// keeps, for the runs that want them next; readBehind is how far before a
// pass far ahead it reads on from, keeping those it reads past (so that
// an artifact written in reverse opens again once every few thousand
// passes, not once a pass).
const (
	cacheSize  = 8192
	readBehind = 2 << 20
)

// entry is where one pass of an artifact is. Its line saturates at
// math.MaxUint32 (only a position said in the summary).
type entry struct {
	inv  uint64
	off  int64
	pid  int32
	line uint32
}

// Opener opens an artifact's bytes afresh each time it is called. What it
// opens is read at the passes the runs need by seeking when it is an
// io.Seeker, and by reading on otherwise.
type Opener interface {
	Open() (io.ReadCloser, error)
}

// Index is one host_phase_records artifact as the second pass reads it:
// where the survey found its passes, and a reader positioned at the last
// pass read.
type Index struct {
	name    string
	in      Opener
	entries []entry  // sorted by (pid, inv), then offset
	taken   []uint64 // a bit per entry: a run took it

	rc   io.ReadCloser // the input opened; nil before the first read
	seek io.Seeker     // rc, when it can seek
	pr   *strace.PhaseRecordsReader
	// cache holds, for an input that cannot seek, the last passes read
	// past and not taken, by offset; ring their offsets, oldest first at
	// next.
	cache map[int64]strace.PhasePass
	ring  []int64
	next  int
}

// New is the index of the artifact name, which in opens, before the survey
// has noted any pass.
func New(name string, in Opener) *Index { return &Index{name: name, in: in} }

// Name is the artifact's name.
func (x *Index) Name() string { return x.name }

// Add notes, in the survey, where pass p is.
func (x *Index) Add(p *strace.PhasePass) {
	x.entries = append(x.entries, entry{inv: p.Inv, off: p.Pos.Offset, pid: p.Pid, line: uint32(min(p.Pos.Line, math.MaxUint32))})
}

// Sort orders the entries once the survey has read the artifact whole;
// Take may be called from then on.
func (x *Index) Sort() {
	x.entries = slices.Clip(x.entries)
	slices.SortFunc(x.entries, func(a, b entry) int {
		return cmp.Or(cmp.Compare(a.pid, b.pid), cmp.Compare(a.inv, b.inv), cmp.Compare(a.off, b.off))
	})
	x.taken = make([]uint64, (len(x.entries)+63)/64)
}

// pos is where entry e was read.
func (x *Index) pos(e *entry) strace.Pos {
	return strace.Pos{File: x.name, Line: int64(e.line), Offset: e.off}
}

// Take appends to out the passes of (pid, inv) not taken before, in the
// order they were written, opening the artifact when it is not open. An
// error is the input's, or says that the artifact changed since the survey
// read it.
func (x *Index) Take(pid int32, inv uint64, out []strace.PhasePass) ([]strace.PhasePass, error) {
	i, _ := x.find(pid, inv, math.MinInt64)
	for ; i < len(x.entries) && x.entries[i].pid == pid && x.entries[i].inv == inv; i++ {
		if x.isTaken(i) {
			continue // a run of the same (pid, inv) drawn before took it
		}
		p, err := x.readAt(&x.entries[i])
		if err != nil {
			return out, err
		}
		x.taken[i/64] |= 1 << (i % 64)
		p.Pos = x.pos(&x.entries[i]) // a pass read on from a skip counts its lines from there
		out = append(out, p)
	}
	return out, nil
}

// errChanged says the second reading of an artifact does not hold
// a pass where the first did.
var errChanged = errors.New("changed since it was first read: no pass of the same pid and inv where there was one")

// readAt reads the pass at e.
func (x *Index) readAt(e *entry) (strace.PhasePass, error) {
	if p, ok := x.cache[e.off]; ok {
		delete(x.cache, e.off)
		return p, nil
	}
	at := x.pos(e)
	if x.pr == nil || x.seek == nil && at.Offset < x.pr.Offset() {
		if err := x.open(); err != nil {
			return strace.PhasePass{}, err
		}
	}
	ahead := at.Offset - x.pr.Offset()
	switch {
	case x.seek == nil && ahead <= readBehind:
		return x.readOn(e)
	case ahead >= 0 && ahead <= seekAhead:
		if err := x.pr.Skip(at); err != nil {
			return strace.PhasePass{}, err
		}
	case x.seek == nil: // far ahead: read on from readBehind before it
		if err := x.pr.Skip(strace.Pos{Offset: max(x.pr.Offset(), at.Offset-readBehind)}); err != nil {
			return strace.PhasePass{}, err
		}
		return x.readOn(e)
	default:
		if _, err := x.seek.Seek(at.Offset, io.SeekStart); err != nil {
			return strace.PhasePass{}, err
		}
		x.pr.Reset(x.rc, at)
	}
	p, err := x.pr.Read()
	return x.check(e, p, err)
}

// check returns the pass p read where e was, or why it is not there.
func (x *Index) check(e *entry, p strace.PhasePass, err error) (strace.PhasePass, error) {
	if err == io.EOF || err == nil && (p.Pid != e.pid || p.Inv != e.inv || p.Pos.Offset != e.off) {
		return strace.PhasePass{}, fmt.Errorf("line %d: %w", e.line, errChanged)
	}
	return p, err
}

// readOn reads on to the pass at e, in an input that cannot seek, keeping
// the passes it reads past that no run took.
func (x *Index) readOn(e *entry) (strace.PhasePass, error) {
	for {
		p, err := x.pr.Read()
		if err != nil || p.Pos.Offset >= e.off {
			return x.check(e, p, err)
		}
		if i, ok := x.find(p.Pid, p.Inv, p.Pos.Offset); ok && !x.isTaken(i) {
			x.keep(p)
		}
	}
}

// keep caches p, letting the oldest pass cached go when full.
func (x *Index) keep(p strace.PhasePass) {
	if x.cache == nil {
		x.cache, x.ring = map[int64]strace.PhasePass{}, make([]int64, 0, cacheSize)
	}
	if len(x.ring) < cacheSize {
		x.ring = append(x.ring, p.Pos.Offset)
	} else {
		delete(x.cache, x.ring[x.next])
		x.ring[x.next] = p.Pos.Offset
		x.next = (x.next + 1) % cacheSize
	}
	x.cache[p.Pos.Offset] = p
}

// find returns the index of the entry of the pass of (pid, inv) at off,
// or where it would be.
func (x *Index) find(pid int32, inv uint64, off int64) (int, bool) {
	return slices.BinarySearchFunc(x.entries, entry{pid: pid, inv: inv, off: off}, func(e, t entry) int {
		return cmp.Or(cmp.Compare(e.pid, t.pid), cmp.Compare(e.inv, t.inv), cmp.Compare(e.off, t.off))
	})
}

func (x *Index) isTaken(i int) bool { return x.taken[i/64]&(1<<(i%64)) != 0 }

// open opens the input (again) and reads it from its start.
func (x *Index) open() error {
	if err := x.Close(); err != nil {
		return err
	}
	rc, err := x.in.Open()
	if err != nil {
		return err
	}
	x.rc = rc
	x.seek, _ = rc.(io.Seeker)
	x.pr = strace.NewPhaseRecordsReader(rc, strace.WithName(x.name))
	return nil
}

// Close closes the input, if open; Take opens it again when called.
func (x *Index) Close() error {
	if x.rc == nil {
		return nil
	}
	err := x.rc.Close()
	x.rc, x.seek, x.pr = nil, nil, nil
	return err
}

// Untaken calls f for each pass not taken, in the order written: p holds
// its position, pid and inv only.
func (x *Index) Untaken(f func(p *strace.PhasePass)) {
	var left []int
	for i := range x.entries {
		if !x.isTaken(i) {
			left = append(left, i)
		}
	}
	slices.SortFunc(left, func(a, b int) int { return cmp.Compare(x.entries[a].off, x.entries[b].off) })
	for _, i := range left {
		e := &x.entries[i]
		f(&strace.PhasePass{Pos: x.pos(e), Pid: e.pid, Inv: e.inv})
	}
}
