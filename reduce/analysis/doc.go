// Package analysis computes the timing tables the runtime's users read from
// a log of [STRACE] spans: the per-callable TPOT table, the per-round table,
// the median span tree, the native-overlap proof, the bind-segment
// statistics, the interleaved comparison of two runs, and the steps table
// of every run with each callable's slowest runs explained.
//
// # Reading a log
//
// The span tables (TPOT, rounds, tree) stream: a [Tables] takes the spans
// one at a time ([Tables.Add], or [Tables.ReadFrom] a [strace.Reader],
// which parses on a goroutine of its own a batch ahead), computes all three
// in one pass and keeps no span. What it keeps grows as follows:
//
//   - with the open invocations, at most [DefaultMaxOpen] of them
//     ([WithMaxOpen]): one small entry per distinct span name of each;
//   - with the invocations: each one's key (to tell a late span) and, for
//     the rounds table, one row of five durations;
//   - with the callables and span names: TPOT's running sums, counts,
//     minima and maxima;
//   - with the spans, for the tree only: 8 bytes of duration per span of
//     each callable's invocations, which the exact median needs.
//
// A distinct span name costs its bytes once, plus, after its invocations
// closed, about 30 bytes for the rounds table alone, 85 for TPOT or the
// tree, 150 for all three (TestTablesHeapPerName measures it: a log of two
// million distinct names keeps about 340 MB of heap for all three tables).
// A table taken from them holds its rows besides: TPOT a row per callable
// and stage name, the tree a node per name of each callable's last
// invocation.
//
// Leaving the tree out ([WithTables]) leaves memory independent of the
// log's length but for the invocations' keys and rows. An invocation is
// closed (reduced to its contribution to the tables) once [DefaultMaxOpen]
// newer ones have begun; a span arriving after that is counted by
// [Tables.Late] and left out. [AnalyzeTPOT], [AnalyzeRounds] and
// [AnalyzeTree] are the same computation over a slice, never closing early.
//
// The overlap proof streams too: an [Overlap] takes the spans one at a
// time ([Overlap.Add], [Overlap.ReadFrom]) and keeps, besides the same
// window of open invocations and their keys, per phased native run its
// identity and three intervals (about 100 bytes, no more than the proof's
// pair for that run). [ProveOverlap] is the same proof over a slice.
//
// The bind statistics stream as well: a [Binds] takes every record
// ([Binds.Add], [Binds.ReadFrom]) and keeps, per open bind (at most
// [MaxOpenBinds]), its segments' durations and counters and the legacy
// "bind phase=" lines it claimed, a bounded window of lines still waiting
// for their bind, and per closed bind its key and its segments packed to a
// dozen bytes each; at the end, per warm bind, its control-plane total.
// Stamps and autoload records are kept whole; host_phase_records passes
// streamed from their files ([WithPhaseRecordsFrom]) are held only within
// [PassHorizon] of the binds closing, which the runtime's files, written
// in time order beside the log, always are.
// [AnalyzeBinds] is the same computation over a [Log], whose binds keep
// their segments and attributes.
//
// [BindRepetitions] splits a stream at its "[stamp]" lines as
// [Log.Repetitions] splits a log, with a [Binds] per repetition, for
// [CompareRepetitions].
//
// [ReadLog] is the convenience that keeps everything: it reads a log with
// [strace.NewReader] and keeps its spans, "[stamp]" lines,
// torch_backend_autoload records, legacy "bind phase=" lines (with the log
// thread of each and of every chip.run.bind span) and the reader's losses;
// [WithName] names it and [WithReaderOptions] passes the reader's options.
// [Concat] joins logs read separately. Its memory grows with the log: each
// span is kept whole.
//
// # The tables
//
// Each analysis returns data; a separate WriteXxx renders it in the runtime
// tool's text layout with the tool's numbers to the last printed digit
// (integer ns inside, µs or ms only when printing, with the tool's
// floating-point rounding reproduced).
//
//   - [AnalyzeTPOT]: per hid bucket (most invoked = decode, once seen =
//     prefill), the invocation count, chip.run mean / min / max and every
//     stage's mean with its count. [WriteTPOT].
//   - [AnalyzeRounds]: the busiest callable's rounds, one row per
//     invocation by inv: Host (chip.run), Device (device_wall), Effective
//     (orch ∪ sched from their device ts / dur), Orch, Sched. Host averages
//     every round, the others the rounds that captured them; a column no
//     round captured is hidden; past 2·[TrimRounds] rounds the trimmed means
//     drop the [TrimRounds] lowest and highest. [WriteRounds] keeps the
//     layout benchmark scripts parse ("  Round     Host (us) ...", "  Avg Host:").
//   - [AnalyzeTree]: per callable, each span's median duration across its
//     invocations, structured by dotted names, with orch ∥ sched side by side
//     under the median per-invocation Effective. [WriteTree].
//   - [ProveOverlap]: per process lane, adjacent phased native runs (identity
//     run_id / dispatch_id / run_epoch / slot_id / generation on the root)
//     must show bind(N+1) overlapping runner_run(N) and runner_run(N+1) not
//     starting before claim_release(N); [WithRequireHidden] also requires the
//     bind to end inside runner_run(N). Failures are [*OverlapError] values
//     naming the pid, sequence numbers and intervals; fewer than two runs on
//     every lane is [ErrTooFewRuns].
//   - [AnalyzeBinds]: the chip.run.bind.<segment> statistics. A bind is one
//     (pid, inv); its segments come from the segment spans, from legacy
//     "bind phase=" lines (a line belongs to the first chip.run.bind of the
//     same log thread whose interval holds it) and from host_phase_records
//     passes ([WithPhaseRecords]); a pass wins over a span, a span over a
//     line, segment by segment, as in the converter. One cold bind per rank is dropped ([WithRanks],
//     [WithRounds], else one per process); per segment min / median / max
//     over the warm binds; the control plane ([ControlPlaneSegments]) summed
//     within each bind and reported as the minimum of those sums — never a
//     sum of per-segment minima; on/off-CPU from cpu_ns with nvcsw / nivcsw;
//     minflt bind by bind; [BindWarning]s for unknown, absent and partial
//     segments, a spill after a process's first bind, and a missing stamp or
//     autoload record. [WriteBinds].
//   - [CompareBinds]: two arms run interleaved, one minimum of per-bind sums
//     per arm per repetition, the delta per repetition, and a [Verdict] only
//     when the signs agree across at least two repetitions, the stamps differ
//     at most in the commit, the segment sets and autoload records match.
//     [Log.Repetitions] splits a log holding several runs at their stamps.
//     [WriteComparison].
//   - [ComparePhases]: the same two arms phase by phase — per repetition,
//     the median duration of every host stage and device phase of the
//     decode callable in each arm ([PhaseRepetitions] splits a stream at
//     its stamps, keeping one repetition's spans at 8 bytes each) and the
//     delta measure − base, with a verdict per phase under the rule above.
//     [WritePhaseComparison].
//
// # The runs
//
// The steps table has one row per run ([Step]: the spans of a (pid, inv)
// whose root is a chip.run), the binds table one per bind segment of a run
// ([StepSegment]); [StepColumns] and [BindColumns] document their columns.
// A [Steps] computes a run's row from its spans as the run completes,
// keeping only the end of each lane's last run (for the gap); the
// converter hands each drawn run's row, with what it decides filled in
// (the run's number, cold, the widest bound, wall time, the part), through
// phasetrace.WithSteps. A [StepWriter] writes the rows as text, CSV, JSON
// Lines or Parquet, row by row. [Slow] ranks each callable's runs against
// its warm medians and names the stages that took the excess; it keeps
// the warm runs' durations its medians need (about 100 bytes a run).
//
// The same tables come from a trace through the Perfetto SQL package in
// sql/phasetrace (trace_processor_shell --add-sql-package): its modules
// read the run and full_name arguments every slice of a run carries.
//
// The renderers reproduce the reference's float arithmetic: a value is
// float64(ns)/1000, sums run left to right as Python's sum() does before
// 3.12, "%.1f" is the correctly rounded decimal of the binary double (so
// 0.25 prints 0.2 and 22.15 computed as (20.05+24.25)/2 prints 22.1). Two
// known differences: a span name logged twice in one invocation appears
// once in the tree (the reference repeats it), and a hid is printed without
// leading zeros.
package analysis
