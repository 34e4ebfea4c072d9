package analysis

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// ErrRepetitions: the two arms of a comparison do not have the same
// number of repetitions (or have none).
var ErrRepetitions = errors.New("the arms need the same, non-zero number of repetitions")

// Verdict is the outcome of a comparison.
type Verdict uint8

// Verdicts. A verdict other than NoVerdict needs at least two repetitions
// whose deltas agree in sign.
const (
	NoVerdict     Verdict = iota // the comparison cannot decide; Comparison.Reasons says why
	MeasureSlower                // measure's minimum of per-bind sums is higher in every repetition
	MeasureFaster                // lower in every repetition
	NoChange                     // equal in every repetition
)

var verdictNames = [...]string{"no verdict", "measure slower", "measure faster", "no change"}

func (v Verdict) String() string {
	if int(v) < len(verdictNames) {
		return verdictNames[v]
	}
	return fmt.Sprintf("Verdict(%d)", int(v))
}

// Repetition is one interleaved base / measure pair of a comparison.
type Repetition struct {
	Base, Measure       *BindStats
	BaseErr, MeasureErr error // why an arm's statistics could not be computed
	// BaseMin and MeasureMin are the minima of the per-bind control-plane
	// sums; Delta = MeasureMin − BaseMin. OK is false when either arm has
	// no total.
	BaseMin, MeasureMin int64
	Delta               int64
	OK                  bool
}

// StampDiff compares the two arms' "[stamp]" lines word by word: they must
// differ only in the commit (their first word).
type StampDiff struct {
	Base, Measure string
	Same          bool     // identical
	CommitOnly    bool     // identical but for the first word
	Removed       []string // words only the base stamp has, in order
	Added         []string // words only the measure stamp has, in order
}

// Comparison is the interleaved two-arm comparison of the bind control
// plane: per repetition the minimum of per-bind sums of each arm and their
// delta, and a verdict only when the sign of the delta agrees across the
// repetitions.
type Comparison struct {
	Reps      []Repetition
	Stamps    StampDiff
	HasStamps bool // every repetition of both arms has a stamp
	// Autoload records of each arm (distinct, over its repetitions).
	BaseAutoload, MeasureAutoload []string
	Verdict                       Verdict
	// Reasons say why there is no verdict, or what weakens it.
	Reasons []string
}

// CompareBinds compares two arms run interleaved — base, measure, base,
// measure — each a list of repetitions (one log, or one [Log.Repetitions]
// part, per run). The options apply to every repetition's [AnalyzeBinds].
//
// One statistic decides: the minimum of the per-bind control-plane sums.
// A verdict is given only when there are at least two repetitions, every
// repetition of both arms has a stamp, the stamps differ at most in the
// commit, the control-plane segment set is the same everywhere, the
// autoload records agree, and every delta has the same sign.
func CompareBinds(base, measure []*Log, opts ...BindOption) (*Comparison, error) {
	arm := func(logs []*Log) []RepStats {
		out := make([]RepStats, len(logs))
		for i, l := range logs {
			out[i].Stats, out[i].Err = AnalyzeBinds(l, opts...)
		}
		return out
	}
	if len(base) == 0 || len(base) != len(measure) {
		return nil, fmt.Errorf("%w: %d base, %d measure", ErrRepetitions, len(base), len(measure))
	}
	return CompareRepetitions(arm(base), arm(measure))
}

// RepStats is the bind statistics of one repetition of an arm, and why
// they could not be computed (see [AnalyzeBinds]); Stats is never nil.
type RepStats struct {
	Stats *BindStats
	Err   error
}

