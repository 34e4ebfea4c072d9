package phasetrace

import (
	"slices"
	"strings"

	"github.com/phasetrace/phasetrace/internal/held"
	"github.com/phasetrace/phasetrace/reduce/analysis"
	"github.com/phasetrace/phasetrace/strace"
)

// stepObserver builds each drawn run's row of the steps table with
// analysis.Steps and fills in the conversion's own columns. Its methods
// do nothing on a nil observer: a conversion without WithSteps pays one
// branch per run.
type stepObserver struct {
	f     func(*analysis.Step)
	steps *analysis.Steps
	// walls are the trace's wall-clock snapshots (sliceDrawer.walls), sorted
	// by mono on first use.
	walls  [][2]int64
	sorted bool
}

func newStepObserver(f func(*analysis.Step)) *stepObserver {
	return &stepObserver{f: f, steps: analysis.NewSteps()}
}

// begin starts the row of run b, from its spans as logged.
func (o *stepObserver) begin(b *invBuf) {
	if o == nil {
		return
	}
	o.steps.Begin()
	for i := range b.host {
		o.steps.Span(&b.host[i].Span)
	}
	for i := range b.dev {
		o.steps.Span(&b.dev[i].Span)
	}
}

// segmentSpan adds a chip.run.bind.<segment> span drawn, seg its
// segment (one word: a known segment or another; not a deeper span).
func (o *stepObserver) segmentSpan(seg string, s *held.Span) {
	if o == nil || strings.Contains(seg, ".") {
		return
	}
	g := analysis.StepSegment{Segment: seg, Source: analysis.FromSpan, Start: s.TS, Dur: s.Dur}
	if cpu, ok := s.Attr("cpu_ns"); ok && cpu.Type == strace.TypeInt {
		g.CPU = analysis.Int(cpu.Int)
	}
	o.steps.BindSegment(g)
}

// segmentPass adds a host_phase_records entry drawn in the run's bind.
func (o *stepObserver) segmentPass(r *strace.PhaseRecord) {
	if o == nil || !strace.IsBindSegment(r.Phase) {
		return
	}
	o.steps.BindSegment(analysis.StepSegment{Segment: r.Phase, Source: analysis.FromRecords, Start: int64(r.StartNS), Dur: int64(r.EndNS - r.StartNS)})
}

// segmentLine adds a legacy bind phase line drawn in the run's bind.
func (o *stepObserver) segmentLine(l *strace.BindPhase) {
	if o == nil {
		return
	}
	g := analysis.StepSegment{Segment: l.Phase, Source: analysis.FromBindLine, Start: int64(l.StartNS), Dur: int64(l.DurNS)}
	for _, a := range l.Attrs {
		if a.Key == "cpu_ns" && !a.Bare && a.Type == strace.TypeInt {
			g.CPU = analysis.Int(a.Int)
			break
		}
	}
	o.steps.BindSegment(g)
}

// end finishes the run's row, fills in the conversion's columns and hands
// it over; a run without a chip.run root has none.
func (o *stepObserver) end(d *runDrawer, cold bool) {
	if o == nil {
		return
	}
	row, ok := o.steps.End()
	if !ok {
		return
	}
	row.Run, row.Cold, row.Bound = d.links.runs, cold, d.device.bound
	row.Wall = o.wall(d.sliceDrawer, row.Start)
	if d.parts != nil && d.parts.cur != nil {
		row.Part = d.parts.cur.name
	}
	o.f(row)
}

// wall returns trace time mono on the trace's wall clock as the trace
// processor reads it from the REALTIME snapshots the trace holds: through
// the snapshot of greatest mono at or before it, else the earliest one.
func (o *stepObserver) wall(cv *sliceDrawer, mono int64) analysis.NullInt {
	if !o.sorted {
		o.sorted = true
		o.walls = slices.Clone(cv.walls)
		slices.SortStableFunc(o.walls, func(a, b [2]int64) int {
			switch {
			case a[0] < b[0]:
				return -1
			case a[0] > b[0]:
				return 1
			}
			return 0
		})
		o.walls = slices.Compact(o.walls)
	}
	if len(o.walls) == 0 {
		return analysis.NullInt{}
	}
	i, _ := slices.BinarySearchFunc(o.walls, mono, func(p [2]int64, t int64) int {
		switch {
		case p[0] <= t:
			return -1
		}
		return 1
	})
	p := o.walls[max(i-1, 0)]
	return analysis.Int(p[1] + (mono - p[0]))
}
