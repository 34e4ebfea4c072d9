package check_test

import (
	"bytes"
	"compress/zlib"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"

	"github.com/phasetrace/phasetrace/perfetto/check"
	pb "github.com/phasetrace/phasetrace/proto"
)

// Hand-built traces, each with one mistake the trace processor notices.

func encode(t *testing.T, pkts ...*pb.TracePacket) []byte {
	t.Helper()
	b, err := proto.Marshal(&pb.Trace{Packet: pkts})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

const (
	cleared = uint32(pb.TracePacket_SEQ_INCREMENTAL_STATE_CLEARED)
	needs   = uint32(pb.TracePacket_SEQ_NEEDS_INCREMENTAL_STATE)
)

func clocks(primary pb.BuiltinClock, cs ...*pb.ClockSnapshot_Clock) *pb.TracePacket {
	return &pb.TracePacket{
		OptionalTrustedPacketSequenceId: seqID(1),
		Data:                            &pb.TracePacket_ClockSnapshot{ClockSnapshot: &pb.ClockSnapshot{Clocks: cs, PrimaryTraceClock: primary.Enum()}},
	}
}

func clock(id uint32, ts uint64) *pb.ClockSnapshot_Clock {
	return &pb.ClockSnapshot_Clock{ClockId: proto.Uint32(id), Timestamp: proto.Uint64(ts)}
}

var goodClocks = clocks(pb.BuiltinClock_BUILTIN_CLOCK_MONOTONIC, clock(6, 0), clock(3, 0))

func thread(uuid uint64) *pb.TracePacket {
	return &pb.TracePacket{
		OptionalTrustedPacketSequenceId: seqID(1),
		Data: &pb.TracePacket_TrackDescriptor{TrackDescriptor: &pb.TrackDescriptor{
			Uuid:   proto.Uint64(uuid),
			Thread: &pb.ThreadDescriptor{Pid: proto.Int32(1), Tid: proto.Int64(int64(uuid))},
		}},
	}
}

func ev(seq uint32, ts uint64, typ pb.TrackEvent_Type, track uint64, name string) *pb.TracePacket {
	te := &pb.TrackEvent{Type: typ.Enum(), TrackUuid: proto.Uint64(track)}
	if name != "" {
		te.NameField = &pb.TrackEvent_Name{Name: name}
	}
	return &pb.TracePacket{
		OptionalTrustedPacketSequenceId: seqID(seq),
		Timestamp:                       proto.Uint64(ts),
		TimestampClockId:                proto.Uint32(3),
		Data:                            &pb.TracePacket_TrackEvent{TrackEvent: te},
	}
}

const (
	begin   = pb.TrackEvent_TYPE_SLICE_BEGIN
	end     = pb.TrackEvent_TYPE_SLICE_END
	instant = pb.TrackEvent_TYPE_INSTANT
	counter = pb.TrackEvent_TYPE_COUNTER
)

func problemNames(tr *check.Trace) []string {
	var names []string
	for _, p := range tr.Problems {
		names = append(names, p.Name)
	}
	return names
}

func TestProblems(t *testing.T) {
	t.Parallel()
	withFlow := func(p *pb.TracePacket, flows, term []uint64) *pb.TracePacket {
		te := p.GetTrackEvent()
		te.FlowIds, te.TerminatingFlowIds = flows, term
		return p
	}
	internedName := func(seq uint32, flags uint32, iid uint64, name string, ts uint64) *pb.TracePacket {
		return &pb.TracePacket{
			OptionalTrustedPacketSequenceId: seqID(seq),
			SequenceFlags:                   proto.Uint32(flags),
			Timestamp:                       proto.Uint64(ts),
			TimestampClockId:                proto.Uint32(3),
			InternedData:                    &pb.InternedData{EventNames: []*pb.EventName{{Iid: proto.Uint64(iid), Name: proto.String(name)}}},
			Data: &pb.TracePacket_TrackEvent{TrackEvent: &pb.TrackEvent{
				Type: instant.Enum(), TrackUuid: proto.Uint64(7), NameField: &pb.TrackEvent_NameIid{NameIid: iid},
			}},
		}
	}
	cases := []struct {
		name string
		pkts []*pb.TracePacket
		want []string
	}{
		{"clean", []*pb.TracePacket{goodClocks, thread(7), ev(2, 10, begin, 7, "a"), ev(2, 20, end, 7, "")}, nil},
		{"no BOOTTIME bridge", []*pb.TracePacket{
			clocks(pb.BuiltinClock_BUILTIN_CLOCK_MONOTONIC, clock(3, 0), clock(1, 5)), thread(7), ev(2, 10, instant, 7, "a"),
		}, []string{"clock_sync_unrelatable_clock_domains"}},
		{"event on an undescribed track", []*pb.TracePacket{goodClocks, ev(2, 10, instant, 9, "a")},
			[]string{"track_event_unknown_track"}},
		{"end without begin", []*pb.TracePacket{goodClocks, thread(7), ev(2, 10, end, 7, "")},
			[]string{"misplaced_end_event"}},
		{"begin never ended", []*pb.TracePacket{goodClocks, thread(7), ev(2, 10, begin, 7, "open")},
			[]string{"slice_not_ended"}},
		{"interned data before any clear", []*pb.TracePacket{goodClocks, thread(7), internedName(2, 0, 1, "x", 10)},
			[]string{"interned_data_skipped_incremental_state_invalid", "interned_data_unknown_iid"}},
		{"needs incremental state before any clear", []*pb.TracePacket{goodClocks, thread(7), internedName(2, needs, 1, "x", 10)},
			[]string{"interned_data_skipped_incremental_state_invalid", "packet_skipped_seq_needs_incremental_state_invalid"}},
		{"interned id used after a clear dropped it", []*pb.TracePacket{
			goodClocks, thread(7), internedName(2, cleared, 1, "x", 10),
			{OptionalTrustedPacketSequenceId: seqID(2), SequenceFlags: proto.Uint32(cleared)},
			{OptionalTrustedPacketSequenceId: seqID(2), Timestamp: proto.Uint64(20), TimestampClockId: proto.Uint32(3),
				Data: &pb.TracePacket_TrackEvent{TrackEvent: &pb.TrackEvent{Type: instant.Enum(), TrackUuid: proto.Uint64(7), NameField: &pb.TrackEvent_NameIid{NameIid: 1}}}},
		}, []string{"interned_data_unknown_iid"}},
		{"sequence clock without a snapshot", []*pb.TracePacket{goodClocks, thread(7),
			{OptionalTrustedPacketSequenceId: seqID(2), Timestamp: proto.Uint64(5), TimestampClockId: proto.Uint32(64),
				Data: &pb.TracePacket_TrackEvent{TrackEvent: &pb.TrackEvent{Type: instant.Enum(), TrackUuid: proto.Uint64(7)}}},
		}, []string{"clock_sync_failure_unknown_source_clock"}},
		{"flow terminated without a start", []*pb.TracePacket{goodClocks, thread(7), withFlow(ev(2, 10, instant, 7, "a"), nil, []uint64{5})},
			[]string{"flow_end_without_start"}},
		{"flow reaching nothing", []*pb.TracePacket{goodClocks, thread(7), withFlow(ev(2, 10, instant, 7, "a"), []uint64{5}, nil)},
			[]string{"flow_without_destination"}},
		{"flow never terminated", []*pb.TracePacket{goodClocks, thread(7),
			withFlow(ev(2, 10, instant, 7, "a"), []uint64{5}, nil), withFlow(ev(2, 20, instant, 7, "b"), []uint64{5}, nil)},
			[]string{"flow_unterminated"}},
		{"unknown parent track", []*pb.TracePacket{goodClocks, {
			OptionalTrustedPacketSequenceId: seqID(1),
			Data: &pb.TracePacket_TrackDescriptor{TrackDescriptor: &pb.TrackDescriptor{
				Uuid: proto.Uint64(3), ParentUuid: proto.Uint64(4), StaticOrDynamicName: &pb.TrackDescriptor_Name{Name: "orphan"}}},
		}}, []string{"track_descriptor_unknown_parent"}},
		{"counter value on a slice track", []*pb.TracePacket{goodClocks, thread(7), ev(2, 10, counter, 7, "")},
			[]string{"track_event_counter_invalid_track_uuid"}},
		{"trace clock going backwards", []*pb.TracePacket{goodClocks, clocks(pb.BuiltinClock_BUILTIN_CLOCK_MONOTONIC, clock(6, 0), clock(3, 0)),
			clocks(pb.BuiltinClock_BUILTIN_CLOCK_MONOTONIC, clock(6, 10), clock(3, 5)),
			clocks(pb.BuiltinClock_BUILTIN_CLOCK_MONOTONIC, clock(6, 20), clock(3, 1))},
			[]string{"invalid_clock_snapshots"}},
		{"timestamp before zero", []*pb.TracePacket{clocks(pb.BuiltinClock_BUILTIN_CLOCK_MONOTONIC, clock(6, 0), clock(3, 100), clock(1, 500)),
			thread(7), {OptionalTrustedPacketSequenceId: seqID(2), Timestamp: proto.Uint64(10), TimestampClockId: proto.Uint32(1),
				Data: &pb.TracePacket_TrackEvent{TrackEvent: &pb.TrackEvent{Type: instant.Enum(), TrackUuid: proto.Uint64(7)}}}},
			[]string{"track_event_negative_timestamp"}},
		{"missing sequence id", []*pb.TracePacket{goodClocks, thread(7), ev(0, 10, instant, 7, "a")},
			[]string{"track_event_missing_sequence_id"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tr, err := readAgreed(t, encode(t, c.pkts...))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.want, problemNames(tr)); diff != "" {
				t.Errorf("problems (-want +got):\n%s\n%v", diff, tr.Problems)
			}
			if (tr.Err() == nil) != (len(c.want) == 0) {
				t.Errorf("Err() = %v with problems %v", tr.Err(), tr.Problems)
			}
		})
	}
}

