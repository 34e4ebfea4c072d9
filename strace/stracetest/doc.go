// Package stracetest provides utilities for testing code that reads or
// writes the runtime's trace logs, in the manner of net/http/httptest.
//
// Golden compares output with a golden file, rewritten by the -update flag
// that this package registers for every test binary that imports it (such a
// test package must not register its own).
//
// Generate writes a realistic log: an L3 parent driving chip ranks, as the
// runtime writes it, with its device side simulated consistently (each
// rank's counter has its own offset, frequency and drift; device phases are
// stamped in cycles and converted with exact floors; origin_cyc and the
// clock anchors read the same counter), so that a converter can be checked
// against the truth GenerateTruth returns. A counter's rate can change with
// host time (Config.Rate, RemoteHost.Rate: steps and a slow wander, see
// RateChange): the counter is then exact integer arithmetic, and the truth
// of a count is the least host instant at which the counter reaches it. Config's knobs each make a case
// real logs can hold; Cases returns one small log per knob.
//
// The hostile shapes are logs valid line by line that a producer with a
// bug, a user or a big machine writes, each at the size asked:
// OverlappingSpans, NestedSpans, Processes, Threads, DistinctPids,
// DistinctTids and BusyDispatch; ChangeOneDur makes a capture given again
// with one byte changed.
//
// The package imports only strace (and go-cmp), so that the tests of any
// package above strace can use it.
package stracetest
