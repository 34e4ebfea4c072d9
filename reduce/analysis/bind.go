package analysis

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/phasetrace/phasetrace/strace"
)

// ControlPlaneSegments are summed within each bind into the control-plane
// subtotal. It is an instrumented subtotal, not the whole cost between the
// caller's data being in place and the device starting: Graph task binding,
// compact execution-image preparation and A5 scheduler work have no
// segment.
var ControlPlaneSegments = []string{"host_orch", "graph_pack", "arena_h2d"}

// Errors of [AnalyzeBinds].
var (
	// ErrNoBinds: the log has no chip.run.bind.<segment> spans forming a
	// bind (SIMPLER_HBG_BIND_BREAKDOWN_ENABLE=1 unset, or the host log was
	// moved to the session spool).
	ErrNoBinds = errors.New("no chip.run.bind.<segment> spans")
	// ErrAllCold: every bind is a rank's cold first bind (a run with
	// --rounds 1); a warm bind needs two rounds or more.
	ErrAllCold = errors.New("every bind is a rank's cold bind")
)

// SegmentSource says where a bind's segment came from.
type SegmentSource uint8

// Segment sources, in the order they give way: a host_phase_records pass
// wins over the log's segment span, which wins over a legacy bind line.
const (
	FromSpan     SegmentSource = iota // a chip.run.bind.<segment> span
	FromBindLine                      // a legacy "bind phase=" line
	FromRecords                       // a host_phase_records.jsonl pass
)

// rank orders the sources: a segment gives way to one of a higher rank.
func (s SegmentSource) rank() int {
	switch s {
	case FromBindLine:
		return 0
	case FromSpan:
		return 1
	}
	return 2
}

// BindSegment is one segment of a bind: a chip.run.bind.<segment> span, a
// legacy bind phase line or a host_phase_records entry.
type BindSegment struct {
	Name   string // the segment, e.g. host_orch
	Dur    int64  // ns
	Attrs  []strace.Attr
	Source SegmentSource
}

// Int returns an integer attribute of the segment (cpu_ns, minflt, nvcsw,
// nivcsw, spilled, tasks, bytes, ...).
func (s BindSegment) Int(key string) (int64, bool) {
	for _, a := range s.Attrs {
		if a.Key == key && !a.Bare {
			return a.Int64()
		}
	}
	return 0, false
}

// Bind is one bind: the segments of one (pid, inv).
type Bind struct {
	Pid      int32
	Inv      uint64
	TS       int64         // earliest segment start: orders a rank's binds
	Cold     bool          // dropped as its rank's warm-up bind
	Segments []BindSegment // known segments in display order, then unknown ones by name
}

// Segment returns the bind's segment named name.
func (b *Bind) Segment(name string) (BindSegment, bool) {
	for _, s := range b.Segments {
		if s.Name == name {
			return s, true
		}
	}
	return BindSegment{}, false
}

// SegmentStats is the spread of one segment's durations over the warm
// binds that have it.
type SegmentStats struct {
	Name         string
	ControlPlane bool
	Spread
}

// BindTotal is one warm bind's control-plane subtotal: its present
// control-plane segments summed within the bind.
type BindTotal struct {
	Pid   int32
	Inv   uint64
	Parts []int64 // per ControlPlane.Present segment, ns
	Sum   int64
}

// ControlPlane is the control-plane subtotal of a log. Its statistic is the
// minimum over warm binds of the per-bind sums, never a sum of per-segment
// minima: those come from different binds and add up to a total no bind
// achieved.
type ControlPlane struct {
	Present  []string // control-plane segments some warm bind has
	Absent   []string // control-plane segments no warm bind has (retired or not emitted)
	Partial  []string // present in some warm binds but not all: those binds are excluded
	Totals   []BindTotal
	Spread       // of Totals' sums; N == 0 when no bind is complete
	Excluded int // warm binds left out for lacking a partial segment
}

// CPUStats splits a segment's time into on-CPU (cpu_ns, the bind thread's
// CPU clock) and off-CPU (dur − cpu_ns: blocked or preempted), with the
// process's voluntary and involuntary context switches, over the warm binds
// whose segment carries cpu_ns.
type CPUStats struct {
	Name          string
	N             int
	Dur           Spread
	OnCPU, OffCPU Spread
	Nvcsw, Nivcsw Spread // N == 0 when the counter is absent
}

