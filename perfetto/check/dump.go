package check

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

var clockNames = map[uint32]string{
	1: "REALTIME", 2: "REALTIME_COARSE", 3: "MONOTONIC", 4: "MONOTONIC_COARSE",
	5: "MONOTONIC_RAW", 6: "BOOTTIME", 9: "TSC", 10: "PERF", 11: "TRACE_FILE",
}

// Dump writes a stable, human-readable text form of the trace: the clock,
// the track tree with each track's slices nested by depth and their
// arguments, counters, flows and problems. Golden tests compare it.
func (t *Trace) Dump(w io.Writer) error {
	var b strings.Builder
	name := clockNames[t.PrimaryClock]
	if name == "" {
		name = strconv.FormatUint(uint64(t.PrimaryClock), 10)
	}
	fmt.Fprintf(&b, "clock %s\n", name)
	for _, wc := range t.Wall {
		fmt.Fprintf(&b, "wall %d = %d\n", wc.TS, wc.Wall)
	}
	children := map[uint64][]int{}
	known := map[uint64]bool{}
	for _, tr := range t.Tracks {
		known[tr.UUID] = true
	}
	var roots []int
	for i, tr := range t.Tracks {
		if tr.Parent != 0 && known[tr.Parent] {
			children[tr.Parent] = append(children[tr.Parent], i)
		} else {
			roots = append(roots, i)
		}
	}
	// Threads sit under their process in the UI.
	procs := map[int32]uint64{}
	for _, tr := range t.Tracks {
		if tr.Kind == "process" {
			procs[tr.Pid] = tr.UUID
		}
	}
	var top []int
	for _, i := range roots {
		tr := t.Tracks[i]
		if p, ok := procs[tr.Pid]; ok && tr.Kind == "thread" {
			children[p] = append(children[p], i)
			continue
		}
		top = append(top, i)
	}
	slicesOf := map[uint64][]int{}
	for i, s := range t.Slices {
		slicesOf[s.Track] = append(slicesOf[s.Track], i)
	}
	countersOf := map[uint64][]int{}
	for i, c := range t.Counters {
		countersOf[c.Track] = append(countersOf[c.Track], i)
	}
	var walk func(i int, indent string)
	walk = func(i int, indent string) {
		tr := t.Tracks[i]
		b.WriteString(indent)
		b.WriteString(trackLine(tr))
		b.WriteByte('\n')
		for _, si := range slicesOf[tr.UUID] {
			s := t.Slices[si]
			b.WriteString(indent + "  " + strings.Repeat("  ", s.Depth))
			if s.Instant {
				fmt.Fprintf(&b, "* %d %s", s.TS, s.Name)
			} else {
				fmt.Fprintf(&b, "[%d +%d] %s", s.TS, s.Dur, s.Name)
			}
			if s.Category != "" {
				fmt.Fprintf(&b, " (%s)", s.Category)
			}
			for _, a := range s.Args {
				b.WriteByte(' ')
				b.WriteString(a.Name)
				b.WriteByte('=')
				b.WriteString(FormatValue(a.Value))
			}
			b.WriteByte('\n')
		}
		for _, ci := range countersOf[tr.UUID] {
			c := t.Counters[ci]
			if c.Float {
				fmt.Fprintf(&b, "%s  @%d %s\n", indent, c.TS, strconv.FormatFloat(c.Value, 'g', -1, 64))
			} else {
				fmt.Fprintf(&b, "%s  @%d %d\n", indent, c.TS, c.Int)
			}
		}
		for _, ci := range children[tr.UUID] {
			walk(ci, indent+"  ")
		}
	}
	for _, i := range top {
		walk(i, "")
	}
	if len(t.Flows) > 0 {
		b.WriteString("flows\n")
		for _, f := range t.Flows {
			from, to := t.Slices[f.From], t.Slices[f.To]
			fmt.Fprintf(&b, "  %s@%d -> %s@%d\n", from.Name, from.TS, to.Name, to.TS)
		}
	}
	if len(t.Problems) > 0 {
		b.WriteString("problems\n")
		for _, p := range t.Problems {
			fmt.Fprintf(&b, "  %s\n", p)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func trackLine(tr Track) string {
	var s string
	switch tr.Kind {
	case "process":
		s = fmt.Sprintf("process %d %q", tr.Pid, tr.Name)
		if len(tr.Labels) > 0 {
			s += fmt.Sprintf(" labels=%q", tr.Labels)
		}
	case "thread":
		s = fmt.Sprintf("thread %d/%d %q", tr.Pid, tr.Tid, tr.Name)
	case "counter":
		s = fmt.Sprintf("counter %q", tr.Name)
		if tr.Unit != 0 {
			s += fmt.Sprintf(" unit=%d", tr.Unit)
		}
		if tr.UnitName != "" {
			s += fmt.Sprintf(" unit=%q", tr.UnitName)
		}
		if tr.YAxisShareKey != "" {
			s += fmt.Sprintf(" y_axis=%q", tr.YAxisShareKey)
		}
	default:
		s = fmt.Sprintf("track %q", tr.Name)
	}
	if tr.SortIndex != 0 {
		s += fmt.Sprintf(" sort=%d", tr.SortIndex)
	}
	if tr.Rank != 0 {
		s += fmt.Sprintf(" rank=%d", tr.Rank)
	}
	if tr.ChildOrder != 0 {
		s += " children=" + enumName(tr.ChildOrder, "unknown", "lexicographic", "chronological", "explicit")
	}
	if tr.Merge != 0 {
		s += " merge=" + enumName(tr.Merge, "unspecified", "by-name", "none", "by-key")
	}
	if tr.Description != "" {
		s += fmt.Sprintf(" desc=%q", tr.Description)
	}
	return s
}

func enumName(v int32, names ...string) string {
	if v >= 0 && int(v) < len(names) {
		return names[v]
	}
	return strconv.Itoa(int(v))
}

// FormatValue formats an argument value as Dump does: integers (signed or
// not) in decimal, as the numbers they are,
// strings quoted, dictionaries as {k=v ...}, arrays as [v ...].
func FormatValue(v any) string {
	switch v := v.(type) {
	case int64:
		return strconv.FormatInt(v, 10)
	case uint64:
		return strconv.FormatUint(v, 10)
	case bool:
		return strconv.FormatBool(v)
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	case string:
		return strconv.Quote(v)
	case []Arg:
		parts := make([]string, len(v))
		for i, a := range v {
			parts[i] = a.Name + "=" + FormatValue(a.Value)
		}
		return "{" + strings.Join(parts, " ") + "}"
	case []any:
		parts := make([]string, len(v))
		for i, e := range v {
			parts[i] = FormatValue(e)
		}
		return "[" + strings.Join(parts, " ") + "]"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%v", v)
}
