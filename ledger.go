package phasetrace

import (
	"strconv"

	"github.com/phasetrace/phasetrace/strace"
)

// The converter's rule for bad data: nothing costs the user the trace, and
// nothing is lost silently. Every complete span is drawn, superseded (a bind
// segment the host_phase_records artifact draws instead) or counted under a
// named reason; every repair, every slice moved to an overflow lane and
// every other record set aside is counted too, with the positions of the
// first few. The ledger keeps that account in the Summary.

// ledger accounts for what a conversion did with each record.
type ledger struct {
	sum      *Summary
	files    []string       // names of the inputs and artifacts, for refs
	fileIdx  map[string]int // index in files
	examples map[string]int // examples kept per reason
}

// maxExamples bounds the positions kept per reason.
const maxExamples = 8

func newLedger(sum *Summary) *ledger {
	return &ledger{sum: sum, fileIdx: map[string]int{}, examples: map[string]int{}}
}

// where is a record's position packed in 64 bits: the index of its file
// among the ledger's and its line. It is also the opaque reference a slice
// carries through the trace writer, so that a slice the writer moves can
// be traced back to its line.
type where uint64

// file returns the index of a file's name, registering it.
func (l *ledger) file(name string) uint64 {
	i, ok := l.fileIdx[name]
	if !ok {
		i = len(l.files)
		l.files = append(l.files, name)
		l.fileIdx[name] = i
	}
	return uint64(i)
}

// line is the position of line n of file f (an index from file).
func line(f uint64, n int64) where { return where(f<<48 | uint64(n)&(1<<48-1)) }

// where packs a position.
func (l *ledger) where(p strace.Pos) where { return line(l.file(p.File), p.Line) }

// at formats a position as file:line.
func (l *ledger) at(w where) string {
	file := "<input>"
	if i := int(w >> 48); i < len(l.files) && l.files[i] != "" {
		file = l.files[i]
	}
	if n := int64(w & (1<<48 - 1)); n != 0 {
		return file + ":" + strconv.FormatInt(n, 10)
	}
	return file
}

func (l *ledger) example(reason string, w where, detail string) {
	if l.examples[reason] >= maxExamples {
		return
	}
	l.examples[reason]++
	l.sum.Examples = append(l.sum.Examples, Example{Reason: reason, At: l.at(w), Detail: detail})
}

func bump(m *map[string]int64, reason string, n int64) {
	if n == 0 {
		return
	}
	if *m == nil {
		*m = map[string]int64{}
	}
	(*m)[reason] += n
}

// drawn counts a span drawn.
func (l *ledger) drawn() { l.sum.Spans.Drawn++ }

// dropSpan counts n spans not drawn for reason; p is where the first is.
func (l *ledger) dropSpan(reason string, p where, detail string, n int64) {
	if n == 0 {
		return
	}
	bump(&l.sum.Spans.NotDrawn, reason, n)
	l.example(reason, p, detail)
}

// repaired counts a slice drawn after a repair of its record.
func (l *ledger) repaired(reason string, p where, detail string) {
	bump(&l.sum.Repaired, reason, 1)
	l.example(reason, p, detail)
}

// moved counts a slice drawn on an overflow lane.
func (l *ledger) moved(reason string, p where, detail string) {
	bump(&l.sum.Moved, reason, 1)
	l.example(reason, p, detail)
}

// notDrawn counts n records other than spans left out of the trace.
func (l *ledger) notDrawn(reason string, p where, detail string, n int64) {
	if n == 0 {
		return
	}
	bump(&l.sum.NotDrawn, reason, n)
	l.example(reason, p, detail)
}

// superseded counts n records drawn from another source instead.
func (l *ledger) superseded(reason string, n int64) { bump(&l.sum.Superseded, reason, n) }

// unlinked counts a hand-off span drawn without its arrow.
func (l *ledger) unlinked(reason string) { bump(&l.sum.Unlinked, reason, 1) }