func TestTiesKeepFileOrder(t *testing.T) {
	t.Parallel()
	// Same timestamps, two file orders, two different nestings: the
	// checker must follow file order exactly as the trace processor does.
	parentFirst := encode(t, goodClocks, thread(7),
		ev(2, 10, begin, 7, "parent"), ev(2, 10, begin, 7, "child"), ev(2, 20, end, 7, ""), ev(2, 20, end, 7, ""))
	childFirst := encode(t, goodClocks, thread(7),
		ev(2, 10, begin, 7, "child"), ev(2, 10, begin, 7, "parent"), ev(2, 20, end, 7, ""), ev(2, 20, end, 7, ""))
	for _, c := range []struct {
		b     []byte
		outer string
	}{{parentFirst, "parent"}, {childFirst, "child"}} {
		tr, err := readAgreed(t, c.b)
		if err != nil {
			t.Fatal(err)
		}
		if tr.Slices[0].Name != c.outer || tr.Slices[1].Parent != 0 {
			t.Errorf("outer slice %q (child's parent %d), want %q", tr.Slices[0].Name, tr.Slices[1].Parent, c.outer)
		}
	}
}

func TestIncrementalClockAndUnits(t *testing.T) {
	t.Parallel()
	snap := &pb.TracePacket{
		OptionalTrustedPacketSequenceId: seqID(2),
		SequenceFlags:                   proto.Uint32(cleared),
		TracePacketDefaults:             &pb.TracePacketDefaults{TimestampClockId: proto.Uint32(64)},
		Data: &pb.TracePacket_ClockSnapshot{ClockSnapshot: &pb.ClockSnapshot{Clocks: []*pb.ClockSnapshot_Clock{
			{ClockId: proto.Uint32(64), Timestamp: proto.Uint64(100), IsIncremental: proto.Bool(true), UnitMultiplierNs: proto.Uint64(1000)},
			clock(3, 500_000),
		}}},
	}
	delta := func(d uint64, typ pb.TrackEvent_Type) *pb.TracePacket {
		return &pb.TracePacket{OptionalTrustedPacketSequenceId: seqID(2), Timestamp: proto.Uint64(d),
			Data: &pb.TracePacket_TrackEvent{TrackEvent: &pb.TrackEvent{Type: typ.Enum(), TrackUuid: proto.Uint64(7), NameField: &pb.TrackEvent_Name{Name: "s"}}}}
	}
	tr, err := readAgreed(t, encode(t, goodClocks, thread(7), snap, delta(1, begin), delta(2, end)))
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Err(); err != nil {
		t.Fatal(err)
	}
	// clock 64 at 100 µs = MONOTONIC 500 µs; +1 µs, then +2 µs.
	if got := tr.Slices[0]; got.TS != 501_000 || got.Dur != 2_000 {
		t.Errorf("slice at %d +%d, want 501000 +2000", got.TS, got.Dur)
	}
}

