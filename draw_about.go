package phasetrace

import (
	"github.com/phasetrace/phasetrace/internal/compareplan"
	"github.com/phasetrace/phasetrace/perfetto"
)

// The names of the trace's own track and of the instant on it that says
// what the trace is (about).
const (
	aboutTrack   = "phasetrace"
	aboutInstant = "conversion"
)

// about is what a trace says of itself: on a top-level track named
// "phasetrace", one instant named "conversion" at the start of the slices
// it holds, whose arguments are the version of phasetrace that wrote it,
// its inputs (each log's name and size, and the runtime's [stamp] line
// where the log has one) and, in a trace in one piece or an overview, the
// account as the Summary has it: what was read, drawn and lost, by the
// reason. In SQL:
//
//	select key, display_value from args
//	where arg_set_id = (select arg_set_id from slice where name = 'conversion')
type about struct {
	version string
	stamps  []string          // per log, its first [stamp] line ("" for none)
	names   []string          // the logs' names
	cmp     *compareplan.Plan // a comparison's: each log's side
	compare *CompareSummary   // and how the sides were aligned
}

// track declares the trace's own track on w.
func (a *about) track(w *perfetto.Writer) perfetto.Track {
	return w.Track(perfetto.Track{}, perfetto.TrackSpec{Name: aboutTrack})
}

// ownTracks declares the trace's own tracks on w, its own and the
// anomalies track (draw_anomalies.go), with the writer, first: they are
// besides the tracks the logs may have (WithMaxTracks), so that no log
// leaves them out and they take no track of a log's.
func ownTracks(w *perfetto.Writer) {
	(*about)(nil).track(w)
	w.Track(perfetto.Track{}, perfetto.TrackSpec{Name: anomaliesTrack})
}

// write draws the instant on w at ts: the provenance, and the account of
// sum when it is not nil (sum's inputs say the logs' sizes; without it
// only their names are known).
func (a *about) write(w *perfetto.Writer, ts int64, sum *Summary) {
	t := a.track(w)
	if t.IsZero() {
		return
	}
	args := []perfetto.Arg{perfetto.String("full_name", aboutInstant), perfetto.String("version", a.version)}
	if len(a.names) > 0 { // a Builder's values come from no input
		args = append(args, a.inputs(sum))
	}
	if a.compare != nil {
		args = append(args, a.compare.arg())
	}
	if sum != nil {
		args = append(args, accountArg(sum))
	}
	w.Instant(t, perfetto.Instant{Name: aboutInstant, Category: categoryAbout, TS: ts, Args: args})
}

// inputs is the logs as an array of {name, bytes, lines, stamp}.
func (a *about) inputs(sum *Summary) perfetto.Arg {
	elems := make([]perfetto.Arg, len(a.names))
	for i, name := range a.names {
		e := []perfetto.Arg{perfetto.String("name", name)}
		if sum != nil && i < len(sum.Inputs) {
			in := &sum.Inputs[i]
			e = append(e, perfetto.Int("bytes", in.Bytes), perfetto.Int("lines", in.Lines))
		}
		if i < len(a.stamps) && a.stamps[i] != "" {
			e = append(e, perfetto.String("stamp", a.stamps[i]))
		}
		if a.cmp != nil {
			e = append(e, perfetto.String("side", a.cmp.LogSide(i).String()))
		}
		elems[i] = perfetto.Dict("", e...)
	}
	return perfetto.Array("inputs", elems...)
}

// account is sum's account of the records as one dictionary argument:
// spans read, drawn, superseded and not drawn by the reason; what the
// readers lost (torn, unknown version, malformed, in over-long lines, cut
// inputs); the other records not drawn, the repairs, the moves and the
// hand-offs without an arrow, by the reason; the arrows by kind; and
// whether the logs read clean and lossless.
func accountArg(sum *Summary) perfetto.Arg {
	sp := sum.Spans
	spans := []perfetto.Arg{perfetto.Int("read", sp.Read), perfetto.Int("drawn", sp.Drawn), perfetto.Int("superseded", sp.Superseded)}
	spans = appendCounts(spans, "not_drawn", sp.NotDrawn)
	spans = appendCounts(spans, "moved", sp.Moved)
	var torn, unknown, malformed, inLong, cut int64
	for i := range sum.Inputs {
		in := &sum.Inputs[i]
		torn, unknown, malformed, inLong = torn+in.Torn, unknown+in.UnknownVersion, malformed+in.Malformed, inLong+in.InLongLines
		if in.Cut != "" {
			cut++
		}
	}
	for i := range sum.Artifacts {
		ar := &sum.Artifacts[i]
		torn, malformed = torn+ar.Torn, malformed+ar.Malformed
		if ar.Cut != "" {
			cut++
		}
	}
	lost := []perfetto.Arg{perfetto.Int("torn", torn), perfetto.Int("unknown_version", unknown), perfetto.Int("malformed", malformed),
		perfetto.Int("in_long_lines", inLong), perfetto.Int("inputs_cut", cut)}
	args := []perfetto.Arg{perfetto.Dict("spans", spans...), perfetto.Dict("lost", lost...), perfetto.Int("invocations", sum.Invocations)}
	args = appendCounts(args, "not_drawn", sum.NotDrawn)
	args = appendCounts(args, "superseded", sum.Superseded)
	args = appendCounts(args, "repaired", sum.Repaired)
	args = appendCounts(args, "moved", sum.Moved)
	args = appendCounts(args, "unlinked", sum.Unlinked)
	if len(sum.Flows) > 0 {
		flows := make([]perfetto.Arg, 0, len(sum.Flows))
		for _, k := range sum.Flows.sorted() {
			flows = append(flows, perfetto.Int(string(k), sum.Flows[k]))
		}
		args = append(args, perfetto.Dict("flows", flows...))
	}
	args = append(args, perfetto.Bool("clean", sum.Clean()), perfetto.Bool("lossless", sum.Lossless()))
	return perfetto.Dict("account", args...)
}

// appendCounts adds counts by reason as a dictionary named name, keyed by
// the reason ids in order; nothing when there are none.
func appendCounts(args []perfetto.Arg, name string, c ReasonCounts) []perfetto.Arg {
	if len(c) == 0 {
		return args
	}
	d := make([]perfetto.Arg, 0, len(c))
	for _, r := range c.sorted() {
		d = append(d, perfetto.Int(string(r), c[r]))
	}
	return append(args, perfetto.Dict(name, d...))
}
