package analysis

import (
	"encoding/binary"
	"fmt"
	"sort"
	"strings"

	"github.com/phasetrace/phasetrace/strace"
)

// The counters of a segment the bind statistics read, in the order of a
// packed segment's presence bits.
const (
	ctrCPU = iota
	ctrNvcsw
	ctrNivcsw
	ctrMinflt
	ctrSpilled
	numCounters
)

var counterKeys = [numCounters]string{"cpu_ns", "nvcsw", "nivcsw", "minflt", "spilled"}

// segView is what the statistics read of one segment.
type segView struct {
	name int // index into the segment names
	dur  int64
	has  uint8 // bit i: counter i present
	ctr  [numCounters]int64
}

func (s *segView) counter(i int) (int64, bool) { return s.ctr[i], s.has&(1<<i) != 0 }

// countersOf reads the counters from attributes as [BindSegment.Int] does:
// the first non-bare attribute of the key, if it is an integer.
func countersOf(attrs []strace.Attr) (has uint8, ctr [numCounters]int64) {
	var seen uint8
	for _, a := range attrs {
		if a.Bare {
			continue
		}
		for i, k := range counterKeys {
			if seen&(1<<i) == 0 && a.Key == k {
				seen |= 1 << i
				if v, ok := a.Int64(); ok {
					has |= 1 << i
					ctr[i] = v
				}
			}
		}
	}
	return has, ctr
}

// packedBind is what the statistics keep of one bind: its key, start and
// segments, varint-packed in display order (a dozen bytes a segment).
type packedBind struct {
	pid  int32
	cold bool
	inv  uint64
	ts   int64
	data []byte
	// order breaks ties of (pid, ts) as the Log path's arrival order does
	// (streamed binds only).
	order bindOrder
}

// segNames interns segment names.
type segNames struct {
	index map[string]int
	names []string
}

func (n *segNames) id(name string) int {
	if n.index == nil {
		n.index = make(map[string]int)
	}
	i, ok := n.index[name]
	if !ok {
		i = len(n.names)
		name = strings.Clone(name)
		n.index[name] = i
		n.names = append(n.names, name)
	}
	return i
}

func appendSeg(buf []byte, s *segView) []byte {
	buf = binary.AppendUvarint(buf, uint64(s.name))
	buf = append(buf, s.has)
	buf = binary.AppendVarint(buf, s.dur)
	for i := range numCounters {
		if s.has&(1<<i) != 0 {
			buf = binary.AppendVarint(buf, s.ctr[i])
		}
	}
	return buf
}

// each calls f with every segment of b, in display order.
func (b *packedBind) each(f func(s *segView)) {
	data := b.data
	var s segView
	for len(data) > 0 {
		name, n := binary.Uvarint(data)
		data = data[n:]
		s = segView{name: int(name), has: data[0]}
		data = data[1:]
		s.dur, n = binary.Varint(data)
		data = data[n:]
		for i := range numCounters {
			if s.has&(1<<i) != 0 {
				s.ctr[i], n = binary.Varint(data)
				data = data[n:]
			}
		}
		f(&s)
	}
}

// segment returns b's segment with the name id.
func (b *packedBind) segment(id int) (segView, bool) {
	var out segView
	found := false
	b.each(func(s *segView) {
		if !found && s.name == id {
			out, found = *s, true
		}
	})
	return out, found
}

// packBind packs a bind whose segments are in display order.
func packBind(names *segNames, b *Bind) packedBind {
	p := packedBind{pid: b.Pid, inv: b.Inv, ts: b.TS, cold: b.Cold}
	for _, s := range b.Segments {
		v := segView{name: names.id(s.Name), dur: s.Dur}
		v.has, v.ctr = countersOf(s.Attrs)
		p.data = appendSeg(p.data, &v)
	}
	return p
}

// bindSet is the binds the statistics are computed from, ordered by pid,
// then start.
type bindSet struct {
	names segNames
	binds []packedBind
}

// lookup returns the id of a segment name, -1 when no bind has it.
func (bs *bindSet) lookup(name string) int {
	if i, ok := bs.names.index[name]; ok {
		return i
	}
	return -1
}

