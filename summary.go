package phasetrace

import (
	"fmt"
	"io"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"

	"github.com/phasetrace/phasetrace/reduce"
)

// Summary is what a conversion read, wrote, placed and lost. A trace in one
// piece, or an overview, carries the same account: the "conversion"
// instant on its "phasetrace" track.
//
// Bad data never fails a conversion. Each bad record is handled on its
// own, counted under a Reason with the file:line of the first few, and
// marked on its slice where one is drawn:
//
//   - Repaired, only where the repair is exact and small. A device phase
//     whose logged boundary lies within the runtime's own ns truncation
//     (2 ns) of its neighbour's is clamped to it. The slice keeps
//     logged_device_ts, logged_device_dur and repair, and its bound grows
//     by the shift.
//   - Moved to an overflow lane beside its track, "<track> (overflow N)",
//     with an overflow_reason argument. That happens when a slice cannot
//     nest: it partly overlaps another, it nests deeper than the trace
//     processor keeps (512 levels), or it lands among slices written long
//     before. A span that fits on none of a track's 64 overflow lanes is
//     not drawn; one example per track gives the track's count.
//   - Left out: a span whose interval is not one (negative duration or
//     host time, ts + dur past the int64 range), a repeat (see
//     ReasonRepeatedCapture), a span of a track past the track limit
//     (WithMaxTracks), or a device span with no evidence to place it. So is
//     a device span whose offsets its run's host stages cannot hold even
//     alone; the rest of its run is placed without it.
//   - Set aside: an anchor rather than the spans it would move. The
//     trace's wall clock is the largest set of wall-clock anchors that
//     agree within a second; the others, and any before 1970, are set
//     aside. A remote machine whose wall-clock anchor would move its spans
//     further than two machines' clocks can be apart is drawn at its own
//     times, its slices marked host_placement=unplaced (HostSummary says
//     why). A device anchor joined to the next record on its line is set
//     aside when its device's other anchors contradict its dev_freq.
//
// A span or bind phase line whose last attribute the end of an
// unterminated log may have cut is drawn, with maybe_cut_by_log_end naming
// that attribute. A log whose compressed stream is cut or damaged is read
// up to the damage (InputSummary.Cut).
//
// The account is exact. Spans.Check verifies that every complete span read
// is drawn, superseded or counted under a reason. Drawn means in the
// trace: a span the trace writer refuses is counted under its reason.
// Clean says whether the logs read clean, and Lossless whether, besides,
// nothing was repaired.
//
// A Summary marshals to JSON (strace2perfetto -summary-json) and decodes
// back into an equal Summary. Every key is a snake_case identifier. Each
// count by reason is a list sorted by Reason id (ReasonCounts), the arrows
// a list sorted by FlowKind id (FlowCounts). A "text" beside an id is for
// people; on decode it is derived from the id.
type Summary struct {
	Inputs    []InputSummary    `json:"inputs"`
	Artifacts []ArtifactSummary `json:"artifacts,omitempty"`
	Output    OutputSummary     `json:"output"`
	Devices   []DeviceSummary   `json:"devices,omitempty"`
	// Hosts says, per remote machine, how its logs were placed on the
	// dispatching host's axis (remote workers: see WithRemoteWorker).
	Hosts []HostSummary `json:"hosts,omitempty"`
	// Compare says how a comparison (Compare) put its two sides on one
	// axis; nil for a conversion.
	Compare *CompareSummary `json:"compare,omitempty"`
	// Window is the window drawn (WithWindow), nil without one.
	Window *WindowSummary `json:"window,omitempty"`
	// Split says what each part of a split trace holds (WithSplit), nil
	// for a trace in one piece. Output then counts the parts together.
	Split *SplitSummary `json:"split,omitempty"`
	// WallTime says whether wall time is recoverable: some process wrote a
	// [CLOCK_ANCHOR] v=1 record, written to the trace as a REALTIME clock
	// snapshot.
	WallTime    bool  `json:"wall_time"`
	WallAnchors int64 `json:"wall_anchors"`
	// Invocations counts the (pid, inv) runs drawn (with a slice in the
	// trace: not those over the track limit, say); Incomplete those
	// whose root span never came (drawn as found).
	Invocations int64 `json:"invocations"`
	Incomplete  int64 `json:"incomplete_invocations"`
	// Flows counts the arrows drawn — both ends written — by kind;
	// Unlinked the hand-offs drawn without an arrow, by the reason. An
	// arrow with an end not drawn is counted in Unlinked, and its id is
	// left out of the other end. The exception is an end the writer
	// refuses after it wrote the other: that id stays, alone, and a note
	// says how many.
	Flows    FlowCounts   `json:"flows,omitempty"`
	Unlinked ReasonCounts `json:"unlinked,omitempty"`
	// Spans accounts for every complete span record the readers returned:
	// each is drawn (written to the trace), superseded or not drawn for a
	// named reason.
	Spans SpanAccount `json:"spans"`
	// Repaired counts slices drawn after an exact, small repair of their
	// record, by the repair; each such slice carries its logged values.
	Repaired ReasonCounts `json:"repaired,omitempty"`
	// Moved counts slices drawn on an overflow lane beside their track
	// because they could not nest where they belong, by the reason; each
	// carries the reason as its overflow_reason argument.
	Moved ReasonCounts `json:"moved,omitempty"`
	// NotDrawn counts the other complete records that are not in the
	// trace (bind phase lines, host_phase_records entries, clock anchors
	// set aside), by the reason; Superseded those drawn from another source
	// instead. Together with the readers' own losses and Spans nothing is
	// unaccounted.
	NotDrawn   ReasonCounts `json:"not_drawn,omitempty"`
	Superseded ReasonCounts `json:"superseded,omitempty"`
	// CountersNotDrawn counts, by the reason, the counter values not
	// written (their track over the track limit) and the runs left out of
	// their process's runs in flight (see OutputSummary.Counters).
	CountersNotDrawn ReasonCounts `json:"counters_not_drawn,omitempty"`
	// Anomalies counts the instants of the anomalies track, by kind.
	Anomalies AnomalyCounts `json:"anomalies"`
	// Examples says where the first few records of each reason above are,
	// and what was wrong with them.
	Examples []Example `json:"examples,omitempty"`
	// Notes are conditions worth a look (an inconsistency between clock
	// anchors and containment, a dispatch that matched no submit, ...),
	// the first few of each kind.
	Notes []string `json:"notes,omitempty"`
}

