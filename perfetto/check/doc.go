// Package check reads a Perfetto protobuf trace back the way the Perfetto
// trace processor does, and reports what the trace processor would
// complain about.
//
// There is no trace processor where phasetrace is built and tested, so
// every trace phasetrace writes is checked by this independent reader: it
// decodes the bytes with the types generated from Perfetto's schema
// (package proto), not with the writer's code, and rebuilds what the
// UI would show:
//
//   - interned names, categories, annotation names and string values,
//     resolved per packet sequence and valid only after a packet with
//     SEQ_INCREMENTAL_STATE_CLEARED;
//   - timestamps converted to the trace clock through the ClockSnapshots
//     (sequence-scoped and incremental clocks included, offsets only, the
//     nearest snapshot), with the BOOTTIME bridge the trace processor
//     attempts for every protobuf file;
//   - events sorted by timestamp with file order breaking ties, each
//     track's slices replayed as a stack (instants at one timestamp nest in
//     one another, and a slice at depth MaxDepth or more is dropped, as the
//     trace processor does), flows connected, counters collected;
//   - track descriptors, their parents and hierarchy.
//
// Each problem is reported by the trace processor's stat name where it has
// one (misplaced_end_event, slice_max_depth_exceeded,
// interned_data_skipped_incremental_state_invalid,
// clock_sync_unrelatable_clock_domains, ...). What check does not model
// and the trace processor reads otherwise is a problem too: a field check's
// schema does not know or of the wrong wire type, a track event of no
// known type, a debug annotation without a name, extra counter values, a
// field of Trace other than packet (see lintPacket; TestBitFlipsAgree and
// FuzzTraceProcessor flip bits of clean traces to find them). Trace.Dump
// prints a stable text form for golden tests.
//
// # Reading a trace of any length
//
// Read builds the whole Trace in memory, every argument of every slice
// included: 1.2–1.6 KB a slice of a runtime log's trace. A Reader finds
// the same and hands it over one Record at a time — each problem, each
// slice once it has ended (with its index in Read's Trace.Slices), each
// flow and counter value — in memory that does not grow with the trace.
// It keeps what the trace processor's rules need at once: each
// sequence's interned strings and clocks (their tables grow with the
// distinct strings, not with the events), the clock snapshots, the track
// descriptors, each track's open slices and the open flows. The events
// themselves must be sorted by timestamp before slices can be built, and
// a trace is not written in that order (a runtime log gives children
// before their parents), so a Reader holds them as a few dozen bytes each
// — interned data resolved, arguments only as WithArgs asks — and sorts
// them in runs of at most WithMemoryLimit bytes, written to temporary
// files and merged, as sort(1) does. Read is a Reader that keeps
// everything in memory; both agree record for record with the reader
// Read was when it decoded the whole trace at once (TestReaderAgrees*,
// FuzzRead).
package check