// CountSequence is one counter of one segment, bind by bind for one rank
// (pid), cold bind first, so warm-up decay is visible.
type CountSequence struct {
	Pid     int32
	Segment string
	Counter string
	Values  []int64
	Cold    []bool // per value: the rank's cold bind
}

// BindWarningKind says what a [BindWarning] is about.
type BindWarningKind uint8

// Bind warnings.
const (
	WarnNoStamp          BindWarningKind = iota + 1 // no "[stamp]" line: the command and commit are unknown
	WarnNoAutoload                                  // no torch_backend_autoload record: backend-autoload state unknown
	WarnUnknownSegment                              // a segment this package does not know (e.g. graph_upload): reported, excluded
	WarnAbsentSegment                               // a control-plane segment no warm bind has: total over fewer segments
	WarnPartialSegment                              // a control-plane segment only some warm binds have: those binds excluded
	WarnSpilled                                     // graph_pack spilled ≠ 0 on a bind after the process's first
	WarnNotABind                                    // a segment group without host_orch is not a bind
	WarnDuplicateSegment                            // a bind logged the same segment twice: the last one is kept
	WarnRanks                                       // the rank count disagrees with the processes or the rounds
	WarnNoTotal                                     // no warm bind carries every present control-plane segment
	WarnUnclaimed                                   // a bind phase line or host_phase_records pass that belongs to no bind: left out
)

var bindWarningNames = [...]string{"", "no-stamp", "no-autoload", "unknown-segment", "absent-segment",
	"partial-segment", "spilled", "not-a-bind", "duplicate-segment", "ranks", "no-total", "unclaimed"}

func (k BindWarningKind) String() string {
	if int(k) < len(bindWarningNames) && k != 0 {
		return bindWarningNames[k]
	}
	return fmt.Sprintf("BindWarningKind(%d)", int(k))
}

// BindWarning is something the bind statistics want the reader to know.
type BindWarning struct {
	Kind BindWarningKind
	Text string
}

// RanksSource says where a rank count came from.
type RanksSource uint8

// Rank count sources.
const (
	RanksFromProcesses RanksSource = iota // one rank per pid in the log
	RanksGiven                            // WithRanks
	RanksFromRounds                       // WithRounds: binds / rounds
)

// BindStats is the bind-segment statistics of one log.
type BindStats struct {
	Name     string
	Stamp    string // first "[stamp]" line; HasStamp says whether there is one
	HasStamp bool
	Autoload []string // distinct torch_backend_autoload records
	// Ranks is the rank count the cold binds were dropped by, from
	// RanksFrom; Processes the number of pids with binds.
	Ranks     int
	RanksFrom RanksSource
	Processes int
	KeepFirst bool
	Binds     []Bind // ordered by pid, then start
	Warm      int
	Cold      int
	Segments  []SegmentStats // known segments with warm values, display order
	Unknown   []SegmentStats // unknown segments, by name: never in a total
	ControlPlane
	CPU       []CPUStats      // segments whose warm binds carry cpu_ns, display order
	Sequences []CountSequence // minflt per rank and segment
	Warnings  []BindWarning
}

// BindOption configures [AnalyzeBinds] and [CompareBinds].
type BindOption func(*bindConfig)

type bindConfig struct {
	ranks, rounds int
	keepFirst     bool
	passes        []strace.PhasePass
	passReaders   []PassReader
}

// WithRanks sets the number of ranks; one cold bind is dropped per rank.
func WithRanks(n int) BindOption { return func(c *bindConfig) { c.ranks = n } }

// WithRounds gives the rounds the run was made with, so the rank count is
// inferred as binds / rounds (at least 1).
func WithRounds(n int) BindOption { return func(c *bindConfig) { c.rounds = n } }

// WithKeepFirst keeps the cold binds in the statistics, to look at them
// deliberately.
func WithKeepFirst() BindOption { return func(c *bindConfig) { c.keepFirst = true } }

