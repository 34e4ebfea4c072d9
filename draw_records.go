package phasetrace

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"

	"github.com/phasetrace/phasetrace/internal/firstpass"
	"github.com/phasetrace/phasetrace/strace"
)

// Convert reads a host_phase_records artifact twice. The first pass (the
// survey) reads it whole and keeps where each pass is: its (pid, inv), its
// byte offset and its line, 24 bytes a pass (passEntry), sorted by (pid,
// inv) and then by offset. The second pass reads, as each run is drawn,
// only the passes of its (pid, inv), at their offsets, whatever order the
// artifact was written in: a run's passes are held only while it is drawn.
// An input that can seek (a file not compressed, Bytes) reaches a pass
// ahead of the last one read by reading on, up to seekAhead bytes, and
// any other by seeking. One that cannot (a .gz) reads on to a pass ahead,
// keeping the last passCacheSize passes it read past for the runs that
// want them next (the runtime writes a pass as its bind ends, in about the
// order runs are drawn), and reaches one behind those by opening the input
// again and reading on from its start: a .gz written far out of order
// costs time, never memory. A pass no run took once every run is drawn —
// its run has no chip.run.bind, or never came — is counted under
// ReasonPassesWithoutBind, in the order written.

// seekAhead is how far ahead a pass may be and still be reached by reading
// on rather than by seeking: runs are drawn in about the order the
// runtime writes their passes, and reading on keeps the input's buffer.
const seekAhead = 1 << 20

// passCacheSize is how many passes read past an input that cannot seek
// keeps, for the runs that want them next; readBehind is how far before a
// pass far ahead it reads on from, keeping those it reads past (so that
// an artifact written in reverse opens again once every few thousand
// passes, not once a pass).
const (
	passCacheSize = 8192
	readBehind    = 2 << 20
)

// passEntry is where one pass of an artifact is. Its line saturates at
// math.MaxUint32 (only a position said in the summary).
type passEntry struct {
	inv  uint64
	off  int64
	pid  int32
	line uint32
}

// passIndex is one host_phase_records artifact as the second pass reads
// it: the survey's entries and a reader positioned at the last pass read.
type passIndex struct {
	in       Input
	entries  []passEntry      // sorted by (pid, inv), then offset
	taken    []uint64         // a bit per entry: a run took it
	progress *progressCounter // counts the bytes read

	rc   io.ReadCloser // the input opened; nil before the first read
	cr   *CutReader    // rc, read up to a cut
	seek io.Seeker     // rc, when it can seek
	pr   *strace.PhaseRecordsReader
	// cache holds, for an input that cannot seek, the last passes read
	// past and not taken, by offset; ring their offsets, oldest first at
	// next.
	cache map[int64]strace.PhasePass
	ring  []int64
	next  int
}

// addPass notes, in the survey, where pass p is.
func (x *passIndex) addPass(p *strace.PhasePass) {
	x.entries = append(x.entries, passEntry{inv: p.Inv, off: p.Pos.Offset, pid: p.Pid, line: uint32(min(p.Pos.Line, math.MaxUint32))})
}

// sort orders the entries once the survey has read the artifact whole.
func (x *passIndex) sort() {
	x.entries = slices.Clip(x.entries)
	slices.SortFunc(x.entries, func(a, b passEntry) int {
		return cmp.Or(cmp.Compare(a.pid, b.pid), cmp.Compare(a.inv, b.inv), cmp.Compare(a.off, b.off))
	})
	x.taken = make([]uint64, (len(x.entries)+63)/64)
}

// pos is where entry e was read.
func (x *passIndex) pos(e *passEntry) strace.Pos {
	return strace.Pos{File: x.in.Name, Line: int64(e.line), Offset: e.off}
}

