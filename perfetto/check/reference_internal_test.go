package check

// The reader as it was before Reader: it decodes the whole trace into
// memory, then sorts and replays it. Kept only as the reference the
// streaming Reader must agree with, byte for byte (TestReaderAgrees*,
// FuzzRead).

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	pb "github.com/phasetrace/phasetrace/proto"
)

// ReferenceRead is Read as it was, decoding the whole trace in memory.
func ReferenceRead(r io.Reader) (*Trace, error) {
	p := refNewParser()
	if err := p.readPackets(bufio.NewReader(r), 0, false); err != nil {
		return nil, err
	}
	return p.finish(), nil
}

type refCountingReader struct {
	r *bufio.Reader
	n int64
}

func (c *refCountingReader) ReadByte() (byte, error) {
	b, err := c.r.ReadByte()
	if err == nil {
		c.n++
	}
	return b, err
}

func (p *refParser) readPackets(br *bufio.Reader, base int64, nested bool) error {
	cr := &refCountingReader{r: br}
	for {
		start := cr.n
		tag, err := binary.ReadUvarint(cr)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return &FormatError{Offset: base + start, Err: fmt.Errorf("%w: reading a field tag: %w", ErrFormat, err)}
		}
		num, typ := protowire.DecodeTag(tag)
		if num < 1 {
			return &FormatError{Offset: base + start, Err: fmt.Errorf("%w: invalid field tag %#x", ErrFormat, tag)}
		}
		if typ != protowire.BytesType {
			return &FormatError{Offset: base + start, Err: fmt.Errorf("%w: field %d of Trace has wire type %d, want length-delimited", ErrFormat, num, typ)}
		}
		n, err := binary.ReadUvarint(cr)
		if err != nil {
			return &FormatError{Offset: base + cr.n, Err: fmt.Errorf("%w: reading a length: %w", ErrFormat, err)}
		}
		if n > maxPacket {
			return &FormatError{Offset: base + start, Err: fmt.Errorf("%w: packet of %d bytes", ErrFormat, n)}
		}
		// Read what is there rather than trusting the length with an
		// allocation: a corrupt length must not cost its size in memory.
		buf, err := io.ReadAll(io.LimitReader(br, int64(n)))
		if err == nil && uint64(len(buf)) < n {
			err = io.ErrUnexpectedEOF
		}
		if err != nil {
			return &FormatError{Offset: base + cr.n, Err: fmt.Errorf("%w: packet of %d bytes cut short: %w", ErrFormat, n, err)}
		}
		cr.n += int64(n)
		if num != 1 {
			p.problem("trace_unknown_field", p.n, "field %d of Trace at byte %d is not a packet", num, base+start)
			continue
		}
		var pkt pb.TracePacket
		if err := proto.Unmarshal(buf, &pkt); err != nil {
			return &FormatError{Offset: base + start, Err: fmt.Errorf("%w: packet: %w", ErrFormat, err)}
		}
		if c := pkt.GetCompressedPackets(); c != nil {
			if nested {
				return &FormatError{Offset: base + start, Err: fmt.Errorf("%w: compressed packets inside compressed packets", ErrFormat)}
			}
			zr, err := zlib.NewReader(bytes.NewReader(c))
			if err != nil {
				return &FormatError{Offset: base + start, Err: fmt.Errorf("%w: compressed packets: %w", ErrFormat, err)}
			}
			inflated, err := io.ReadAll(io.LimitReader(zr, maxPacket+1))
			if err != nil {
				return &FormatError{Offset: base + start, Err: fmt.Errorf("%w: compressed packets: %w", ErrFormat, err)}
			}
			if len(inflated) > maxPacket {
				// Cutting it would read part of a bundle as if it were
				// all of it.
				return &FormatError{Offset: base + start, Err: fmt.Errorf("%w: compressed packets inflate past %d bytes", ErrFormat, maxPacket)}
			}
			if err := p.readPackets(bufio.NewReader(bytes.NewReader(inflated)), base+start, true); err != nil {
				return err
			}
			continue
		}
		p.packet(&pkt)
	}
}

// Clock ids with a meaning of their own.
const (
	refClockRealtime = 1
	refClockBoottime = 6
)

type refClockKey struct {
	id  uint32
	seq uint32 // for sequence-scoped clocks (64..127), else 0
}