// WithPhaseRecords gives the passes of the run's host_phase_records.jsonl
// (read with [strace.NewPhaseRecordsReader]): a pass's entries whose phase
// is a bind segment ([strace.IsBindSegment]) are segments of the bind with
// the pass's pid and inv, from start_ns to end_ns, and win over that bind's
// segment spans and bind lines of the same name, as in the converter. A
// pass whose (pid, inv) has no bind in the log (no chip.run.bind span and
// no segment) is left out with a warning.
func WithPhaseRecords(passes []strace.PhasePass) BindOption {
	return func(c *bindConfig) { c.passes = append(c.passes, passes...) }
}

// AnalyzeBinds computes the bind-segment statistics of a log: binds are the
// host chip.run.bind.<segment> spans grouped by (pid, inv) (a group without
// host_orch is not a bind), with the segments of legacy bind phase lines
// (Log.BindLines) and of [WithPhaseRecords]. A bind line belongs to the
// first host chip.run.bind span in the log written by the same log thread
// (a line or span without a prefix matches any thread) whose interval
// [ts, ts+dur] holds the line's [start_ns, start_ns+dur_ns]; it gives that
// bind's segment unless a segment span of the same name does. One cold bind per rank is dropped — each
// process's first when the ranks are the processes, else the earliest
// binds; per segment the min / median / max over the warm binds; the
// control-plane subtotal summed within each bind; on/off-CPU per segment;
// minflt sequences per rank; and warnings for an unknown, absent or partial
// segment, a spill after a process's first bind, and a missing stamp or
// autoload record.
//
// It fails with ErrNoBinds or ErrAllCold; the returned stats then still
// hold the stamp, the autoload records and whatever binds were found.
func AnalyzeBinds(l *Log, opts ...BindOption) (*BindStats, error) {
	var cfg bindConfig
	for _, o := range opts {
		o(&cfg)
	}
	st := &BindStats{Name: l.Name, KeepFirst: cfg.keepFirst}
	for _, rd := range cfg.passReaders {
		for {
			p, err := rd.Read()
			if err == io.EOF {
				break
			}
			if err != nil {
				return st, fmt.Errorf("%s: host_phase_records: %w", l.Name, err)
			}
			cfg.passes = append(cfg.passes, p)
		}
	}
	st.Stamp, st.HasStamp = l.Stamp()
	st.Autoload = l.AutoloadDistinct()
	if !st.HasStamp {
		st.warn(WarnNoStamp, "no `[stamp]` line: the command and commit behind these numbers have to be established by hand before comparing them to anything")
	}
	if len(st.Autoload) == 0 {
		st.warn(WarnNoAutoload, "no `torch_backend_autoload` record: backend-autoload state must be established before comparing this log")
	}
	st.Binds = st.collect(l, cfg.passes)
	if len(st.Binds) == 0 {
		return st, fmt.Errorf("%s: %w", l.Name, ErrNoBinds)
	}
	bs := &bindSet{binds: make([]packedBind, len(st.Binds))}
	for i := range st.Binds {
		bs.binds[i] = packBind(&bs.names, &st.Binds[i])
	}
	err := bs.stats(st, cfg, l.Name)
	for i := range st.Binds {
		st.Binds[i].Cold = bs.binds[i].cold
	}
	return st, err
}

func (st *BindStats) warn(k BindWarningKind, format string, args ...any) {
	st.Warnings = append(st.Warnings, BindWarning{Kind: k, Text: fmt.Sprintf(format, args...)})
}

var knownSegment = func() map[string]int {
	m := make(map[string]int)
	for i, s := range strace.BindSegments {
		m[s] = i
	}
	return m
}()

type bindKey struct {
	pid int32
	inv uint64
}

// binder gathers the segments of binds by (pid, inv), in order of arrival.
type binder struct {
	st     *BindStats
	groups map[bindKey]*Bind
	order  []*Bind
}

