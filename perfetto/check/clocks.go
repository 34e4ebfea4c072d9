package check

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	pb "github.com/phasetrace/phasetrace/proto"
)

// Clock ids with a meaning of their own.
const (
	clockRealtime = 1
	clockBoottime = 6
)

type clockKey struct {
	id  uint32
	seq uint32 // for sequence-scoped clocks (64..127), else 0
}

func isSequenceClock(id uint32) bool { return id >= 64 && id < 128 }

type clockDomain struct {
	incremental bool
	unit        int64
	last        int64 // for incremental clocks: the last absolute value (ns)
	seen        bool
}

type snapshot struct {
	clocks []clockValue
}

type clockValue struct {
	key clockKey
	ns  int64
}

func (p *parser) clockSnapshot(idx int, seqID uint32, cs *pb.ClockSnapshot) {
	if pc := uint32(cs.GetPrimaryTraceClock()); pc != 0 {
		if !p.hasPrim {
			p.primary, p.hasPrim = pc, true
		} else if pc != p.primary {
			p.problem("clock_sync_mixed_clock_sources", idx, "primary_trace_clock %d after %d", pc, p.primary)
		}
	}
	var snap snapshot
	var series []string
	hasBoot := false
	for _, c := range cs.GetClocks() {
		id := c.GetClockId()
		key := clockKey{id: id}
		if isSequenceClock(id) {
			if seqID == 0 {
				p.problem("invalid_clock_snapshots", idx, "sequence-scoped clock %d in a snapshot without trusted_packet_sequence_id", id)
				return
			}
			key.seq = seqID
		}
		if id == clockBoottime {
			hasBoot = true
		}
		unit := int64(c.GetUnitMultiplierNs())
		if unit == 0 {
			unit = 1
		}
		d := p.domains[key]
		if d == nil {
			d = &clockDomain{}
			p.domains[key] = d
		}
		if !d.seen {
			if c.GetIsIncremental() && !isSequenceClock(id) {
				p.problem("invalid_clock_snapshots", idx, "global clock %d cannot use incremental encoding", id)
				return
			}
			d.seen, d.incremental, d.unit = true, c.GetIsIncremental(), unit
		} else if d.incremental != c.GetIsIncremental() || d.unit != unit {
			p.problem("invalid_clock_snapshots", idx, "clock %d redeclared with other properties", id)
			return
		}
		ns := int64(c.GetTimestamp()) * unit
		if d.incremental {
			d.last = ns
		}
		snap.clocks = append(snap.clocks, clockValue{key: key, ns: ns})
		series = append(series, fmt.Sprintf("%d/%d", key.id, key.seq))
	}
	if !p.hasPrim && hasBoot {
		p.primary, p.hasPrim = clockBoottime, true
	}
	// Snapshots with the same set of clocks form a series; each clock must
	// not go backwards along it. The trace clock going backwards is an
	// error; another clock is then only usable as a conversion target.
	sort.Strings(series)
	name := strings.Join(series, ",")
	last := p.series[name]
	if last == nil {
		last = map[clockKey]int64{}
		p.series[name] = last
	} else {
		for _, c := range snap.clocks {
			if c.ns >= last[c.key] {
				continue
			}
			if p.hasPrim && c.key == (clockKey{id: p.primary}) {
				p.problem("invalid_clock_snapshots", idx, "trace clock %d is not monotonic: %d after %d", c.key.id, c.ns, last[c.key])
			} else {
				p.nonMono[c.key] = true
			}
		}
	}
	for _, c := range snap.clocks {
		last[c.key] = c.ns
	}
	p.snaps = append(p.snaps, snap)
}