// stats computes the statistics from the binds: cold binds, minflt
// sequences, spills and the warm binds' spreads. st holds the warnings so
// far; it returns ErrAllCold when no bind is warm.
func (bs *bindSet) stats(st *BindStats, cfg bindConfig, name string) error {
	st.markCold(bs, cfg)
	var warm []*packedBind
	for i := range bs.binds {
		if !bs.binds[i].cold {
			warm = append(warm, &bs.binds[i])
		}
	}
	st.Warm, st.Cold = len(warm), len(bs.binds)-len(warm)
	st.sequences(bs)
	st.spilled(bs)
	if len(warm) == 0 {
		return fmt.Errorf("%s: %w: %d bind(s) over %d rank(s)", name, ErrAllCold, len(bs.binds), st.Ranks)
	}
	st.segmentStats(bs, warm)
	st.controlPlane(bs, warm)
	st.cpuStats(bs, warm)
	return nil
}

// markCold marks one cold bind per rank.
func (st *BindStats) markCold(bs *bindSet, cfg bindConfig) {
	binds := bs.binds
	firsts := make(map[int32]int) // pid -> index of its first bind
	var pids []int32
	for i, b := range binds {
		if _, ok := firsts[b.pid]; !ok {
			firsts[b.pid] = i
			pids = append(pids, b.pid)
		}
	}
	st.Processes = len(pids)
	st.Ranks, st.RanksFrom = st.Processes, RanksFromProcesses
	switch {
	case cfg.ranks > 0:
		st.Ranks, st.RanksFrom = cfg.ranks, RanksGiven
	case cfg.rounds > 0:
		st.Ranks, st.RanksFrom = max(1, len(binds)/cfg.rounds), RanksFromRounds
		if len(binds)%cfg.rounds != 0 {
			st.warn(WarnRanks, "%d binds do not divide into %d rounds: a bind is missing or extra", len(binds), cfg.rounds)
		}
	}
	if st.Ranks != st.Processes {
		st.warn(WarnRanks, "ranks=%d but binds come from %d process(es): the %d earliest binds are taken as the cold ones",
			st.Ranks, st.Processes, min(st.Ranks, len(binds)))
	}
	if cfg.keepFirst {
		return
	}
	if st.Ranks == st.Processes {
		for _, pid := range pids {
			binds[firsts[pid]].cold = true
		}
		return
	}
	idx := make([]int, len(binds))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return binds[idx[a]].ts < binds[idx[b]].ts })
	for _, i := range idx[:min(st.Ranks, len(idx))] {
		binds[i].cold = true
	}
}

func segmentValues(warm []*packedBind, id int) []int64 {
	var vals []int64
	for _, b := range warm {
		if s, ok := b.segment(id); ok {
			vals = append(vals, s.dur)
		}
	}
	return vals
}

func (st *BindStats) segmentStats(bs *bindSet, warm []*packedBind) {
	cp := make(map[string]bool)
	for _, s := range ControlPlaneSegments {
		cp[s] = true
	}
	for _, name := range strace.BindSegments {
		if id := bs.lookup(name); id >= 0 {
			if vals := segmentValues(warm, id); len(vals) > 0 {
				st.Segments = append(st.Segments, SegmentStats{Name: name, ControlPlane: cp[name], Spread: spreadOf(vals)})
			}
		}
	}
	unknown := make(map[int]bool)
	for _, b := range warm {
		b.each(func(s *segView) {
			if _, ok := knownSegment[bs.names.names[s.name]]; !ok {
				unknown[s.name] = true
			}
		})
	}
	names := make([]string, 0, len(unknown))
	for id := range unknown {
		names = append(names, bs.names.names[id])
	}
	sort.Strings(names)
	for _, n := range names {
		st.Unknown = append(st.Unknown, SegmentStats{Name: n, Spread: spreadOf(segmentValues(warm, bs.lookup(n)))})
	}
	if len(names) > 0 {
		st.warn(WarnUnknownSegment, "segments this tool does not know about: %s (reported, and left out of every total)", strings.Join(names, ", "))
	}
}