// segment gives the bind k the segment seg starting at ts; it replaces one
// of the same name from a source that gives way to it, and is dropped for
// one that does not.
func (g *binder) segment(k bindKey, ts int64, seg BindSegment) {
	b := g.groups[k]
	if b == nil {
		b = &Bind{Pid: k.pid, Inv: k.inv, TS: ts}
		g.groups[k] = b
		g.order = append(g.order, b)
	}
	b.TS = min(b.TS, ts)
	for j := range b.Segments {
		old := &b.Segments[j]
		if old.Name != seg.Name {
			continue
		}
		switch {
		case seg.Source.rank() < old.Source.rank():
			return // the segment already there wins
		case seg.Source == old.Source:
			g.st.warn(WarnDuplicateSegment, "pid %d inv %d logged %s more than once; the last one is kept", k.pid, k.inv, seg.Name)
		}
		*old = seg
		return
	}
	b.Segments = append(b.Segments, seg)
}

// collect groups the segments into binds ordered by pid, then start.
func (st *BindStats) collect(l *Log, passes []strace.PhasePass) []Bind {
	g := &binder{st: st, groups: make(map[bindKey]*Bind)}
	prefix := strace.SpanBind + "."
	for i := range l.Spans {
		s := &l.Spans[i]
		if !strings.HasPrefix(s.Name, prefix) || s.IsDevice() {
			continue
		}
		seg := s.Name[len(prefix):]
		if seg == "" || strings.Contains(seg, ".") {
			continue // an orchestrator operation inside a segment, not a segment
		}
		g.segment(bindKey{s.Pid, s.Inv}, s.TS, BindSegment{Name: seg, Dur: s.Dur, Attrs: s.Attrs})
	}
	g.bindLines(l)
	g.records(l, passes)
	order := g.order
	sort.SliceStable(order, func(i, j int) bool {
		if order[i].Pid != order[j].Pid {
			return order[i].Pid < order[j].Pid
		}
		return order[i].TS < order[j].TS
	})
	var binds []Bind
	notBinds := 0
	for _, b := range order {
		if _, ok := b.Segment("host_orch"); !ok {
			notBinds++
			continue
		}
		sort.SliceStable(b.Segments, func(i, j int) bool { return segmentLess(b.Segments[i].Name, b.Segments[j].Name) })
		binds = append(binds, *b)
	}
	if notBinds > 0 {
		st.warn(WarnNotABind, "%d segment group(s) without host_orch are not binds and were left out", notBinds)
	}
	return binds
}

// bindLines gives each legacy bind line to its bind: the first host
// chip.run.bind span of the same log thread whose interval holds it.
func (g *binder) bindLines(l *Log) {
	if len(l.BindLines) == 0 {
		return
	}
	type scope struct {
		key     bindKey
		ts, end int64
		thread  uint64
	}
	threads := make(map[int]uint64, len(l.BindThreads))
	for _, t := range l.BindThreads {
		threads[t.Span] = t.Thread
	}
	var scopes []scope
	seen := make(map[bindKey]bool)
	for i := range l.Spans {
		s := &l.Spans[i]
		k := bindKey{s.Pid, s.Inv}
		if s.Name != strace.SpanBind || s.IsDevice() || seen[k] {
			continue
		}
		seen[k] = true
		scopes = append(scopes, scope{key: k, ts: s.TS, end: s.TS + s.Dur, thread: threads[i]})
	}
	var unclaimed []string
	for _, line := range l.BindLines {
		start, dur := line.StartNS, line.DurNS
		owner := -1
		if start <= math.MaxInt64 && dur <= math.MaxInt64-start {
			for i, sc := range scopes {
				if int64(start) >= sc.ts && int64(start+dur) <= sc.end && (sc.thread == 0 || line.Thread == 0 || sc.thread == line.Thread) {
					owner = i
					break
				}
			}
		}
		if owner < 0 {
			unclaimed = append(unclaimed, fmt.Sprintf("%s at byte %d", line.Phase, line.Offset))
			continue
		}
		g.segment(scopes[owner].key, int64(start), BindSegment{Name: line.Phase, Dur: int64(dur), Attrs: line.Attrs, Source: FromBindLine})
	}
	if len(unclaimed) > 0 {
		g.st.warn(WarnUnclaimed, "%d bind phase line(s) lie inside no chip.run.bind of their log thread and were left out (first: %s)", len(unclaimed), unclaimed[0])
	}
}

