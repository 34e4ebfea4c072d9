package analysis

import (
	"fmt"
	"io"
	"strings"

	"github.com/phasetrace/phasetrace/strace"
)

// Per-phase deltas of a comparison. Besides the bind control plane
// ([CompareRepetitions]), two arms run interleaved differ phase by phase:
// for every host stage and device phase of the decode callable, the
// median duration across its invocations, per repetition of each arm, and
// the delta measure − base. The median, not the mean: one slow or cold
// step in a repetition does not move it, as it would a mean, and it is the
// statistic the median tree ([AnalyzeTree]) prints for the same spans. A
// phase has a verdict under the rule [CompareRepetitions] gives its own:
// at least two repetitions, the phase in both arms of every one, every
// delta of the same sign.

// PhaseRepetitions computes, per repetition of a stream of records (split
// at its "[stamp]" lines as [BindRepetitions] splits it), the median tree
// of the decode callable ([AnalyzeTree]'s tree of the most invoked
// callable, invoked more than once). It keeps one repetition's [Tables]
// (the tree's 8 bytes per span) and, per repetition done, its tree.
type PhaseRepetitions struct {
	cur    *Tables
	trees  []*Tree
	late   int64
	stamps int
	spans  bool // a span came before the first stamp
	done   bool
}

// NewPhaseRepetitions returns an empty [PhaseRepetitions].
func NewPhaseRepetitions() *PhaseRepetitions {
	return &PhaseRepetitions{cur: newPhaseTables()}
}

func newPhaseTables() *Tables { return NewTables(WithTables(TableTree)) }

// Add adds a record, in input order; a "[stamp]" line begins a
// repetition. Spans are the only other records it reads.
func (r *PhaseRepetitions) Add(rec *strace.Record) {
	if r.done {
		panic("analysis: PhaseRepetitions.Add after the trees were taken")
	}
	switch rec.Kind {
	case strace.KindStamp:
		if r.stamps > 0 || r.spans {
			r.finish()
		}
		r.stamps++
		r.cur = newPhaseTables()
	case strace.KindSpan:
		r.spans = r.spans || r.stamps == 0
		r.cur.Add(&rec.Span)
	}
}

// ReadFrom adds every record of rd until io.EOF and returns the reader's
// error otherwise.
func (r *PhaseRepetitions) ReadFrom(rd *strace.Reader) error { return eachRecord(rd, r.Add) }

// finish keeps the decode tree of the repetition being read.
func (r *PhaseRepetitions) finish() {
	r.late += r.cur.Late()
	var dec *Tree
	for _, t := range r.cur.Tree() {
		if t.Role == strace.RoleDecode {
			dec = t
			break
		}
	}
	r.trees = append(r.trees, dec)
	r.cur = nil
}

// Trees returns the decode tree of every repetition in order, nil for a
// repetition without a decode callable. No record can be added after it.
func (r *PhaseRepetitions) Trees() []*Tree {
	if !r.done {
		r.done = true
		r.finish()
	}
	return r.trees
}

// Late returns how many spans arrived after their invocation was closed
// (left out, as [Tables.Late] counts them).
func (r *PhaseRepetitions) Late() int64 {
	if r.cur != nil {
		return r.late + r.cur.Late()
	}
	return r.late
}

// PhaseComparison is the per-phase comparison of two arms' decode
// callables: a row per host stage and device phase.
type PhaseComparison struct {
	Rows []PhaseRow
	// Missing says which repetitions of which arm have no decode
	// callable (their rows are not computable in that repetition).
	Missing []string
}

// PhaseRow is one stage or phase: its full dotted name ("Effective" for
// the orch ∪ sched window), its depth in the tree, whether it is a device
// phase, per repetition the two medians and the delta, and the verdict
// (with Reason when there is none).
type PhaseRow struct {
	Name    string
	Leaf    string
	Depth   int
	Device  bool
	Reps    []PhaseRep
	Verdict Verdict
	Reason  string
}

// PhaseRep is one repetition of a [PhaseRow]: each arm's median duration
// across its decode invocations; OK when both arms have the phase.
type PhaseRep struct {
	Base, Measure Median
	OK            bool
}

// DeltaNs is measure's median minus base's, in ns (a median of an even
// count may fall on half a ns).
func (r PhaseRep) DeltaNs() float64 { return r.Measure.Nanos() - r.Base.Nanos() }

// sign is the sign of the delta, exact.
func (r PhaseRep) sign() int {
	d := (r.Measure.Lo - r.Base.Lo) + (r.Measure.Hi - r.Base.Hi)
	switch {
	case d > 0:
		return 1
	case d < 0:
		return -1
	}
	return 0
}

