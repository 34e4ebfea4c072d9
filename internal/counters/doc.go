// Package counters draws the trace's counters, each a counter track under its
// process (Table names and describes them), so that the UI graphs
// where step time jumped:
//
//   - per callable (pid, hid), the duration of each invocation's root
//     span (chip.run), exact ns, at the root's start: the values the
//     TPOT table (reduce/analysis) averages, run by run. The tracks of
//     a callable share one y-axis across processes (ranks): the UI draws
//     counter tracks with the same y_axis_share_key on one range. The UI
//     holds a counter's last value to the end of the trace, so the track
//     of a callable run once takes a second value, 0, at the end of its
//     run (drain): its line ends with the run instead of running on
//     across the trace. A callable run more than once has its runs'
//     values only, so that their spread, which the UI draws from 0 (no
//     descriptor field moves its y-axis), fills the track once the
//     track's menu says Display → Min/Max;
//   - per device (pid, dev), the placed duration of each run's
//     device_wall, at its placed start;
//   - per process, the runs in flight: how many roots have started and
//     not ended, an exact count at each change.
//
// The first two are written as their runs are drawn. The runs in flight
// are counted from the roots as they are read (+1 at a root's start, −1
// at its end), in time order, which is not the order roots come in (each
// is written when it ends; a producer writing parents first writes it when
// it starts; a prewarm root lasts across many runs). The events are held
// until none can come before them any more: a root starts at most the
// flow horizon (WithFlowHorizon) before the log's time (the latest end of a
// host span read) when it is read, so every event more than the horizon
// behind the log's time is final and is written. A root that starts
// before what is written — it came more than the horizon after it started
// — is left out of the count, both its events, and counted under
// ReasonInFlightLate: the values written before it stay what they were,
// short of that run.
//
// At most maxEvents events are held: past it the oldest are written
// early, and a root read later that starts before them is late too.
//
// A nil Set draws nothing (a stage drawn on its own, in tests).
//
// Memory: a track per (pid, hid), per (pid, dev) and per process, none past
// the track limit, which counter tracks leave to the slices (newTrack; a
// value whose track it refuses is counted under ReasonCounterTrackLimit),
// the runs in flight's events of the last horizon of log time, and the
// count of each process with runs in flight but no track (writeAt).
package counters
