// Package remoteplan decides, between a conversion's two passes, how the
// logs of remote machines are drawn on the dispatching host's axis. An L4
// process (network1) on the dispatching host sends tasks to L3 worker
// daemons on other machines; each machine logs on its own
// CLOCK_MONOTONIC, and no record names the other side. The plan reads
// what the first pass learned (a firstpass.ScanResult) and decides, once,
// everything the second pass asks of a remote record.
//
// # The model
//
// Machines. A log with a daemon banner is its machine's, named as the
// banner names it. A log without one is another machine's when its first
// wall-clock anchor puts its monotonic clock more than firstpass.HostGap
// (a second) from the reference log's: a machine named after the words
// of its path that the reference log's path does not share
// (trace.hostB.log beside trace.log is hostB; else "host 2"). Every other
// log is the dispatching host's. [Planner.Group] makes these [Host] values, or returns nil when
// every log is the reference host's.
//
// The axis. The reference log is the one that dispatched tasks; without
// one, the first log with a wall-clock anchor, one without a banner if
// there is (that machine's clock is then the trace's axis). A wall-clock
// anchor that would move a machine's spans before the other log's clock
// started (a clock set years off: wall_ns=9e18) is set aside: the machine
// is drawn at its own times unless its tasks place it ([Host].OffAxis).
//
// Pids. A pid that a remote machine uses and another machine uses too
// gets a trace pid of its own, counting down from MaxInt32 past every pid
// in use ([Plan.PidMaps]). The caller reads the logs again with those
// pids (firstpass.RemapPids), then settles the plan with them; the slices
// keep the OS pid ([Plan.OsPid]).
//
// Workers and sessions. A worker is the dispatching host's (pid,
// worker_id), with its tasks in dispatch order; a session a remote
// daemon's (machine, pid), with its runs in run_id order. The k-th task
// sent to a worker is the k-th run of the session that served it. Each
// task brackets its run: the run began no earlier than the frame left
// (network1.dispatch's end over a socket, its start over MPI:
// [Options].MPI) and ended no later than network1.complete began.
// reduce.MatchSessions finds the one assignment of sessions to workers
// that the brackets admit, the workers the user named first
// ([Options].Workers); several make the match ambiguous.
//
// Each machine's clock, in this order:
//
//	its clock is the axis          unplaced, with its own times
//	its tasks place it             causal: reduce.FitHost, proved by reduce.HostFit.Proves
//	its wall-clock anchor moves it wall, with no bound
//	none of these                  unplaced, drawn at its own times
//
// A machine not placed by its tasks says why ([Host].Reason, one of the
// [Reason] values, and [Host].Note in words, with the figures): the match
// is [Ambiguous], no log dispatched ([NoDispatcher]), no worker's tasks
// match its runs ([NoMatch]), its tasks do not place its clock ([NoFit]),
// or the fit does not prove its runs served them ([FewTasks], [Regular],
// [RateAtLimit], [OutsideTasks], [WallDisagrees]: reduce's errors).
// [Planner.Settle] decides it, and returns the [Note] values for the
// conversion's summary.
//
// Arrows. For every task of a causally placed machine, the plan makes the
// arrows network1.dispatch → the run's first span ([DispatchToRun]) and
// its last span → network1.complete ([RunToComplete]), before any of
// their spans is read, and only where the start is certainly drawn before
// the end. Each [Arrow] says where its ends are drawn ([Extent]) and the
// spans it starts and ends at ([SpanKey]); [KeyOf] gives a span's key as
// it comes, so that the caller hands the arrow's id to that span.
//
// # Drawing by the plan
//
// A nil *Plan is a conversion whose logs are all the dispatching host's,
// and its methods answer as such. [Plan.Shifts] gives each log its shift
// onto the axis (a wall-placed machine's and another host's logs); a
// causally placed machine's records go through its map instead
// ([Plan.Adjust]), and [Plan.MergeShift] orders them among the others'.
// A causally placed machine's device runs are placed on its own clock
// ([Host.NativeRun]) and carried across, bounds composed ([Host.Compose]).
// [Plan.Machine], [Plan.OnAxis], [Plan.SameHost], [Plan.WallSuperseded]
// and [Plan.WallOffAxis] answer, per pid, what drawing asks.
//
// The plan's memory grows with the machines and, per remote task, with
// its planned arrows; never with the spans.
//
// A conversion runs it so:
//
//	pl := &remoteplan.Planner{Scan: scan, Names: names, Options: opts}
//	p := pl.Group(len(names)) // nil: nothing remote
//	if pm := p.PidMaps(&scan.Remote, len(names)); pm != nil {
//		// read the logs again with pm, then Group again
//	}
//	notes := pl.Settle(p, pm)
//	shift := p.Shifts(scan, len(names))
//	// second pass: p.Adjust(i, rec, pm[i]) for each record of log i
package remoteplan
