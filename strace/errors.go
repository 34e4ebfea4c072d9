package strace

import (
	"errors"
	"fmt"
)

// Sentinels that positioned errors unwrap to. Test with errors.Is.
var (
	// ErrTorn: the record ends (at the end of its line, or where the next
	// record begins) before its grammar is complete: it was cut mid-write.
	ErrTorn = errors.New("torn record")
	// ErrUnterminated: the record is the last on the input's last line,
	// which has no line end. The runtime ends every line it writes, so the
	// log was cut while this record was being written: it may be cut, even
	// where its grammar looks complete (dur=62 of dur=62850). It is counted
	// as torn, and errors.Is(err, ErrTorn) holds for it too. (A span or bind
	// phase line whose fixed fields came whole is kept instead: see
	// Attr.MaybeCut.)
	ErrUnterminated = fmt.Errorf("%w: the log ends inside this record, which may be cut", ErrTorn)
	// ErrMalformed: the record's text does not follow the grammar.
	ErrMalformed = errors.New("malformed record")
	// ErrUnknownVersion: the record has a version this package does not
	// define. It is skipped, never guessed at.
	ErrUnknownVersion = errors.New("unknown record version")
	// ErrLineTooLong: a physical line exceeds the reader's maximum; it is
	// skipped and the record heads inside it are counted as lost.
	ErrLineTooLong = errors.New("line too long")
	// ErrInvalidSample: a calibration sample fails a validity rule.
	ErrInvalidSample = errors.New("invalid calibration sample")
	// ErrUnsupportedUnit: a calibration document names a unit no sample in it can be read in.
	ErrUnsupportedUnit = errors.New("unsupported device timestamp unit")
)

// SyntaxError is a counted problem at a position in the input. Err is one of
// the sentinels above; Reason says what exactly was wrong.
type SyntaxError struct {
	File   string
	Line   int64
	Offset int64 // byte offset of the record head (or of the line, for ErrLineTooLong)
	Err    error
	Reason string
}

func (e *SyntaxError) Error() string {
	file := e.File
	if file == "" {
		file = "<input>"
	}
	if e.Reason == "" {
		return fmt.Sprintf("%s:%d: byte %d: strace: %v", file, e.Line, e.Offset, e.Err)
	}
	return fmt.Sprintf("%s:%d: byte %d: strace: %v: %s", file, e.Line, e.Offset, e.Err, e.Reason)
}

func (e *SyntaxError) Unwrap() error { return e.Err }

// Pos returns the error's position.
func (e *SyntaxError) Pos() Pos { return Pos{File: e.File, Line: e.Line, Offset: e.Offset} }
