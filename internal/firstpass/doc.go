// Package firstpass reads the logs once before a conversion draws anything.
// This first pass learns what the conversion must know before
// it draws anything, in memory that grows with the number of processes,
// threads and clock anchors — never with the number of spans:
//
//   - which threads interleave runs and must be split into pipeline-slot
//     lanes (their depth-0 spans overlap, each run's root names its slot,
//     and runs sharing a slot never overlap);
//   - what to call each process and thread (by the families and roles of
//     the spans they emitted);
//   - every clock anchor, so that a run is placed with the anchors that
//     come after it in the log as well as those before.
package firstpass
