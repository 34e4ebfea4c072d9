package strace

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
)

// PhasePass is one line of host_phase_records.jsonl: the per-operation
// records of one prepare pass, joined to its spans by (Pid, Inv). Times are
// CLOCK_MONOTONIC ns, the host spans' own axis.
type PhasePass struct {
	Pos     Pos
	Pid     int32
	Inv     uint64
	Clock   string // "host_monotonic_ns" when written by the runtime
	Dropped uint64 // records the pool could not keep
	Records []PhaseRecord
	// BadRecords counts entries of records that lack phase, start_ns or
	// end_ns, or hold values of the wrong type; they are left out.
	BadRecords int
}

// PhaseRecord is one host operation of a pass.
type PhaseRecord struct {
	Phase     string
	StartNS   uint64
	EndNS     uint64
	Tid       int64 // meaningful when HasTid
	HasTid    bool
	Detail    uint64 // meaningful when HasDetail
	HasDetail bool
}

// PhaseRecordsStats counts the lines of a host_phase_records.jsonl.
type PhaseRecordsStats struct {
	Lines     int64
	Passes    int64
	Blank     int64
	Torn      int64 // a last line without its newline that does not parse: the run was still appending
	Malformed int64 // any other line that is not a pass object
	LongLines int64
	Problems  []*SyntaxError
}

// PhaseRecordsReader reads host_phase_records.jsonl one pass at a time.
// Bad lines are counted and skipped; Read returns an error other than
// io.EOF only when the underlying reader fails.
type PhaseRecordsReader struct {
	cfg    config
	br     *bufio.Reader
	stats  PhaseRecordsStats
	offset int64
	err    error
}

// NewPhaseRecordsReader returns a reader of r. WithName, WithMaxLine (the
// default for these long lines is 64 times DefaultMaxLine) and
// WithMaxProblems apply.
func NewPhaseRecordsReader(r io.Reader, opts ...Option) *PhaseRecordsReader {
	cfg := newConfig(append([]Option{WithMaxLine(64 * DefaultMaxLine)}, opts...))
	return &PhaseRecordsReader{cfg: cfg, br: bufio.NewReaderSize(r, 64<<10)}
}

// Stats returns the counts so far.
func (p *PhaseRecordsReader) Stats() PhaseRecordsStats { return p.stats }

// Offset is the byte offset of the next line the reader reads: the end of
// the last line read.
func (p *PhaseRecordsReader) Offset() int64 { return p.offset }

// ErrSkipBack is returned by Skip for a position before the reader's.
var ErrSkipBack = errors.New("strace: skip to a position already read")

// Skip discards the input up to at.Offset, at or after Offset, and numbers
// the next line at.Line: at is where a pass was read before (its Pos), so
// that Read reads that pass again. An error reading the input is kept, as
// Read's.
func (p *PhaseRecordsReader) Skip(at Pos) error {
	if at.Offset < p.offset {
		return fmt.Errorf("%w: byte %d, the reader at byte %d", ErrSkipBack, at.Offset, p.offset)
	}
	if p.err == nil {
		n, err := p.br.Discard(int(min(at.Offset-p.offset, math.MaxInt)))
		p.offset += int64(n)
		if err != nil {
			p.err = err
		}
	}
	p.stats.Lines = at.Line - 1
	return nil
}

// Reset has the reader read r, whose next byte is the one at at.Offset of
// the input (r was sought there), numbering the next line at.Line: at is
// where a pass was read before (its Pos). The counts go on.
func (p *PhaseRecordsReader) Reset(r io.Reader, at Pos) {
	p.br.Reset(r)
	p.offset, p.err = at.Offset, nil
	p.stats.Lines = at.Line - 1
}

type rawPass struct {
	Pid     *json.Number      `json:"pid"`
	Inv     *json.Number      `json:"inv"`
	Clock   string            `json:"clock"`
	Dropped *json.Number      `json:"dropped"`
	Records []json.RawMessage `json:"records"`
}

type rawPhaseRecord struct {
	Phase   *string      `json:"phase"`
	StartNS *json.Number `json:"start_ns"`
	EndNS   *json.Number `json:"end_ns"`
	Tid     *json.Number `json:"tid"`
	Detail  *json.Number `json:"detail"`
}

