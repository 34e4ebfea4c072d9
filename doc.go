// Package phasetrace converts an NPU runtime's logs into one Perfetto trace,
// with host stages and device phases on one timeline.
//
// The runtime measures itself on two clocks. Host stages are [STRACE] span
// lines stamped in CLOCK_MONOTONIC nanoseconds. Device phases are AICPU
// counter cycles, reduced across threads and logged as offsets from a
// per-run device origin. phasetrace places every device phase on the host
// timeline, with a published bound on its error. It writes a .pftrace file
// that ui.perfetto.dev opens.
//
// # Using it
//
// [Convert] reads logs and writes a trace. The [Summary] it returns
// accounts for every record read. [Compare] writes two runs, before and
// after a change, into one trace.
//
// A program that holds its spans in memory gives them to a [Builder]
// instead. It first gives a [Survey] what must be known before drawing:
// lanes, labels, clock anchors. Convert is the Builder's log front end, so
// the same values give the same trace, byte for byte.
//
// Options tune a conversion. [WithPhaseRecords] and [WithCalibration] add
// the runtime's artifacts. [WithPlacement] states the placement model's
// assumptions. [WithMaxTracks] bounds the tracks, and with them the memory.
// [WithWindow] draws one stretch of time, and [WithSplit] cuts a big trace
// into parts beside an overview. [WithRemoteWorker] helps place the logs of
// other machines.
//
// # What a trace shows
//
// Each pid has a process track, named as the runtime's users know it.
// Under it, thread tracks are named by role. A thread that drove several
// runs at once is split into one lane per pipeline slot. Host spans nest
// as slices labelled by the last word of their dotted names. Each slice
// carries its full name and every attribute as typed arguments.
//
// A run is the spans of one (pid, inv). Its device phases sit on device
// tracks at their placed host time, each with its bound in ns. Package
// reduce places them by clock anchors and by containment in the run's host
// stages. Every slice of a run, host or device, carries the run's number as
// the argument run. Joining a run's slices in SQL is one equality.
//
// Arrows join node.submit to node.dispatch, node.dispatch to the chip.run
// it launched, and each run's runner_run to its device_wall. Counters under
// each process show where step time jumped. Wall time comes from the
// runtime's wall-clock anchors. The logs of remote machines are placed on
// the dispatching host's clock by the tasks they ran.
//
// Two tracks are the trace's own. On "phasetrace", an instant named
// "conversion" names the version and the inputs, and gives the account.
// On "anomalies", instants mark slow runs, cold binds and wide bounds
// ([AnomalyCounts]).
//
// # Bad data never costs the trace
//
// Convert fails only when an input cannot be read or the trace cannot be
// written, or when it is called wrongly. A bad record is repaired, moved to
// an overflow lane, set aside or left out. Each is counted in the Summary
// under a [Reason], with where it was read. [SpanAccount.Check] verifies
// that every complete span read is drawn or counted. A log given twice is
// drawn once ([ReasonRepeatedCapture]).
//
// # Memory
//
// Convert reads each log twice, streaming: a first pass surveys it, and a
// second pass draws. Its memory grows with tracks, distinct strings, clock
// anchors and the runs in flight, not with the length of the logs. DESIGN.md, at the top of
// the repository, says how the stages fit.
package phasetrace