func refIsSequenceClock(id uint32) bool { return id >= 64 && id < 128 }

type refClockDomain struct {
	incremental bool
	unit        int64
	last        int64 // for incremental clocks: the last absolute value (ns)
	seen        bool
}

type refSnapshot struct {
	clocks []refClockValue
}

type refClockValue struct {
	key refClockKey
	ns  int64
}

type refSeqState struct {
	valid    bool
	defaults *pb.TracePacketDefaults
	names    map[uint64]string
	cats     map[uint64]string
	annNames map[uint64]string
	strs     map[uint64]string
}

func (s *refSeqState) reset() {
	s.valid = true
	s.defaults = nil
	s.names = map[uint64]string{}
	s.cats = map[uint64]string{}
	s.annNames = map[uint64]string{}
	s.strs = map[uint64]string{}
}

type refEvent struct {
	packet  int
	key     refClockKey
	ts      int64 // in key's clock, absolute ns
	typ     pb.TrackEvent_Type
	track   uint64
	name    string
	cat     string
	args    []Arg
	flows   []uint64
	tflows  []uint64
	counter *pb.TrackEvent
}

type refParser struct {
	t       Trace
	n       int // packets seen
	seqs    map[uint32]*refSeqState
	domains map[refClockKey]*refClockDomain
	snaps   []refSnapshot
	series  map[string]map[refClockKey]int64 // last values per snapshot series
	nonMono map[refClockKey]bool
	primary uint32
	tracks  map[uint64]int // uuid → index in t.Tracks
	events  []refEvent
	hasPrim bool
	paths   map[refPathKey]refPathResult // conversions found, by clock pair
}

func refNewParser() *refParser {
	return &refParser{
		seqs:    map[uint32]*refSeqState{},
		domains: map[refClockKey]*refClockDomain{},
		series:  map[string]map[refClockKey]int64{},
		nonMono: map[refClockKey]bool{},
		tracks:  map[uint64]int{},
	}
}

func (p *refParser) problem(name string, packet int, format string, args ...any) {
	p.t.Problems = append(p.t.Problems, Problem{Name: name, Packet: packet, Detail: fmt.Sprintf(format, args...)})
}

func (p *refParser) packet(pkt *pb.TracePacket) {
	idx := p.n
	p.n++
	lintPacket(pkt, func(name, format string, args ...any) { p.problem(name, idx, format, args...) })
	seqID := pkt.GetTrustedPacketSequenceId()
	st := p.seqs[seqID]
	if st == nil {
		st = &refSeqState{}
		p.seqs[seqID] = st
	}
	flags := pkt.GetSequenceFlags()
	if flags&uint32(pb.TracePacket_SEQ_INCREMENTAL_STATE_CLEARED) != 0 {
		if seqID == 0 {
			p.problem("incremental_state_cleared_missing_sequence_id", idx, "SEQ_INCREMENTAL_STATE_CLEARED on a packet without trusted_packet_sequence_id")
		} else {
			st.reset()
		}
	}
	if d := pkt.GetTracePacketDefaults(); d != nil {
		st.defaults = d
	}
	if in := pkt.GetInternedData(); in != nil {
		switch {
		case seqID == 0:
			p.problem("interned_data_missing_sequence_id", idx, "interned data on a packet without trusted_packet_sequence_id")
		case !st.valid:
			p.problem("interned_data_skipped_incremental_state_invalid", idx, "interned data on sequence %d before SEQ_INCREMENTAL_STATE_CLEARED", seqID)
		default:
			refInternAll(p, idx, st.names, "event name", in.GetEventNames())
			refInternAll(p, idx, st.cats, "category", in.GetEventCategories())
			refInternAll(p, idx, st.annNames, "annotation name", in.GetDebugAnnotationNames())
			for _, e := range in.GetDebugAnnotationStringValues() {
				p.define(idx, st.strs, "string value", e.GetIid(), string(e.GetStr()))
			}
		}
	}
	if flags&uint32(pb.TracePacket_SEQ_NEEDS_INCREMENTAL_STATE) != 0 && !st.valid {
		p.problem("packet_skipped_seq_needs_incremental_state_invalid", idx, "packet on sequence %d needs incremental state before any SEQ_INCREMENTAL_STATE_CLEARED", seqID)
		return
	}
	if cs := pkt.GetClockSnapshot(); cs != nil {
		p.clockSnapshot(idx, seqID, cs)
	}
	if td := pkt.GetTrackDescriptor(); td != nil {
		p.descriptor(idx, td)
	}
	te := pkt.GetTrackEvent()
	if te == nil {
		return
	}
	if seqID == 0 {
		p.problem("track_event_missing_sequence_id", idx, "track event without trusted_packet_sequence_id")
		return
	}
	if pkt.Timestamp == nil {
		p.problem("track_event_missing_timestamp", idx, "track event without a timestamp")
		return
	}
	key, ts, ok := p.timestamp(idx, seqID, st, pkt)
	if !ok {
		return
	}
	p.trackEvent(idx, st, te, key, ts)
}