// CompareRepetitions is [CompareBinds] from the bind statistics of each
// repetition, computed beforehand (by [BindRepetitions] while the logs
// stream by, or by [AnalyzeBinds]).
func CompareRepetitions(base, measure []RepStats) (*Comparison, error) {
	if len(base) == 0 || len(base) != len(measure) {
		return nil, fmt.Errorf("%w: %d base, %d measure", ErrRepetitions, len(base), len(measure))
	}
	c := &Comparison{HasStamps: true}
	var seg []string
	segSame := true
	for i := range base {
		r := Repetition{}
		r.Base, r.BaseErr = base[i].Stats, base[i].Err
		r.Measure, r.MeasureErr = measure[i].Stats, measure[i].Err
		for _, st := range []*BindStats{r.Base, r.Measure} {
			if !st.HasStamp {
				c.HasStamps = false
			}
			if st.ControlPlane.Spread.N > 0 {
				if seg == nil {
					seg = st.Present
				} else if !slices.Equal(seg, st.Present) {
					segSame = false
				}
			}
		}
		if r.BaseErr == nil && r.MeasureErr == nil && r.Base.ControlPlane.N > 0 && r.Measure.ControlPlane.N > 0 {
			r.OK = true
			r.BaseMin, r.MeasureMin = r.Base.ControlPlane.Min, r.Measure.ControlPlane.Min
			r.Delta = satSub64(r.MeasureMin, r.BaseMin)
		}
		c.Reps = append(c.Reps, r)
	}
	c.BaseAutoload = armAutoload(base)
	c.MeasureAutoload = armAutoload(measure)
	bs, ms := base[0].Stats.Stamp, measure[0].Stats.Stamp
	c.Stamps = diffStamps(bs, ms)
	c.decide(base, measure, segSame)
	return c, nil
}

func armAutoload(reps []RepStats) []string {
	var all []string
	seen := make(map[string]bool)
	for _, r := range reps {
		for _, a := range r.Stats.Autoload {
			if !seen[a] {
				seen[a] = true
				all = append(all, a)
			}
		}
	}
	return all
}

func (c *Comparison) reason(format string, args ...any) {
	c.Reasons = append(c.Reasons, fmt.Sprintf(format, args...))
}

func (c *Comparison) decide(base, measure []RepStats, segSame bool) {
	blocked := false
	block := func(format string, args ...any) {
		blocked = true
		c.reason(format, args...)
	}
	if !c.HasStamps {
		block("an arm with no [stamp] line cannot take part in a comparison")
	} else {
		for _, arm := range [][]RepStats{base, measure} {
			first := arm[0].Stats.Stamp
			for _, r := range arm[1:] {
				if r.Stats.Stamp != first {
					block("the repetitions of one arm carry different stamps (%s)", r.Stats.Name)
					break
				}
			}
		}
		if !c.Stamps.Same && !c.Stamps.CommitOnly {
			block("the stamps differ in more than the commit: the arms were not measured with the same command")
		}
	}
	if !segSame {
		block("the control-plane segment set differs between logs: compare over the same segments")
	}
	switch {
	case len(c.BaseAutoload) == 0 && len(c.MeasureAutoload) == 0:
		c.reason("neither arm has a torch_backend_autoload record: backend-autoload state must be established by hand")
	case !slices.Equal(c.BaseAutoload, c.MeasureAutoload):
		block("the torch_backend_autoload records differ between the arms")
	}
	if len(c.Reps) < 2 {
		block("one repetition cannot show that the sign agrees: interleave at least two")
	}
	var pos, neg, zero []int
	for i, r := range c.Reps {
		if !r.OK {
			block("repetition %d has no control-plane total in %s", i+1, missingArm(r))
			continue
		}
		switch {
		case r.Delta > 0:
			pos = append(pos, i+1)
		case r.Delta < 0:
			neg = append(neg, i+1)
		default:
			zero = append(zero, i+1)
		}
	}
	mixed := 0
	for _, s := range [][]int{pos, neg, zero} {
		if len(s) > 0 {
			mixed++
		}
	}
	if mixed > 1 {
		block("the sign of the delta disagrees across repetitions (up in %v, down in %v, equal in %v): the run was contended, not the effect small",
			ints(pos), ints(neg), ints(zero))
	}
	if blocked {
		c.Verdict = NoVerdict
		return
	}
	switch {
	case len(pos) > 0:
		c.Verdict = MeasureSlower
	case len(neg) > 0:
		c.Verdict = MeasureFaster
	default:
		c.Verdict = NoChange
	}
}

func missingArm(r Repetition) string {
	switch {
	case !repOK(r.Base, r.BaseErr) && !repOK(r.Measure, r.MeasureErr):
		return "either arm"
	case !repOK(r.Base, r.BaseErr):
		return "the base arm"
	}
	return "the measure arm"
}

