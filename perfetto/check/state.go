package check

import (
	"encoding/binary"
	"slices"
	"strings"

	pb "github.com/phasetrace/phasetrace/proto"
)

// seqState is a packet sequence's incremental state: its interned strings
// and defaults, valid after a packet with SEQ_INCREMENTAL_STATE_CLEARED.
type seqState struct {
	valid    bool
	defaults *pb.TracePacketDefaults
	names    map[uint64]string
	cats     map[uint64]string
	annNames map[uint64]string
	strs     map[uint64]string
}

func (s *seqState) reset() {
	s.valid = true
	s.defaults = nil
	s.names = map[uint64]string{}
	s.cats = map[uint64]string{}
	s.annNames = map[uint64]string{}
	s.strs = map[uint64]string{}
}

// parser reads packets in file order: it resolves interned data and
// timestamps (incremental clocks advance in file order), keeps the clock
// snapshots and the track descriptors, and writes each track event, with
// its clock and its timestamp in that clock, to the events spool, in file
// order. It keeps nothing else of a packet.
type parser struct {
	t       Trace // what the packets describe: clock, tracks, packet count
	n       int   // packets seen
	seqs    map[uint32]*seqState
	domains map[clockKey]*clockDomain
	snaps   []snapshot
	series  map[string]map[clockKey]int64 // last values per snapshot series
	nonMono map[clockKey]bool
	primary uint32
	tracks  map[uint64]int // uuid → index in t.Tracks
	hasPrim bool
	paths   map[pathKey]pathResult // conversions found, by clock pair

	out      *outbox
	keepArgs func(*Track) bool // nil: keep no argument
	dict     dict
	keys     []clockKey // the clocks events are stamped in; keys[0] is trace time
	keyIndex map[clockKey]uint64
	events   spool // the events, in file order (see writeEvent)
	enc      encoder
	head     [4 * binary.MaxVarintLen64]byte // an event's head in the spool
	cats     []string
}

func newParser(out *outbox) *parser {
	p := &parser{
		seqs:     map[uint32]*seqState{},
		domains:  map[clockKey]*clockDomain{},
		series:   map[string]map[clockKey]int64{},
		nonMono:  map[clockKey]bool{},
		tracks:   map[uint64]int{},
		out:      out,
		keys:     []clockKey{{}},
		keyIndex: map[clockKey]uint64{{}: 0},
	}
	p.enc.dict = &p.dict
	return p
}

func (p *parser) problem(name string, packet int, format string, args ...any) {
	p.out.problem(name, packet, format, args...)
}

