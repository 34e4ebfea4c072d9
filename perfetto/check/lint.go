package check

import (
	"google.golang.org/protobuf/reflect/protoreflect"

	pb "github.com/phasetrace/phasetrace/proto"
)

// lintPacket reports what in a packet the trace processor reads otherwise
// than check would, to problem, before the packet is read:
//
//   - a field check's schema does not know, or one of a wire type other
//     than its declaration's (a varint where a message belongs): the trace
//     processor may read it as something check does not model (a legacy
//     timestamp, a thread time, a debug annotation made of the wrong
//     bytes), or drop what holds it;
//   - a track event whose type is none of slice begin, slice end, instant
//     and counter: the trace processor refuses one without a type, and
//     reads other types as legacy phases (track_event_parser_errors);
//   - extra counter values on a track event: check does not read them,
//     the trace processor adds them to their counter tracks, or drops the
//     event when the tracks are missing
//     (track_event_extra_counter_missing_track_uuids, ...);
//   - a debug annotation without a name, at the top of an event or in a
//     dictionary: the trace processor stops reading the event's arguments
//     there (track_event_parser_errors).
func lintPacket(pkt *pb.TracePacket, problem func(name, format string, args ...any)) {
	if path, ok := unknownField(pkt.ProtoReflect(), "TracePacket"); ok {
		problem("packet_unknown_field", "%s holds a field check does not know, or one of the wrong wire type", path)
	}
	te := pkt.GetTrackEvent()
	if te == nil {
		return
	}
	switch te.GetType() {
	case pb.TrackEvent_TYPE_SLICE_BEGIN, pb.TrackEvent_TYPE_SLICE_END, pb.TrackEvent_TYPE_INSTANT, pb.TrackEvent_TYPE_COUNTER:
	default:
		problem("track_event_parser_errors", "track event of type %d", int32(te.GetType()))
	}
	if len(te.GetExtraCounterValues())+len(te.GetExtraDoubleCounterValues()) > 0 {
		problem("track_event_extra_counter_values", "track event with extra counter values")
	}
	for _, a := range te.GetDebugAnnotations() {
		if !namedAnnotation(a) {
			problem("track_event_parser_errors", "debug annotation without a name")
			break
		}
	}
}

// namedAnnotation reports whether a debug annotation, and every entry of
// its dictionaries, has a name, as the trace processor reads one: a
// name_iid of 0 is no name_iid.
func namedAnnotation(a *pb.DebugAnnotation) bool {
	switch n := a.GetNameField().(type) {
	case *pb.DebugAnnotation_NameIid:
		if n.NameIid == 0 {
			return false
		}
	case nil:
		return false
	}
	return namedEntries(a)
}

func namedEntries(a *pb.DebugAnnotation) bool {
	if len(a.GetDictEntries()) > 0 {
		for _, d := range a.GetDictEntries() {
			if !namedAnnotation(d) {
				return false
			}
		}
		return true
	}
	for _, el := range a.GetArrayValues() {
		if !namedEntries(el) {
			return false
		}
	}
	return true
}

// unknownField returns the path to the first message under m that holds
// unknown fields.
func unknownField(m protoreflect.Message, path string) (string, bool) {
	if len(m.GetUnknown()) > 0 {
		return path, true
	}
	var found string
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.Kind() != protoreflect.MessageKind && fd.Kind() != protoreflect.GroupKind {
			return true
		}
		sub := path + "." + string(fd.Name())
		switch {
		case fd.IsList():
			l := v.List()
			for i := range l.Len() {
				if p, ok := unknownField(l.Get(i).Message(), sub); ok {
					found = p
					return false
				}
			}
		case fd.IsMap():
		default:
			if p, ok := unknownField(v.Message(), sub); ok {
				found = p
				return false
			}
		}
		return true
	})
	return found, found != ""
}
