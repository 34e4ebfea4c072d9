package check

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	pb "github.com/phasetrace/phasetrace/proto"
)

// Trace is what the trace processor would build from a trace file.
type Trace struct {
	// PrimaryClock is the trace's clock (a BuiltinClock id); 0 when no
	// ClockSnapshot named one.
	PrimaryClock uint32
	// Wall lists the REALTIME snapshots, as (trace time, wall time) pairs.
	Wall []WallClock
	// Tracks in the order their descriptors appear.
	Tracks []Track
	// Slices (and instants) sorted by start, ties in file order — the order
	// the trace processor inserts them.
	Slices   []Slice
	Flows    []Flow
	Counters []Counter
	// Problems the trace processor would count or log, in the order found.
	Problems []Problem
	// Packets is the number of TracePackets read (compressed bundles count
	// their contents).
	Packets int
}

// WallClock relates the trace clock to CLOCK_REALTIME.
type WallClock struct{ TS, Wall int64 }

// Track is a TrackDescriptor.
type Track struct {
	UUID, Parent uint64
	Kind         string // "process", "thread", "counter" or "track"
	Name         string // track name, process name or thread name
	Description  string
	Pid          int32
	Tid          int64
	Labels       []string
	SortIndex    int32
	ChildOrder   int32
	Rank         int32
	Merge        int32
	MergeKey     string
	Unit         int32
	UnitName     string

	// YAxisShareKey is a counter track's y_axis_share_key.
	YAxisShareKey string
}

// Slice is a slice or an instant on a track.
type Slice struct {
	Track    uint64
	Name     string
	Category string
	TS       int64
	Dur      int64 // -1 when the slice never ended
	Depth    int
	Parent   int // index in Trace.Slices, -1 at the top of its track
	Instant  bool
	Args     []Arg
}

// Arg is a debug annotation. Value is an int64, uint64, bool, float64,
// string, []Arg (a dictionary) or []any (an array).
type Arg struct {
	Name  string
	Value any
}

// Flow is an arrow between two slices (indices in Trace.Slices).
type Flow struct {
	ID       uint64
	From, To int
}

// Counter is one counter value.
type Counter struct {
	Track uint64
	TS    int64
	Value float64 // integer values converted; Int holds them exactly
	Int   int64
	Float bool // the value was written as a double
}

// Problem is something the trace processor would count in its stats or
// import logs. Name is the trace processor's stat name where it has one.
type Problem struct {
	Name   string
	Packet int // index of the packet (0-based), -1 when not tied to one
	Detail string
}

func (p Problem) String() string {
	if p.Packet < 0 {
		return p.Name + ": " + p.Detail
	}
	return fmt.Sprintf("%s: %s (packet %d)", p.Name, p.Detail, p.Packet)
}

// ErrProblems is wrapped by Trace.Err when the trace has problems.
var ErrProblems = errors.New("trace has problems")

// Err returns nil when the trace has no problems, or an error listing them.
func (t *Trace) Err() error {
	if len(t.Problems) == 0 {
		return nil
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "%v: %d", ErrProblems, len(t.Problems))
	for i, p := range t.Problems {
		if i == 10 {
			fmt.Fprintf(&b, "\n\t...")
			break
		}
		fmt.Fprintf(&b, "\n\t%s", p)
	}
	return fmt.Errorf("%w", errors.New(b.String()))
}

// Track returns the track with the given uuid.
func (t *Trace) Track(uuid uint64) (Track, bool) {
	for _, tr := range t.Tracks {
		if tr.UUID == uuid {
			return tr, true
		}
	}
	return Track{}, false
}

// FormatError is a trace whose framing cannot be read.
type FormatError struct {
	Offset int64 // byte offset in the file
	Err    error
}

func (e *FormatError) Error() string {
	return "check: byte " + strconv.FormatInt(e.Offset, 10) + ": " + e.Err.Error()
}

func (e *FormatError) Unwrap() error { return e.Err }

// ErrFormat is wrapped by FormatError.
var ErrFormat = errors.New("malformed trace")

// maxPacket bounds a packet's size (the trace processor's own limit is far
// smaller in practice).
const maxPacket = 256 << 20

// Read reads a trace and rebuilds it as the trace processor would: it
// resolves interned data per sequence (honouring incremental-state clears),
// converts timestamps through the clock snapshots (incremental and
// sequence-scoped clocks included) to the trace clock, sorts events by
// timestamp keeping file order for ties, replays each track's slices as a
// stack, connects flows and collects counters. What the trace processor
// would complain about is reported in Trace.Problems; Read returns an error
// only when the bytes are not a trace.
func Read(r io.Reader) (*Trace, error) {
	p := newParser()
	if err := p.readPackets(bufio.NewReader(r), 0, false); err != nil {
		return nil, err
	}
	return p.finish(), nil
}

// ReadBytes is Read on a byte slice.
func ReadBytes(b []byte) (*Trace, error) { return Read(bytes.NewReader(b)) }

type countingReader struct {
	r *bufio.Reader
	n int64
}

func (c *countingReader) ReadByte() (byte, error) {
	b, err := c.r.ReadByte()
	if err == nil {
		c.n++
	}
	return b, err
}

func (p *parser) readPackets(br *bufio.Reader, base int64, nested bool) error {
	cr := &countingReader{r: br}
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
			continue // not a packet: the trace processor skips unknown fields
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

type event struct {
	packet  int
	key     clockKey
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

type parser struct {
	t       Trace
	n       int // packets seen
	seqs    map[uint32]*seqState
	domains map[clockKey]*clockDomain
	snaps   []snapshot
	series  map[string]map[clockKey]int64 // last values per snapshot series
	nonMono map[clockKey]bool
	primary uint32
	tracks  map[uint64]int // uuid → index in t.Tracks
	events  []event
	hasPrim bool
	paths   map[pathKey]pathResult // conversions found, by clock pair
}

func newParser() *parser {
	return &parser{
		seqs:    map[uint32]*seqState{},
		domains: map[clockKey]*clockDomain{},
		series:  map[string]map[clockKey]int64{},
		nonMono: map[clockKey]bool{},
		tracks:  map[uint64]int{},
	}
}

func (p *parser) problem(name string, packet int, format string, args ...any) {
	p.t.Problems = append(p.t.Problems, Problem{Name: name, Packet: packet, Detail: fmt.Sprintf(format, args...)})
}

func (p *parser) packet(pkt *pb.TracePacket) {
	idx := p.n
	p.n++
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