func repOK(st *BindStats, err error) bool { return err == nil && st.ControlPlane.N > 0 }

func ints(s []int) string {
	if len(s) == 0 {
		return "none"
	}
	parts := make([]string, len(s))
	for i, v := range s {
		parts[i] = fmt.Sprint(v)
	}
	return strings.Join(parts, ",")
}

// diffStamps compares two stamp lines word by word (a longest common
// subsequence of the words).
func diffStamps(a, b string) StampDiff {
	d := StampDiff{Base: a, Measure: b, Same: a == b}
	if d.Same {
		return d
	}
	aw, bw := strings.Fields(a), strings.Fields(b)
	n, m := len(aw), len(bw)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if aw[i] == bw[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	for i, j := 0, 0; i < n || j < m; {
		switch {
		case i < n && j < m && aw[i] == bw[j]:
			i++
			j++
		case j >= m || (i < n && lcs[i+1][j] >= lcs[i][j+1]):
			d.Removed = append(d.Removed, aw[i])
			i++
		default:
			d.Added = append(d.Added, bw[j])
			j++
		}
	}
	d.CommitOnly = n > 0 && m > 0 && slices.Equal(aw[1:], bw[1:])
	return d
}

// WriteComparison prints the two stamps and their difference, one row per
// repetition with each arm's minimum of per-bind sums (and its median and
// max, to see a widened range), the delta, and the verdict or why there is
// none. Times are ms.
func WriteComparison(w io.Writer, c *Comparison) error {
	ew := &errWriter{w: w}
	if c == nil {
		return nil
	}
	stamp := func(s string) string {
		if s == "" {
			return "(no [stamp] line)"
		}
		return s
	}
	ew.printf("base:    %s\n", stamp(c.Stamps.Base))
	ew.printf("measure: %s\n", stamp(c.Stamps.Measure))
	switch {
	case c.Stamps.Same:
		ew.println("stamps: identical")
	case c.Stamps.CommitOnly:
		ew.println("stamps: differ only in the commit")
	default:
		ew.println("stamps: differ")
		for _, r := range c.Stamps.Removed {
			ew.printf("  - %s\n", r)
		}
		for _, a := range c.Stamps.Added {
			ew.printf("  + %s\n", a)
		}
	}
	for _, arm := range []struct {
		name string
		recs []string
	}{{"base", c.BaseAutoload}, {"measure", c.MeasureAutoload}} {
		if len(arm.recs) == 0 {
			ew.printf("%s: no torch_backend_autoload record\n", arm.name)
		}
		for _, r := range arm.recs {
			ew.printf("%s: %s\n", arm.name, r)
		}
	}
	ew.println("")
	ew.println("control plane (min of per-bind sums; median / max for spread), ms:")
	ew.printf("  %-4s%11s%20s%11s%20s%11s\n", "rep", "base min", "base med/max", "meas min", "meas med/max", "delta")
	for i, r := range c.Reps {
		if !r.OK {
			ew.printf("  %-4d  not computable: %s\n", i+1, repProblem(r))
			continue
		}
		delta := msText(r.Delta)
		if r.Delta > 0 {
			delta = "+" + delta
		}
		ew.printf("  %-4d%11s%20s%11s%20s%11s\n", i+1, msText(r.BaseMin), medMax(r.Base), msText(r.MeasureMin), medMax(r.Measure), delta)
	}
	ew.println("")
	ew.printf("verdict: %s\n", c.Verdict)
	for _, r := range c.Reasons {
		ew.printf("  %s\n", r)
	}
	return ew.err
}

func medMax(st *BindStats) string {
	return fmtF(msMedian(st.ControlPlane.Median), 3) + " / " + msText(st.ControlPlane.Max)
}

func repProblem(r Repetition) string {
	var ps []string
	for _, a := range []struct {
		name string
		st   *BindStats
		err  error
	}{{"base", r.Base, r.BaseErr}, {"measure", r.Measure, r.MeasureErr}} {
		switch {
		case a.err != nil:
			ps = append(ps, fmt.Sprintf("%s: %v", a.name, a.err))
		case a.st.ControlPlane.N == 0:
			ps = append(ps, a.name+": no complete bind")
		}
	}
	return strings.Join(ps, "; ")
}