func TestCompressedPackets(t *testing.T) {
	t.Parallel()
	inner := encode(t, thread(7), ev(2, 10, instant, 7, "a"))
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	zw.Write(inner)
	zw.Close()
	b := encode(t, goodClocks, &pb.TracePacket{Data: &pb.TracePacket_CompressedPackets{CompressedPackets: z.Bytes()}})
	tr, err := readAgreed(t, b)
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Err(); err != nil || len(tr.Slices) != 1 || tr.Packets != 3 {
		t.Errorf("got %d slices from %d packets, problems %v", len(tr.Slices), tr.Packets, err)
	}
}

func TestMalformed(t *testing.T) {
	t.Parallel()
	good := encode(t, goodClocks, thread(7))
	for _, c := range []struct {
		name string
		b    []byte
		off  int64
	}{
		{"cut short", good[:len(good)-3], int64(len(good) - 3 - 0)},
		{"wrong wire type", []byte{0x08, 0x01}, 0},
		{"not a packet inside", append([]byte{0x0a, 0x02}, 0xff, 0xff), 0},
	} {
		_, err := readAgreed(t, c.b)
		var fe *check.FormatError
		if !errors.As(err, &fe) || !errors.Is(err, check.ErrFormat) {
			t.Errorf("%s: error %v, want a FormatError", c.name, err)
		}
	}
}