// AnomalyCounts counts the instants of a trace's "anomalies" track. Each
// instant marks a run that deserves a look, and says why in its "why"
// argument:
//
//   - a slow run: a warm chip.run more than analysis.SlowMADs median
//     absolute deviations above its callable's median in its process (the
//     rule is analysis.Typical's);
//   - a cold bind: the chip.run.bind of a callable's first run in its
//     process;
//   - a wide bound: a run whose device slices were drawn with a bound over
//     WideBound.
type AnomalyCounts struct {
	SlowRuns   int64 `json:"slow_runs"`
	ColdBinds  int64 `json:"cold_binds"`
	WideBounds int64 `json:"wide_bounds"`
}

// WindowSummary is the window a conversion drew, in trace ns: the slices
// that meet [Start, End) (see Window), an open side math.MinInt64 or
// math.MaxInt64. FirstSlice is where bounds after the first slice count
// from.
type WindowSummary struct {
	Start      int64 `json:"start_ns"`
	End        int64 `json:"end_ns"`
	FirstSlice int64 `json:"first_slice_ns"`
}

// SplitSummary is what a split trace (WithSplit) wrote: its parts, in
// order, and its overview.
type SplitSummary struct {
	MaxSlices int           `json:"max_slices"`
	Parts     []PartSummary `json:"parts"`
	// Overview is what the overview holds: a slice per invocation, one per
	// part on the parts track, and the counters.
	Overview OutputSummary `json:"overview"`
}

// PartSummary is one part of a split trace.
type PartSummary struct {
	Part        int    `json:"part"` // from 1
	Name        string `json:"name"`
	Slices      int64  `json:"slices"` // as its Output counts them
	Invocations int64  `json:"invocations"`
	// Start and End are the trace time it covers, [Start, End] in ns: its
	// stretch of time (see WithSplit) as far as its slices reach — the
	// parts' stretches do not overlap, and a late slice may lie outside
	// it — or, for a part of late slices only, their extent (0 and 0 for a
	// part without a slice). The overview's parts track shows the same.
	Start  int64         `json:"start_ns"`
	End    int64         `json:"end_ns"`
	Output OutputSummary `json:"output"`
}

