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
//   - host spans as nested slices with their full dotted names, each with
//     inv, hid, depth and every attribute as typed arguments;
//   - device spans on device tracks under their process, at their placed
//     host time (package reduce: clock anchors and containment in the run's
//     chip.run.runner_run), each with its device-domain ts, its start cycle
//     when known, how it was placed (aligned, contained) and its bound in
//     ns; orch and sched on lanes of their own with the derived Effective
//     window beside them;
//   - node.submit → node.dispatch hand-offs, and node.dispatch → chip.run
//     launches where the run names its dispatch, as flows;
//   - the bind stage: chip.run.bind.<segment> spans with on/off-CPU time,
//     legacy bind phase= lines and host_phase_records drawn inside their
//     chip.run.bind;
//   - wall time through REALTIME clock snapshots from [CLOCK_ANCHOR] v=1.
//
// The returned Summary accounts for every record: what the readers lost
// (torn, unknown version, malformed), what was drawn, how each device's
// spans were placed and the distribution of their bounds, and what was not
// drawn and why.
package phasetrace
