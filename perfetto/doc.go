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
//   - An event's fields are written from what repeats most to what changes
//     most: the sequence id and flags, then the TrackEvent (its arguments,
//     each value before its name, then its name and type), then the
//     timestamp. Field order means nothing to a protobuf reader, but
//     consecutive events of a kind then share long runs of bytes, which
//     deflate (WithCompression) finds: a runtime log's trace comes out
//     smaller than in the schema's order, no slower (PERFORMANCE.md beside
//     this package has the figures and the cost model).
//
// # Overflow lanes
//
// Nothing is lost to its nesting. A complete slice or instant that cannot
// nest on its track is written on an overflow lane of the track: a track of
// its own named after it ("main 34 (overflow 1)" for thread 34 named main),
// under the thread's process or the custom track's parent, never merged
// with its siblings (a thread's process gets a track, without a name, if it
// had none: declare processes before flushing their threads' slices to name
// them). The slice keeps its name and arguments and gains one more,
// overflow_reason, saying why and with what it conflicted:
//
//	[1000 +50] chip.run.bind overflow_reason="partially overlaps \"chip.run\" [990, +40]"
//
// A slice leaves its track when it partially overlaps another slice
// (ErrOverlap); when it would enclose a slice flushed earlier that starts at
// the same instant, or end where one starts, which the trace processor's
// ordering cannot express (ErrOutOfOrder); when it would be nested at depth
// MaxDepth (512) or more, where the trace processor drops slices
// (ErrTooDeep); or when the writer cannot verify it against what it
// remembers of earlier flushes (ErrUnverifiable). The writer decides a
// slice of a later flush as if it remembered every slice written before —
// one in a gap between them, before or after them all, or enclosing any
// of them — but for one lying within slices of earlier flushes, among
// what it no longer knows of their insides (see Flush; and Memory for a
// lane with more than 1 024 gaps). A log written children first, as the
// runtime writes, gives such a slice only when it has the interval of a
// slice written before, or no length at its edge. Each lane is filled the
// same way: a slice goes on the first lane — the track, then overflow
// lanes 1, 2, ... — where it fits, so a chain of 10 000 nested slices
// becomes 20 lanes of at most 512 levels. WithOverflowFunc reports each relocated slice
// with the caller's Slice.Ref, and Stats.Overflowed counts them; past
// MaxOverflowLanes lanes on a track a slice is refused (ErrTooManyLanes).
// WithRefusalFunc reports each refused slice with its Ref, so a caller
// knows exactly which of the slices it gave the trace holds; the flow ids a
// refused slice carried are left out of the events its flush writes after
// it (tracks where a flush may refuse are flushed first), and the report
// lists them for the caller to leave out of what it gives later.
//
// # Errors
//
// Errors are kept for the whole stream, like encoding/csv's Writer.Error:
// Writer.Err (which Flush and Close return) lists the first error of the
// underlying io.Writer, wrapping ErrWrite, then the first 16 data errors,
// each an *EventError wrapping a sentinel (ErrNegativeTimestamp,
// ErrTooManyTracks, ...). Whether something fails never depends on when a
// flush happened. Stats counts everything, including the errors past 16
// and the events dropped. With compression on, a panic of the io.Writer on
// the writer's own goroutine reaches the caller's goroutine, at its next
// call that hands over a bundle, Flush or Close.
//
// # Memory
//
// A Writer's memory grows with the tracks it has declared, the strings
// interned on their sequences (bounded by WithInternLimit) and the slices
// waiting for Flush — not with the number of events written. A track with
// a slice of three arguments costs about 540 bytes, one with 32 such
// slices about 2.1 KB (TestMemoryPerTrack): its state, a packet sequence
// whose few interned strings live in a short list, and the top-level
// slices it remembers. A sequence gets a map, and a memo of its events'
// arguments only once it is busy (a thousand lookups, some two hundred
// events), and only the first 256 sequences of a Writer to be busy get
// memos (1 KiB for each of its first 64 event names). Each lane remembers the latest 64 top-level slices of
// earlier flushes one by one (48 bytes each) and the earlier ones as the
// stretches of time they cover, one for each run of top-level slices that
// abut one another (32 bytes each): a lane's memory grows with the gaps
// between its top-level slices, not with its slices, and at most to 1 024
// stretches (about 40 KiB), past which the narrowest gaps are given up,
// down to 256 — a slice given later with an end in such a gap is then
// ErrUnverifiable. Once warm — its tracks declared, their strings
// interned, its buffers grown to what a flush holds (a busy lane's memory
// of its past to its bound) — a Writer allocates nothing per event.
// WithMaxTracks bounds the tracks (DefaultMaxTracks, 65 536): past it new
// tracks are refused and counted, so an input that names a new thread on
// every line cannot exhaust memory. A Writer with compression runs a
// goroutine until Close, so it must be closed.
//
// The companion package perfetto/check reads a trace back the way the trace
// processor does and reports what it would complain about; phasetrace's
// tests use it on everything this package writes.
package perfetto