// SpanAccount accounts for the complete span records read:
// Read == Drawn + Superseded + the sum of NotDrawn.
type SpanAccount struct {
	Read       int64 `json:"read"`
	Drawn      int64 `json:"drawn"`
	Superseded int64 `json:"superseded,omitempty"` // bind segments the host_phase_records artifact draws instead
	// Moved counts, by the reason, the spans drawn on an overflow lane
	// beside their track rather than on it: a part of Drawn.
	Moved ReasonCounts `json:"moved,omitempty"`
	// NotDrawn counts the spans left out of the trace, by the reason.
	NotDrawn ReasonCounts `json:"not_drawn,omitempty"`
}

// Check verifies the account: every span read is drawn, superseded or
// counted under a reason.
func (a SpanAccount) Check() error {
	n := a.Drawn + a.Superseded
	for _, v := range a.NotDrawn {
		n += v
	}
	if n != a.Read {
		return fmt.Errorf("phasetrace: %d spans read, but %d drawn + %d superseded + %d not drawn", a.Read, a.Drawn, a.Superseded, n-a.Drawn-a.Superseded)
	}
	if m := a.moved(); m > a.Drawn {
		return fmt.Errorf("phasetrace: %d spans drawn, of which %d moved to overflow lanes", a.Drawn, m)
	}
	return nil
}

func (a SpanAccount) moved() int64 {
	var n int64
	for _, v := range a.Moved {
		n += v
	}
	return n
}

// Example is where a record that was repaired, moved, set aside or not
// drawn came from.
type Example struct {
	Reason Reason `json:"reason"` // with its Text beside it in JSON
	At     string `json:"at"`     // file:line
	Detail string `json:"detail,omitempty"`
}

// InputSummary is what the reader kept of one log. Records counts its
// records by their kind in the log grammar: "span", "wall-anchor",
// "device-anchor", "bind-phase", ...
type InputSummary struct {
	Name           string           `json:"name"`
	Bytes          int64            `json:"bytes"`
	Lines          int64            `json:"lines"`
	Records        map[string]int64 `json:"records"`
	Torn           int64            `json:"torn"`
	UnknownVersion int64            `json:"unknown_version"`
	Malformed      int64            `json:"malformed"`
	LongLines      int64            `json:"long_lines"`
	InLongLines    int64            `json:"heads_in_long_lines"`
	// Joined counts the records read whole although the next record
	// followed on their line (two ranks writing one stream); MaybeCut the
	// last record of a log without a final line end, read with its last
	// attribute marked as possibly cut. Neither is a loss.
	Joined   int64 `json:"joined,omitempty"`
	MaybeCut int64 `json:"maybe_cut,omitempty"`
	// Cut says why the log ended early when its stream stopped or was
	// damaged before its end (a .gz cut in its data or its trailer, or
	// whose checksum does not match): the records before the cut are read
	// and converted, and the cut is a loss. CutAfter is where: the bytes
	// of data (decompressed) read before it.
	Cut      string `json:"cut,omitempty"`
	CutAfter int64  `json:"cut_after_bytes,omitempty"`
	// Problems are the reader's first problems, with their positions;
	// ProblemsOmitted counts the ones after them.
	Problems        []string `json:"problems,omitempty"`
	ProblemsOmitted int64    `json:"problems_omitted,omitempty"`
}

// ArtifactSummary is what was read of one artifact.
type ArtifactSummary struct {
	Name      string `json:"name"`
	Kind      string `json:"kind"` // "host_phase_records" or "calibration"
	Items     int64  `json:"items"`
	Torn      int64  `json:"torn,omitempty"`
	Malformed int64  `json:"malformed,omitempty"`
	Skipped   int64  `json:"skipped,omitempty"` // invalid calibration samples, passes without a bind
	Note      string `json:"note,omitempty"`
	Cut       string `json:"cut,omitempty"` // why the artifact ended early, as InputSummary.Cut
}

// OutputSummary counts what the trace holds.
type OutputSummary struct {
	Bytes    int64 `json:"bytes"`
	Packets  int64 `json:"packets"`
	Tracks   int   `json:"tracks"`
	Slices   int64 `json:"slices"`
	Instants int64 `json:"instants"`
	Flows    int64 `json:"flow_ids"` // flow ids on events: an arrow has two
	// Counters counts the counter values, each on a counter track under
	// its process (the README's Counters lists the tracks).
	Counters int64 `json:"counter_values"`
}