// records gives the bind-segment entries of the host_phase_records passes
// to the binds with their pid and inv.
func (g *binder) records(l *Log, passes []strace.PhasePass) {
	if len(passes) == 0 {
		return
	}
	hasBind := make(map[bindKey]bool)
	for i := range l.Spans {
		if s := &l.Spans[i]; s.Name == strace.SpanBind && !s.IsDevice() {
			hasBind[bindKey{s.Pid, s.Inv}] = true
		}
	}
	unclaimed, impossible := 0, 0
	var first string
	for _, p := range passes {
		k := bindKey{p.Pid, p.Inv}
		if !hasBind[k] && g.groups[k] == nil {
			if unclaimed == 0 {
				first = fmt.Sprintf("pid=%d inv=%d at %v", p.Pid, p.Inv, p.Pos)
			}
			unclaimed++
			continue
		}
		for _, r := range p.Records {
			if !strace.IsBindSegment(r.Phase) {
				continue // an orchestrator operation, not a segment
			}
			if r.EndNS < r.StartNS || r.EndNS > math.MaxInt64 {
				impossible++
				continue
			}
			g.segment(k, int64(r.StartNS), BindSegment{Name: r.Phase, Dur: int64(r.EndNS - r.StartNS), Source: FromRecords})
		}
	}
	if unclaimed > 0 {
		g.st.warn(WarnUnclaimed, "%d host_phase_records pass(es) match no bind in the log and were left out (first: %s)", unclaimed, first)
	}
	if impossible > 0 {
		g.st.warn(WarnUnclaimed, "%d host_phase_records segment(s) end before they start and were left out", impossible)
	}
}

func segmentLess(a, b string) bool {
	ia, ka := knownSegment[a]
	ib, kb := knownSegment[b]
	switch {
	case ka && kb:
		return ia < ib
	case ka != kb:
		return ka
	}
	return a < b
}

// msText is Python's f"{ns / 1e6:{width}.3f}".
func msText(ns int64) string { return fmtF(pyFloat(ns)/1e6, 3) }

// msMedian is Python's statistics.median of the values ns / 1e6.
func msMedian(m Median) float64 {
	return (pyFloat(m.Lo)/1e6 + pyFloat(m.Hi)/1e6) / 2
}

