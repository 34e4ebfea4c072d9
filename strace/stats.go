package strace

import "fmt"

// Heads counts record heads, the markers that start a record, whether or not
// the rest of the record survived.
type Heads struct {
	Strace      int64 // "[STRACE]"
	ClockAnchor int64 // "[CLOCK_ANCHOR]"
	BindPhase   int64 // "bind phase=" (at the start of a line or after a space or ']')
	Stamp       int64 // "[stamp]" at the start of a line
	Autoload    int64 // "torch_backend_autoload setting=" (at the start of a line or after a blank or ']')
}

// Total returns the number of heads of every marker.
func (h Heads) Total() int64 { return h.Strace + h.ClockAnchor + h.BindPhase + h.Stamp + h.Autoload }

// Counts counts complete records by kind.
type Counts struct {
	Spans         int64
	WallAnchors   int64
	DeviceAnchors int64
	BindPhases    int64
	Stamps        int64
	Autoloads     int64
}

// Total returns the number of complete records of every kind.
func (c Counts) Total() int64 {
	return c.Spans + c.WallAnchors + c.DeviceAnchors + c.BindPhases + c.Stamps + c.Autoloads
}

func (c *Counts) add(k Kind) {
	switch k {
	case KindSpan:
		c.Spans++
	case KindWallAnchor:
		c.WallAnchors++
	case KindDeviceAnchor:
		c.DeviceAnchors++
	case KindBindPhase:
		c.BindPhases++
	case KindStamp:
		c.Stamps++
	case KindAutoload:
		c.Autoloads++
	}
}

// Stats is the reader's exact account of its input. Every record head is
// either a complete record, a span the span filter left out, or exactly one
// counted loss:
//
//	Heads.Total() == Records.Total() + Skipped + Torn + UnknownVersion + Malformed + InLongLines
//
// [Stats.Check] verifies it.
type Stats struct {
	Lines     int64 // physical lines, a last line without newline included
	Bytes     int64 // bytes consumed
	LongLines int64 // lines over the maximum length, skipped
	// Unterminated says the input did not end with a line end ('\n'): the
	// log was cut while a line was being written. The last record on that
	// line, if any, is counted as torn (ErrUnterminated), or returned with
	// its last attribute marked as possibly cut (MaybeCut).
	Unterminated bool

	Heads   Heads  // record heads seen
	Records Counts // complete records, by kind (returned unless WithKinds leaves their kind out)
	// Skipped counts the spans WithSpanFilter rejected: left out after
	// their name, neither returned nor checked further.
	Skipped int64
	// Joined counts the records returned (in Records) whose line end is
	// missing: the next record's log prefix or marker follows them directly
	// on their line (Record.Joined). Two ranks writing one stream join
	// records so; a join is not a loss.
	Joined int64
	// MaybeCut counts the records returned (in Records) whose last
	// attribute may be cut (Attr.MaybeCut): a span or bind phase line that
	// ended the input without a line end after its fixed fields. At most
	// one per input.
	MaybeCut int64

	Torn           int64 // heads whose record was cut before its grammar completed, or by the end of the input
	UnknownVersion int64 // heads with a version other than the defined ones
	Malformed      int64 // heads whose record breaks the grammar
	InLongLines    int64 // heads inside skipped over-long lines

	// Problems holds the first problems (MaxProblems of them, see
	// WithMaxProblems) in input order; each is a *SyntaxError.
	Problems []*SyntaxError
	// ProblemsOmitted counts problems past that limit.
	ProblemsOmitted int64
}

// Lost returns the number of record heads that did not become records.
func (s *Stats) Lost() int64 { return s.Torn + s.UnknownVersion + s.Malformed + s.InLongLines }

// LostSpans returns how many [STRACE] heads did not become spans, spans the
// span filter skipped not included.
func (s *Stats) LostSpans() int64 { return s.Heads.Strace - s.Records.Spans - s.Skipped }

// Check verifies the accounting identity of the statistics.
func (s *Stats) Check() error {
	if h, r := s.Heads.Total(), s.Records.Total()+s.Skipped+s.Lost(); h != r {
		return fmt.Errorf("strace: %d heads but %d records + %d skipped + %d torn + %d unknown-version + %d malformed + %d in long lines",
			h, s.Records.Total(), s.Skipped, s.Torn, s.UnknownVersion, s.Malformed, s.InLongLines)
	}
	if s.Records.Spans+s.Skipped > s.Heads.Strace ||
		s.Records.WallAnchors+s.Records.DeviceAnchors > s.Heads.ClockAnchor ||
		s.Records.BindPhases > s.Heads.BindPhase || s.Records.Stamps > s.Heads.Stamp ||
		s.Records.Autoloads > s.Heads.Autoload {
		return fmt.Errorf("strace: more records than heads of their marker: %+v vs %+v", s.Records, s.Heads)
	}
	if s.Joined > s.Records.Total() || s.MaybeCut > 1 || s.MaybeCut == 1 && !s.Unterminated {
		return fmt.Errorf("strace: %d joined and %d maybe-cut records of %d (unterminated %v)", s.Joined, s.MaybeCut, s.Records.Total(), s.Unterminated)
	}
	problems := int64(len(s.Problems)) + s.ProblemsOmitted
	if want := s.Torn + s.UnknownVersion + s.Malformed + s.LongLines; problems != want {
		return fmt.Errorf("strace: %d problems recorded, want %d", problems, want)
	}
	return nil
}

// Clone returns a copy that does not share Problems with the reader.
func (s Stats) Clone() Stats {
	s.Problems = append([]*SyntaxError(nil), s.Problems...)
	return s
}
