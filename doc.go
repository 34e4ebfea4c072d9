// Package phasetrace converts an NPU runtime's logs into one Perfetto trace
// where host stages and device phases sit on one timeline.
//
// The runtime measures itself in two clocks: host stages are [STRACE] span
// lines in its log (CLOCK_MONOTONIC ns), device phases are AICPU counter
// cycles reduced across threads and logged as clk=dev spans whose ts is an
// offset from a per-run device origin. Convert reads the logs (and,
// optionally, the runtime's host_phase_records.jsonl and clock-calibration
// artifacts) and writes a .pftrace that ui.perfetto.dev opens:
//
//   - one process track per pid, labelled as the runtime's users know them
//     (simpler node, simpler chip child, external producer) and ordered
//     scheduler parents first; thread tracks per tid, named by role; a
//     thread that drove several runs at once split into one lane per
//     pipeline slot;
//   - host spans as nested slices, each labelled by the last word of its
//     dotted name (chip.run.bind.args shows args; a root, such as chip.run,
//     node.dispatch or ext.<producer>.<span>, its whole name), with
//     full_name (the whole name; every slice of a span, a device phase, a
//     derived window, a bind segment or record and an overview root has
//     it), inv, hid, depth and every attribute as typed arguments;
//   - device spans on device tracks under their process, at their placed
//     host time (package reduce: clock anchors and containment in the run's
//     chip.run.runner_run), each with its device-domain ts, its start cycle
//     when known, how it was placed (aligned, contained) and its bound in
//     ns; orch and sched on lanes of their own with the derived effective
//     window (chip.run.runner_run.device_wall.effective) beside them;
//   - node.submit → node.dispatch hand-offs, node.dispatch → chip.run
//     launches where the run names its dispatch, and each run's
//     chip.run.runner_run → its device_wall (the host stage that ran the
//     device's work → that work), as flows;
//   - on every slice of a run, host and device — its bind segments, bind
//     phase lines and host_phase_records, device phases, Effective window
//     and task slots, a remote machine's runs alike, and its root's slice
//     in a split trace's overview — the run key run: the run's number, 1
//     for the first run whose spans the logs complete, and so on (every
//     run read is numbered, drawn or not, so a run keeps its number in a
//     window or a part). It is one integer rather than "pid:inv" text so
//     that joining a run's slices in SQL is one equality on
//     extract_arg(arg_set_id, 'debug.run') (see the README's query), and
//     so that it costs a few bytes a slice and no string per run; the
//     UI's arguments panel shows it beside inv, and the track names the
//     process;
//   - the bind stage: chip.run.bind.<segment> spans with on/off-CPU time,
//     legacy bind phase= lines and host_phase_records drawn inside their
//     chip.run.bind;
//   - wall time through REALTIME clock snapshots from [CLOCK_ANCHOR] v=1;
//   - counters under each process, to see where step time jumped: per
//     callable ("chip.run ns · hid 0x…") the duration of each invocation's
//     root at its start, the values whose mean the TPOT table of package
//     reduce/analysis prints, on one y-axis in every process (a callable
//     run once in a process ends with a 0 at its run's end), and beside
//     it ("chip.run − median ns · hid 0x…") each duration less the
//     callable's median, where a step's few percent of variation fill the
//     track; per device ("device N device_wall ns") each
//     run's placed device_wall; and "runs in flight", the runs whose root
//     has started and not ended, exact at each change (a root read more
//     than the flow horizon after it started is left out, and counted:
//     Summary.CountersNotDrawn);
//   - the logs of other machines (remote L3 worker daemons of an L4
//     process) on the dispatching host's clock, each machine placed by the
//     tasks it ran (package reduce: FitHost), every slice saying its
//     machine, how it was placed and its bound, with network1.dispatch →
//     remote run → network1.complete flows (see WithRemoteWorker).
//
// The returned Summary accounts for every record: what the readers lost
// (torn, unknown version, malformed), what was drawn, how each device's
// spans were placed and the distribution of their bounds, and what was not
// drawn and why.
//
// # What the trace says of itself, and what deserves a look
//
// Two top-level tracks are the trace's own, besides the tracks
// WithMaxTracks allows the logs. On "phasetrace", one instant named
// "conversion" at the first slice gives the version that wrote the trace,
// each input's name, bytes, lines and [stamp] line and, in a trace in one
// piece or an overview, the account the Summary gives (see about in
// draw_about.go); each part of a split trace names its inputs. On
// "anomalies", instants with a "why" argument mark slow runs (the rule is
// analysis.Typical's), cold binds and runs placed with a bound over
// WideBound; Summary.Anomalies counts them.
//
// # Bad data never costs the trace
//
// Convert fails only when an input cannot be read or the trace (or a part
// of a split trace) cannot be written, or when it is called wrongly. Everything wrong with the data is
// handled record by record, counted in the Summary with the reason and the
// file:line of the first few, and marked on the slice where one is drawn:
//
//   - repaired, only where the repair is exact and small: a device phase
//     whose logged boundary lies within the runtime's own ns truncation
//     (2 ns) of its neighbour's is clamped to it; the slice carries
//     logged_device_ts, logged_device_dur and repair, and its bound grows
//     by the shift;
//   - moved to an overflow lane beside its track ("<track> (overflow N)"),
//     with an overflow_reason argument, when it cannot nest where it
//     belongs: it partially overlaps another slice, it is nested deeper
//     than the trace processor keeps (512 levels), or it lands among
//     slices written long before (time running backwards); a span that
//     fits on none of a track's 64 overflow lanes is not drawn (counted,
//     with one example per track that gives the track's count);
//   - left out: a span whose interval is not one (negative duration,
//     negative host time, ts + dur past the int64 range), a repeat (a
//     capture that repeats an earlier one byte for byte — a log given
//     twice, or two captures concatenated —, a span of a capture whose
//     (pid, tid, inv, name, ts, dur) an earlier capture of the log holds,
//     or a span equal to one of the last 4096: see Repeats), a span of a
//     track past the track limit (WithMaxTracks), a device span with no
//     evidence to place it, a device span whose offsets its run's host
//     windows cannot hold even alone (that span only: the others of its
//     run are placed without it);
//   - set aside, a clock anchor rather than the spans it would move: of the
//     wall-clock anchors, the largest set that agrees to within a second is
//     the trace's wall clock, and the others (and any before 1970) are set
//     aside; a remote machine whose wall-clock anchor would move its spans
//     further than two machines' clocks can be apart (either log's spans
//     before the other's clock started, one rule back and forward) is
//     drawn at its own times, its slices
//     marked host_placement=unplaced with a host_placement_reason, and
//     counted in its HostSummary.
//     A device anchor joined to the next record on its line whose dev_freq
//     the other anchors of its device contradict is set aside too.
//
// A span or bind phase line whose last attribute the end of an unterminated
// log may have cut is drawn, with maybe_cut_by_log_end naming that attribute.
//
// An input whose stream ends early or is damaged — a .gz cut in its data or
// its trailer, whose checksum does not match, or whose compressed data is
// corrupt — is read up to the damage, not failed: the records before it are
// converted, and InputSummary.Cut (ArtifactSummary.Cut for an artifact)
// says why and after how many bytes of data; the summary is not lossless.
//
// The account is exact: Summary.Spans.Check verifies that every complete
// span read is drawn, superseded (a bind segment the host_phase_records
// artifact draws instead) or counted under a reason (Spans.Moved says
// which drawn spans are on overflow lanes); Summary.Clean says whether the
// logs read clean (nothing lost, cut, set aside or moved: what -strict
// asks), and Summary.Lossless whether, besides, nothing was repaired.
// Drawn means in the trace: a span the trace writer refuses is counted
// under its reason, not as drawn, and Summary.Flows counts an arrow only
// once both its ends are written (an arrow with an end not drawn is
// counted in Summary.Unlinked, and its id is left out of the other end —
// but for an end the writer refuses after it wrote the other: that id
// stays, alone, and a note says how many).
//
// # The summary as JSON
//
// A Summary marshals to JSON (strace2perfetto -summary-json) and decodes
// back into an equal Summary. Every key is an identifier: the reasons are
// Reason ids, stable snake_case ("track_limit"), declared with their texts
// as the Reason constants (reasons.go; Reasons lists them). Each count by
// reason — "unlinked", "repaired", "moved", "not_drawn", "superseded",
// "spans"."moved" and "spans"."not_drawn", and a device's "reasons" and
// "contained_reasons" — is a list sorted by id:
//
//	[{"reason": "track_limit", "count": 4, "text": "over the trace's track limit"}]
//
// "flows" is a list sorted by FlowKind id ("dispatch_to_run",
// "remote_dispatch_to_run", "remote_run_to_complete", "run_to_device",
// "submit_to_dispatch"):
//
//	[{"kind": "submit_to_dispatch", "from": "node.submit", "to": "node.dispatch", "count": 24}]
//
// Each of "examples" is {"reason", "text", "at" (file:line), "detail"}.
// The "text"s are for people; on decode they are derived from the ids. An
// input's "records" counts its records by their kind in the log grammar
// ("span", "wall-anchor", "device-anchor", "bind-phase", ...). A host
// not placed by its tasks has a "reason", one of the ReasonHost ids
// ("host_ambiguous_worker", "host_wall_clock_disagrees", ...), with its
// "reason_text" beside it, and a "note" with the figures.
//
// # Repeats
//
// A log given twice, or holding a capture appended again (its write time,
// the log prefixes' mono_ns, running backwards by more than a second where
// the copy begins), is drawn once. A repeated span is counted under a
// "duplicate" reason with where it is and what it repeats, and neither
// drawn nor linked by a flow:
//
//   - a capture whose bytes equal an earlier capture's (of any log), with
//     all its records;
//   - a span of a capture whose (pid, tid, inv, name, ts, dur) an earlier
//     capture of a log cut into several holds (by 64-bit fingerprints):
//     the captures are compared in sketches of a fixed size, 24 KiB each,
//     which give back the spans one holds and the other does not when they
//     are up to a few hundred (400 in every draw of the tests), a capture
//     with the (up to 4) earlier ones it differs from least; the spans the
//     later capture holds on its own, changed or added, are drawn;
//   - a span equal in (pid, tid, inv, name, ts, dur) to one of the last
//     4096 spans, in the order they were written (logs given together are
//     read merged in that order, so a log's twin in another log comes
//     right after it).
//
// What none of these finds is drawn, on an overflow lane where it cannot
// nest: a capture that repeats only part of an earlier one (more spans
// differ than a sketch gives back, or one line is written twice in one
// capture and not in the other), captures past the first 64 of a
// conversion, a span written twice far apart within one capture, or more
// often in a later capture than in the earlier one. A log given twice as
// two inputs, its copy changed, is read merged with it: the window finds
// the copy's spans, but its other records are taken as they come.
//
// # Big logs
//
// A trace of a few GB of logs is more than the UI can load: its trace
// processor needs some 20 times the trace's size in memory. Find the moment
// first, then look at it in detail:
//
//   - WithSplit writes the conversion as parts of at most N slices (a run
//     larger than that in a part of its own), each a trace of its own
//     holding whole invocations, and an overview with one
//     slice per invocation naming the part that holds it, the counters and
//     a track of the parts. The parts' slices add up to the whole trace's.
//   - WithWindow draws exactly the whole trace's slices that meet a
//     stretch of trace time, the logs still read whole.
//
// Both convert as fast as a whole conversion, in as little memory.
//
// # Two runs
//
// Compare writes a base run and a measure run (before and after a change)
// into one trace: each side's processes named after it, the measure run
// moved by an exact shift so that its first decode step starts with
// base's, and per rank pair a counter of measure's decode step time minus
// base's, step by step (Summary.Compare says how).
//
// # Go values in, trace out
//
// A program that holds its host spans in memory, or reads raw device-phase
// buffers back from the device, gives them to a Builder (after a Survey of
// what must be known before drawing: lanes, labels, clock anchors,
// artifacts) instead of formatting log lines. Convert is the Builder's log
// front end: the same values give the same trace, byte for byte.
//
// # Memory
//
// Convert reads each log twice, streaming (a log cut into several
// captures three times: once to sketch them), and its memory does not grow
// with the log, nor with a host_phase_records artifact's passes
// (WithPhaseRecords), which it reads twice too: the first time noting
// where each pass is (an index of 24 bytes a pass, sorted by pid and inv),
// the second reading, as each run is drawn, the passes of its (pid, inv)
// at their offsets, in whatever order the artifact was written. An input
// that seeks (a file not compressed) reads on to a pass up to 1 MiB ahead
// and seeks to any other; one that cannot (a .gz) reads on, keeping the
// last 8192 passes it read past, and for a pass behind them reads again
// from its start (time, not memory). A pass that no run took at the end
// is counted under ReasonPassesWithoutBind. Its memory grows only with its
// tracks, not with the processes and threads past the track limit (about
// 570 bytes a track of live heap with a run of two spans, 1.7 KB with 16
// such runs, 2.2 KB of peak resident memory), its distinct strings, the
// hand-offs waiting in the flow window (WithFlowHorizon), the runs waiting for their
// root, the roots of the last flow horizon the runs in flight wait for
// (16 bytes a start or an end, 8192 at most), its clock anchors (tens of bytes each) and its captures' sketches
// (24 KiB each, 64 at most, and at most 4 lists of up to some 850 keys of
// 8 bytes each per capture). The second pass reads through a Merger that
// reuses its records' memory (strace.WithRecycledMemory); what a conversion keeps past a record — the
// repeat detector's last spans, which a waiting run shares, the flow
// window's spans, bind phase lines — is copied into memory of its own that
// it reuses in turn, so a conversion allocates nothing per span once warm.
package phasetrace
