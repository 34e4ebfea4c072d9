package analysis

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/phasetrace/phasetrace/strace"
)

// RoundsColumn is a column of the per-round table.
type RoundsColumn int

// The per-round columns, in print order.
const (
	ColHost      RoundsColumn = iota // chip.run: host wall including dispatch overhead
	ColDevice                        // chip.run.runner_run.device_wall: the whole on-NPU wall
	ColEffective                     // orch ∪ sched: max(ends) − min(starts) of the two device windows
	ColOrch                          // chip.run.runner_run.device_wall.orch
	ColSched                         // chip.run.runner_run.device_wall.sched
	NumRoundsColumns
)

var roundsColumnNames = [NumRoundsColumns]string{"Host", "Device", "Effective", "Orch", "Sched"}

func (c RoundsColumn) String() string {
	if c >= 0 && c < NumRoundsColumns {
		return roundsColumnNames[c]
	}
	return fmt.Sprintf("RoundsColumn(%d)", int(c))
}

// Span names behind the columns.
const (
	spanRun   = strace.SpanRun
	spanOrch  = strace.SpanDeviceWall + "." + strace.PhaseOrch
	spanSched = strace.SpanDeviceWall + "." + strace.PhaseSched
)

// TrimRounds is how many rounds the trimmed means drop at each end; they are
// computed only past 2·TrimRounds values.
const TrimRounds = 10

// Round is one row of the per-round table: one invocation of the busiest
// callable. Values are ns; 0 means the span was not captured.
type Round struct {
	Pid    int32
	Inv    uint64
	Values [NumRoundsColumns]int64
}

// RoundsStats summarises one column. Host averages every round; the other
// columns average only the rounds that captured them (value > 0).
type RoundsStats struct {
	Shown bool // Host always; another column when some round captured it
	N     int  // rounds averaged
	Mean  int64
	// Trimmed is set when more than 2·TrimRounds values were averaged:
	// TrimmedMean drops the TrimRounds lowest and highest of them.
	Trimmed     bool
	TrimmedMean int64
}

// Rounds is the per-round Host / Device / Effective / Orch / Sched table of
// the busiest callable, one row per invocation ordered by inv.
type Rounds struct {
	Hid     uint64
	Role    strace.Role
	Rows    []Round
	Columns [NumRoundsColumns]RoundsStats
}

// AnalyzeRounds builds the per-round table of the busiest hid (ties go to
// the callable whose first invocation comes first). It returns nil when the
// spans hold no invocation.
func AnalyzeRounds(spans []strace.Span) *Rounds {
	t := NewTables(WithTables(TableRounds), WithMaxOpen(len(spans)))
	t.AddAll(spans)
	return t.Rounds()
}

// summarise computes the column statistics from the rows.
func (r *Rounds) summarise() {
	for col := ColHost; col < NumRoundsColumns; col++ {
		vals := r.columnValues(col)
		st := RoundsStats{Shown: col == ColHost || len(vals) > 0, N: len(vals), Mean: truncMean(vals)}
		if len(vals) > 2*TrimRounds {
			st.Trimmed = true
			st.TrimmedMean = truncMean(vals[TrimRounds : len(vals)-TrimRounds])
		}
		r.Columns[col] = st
	}
}

// columnValues returns the sorted values a column averages.
func (r *Rounds) columnValues(col RoundsColumn) []int64 {
	var vals []int64
	for _, row := range r.Rows {
		if v := row.Values[col]; col == ColHost || v > 0 {
			vals = append(vals, v)
		}
	}
	sort.Slice(vals, func(i, j int) bool { return vals[i] < vals[j] })
	return vals
}

func satSub64(a, b int64) int64 {
	d := a - b
	if (d < a) != (b > 0) {
		if b > 0 {
			return -1 << 63
		}
		return 1<<63 - 1
	}
	return d
}

// WriteRounds prints the table in the layout benchmark scripts parse
// (header "  Round     Host (us) ...", an "Avg Host:" summary line, and a
// trimmed-mean line past 20 rounds), with the runtime tool's numbers to the
// last digit:
//
//	Round     Host (us)   Device (us)
//	---------------------------------
//	0             100.0          20.0
//	1             120.0          24.0
//	Avg Host: 110.0 us  |  Avg Device: 22.0 us [2/2]  (2 rounds)
//
// Columns every round read 0 are hidden.
func WriteRounds(w io.Writer, r *Rounds) error {
	ew := &errWriter{w: w}
	if r == nil || len(r.Rows) == 0 {
		ew.println(noMarkers)
		return ew.err
	}
	var shown []RoundsColumn
	for col := ColHost; col < NumRoundsColumns; col++ {
		if r.Columns[col].Shown {
			shown = append(shown, col)
		}
	}
	var hb strings.Builder
	fmt.Fprintf(&hb, "  %-6s", "Round")
	for _, col := range shown {
		fmt.Fprintf(&hb, "  %12s", col.String()+" (us)")
	}
	header := hb.String()
	ew.println(header)
	ew.println("  " + strings.Repeat("-", len(header)-2))
	var line, num []byte
	for i, row := range r.Rows {
		// "  %-6d" then "  %12s" per column, without fmt: one line per round.
		num = strconv.AppendInt(num[:0], int64(i), 10)
		line = append(append(line[:0], "  "...), num...)
		line = appendSpaces(line, 6-len(num))
		for _, col := range shown {
			num = strconv.AppendFloat(num[:0], pyFloat(row.Values[col])/1000.0, 'f', 1, 64)
			line = appendSpaces(append(line, "  "...), 12-len(num))
			line = append(line, num...)
		}
		ew.write(append(line, '\n'))
	}
	n := len(r.Rows)
	var sb strings.Builder
	fmt.Fprintf(&sb, "  Avg Host: %s us", fmtF(pyMeanUS(r.columnValues(ColHost)), 1))
	for _, col := range shown[1:] {
		vals := r.columnValues(col)
		fmt.Fprintf(&sb, "  |  Avg %s: %s us", col, fmtF(pyMeanUS(vals), 1))
		if col == ColDevice {
			fmt.Fprintf(&sb, " [%d/%d]", len(vals), n)
		}
	}
	fmt.Fprintf(&sb, "  (%d rounds)", n)
	ew.println(sb.String())
	if n > 2*TrimRounds {
		host := r.columnValues(ColHost)
		tc := n - 2*TrimRounds
		var tb strings.Builder
		fmt.Fprintf(&tb, "  Trimmed Avg Host: %s us", fmtF(pyMeanUS(host[TrimRounds:n-TrimRounds]), 1))
		if dev := r.columnValues(ColDevice); r.Columns[ColDevice].Shown && len(dev) > 2*TrimRounds {
			fmt.Fprintf(&tb, "  |  Trimmed Avg Device: %s us", fmtF(pyMeanUS(dev[TrimRounds:len(dev)-TrimRounds]), 1))
		}
		fmt.Fprintf(&tb, "  (dropped %d low + %d high, %d rounds used)", TrimRounds, TrimRounds, tc)
		ew.println(tb.String())
	}
	return ew.err
}

func appendSpaces(b []byte, n int) []byte {
	for range n {
		b = append(b, ' ')
	}
	return b
}

// pyMeanUS is the runtime tool's mean of sorted ns values in µs: each value
// divided by 1000.0, summed in order, divided by the count.
func pyMeanUS(sorted []int64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	xs := make([]float64, len(sorted))
	for i, v := range sorted {
		xs[i] = pyFloat(v) / 1000.0
	}
	return pySum(xs) / float64(len(xs))
}