// timestamp resolves a packet's timestamp to an absolute value in its own
// clock domain, applying incremental encoding in file order as the trace
// processor's tokenizer does.
func (p *parser) timestamp(idx int, seqID uint32, st *seqState, pkt *pb.TracePacket) (clockKey, int64, bool) {
	id := pkt.GetTimestampClockId()
	if id == 0 && st.defaults != nil {
		id = st.defaults.GetTimestampClockId()
	}
	if id == 0 {
		if !p.hasPrim {
			return clockKey{}, int64(pkt.GetTimestamp()), true // trace time already
		}
		id = p.primary
	}
	key := clockKey{id: id}
	if isSequenceClock(id) {
		key.seq = seqID
	}
	d := p.domains[key]
	if d == nil || !d.seen {
		if isSequenceClock(id) {
			p.problem("clock_sync_failure_unknown_source_clock", idx, "sequence-scoped clock %d on sequence %d has no ClockSnapshot", id, seqID)
			return key, 0, false
		}
		return key, int64(pkt.GetTimestamp()), true
	}
	v := int64(pkt.GetTimestamp()) * d.unit
	if d.incremental {
		d.last += v
		return key, d.last, true
	}
	return key, v, true
}

// convert maps ts from clock src to clock dst through the snapshots: the
// shortest chain of clocks, each hop through the snapshot whose source value
// is the latest one not after ts (or the earliest snapshot), as the trace
// processor's clock tracker does (offsets only).
func (p *parser) convert(src clockKey, ts int64, dst clockKey) (int64, bool) {
	if src == dst {
		return ts, true
	}
	hops, ok := p.path(src, dst)
	if !ok {
		return 0, false
	}
	for _, h := range hops {
		var best *snapshot
		var bestA int64
		for _, j := range h.snaps {
			s := &p.snaps[j]
			av, _ := s.value(h.a)
			switch {
			case best == nil:
				best, bestA = s, av
			case av <= ts && (bestA > ts || av >= bestA):
				best, bestA = s, av
			case bestA > ts && av < bestA:
				best, bestA = s, av
			}
		}
		bv, _ := best.value(h.b)
		ts = ts - bestA + bv
	}
	return ts, true
}

// hop is one step of a clock conversion: from clock a to clock b through
// one of the snapshots that hold both.
type hop struct {
	a, b  clockKey
	snaps []int
}

type pathKey struct{ src, dst clockKey }

type pathResult struct {
	hops []hop
	ok   bool
}

// path finds the shortest chain of clocks from src to dst (breadth-first
// over clocks linked by snapshots), once per pair: the snapshots are all
// read before any conversion.
func (p *parser) path(src, dst clockKey) ([]hop, bool) {
	if r, ok := p.paths[pathKey{src, dst}]; ok {
		return r.hops, r.ok
	}
	prev := map[clockKey]clockKey{src: src}
	queue := []clockKey{src}
	found := false
	for len(queue) > 0 && !found {
		c := queue[0]
		queue = queue[1:]
		if p.nonMono[c] && c != src {
			continue
		}
		for _, s := range p.snaps {
			if !s.has(c) {
				continue
			}
			for _, o := range s.clocks {
				if _, seen := prev[o.key]; seen {
					continue
				}
				prev[o.key] = c
				if o.key == dst {
					found = true
				}
				queue = append(queue, o.key)
			}
		}
	}
	var hops []hop
	if found {
		var chain []clockKey
		for c := dst; c != src; c = prev[c] {
			chain = append(chain, c)
		}
		chain = append(chain, src)
		slices.Reverse(chain)
		for i := 0; i+1 < len(chain); i++ {
			h := hop{a: chain[i], b: chain[i+1]}
			for j := range p.snaps {
				if p.snaps[j].has(h.a) && p.snaps[j].has(h.b) {
					h.snaps = append(h.snaps, j)
				}
			}
			hops = append(hops, h)
		}
	}
	if p.paths == nil {
		p.paths = map[pathKey]pathResult{}
	}
	p.paths[pathKey{src, dst}] = pathResult{hops, found}
	return hops, found
}

func (s *snapshot) has(k clockKey) bool {
	_, ok := s.value(k)
	return ok
}

func (s *snapshot) value(k clockKey) (int64, bool) {
	for _, c := range s.clocks {
		if c.key == k {
			return c.ns, true
		}
	}
	return 0, false
}
