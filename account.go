package phasetrace

import (
	"slices"
	"strconv"

	"github.com/phasetrace/phasetrace/internal/held"
	"github.com/phasetrace/phasetrace/strace"
)

// The converter's rule for bad data: nothing costs the user the trace, and
// nothing is lost silently. Every complete span is drawn, superseded (a bind
// segment the host_phase_records artifact draws instead) or counted under a
// named reason; every repair, every slice moved to an overflow lane and
// every other record set aside is counted too, with the positions of the
// first few. The account keeps that record in the Summary.

// account accounts for what a conversion did with each record.
type account struct {
	sum      *Summary
	files    []string       // names of the inputs and artifacts, for refs
	fileIdx  map[string]int // index in files
	examples map[Reason]int // examples kept per reason
	kinds    []string       // the kinds of slices other than spans, for refs
	// lanesOut counts, per track and reason, the spans refused there
	// because its overflow lanes ran out, said once per track (finish).
	lanesOut    map[trackReason]*refusedOnTrack
	lanesOutSeq []trackReason
	notes       map[string]int // notes said, by kind
}

type trackReason struct {
	track  string
	reason Reason
}

type refusedOnTrack struct {
	first held.Pos
	n     int64
}

// maxExamples bounds the positions kept per reason.
const maxExamples = 8

func newAccount(sum *Summary) *account {
	return &account{sum: sum, notes: map[string]int{}, fileIdx: map[string]int{}, examples: map[Reason]int{}}
}

// A slice's Ref, which the trace writer hands back when it moves or refuses
// the slice, is its position with, in its top refKindBits bits, what it is:
// 0 for a span of the log, else one of the account's kinds of other slices
// (a derived effective slice, a bind phase line, ...).
const (
	refKindBits  = 3
	refKindShift = 64 - refKindBits
	maxRefKinds  = 1<<refKindBits - 1
)

// sliceRef is the Ref of a slice of kind what ("": a span) read at p.
func (l *account) sliceRef(what string, p held.Pos) uint64 {
	k := 0
	if what != "" {
		k = slices.Index(l.kinds, what)
		switch {
		case k >= 0:
		case len(l.kinds) < maxRefKinds:
			l.kinds = append(l.kinds, what)
			k = len(l.kinds) - 1
		default:
			k = maxRefKinds - 1 // the table is full: the last kind's name, never a span
		}
		k++
	}
	return uint64(p)&(1<<refKindShift-1) | uint64(k)<<refKindShift
}

// fromSliceRef returns what a slice is ("": a span) and where it was read.
func (l *account) fromSliceRef(ref uint64) (what string, p held.Pos) {
	p = held.Pos(ref & (1<<refKindShift - 1))
	if k := int(ref >> refKindShift); k > 0 {
		return l.kinds[k-1], p
	}
	return "", p
}

// file returns the index of a file's name, registering it.
func (l *account) file(name string) uint64 {
	i, ok := l.fileIdx[name]
	if !ok {
		i = len(l.files)
		l.files = append(l.files, name)
		l.fileIdx[name] = i
	}
	return uint64(i)
}

// pos packs a record's position.
func (l *account) pos(p strace.Pos) held.Pos { return held.PosAt(l.file(p.File), p.Line) }

// fileLine formats a position as file:line.
func (l *account) fileLine(w held.Pos) string {
	file := "<input>"
	if i := int(w >> 48); i < len(l.files) && l.files[i] != "" {
		file = l.files[i]
	}
	if n := int64(w & (1<<48 - 1)); n != 0 {
		return file + ":" + strconv.FormatInt(n, 10)
	}
	return file
}

func (l *account) example(reason Reason, w held.Pos, detail string) {
	if l.examples[reason] >= maxExamples {
		return
	}
	l.examples[reason]++
	l.sum.Examples = append(l.sum.Examples, Example{Reason: reason, At: l.fileLine(w), Detail: detail})
}

// drawn counts a span drawn.
func (l *account) drawn() { l.sum.Spans.Drawn++ }

// dropSpan counts n spans not drawn for reason; p is where the first is.
func (l *account) dropSpan(reason Reason, p held.Pos, detail string, n int64) {
	if n == 0 {
		return
	}
	bump(&l.sum.Spans.NotDrawn, reason, n)
	l.example(reason, p, detail)
}

// repaired counts a slice drawn after a repair of its record.
func (l *account) repaired(reason Reason, p held.Pos, detail string) {
	bump(&l.sum.Repaired, reason, 1)
	l.example(reason, p, detail)
}

// moved counts a slice drawn on an overflow lane.
func (l *account) moved(reason Reason, p held.Pos, detail string) {
	bump(&l.sum.Moved, reason, 1)
	l.example(reason, p, detail)
}

// notDrawn counts n records other than spans left out of the trace.
func (l *account) notDrawn(reason Reason, p held.Pos, detail string, n int64) {
	if n == 0 {
		return
	}
	bump(&l.sum.NotDrawn, reason, n)
	l.example(reason, p, detail)
}

// superseded counts n records drawn from another source instead.
func (l *account) superseded(reason Reason, n int64) { bump(&l.sum.Superseded, reason, n) }

// flow counts an arrow drawn, by its kind.
func (l *account) flow(kind FlowKind) { l.sum.flow(kind) }

// unlinked counts a hand-off span drawn without its arrow.
func (l *account) unlinked(reason Reason) { bump(&l.sum.Unlinked, reason, 1) }

// dropOnTrack counts a span not drawn for reason, said once per track with
// a count (finish): the spans a track's full overflow lanes refuse can be
// most of a log.
func (l *account) dropOnTrack(reason Reason, track string, p held.Pos) {
	bump(&l.sum.Spans.NotDrawn, reason, 1)
	k := trackReason{track, reason}
	r := l.lanesOut[k]
	if r == nil {
		if l.lanesOut == nil {
			l.lanesOut = map[trackReason]*refusedOnTrack{}
		}
		r = &refusedOnTrack{first: p}
		l.lanesOut[k] = r
		l.lanesOutSeq = append(l.lanesOutSeq, k)
	}
	r.n++
}

// finish writes the examples said once per track.
func (l *account) finish() {
	for _, k := range l.lanesOutSeq {
		r := l.lanesOut[k]
		l.example(k.reason, r.first, itoa(r.n)+" spans on "+k.track+", the first refused here")
	}
	l.lanesOut, l.lanesOutSeq = nil, nil
}

// note adds a note of kind to the summary: the first few of each kind.
func (l *account) note(kind, format string, args ...any) {
	l.sum.note(kind, l.notes, format, args...)
}
