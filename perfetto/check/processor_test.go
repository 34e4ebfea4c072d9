package check_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"

	"github.com/phasetrace/phasetrace/perfetto/check/processor"
	pb "github.com/phasetrace/phasetrace/proto"
)

// TestTraceProcessorProblems loads the hand-built bad traces of
// TestProblems, and one more for each other problem check names, into
// Perfetto's trace processor (v58.2), and pins down what it reports and
// where it and check see the trace differently. Each difference is known
// and explained beside its case, with the side that is right; a change on
// either side shows up here.
func TestTraceProcessorProblems(t *testing.T) {
	t.Parallel()
	sh, ok := processor.FromEnv()
	if !ok {
		t.Skip("set " + processor.EnvVar + " to a trace_processor_shell to compare check with Perfetto's trace processor")
	}
	cases := []struct {
		name string
		pkts []*pb.TracePacket
		// stats the trace processor reports, in its order, but for its
		// bookkeeping (durations, cache misses).
		stats []string
		// differ lists the Mismatch.What of processor.Compare.
		differ []string
	}{
		// The cases of TestProblems.
		{"clean", []*pb.TracePacket{goodClocks, thread(7), ev(2, 10, begin, 7, "a"), ev(2, 20, end, 7, "")}, nil, nil},
		{"no BOOTTIME bridge", []*pb.TracePacket{
			clocks(pb.BuiltinClock_BUILTIN_CLOCK_MONOTONIC, clock(3, 0), clock(1, 5)), thread(7), ev(2, 10, instant, 7, "a"),
		}, []string{"clock_sync_unrelatable_clock_domains"}, nil},
		// The trace processor makes a track for an undescribed uuid and
		// keeps the event, without a stat; check drops it. The trace
		// processor is right by definition: check should keep the event
		// on a track of its own (and may keep its own warning).
		{"event on an undescribed track", []*pb.TracePacket{goodClocks, ev(2, 10, instant, 9, "a")},
			nil, []string{"slices", "max depth", "sum of slice ts"}},
		// An end with nothing open is dropped silently
		// (SliceTracker::End); misplaced_end_event counts something else,
		// a slice cut short by a partial overlap (MaybeCloseStack). Check
		// misnames it.
		{"end without begin", []*pb.TracePacket{goodClocks, thread(7), ev(2, 10, end, 7, "")},
			nil, []string{"stat misplaced_end_event"}},
		{"begin never ended", []*pb.TracePacket{goodClocks, thread(7), ev(2, 10, begin, 7, "open")}, nil, nil},
		// A lookup of an undefined iid is interned_data_tokenizer_errors
		// in the trace processor (IncrementalState::GetInternedMessageView);
		// check calls it interned_data_unknown_iid.
		{"interned data before any clear", []*pb.TracePacket{goodClocks, thread(7), internedEvent(2, 0, 1, "x", 10)},
			[]string{"interned_data_tokenizer_errors", "interned_data_skipped_incremental_state_invalid"},
			[]string{"stat interned_data_tokenizer_errors"}},
		{"needs incremental state before any clear", []*pb.TracePacket{goodClocks, thread(7), internedEvent(2, needs, 1, "x", 10)},
			[]string{"packet_skipped_seq_needs_incremental_state_invalid", "interned_data_skipped_incremental_state_invalid"}, nil},
		{"interned id used after a clear dropped it", []*pb.TracePacket{
			goodClocks, thread(7), internedEvent(2, cleared, 1, "x", 10),
			{OptionalTrustedPacketSequenceId: seqID(2), SequenceFlags: proto.Uint32(cleared)},
			{OptionalTrustedPacketSequenceId: seqID(2), Timestamp: proto.Uint64(20), TimestampClockId: proto.Uint32(3),
				Data: &pb.TracePacket_TrackEvent{TrackEvent: &pb.TrackEvent{Type: instant.Enum(), TrackUuid: proto.Uint64(7), NameField: &pb.TrackEvent_NameIid{NameIid: 1}}}},
		}, []string{"interned_data_tokenizer_errors"}, []string{"stat interned_data_tokenizer_errors"}},
		// Every packet dropped for its clock also counts
		// clock_sync_failure_undeferrable_packet_loss
		// (ProtoTraceReader::ResolveTimestampToTraceTime); check does not
		// report it.
		{"sequence clock without a snapshot", []*pb.TracePacket{goodClocks, thread(7),
			{OptionalTrustedPacketSequenceId: seqID(2), Timestamp: proto.Uint64(5), TimestampClockId: proto.Uint32(64),
				Data: &pb.TracePacket_TrackEvent{TrackEvent: &pb.TrackEvent{Type: instant.Enum(), TrackUuid: proto.Uint64(7)}}},
		}, []string{"clock_sync_failure_unknown_source_clock", "clock_sync_failure_undeferrable_packet_loss"},
			[]string{"stat clock_sync_failure_undeferrable_packet_loss"}},
		// Terminating flow ids that are not open are skipped silently
		// (MaybeParseTrackEventFlows); flow_end_without_start counts only
		// legacy flow events. Check misnames it.
		{"flow terminated without a start", []*pb.TracePacket{goodClocks, thread(7), withFlows(ev(2, 10, instant, 7, "a"), nil, []uint64{5})},
			nil, []string{"stat flow_end_without_start"}},
		{"flow reaching nothing", []*pb.TracePacket{goodClocks, thread(7), withFlows(ev(2, 10, instant, 7, "a"), []uint64{5}, nil)}, nil, nil},
		{"flow never terminated", []*pb.TracePacket{goodClocks, thread(7),
			withFlows(ev(2, 10, instant, 7, "a"), []uint64{5}, nil), withFlows(ev(2, 20, instant, 7, "b"), []uint64{5}, nil)}, nil, nil},
		// The trace processor checks a track's ancestry when an event
		// needs the track: an undescribed parent is
		// track_hierarchy_missing_uuid (info) and track_event_parser_errors
		// (info), and the track's events are dropped. Check names it
		// track_descriptor_unknown_parent, does not count the parser error,
		// and keeps the events (see the case with an event below).
		{"unknown parent track", []*pb.TracePacket{goodClocks, {
			OptionalTrustedPacketSequenceId: seqID(1),
			Data: &pb.TracePacket_TrackDescriptor{TrackDescriptor: &pb.TrackDescriptor{
				Uuid: proto.Uint64(3), ParentUuid: proto.Uint64(4), StaticOrDynamicName: &pb.TrackDescriptor_Name{Name: "orphan"}}},
		}}, []string{"track_event_parser_errors", "track_hierarchy_missing_uuid"}, []string{"stat track_event_parser_errors"}},
		// This counter event has no value, and the trace processor tests
		// the value first (TrackEventTokenizer::TokenizeTrackEventPacket):
		// track_event_counter_missing_value. Check tests the track first.
		{"counter value on a slice track", []*pb.TracePacket{goodClocks, thread(7), ev(2, 10, counter, 7, "")},
			[]string{"track_event_counter_missing_value"},
			[]string{"stat track_event_counter_invalid_track_uuid", "stat track_event_counter_missing_value"}},
		{"trace clock going backwards", []*pb.TracePacket{goodClocks, clocks(pb.BuiltinClock_BUILTIN_CLOCK_MONOTONIC, clock(6, 0), clock(3, 0)),
			clocks(pb.BuiltinClock_BUILTIN_CLOCK_MONOTONIC, clock(6, 10), clock(3, 5)),
			clocks(pb.BuiltinClock_BUILTIN_CLOCK_MONOTONIC, clock(6, 20), clock(3, 1))},
			[]string{"invalid_clock_snapshots"}, nil},
		{"global clock declared incremental", []*pb.TracePacket{goodClocks, thread(7),
			clocks(pb.BuiltinClock_BUILTIN_CLOCK_MONOTONIC, clock(3, 0), &pb.ClockSnapshot_Clock{ClockId: proto.Uint32(5), Timestamp: proto.Uint64(7), IsIncremental: proto.Bool(true)}),
			ev(2, 10, instant, 7, "a")},
			[]string{"invalid_clock_snapshots"}, nil},
		{"clock redeclared with another unit", []*pb.TracePacket{goodClocks, thread(7),
			clocks(pb.BuiltinClock_BUILTIN_CLOCK_MONOTONIC, clock(3, 0), clock(5, 7)),
			clocks(pb.BuiltinClock_BUILTIN_CLOCK_MONOTONIC, clock(3, 10), &pb.ClockSnapshot_Clock{ClockId: proto.Uint32(5), Timestamp: proto.Uint64(17), UnitMultiplierNs: proto.Uint64(1000)}),
			ev(2, 10, instant, 7, "a")},
			[]string{"invalid_clock_snapshots"}, nil},
		// A timestamp before the trace clock's zero is
		// track_event_invalid_timestamp (an error) and the event is dropped;
		// check names it track_event_negative_timestamp and keeps it.
		{"timestamp before zero", []*pb.TracePacket{clocks(pb.BuiltinClock_BUILTIN_CLOCK_MONOTONIC, clock(6, 0), clock(3, 100), clock(1, 500)),
			thread(7), {OptionalTrustedPacketSequenceId: seqID(2), Timestamp: proto.Uint64(10), TimestampClockId: proto.Uint32(1),
				Data: &pb.TracePacket_TrackEvent{TrackEvent: &pb.TrackEvent{Type: instant.Enum(), TrackUuid: proto.Uint64(7)}}}},
			[]string{"track_event_invalid_timestamp"},
			[]string{"slices", "max depth", "sum of slice ts", "stat track_event_invalid_timestamp"}},
		// seqID(0) sets trusted_packet_sequence_id to 0, which the trace
		// processor takes as sequence 0: it tests whether the field is
		// present (has_trusted_packet_sequence_id), not its value, and
		// keeps the event. Check tests the value. (The case without the
		// field is below.)
		{"missing sequence id", []*pb.TracePacket{goodClocks, thread(7), ev(0, 10, instant, 7, "a")},
			nil, []string{"slices", "max depth", "sum of slice ts", "stat track_event_missing_sequence_id"}},

		// One case for each other problem check names.
		{"sequence id absent", []*pb.TracePacket{goodClocks, thread(7), {Timestamp: proto.Uint64(10), TimestampClockId: proto.Uint32(3),
			Data: &pb.TracePacket_TrackEvent{TrackEvent: &pb.TrackEvent{Type: instant.Enum(), TrackUuid: proto.Uint64(7), NameField: &pb.TrackEvent_Name{Name: "a"}}}}},
			[]string{"track_event_missing_sequence_id"}, nil},
		{"no path between clocks", []*pb.TracePacket{goodClocks, clocks(pb.BuiltinClock_BUILTIN_CLOCK_MONOTONIC, clock(1, 0), clock(5, 0)), thread(7),
			{OptionalTrustedPacketSequenceId: seqID(2), Timestamp: proto.Uint64(10), TimestampClockId: proto.Uint32(5),
				Data: &pb.TracePacket_TrackEvent{TrackEvent: &pb.TrackEvent{Type: instant.Enum(), TrackUuid: proto.Uint64(7)}}}},
			[]string{"clock_sync_failure_no_path", "clock_sync_failure_undeferrable_packet_loss"},
			[]string{"stat clock_sync_failure_undeferrable_packet_loss"}},
		// A global clock in no snapshot at all is an unknown source clock
		// to the trace processor; check calls it no path.
		{"global clock without a snapshot", []*pb.TracePacket{goodClocks, thread(7),
			{OptionalTrustedPacketSequenceId: seqID(2), Timestamp: proto.Uint64(10), TimestampClockId: proto.Uint32(5),
				Data: &pb.TracePacket_TrackEvent{TrackEvent: &pb.TrackEvent{Type: instant.Enum(), TrackUuid: proto.Uint64(7)}}}},
			[]string{"clock_sync_failure_unknown_source_clock", "clock_sync_failure_undeferrable_packet_loss"},
			[]string{"stat clock_sync_failure_no_path", "stat clock_sync_failure_undeferrable_packet_loss", "stat clock_sync_failure_unknown_source_clock"}},
		// A later primary_trace_clock moves the trace clock if no
		// timestamp was converted yet, and is ignored (with a log line, no
		// stat) after (ClockTracker::SetGlobalClock).
		// clock_sync_mixed_clock_sources is about traces of several files.
		// Check misnames it.
		{"primary clock changed", []*pb.TracePacket{goodClocks, clocks(pb.BuiltinClock_BUILTIN_CLOCK_BOOTTIME, clock(6, 10), clock(3, 10)), thread(7), ev(2, 10, instant, 7, "a")},
			nil, []string{"stat clock_sync_mixed_clock_sources"}},
		// Flow id 0 is an ordinary id for TrackEvent flows; flow_invalid_id
		// counts only legacy flow events (ParseFlowEventV1). Check
		// misnames it and drops the flow, so it also finds the end without
		// a start.
		{"flow id 0", []*pb.TracePacket{goodClocks, thread(7),
			withFlows(ev(2, 10, instant, 7, "a"), []uint64{0}, nil), withFlows(ev(2, 20, instant, 7, "b"), nil, []uint64{0})},
			nil, []string{"flows", "sum of flow ends", "stat flow_end_without_start", "stat flow_invalid_id"}},
		{"clear without a sequence id", []*pb.TracePacket{goodClocks, thread(7), {SequenceFlags: proto.Uint32(cleared)}, ev(2, 10, instant, 7, "a")},
			[]string{"incremental_state_cleared_missing_sequence_id"}, nil},
		{"interned data without a sequence id", []*pb.TracePacket{goodClocks, thread(7),
			{InternedData: &pb.InternedData{EventNames: []*pb.EventName{{Iid: proto.Uint64(1), Name: proto.String("x")}}}}, ev(2, 10, instant, 7, "a")},
			[]string{"interned_data_missing_sequence_id"}, nil},
		// Iid 0 is stored like any other (only an entry without an iid
		// counts, InternMessage), although an event's name_iid 0 names
		// nothing; check reports interned_data_tokenizer_errors and
		// interned_data_unknown_iid.
		{"iid 0", []*pb.TracePacket{goodClocks, thread(7), internedEvent(2, cleared, 0, "x", 10)},
			nil, []string{"stat interned_data_tokenizer_errors"}},
		// A redefined iid keeps its first value, silently (a DCHECK in
		// InternMessage); check reports interned_data_tokenizer_errors.
		{"iid redefined", []*pb.TracePacket{goodClocks, thread(7), internedEvent(2, cleared, 1, "x", 10), internedEvent(2, 0, 1, "y", 20)},
			nil, []string{"stat interned_data_tokenizer_errors"}},
		// A second descriptor of a uuid conflicts when its parent, pid,
		// tid, kind or merge behaviour differ
		// (DescriptorTrackReservation::IsForSameTrack), and the stat is
		// track_descriptor_conflicting_reservation; check names it
		// track_descriptor_conflict and also compares names, ranks and the
		// like, which the trace processor lets a later descriptor update.
		{"descriptor conflict", []*pb.TracePacket{goodClocks, thread(7), {OptionalTrustedPacketSequenceId: seqID(1),
			Data: &pb.TracePacket_TrackDescriptor{TrackDescriptor: &pb.TrackDescriptor{Uuid: proto.Uint64(7), StaticOrDynamicName: &pb.TrackDescriptor_Name{Name: "other"}}}},
			ev(2, 10, instant, 7, "a")},
			[]string{"track_descriptor_conflicting_reservation"}, []string{"stat track_descriptor_conflicting_reservation"}},
		{"descriptor without a uuid", []*pb.TracePacket{goodClocks, thread(7), {OptionalTrustedPacketSequenceId: seqID(1),
			Data: &pb.TracePacket_TrackDescriptor{TrackDescriptor: &pb.TrackDescriptor{StaticOrDynamicName: &pb.TrackDescriptor_Name{Name: "nouuid"}}}},
			ev(2, 10, instant, 7, "a")},
			[]string{"track_descriptor_missing_uuid"}, nil},
		{"counter without a value", []*pb.TracePacket{goodClocks, counterTrack(8), ev(2, 10, counter, 8, "")},
			[]string{"track_event_counter_missing_value"}, nil},
		{"counter value on a slice track, with a value", []*pb.TracePacket{goodClocks, thread(7), withValue(ev(2, 10, counter, 7, ""), 3)},
			[]string{"track_event_counter_invalid_track_uuid"}, nil},
		// A counter value on an undescribed track is
		// track_event_counter_invalid_track_uuid to the trace processor;
		// check reports track_event_unknown_track.
		{"counter value on an undescribed track", []*pb.TracePacket{goodClocks, withValue(ev(2, 10, counter, 9, ""), 3)},
			[]string{"track_event_counter_invalid_track_uuid"}, []string{"stat track_event_counter_invalid_track_uuid"}},
		{"no timestamp", []*pb.TracePacket{goodClocks, thread(7), {OptionalTrustedPacketSequenceId: seqID(2),
			Data: &pb.TracePacket_TrackEvent{TrackEvent: &pb.TrackEvent{Type: instant.Enum(), TrackUuid: proto.Uint64(7)}}}},
			[]string{"track_event_missing_timestamp"}, nil},
		// An event with no track and no default track goes on the trace
		// processor's "Default Track", silently; check drops it.
		{"no track", []*pb.TracePacket{goodClocks, thread(7), {OptionalTrustedPacketSequenceId: seqID(2), Timestamp: proto.Uint64(10), TimestampClockId: proto.Uint32(3),
			Data: &pb.TracePacket_TrackEvent{TrackEvent: &pb.TrackEvent{Type: instant.Enum(), NameField: &pb.TrackEvent_Name{Name: "a"}}}}},
			nil, []string{"slices", "max depth", "sum of slice ts"}},
		{"no type", []*pb.TracePacket{goodClocks, thread(7), {OptionalTrustedPacketSequenceId: seqID(2), Timestamp: proto.Uint64(10), TimestampClockId: proto.Uint32(3),
			Data: &pb.TracePacket_TrackEvent{TrackEvent: &pb.TrackEvent{TrackUuid: proto.Uint64(7), NameField: &pb.TrackEvent_Name{Name: "a"}}}}},
			[]string{"track_event_parser_errors"}, nil},
		// Slices and instants on a counter track are kept, silently;
		// check drops them (and so also reports their end as
		// misplaced).
		{"slice on a counter track", []*pb.TracePacket{goodClocks, counterTrack(8), ev(2, 10, begin, 8, "a"), ev(2, 20, end, 8, "")},
			nil, []string{"slices", "max depth", "sum of slice ts", "sum of slice dur", "stat misplaced_end_event"}},
		{"instant on a counter track", []*pb.TracePacket{goodClocks, counterTrack(8), ev(2, 10, instant, 8, "a")},
			nil, []string{"slices", "max depth", "sum of slice ts"}},
		// A loop is reported each time a track in it is resolved, with a
		// parser error, and the events on it are dropped; check reports
		// each track of the loop once and keeps the events.
		{"hierarchy loop", []*pb.TracePacket{goodClocks, named(3, 4), named(4, 3), ev(2, 10, instant, 3, "a")},
			[]string{"track_event_parser_errors", "track_event_track_hierarchy_loop"},
			[]string{"slices", "max depth", "sum of slice ts", "stat track_event_parser_errors"}},
		{"event under an unknown parent", []*pb.TracePacket{goodClocks, named(3, 4), ev(2, 10, instant, 3, "a")},
			[]string{"track_event_parser_errors", "track_hierarchy_missing_uuid"},
			[]string{"slices", "max depth", "sum of slice ts", "stat track_event_parser_errors"}},

		// Not a problem to either: an instant stays on its track's
		// stack until the next event, and an instant at the same time
		// lands inside it (SliceTracker::MaybeCloseStack: "instants stack
		// on top of each other"), one level deeper. Check reads it the
		// same way.
		{"two instants at one time", []*pb.TracePacket{goodClocks, thread(7), ev(2, 10, instant, 7, "a"), ev(2, 10, instant, 7, "b")},
			nil, nil},
	}
	// A sequence-scoped clock in a snapshot without a sequence is not a
	// stat: the trace processor refuses the whole trace
	// (ProtoTraceReader::ParseClockSnapshot). Check reports
	// invalid_clock_snapshots, as if the rest of the trace could be shown.
	t.Run("sequence clock in a snapshot without a sequence", func(t *testing.T) {
		t.Parallel()
		b := encode(t, goodClocks, thread(7),
			&pb.TracePacket{Data: &pb.TracePacket_ClockSnapshot{ClockSnapshot: &pb.ClockSnapshot{Clocks: []*pb.ClockSnapshot_Clock{clock(64, 5), clock(3, 5)}}}},
			ev(2, 10, instant, 7, "a"))
		tr, err := readAgreed(t, b)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"invalid_clock_snapshots"}, problemNames(tr)); diff != "" {
			t.Errorf("check's problems (-want +got):\n%s", diff)
		}
		if _, err := sh.Load(b); !errors.Is(err, processor.ErrRun) || !strings.Contains(err.Error(), "sequence-scoped clock") {
			t.Errorf("the trace processor loaded the trace (error %v), want it refused", err)
		}
	})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b := encode(t, c.pkts...)
			tr, err := readAgreed(t, b)
			if err != nil {
				t.Fatal(err)
			}
			r, err := sh.Load(b)
			if err != nil {
				t.Fatal(err)
			}
			var stats []string
			for _, s := range r.Stats {
				if s.Name != "clock_sync_cache_miss" && !strings.HasSuffix(s.Name, "_duration_ns") {
					stats = append(stats, s.Name)
				}
			}
			stats = slices.Compact(stats)
			if diff := cmp.Diff(c.stats, stats); diff != "" {
				t.Errorf("trace processor stats (-want +got):\n%s\n%v", diff, r.Stats)
			}
			var differ []string
			for _, m := range processor.Compare(tr, r) {
				differ = append(differ, m.What)
			}
			if diff := cmp.Diff(c.differ, differ); diff != "" {
				t.Errorf("differences between check and the trace processor (-want +got):\n%s\ncheck's problems: %v\ntrace processor: %+v", diff, tr.Problems, r)
			}
		})
	}
}