// WriteBinds prints the statistics: the stamp and autoload records (or
// that they are missing), the per-segment min / median / max in ms over the
// warm binds (control-plane segments starred), the control-plane total row
// (the minimum of the per-bind sums), unknown segments, warnings, the
// on/off-CPU split and the per-bind minflt sequences.
func WriteBinds(w io.Writer, st *BindStats) error {
	ew := &errWriter{w: w}
	if st == nil {
		return nil
	}
	ew.println(st.Name)
	if st.HasStamp {
		ew.println("  " + st.Stamp)
	} else {
		ew.println("  (no `[stamp]` line: the command and commit behind these numbers have")
		ew.println("   to be established by hand before comparing them to anything)")
	}
	if len(st.Autoload) > 0 {
		for _, a := range st.Autoload {
			ew.println("  " + a)
		}
	} else {
		ew.println("  (no `torch_backend_autoload` record: backend-autoload state")
		ew.println("   must be established before comparing this log)")
	}
	ew.printf("  %d binds, %d warm (%d cold dropped, ranks=%d)\n\n", len(st.Binds), st.Warm, st.Cold, st.Ranks)
	if st.Warm == 0 {
		writeBindWarnings(ew, st)
		return ew.err
	}
	ew.printf("  %-18s%10s%10s%10s   n\n", "phase", "min", "median", "max")
	for _, s := range st.Segments {
		mark := " "
		if s.ControlPlane {
			mark = "*"
		}
		ew.printf(" %s%-18s%10s%10s%10s  %3d\n", mark, s.Name, msText(s.Min), fmtF(msMedian(s.Median), 3), msText(s.Max), s.N)
	}
	if len(st.Unknown) > 0 {
		names := make([]string, len(st.Unknown))
		for i, u := range st.Unknown {
			names[i] = u.Name
		}
		ew.printf("\n  segments this tool does not know about: %s\n", strings.Join(names, ", "))
		ew.println("  (reported and left out of every total)")
	}
	c := &st.ControlPlane
	if len(c.Totals) > 0 {
		lo, mid, hi := totalSpreadMS(c)
		ew.println("\n  * = control plane, summed within each bind and then:")
		ew.printf("    total%-13s%10s%10s%10s  %3d   (ms)\n", "", fmtF(lo, 3), fmtF(mid, 3), fmtF(hi, 3), len(c.Totals))
		if len(c.Absent) > 0 {
			ew.printf("    over %d of %d segments; absent from every\n", len(c.Present), len(ControlPlaneSegments))
			ew.printf("    bind: %s\n", strings.Join(c.Absent, ", "))
		}
		if len(c.Partial) > 0 {
			ew.printf("    WARNING: %s is missing from some binds but not all;\n", strings.Join(c.Partial, ", "))
			ew.println("    those binds are excluded, and the total may not describe the run")
		}
		ew.println("\n  The total is the minimum of per-bind sums, never a sum of the min column.")
	} else {
		ew.printf("\n  no bind carries any of %s; the control-plane total is not computable\n", strings.Join(ControlPlaneSegments, ", "))
	}
	if len(st.CPU) > 0 {
		ew.println("\n  on/off CPU, medians over warm binds (ms; off = dur - cpu_ns):")
		ew.printf("  %-18s%10s%10s%10s%8s%8s   n\n", "segment", "dur", "on-CPU", "off-CPU", "nvcsw", "nivcsw")
		for _, s := range st.CPU {
			ew.printf("  %-18s%10s%10s%10s%8s%8s  %3d\n", s.Name, fmtF(msMedian(s.Dur.Median), 3), fmtF(msMedian(s.OnCPU.Median), 3),
				fmtF(msMedian(s.OffCPU.Median), 3), countMedian(s.Nvcsw), countMedian(s.Nivcsw), s.N)
		}
	}
	if len(st.Sequences) > 0 {
		ew.println("\n  control-plane minflt bind by bind, per rank ([cold] bind first):")
		for _, q := range st.Sequences {
			if !slices.Contains(ControlPlaneSegments, q.Segment) {
				continue
			}
			var vals []string
			for i, v := range q.Values {
				if q.Cold[i] {
					vals = append(vals, fmt.Sprintf("[%d]", v))
				} else {
					vals = append(vals, fmt.Sprint(v))
				}
			}
			ew.printf("    pid %-8d %-16s %s\n", q.Pid, q.Segment, strings.Join(vals, " "))
		}
	}
	writeBindWarnings(ew, st)
	return ew.err
}

func writeBindWarnings(ew *errWriter, st *BindStats) {
	var shown []BindWarning
	for _, wn := range st.Warnings {
		switch wn.Kind {
		case WarnNoStamp, WarnNoAutoload, WarnUnknownSegment, WarnAbsentSegment, WarnPartialSegment, WarnNoTotal:
			continue // already said above the table or beside the total
		}
		shown = append(shown, wn)
	}
	if len(shown) == 0 {
		return
	}
	ew.println("")
	for _, wn := range shown {
		ew.printf("  warning: %s\n", wn.Text)
	}
}

// countMedian prints the median of a counter, "-" when it is absent.
func countMedian(s Spread) string {
	if s.N == 0 {
		return "-"
	}
	if s.Median.Lo == s.Median.Hi {
		return fmt.Sprint(s.Median.Lo)
	}
	return fmtF(s.Median.Nanos(), 1)
}

// totalSpreadMS is the runtime tool's min / median / max of the per-bind
// sums, each sum formed from its parts in ms left to right.
func totalSpreadMS(c *ControlPlane) (lo, mid, hi float64) {
	sums := make([]float64, len(c.Totals))
	for i, t := range c.Totals {
		parts := make([]float64, len(t.Parts))
		for j, p := range t.Parts {
			parts[j] = pyFloat(p) / 1e6
		}
		sums[i] = pySum(parts)
	}
	sort.Float64s(sums)
	n := len(sums)
	if n == 0 {
		return 0, 0, 0
	}
	mid = sums[n/2]
	if n%2 == 0 {
		mid = (sums[n/2-1] + sums[n/2]) / 2
	}
	return sums[0], mid, sums[n-1]
}