// DeviceSummary says how one device clock domain's spans were placed.
type DeviceSummary struct {
	Pid       int32 `json:"pid"`
	Dev       int32 `json:"dev"`
	Anchors   int64 `json:"anchors"`
	Runs      int64 `json:"runs"`
	Aligned   int64 `json:"aligned"`
	Contained int64 `json:"contained"`
	Unaligned int64 `json:"unaligned"`
	// Reasons counts the unaligned spans by why they are,
	// ContainedReasons the spans only contained; a span is counted under
	// each of its reasons.
	Reasons          ReasonCounts `json:"reasons,omitempty"`
	ContainedReasons ReasonCounts `json:"contained_reasons,omitempty"`
	// Bound is the distribution of the bounds of the device phases (and of
	// device_wall where a raw buffer gave its true start); WallBound that
	// of device_wall read from a log, which is the runtime's bracket at the
	// origin: its true start lies somewhere before it, so its bound is wider.
	Bound      BoundStats `json:"bound_ns"`
	WallBound  BoundStats `json:"device_wall_bound_ns"`
	Inconsists int64      `json:"inconsistent_runs,omitempty"`
	// AnchorsSetAside are the clock anchors placement set aside, each
	// because it conflicted with the device's other anchors (one line of
	// the summary each); Conflicts the runs whose evidence conflicted all
	// the same, counted by the two kinds of evidence in conflict.
	AnchorsSetAside []AnchorSetAside    `json:"anchors_set_aside,omitempty"`
	Conflicts       []PlacementConflict `json:"conflicts,omitempty"`
}

// AnchorSetAside is a device clock anchor set aside (reduce.SetAside):
// where it is, its counter reading, the evidence it conflicted with, and
// how many runs were placed without it among their anchors.
type AnchorSetAside struct {
	At       string `json:"at"`
	DevCyc   uint64 `json:"dev_cyc"`
	Conflict string `json:"conflict"`
	Runs     int64  `json:"runs"`
}

// PlacementConflict counts the runs of a device whose placement evidence
// conflicted between the same two kinds of evidence (Between), and says
// what became of them (Outcome) and which was the first.
type PlacementConflict struct {
	Between string `json:"between"`
	Outcome string `json:"outcome"`
	Runs    int64  `json:"runs"`
	First   string `json:"first"`
}

// BoundStats is the distribution of the published placement bounds of the
// spans drawn, in ns: a slice's bound is the most its drawn start can be
// from where the span truly started. Min and Max are exact; Median and P90
// are counted in buckets 1/32 of a power of two wide, and given as the
// bucket's upper edge: never below the true quantile, and less than 3.2%
// above it. Memory does not grow with the spans counted.
type BoundStats struct {
	Count  int64 `json:"count"`
	Min    int64 `json:"min"`
	Median int64 `json:"median"`
	P90    int64 `json:"p90"`
	Max    int64 `json:"max"`

	hist *[boundBuckets]int64
}

// Bound buckets: 0..31 exactly, then 32 per power of two.
const (
	boundSub     = 32
	boundBuckets = boundSub + (64-5)*boundSub
)

func boundBucket(v uint64) int {
	if v < boundSub {
		return int(v)
	}
	k := bits.Len64(v) // ≥ 6
	return boundSub + (k-6)*boundSub + int(v>>(k-6))&(boundSub-1)
}

// boundEdge is the largest value of bucket i.
func boundEdge(i int) uint64 {
	if i < boundSub {
		return uint64(i)
	}
	k := (i-boundSub)/boundSub + 6
	sub := uint64(i-boundSub) % boundSub
	lo := (boundSub + sub) << (k - 6)
	return lo + (1 << (k - 6)) - 1
}

func (b *BoundStats) add(v int64) {
	if v < 0 {
		v = 0
	}
	if b.Count == 0 || v < b.Min {
		b.Min = v
	}
	b.Max = max(b.Max, v)
	b.Count++
	if b.hist == nil {
		b.hist = new([boundBuckets]int64)
	}
	b.hist[boundBucket(uint64(v))]++
}

func (b *BoundStats) finish() {
	if b.Count == 0 {
		return
	}
	q := func(f int64) int64 {
		need := (b.Count*f + 99) / 100
		var n int64
		for i, c := range b.hist {
			n += c
			if n >= need {
				return min(int64(boundEdge(i)), b.Max)
			}
		}
		return b.Max
	}
	b.Median, b.P90 = q(50), q(90)
}

func (s *Summary) flow(kind FlowKind) {
	if s.Flows == nil {
		s.Flows = FlowCounts{}
	}
	s.Flows[kind]++
}

// maxNotes bounds the notes kept per kind.
const maxNotes = 8