func (p *parser) packet(pkt *pb.TracePacket) {
	idx := p.n
	p.n++
	lintPacket(pkt, func(name, format string, args ...any) { p.problem(name, idx, format, args...) })
	seqID := pkt.GetTrustedPacketSequenceId()
	st := p.seqs[seqID]
	if st == nil {
		st = &seqState{}
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
			internAll(p, idx, st.names, "event name", in.GetEventNames())
			internAll(p, idx, st.cats, "category", in.GetEventCategories())
			internAll(p, idx, st.annNames, "annotation name", in.GetDebugAnnotationNames())
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

type interned interface {
	GetIid() uint64
	GetName() string
}

func internAll[T interned](p *parser, idx int, m map[uint64]string, what string, entries []T) {
	for _, e := range entries {
		p.define(idx, m, what, e.GetIid(), e.GetName())
	}
}

func (p *parser) define(idx int, m map[uint64]string, what string, iid uint64, v string) {
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

func (p *parser) descriptor(idx int, td *pb.TrackDescriptor) {
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
		if !equalTracks(p.t.Tracks[i], tr) {
			p.problem("track_descriptor_conflict", idx, "track %d (%q) described twice, differently", tr.UUID, tr.Name)
		}
		return
	}
	p.tracks[tr.UUID] = len(p.t.Tracks)
	p.t.Tracks = append(p.t.Tracks, tr)
}

func equalTracks(a, b Track) bool {
	return a.UUID == b.UUID && a.Parent == b.Parent && a.Kind == b.Kind && a.Name == b.Name &&
		a.Description == b.Description && a.Pid == b.Pid && a.Tid == b.Tid &&
		slices.Equal(a.Labels, b.Labels) && a.SortIndex == b.SortIndex && a.ChildOrder == b.ChildOrder &&
		a.Rank == b.Rank && a.Merge == b.Merge && a.MergeKey == b.MergeKey && a.Unit == b.Unit && a.UnitName == b.UnitName &&
		a.YAxisShareKey == b.YAxisShareKey
}

func (p *parser) lookup(idx int, m map[uint64]string, what string, iid uint64) string {
	v, ok := m[iid]
	if !ok {
		p.problem("interned_data_unknown_iid", idx, "%s iid %d is not defined on this sequence", what, iid)
	}
	return v
}

// trackEvent resolves a track event's interned data and writes it to the
// events spool.
func (p *parser) trackEvent(idx int, st *seqState, te *pb.TrackEvent, key clockKey, ts int64) {
	var track uint64
	switch {
	case te.TrackUuid != nil:
		track = te.GetTrackUuid()
	case st.defaults.GetTrackEventDefaults() != nil && st.defaults.GetTrackEventDefaults().TrackUuid != nil:
		track = st.defaults.GetTrackEventDefaults().GetTrackUuid()
	default:
		p.problem("track_event_missing_track", idx, "track event without track_uuid and no default track on its sequence")
		return
	}
	e := &p.enc
	e.b = e.b[:0]
	e.varint(int64(te.GetType()))
	e.track(track)
	var name string
	switch n := te.GetNameField().(type) {
	case *pb.TrackEvent_NameIid:
		name = p.lookup(idx, st.names, "event name", n.NameIid)
	case *pb.TrackEvent_Name:
		name = n.Name
	}
	e.str(name)
	p.cats = p.cats[:0]
	for _, iid := range te.GetCategoryIids() {
		p.cats = append(p.cats, p.lookup(idx, st.cats, "category", iid))
	}
	p.cats = append(p.cats, te.GetCategories()...)
	e.str(strings.Join(p.cats, ","))
	for _, ids := range [][]uint64{te.GetFlowIds(), te.GetTerminatingFlowIds()} {
		e.uvarint(uint64(len(ids)))
		for _, id := range ids {
			e.uvarint(id)
		}
	}
	if te.GetType() == pb.TrackEvent_TYPE_COUNTER {
		switch v := te.GetCounterValueField().(type) {
		case *pb.TrackEvent_CounterValue:
			e.b = append(e.b, counterInt)
			e.varint(v.CounterValue)
		case *pb.TrackEvent_DoubleCounterValue:
			e.b = append(e.b, counterDouble)
			e.double(v.DoubleCounterValue)
		default:
			e.b = append(e.b, counterNone)
		}
	}
	anns := te.GetDebugAnnotations()
	keep := len(anns) > 0 && p.keep(track)
	if keep {
		e.uvarint(uint64(len(anns)))
	} else {
		e.uvarint(0)
	}
	for _, a := range anns {
		p.annotation(idx, st, a, true, keep)
	}
	p.writeEvent(idx, key, ts)
}

// keep reports whether the events of track keep their arguments.
func (p *parser) keep(track uint64) bool {
	if p.keepArgs == nil {
		return false
	}
	var tr *Track
	if i, ok := p.tracks[track]; ok {
		tr = &p.t.Tracks[i]
	}
	return p.keepArgs(tr)
}

// writeEvent writes the event encoded in p.enc to the events spool: the
// packet's index, the clock's index in p.keys, the timestamp in that
// clock, the encoding's length and the encoding.
func (p *parser) writeEvent(idx int, key clockKey, ts int64) {
	k, ok := p.keyIndex[key]
	if !ok {
		k = uint64(len(p.keys))
		p.keys = append(p.keys, key)
		p.keyIndex[key] = k
	}
	h := binary.AppendUvarint(p.head[:0], uint64(idx))
	h = binary.AppendUvarint(h, k)
	h = binary.AppendVarint(h, ts)
	h = binary.AppendUvarint(h, uint64(len(p.enc.b)))
	p.events.write(h, p.enc.b)
}

// annotation resolves a debug annotation's interned names and strings, in
// the order the trace processor looks them up, and encodes it when keep.
// An array's elements have no names.
func (p *parser) annotation(idx int, st *seqState, a *pb.DebugAnnotation, named, keep bool) {
	e := &p.enc
	if named {
		var name string
		switch n := a.GetNameField().(type) {
		case *pb.DebugAnnotation_NameIid:
			name = p.lookup(idx, st.annNames, "annotation name", n.NameIid)
		case *pb.DebugAnnotation_Name:
			name = n.Name
		}
		if keep {
			e.str(name)
		}
	}
	if !keep {
		switch v := a.GetValue().(type) {
		case *pb.DebugAnnotation_StringValueIid:
			p.lookup(idx, st.strs, "string value", v.StringValueIid)
		case nil:
			for _, d := range a.GetDictEntries() {
				p.annotation(idx, st, d, true, false)
			}
			if len(a.GetDictEntries()) == 0 {
				for _, el := range a.GetArrayValues() {
					p.annotation(idx, st, el, false, false)
				}
			}
		}
		return
	}
	switch v := a.GetValue().(type) {
	case *pb.DebugAnnotation_BoolValue:
		e.b = append(e.b, tagBool, 0)
		if v.BoolValue {
			e.b[len(e.b)-1] = 1
		}
	case *pb.DebugAnnotation_UintValue:
		e.b = append(e.b, tagUint)
		e.uvarint(v.UintValue)
	case *pb.DebugAnnotation_IntValue:
		e.b = append(e.b, tagInt)
		e.varint(v.IntValue)
	case *pb.DebugAnnotation_DoubleValue:
		e.b = append(e.b, tagDouble)
		e.double(v.DoubleValue)
	case *pb.DebugAnnotation_StringValue:
		e.b = append(e.b, tagString)
		e.str(v.StringValue)
	case *pb.DebugAnnotation_StringValueIid:
		s := p.lookup(idx, st.strs, "string value", v.StringValueIid)
		e.b = append(e.b, tagString)
		e.str(s)
	case *pb.DebugAnnotation_PointerValue:
		e.b = append(e.b, tagUint)
		e.uvarint(v.PointerValue)
	case *pb.DebugAnnotation_LegacyJsonValue:
		e.b = append(e.b, tagString)
		e.str(v.LegacyJsonValue)
	case nil:
		switch {
		case len(a.GetDictEntries()) > 0:
			e.b = append(e.b, tagDict)
			e.uvarint(uint64(len(a.GetDictEntries())))
			for _, d := range a.GetDictEntries() {
				p.annotation(idx, st, d, true, true)
			}
		case len(a.GetArrayValues()) > 0:
			e.b = append(e.b, tagArray)
			e.uvarint(uint64(len(a.GetArrayValues())))
			for _, el := range a.GetArrayValues() {
				p.annotation(idx, st, el, false, true)
			}
		default:
			e.b = append(e.b, tagNil)
		}
	default:
		e.b = append(e.b, tagNil)
	}
}

func (p *parser) checkHierarchy() {
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
