// Package compareplan decides, between a comparison's two passes, how its
// two runs are drawn on one axis, and pairs their decode steps as the
// second pass draws them. A comparison (phasetrace.Compare) converts a
// base run's logs and a measure run's together, base's first; the plan
// reads what the first pass learned (a firstpass.ScanResult) and says it
// in values of its own, from which the caller fills its summary.
//
// # The model
//
// Sides. The first [Plan.BaseLogs] logs are base's, the others measure's
// ([Plan.LogSide]); a process is its logs' side (firstpass.Side). Each
// side is one run: its logs are never placed by the tasks a machine ran,
// and captures that repeat one another are looked for within a side only
// ([Repeats], [NearRepeats]): the measure run may be the base run's log
// again.
//
// Pids. The same runtime run twice reuses pids. A pid of the measure side
// that base uses too gets a trace pid of its own, counting down from
// MaxInt32 past every pid in use, the same for every measure log
// ([Plan.PidMaps]; [Plan.Pids] maps the OS pid to it). The caller reads
// the logs again with those pids, then tells every process its side and
// OS pid ([Plan.Settle]). In the second pass [Plan.Adjust] gives a measure
// record its trace pids and marks its thread handle ([MeasureThread]), so
// that no bind phase line is taken for the other side's.
//
// Alignment. Each side's logs are first moved onto its own first log's
// clock; [Plan.Align] then moves the measure side so that an aligned span
// of each side starts at the same time ([Plan.Aligned]): their first
// decode steps, where both sides have a decode callable (the hid with the
// most chip.run roots, ties the lowest, with more than one); else their
// first chip.run; else their first host span; else neither moves. The
// measure side moves by [Plan.ShiftNs], exact; should that put a measure
// span before 0, both sides move later by [Plan.BaseShiftNs]. A move that
// would leave the int64 range is not made ([Plan.Note] says so).
//
// Rank pairs. Aligned by decode steps, the k-th process of each side by OS
// pid (ranks are forked in order), among those that ran their side's
// decode callable, form the k-th rank pair ([Pair]). As the runs are drawn,
// [Plan.Step] counts each pair's decode steps per side from 0 and pairs
// the i-th of each: the [Delta] is measure's duration minus base's, at
// measure's start. The side ahead waits for the other, at most [MaxBehind]
// steps a pair: a step past that, and its partner, are unpaired, so that
// memory does not grow with the log however far one side runs ahead.
// [Plan.Drain] lets go of the steps still waiting once every run is drawn.
//
// A comparison runs it so:
//
//	p := compareplan.New(baseLogs, len(logs))
//	if pm := p.PidMaps(&scan.Remote); pm != nil {
//		// read the logs again with pm
//	}
//	p.Settle(scan)
//	// each side onto its first log's clock, into shift; then
//	p.Align(scan, shift)
//	// second pass: p.Adjust(i, rec) for each record of log i;
//	// p.Step(...) for each chip.run root drawn, then p.Drain()
package compareplan
