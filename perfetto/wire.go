package perfetto

import (
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// Field numbers of the Perfetto messages the writer encodes by hand. Each
// constant carries its proto declaration; proto/perfetto_trace.proto is the
// schema and the read-back tests decode with the types generated from it.
const (
	fTracePacket = 1 // Trace: repeated TracePacket packet = 1;

	fPacketTimestamp        = 8  // TracePacket: optional uint64 timestamp = 8;
	fPacketTimestampClockID = 58 // TracePacket: optional uint32 timestamp_clock_id = 58;
	fPacketTrackEvent       = 11 // TracePacket: TrackEvent track_event = 11;
	fPacketTrackDescriptor  = 60 // TracePacket: TrackDescriptor track_descriptor = 60;
	fPacketClockSnapshot    = 6  // TracePacket: ClockSnapshot clock_snapshot = 6;
	fPacketCompressed       = 50 // TracePacket: bytes compressed_packets = 50;
	fPacketSequenceID       = 10 // TracePacket: uint32 trusted_packet_sequence_id = 10;
	fPacketInternedData     = 12 // TracePacket: optional InternedData interned_data = 12;
	fPacketSequenceFlags    = 13 // TracePacket: optional uint32 sequence_flags = 13;
	fPacketDefaults         = 59 // TracePacket: optional TracePacketDefaults trace_packet_defaults = 59;
	fPacketFirstOnSequence  = 87 // TracePacket: optional bool first_packet_on_sequence = 87;

	fDefaultsClockID    = 58 // TracePacketDefaults: optional uint32 timestamp_clock_id = 58;
	fDefaultsTrackEvent = 11 // TracePacketDefaults: optional TrackEventDefaults track_event_defaults = 11;
	fTEDefaultsTrack    = 11 // TrackEventDefaults: optional uint64 track_uuid = 11;

	fTrackUUID         = 1  // TrackDescriptor: optional uint64 uuid = 1;
	fTrackParent       = 5  // TrackDescriptor: optional uint64 parent_uuid = 5;
	fTrackName         = 2  // TrackDescriptor: string name = 2;
	fTrackDescription  = 14 // TrackDescriptor: optional string description = 14;
	fTrackProcess      = 3  // TrackDescriptor: optional ProcessDescriptor process = 3;
	fTrackThread       = 4  // TrackDescriptor: optional ThreadDescriptor thread = 4;
	fTrackCounter      = 8  // TrackDescriptor: optional CounterDescriptor counter = 8;
	fTrackChildOrder   = 11 // TrackDescriptor: optional ChildTracksOrdering child_ordering = 11;
	fTrackSiblingRank  = 12 // TrackDescriptor: optional int32 sibling_order_rank = 12;
	fTrackSiblingMerge = 15 // TrackDescriptor: optional SiblingMergeBehavior sibling_merge_behavior = 15;
	fTrackMergeKey     = 16 // TrackDescriptor: string sibling_merge_key = 16;

	fProcessPid       = 1 // ProcessDescriptor: optional int32 pid = 1;
	fProcessName      = 6 // ProcessDescriptor: optional string process_name = 6;
	fProcessSortIndex = 3 // ProcessDescriptor: optional int32 legacy_sort_index = 3;
	fProcessLabels    = 8 // ProcessDescriptor: repeated string process_labels = 8;

	fThreadPid       = 1 // ThreadDescriptor: optional int32 pid = 1;
	fThreadTid       = 2 // ThreadDescriptor: optional int64 tid = 2;
	fThreadName      = 5 // ThreadDescriptor: optional string thread_name = 5;
	fThreadSortIndex = 3 // ThreadDescriptor: optional int32 legacy_sort_index = 3;

	fCounterUnit          = 3 // CounterDescriptor: optional Unit unit = 3;
	fCounterUnitName      = 6 // CounterDescriptor: optional string unit_name = 6;
	fCounterYAxisShareKey = 7 // CounterDescriptor: optional string y_axis_share_key = 7;

	fEventCategoryIIDs  = 3  // TrackEvent: repeated uint64 category_iids = 3;
	fEventNameIID       = 10 // TrackEvent: uint64 name_iid = 10;
	fEventName          = 23 // TrackEvent: string name = 23;
	fEventType          = 9  // TrackEvent: optional Type type = 9;
	fEventTrackUUID     = 11 // TrackEvent: optional uint64 track_uuid = 11;
	fEventCounterValue  = 30 // TrackEvent: int64 counter_value = 30;
	fEventDoubleCounter = 44 // TrackEvent: double double_counter_value = 44;
	fEventFlowIDs       = 47 // TrackEvent: repeated fixed64 flow_ids = 47;
	fEventTermFlowIDs   = 48 // TrackEvent: repeated fixed64 terminating_flow_ids = 48;
	fEventAnnotations   = 4  // TrackEvent: repeated DebugAnnotation debug_annotations = 4;

	fAnnNameIID     = 1  // DebugAnnotation: uint64 name_iid = 1;
	fAnnName        = 10 // DebugAnnotation: string name = 10;
	fAnnBool        = 2  // DebugAnnotation: bool bool_value = 2;
	fAnnUint        = 3  // DebugAnnotation: uint64 uint_value = 3;
	fAnnInt         = 4  // DebugAnnotation: int64 int_value = 4;
	fAnnDouble      = 5  // DebugAnnotation: double double_value = 5;
	fAnnString      = 6  // DebugAnnotation: string string_value = 6;
	fAnnStringIID   = 17 // DebugAnnotation: uint64 string_value_iid = 17;
	fAnnDictEntries = 11 // DebugAnnotation: repeated DebugAnnotation dict_entries = 11;
	fAnnArrayValues = 12 // DebugAnnotation: repeated DebugAnnotation array_values = 12;

	fInternedCategories = 1  // InternedData: repeated EventCategory event_categories = 1;
	fInternedNames      = 2  // InternedData: repeated EventName event_names = 2;
	fInternedAnnNames   = 3  // InternedData: repeated DebugAnnotationName debug_annotation_names = 3;
	fInternedStrings    = 29 // InternedData: repeated InternedString debug_annotation_string_values = 29;
	fInternedIID        = 1  // EventName/EventCategory/DebugAnnotationName/InternedString: optional uint64 iid = 1;
	fInternedValue      = 2  // ... optional string name = 2; (InternedString: optional bytes str = 2;)

	fSnapshotClocks  = 1 // ClockSnapshot: repeated Clock clocks = 1;
	fSnapshotPrimary = 2 // ClockSnapshot: optional BuiltinClock primary_trace_clock = 2;
	fClockID         = 1 // ClockSnapshot.Clock: optional uint32 clock_id = 1;
	fClockTimestamp  = 2 // ClockSnapshot.Clock: optional uint64 timestamp = 2;
	fClockIncrement  = 3 // ClockSnapshot.Clock: optional bool is_incremental = 3;
)

// Values of TrackEvent.Type and TracePacket.SequenceFlags.
const (
	typeSliceBegin = 1
	typeSliceEnd   = 2
	typeInstant    = 3
	typeCounter    = 4

	seqIncrementalStateCleared = 1
	seqNeedsIncrementalState   = 2
)

// appendVarint appends v as a base-128 varint. It is protowire.AppendVarint
// in a form the compiler inlines: the writer's hot path is mostly one- and
// two-byte varints.
func appendVarint(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

// putVarint writes v as a varint at the start of d, which has room for
// it, and returns its size: binary.PutUvarint with the one-byte case first,
// which the annotations' values and iids mostly are (BenchmarkAnnotations:
// 64–67 ns here, 70–73 with binary.PutUvarint).
func putVarint(d []byte, v uint64) int {
	if v < 0x80 {
		d[0] = byte(v)
		return 1
	}
	i := 0
	for ; v >= 0x80; i++ {
		d[i] = byte(v) | 0x80
		v >>= 7
	}
	d[i] = byte(v)
	return i + 1
}

// appendVarintField appends a varint field (tag and value).
func appendVarintField(b []byte, num protowire.Number, v uint64) []byte {
	return appendVarint(appendVarint(b, uint64(num)<<3), v)
}

// appendSignedField appends an int32/int64 field: negative values take ten
// bytes, as protobuf's int64 encoding prescribes.
func appendSignedField(b []byte, num protowire.Number, v int64) []byte {
	return appendVarintField(b, num, uint64(v))
}

// appendBytesField appends a length-delimited field.
func appendBytesField(b []byte, num protowire.Number, v []byte) []byte {
	b = appendVarint(b, uint64(num)<<3|uint64(protowire.BytesType))
	return append(appendVarint(b, uint64(len(v))), v...)
}

// appendStringField appends a string field.
func appendStringField(b []byte, num protowire.Number, v string) []byte {
	b = appendVarint(b, uint64(num)<<3|uint64(protowire.BytesType))
	return append(appendVarint(b, uint64(len(v))), v...)
}

// appendFixed64Field appends a fixed64 field.
func appendFixed64Field(b []byte, num protowire.Number, v uint64) []byte {
	b = protowire.AppendTag(b, num, protowire.Fixed64Type)
	return protowire.AppendFixed64(b, v)
}

// appendDoubleField appends a double field.
func appendDoubleField(b []byte, num protowire.Number, v float64) []byte {
	return appendFixed64Field(b, num, math.Float64bits(v))
}

// message is a nested message under construction: its body is encoded after
// a placeholder and the length prefix is fixed up by end. Lengths below 128
// (almost every message phasetrace writes) take one byte; longer bodies are
// shifted right to make room for the longer varint.
type message struct{ at int }

// begin appends the tag of field num and reserves one byte for the length.
func begin(b []byte, num protowire.Number) ([]byte, message) {
	b = appendVarint(b, uint64(num)<<3|uint64(protowire.BytesType))
	return append(b, 0), message{at: len(b)}
}

// end writes the length of the message started by begin.
func (m message) end(b []byte) []byte {
	n := len(b) - m.at - 1
	if n < 0x80 {
		b[m.at] = byte(n)
		return b
	}
	size := protowire.SizeVarint(uint64(n))
	b = append(b, make([]byte, size-1)...)
	body := m.at + 1
	copy(b[body+size-1:], b[body:body+n])
	protowire.AppendVarint(b[m.at:m.at], uint64(n))
	return b
}
