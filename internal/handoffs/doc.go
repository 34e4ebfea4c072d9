// Package handoffs matches the node spans of the runtime's hand-offs and
// holds them until their arrows are known. The hand-offs drawn as flows:
//
//   - node.submit → node.dispatch, matched as the runtime's own tooling
//     matches them: same pid, run_id and task slot (task_slot, or slot),
//     the latest submit that starts before the dispatch;
//   - node.dispatch → the chip.run it launched, where the run's root
//     carries the dispatch's run_id and a non-zero dispatch_id and starts
//     after it.
//
// An arrow's start must be strictly earlier than its end: the trace
// processor orders events by time, and an arrow whose ends share an
// instant may reach its end before its start (and is then lost).
//
// The spans of a hand-off are logged when they end, so either end may come
// first. Node spans therefore wait among the hand-offs until the log has moved
// FlowHorizon past their end, and are drawn with the flows found by then.
//
// A run's own arrow, chip.run.runner_run → device_wall, need not wait:
// both its ends come in the run (the root's runLinks).
//
// A Queue draws what it lets go of, makes its arrows and counts the
// hand-offs it cannot link through its Site: the conversion, which maps
// its Kind and Why to the summary's flow kinds and reasons.
package handoffs