func (s *Summary) note(kind string, counts map[string]int, format string, args ...any) {
	counts[kind]++
	if counts[kind] <= maxNotes {
		s.Notes = append(s.Notes, fmt.Sprintf(format, args...))
	}
}

// writeInputs writes WriteText's lines of the logs read.
func (s *Summary) writeInputs(b *strings.Builder) {
	for _, in := range s.Inputs {
		fmt.Fprintf(b, "read %s: %s, %s, %s, %s", in.Name, count(in.Lines, "line"), count(in.Records["span"], "span"),
			count(in.Records["wall-anchor"]+in.Records["device-anchor"], "clock anchor"), count(in.Records["bind-phase"], "bind phase line"))
		if lost := in.Torn + in.UnknownVersion + in.Malformed + in.InLongLines; lost > 0 {
			fmt.Fprintf(b, "; lost %s:", count(lost, "record"))
			sep := " "
			for _, l := range []struct {
				n    int64
				what string
			}{{in.Torn, "torn (cut while being written)"}, {in.UnknownVersion, "of an unknown version"}, {in.Malformed, "malformed"}, {in.InLongLines, "in " + count(in.LongLines, "over-long line")}} {
				if l.n > 0 {
					fmt.Fprintf(b, "%s%d %s", sep, l.n, l.what)
					sep = ", "
				}
			}
		}
		if in.Joined > 0 {
			fmt.Fprintf(b, "; %s read whole though the next record followed on the line", count(in.Joined, "record"))
		}
		if in.MaybeCut > 0 {
			b.WriteString("; the last record's last attribute may be cut (no line end)")
		}
		if in.Cut != "" {
			fmt.Fprintf(b, "; cut: %s; the records before it are kept", in.Cut)
		}
		b.WriteString("\n")
		for _, p := range in.Problems {
			fmt.Fprintf(b, "  %s\n", p)
		}
		if in.ProblemsOmitted > 0 {
			fmt.Fprintf(b, "  ... and %d more (the first %d are listed)\n", in.ProblemsOmitted, len(in.Problems))
		}
	}
}

// writeArtifacts writes WriteText's lines of the artifacts read.
func (s *Summary) writeArtifacts(b *strings.Builder) {
	for _, a := range s.Artifacts {
		item := "item"
		switch a.Kind {
		case "host_phase_records":
			item = "pass"
		case "calibration":
			item = "sample"
		}
		fmt.Fprintf(b, "read %s (%s): %s", a.Name, a.Kind, count(a.Items, item))
		if a.Torn+a.Malformed+a.Skipped > 0 {
			fmt.Fprintf(b, ", %d torn, %d malformed, %d skipped", a.Torn, a.Malformed, a.Skipped)
		}
		if a.Note != "" {
			fmt.Fprintf(b, " (%s)", a.Note)
		}
		if a.Cut != "" {
			fmt.Fprintf(b, "; cut: %s; the items before it are kept", a.Cut)
		}
		b.WriteString("\n")
	}
}

