package analysis

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/phasetrace/phasetrace/reduce"
	"github.com/phasetrace/phasetrace/strace"
)

// slowPart is a stage of a run whose excess over its callable's median
// [Slow] reports: the bind, the host's preparation before the device's
// work, and each device phase.
type slowPart struct {
	name string
	get  func(*Step) NullInt
}

var slowParts = func() []slowPart {
	ps := []slowPart{
		{"bind", func(s *Step) NullInt { return s.Bind }},
		{"prep", func(s *Step) NullInt { return s.Prep }},
	}
	for p := reduce.Preamble; p < reduce.NumPhases; p++ {
		name := phaseColumn(p)
		ps = append(ps, slowPart{name[:len(name)-len("_ns")], func(s *Step) NullInt { return s.Phases[p] }})
	}
	return ps
}()

// Slow finds, per callable (hid), its slowest runs by chip.run and where
// their time went: each stage's excess over the callable's median of that
// stage. It takes the rows of the steps table ([Slow.Add]) and keeps, per
// callable, the durations its medians need (about 100 bytes per warm run)
// and its slowest runs.
type Slow struct {
	top   int
	cold  bool
	calls map[uint64]*slowCall
}

type slowCall struct {
	hid        uint64
	runs, cold int
	first      int64 // its first run's number
	// the warm runs' durations: chip.run, then slowParts
	vals    []durList
	slowest []Step // at most top, slowest first
}

// NewSlow returns a [Slow] that keeps the top slowest runs of each
// callable; cold runs (a callable's first in its process, whose bind
// builds what later runs reuse) are ranked only with cold. Medians are
// always the warm runs'.
func NewSlow(top int, cold bool) *Slow {
	return &Slow{top: max(top, 1), cold: cold, calls: map[uint64]*slowCall{}}
}

// Add takes a run's row; s is not kept.
func (sl *Slow) Add(s *Step) {
	c := sl.calls[s.Hid]
	if c == nil {
		c = &slowCall{hid: s.Hid, first: s.Run, vals: make([]durList, 1+len(slowParts))}
		sl.calls[s.Hid] = c
	}
	c.runs++
	if s.Cold {
		c.cold++
	} else {
		c.vals[0].add(s.ChipRun)
		for i, p := range slowParts {
			if v := p.get(s); v.Valid {
				c.vals[1+i].add(v.Int)
			}
		}
	}
	if s.Cold && !sl.cold {
		return
	}
	c.keep(s, sl.top)
}

// keep keeps s among the callable's top slowest: by chip.run, the earlier
// run first when equal.
func (c *slowCall) keep(s *Step, top int) {
	i, _ := slices.BinarySearchFunc(c.slowest, s, func(a Step, b *Step) int {
		if a.ChipRun != b.ChipRun {
			return cmp.Compare(b.ChipRun, a.ChipRun)
		}
		return cmp.Compare(a.Run, b.Run)
	})
	if i >= top {
		return
	}
	row := *s
	row.Binds = nil
	c.slowest = slices.Insert(c.slowest, i, row)
	if len(c.slowest) > top {
		c.slowest = c.slowest[:top]
	}
}

// SlowCallable is one callable's slowest runs.
type SlowCallable struct {
	Hid  uint64
	Role strace.Role
	// Runs counts its runs, Cold the cold ones among them.
	Runs, Cold int
	// Median is its warm runs' median chip.run (ns); empty without warm
	// runs.
	Median  NullInt
	Slowest []SlowRun
}

// SlowRun is a slow run and where its time went.
type SlowRun struct {
	Step   Step    // its row of the steps table (without Binds)
	Excess NullInt // chip.run minus the callable's median, where it has one
	// Stages are the stages that took longer than their median, the
	// largest excess first.
	Stages []StageExcess
}

// StageExcess is a stage of a run against its callable's median of it.
type StageExcess struct {
	Name        string // bind, prep, or a device phase (orch, sched, ...)
	Dur, Median int64
}

// Excess is Dur − Median.
func (e StageExcess) Excess() int64 { return e.Dur - e.Median }

// Result returns the callables, most runs first (as many: the one whose
// first run came first), each with its slowest runs.
func (sl *Slow) Result() []SlowCallable {
	calls := make([]*slowCall, 0, len(sl.calls))
	for _, c := range sl.calls {
		calls = append(calls, c)
	}
	slices.SortFunc(calls, func(a, b *slowCall) int {
		if a.runs != b.runs {
			return cmp.Compare(b.runs, a.runs)
		}
		return cmp.Compare(a.first, b.first)
	})
	out := make([]SlowCallable, 0, len(calls))
	for i, c := range calls {
		out = append(out, c.result(roleOf(i, c.runs)))
	}
	return out
}

