package truncation

import (
	"slices"
	"strconv"

	"github.com/phasetrace/phasetrace/internal/held"
)

// Slack is how far, in ns, the conversion can move a boundary (see the
// package doc).
const Slack = 2

// A Fix is a repaired device span's logged values.
type Fix struct {
	TS, Dur int64
	Shift   int64 // how far its start moved, added to its bound
	What    string
}

// partlyOverlap reports whether two spans of one lane partly overlap (one
// starts inside the other and ends after it), the only spans
// Repair changes.
func partlyOverlap(spans []held.Span, lanes []string) bool {
	for i := range spans {
		a := &spans[i]
		aEnd := a.TS + a.Dur
		for j := i + 1; j < len(spans); j++ {
			b := &spans[j]
			bEnd := b.TS + b.Dur
			if (a.TS < b.TS && b.TS < aEnd && aEnd < bEnd || b.TS < a.TS && a.TS < bEnd && bEnd < aEnd) && lanes[i] == lanes[j] {
				return true
			}
		}
	}
	return false
}

// maxSpans bounds the spans of one lane of one run that are compared
// pairwise for truncation overlaps.
const maxSpans = 64

// Repair undoes, on each device lane of one run (lanes[i] is
// spans[i]'s), the overlaps the
// runtime's truncating conversion makes of boundaries the device stamped
// at the same cycle (see Slack): a phase that overlaps its
// predecessor by at most 2 ns starts where the predecessor ends; a child
// that ends at most 2 ns past its parent ends with it; a child that starts
// at most 2 ns before its parent starts with it. It changes spans in place
// and returns the logged values of those it changed. Larger overlaps are
// not the conversion: they are drawn as they are (on an overflow lane, by
// the trace writer).
func Repair(spans []held.Span, lanes []string) map[int]Fix {
	switch {
	case len(spans) < 2:
		return nil
	case len(spans) <= maxSpans && !partlyOverlap(spans, lanes):
		return nil // nothing to undo (nearly every run); a longer run's check would cost as much as the repair
	}
	return repairOverlaps(spans, lanes)
}

// repairOverlaps is Repair past its check that a lane's spans
// partly overlap.
func repairOverlaps(spans []held.Span, lanes []string) map[int]Fix {
	var fixes map[int]Fix
	fix := func(i int, what string) {
		if fixes == nil {
			fixes = map[int]Fix{}
		}
		f, ok := fixes[i]
		if !ok {
			f = Fix{TS: spans[i].TS, Dur: spans[i].Dur}
		}
		switch {
		case f.What == "":
			f.What = what
		case what != "":
			f.What += "; " + what
		}
		fixes[i] = f
	}
	// Per span, its lane as an index into names, and per lane its spans.
	var laneBuf [16]int
	var namesBuf [8]string
	var countBuf [8]int
	lane, names, count := laneBuf[:0], namesBuf[:0], countBuf[:0]
	for i := range spans {
		l := slices.Index(names, lanes[i])
		if l < 0 {
			l = len(names)
			names, count = append(names, lanes[i]), append(count, 0)
		}
		lane = append(lane, l)
		count[l]++
	}
	for pass := 0; pass < 3; pass++ {
		changed := false
		for i := range spans {
			if count[lane[i]] > maxSpans {
				continue
			}
			for j := range spans {
				a, b := &spans[i], &spans[j]
				if i == j || lane[i] != lane[j] {
					continue
				}
				aEnd, bEnd := a.TS+a.Dur, b.TS+b.Dur
				if !(a.TS < b.TS && b.TS < aEnd && aEnd < bEnd) {
					continue // a and b nest or are apart
				}
				switch over, out, early := aEnd-b.TS, bEnd-aEnd, b.TS-a.TS; {
				case over <= Slack:
					fix(j, "started "+strconv.FormatInt(over, 10)+" ns before "+a.Name+" ended")
					b.TS, b.Dur = aEnd, b.Dur-over
				case out <= Slack:
					fix(j, "ended "+strconv.FormatInt(out, 10)+" ns after "+a.Name)
					b.Dur -= out
				case early <= Slack:
					fix(i, "started "+strconv.FormatInt(early, 10)+" ns before "+b.Name)
					a.TS, a.Dur = b.TS, a.Dur-early
				default:
					continue
				}
				changed = true
			}
		}
		if !changed {
			break
		}
	}
	for i, f := range fixes {
		f.Shift = max(spans[i].TS-f.TS, f.TS-spans[i].TS)
		fixes[i] = f
	}
	return fixes
}