func (st *BindStats) controlPlane(bs *bindSet, warm []*packedBind) {
	c := &st.ControlPlane
	var present []int
	for _, name := range ControlPlaneSegments {
		id, n := bs.lookup(name), 0
		for _, b := range warm {
			if _, ok := b.segment(id); ok {
				n++
			}
		}
		switch {
		case n == 0:
			c.Absent = append(c.Absent, name)
		case n < len(warm):
			c.Present = append(c.Present, name)
			c.Partial = append(c.Partial, name)
			present = append(present, id)
		default:
			c.Present = append(c.Present, name)
			present = append(present, id)
		}
	}
	var sums []int64
	parts := make([]int64, 0, len(present)*len(warm)) // every total's parts, one allocation
	for _, b := range warm {
		n := len(parts)
		t := BindTotal{Pid: b.pid, Inv: b.inv, Parts: parts[n : n : n+len(present)]}
		complete := true
		for _, id := range present {
			s, ok := b.segment(id)
			if !ok {
				complete = false
				break
			}
			t.Parts = append(t.Parts, s.dur)
			t.Sum += s.dur
		}
		if !complete {
			c.Excluded++
			continue
		}
		parts = parts[:n+len(t.Parts)]
		c.Totals = append(c.Totals, t)
		sums = append(sums, t.Sum)
	}
	c.Spread = spreadOf(sums)
	if len(c.Absent) > 0 && len(c.Present) > 0 {
		st.warn(WarnAbsentSegment, "the control-plane total is over %d of %d segments; absent from every bind: %s",
			len(c.Present), len(ControlPlaneSegments), strings.Join(c.Absent, ", "))
	}
	if len(c.Partial) > 0 {
		st.warn(WarnPartialSegment, "%s is missing from some binds but not all; those %d bind(s) are excluded, and the total may not describe the run",
			strings.Join(c.Partial, ", "), c.Excluded)
	}
	if len(c.Totals) == 0 {
		st.warn(WarnNoTotal, "no bind carries any of %s; the control-plane total is not computable", strings.Join(ControlPlaneSegments, ", "))
	}
}

func (st *BindStats) cpuStats(bs *bindSet, warm []*packedBind) {
	for _, name := range strace.BindSegments {
		id := bs.lookup(name)
		if id < 0 {
			continue
		}
		var dur, on, off, vol, invol []int64
		for _, b := range warm {
			s, ok := b.segment(id)
			if !ok {
				continue
			}
			cpu, ok := s.counter(ctrCPU)
			if !ok {
				continue
			}
			dur = append(dur, s.dur)
			on = append(on, cpu)
			off = append(off, satSub64(s.dur, cpu))
			if v, ok := s.counter(ctrNvcsw); ok {
				vol = append(vol, v)
			}
			if v, ok := s.counter(ctrNivcsw); ok {
				invol = append(invol, v)
			}
		}
		if len(on) == 0 {
			continue
		}
		st.CPU = append(st.CPU, CPUStats{Name: name, N: len(on), Dur: spreadOf(dur), OnCPU: spreadOf(on), OffCPU: spreadOf(off),
			Nvcsw: spreadOf(vol), Nivcsw: spreadOf(invol)})
	}
}

// sequences lists minflt bind by bind for every rank and known segment.
func (st *BindStats) sequences(bs *bindSet) {
	var pids []int32
	seen := make(map[int32]bool)
	for _, b := range bs.binds {
		if !seen[b.pid] {
			seen[b.pid] = true
			pids = append(pids, b.pid)
		}
	}
	for _, pid := range pids {
		for _, name := range strace.BindSegments {
			id := bs.lookup(name)
			if id < 0 {
				continue
			}
			seq := CountSequence{Pid: pid, Segment: name, Counter: "minflt"}
			for i := range bs.binds {
				b := &bs.binds[i]
				if b.pid != pid {
					continue
				}
				s, ok := b.segment(id)
				if !ok {
					continue
				}
				if v, ok := s.counter(ctrMinflt); ok {
					seq.Values = append(seq.Values, v)
					seq.Cold = append(seq.Cold, b.cold)
				}
			}
			if len(seq.Values) > 0 {
				st.Sequences = append(st.Sequences, seq)
			}
		}
	}
}

// spilled warns about graph_pack spilled ≠ 0 after a process's first bind.
func (st *BindStats) spilled(bs *bindSet) {
	id := bs.lookup("graph_pack")
	if id < 0 {
		return
	}
	seen := make(map[int32]bool)
	for i := range bs.binds {
		b := &bs.binds[i]
		first := !seen[b.pid]
		seen[b.pid] = true
		if first {
			continue
		}
		s, ok := b.segment(id)
		if !ok {
			continue
		}
		if v, ok := s.counter(ctrSpilled); ok && v != 0 {
			st.warn(WarnSpilled, "pid %d inv %d: graph_pack spilled=%d after the process's first bind: the Definitions outgrew the retained staging and the copies are back",
				b.pid, b.inv, v)
		}
	}
}