// WriteText writes a short human summary: what was read, what was lost and
// why, how device spans were placed.
func (s *Summary) WriteText(w io.Writer) error {
	var b strings.Builder
	s.writeInputs(&b)
	s.writeArtifacts(&b)
	var arrows int64
	for _, n := range s.Flows {
		arrows += n
	}
	fmt.Fprintf(&b, "wrote %s", count(s.Invocations, "invocation"))
	if s.Incomplete > 0 {
		fmt.Fprintf(&b, " (%d without their root span)", s.Incomplete)
	}
	slices := count(s.Output.Slices, "slice")
	if other := s.Output.Slices - s.Spans.Drawn; s.Spans.Drawn > 0 && other > 0 {
		// The slices that are not spans of the log: derived effective
		// windows, bind phase lines, host_phase_records passes.
		slices += fmt.Sprintf(" (%d of spans, %d of other records: effective windows, bind phase lines, passes)", s.Spans.Drawn, other)
	}
	counters := count(s.Output.Counters, "counter value")
	if sp := s.Split; sp != nil && sp.Overview.Counters > 0 {
		counters = count(s.Output.Counters+sp.Overview.Counters, "counter value") + " (in the overview)"
	}
	instants := count(s.Output.Instants, "instant")
	if an := s.Anomalies; s.Output.Instants > 0 {
		instants += fmt.Sprintf(" (the conversion's own; anomalies: %s, %s, %s)", count(an.SlowRuns, "slow run"), count(an.ColdBinds, "cold bind"), count(an.WideBounds, "wide bound"))
	}
	fmt.Fprintf(&b, ": %s, %s, %s, %s, %s, %d bytes\n",
		count(int64(s.Output.Tracks), "track descriptor"), slices, instants, count(arrows, "flow"), counters, s.Output.Bytes)
	for _, k := range s.Flows.byText() {
		fmt.Fprintf(&b, "  flows %s: %d\n", k, s.Flows[k])
	}
	if wd := s.Window; wd != nil {
		// Open is math.MinInt64 at the start, math.MaxInt64 at the end:
		// a start at math.MaxInt64 is a time.
		bound := func(v, open int64) string {
			if v == open {
				return "open"
			}
			return itoa(v)
		}
		fmt.Fprintf(&b, "  window [%s, %s) ns, the first slice at %d ns: %s outside it\n", bound(wd.Start, math.MinInt64), bound(wd.End, math.MaxInt64), wd.FirstSlice, count(s.Spans.NotDrawn[ReasonOutsideWindow], "span"))
	}
	if sp := s.Split; sp != nil {
		fmt.Fprintf(&b, "  split into %s of at most %s (a run larger than that in a part of its own)", count(int64(len(sp.Parts)), "part"), count(int64(sp.MaxSlices), "slice"))
		if n := len(sp.Parts); n > 0 {
			fmt.Fprintf(&b, " (%s … %s)", sp.Parts[0].Name, sp.Parts[n-1].Name)
		}
		fmt.Fprintf(&b, ": %s across parts\n", count(s.Unlinked[ReasonArrowAcrossParts], "arrow"))
		o := sp.Overview
		fmt.Fprintf(&b, "  overview: %s (one per invocation and one per part), %s, %d bytes\n", count(o.Slices, "slice"), count(o.Counters, "counter value"), o.Bytes)
	}
	if len(s.Devices) > 0 {
		b.WriteString("device spans (bound: the most a drawn span's start can be from where it truly started):\n")
	}
	for _, d := range s.Devices {
		dev := "dev=" + strconv.FormatInt(int64(d.Dev), 10)
		if d.Dev < 0 {
			dev = "dev unnamed (device_wall names no dev=)"
		}
		fmt.Fprintf(&b, "  pid=%d %s: %s, %s; %d aligned, %d contained, %d unaligned",
			d.Pid, dev, count(d.Runs, "run"), count(d.Anchors, "clock anchor"), d.Aligned, d.Contained, d.Unaligned)
		b.WriteString("\n")
		if d.Bound.Count > 0 {
			fmt.Fprintf(&b, "    phases: bound min %d ns, median %d ns, p90 %d ns, max %d ns\n", d.Bound.Min, d.Bound.Median, d.Bound.P90, d.Bound.Max)
		}
		if d.WallBound.Count > 0 {
			fmt.Fprintf(&b, "    device_wall (the runtime's bracket: its true start lies before the logged one): bound min %d ns, median %d ns, p90 %d ns, max %d ns\n",
				d.WallBound.Min, d.WallBound.Median, d.WallBound.P90, d.WallBound.Max)
		}
		for _, r := range d.Reasons.byText() {
			fmt.Fprintf(&b, "    %d spans: %s\n", d.Reasons[r], r.Text())
		}
		for _, r := range d.ContainedReasons.byText() {
			fmt.Fprintf(&b, "    %d spans: contained: %s\n", d.ContainedReasons[r], r.Text())
		}
		for _, a := range d.AnchorsSetAside {
			fmt.Fprintf(&b, "    clock anchor at %s (dev_cyc=%d) set aside: it conflicts with %s; %s placed without it\n", a.At, a.DevCyc, a.Conflict, count(a.Runs, "run"))
		}
		for _, c := range d.Conflicts {
			fmt.Fprintf(&b, "    %s: %s in conflict, %s (the first: %s)\n", count(c.Runs, "run"), c.Between, c.Outcome, c.First)
		}
	}
	writeHosts(&b, s.Hosts)
	s.Compare.writeText(&b)
	if s.WallTime {
		fmt.Fprintf(&b, "wall time: known (%s)\n", count(s.WallAnchors, "wall-clock anchor"))
	} else {
		b.WriteString("wall time: unknown (no [CLOCK_ANCHOR] v=1 record)\n")
	}
	fmt.Fprintf(&b, "spans: %d read, %d drawn", s.Spans.Read, s.Spans.Drawn)
	if m := s.Spans.moved(); m > 0 {
		fmt.Fprintf(&b, " (%d of them on overflow lanes)", m)
	}
	if s.Spans.Superseded > 0 {
		fmt.Fprintf(&b, ", %d superseded by host_phase_records", s.Spans.Superseded)
	}
	b.WriteString("\n")
	writeCounts(&b, "span not drawn", s.Spans.NotDrawn, s.Examples)
	writeCounts(&b, "repaired", s.Repaired, s.Examples)
	writeCounts(&b, "moved to an overflow lane", s.Moved, s.Examples)
	writeCounts(&b, "not drawn", s.NotDrawn, s.Examples)
	writeCounts(&b, "superseded", s.Superseded, nil)
	writeCounts(&b, "counter not drawn", s.CountersNotDrawn, s.Examples)
	writeCounts(&b, "hand-off without an arrow", s.Unlinked, nil)
	for _, n := range s.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// count is "1 thing" or "n things".
func count(n int64, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return strconv.FormatInt(n, 10) + " " + thing + "s"
}

// writeCounts writes one line per reason, with the examples of it.
func writeCounts(b *strings.Builder, what string, counts ReasonCounts, examples []Example) {
	for _, k := range counts.byText() {
		fmt.Fprintf(b, "%s: %d %s\n", what, counts[k], k.Text())
		for _, e := range examples {
			if e.Reason != k {
				continue
			}
			fmt.Fprintf(b, "  %s", e.At)
			if e.Detail != "" {
				fmt.Fprintf(b, ": %s", e.Detail)
			}
			b.WriteString("\n")
		}
	}
}

// Lossless reports whether every record read reached the trace as it was
// logged: the logs read clean (Clean), and the converter repaired nothing.
func (s *Summary) Lossless() bool { return s.Clean() && len(s.Repaired) == 0 }

// Clean reports whether the logs read clean: no input was cut, the readers
// lost nothing, and the converter dropped, set aside or moved nothing. It
// allows what Lossless does not, the exact repairs (Repaired) of the
// runtime's own ns truncation, which any log of the runtime may need where
// two device phases abut. (Bind segments superseded by the
// host_phase_records artifact are not a loss either, nor are the records
// outside a window asked for: ReasonOutsideWindow and the like, see
// WithWindow.)
func (s *Summary) Clean() bool {
	for _, in := range s.Inputs {
		if in.Torn+in.UnknownVersion+in.Malformed+in.InLongLines > 0 || in.Cut != "" {
			return false
		}
	}
	for _, a := range s.Artifacts {
		if a.Torn+a.Malformed+a.Skipped > 0 || a.Cut != "" {
			return false
		}
	}
	return !lost(s.Spans.NotDrawn) && !lost(s.NotDrawn) && len(s.Moved) == 0
}

// lost reports whether c counts records under a reason that is a loss:
// any but those outside a window asked for.
func lost(c ReasonCounts) bool {
	for r, n := range c {
		if n != 0 && !r.outsideWindow() {
			return true
		}
	}
	return false
}

// HostSummary says how one remote machine's logs were placed on the
// dispatching host's axis.
type HostSummary struct {
	Machine string   `json:"machine"`
	Inputs  []string `json:"inputs"`
	// Method is "causal" (by the tasks it ran, which prove its runs served
	// them), "wall" (by its wall-clock anchor: no bound) or "unplaced".
	Method    string `json:"method"`
	Transport string `json:"transport,omitempty"`
	// Workers are the worker_ids it served; Tasks the tasks fitted.
	Workers []int64 `json:"workers,omitempty"`
	Tasks   int     `json:"tasks,omitempty"`
	// OffsetNs is the dispatching host's clock less this machine's, at its
	// first task; RatePPB the rate error the map converts with, within
	// [RateLo, RateHi] (ppb): dispatching-host ns per remote ns, less 1,
	// so positive when the remote clock runs slow (a clock 30 ppm fast is
	// −29 999 ppb). The text summary says it the other way: how fast the
	// remote clock runs.
	OffsetNs int64 `json:"offset_ns,omitempty"`
	RatePPB  int64 `json:"rate_ppb,omitempty"`
	RateLo   int64 `json:"rate_lo_ppb,omitempty"`
	RateHi   int64 `json:"rate_hi_ppb,omitempty"`
	// LimitNs is the information limit: the smallest forward plus the
	// smallest return latency. No bound can be below half of it.
	LimitNs int64 `json:"information_limit_ns,omitempty"`
	// WallShiftNs is what its wall-clock anchor would have moved it by;
	// WallDisagreeNs how far that is from the causal offset, at its first
	// or its last task, whichever is farther.
	WallShiftNs    int64 `json:"wall_shift_ns,omitempty"`
	WallDisagreeNs int64 `json:"wall_disagrees_by_ns,omitempty"`
	// Drawn counts the slices of its spans in the trace (at its own times
	// when Method is "unplaced").
	Drawn int64 `json:"spans_drawn"`
	// Pids are the pids given trace pids of their own, OS pid → trace pid.
	Pids map[int32]int32 `json:"pids,omitempty"`
	// Bound is the distribution of the bounds of its spans drawn.
	Bound BoundStats `json:"bound_ns"`
	// Reason says, when it is not placed by causality, why not: one of
	// the ReasonHost… values (stable, for programs); Note says it in
	// words, with the figures.
	Reason Reason `json:"reason,omitempty"`
	Note   string `json:"note,omitempty"`
}

// writeHosts writes how each remote machine was placed.
func writeHosts(b *strings.Builder, hosts []HostSummary) {
	if len(hosts) == 0 {
		return
	}
	b.WriteString("remote machines (on the trace's axis: the dispatching host's clock, else the first log's; bound: the most a drawn instant can be from where it truly was):\n")
	for _, h := range hosts {
		fmt.Fprintf(b, "  %s (%s): %s", h.Machine, strings.Join(h.Inputs, ", "), h.Method)
		switch {
		case h.Method == reduce.HostCausal.String():
			fmt.Fprintf(b, " (%s transport), worker %s, %s\n", h.Transport, joinInts(h.Workers), count(int64(h.Tasks), "task"))
			// RatePPB is positive when the remote clock runs slow.
			way, r, lo, hi := "slow", h.RatePPB, h.RateLo, h.RateHi
			if r < 0 {
				way, r, lo, hi = "fast", -r, -hi, -lo
			}
			fmt.Fprintf(b, "    offset %d ns, its clock %s ppm %s against the dispatching host's (the tasks allow %s to %s ppm %s), information limit %d ns (the least forward + return latency)\n",
				h.OffsetNs, ppm(r), way, ppm(lo), ppm(hi), way, h.LimitNs)
			if h.Bound.Count > 0 {
				fmt.Fprintf(b, "    bound min %d ns, median %d ns, p90 %d ns, max %d ns\n", h.Bound.Min, h.Bound.Median, h.Bound.P90, h.Bound.Max)
			}
			if h.WallShiftNs != 0 {
				fmt.Fprintf(b, "    its wall-clock anchor would have put it up to %d ns away\n", h.WallDisagreeNs)
			}
		case h.Method == reduce.HostWall.String():
			fmt.Fprintf(b, ": moved %d ns by its wall-clock anchor, no bound\n", h.WallShiftNs)
		default:
			fmt.Fprintf(b, ": %s drawn at its own times\n", count(h.Drawn, "span"))
		}
		if h.Note != "" {
			fmt.Fprintf(b, "    %s\n", h.Note)
		}
		for _, os := range sortedPids(h.Pids) {
			fmt.Fprintf(b, "    pid %d, also used on another machine, is trace pid %d\n", os, h.Pids[os])
		}
	}
}

func joinInts(v []int64) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.FormatInt(x, 10)
	}
	return strings.Join(s, ", ")
}

// ppm formats ppb as ppm with three decimals, in integers.
func ppm(v int64) string {
	sign := ""
	if v < 0 {
		sign, v = "-", -v
	}
	return fmt.Sprintf("%s%d.%03d", sign, v/1000, v%1000)
}

func sortedPids(m map[int32]int32) []int32 {
	out := make([]int32, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// SeveralWallAnchors is the note a reader of the logs gives when process
// pid wrote n wall-clock anchors ([CLOCK_ANCHOR] v=1), where the runtime
// writes one per process; first and second are where the first two are
// (file:line). The converter notes it in its Summary and stracestat warns
// with it, in the same words.
func SeveralWallAnchors(pid int32, n int, first, second string) string {
	return fmt.Sprintf("pid %d wrote %d wall-clock anchors ([CLOCK_ANCHOR] v=1; one per process is expected): %s and %s", pid, n, first, second)
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

func hex(v uint64) string { return strconv.FormatUint(v, 16) }

func joinReason(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}