// Read returns the next pass.
func (p *PhaseRecordsReader) Read() (PhasePass, error) {
	for {
		if p.err != nil {
			return PhasePass{}, p.err
		}
		start := p.offset
		line, complete, tooLong, err := p.readLine()
		if err != nil {
			p.err = err
		}
		if line == nil && !tooLong {
			continue
		}
		p.stats.Lines++
		pos := Pos{File: p.cfg.name, Line: p.stats.Lines, Offset: start}
		if tooLong {
			p.stats.LongLines++
			p.problem(pos, ErrLineTooLong, "longer than "+strconv.Itoa(p.cfg.maxLine)+" bytes")
			continue
		}
		text := bytes.TrimSpace(line)
		if len(text) == 0 {
			p.stats.Blank++
			continue
		}
		pass, reason := decodePass(text)
		if reason != "" {
			if !complete {
				p.stats.Torn++
				p.problem(pos, ErrTorn, "last line cut: "+reason)
			} else {
				p.stats.Malformed++
				p.problem(pos, ErrMalformed, reason)
			}
			continue
		}
		p.stats.Passes++
		pass.Pos = pos
		return pass, nil
	}
}

// readLine returns the next line, whether it ended in a newline, and whether
// it was over-long (then it is skipped, and line holds only its length).
func (p *PhaseRecordsReader) readLine() (line []byte, complete, tooLong bool, err error) {
	var buf []byte
	for {
		chunk, err := p.br.ReadSlice('\n')
		p.offset += int64(len(chunk))
		if !tooLong {
			if len(buf)+len(chunk) > p.cfg.maxLine+1 {
				tooLong = true
				buf = nil
			} else {
				buf = append(buf, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if tooLong {
			return nil, true, true, err
		}
		if len(buf) == 0 {
			return nil, false, false, err
		}
		return buf, buf[len(buf)-1] == '\n', false, err
	}
}

func (p *PhaseRecordsReader) problem(pos Pos, err error, reason string) {
	if len(p.stats.Problems) >= p.cfg.maxProblems {
		return
	}
	p.stats.Problems = append(p.stats.Problems, &SyntaxError{File: pos.File, Line: pos.Line, Offset: pos.Offset, Err: err, Reason: reason})
}

// decodePass decodes one line; a non-empty reason says why it is not a pass.
func decodePass(text []byte) (PhasePass, string) {
	var raw rawPass
	d := json.NewDecoder(bytes.NewReader(text))
	d.UseNumber()
	if err := d.Decode(&raw); err != nil {
		return PhasePass{}, "not a JSON object: " + err.Error()
	}
	if d.More() {
		return PhasePass{}, "text after the JSON object"
	}
	var pass PhasePass
	var ok bool
	if pass.Pid, ok = numI32(raw.Pid); !ok {
		return PhasePass{}, "pid: missing or not an int32"
	}
	if pass.Inv, ok = numU64(raw.Inv); !ok {
		return PhasePass{}, "inv: missing or not a uint64"
	}
	pass.Clock = raw.Clock
	if raw.Dropped != nil {
		if pass.Dropped, ok = numU64(raw.Dropped); !ok {
			return PhasePass{}, "dropped: not a uint64"
		}
	}
	pass.Records = make([]PhaseRecord, 0, len(raw.Records))
	for _, m := range raw.Records {
		var rr rawPhaseRecord
		rd := json.NewDecoder(bytes.NewReader(m))
		rd.UseNumber()
		if rd.Decode(&rr) != nil || rr.Phase == nil {
			pass.BadRecords++
			continue
		}
		rec := PhaseRecord{Phase: *rr.Phase}
		var ok1, ok2, ok3, ok4 bool = true, true, true, true
		rec.StartNS, ok1 = numU64(rr.StartNS)
		rec.EndNS, ok2 = numU64(rr.EndNS)
		if rr.Tid != nil {
			rec.Tid, ok3 = numI64(rr.Tid)
			rec.HasTid = ok3
		}
		if rr.Detail != nil {
			rec.Detail, ok4 = numU64(rr.Detail)
			rec.HasDetail = ok4
		}
		if !ok1 || !ok2 || !ok3 || !ok4 {
			pass.BadRecords++
			continue
		}
		pass.Records = append(pass.Records, rec)
	}
	return pass, ""
}

func numU64(n *json.Number) (uint64, bool) {
	if n == nil {
		return 0, false
	}
	v, err := strconv.ParseUint(string(*n), 10, 64)
	return v, err == nil
}

func numI64(n *json.Number) (int64, bool) {
	if n == nil {
		return 0, false
	}
	v, err := strconv.ParseInt(string(*n), 10, 64)
	return v, err == nil
}

func numI32(n *json.Number) (int32, bool) {
	if n == nil {
		return 0, false
	}
	v, err := strconv.ParseInt(string(*n), 10, 32)
	return int32(v), err == nil
}