func seqID(id uint32) *pb.TracePacket_TrustedPacketSequenceId {
	return &pb.TracePacket_TrustedPacketSequenceId{TrustedPacketSequenceId: id}
}

// depthSpan is where a slice landed: its depth and its parent's name.
type depthSpan struct {
	Name   string
	TS     int64
	Dur    int64
	Depth  int
	Parent string
}

func depthSpans(tr *check.Trace) []depthSpan {
	var out []depthSpan
	for _, s := range tr.Slices {
		d := depthSpan{Name: s.Name, TS: s.TS, Dur: s.Dur, Depth: s.Depth}
		if s.Parent >= 0 {
			d.Parent = tr.Slices[s.Parent].Name
		}
		out = append(out, d)
	}
	return out
}

// Instants at one timestamp nest in one another, and any later event pops
// them, as the trace processor (v58.2) builds them: the expected depths
// and parents are what its slice table held for this trace.
func TestInstantsNestAtOneTimestamp(t *testing.T) {
	t.Parallel()
	tr, err := readAgreed(t, encode(t, goodClocks, thread(7),
		ev(2, 10, instant, 7, "i1"), ev(2, 10, instant, 7, "i2"), ev(2, 10, instant, 7, "i3"),
		ev(2, 20, begin, 7, "p"), ev(2, 20, instant, 7, "i4"), ev(2, 20, instant, 7, "i5"), ev(2, 21, instant, 7, "i6"), ev(2, 30, end, 7, ""),
		ev(2, 40, instant, 7, "i7"), ev(2, 40, begin, 7, "z"), ev(2, 40, end, 7, ""), ev(2, 40, instant, 7, "i8"), ev(2, 40, instant, 7, "i9"),
		ev(2, 50, begin, 7, "q"), ev(2, 60, instant, 7, "i10"), ev(2, 60, end, 7, ""), ev(2, 60, instant, 7, "i11"),
	))
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Err(); err != nil {
		t.Fatal(err)
	}
	want := []depthSpan{
		{Name: "i1", TS: 10},
		{Name: "i2", TS: 10, Depth: 1, Parent: "i1"},
		{Name: "i3", TS: 10, Depth: 2, Parent: "i2"},
		{Name: "p", TS: 20, Dur: 10},
		{Name: "i4", TS: 20, Depth: 1, Parent: "p"},
		{Name: "i5", TS: 20, Depth: 2, Parent: "i4"},
		{Name: "i6", TS: 21, Depth: 1, Parent: "p"},
		{Name: "i7", TS: 40},
		{Name: "z", TS: 40},
		{Name: "i8", TS: 40},
		{Name: "i9", TS: 40, Depth: 1, Parent: "i8"},
		{Name: "q", TS: 50, Dur: 10},
		{Name: "i10", TS: 60, Depth: 1, Parent: "q"},
		{Name: "i11", TS: 60},
	}
	if diff := cmp.Diff(want, depthSpans(tr)); diff != "" {
		t.Errorf("slices (-want +got):\n%s", diff)
	}
}