func withFlows(p *pb.TracePacket, flows, term []uint64) *pb.TracePacket {
	te := p.GetTrackEvent()
	te.FlowIds, te.TerminatingFlowIds = flows, term
	return p
}

func withValue(p *pb.TracePacket, v int64) *pb.TracePacket {
	p.GetTrackEvent().CounterValueField = &pb.TrackEvent_CounterValue{CounterValue: v}
	return p
}

// internedEvent is an instant named by iid on track 7, defining the name
// in the same packet.
func internedEvent(seq uint32, flags uint32, iid uint64, name string, ts uint64) *pb.TracePacket {
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

func counterTrack(uuid uint64) *pb.TracePacket {
	return &pb.TracePacket{
		OptionalTrustedPacketSequenceId: seqID(1),
		Data: &pb.TracePacket_TrackDescriptor{TrackDescriptor: &pb.TrackDescriptor{
			Uuid: proto.Uint64(uuid), StaticOrDynamicName: &pb.TrackDescriptor_Name{Name: "c"}, Counter: &pb.CounterDescriptor{},
		}},
	}
}

// named is a custom track named "t" under parent.
func named(uuid, parent uint64) *pb.TracePacket {
	return &pb.TracePacket{
		OptionalTrustedPacketSequenceId: seqID(1),
		Data: &pb.TracePacket_TrackDescriptor{TrackDescriptor: &pb.TrackDescriptor{
			Uuid: proto.Uint64(uuid), ParentUuid: proto.Uint64(parent), StaticOrDynamicName: &pb.TrackDescriptor_Name{Name: "t"},
		}},
	}
}
