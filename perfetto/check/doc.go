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
// clock_sync_unrelatable_clock_domains, ...). Trace.Dump prints a stable
// text form for golden tests.
package check
