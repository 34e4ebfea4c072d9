package processor

import (
	"errors"
	"fmt"
	"slices"

	"github.com/phasetrace/phasetrace/perfetto/check"
)

// Mismatch is one thing check and the trace processor see differently.
type Mismatch struct {
	What      string // "slices", "stat misplaced_end_event", ...
	Check     int64  // check's figure; for a stat, how often check reports it
	Processor int64  // the trace processor's figure; for a stat, its value
}

func (m Mismatch) Error() string {
	return fmt.Sprintf("%s: check %d, trace processor %d", m.What, m.Check, m.Processor)
}

func (m Mismatch) Unwrap() error { return ErrDisagree }

// Compare lists what check's reading of a trace and the trace processor's
// import of it see differently: the figures of Result, then the problems
// (see the package documentation for which). It lists nothing for problems
// both report; Agree refuses those too.
func Compare(tr *check.Trace, r *Result) []Mismatch {
	var ms []Mismatch
	differ := func(what string, c, p int64) {
		if c != p {
			ms = append(ms, Mismatch{What: what, Check: c, Processor: p})
		}
	}
	f := Figures(tr)
	differ("slices", f.Slices, r.Slices)
	differ("unended slices", f.Unended, r.Unended)
	differ("max depth", f.MaxDepth, r.MaxDepth)
	differ("sum of slice ts", f.SliceSums.TS, r.SliceSums.TS)
	differ("sum of slice dur", f.SliceSums.Dur, r.SliceSums.Dur)
	differ("sum of slice depth", f.SliceSums.Depth, r.SliceSums.Depth)
	differ("sum of slice ts by depth", f.SliceSums.TSDepth, r.SliceSums.TSDepth)
	differ("flows", f.Flows, r.Flows)
	differ("sum of flow ends", f.FlowSum, r.FlowSum)
	differ("counter values", f.Counters, r.Counters)
	differ("sum of counter ts", f.CounterSum, r.CounterSum)
	// Tracks are not compared: the trace processor makes tracks of its
	// own (for processes, for threads it learns of) and merges sibling
	// track descriptors that share a name or merge key into common tracks,
	// split again where their slices overlap, so its count depends on the
	// events' timing; check keeps one track per TrackDescriptor.

	reported := map[string]int64{}
	for _, p := range tr.Problems {
		reported[p.Name]++
	}
	var names []string
	for name := range reported {
		if !checkOnly[name] {
			names = append(names, name)
		}
	}
	for _, s := range r.Stats {
		if s.Severity == "error" || s.Severity == "data_loss" || sharedStats[s.Name] {
			names = append(names, s.Name)
		}
	}
	slices.Sort(names)
	for _, name := range slices.Compact(names) {
		if c, p := reported[name], r.Value(name); (c > 0) != (p > 0) {
			ms = append(ms, Mismatch{What: "stat " + name, Check: c, Processor: p})
		}
	}
	return ms
}

// Agree returns nil when check and the trace processor agree on a trace
// and neither reports a problem with it, which is what a test of a trace
// that must load clean asks. Otherwise it returns an errors.Join of the
// trace processor's problems (wrapping ErrProblems), check's (wrapping
// check.ErrProblems) and each Mismatch (wrapping ErrDisagree).
func Agree(tr *check.Trace, r *Result) error {
	errs := []error{r.Err(), tr.Err()}
	for _, m := range Compare(tr, r) {
		errs = append(errs, m)
	}
	return errors.Join(errs...)
}

// Figures computes from check's reading the figures Result holds (its
// Stats, Problems and Tracks aside), for Compare.
func Figures(tr *check.Trace) *Result {
	f := &Result{MaxDepth: -1}
	for _, s := range tr.Slices {
		ts, depth := s.TS%Modulus, int64(s.Depth)
		f.Slices++
		if s.Dur == -1 {
			f.Unended++
		}
		f.MaxDepth = max(f.MaxDepth, depth)
		f.SliceSums.TS += ts
		f.SliceSums.Dur += s.Dur % Modulus
		f.SliceSums.Depth += depth
		f.SliceSums.TSDepth += ts * depth % Modulus
	}
	for _, fl := range tr.Flows {
		f.Flows++
		f.FlowSum += tr.Slices[fl.From].TS%Modulus + 2*(tr.Slices[fl.To].TS%Modulus)
	}
	for _, c := range tr.Counters {
		f.Counters++
		f.CounterSum += c.TS % Modulus
	}
	return f
}

// sharedStats lists the problem names of package check that are stats of
// the trace processor too (v58.2), whatever their severity there. Compare
// expects such a stat above zero exactly when check reports the problem.
var sharedStats = map[string]bool{
	"clock_sync_failure_no_path":                         true,
	"slice_max_depth_exceeded":                           true,
	"clock_sync_failure_unknown_source_clock":            true,
	"clock_sync_mixed_clock_sources":                     true,
	"clock_sync_unrelatable_clock_domains":               true,
	"flow_end_without_start":                             true,
	"flow_invalid_id":                                    true,
	"incremental_state_cleared_missing_sequence_id":      true,
	"interned_data_missing_sequence_id":                  true,
	"interned_data_skipped_incremental_state_invalid":    true,
	"interned_data_tokenizer_errors":                     true,
	"invalid_clock_snapshots":                            true,
	"misplaced_end_event":                                true,
	"packet_skipped_seq_needs_incremental_state_invalid": true,
	"track_descriptor_missing_uuid":                      true,
	"track_event_counter_invalid_track_uuid":             true,
	"track_event_counter_missing_value":                  true,
	"track_event_missing_sequence_id":                    true,
	"track_event_missing_timestamp":                      true,
	"track_event_parser_errors":                          true,
	"track_event_track_hierarchy_loop":                   true,
}

// checkOnly lists the problem names of package check that are not stats of
// the trace processor (v58.2). Compare does not look for them in the
// stats; what the trace processor does instead shows, if anywhere, in the
// figures.
var checkOnly = map[string]bool{
	"flow_unterminated":                  true, // keeps the arrows it has
	"flow_without_destination":           true, // no arrow
	"packet_unknown_field":               true, // reads it as what its schema says, or drops what holds it
	"trace_unknown_field":                true, // skips it, unless the file then sniffs as another format (pprof)
	"track_event_extra_counter_values":   true, // adds them to counter tracks, or drops the event
	"interned_data_unknown_iid":          true, // counts interned_data_tokenizer_errors
	"slice_not_ended":                    true, // keeps the slice with dur -1
	"track_descriptor_conflict":          true, // track_descriptor_conflicting_reservation, for fewer fields
	"track_descriptor_unknown_parent":    true, // track_hierarchy_missing_uuid; drops the track's events
	"track_event_missing_track":          true, // puts the event on its default track
	"track_event_negative_timestamp":     true, // track_event_invalid_timestamp; drops the event
	"track_event_slice_on_counter_track": true, // keeps the slice
	"track_event_unknown_track":          true, // makes a track for the uuid
}