// ComparePhases compares the decode trees of two arms' repetitions
// ([PhaseRepetitions.Trees]), repetition by repetition. The rows follow
// the first base tree's order (depth first, as [WriteTree] prints it),
// then the phases only other trees have.
func ComparePhases(base, measure []*Tree) (*PhaseComparison, error) {
	if len(base) == 0 || len(base) != len(measure) {
		return nil, fmt.Errorf("%w: %d base, %d measure", ErrRepetitions, len(base), len(measure))
	}
	c := &PhaseComparison{}
	index := map[string]int{}
	reps := len(base)
	for i := range reps {
		for arm, t := range []*Tree{base[i], measure[i]} {
			if t == nil {
				c.Missing = append(c.Missing, fmt.Sprintf("repetition %d: %s has no decode callable (a callable invoked more than once)", i+1, []string{"base", "measure"}[arm]))
				continue
			}
			walkPhases(t.Roots, 0, func(n *TreeNode, depth int) {
				k, ok := index[n.Name]
				if !ok {
					k = len(c.Rows)
					index[n.Name] = k
					c.Rows = append(c.Rows, PhaseRow{Name: n.Name, Leaf: n.Leaf, Depth: depth, Device: n.Device, Reps: make([]PhaseRep, reps)})
				}
				r := &c.Rows[k].Reps[i]
				if arm == 0 {
					r.Base = n.Median
				} else {
					r.Measure = n.Median
				}
			})
		}
	}
	for k := range c.Rows {
		row := &c.Rows[k]
		for i := range row.Reps {
			row.Reps[i].OK = hasPhase(base[i], row.Name) && hasPhase(measure[i], row.Name)
		}
		row.Verdict, row.Reason = phaseVerdict(row.Reps)
	}
	return c, nil
}

// walkPhases visits the nodes depth first; an Effective node is followed
// by its orch and sched.
func walkPhases(nodes []*TreeNode, depth int, visit func(*TreeNode, int)) {
	for _, n := range nodes {
		visit(n, depth)
		if n.Orch != nil && n.Sched != nil {
			visit(n.Orch, depth+1)
			visit(n.Sched, depth+1)
		}
		walkPhases(n.Children, depth+1, visit)
	}
}

func hasPhase(t *Tree, name string) bool {
	if t == nil {
		return false
	}
	found := false
	walkPhases(t.Roots, 0, func(n *TreeNode, _ int) { found = found || n.Name == name })
	return found
}

// phaseVerdict applies the comparison's rule to a phase's repetitions.
func phaseVerdict(reps []PhaseRep) (Verdict, string) {
	if len(reps) < 2 {
		return NoVerdict, "one repetition"
	}
	signs := map[int]bool{}
	for i, r := range reps {
		if !r.OK {
			return NoVerdict, fmt.Sprintf("not in both arms of repetition %d", i+1)
		}
		signs[r.sign()] = true
	}
	switch {
	case len(signs) > 1:
		return NoVerdict, "the sign disagrees across repetitions"
	case signs[1]:
		return MeasureSlower, ""
	case signs[-1]:
		return MeasureFaster, ""
	}
	return NoChange, ""
}

// WritePhaseComparison prints the per-phase comparison: per phase, one
// line per repetition with each arm's median and the delta in µs, and the
// phase's verdict (or why there is none) on its last line.
func WritePhaseComparison(w io.Writer, c *PhaseComparison) error {
	ew := &errWriter{w: w}
	if c == nil {
		return nil
	}
	ew.println("phases of the decode callable (median of its invocations per repetition; delta = measure − base), us:")
	for _, m := range c.Missing {
		ew.printf("  %s\n", m)
	}
	ew.printf("  %-34s%4s%13s%13s%12s  %s\n", "phase", "rep", "base med", "meas med", "delta", "verdict")
	for _, row := range c.Rows {
		name := strings.Repeat("  ", row.Depth) + row.Leaf
		if row.Device {
			name += " [dev]"
		}
		for i, r := range row.Reps {
			verdict := ""
			if i == len(row.Reps)-1 {
				verdict = row.Verdict.String()
				if row.Reason != "" {
					verdict += ": " + row.Reason
				}
			}
			if i > 0 {
				name = ""
			}
			b, m, delta := "—", "—", "—"
			if r.OK {
				b, m, delta = fmtF(medianUS(r.Base), 1), fmtF(medianUS(r.Measure), 1), fmtF(r.DeltaNs()/1000, 1)
				if r.sign() > 0 {
					delta = "+" + delta
				}
			}
			line := fmt.Sprintf("  %-34s%4d%13s%13s%12s  %s", name, i+1, b, m, delta, verdict)
			ew.println(strings.TrimRight(line, " "))
		}
	}
	return ew.err
}