type refInterned interface {
	GetIid() uint64
	GetName() string
}

func refInternAll[T refInterned](p *refParser, idx int, m map[uint64]string, what string, entries []T) {
	for _, e := range entries {
		p.define(idx, m, what, e.GetIid(), e.GetName())
	}
}

func (p *refParser) define(idx int, m map[uint64]string, what string, iid uint64, v string) {
	if iid == 0 {
		p.problem("interned_data_tokenizer_errors", idx, "%s %q interned with iid 0", what, v)
		return
	}
	if old, ok := m[iid]; ok && old != v {
		p.problem("interned_data_tokenizer_errors", idx, "%s iid %d redefined from %q to %q without a clear", what, iid, old, v)
		return // the trace processor keeps the first definition
	}
	m[iid] = v
}

func (p *refParser) clockSnapshot(idx int, seqID uint32, cs *pb.ClockSnapshot) {
	if pc := uint32(cs.GetPrimaryTraceClock()); pc != 0 {
		if !p.hasPrim {
			p.primary, p.hasPrim = pc, true
		} else if pc != p.primary {
			p.problem("clock_sync_mixed_clock_sources", idx, "primary_trace_clock %d after %d", pc, p.primary)
		}
	}
	var snap refSnapshot
	var series []string
	hasBoot := false
	for _, c := range cs.GetClocks() {
		id := c.GetClockId()
		key := refClockKey{id: id}
		if refIsSequenceClock(id) {
			if seqID == 0 {
				p.problem("invalid_clock_snapshots", idx, "sequence-scoped clock %d in a snapshot without trusted_packet_sequence_id", id)
				return
			}
			key.seq = seqID
		}
		if id == refClockBoottime {
			hasBoot = true
		}
		unit := int64(c.GetUnitMultiplierNs())
		if unit == 0 {
			unit = 1
		}
		d := p.domains[key]
		if d == nil {
			d = &refClockDomain{}
			p.domains[key] = d
		}
		if !d.seen {
			if c.GetIsIncremental() && !refIsSequenceClock(id) {
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
		snap.clocks = append(snap.clocks, refClockValue{key: key, ns: ns})
		series = append(series, fmt.Sprintf("%d/%d", key.id, key.seq))
	}
	if !p.hasPrim && hasBoot {
		p.primary, p.hasPrim = refClockBoottime, true
	}
	// Snapshots with the same set of clocks form a series; each clock must
	// not go backwards along it. The trace clock going backwards is an
	// error; another clock is then only usable as a conversion target.
	sort.Strings(series)
	name := strings.Join(series, ",")
	last := p.series[name]
	if last == nil {
		last = map[refClockKey]int64{}
		p.series[name] = last
	} else {
		for _, c := range snap.clocks {
			if c.ns >= last[c.key] {
				continue
			}
			if p.hasPrim && c.key == (refClockKey{id: p.primary}) {
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
func (p *refParser) timestamp(idx int, seqID uint32, st *refSeqState, pkt *pb.TracePacket) (refClockKey, int64, bool) {
	id := pkt.GetTimestampClockId()
	if id == 0 && st.defaults != nil {
		id = st.defaults.GetTimestampClockId()
	}
	if id == 0 {
		if !p.hasPrim {
			return refClockKey{}, int64(pkt.GetTimestamp()), true // trace time already
		}
		id = p.primary
	}
	key := refClockKey{id: id}
	if refIsSequenceClock(id) {
		key.seq = seqID
	}
	d := p.domains[key]
	if d == nil || !d.seen {
		if refIsSequenceClock(id) {
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

func (p *refParser) descriptor(idx int, td *pb.TrackDescriptor) {
	tr := Track{
		UUID:        td.GetUuid(),
		Parent:      td.GetParentUuid(),
		Kind:        "track",
		Description: td.GetDescription(),
		ChildOrder:  int32(td.GetChildOrdering()),
		Rank:        td.GetSiblingOrderRank(),
		Merge:       int32(td.GetSiblingMergeBehavior()),
		MergeKey:    td.GetSiblingMergeKey(),
	}
	tr.Name = td.GetName()
	if tr.Name == "" {
		tr.Name = td.GetStaticName()
	}
	switch {
	case td.GetThread() != nil:
		th := td.GetThread()
		tr.Kind, tr.Pid, tr.Tid, tr.SortIndex = "thread", th.GetPid(), th.GetTid(), th.GetLegacySortIndex()
		if tr.Name == "" {
			tr.Name = th.GetThreadName()
		}
	case td.GetProcess() != nil:
		pr := td.GetProcess()
		tr.Kind, tr.Pid, tr.SortIndex, tr.Labels = "process", pr.GetPid(), pr.GetLegacySortIndex(), pr.GetProcessLabels()
		if tr.Name == "" {
			tr.Name = pr.GetProcessName()
		}
	case td.GetCounter() != nil:
		c := td.GetCounter()
		tr.Kind, tr.Unit, tr.UnitName, tr.YAxisShareKey = "counter", int32(c.GetUnit()), c.GetUnitName(), c.GetYAxisShareKey()
	}
	if tr.UUID == 0 {
		p.problem("track_descriptor_missing_uuid", idx, "track descriptor without a uuid (%q)", tr.Name)
		return
	}
	if i, ok := p.tracks[tr.UUID]; ok {
		if !refEqualTracks(p.t.Tracks[i], tr) {
			p.problem("track_descriptor_conflict", idx, "track %d (%q) described twice, differently", tr.UUID, tr.Name)
		}
		return
	}
	p.tracks[tr.UUID] = len(p.t.Tracks)
	p.t.Tracks = append(p.t.Tracks, tr)
}

func refEqualTracks(a, b Track) bool {
	return a.UUID == b.UUID && a.Parent == b.Parent && a.Kind == b.Kind && a.Name == b.Name &&
		a.Description == b.Description && a.Pid == b.Pid && a.Tid == b.Tid &&
		slices.Equal(a.Labels, b.Labels) && a.SortIndex == b.SortIndex && a.ChildOrder == b.ChildOrder &&
		a.Rank == b.Rank && a.Merge == b.Merge && a.MergeKey == b.MergeKey && a.Unit == b.Unit && a.UnitName == b.UnitName && a.YAxisShareKey == b.YAxisShareKey
}

func (p *refParser) lookup(idx int, m map[uint64]string, what string, iid uint64) string {
	v, ok := m[iid]
	if !ok {
		p.problem("interned_data_unknown_iid", idx, "%s iid %d is not defined on this sequence", what, iid)
	}
	return v
}

func (p *refParser) trackEvent(idx int, st *refSeqState, te *pb.TrackEvent, key refClockKey, ts int64) {
	ev := refEvent{packet: idx, key: key, ts: ts, typ: te.GetType()}
	switch {
	case te.TrackUuid != nil:
		ev.track = te.GetTrackUuid()
	case st.defaults.GetTrackEventDefaults() != nil && st.defaults.GetTrackEventDefaults().TrackUuid != nil:
		ev.track = st.defaults.GetTrackEventDefaults().GetTrackUuid()
	default:
		p.problem("track_event_missing_track", idx, "track event without track_uuid and no default track on its sequence")
		return
	}
	switch n := te.GetNameField().(type) {
	case *pb.TrackEvent_NameIid:
		ev.name = p.lookup(idx, st.names, "event name", n.NameIid)
	case *pb.TrackEvent_Name:
		ev.name = n.Name
	}
	var cats []string
	for _, iid := range te.GetCategoryIids() {
		cats = append(cats, p.lookup(idx, st.cats, "category", iid))
	}
	cats = append(cats, te.GetCategories()...)
	ev.cat = strings.Join(cats, ",")
	for _, a := range te.GetDebugAnnotations() {
		ev.args = append(ev.args, p.annotation(idx, st, a, true))
	}
	ev.flows = te.GetFlowIds()
	ev.tflows = te.GetTerminatingFlowIds()
	if ev.typ == pb.TrackEvent_TYPE_COUNTER {
		ev.counter = te
	}
	p.events = append(p.events, ev)
}

func (p *refParser) annotation(idx int, st *refSeqState, a *pb.DebugAnnotation, named bool) Arg {
	var arg Arg
	if named {
		switch n := a.GetNameField().(type) {
		case *pb.DebugAnnotation_NameIid:
			arg.Name = p.lookup(idx, st.annNames, "annotation name", n.NameIid)
		case *pb.DebugAnnotation_Name:
			arg.Name = n.Name
		}
	}
	switch v := a.GetValue().(type) {
	case *pb.DebugAnnotation_BoolValue:
		arg.Value = v.BoolValue
	case *pb.DebugAnnotation_UintValue:
		arg.Value = v.UintValue
	case *pb.DebugAnnotation_IntValue:
		arg.Value = v.IntValue
	case *pb.DebugAnnotation_DoubleValue:
		arg.Value = v.DoubleValue
	case *pb.DebugAnnotation_StringValue:
		arg.Value = v.StringValue
	case *pb.DebugAnnotation_StringValueIid:
		arg.Value = p.lookup(idx, st.strs, "string value", v.StringValueIid)
	case *pb.DebugAnnotation_PointerValue:
		arg.Value = v.PointerValue
	case *pb.DebugAnnotation_LegacyJsonValue:
		arg.Value = v.LegacyJsonValue
	case nil:
		switch {
		case len(a.GetDictEntries()) > 0:
			dict := []Arg{}
			for _, e := range a.GetDictEntries() {
				dict = append(dict, p.annotation(idx, st, e, true))
			}
			arg.Value = dict
		case len(a.GetArrayValues()) > 0:
			arr := []any{}
			for _, e := range a.GetArrayValues() {
				arr = append(arr, p.annotation(idx, st, e, false).Value)
			}
			arg.Value = arr
		}
	}
	return arg
}

// convert maps ts from clock src to clock dst through the snapshots: the
// shortest chain of clocks, each hop through the snapshot whose source value
// is the latest one not after ts (or the earliest snapshot), as the trace
// processor's clock tracker does (offsets only).
func (p *refParser) convert(src refClockKey, ts int64, dst refClockKey) (int64, bool) {
	if src == dst {
		return ts, true
	}
	hops, ok := p.path(src, dst)
	if !ok {
		return 0, false
	}
	for _, h := range hops {
		var best *refSnapshot
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
type refHop struct {
	a, b  refClockKey
	snaps []int
}

type refPathKey struct{ src, dst refClockKey }

type refPathResult struct {
	hops []refHop
	ok   bool
}

// path finds the shortest chain of clocks from src to dst (breadth-first
// over clocks linked by snapshots), once per pair: the snapshots are all
// read before any conversion.
func (p *refParser) path(src, dst refClockKey) ([]refHop, bool) {
	if r, ok := p.paths[refPathKey{src, dst}]; ok {
		return r.hops, r.ok
	}
	prev := map[refClockKey]refClockKey{src: src}
	queue := []refClockKey{src}
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
	var hops []refHop
	if found {
		var chain []refClockKey
		for c := dst; c != src; c = prev[c] {
			chain = append(chain, c)
		}
		chain = append(chain, src)
		slices.Reverse(chain)
		for i := 0; i+1 < len(chain); i++ {
			h := refHop{a: chain[i], b: chain[i+1]}
			for j := range p.snaps {
				if p.snaps[j].has(h.a) && p.snaps[j].has(h.b) {
					h.snaps = append(h.snaps, j)
				}
			}
			hops = append(hops, h)
		}
	}
	if p.paths == nil {
		p.paths = map[refPathKey]refPathResult{}
	}
	p.paths[refPathKey{src, dst}] = refPathResult{hops, found}
	return hops, found
}

func (s *refSnapshot) has(k refClockKey) bool {
	_, ok := s.value(k)
	return ok
}

func (s *refSnapshot) value(k refClockKey) (int64, bool) {
	for _, c := range s.clocks {
		if c.key == k {
			return c.ns, true
		}
	}
	return 0, false
}

func (p *refParser) finish() *Trace {
	t := &p.t
	t.Packets = p.n
	t.PrimaryClock = p.primary
	trace := refClockKey{id: p.primary}
	// The trace processor bridges BOOTTIME to the trace clock for every
	// protobuf file and logs an error when nothing relates them.
	if p.hasPrim && p.primary != refClockBoottime {
		if _, ok := p.convert(refClockKey{id: refClockBoottime}, 0, trace); !ok {
			p.problem("clock_sync_unrelatable_clock_domains", -1, "nothing relates BOOTTIME to the trace clock %d", p.primary)
		}
	}
	for _, s := range p.snaps {
		w, ok := s.value(refClockKey{id: refClockRealtime})
		if !ok {
			continue
		}
		for _, c := range s.clocks {
			if c.key.id == refClockRealtime {
				continue
			}
			if ts, ok := p.convert(c.key, c.ns, trace); ok {
				t.Wall = append(t.Wall, WallClock{TS: ts, Wall: w})
				break
			}
		}
	}
	// Convert every event to the trace clock.
	evs := p.events[:0]
	for _, ev := range p.events {
		if ev.key.id != 0 && p.hasPrim && ev.key != trace {
			ts, ok := p.convert(ev.key, ev.ts, trace)
			if !ok {
				p.problem("clock_sync_failure_no_path", ev.packet, "no path from clock %d to the trace clock %d", ev.key.id, p.primary)
				continue
			}
			ev.ts = ts
		}
		if ev.ts < 0 {
			p.problem("track_event_negative_timestamp", ev.packet, "timestamp %d is before the trace clock's zero", ev.ts)
		}
		evs = append(evs, ev)
	}
	slices.SortStableFunc(evs, func(a, b refEvent) int {
		switch {
		case a.ts < b.ts:
			return -1
		case a.ts > b.ts:
			return 1
		}
		return 0
	})
	p.checkHierarchy()
	p.replay(evs)
	return t
}

func (p *refParser) checkHierarchy() {
	for _, tr := range p.t.Tracks {
		if tr.Parent == 0 {
			continue
		}
		if _, ok := p.tracks[tr.Parent]; !ok {
			p.problem("track_descriptor_unknown_parent", -1, "track %d (%q) has parent %d, which is not described", tr.UUID, tr.Name, tr.Parent)
			continue
		}
		seen := map[uint64]bool{tr.UUID: true}
		for u := tr.Parent; u != 0; {
			if seen[u] {
				p.problem("track_event_track_hierarchy_loop", -1, "track %d (%q) is its own ancestor", tr.UUID, tr.Name)
				break
			}
			seen[u] = true
			i, ok := p.tracks[u]
			if !ok {
				break
			}
			u = p.t.Tracks[i].Parent
		}
	}
}

// popInstants pops the instants at the top of a track's stack as the trace
// processor does before an event at ts: an instant stays open only for
// instants at its own timestamp (keepSame), which nest in it.
func (p *refParser) popInstants(st []int, ts int64, keepSame bool) []int {
	for len(st) > 0 {
		top := &p.t.Slices[st[len(st)-1]]
		if !top.Instant || keepSame && top.TS == ts {
			break
		}
		st = st[:len(st)-1]
	}
	return st
}

// replay builds the slices of every track from the events sorted by time,
// with the trace processor's stack: a begin opens a slice nested in the
// innermost one open, an end closes the innermost one (an end with nothing
// open is reported as misplaced_end_event, which the trace processor
// ignores silently), and an instant nests like a slice but stays open only
// for instants at the same timestamp, so that those nest in one another.
func (p *refParser) replay(evs []refEvent) {
	t := &p.t
	stacks := map[uint64][]int{}
	open := map[uint64]int{}     // flow id → last slice
	stepped := map[uint64]bool{} // flow id → has reached a second slice
	unknown := map[uint64]bool{}
	flows := func(ev *refEvent, slice int) {
		for _, id := range ev.flows {
			if id == 0 {
				p.problem("flow_invalid_id", ev.packet, "flow id 0 on %q", ev.name)
				continue
			}
			if from, ok := open[id]; ok {
				t.Flows = append(t.Flows, Flow{ID: id, From: from, To: slice})
				stepped[id] = true
			}
			open[id] = slice
		}
		for _, id := range ev.tflows {
			from, ok := open[id]
			if !ok {
				p.problem("flow_end_without_start", ev.packet, "flow %d terminated on %q without a start", id, ev.name)
				continue
			}
			t.Flows = append(t.Flows, Flow{ID: id, From: from, To: slice})
			delete(open, id)
			delete(stepped, id)
		}
	}
	for i := range evs {
		ev := &evs[i]
		ti, ok := p.tracks[ev.track]
		if !ok {
			if !unknown[ev.track] {
				unknown[ev.track] = true
				p.problem("track_event_unknown_track", ev.packet, "event %q on track %d, which has no TrackDescriptor", ev.name, ev.track)
			}
			continue
		}
		tr := &t.Tracks[ti]
		st := stacks[ev.track]
		switch ev.typ {
		case pb.TrackEvent_TYPE_SLICE_BEGIN, pb.TrackEvent_TYPE_INSTANT:
			if tr.Kind == "counter" {
				p.problem("track_event_slice_on_counter_track", ev.packet, "slice %q on counter track %q", ev.name, tr.Name)
				continue
			}
			instant := ev.typ == pb.TrackEvent_TYPE_INSTANT
			st = p.popInstants(st, ev.ts, instant)
			stacks[ev.track] = st
			if len(st) >= MaxDepth {
				p.problem("slice_max_depth_exceeded", ev.packet, "%q at %d on track %q would be at depth %d", ev.name, ev.ts, tr.Name, len(st))
				continue
			}
			s := Slice{Track: ev.track, Name: ev.name, Category: ev.cat, TS: ev.ts, Depth: len(st), Parent: -1, Args: ev.args, Instant: instant}
			if len(st) > 0 {
				s.Parent = st[len(st)-1]
			}
			if !instant {
				s.Dur = -1
			}
			idx := len(t.Slices)
			stacks[ev.track] = append(st, idx)
			t.Slices = append(t.Slices, s)
			flows(ev, idx)
		case pb.TrackEvent_TYPE_SLICE_END:
			st = p.popInstants(st, ev.ts, false)
			stacks[ev.track] = st
			if len(st) == 0 {
				p.problem("misplaced_end_event", ev.packet, "end at %d on track %q with no open slice", ev.ts, tr.Name)
				continue
			}
			top := st[len(st)-1]
			t.Slices[top].Dur = ev.ts - t.Slices[top].TS
			stacks[ev.track] = st[:len(st)-1]
		case pb.TrackEvent_TYPE_COUNTER:
			if tr.Kind != "counter" {
				p.problem("track_event_counter_invalid_track_uuid", ev.packet, "counter value on track %q, which is not a counter track", tr.Name)
				continue
			}
			c := Counter{Track: ev.track, TS: ev.ts}
			switch v := ev.counter.GetCounterValueField().(type) {
			case *pb.TrackEvent_CounterValue:
				c.Int, c.Value = v.CounterValue, float64(v.CounterValue)
			case *pb.TrackEvent_DoubleCounterValue:
				c.Value, c.Float = v.DoubleCounterValue, true
			default:
				p.problem("track_event_counter_missing_value", ev.packet, "counter event without a value on %q", tr.Name)
				continue
			}
			t.Counters = append(t.Counters, c)
		default:
			p.problem("track_event_parser_errors", ev.packet, "track event %q without a type", ev.name)
		}
	}
	// Report what is left open, in a stable order.
	var uuids []uint64
	for u, st := range stacks {
		if len(st) > 0 {
			uuids = append(uuids, u)
		}
	}
	slices.Sort(uuids)
	for _, u := range uuids {
		for _, i := range stacks[u] {
			if !t.Slices[i].Instant {
				p.problem("slice_not_ended", -1, "slice %q at %d never ended", t.Slices[i].Name, t.Slices[i].TS)
			}
		}
	}
	var ids []uint64
	for id := range open {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		if stepped[id] {
			p.problem("flow_unterminated", -1, "flow %d, last on %q, was never terminated", id, t.Slices[open[id]].Name)
		} else {
			p.problem("flow_without_destination", -1, "flow %d starts on %q and reaches no other event", id, t.Slices[open[id]].Name)
		}
	}
}