func (c *slowCall) result(role strace.Role) SlowCallable {
	meds := make([]NullInt, len(c.vals))
	for i := range c.vals {
		if c.vals[i].n > 0 {
			m := c.vals[i].spread().Median
			meds[i] = Int(m.Lo + (m.Hi-m.Lo)/2)
		}
	}
	r := SlowCallable{Hid: c.hid, Role: role, Runs: c.runs, Cold: c.cold, Median: meds[0]}
	for _, s := range c.slowest {
		run := SlowRun{Step: s}
		if meds[0].Valid {
			run.Excess = Int(s.ChipRun - meds[0].Int)
		}
		for i, p := range slowParts {
			v, m := p.get(&s), meds[1+i]
			if v.Valid && m.Valid && v.Int > m.Int {
				run.Stages = append(run.Stages, StageExcess{Name: p.name, Dur: v.Int, Median: m.Int})
			}
		}
		slices.SortStableFunc(run.Stages, func(a, b StageExcess) int { return cmp.Compare(b.Excess(), a.Excess()) })
		r.Slowest = append(r.Slowest, run)
	}
	return r
}

// maxStagesShown is how many stages WriteSlow names per run.
const maxStagesShown = 4

// WriteSlow prints the slow runs of each callable: a heading with its
// median, then one line per run with its identity, chip.run, its excess
// over the median and the stages that took it (µs, rounded to 0.1):
//
//	decode 9f3c2a11d00db1e5: 3 runs (1 cold), median chip.run 41 002.3 µs over the warm runs
//	   run    pid  dev  inv         start_ns   chip.run µs   excess µs  stages over their median (µs)
//	     7   4100    0    5       5312000000      45 039.4    +4 037.1  orch +2 901.0, sched +1 004.2
//
// withPart adds the part of a split trace that holds each run.
func WriteSlow(w io.Writer, calls []SlowCallable, withPart bool) error {
	ew := &errWriter{w: w}
	for i, c := range calls {
		if i > 0 {
			ew.println("")
		}
		if c.Runs == c.Cold {
			ew.printf("%s %x: %d run%s, all cold: no warm median\n", c.Role, c.Hid, c.Runs, plural(c.Runs))
		} else {
			ew.printf("%s %x: %d run%s (%d cold), median chip.run %s µs over the warm runs\n",
				c.Role, c.Hid, c.Runs, plural(c.Runs), c.Cold, fmtUS(c.Median.Int, false))
		}
		if len(c.Slowest) == 0 {
			ew.println("  no warm run to rank (-cold ranks the cold ones)")
			continue
		}
		head := fmt.Sprintf("  %5s  %6s  %3s  %6s  %17s", "run", "pid", "dev", "inv", "start_ns")
		if withPart {
			head += fmt.Sprintf("  %-22s", "part")
		}
		// "µ" is one column wide in two bytes: padded by hand.
		ew.println(head + "   chip.run µs    excess µs  stages over their median (µs)")
		for _, r := range c.Slowest {
			ew.println(slowLine(&r, withPart))
		}
	}
	return ew.err
}

func slowLine(r *SlowRun, withPart bool) string {
	s := &r.Step
	dev := "-"
	if s.Dev.Valid {
		dev = strconv.FormatInt(s.Dev.Int, 10)
	}
	line := fmt.Sprintf("  %5d  %6d  %3s  %6d  %17d", s.Run, s.Pid, dev, s.Inv, s.Start)
	if withPart {
		line += fmt.Sprintf("  %-22s", s.Part)
	}
	excess := "-"
	if r.Excess.Valid {
		excess = fmtUS(r.Excess.Int, true)
	}
	line += fmt.Sprintf("  %12s  %11s  ", fmtUS(s.ChipRun, false), excess)
	for i, st := range r.Stages {
		if i == maxStagesShown {
			break
		}
		if i > 0 {
			line += ", "
		}
		line += st.Name + " " + fmtUS(st.Excess(), true)
	}
	if len(r.Stages) == 0 {
		line += "-"
	}
	return line
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// fmtUS prints ns as µs rounded to 0.1 (half away from zero), thousands
// apart, from the integer: "45 039.4"; with sign, "+" before a positive.
func fmtUS(ns int64, sign bool) string {
	neg := ns < 0
	u := uint64(ns)
	if neg {
		u = -u
	}
	tenths := (u + 50) / 100
	whole := strconv.FormatUint(tenths/10, 10)
	var b []byte
	switch {
	case neg:
		b = append(b, '-')
	case sign:
		b = append(b, '+')
	}
	for i := range len(whole) {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b = append(b, ' ')
		}
		b = append(b, whole[i])
	}
	return string(append(append(b, '.'), byte('0'+tenths%10)))
}
