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

// ref packs a position into the opaque reference a slice carries through
// the trace writer, so that a slice the writer moves can be traced back to
// its line.
func (l *ledger) ref(p strace.Pos) uint64 {
	i, ok := l.fileIdx[p.File]
	if !ok {
		i = len(l.files)
		l.files = append(l.files, p.File)
		l.fileIdx[p.File] = i
	}
	return uint64(i)<<48 | uint64(p.Line)&(1<<48-1)
}

// pos is the position ref packed.
func (l *ledger) pos(ref uint64) strace.Pos {
	i := int(ref >> 48)
	p := strace.Pos{Line: int64(ref & (1<<48 - 1))}
	if i < len(l.files) {
		p.File = l.files[i]
	}
	return p
}

func at(p strace.Pos) string {
	file := p.File
	if file == "" {
		file = "<input>"
	}
	if p.Line == 0 {
		return file
	}
	return file + ":" + strconv.FormatInt(p.Line, 10)
}

func (l *ledger) example(reason string, p strace.Pos, detail string) {
	if l.examples[reason] >= maxExamples {
		return
	}
	l.examples[reason]++
	l.sum.Examples = append(l.sum.Examples, Example{Reason: reason, At: at(p), Detail: detail})
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
func (l *ledger) dropSpan(reason string, p strace.Pos, detail string, n int64) {
	if n == 0 {
		return
	}
	bump(&l.sum.Spans.NotDrawn, reason, n)
	l.example(reason, p, detail)
}

// repaired counts a slice drawn after a repair of its record.
func (l *ledger) repaired(reason string, p strace.Pos, detail string) {
	bump(&l.sum.Repaired, reason, 1)
	l.example(reason, p, detail)
}

// moved counts a slice drawn on an overflow lane.
func (l *ledger) moved(reason string, p strace.Pos, detail string) {
	bump(&l.sum.Moved, reason, 1)
	l.example(reason, p, detail)
}

// notDrawn counts n records other than spans left out of the trace.
func (l *ledger) notDrawn(reason string, p strace.Pos, detail string, n int64) {
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