// take appends the passes of k to out, in the order they were written.
func (x *passIndex) take(k firstpass.InvKey, out []strace.PhasePass) ([]strace.PhasePass, error) {
	i, _ := slices.BinarySearchFunc(x.entries, k, func(e passEntry, k firstpass.InvKey) int {
		return cmp.Or(cmp.Compare(e.pid, k.Pid), cmp.Compare(e.inv, k.Inv))
	})
	for ; i < len(x.entries) && x.entries[i].pid == k.Pid && x.entries[i].inv == k.Inv; i++ {
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

// errArtifactChanged says the second reading of an artifact does not hold
// a pass where the first did.
var errArtifactChanged = errors.New("changed since it was first read: no pass of the same pid and inv where there was one")

// readAt reads the pass at e.
func (x *passIndex) readAt(e *passEntry) (strace.PhasePass, error) {
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
		x.pr.Reset(x.progress.wrap(x.cr), at)
	}
	p, err := x.pr.Read()
	return x.check(e, p, err)
}

// check returns the pass p read where e was, or why it is not there.
func (x *passIndex) check(e *passEntry, p strace.PhasePass, err error) (strace.PhasePass, error) {
	if err == io.EOF || err == nil && (p.Pid != e.pid || p.Inv != e.inv || p.Pos.Offset != e.off) {
		return strace.PhasePass{}, fmt.Errorf("line %d: %w", e.line, errArtifactChanged)
	}
	return p, err
}

// readOn reads on to the pass at e, in an input that cannot seek, keeping
// the passes it reads past that no run took.
func (x *passIndex) readOn(e *passEntry) (strace.PhasePass, error) {
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
func (x *passIndex) keep(p strace.PhasePass) {
	if x.cache == nil {
		x.cache, x.ring = map[int64]strace.PhasePass{}, make([]int64, 0, passCacheSize)
	}
	if len(x.ring) < passCacheSize {
		x.ring = append(x.ring, p.Pos.Offset)
	} else {
		delete(x.cache, x.ring[x.next])
		x.ring[x.next] = p.Pos.Offset
		x.next = (x.next + 1) % passCacheSize
	}
	x.cache[p.Pos.Offset] = p
}

// find returns the index of the entry of the pass of (pid, inv) at off.
func (x *passIndex) find(pid int32, inv uint64, off int64) (int, bool) {
	return slices.BinarySearchFunc(x.entries, passEntry{pid: pid, inv: inv, off: off}, func(e, t passEntry) int {
		return cmp.Or(cmp.Compare(e.pid, t.pid), cmp.Compare(e.inv, t.inv), cmp.Compare(e.off, t.off))
	})
}

func (x *passIndex) isTaken(i int) bool { return x.taken[i/64]&(1<<(i%64)) != 0 }

// open opens the input (again) and reads it from its start.
func (x *passIndex) open() error {
	if err := x.close(); err != nil {
		return err
	}
	rc, err := x.in.Open()
	if err != nil {
		return err
	}
	x.rc, x.cr = rc, NewCutReader(rc)
	x.seek, _ = rc.(io.Seeker)
	x.pr = strace.NewPhaseRecordsReader(x.progress.wrap(x.cr), strace.WithName(x.in.Name))
	return nil
}

// close closes the input, if open.
func (x *passIndex) close() error {
	if x.rc == nil {
		return nil
	}
	err := x.cr.Close() // a cut's report at Close is not an error again
	x.rc, x.cr, x.seek, x.pr = nil, nil, nil, nil
	return err
}

// untaken calls f for each pass no run took, in the order written.
func (x *passIndex) untaken(f func(p *strace.PhasePass)) {
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

// passes takes the host_phase_records passes of run k: those a Survey was
// given, then those of Convert's artifacts, artifact by artifact. An error
// reading an artifact is d.recordsErr, and ends the reading of artifacts.
func (d *runDrawer) passes(k firstpass.InvKey) []strace.PhasePass {
	passes := d.records[k]
	delete(d.records, k)
	if len(d.artifacts) == 0 {
		return passes
	}
	out := append(d.artifactPasses[:0], passes...)
	for _, x := range d.artifacts {
		if d.recordsErr != nil {
			break
		}
		var err error
		if out, err = x.take(k, out); err != nil {
			d.recordsErr = fmt.Errorf("phasetrace: %s: %w", x.in.Name, err)
		}
	}
	d.artifactPasses = out
	return out
}

// passWithoutBind counts a pass not drawn: its run has no bind, or never came.
func (d *runDrawer) passWithoutBind(p *strace.PhasePass) {
	d.acct.notDrawn(ReasonPassesWithoutBind, d.acct.pos(p.Pos), "pid="+itoa(int64(p.Pid))+" inv="+strconv.FormatUint(p.Inv, 10), 1)
}
