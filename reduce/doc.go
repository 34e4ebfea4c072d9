// Package reduce turns an NPU runtime's device-phase buffers into the
// device spans the runtime logs, and places device spans on the host
// timeline with a bound on how wrong the placement can be.
//
// # Units
//
// Raw counter readings are [Cycles], counter frequencies [Hz], host
// CLOCK_MONOTONIC times and durations [HostNanos], device-domain offsets
// (from a run's origin) and durations [DeviceNanos], rate errors [PPB].
// Device and host ns never mix implicitly: a device offset becomes a host
// time only through a run's [Mapping]. Windows are [Extent] values on one
// axis ([HostWindow], [DeviceWindow]); a device clock domain is a [Domain]
// with the log's int32 pid and device id ([DomainOf] range-checks an
// int64 dev= attribute). Conversions are exact
// integer arithmetic with 128-bit intermediates ([Hz.Nanos] is the exact
// floor of c·1e9/f and cannot overflow for any uint64 cycle count; it fails
// only when the result exceeds int64 ns). The frequency always comes from
// the data: a2a3 counters run at 50 MHz, a5 at 1 GHz, but nothing here
// assumes either. The runtime itself converts with floating point and
// truncates, which can come out 1 ns short of the exact floor; this package
// always produces the exact floor.
//
// # Buffer layout
//
// One buffer per run, little-endian, written for T AICPU threads:
//
//	offset            size     content
//	0                 8        task_timing_tail_used (0: the tail may be absent)
//	8                 8        reserved
//	16                160·T    phase records, thread-major: thread t, phase p at index t·10+p,
//	                           each {start_cycle u64, end_cycle u64}
//	16+160·T          256·T    optional task-timing tail, thread-major: thread t, slot s at
//	                           index t·16+s, each {dispatch_cycle u64, finish_cycle u64}
//
// Phase wire order: 0 RunWall, 1 Preamble, 2 SoLoad, 3 GraphBuild,
// 4 PostOrch, 5 OrchWindow, 6 SchedWindow, 7 ConfigValidate, 8 ArenaWire,
// 9 SmReset. A buffer is either prefix-only (16+160·T bytes, accepted only
// when task_timing_tail_used is 0) or full (16+416·T bytes). Because
// 16+160·T and 16+416·T coincide for different T (T=13 prefix-only and T=5
// full are both 2096 bytes), [DecodeBuffer] always takes the thread count.
// Its errors are [*DecodeError] values carrying the byte offset and what was
// expected there, unwrapping to [ErrThreads], [ErrTruncated],
// [ErrTruncatedTail] or [ErrSize]. The decoded [Buffer] keeps every thread's
// records.
//
// # Reduction
//
// [Reduce] folds the threads exactly as the runtime does on readback:
//
//   - A record counts only when it is complete: start != [Unset]
//     (2^64−1, never stamped) and end > start (end 0 means never ended).
//   - Each phase reduces to min(start) and max(end) over the complete
//     records, valid only when max(end) > min(start). Slots reduce the same
//     way to min(dispatch) and max(finish); the tail is read only when the
//     header says it is used.
//   - The result does not depend on the order of the threads.
//   - The device origin (ts = 0) is the earliest reduced start among the
//     sub-phases Preamble … SmReset, not RunWall. When no sub-phase was
//     stamped (a host_build_graph run) slots use the earliest reduced
//     dispatch instead.
//
// [Reduction.Spans] returns the spans the runtime logs, in its order and
// with its names: chip.run.runner_run.device_wall at depth 2, ts 0, with
// RunWall's duration (the runtime's bracket: RunWall really starts a little
// before the origin), then chip.run.runner_run.device_wall.{preamble,
// so_load, graph_build, config_validate, arena_wire, sm_reset, post_orch,
// orch, sched} at depth 3, then device_wall.task_slot_<N> at depth 3. Offsets
// and durations are exact floors; a span whose duration is 0 ns is not
// emitted. A slot's duration is floor(finish−origin) − floor(dispatch−origin)
// as the runtime computes it, and a slot dispatched before the origin is
// dropped as the runtime drops it. Every [DeviceSpan] also carries its
// absolute start cycle; RunWall's true start is available from
// [Reduction.WallOffset] so a placement can draw device_wall where it
// really began. Effective, the merged orch ∪ sched window, is one function,
// [Effective], on extents of any axis; [Reduction.Effective] returns it as
// a [Derived] value, never as a stamped span.
//
// # Placement
//
// A [Placer] builds, per device clock domain ([Domain]: pid and device
// id), a model from every piece of evidence and places each span of a [Run]
// on the host CLOCK_MONOTONIC axis. All evidence is expressed as an interval
// for the host instant at which the counter read the run's origin cycle
// (origin_cyc); the intervals are intersected into a rigorous interval,
// the run is drawn where constant-rate fits of the anchors around it put
// it inside that interval (see "Anchors as lines"), and the published
// bound is the distance from there to the interval's far end.
//
// The counter's rate against the host clock changes: NTP slews
// CLOCK_MONOTONIC, a crystal follows its temperature. The model assumes
// that the rate error ε (true counter rate / nominal − 1) stays within the
// maximum rate error ([DefaultMaxRateError], 100 ppm, [WithMaxRateError])
// and that within any rate horizon of host time ([DefaultRateHorizon],
// 2 s, [WithRateHorizon]) it moves by at most the rate stability
// ([DefaultRateStability], 10 ppm, [WithRateStability]): a rate that steps
// by up to 10 ppm at any moment, or wanders by up to 5 ppm a second, keeps
// to it. The Placer's options are [PlacerOption] values. A run at counter
// value c is placed by the anchors of its horizon, those within half the
// rate horizon of c; the stability relates them to the rate at c, and
// farther anchors only through the maximum rate error.
//
//   - Anchors ([Anchor]: a [CLOCK_ANCHOR] v=2 record or a valid calibration
//     sample, see [CalibrationAnchors]). The counter read dev_cyc somewhere
//     in [host_ns, host_ns+window_ns]; widened by one counter tick and by
//     the reading's own quantisation (1 µs for device_uptime_us samples),
//     that window holds the instant the counter became dev_cyc. Mapping to
//     another counter value c adds the nominal distance (c−dev_cyc)·1e9/f
//     scaled by every rate the model allows, so an anchor's interval widens
//     with its distance from c. The horizon's anchors nearest c on each side
//     (up to [DefaultNeighbours]) are intersected at the rates the horizon
//     allows (below), and the nearest two beyond it on each side at any rate
//     within the maximum; narrow windows dominate. Where that leaves the
//     origin looser than 1 µs and the horizon holds 16 anchors or fewer, the
//     nearest eight on each side also constrain it jointly with the rate
//     (below).
//   - Rate. Among the horizon's anchors the four narrowest-window ones in
//     its first quarter and in its last quarter are paired; each pair
//     bounds the average rate between them by the counter's advance over
//     the host window's least and most elapsed time; the pairs' intervals
//     are intersected, widened by the rate stability and clamped to the
//     maximum. With fewer than two anchors in the horizon the maximum rate
//     error governs.
//   - Containment. RunWall lies inside its chip.run.runner_run host window
//     [h0, h1]. From a buffer RunWall's extent relative to the origin is
//     known exactly. From a log device_wall is only the runtime's bracket:
//     its true start lies before the origin by at most its duration minus
//     the stretch its sub-phases cover, and its end is at least that
//     stretch after the origin. Either way this bounds the origin between
//     h0 (less RunWall's lead) and h1 less the covered stretch, converted
//     with the rate interval. Further enclosing host windows
//     ([Run.Enclosing]: chip.run, the L3 node.dispatch … node.complete
//     window) constrain it the same way.
//
// A disagreement costs an anchor, not the device. Anchors whose evidence
// conflicts name each other in an [*InconsistencyError]; the Placer takes
// each named anchor out in turn and sets aside for good the first without
// which the run's anchors agree ([Placer.SetAside], at most 64 a domain,
// each with the runs placed without it). Where no one anchor ends the
// conflict but taking one out leaves a conflict of others (two bad
// anchors), it goes on, up to four anchors for one run; failing that,
// every anchor goes back. A conflict that stays, or one between the
// anchors and the run's host windows, is an error for that run alone.
//
// # Anchors as lines
//
// Write x for a counter value's nominal ns from the domain's first anchor
// and y for host ns. Anchor i says y(x_i) lies in [lo_i, hi_i] (its window
// widened by a tick and its quantisation). Locally the clock pair is a
// line y = y0 + (x − x0)·(1+κ), κ the host-rate error.
//
// The joint interval. Take the rate at c as κ and the average rate between
// c and an anchor a distance d away as κ', |κ' − κ| ≤ s (the rate
// stability, converted to host-rate units). The anchor then bounds T, the
// host instant the counter read c:
//
//	lo_i − d·(1+κ') ≤ T ≤ hi_i − d·(1+κ')
//
// (widened by 2 ns because x is floored). For κ in a cell [k, k+1] of
// 1 ppb each anchor is taken at the end of [k − s, k + 1 + s] that loosens
// it, so the lower limit L(k) is a maximum of lines in k — convex — and the
// upper limit U(k) a minimum — concave. The cells with L ≤ U are one
// interval [kL, kR] (found by bisection on L − U, which is convex, over
// the upper hull of the lower sides and the lower hull of the upper
// sides); T lies in [min L, max U] over it and the rate at c in [kL,
// kR+1], widened by s for the run's own length. Every step only widens,
// so the truth stays inside whenever the assumptions hold; the cells cost
// at most |d|·1 ppb. An empty result is an [*InconsistencyError]. This
// interval is intersected with the per-anchor ones and containment: the
// rigorous interval I.
//
// The estimate. The anchors are fitted at four levels: at each, windows
// two steps long, one starting every step (60 s, 15 s, 4 s and 1 s), so
// each counter value lies in two windows of each level. In each window the
// lines of constant rate that pass through every anchor's window are found
// exactly (κ in steps of 1e-12, integer arithmetic on the two hulls);
// where there are such lines the window is feasible, E(c) is the range of
// values they take at c (in an extrapolation, the span between the
// steepest and the flattest), and the window's rate is the middle of their
// rates; where none passes through every window, it is the minimax line,
// the one whose worst violation is least. E of the two windows around c is
// blended linearly between their centres. The level taken is the coarsest
// whose windows around c are feasible (below the coarsest, windows of four
// anchors or more); where none is, the finest with windows of four anchors
// there, else the coarsest with a fit. A steady clock is drawn from
// two-minute windows; one whose rate changes, from windows short enough to
// hold one rate. The run's origin is drawn at the middle of E ∩ I; when
// they do not meet, at the end of I nearest E. Its rate is the window's,
// clamped into I's rate range (where no window has a fit, the middle of
// that range).
//
// Why. With reads uniform in their windows, the middle of the lines that
// pass through every window (a minimax fit) converges with the number of
// anchors n as 1/n where least squares converges as 1/√n, it uses every
// anchor of the window rather than the nearest, and in an extrapolation it
// sits between the extreme rates instead of wherever noise tilts a
// regression. Because the truth lies in I whatever is drawn, the estimate
// can only move the drawn point inside I: the bound (below) is measured
// from that point and still holds.
//
// Cost. Each window's fit is computed once, O(n log K) for n anchors and
// K steps of rate, at each of the four levels; each run costs O(log n)
// for the estimate, O([DefaultNeighbours]) for the intervals, and the rate
// estimate's scan of its horizon's anchors: linear in anchors plus runs.
// The same model, with
// one-sided brackets, places a remote host's clock (see "Remote hosts").
//
// # Published bounds
//
// [Placer.Place] returns a [Placement]: the run's one [Mapping] and, for
// each span, a [SpanPlacement] drawn through it. The map takes the drawn
// origin o and the estimated rate error ε̂ (see "Anchors as lines"):
//
//	Host(v) = o + floor(v·1e9/(1e9+ε̂))
//
// exact in 128 bits, an error (never a silent fallback) when the result
// does not fit int64. It is monotone, and every span of a run goes through
// it, so spans nested on the device stay nested on the host.
//
// The model allows, for a device instant whose offset from the origin
// lies in [a, b], the host interval
//
//	[O.lo + min_ε a·1e9/(1e9+ε) − slack, O.hi + max_ε b·1e9/(1e9+ε) + slack]
//
// (O the origin's interval, ε over the rate range, slack one counter tick
// plus the ns the floored offsets may lose). A stamped span's start lies
// in [TS, TS+1] and its end in [TS+Dur, TS+Dur+1] (plus the slack); a
// device_wall from a buffer starts in [Wall.Start, Wall.Start+1] and ends
// in [Wall.End−1, Wall.End]; a device_wall read from a log, the runtime's
// bracket, starts in [min(covered−dur, 0), 0] and ends in
// [max(covered, start+dur), dur+2], and is drawn from Host of the middle of
// its start's range for its logged duration, widened to cover every other
// span as drawn. A span's Bound is the largest distance from where its
// start and its end are drawn to the far end of their allowed intervals:
// the truth lies in the interval, so it lies within Bound of the drawn
// point whatever that point is. It holds for both ends of the slice, and
// it is the number the accuracy tests check, span by span.
//
// [Mapping.Method] is [Aligned] (anchors contributed), [Contained] (only
// the runner_run window) or [Unaligned]; short of Aligned, [Mapping.Causes]
// says why, one [Cause] for each piece of evidence missing (no anchors for
// the domain, no origin_cyc, origin_cyc too far from every anchor, no
// runner_run window), and Mapping.Reason in words; an unaligned run has no
// spans placed. Devices on one host align with each other through the host
// clock. An empty intersection is an
// [*InconsistencyError] naming the two pieces of evidence that conflict
// (a bad anchor, a wrong frequency, a runner_run window from another run);
// it unwraps to [ErrInconsistent].
//
// The bound is guaranteed under these assumptions: every anchor's host
// window brackets its counter read; the rate error never exceeds the
// maximum; within the rate horizon it moves by no more than the rate
// stability; RunWall encloses every sub-phase and slot (the kernel entry
// stamps it around everything a thread does). All arithmetic on the
// timestamp path, including the ppb rate bounds, is integer. A clock known
// to be steadier may be given a smaller stability over a longer horizon
// (0.05 ppm over 60 s makes bounds about ten times tighter with dense
// anchors); a clock that moves more than the options say breaks the
// bound.
//
// The accuracy test (go test ./reduce -run TestAccuracyTable -v) simulates
// 60 s runs with counters that drift, step and wander, anchors read at
// random points of 1–40 µs host windows and realistic runner_run slack,
// places them with [Placer.Place] and checks every returned Bound against
// the simulated true start and end; it compares this model with the
// two-point minimum-window method, least-squares lines through every
// anchor and through the 16 nearest (hindsight references that publish no
// bound), containment alone, the nearest anchor without rate correction,
// and this model with a steady clock's options. TestPlaceBoundHoldsUnderDrift
// checks every bound under random drift, rates that step and wander within
// the stability, anchor spacing and windows.
// PLACEMENT.md beside this package says how to read the accuracy tables
// (of device placement and of remote hosts) and what keeps placement
// cheap.
//
// # Remote hosts
//
// An L4 process can send its tasks to L3 worker daemons on other machines,
// each logging on its own CLOCK_MONOTONIC (another boot time, tens of ppm
// of drift); their wall clocks agree only to NTP grade, milliseconds.
// [FitHost] maps such a machine's clock onto the dispatching host's by
// causality. No record names the other side; the k-th task sent to a
// worker is the k-th run of its session (one task is in flight per
// endpoint), which makes a [HostBracket] per task: the remote run began no
// earlier than the frame left (network1.dispatch's end over a socket, its
// start over MPI) and ended no later than network1.complete began. So the
// remote instant x (the run's first span's start) was, on the dispatching
// host, at least Sent, and x' (its last span's end) at most Received.
//
// The model is the clock fit of device anchors: Y(x) = Y0 + (x − X0)·(1+κ),
// |κ| within the maximum ([DefaultHostMaxRate], 500 ppm, the most NTP
// slews a clock), κ moving by at most the stability
// ([DefaultHostRateStability], 10 ppm) within the host rate horizon
// ([DefaultHostRateHorizon], 10 s). Each task's two one-sided brackets are
// half-planes in (offset, rate); their intersection is a convex polygon,
// computed exactly in 128-bit integers. An offset alone cannot fit a long
// run: 30 ppm over 45 s is 1.35 ms, while the brackets are tens of µs
// wide. The central line through the polygon of every task taken at one
// constant rate (the middle of the rates it allows, and the middle of the
// offsets that rate allows) gives the rate every remote instant is drawn
// with. Each task's run is drawn along it, shifted by one offset for the
// whole run: none where one constant rate carries every run inside its
// task, else as far as the central lines of the windows of tasks around it
// are (at the levels of "Anchors as lines"), moved into what the exact
// intervals at the run's start and its end both allow; its durations are
// the line's exactly. Between runs the shift moves linearly, at most half
// a ns per ns, so the map is monotone and spans nested on the remote host
// stay nested. The bound of an instant is the distance from where it is
// drawn to the far end of the interval the model allows for it: computed
// exactly at the runs' starts and ends (knots; every one of them up to
// 1024, evenly chosen ones beyond), the tasks within half the horizon
// related by the stability and the farther ones by the maximum rate, and
// between knots carried from the two nearest at the rates each knot
// allows (widened by the stability), so it holds everywhere.
// [HostFit.Map] returns the line's value and that bound; [HostFit.Drawn]
// the bound of a drawn instant; [HostFit.Compose] carries a device span
// placed through that machine's own anchors (on its own clock) across,
// its bound scaled by the largest rate and added to the host bound.
//
// The information limit ([HostFit.Limit]) is the smallest forward latency
// plus the smallest return latency over the tasks. Causality cannot
// separate a clock offset from uneven one-way delays: a clock δ ahead with
// forward latency f + δ and return latency r − δ produces the same logs as
// the truth, for any δ in (−f, r). So the offset is known to an interval of
// that width at best, no bound can be below half of it, and the error of
// any central estimate is up to |f − r|/2 — the difference of the two
// directions' least latencies, which no method can see. With tasks
// seconds apart, each is placed mostly by its own brackets, and the bounds
// come to about the limit; with a steady clock's options
// (WithHostRateStability(20), WithHostRateHorizon(0): 0.02 ppm over every
// task) and the rate fitted over many tasks, to about half of it.
//
// Which remote log served which worker is not in any record:
// [MatchSessions] pairs a worker's tasks with a session's runs only where
// they count the same and their brackets admit a clock mapping, and takes
// the one complete assignment. Where causality admits several (one task
// each, alike), the pairings one line of constant rate passes through are
// preferred, then the wall-clock anchors decide as a weak prior
// ([WallPrior], [DefaultWallAgreement]); failing that it is
// [ErrAmbiguous] and the user names the mapping.
//
// A fit is not yet proof that the runs served the tasks: the runs of
// another session can fit them too, and then every bound is false.
// [HostFit.Proves] decides whether a causal placement (and its bounds) may
// be claimed; failing it, the caller places the machine by its wall-clock
// anchor, with no bound, and says why ([ErrHostFewTasks],
// [ErrHostRegular], [ErrHostRateAtLimit], [ErrHostOutsideTasks],
// [ErrHostWallDisagrees]). The rule, for the brackets B the fit was made
// from, in task order:
//
//   - B holds at least [MinHostTasks] (4) tasks bounded on both sides. The
//     model has two free parameters: one run fits any task wide enough,
//     and two runs fit any two tasks at some rate; each task after the
//     second is the first real test of the match, and four make two.
//   - The tests are worth at least [MinHostEvidence] (16) bits
//     ([HostEvidence]): for each such task, log2(|D|/room), where room is
//     how far its run may slide inside it (Received − Sent less the run's
//     length) and D the second difference of the Sent times there (how
//     far from where the two tasks before it, continued at their spacing,
//     it was sent). A run of another session lands inside the task only
//     where that session's spacing bends as this one's did, to within
//     room: about room/|D| of the time. So 2^−16 is the estimated chance
//     of a coincidence; tasks idle for seconds between them give 10–20
//     bits each, a steady loop next to none, however many tasks (another
//     session at the same pace would fit it too).
//   - The drawn line's rate lies strictly inside (−max, +max), and the
//     constant rates at which one line carries every run inside its task,
//     sought within ±4·max, are not pinned against the edge: their middle
//     lies strictly inside (−max, +max), or they include the whole range
//     (the tasks leave the rate to the model). A fit that only the
//     fastest or slowest clock the model allows reconciles is evidence of
//     a wrong match, not of a clock (crystals differ by tens of ppm).
//   - The drawn map puts every run inside its task: its start at or after
//     Sent, its end at or before Received, both with a finite bound.
//   - Where both hosts wrote wall-clock anchors ([WallPrior]), the drawn
//     map puts the anchor's instant within [DefaultWallAgreement] (20 ms)
//     of where they say: NTP keeps hosts within milliseconds, another
//     session's clock is anywhere.
//
// A worker the user named ([HostClaim].Named) is a match asserted, not
// one to tell from a coincidence: the count, the evidence and the wall
// clocks are not asked for, the rate and the brackets are. The tests pair
// the tasks of one generated session with the runs of another
// (TestHostFitForeignNeverProves; in package phasetrace,
// TestRemoteForeignSessions, TestRemoteForeignSessionAtRateLimit,
// TestRemoteForeignSessionSteadyPace): none is proved, while a session's
// own runs of four tasks or more, idle between them, are.
//
// The bound is guaranteed under these assumptions: each remote run lies
// between its task's Sent and Received (the transport is the one assumed);
// the remote clock's rate error against the dispatching host's stays
// within the maximum and, within the host rate horizon
// ([DefaultHostRateHorizon], 10 s, [WithHostRateHorizon]), moves by at
// most the stability ([DefaultHostRateStability], 10 ppm,
// [WithHostRateStability]); tasks farther from an instant bound it through
// the maximum rate alone. Where one constant rate carries every run inside
// its task, runs are drawn along the central line of such lines (what a
// plain causal aligner draws), moved into the rigorous interval where it
// leaves it; where none does (the rate moved), along the central lines of
// the constant-rate fits of windows of tasks, at the levels device
// placement uses.
//
// The timing tables the runtime's users read are in package
// [github.com/phasetrace/phasetrace/reduce/analysis].
package reduce
