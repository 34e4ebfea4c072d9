package phasetrace

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/phasetrace/phasetrace/perfetto"
)

// The sides of a comparison (Compare): each process track's name begins
// with its side's name and " · ", and the trace's conversion instant
// names the side of each input.
const (
	SideBase    = "base"
	SideMeasure = "measure"
)

// CompareSummary says how Compare put the two sides on one axis.
type CompareSummary struct {
	// BaseInputs and MeasureInputs are the logs of each side (in
	// Summary.Inputs, base's first).
	BaseInputs    []string `json:"base_inputs"`
	MeasureInputs []string `json:"measure_inputs"`
	// Aligned is what the sides were aligned by: "decode" (their first
	// decode steps), "run" (their first chip.run: a side has no decode
	// callable), "span" (their first host spans: a side has no chip.run)
	// or "" (a side has no host span; not moved).
	Aligned string `json:"aligned"`
	// BaseHid and MeasureHid are the sides' decode callables (Aligned
	// "decode"), BaseSteps and MeasureSteps their chip.run roots.
	BaseHid      uint64 `json:"base_hid,omitempty"`
	MeasureHid   uint64 `json:"measure_hid,omitempty"`
	BaseSteps    int64  `json:"base_steps,omitempty"`
	MeasureSteps int64  `json:"measure_steps,omitempty"`
	// BaseStart and MeasureStart are where each side's aligned span
	// starts in its logs, as logged (on its side's first log's clock).
	BaseStart    int64 `json:"base_start_ns"`
	MeasureStart int64 `json:"measure_start_ns"`
	// ShiftNs is what is added to every host time of the measure side:
	// BaseStart − MeasureStart + BaseShiftNs, so that both aligned spans
	// start at BaseStart + BaseShiftNs in the trace. BaseShiftNs is 0
	// unless the measure side would have started before 0.
	ShiftNs     int64 `json:"shift_ns"`
	BaseShiftNs int64 `json:"base_shift_ns,omitempty"`
	// Pids are the measure side's pids the base side uses too, and the
	// trace pids they were given (OS pid → trace pid).
	Pids map[int32]int32 `json:"pids,omitempty"`
	// Pairs are the rank pairs of the delta counter.
	Pairs []RankPair `json:"pairs,omitempty"`
	// Note says why the sides were not moved, or what weakens the
	// comparison ("" when nothing).
	Note string `json:"note,omitempty"`
}

// RankPair is the k-th process of each side that ran its decode callable
// (OS pids), and the delta counter drawn for them: Deltas values, and the
// decode steps of one side that had no partner in the other
// (BaseUnpaired, MeasureUnpaired: one side ran more steps, or one side's
// steps came more than 65 536 steps ahead of the other's).
type RankPair struct {
	Base            int32 `json:"base_pid"`
	Measure         int32 `json:"measure_pid"`
	Deltas          int64 `json:"deltas"`
	BaseUnpaired    int64 `json:"base_unpaired,omitempty"`
	MeasureUnpaired int64 `json:"measure_unpaired,omitempty"`
}

// writeText says how the sides were aligned, moved and paired.
func (c *CompareSummary) writeText(b *strings.Builder) {
	if c == nil {
		return
	}
	fmt.Fprintf(b, "compare: base %s, measure %s", strings.Join(c.BaseInputs, ","), strings.Join(c.MeasureInputs, ","))
	switch c.Aligned {
	case "decode":
		fmt.Fprintf(b, "; aligned by the first decode step (base hid 0x%x, %s; measure hid 0x%x, %s)", c.BaseHid, count(c.BaseSteps, "step"), c.MeasureHid, count(c.MeasureSteps, "step"))
	case "run":
		b.WriteString("; aligned by the first chip.run")
	case "span":
		b.WriteString("; aligned by the first host span")
	}
	fmt.Fprintf(b, ": measure moved by %d ns", c.ShiftNs)
	if c.BaseShiftNs != 0 {
		fmt.Fprintf(b, ", base by %d ns", c.BaseShiftNs)
	}
	if n := len(c.Pids); n > 0 {
		pids := make([]int32, 0, n)
		for o := range c.Pids {
			pids = append(pids, o)
		}
		slices.Sort(pids)
		fmt.Fprintf(b, "; measure pids base uses too, given trace pids of their own:")
		for _, o := range pids {
			fmt.Fprintf(b, " %d→%d", o, c.Pids[o])
		}
	}
	b.WriteString("\n")
	for _, p := range c.Pairs {
		fmt.Fprintf(b, "  rank pair base pid %d, measure pid %d: %s", p.Base, p.Measure, count(p.Deltas, "delta"))
		if p.BaseUnpaired+p.MeasureUnpaired > 0 {
			fmt.Fprintf(b, "; unpaired decode steps: %d base, %d measure", p.BaseUnpaired, p.MeasureUnpaired)
		}
		b.WriteString("\n")
	}
	if c.Note != "" {
		fmt.Fprintf(b, "  %s\n", c.Note)
	}
}

// arg is the comparison as the conversion instant's "compare" argument:
// how the sides were aligned and moved, and the decode callables.
func (c *CompareSummary) arg() perfetto.Arg {
	args := []perfetto.Arg{perfetto.String("aligned", c.Aligned), perfetto.Int("shift_ns", c.ShiftNs), perfetto.Int("base_shift_ns", c.BaseShiftNs),
		perfetto.Int("base_start_ns", c.BaseStart), perfetto.Int("measure_start_ns", c.MeasureStart)}
	if c.Aligned == "decode" {
		args = append(args, perfetto.String("base_hid", "0x"+strconv.FormatUint(c.BaseHid, 16)), perfetto.String("measure_hid", "0x"+strconv.FormatUint(c.MeasureHid, 16)))
	}
	if c.Note != "" {
		args = append(args, perfetto.String("note", c.Note))
	}
	return perfetto.Dict("compare", args...)
}