// A slice at depth MaxDepth or more is dropped, and its end closes the
// slice it would have nested in; the durations below are the trace
// processor's (v58.2) for the same trace.
func TestMaxDepth(t *testing.T) {
	t.Parallel()
	const n = check.MaxDepth + 1
	pkts := []*pb.TracePacket{goodClocks, thread(7)}
	for i := range n {
		pkts = append(pkts, ev(2, uint64(100+i), begin, 7, fmt.Sprint("s", i)))
	}
	for i := n - 1; i >= 0; i-- {
		pkts = append(pkts, ev(2, uint64(10_000-i), end, 7, ""))
	}
	pkts = append(pkts, ev(2, 20_000, instant, 7, "after"))
	tr, err := readAgreed(t, encode(t, pkts...))
	if err != nil {
		t.Fatal(err)
	}
	// The last end finds nothing open: the trace processor ignores it,
	// the checker reports it too.
	if diff := cmp.Diff([]string{"slice_max_depth_exceeded", "misplaced_end_event"}, problemNames(tr)); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	if len(tr.Slices) != check.MaxDepth+1 {
		t.Fatalf("%d slices, want %d", len(tr.Slices), check.MaxDepth+1)
	}
	got := depthSpans(tr)
	want := []depthSpan{
		{Name: "s0", TS: 100, Dur: 9899},
		{Name: "s510", TS: 610, Dur: 8879, Depth: 510, Parent: "s509"},
		{Name: "s511", TS: 611, Dur: 8877, Depth: 511, Parent: "s510"},
		{Name: "after", TS: 20_000},
	}
	if diff := cmp.Diff(want, []depthSpan{got[0], got[510], got[511], got[512]}); diff != "" {
		t.Errorf("slices (-want +got):\n%s", diff)
	}

	// Instants at one timestamp nest, so the limit drops them too.
	pkts = []*pb.TracePacket{goodClocks, thread(7)}
	for range 600 {
		pkts = append(pkts, ev(2, 10, instant, 7, "i"))
	}
	tr, err = readAgreed(t, encode(t, pkts...))
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Slices) != check.MaxDepth || len(tr.Problems) != 600-check.MaxDepth {
		t.Errorf("%d instants kept and %d problems, want %d and %d", len(tr.Slices), len(tr.Problems), check.MaxDepth, 600-check.MaxDepth)
	}
}
