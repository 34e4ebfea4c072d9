// Package processor loads a trace into Perfetto's own trace processor and
// reads back what it imported, to prove package check — phasetrace's
// independent reader, which claims to rebuild what the trace processor
// would — against the real thing.
//
// The trace processor is a program, trace_processor_shell, built from
// Perfetto's source; it is not a dependency of phasetrace. FromEnv finds it
// through the PHASETRACE_TRACE_PROCESSOR variable, and a test that uses it
// skips, naming the variable, when it is not set:
//
//	sh, ok := processor.FromEnv()
//	if !ok {
//		t.Skip("set " + processor.EnvVar + " to a trace_processor_shell")
//	}
//	r, err := sh.Load(trace) // what the trace processor imported
//	...
//	tr, err := check.ReadBytes(trace) // what check says it would import
//	...
//	if err := processor.Agree(tr, r); err != nil {
//		t.Error(err) // either found a problem, or they disagree
//	}
//
// The package imports no testing code, so tools can use it too.
//
// # What is compared
//
// Shell.Load writes the trace to a temporary directory and runs one SQL
// query on it (trace_processor_shell -q): every stat above zero, and
// counts and sums over the slice, flow and counter tables (Result).
// Figures computes the same from a check.Trace, and Compare lists where the
// two differ. How they correspond was found by experiment with
// trace_processor_shell v58.2 and by reading its source:
//
//   - Slices: the rows of the slice table are check's Slices, instants
//     included. The trace processor stores an instant as a slice of dur 0
//     nested like any other; a slice never ended has dur -1 in both. Beyond
//     the count, the sums of ts, dur, depth and ts·depth (SliceSums) agree
//     only if the slices start, last and nest alike.
//   - Flows: the rows of the flow table are check's Flows, one per arrow: a
//     flow started on one slice, stepped on a second and terminated on a
//     third is two rows. FlowSum ties each arrow to its ends' times.
//   - Counters: the rows of the counter table are check's Counters.
//   - Tracks are not compared. The trace processor makes tracks of its own
//     (a process's, a thread's it learns of) and merges sibling descriptors
//     that share a name or merge key into common tracks, split again where
//     their slices overlap, so its count depends on the events' timing;
//     check keeps one Track per TrackDescriptor. Result.Tracks is there to
//     read, not to compare.
//
// Problems are compared by name. Every problem name of check that is also
// a stat of the trace processor must be above zero in both or in neither,
// and every stat of severity error or data_loss must be one check reports
// too. Some of check's names are not stats of the trace processor (it drops
// or keeps those events silently, or counts them under another name); they
// are left to the figures. How often a stat is counted is not compared:
// the trace processor counts some per event where check reports once per
// track or per flow.
//
// Agree is what a test of a trace that must load clean asks: check and the
// trace processor agree, and neither reports a problem. Compare only lists
// differences, for traces built to have problems.
//
// # Known differences
//
// The tests of package check pin down every difference found on
// hand-built bad traces (TestTraceProcessorProblems), each with the side
// that is right. One concerns clean traces too: the trace processor keeps
// an instant on its track's stack until the next event, so a second
// instant at the same time on the same track nests inside the first; check
// puts both at the same depth.
package processor
