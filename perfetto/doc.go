// Package perfetto writes Perfetto protobuf traces (.pftrace files, opened
// by ui.perfetto.dev and the trace processor) as a stream.
//
// A Writer declares tracks — processes, threads, custom tracks under a
// parent, counter tracks — and writes events on them: complete slices,
// begin/end pairs, instants, counter values and flows, with typed arguments.
// Each TracePacket is appended to a reused buffer as field 1 of Trace and
// written out past a threshold, so memory does not grow with the number of
// events.
//
// The writer, not the caller, makes the trace mean what the caller said:
//
//   - Complete slices may be given in any order (a log writes children
//     before their parents). At Flush the writer orders each track's begin
//     and end events so that the trace processor, which sorts by timestamp
//     and keeps file order for equal timestamps, rebuilds the nesting the
//     intervals describe — including children that start or end exactly
//     where their parent does.
//   - Event names, categories, argument names and string values are
//     interned per packet sequence, after a packet that sets
//     SEQ_INCREMENTAL_STATE_CLEARED; packets that rely on the interned data
//     or the sequence defaults set SEQ_NEEDS_INCREMENTAL_STATE.
//   - Every track gets a TrackDescriptor before its first event; uuids are
//     derived from the track's identity, so the same input gives the same
//     bytes.
//   - Timestamps are CLOCK_MONOTONIC ns. The first packet declares
//     MONOTONIC the trace clock and relates BOOTTIME to it (the trace
//     processor tries to bridge BOOTTIME for every protobuf file and logs
//     clock_sync_unrelatable_clock_domains when nothing relates them).
//     Each track's events are delta-encoded on a sequence-scoped
//     incremental clock; WallClock adds REALTIME snapshots so the UI can
//     show wall time.
//
// The companion package perfetto/check reads a trace back the way the trace
// processor does and reports what it would complain about; phasetrace's
// tests use it on everything this package writes.
package perfetto
