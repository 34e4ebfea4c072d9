package strace

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strconv"
	"unsafe"
)

// Reader defaults.
const (
	// DefaultMaxLine is the longest line, in bytes without its line end,
	// that the reader parses. A longer line is skipped and counted.
	DefaultMaxLine = 64 << 10
	// MinMaxLine is the smallest maximum WithMaxLine accepts; smaller values
	// are raised to it.
	MinMaxLine = 256
	// DefaultMaxProblems is how many problems Stats.Problems keeps.
	DefaultMaxProblems = 16
)

type config struct {
	name        string
	maxLine     int
	maxProblems int
	spanFilter  func(depth int32, name string) bool
	kinds       uint32 // a bit per Kind returned; 0 returns every kind
	recycle     bool   // a Merger's records share recycled memory
}

// Option configures a Reader, a PhaseRecordsReader or ReadCalibration.
type Option func(*config)

// WithName names the input in positions and errors (usually its file name).
func WithName(name string) Option { return func(c *config) { c.name = name } }

// WithMaxLine sets the longest line, in bytes without its line end, that is
// parsed; memory is bounded by it. The default is DefaultMaxLine.
func WithMaxLine(n int) Option { return func(c *config) { c.maxLine = max(n, MinMaxLine) } }

// WithMaxProblems sets how many problems Stats keeps with their positions
// (all are counted). The default is DefaultMaxProblems.
func WithMaxProblems(n int) Option { return func(c *config) { c.maxProblems = max(n, 0) } }

// WithSpanFilter makes a Reader leave out the spans that keep rejects,
// without reading them: keep is called with a span's depth and decoded name,
// found by the grammar's field order before anything else of the span is
// read, and a span it rejects is counted in Stats.Skipped, neither returned
// nor checked (it is never counted as torn or malformed, whatever its other
// fields hold). A span whose text does not follow the grammar as far as its
// name is read in full, as without a filter. name is valid only during the
// call. keep is called on the reading goroutine.
func WithSpanFilter(keep func(depth int32, name string) bool) Option {
	return func(c *config) { c.spanFilter = keep }
}

// WithKinds makes a Reader return only records of the given kinds. The
// other records are still read, checked and counted (Stats.Records and the
// losses stay exact), but not returned. Without it, or with no kinds, every
// kind is returned.
func WithKinds(kinds ...Kind) Option {
	return func(c *config) {
		c.kinds = 0
		for _, k := range kinds {
			if k < 32 {
				c.kinds |= 1 << k
			}
		}
	}
}

// WithRecycledMemory makes a Merger recycle the memory of its records
// instead of allocating it anew as it reads: a record it returns, the Attrs
// slices in it and every string in it are valid only until the next Read,
// except the canonical strings, which stay valid and unchanged for good:
//
//   - Span.Name, BindPhase.Phase, BindPhase.Source, Prefix.Level and
//     Prefix.Func;
//   - every attribute's Key (a bare attribute's token too);
//   - every attribute Value of Type TypeString at most CanonicalValueLen
//     bytes long.
//
// The Merger interns canonical strings, each input in a table of its own:
// within an input, while its table has room (16384 strings; 4096 prefix
// levels and functions), equal ones are the same string (the same bytes in
// memory). Every canonical string is owned by the Merger — past the table's
// room, a copy of its own — and never in the memory it recycles.
// Everything else — the text of integer values, longer string values, a
// stamp's or an autoload record's text, the Attrs slices — lives in memory
// the Merger reuses once Read has moved past the record. Pos.File is the
// input's name, which stays valid too.
//
// A caller that keeps something else across Reads copies it first (with
// strings.Clone, or Record.Clone and strings.Clone of its text). In return,
// once its memory holds what a batch of records needs, reading costs no
// allocation per record: only a distinct canonical string costs one, the
// first time it is seen (every time, past its table's room). Under the race
// detector, recycled memory is overwritten before it is reused, so that a
// test keeping it too long reads garbage.
//
// Readers, PhaseRecordsReader and ReadCalibration ignore it (a Reader reuses
// memory through ResetBytes).
func WithRecycledMemory() Option { return func(c *config) { c.recycle = true } }

// CanonicalValueLen is the longest text attribute value that a Merger with
// WithRecycledMemory interns, keeping it valid for good.
const CanonicalValueLen = 256

func newConfig(opts []Option) config {
	c := config{maxLine: DefaultMaxLine, maxProblems: DefaultMaxProblems}
	for _, o := range opts {
		o(&c)
	}
	return c
}

// Reader reads records from a runtime log, in input order.
//
// A Reader never stops on bad input: torn records, unknown versions,
// malformed records and over-long lines are counted in Stats (the first few
// with their positions) and reading continues. Read returns an error other
// than io.EOF only when the underlying reader fails.
//
// The last record on a last line without a line end (the input ended, or
// the underlying reader failed, inside it) may be cut: it is counted as torn
// with ErrUnterminated, unless it is a span or bind phase line with
// attribute text after its fixed fields, which is returned with its last
// attribute marked Attr.MaybeCut. A record joined to the next on its line
// (Record.Joined) is complete and returned.
//
// Strings in a returned Record never alias the reader's buffers and stay
// valid (until ResetBytes, which reuses their memory); the Attrs slices of
// Span and BindPhase are reused by the next Read (use Record.Clone to keep
// them).
type Reader struct {
	cfg   config
	in    input
	stats Stats

	line    []byte // the line being scanned, line end stripped; nil when none
	lineNo  int64
	lineOff int64 // input offset of line[0]
	next    int64 // input offset of the next line
	pos     int   // scan cursor in line
	open    bool  // the line has no line end: the input stopped inside it

	pfx    Prefix // the last log prefix seen on this line
	pfxEnd int    // where it ends in line, or -1

	memory  recordMemory
	names   nameMemo
	scratch []byte // a decoded name for the span filter
}

// input is where a Reader's lines come from: a bufio.Reader, or what is
// left of the bytes a Reader of bytes reads.
type input struct {
	br  *bufio.Reader // nil for a Reader of bytes
	src []byte        // what is left of the bytes a Reader of bytes reads
	err error         // sticky: io.EOF or the I/O error, returned once the line is done
}

// recordMemory is where the strings and attributes of the records a
// Reader returns live.
type recordMemory struct {
	attrs []Attr
	owned *attrArena // when set, attributes are parsed into it (a Merger's)
	arena *arena     // the strings' memory: own, or a Merger's batch's
	own   arena
}

// nameMemo keeps the level and function names a Reader has met, so that
// their strings stay valid for good and the commonest are not parsed again.
type nameMemo struct {
	interns map[string]string // owned strings: they stay valid for good
	// The last level and function seen, checked before the intern map, and
	// the text of the last prefix's, which spares parsing them: without
	// them a conversion takes 2.5 % longer (median of 48 interleaved pairs,
	// 507 → 528 ms, of go test -run XXX -bench 'ConvertFile$' -benchtime 1x
	// -benchfile F . in the root package, on a log of 100 MB from
	// TestGenerateLog).
	lastLevel, lastFunc string
	lastTail            string // "<LEVEL>]<blanks><func>:<blanks>" of the last prefix
}

// NewReader returns a Reader of r.
func NewReader(r io.Reader, opts ...Option) *Reader {
	rd := newReader(opts)
	rd.in.br = bufio.NewReaderSize(r, rd.cfg.maxLine+2)
	return rd
}

// NewBytesReader returns a Reader of b that hands out b's lines in place,
// without copying them into a buffer of its own: it reads exactly what
// NewReader(bytes.NewReader(b), opts...) reads (the same records, Stats and
// positions, over-long lines skipped alike). The Reader never writes to b,
// and b must not change while it is read. As with NewReader, the strings of
// the records returned never alias b.
func NewBytesReader(b []byte, opts ...Option) *Reader {
	rd := newReader(opts)
	rd.in.src = b
	return rd
}

// newReader returns a Reader of opts with nothing to read yet.
func newReader(opts []Option) *Reader {
	rd := &Reader{cfg: newConfig(opts), names: nameMemo{interns: make(map[string]string)}, pfxEnd: -1}
	rd.memory.arena = &rd.memory.own
	return rd
}

// ResetBytes makes r a Reader of b, reading it as NewBytesReader(b) with
// r's options would (positions and Stats start again from zero), but in
// r's memory: a reader reset for every chunk of a log costs no allocation
// once its memory holds what a chunk needs.
//
// The strings of the records read before the reset live in that memory:
// they are invalid after it, except Prefix.Level and Prefix.Func, which
// the reader keeps in a table of its own and which stay valid and
// unchanged for good. (Under the race detector the memory is overwritten
// at the reset, so that a string kept too long reads as garbage in tests.)
// As after NewBytesReader, the Reader never writes to b, and b must not
// change while it is read. The Stats returned before stay as they were.
func (r *Reader) ResetBytes(b []byte) {
	r.memory.arena = &r.memory.own
	r.memory.own.rewind()
	r.in.br, r.in.src = nil, b
	r.stats = Stats{}
	r.line, r.lineNo, r.lineOff, r.next, r.pos, r.open = nil, 0, 0, 0, 0, false
	r.pfx, r.pfxEnd = Prefix{}, -1
	r.in.err = nil
}

// readSlice returns the next line with its line end, as bufio.Reader's
// ReadSlice('\n') does with a buffer of maxLine+2 bytes: a line that does not
// fit comes in pieces, each but the last with bufio.ErrBufferFull.
func (r *Reader) readSlice() ([]byte, error) {
	if r.in.br != nil {
		return r.in.br.ReadSlice('\n')
	}
	rest := r.in.src
	if len(rest) == 0 {
		return nil, io.EOF
	}
	size := r.cfg.maxLine + 2 // NewReader's buffer
	if k := bytes.IndexByte(rest[:min(len(rest), size)], '\n'); k >= 0 {
		r.in.src = rest[k+1:]
		return rest[:k+1], nil
	}
	if len(rest) >= size {
		r.in.src = rest[size:]
		return rest[:size], bufio.ErrBufferFull
	}
	r.in.src = nil
	return rest, io.EOF
}

// Stats returns the counts so far. Problems is shared with the reader; use
// Stats.Clone to keep a copy across further reads.
func (r *Reader) Stats() Stats { return r.stats }

// Read returns the next record. It returns io.EOF at the end of the input,
// and another error only when the underlying reader fails.
func (r *Reader) Read() (Record, error) {
	var rec Record
	if err := r.read(&rec); err != nil {
		return Record{}, err
	}
	return rec, nil
}

// read is Read into *rec, which it overwrites whole (and leaves undefined
// when it returns an error).
func (r *Reader) read(rec *Record) error {
	for {
		if r.line != nil {
			if r.scan(rec) {
				if r.cfg.kinds != 0 && r.cfg.kinds&(1<<rec.Kind) == 0 {
					continue
				}
				return nil
			}
			r.line = nil
		}
		if r.in.err != nil {
			return r.in.err
		}
		r.readLine()
	}
}

// readLine loads the next line, skipping over-long ones.
func (r *Reader) readLine() {
	data, err := r.readSlice()
	if errors.Is(err, bufio.ErrBufferFull) {
		r.skipLong(data)
		return
	}
	if err != nil {
		r.in.err = err
	}
	if len(data) == 0 {
		return
	}
	r.lineNo++
	r.stats.Lines++
	r.stats.Bytes += int64(len(data))
	r.lineOff = r.next
	r.next += int64(len(data))
	line := data
	open := line[len(line)-1] != '\n'
	if !open {
		line = line[:len(line)-1]
	}
	r.stats.Unterminated = open
	if len(line) > 0 && line[len(line)-1] == '\r' {
		// A lone CR at the end of the input: the cut fell inside the
		// line end, after the line's text.
		line = line[:len(line)-1]
		open = false
	}
	if len(line) > r.cfg.maxLine {
		var hc headCounter
		hc.feed(line)
		r.countLong(&hc)
		return
	}
	r.line = line
	r.open = open
	r.pos = 0
	r.pfxEnd = -1
}

// skipLong consumes a line longer than the bufio buffer, counting the record
// heads inside it.
func (r *Reader) skipLong(first []byte) {
	r.lineNo++
	r.stats.Lines++
	r.lineOff = r.next
	var hc headCounter
	data := first
	for {
		r.stats.Bytes += int64(len(data))
		r.next += int64(len(data))
		hc.feed(data)
		if len(data) > 0 && data[len(data)-1] == '\n' {
			break
		}
		var err error
		data, err = r.readSlice()
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil {
			r.in.err = err
			if len(data) > 0 {
				r.stats.Bytes += int64(len(data))
				r.next += int64(len(data))
				hc.feed(data)
			}
			r.stats.Unterminated = len(data) == 0 || data[len(data)-1] != '\n'
			break
		}
	}
	r.countLong(&hc)
}

func (r *Reader) countLong(hc *headCounter) {
	r.stats.LongLines++
	h := hc.heads
	r.stats.Heads.Strace += h.Strace
	r.stats.Heads.ClockAnchor += h.ClockAnchor
	r.stats.Heads.BindPhase += h.BindPhase
	r.stats.Heads.Stamp += h.Stamp
	r.stats.Heads.Autoload += h.Autoload
	r.stats.InLongLines += h.Total()
	r.problem(r.lineOff, ErrLineTooLong, "longer than "+strconv.Itoa(r.cfg.maxLine)+" bytes; "+
		strconv.FormatInt(h.Total(), 10)+" record heads in it lost")
}

func (r *Reader) problem(off int64, err error, reason string) {
	if len(r.stats.Problems) >= r.cfg.maxProblems {
		r.stats.ProblemsOmitted++
		return
	}
	r.stats.Problems = append(r.stats.Problems, &SyntaxError{
		File: r.cfg.name, Line: r.lineNo, Offset: off, Err: err, Reason: reason,
	})
}

// lost counts a head that did not become a record.
func (r *Reader) lost(at int, p *parser) {
	var err error
	switch p.st {
	case stTorn:
		r.stats.Torn++
		err = ErrTorn
	case stCut:
		r.stats.Torn++
		err = ErrUnterminated
	case stUnknown:
		r.stats.UnknownVersion++
		err = ErrUnknownVersion
	default:
		r.stats.Malformed++
		err = ErrMalformed
	}
	if len(r.stats.Problems) >= r.cfg.maxProblems {
		r.stats.ProblemsOmitted++
		return
	}
	r.problem(r.lineOff+int64(at), err, p.reasonText())
}

var (
	markStrace = []byte("[STRACE]")
	markAnchor = []byte("[CLOCK_ANCHOR]")
	markStamp  = []byte("[stamp]")
	markBind   = []byte("bind phase=")
	markMono   = []byte("[mono_ns=")
)

// scan continues scanning the current line and fills rec with the next
// record in it.
func (r *Reader) scan(rec *Record) bool {
	line := r.line
	for r.pos < len(line) {
		rest := line[r.pos:]
		i := bytes.IndexByte(rest, '[')
		gap := rest
		if i >= 0 {
			gap = rest[:i]
		}
		if len(gap) >= len(markBind) {
			j := findHead(line, r.pos, r.pos+len(gap), markBind)
			if k := findHead(line, r.pos, r.pos+len(gap), markAutoload); k >= 0 && (j < 0 || k < j) {
				if r.autoload(rec, k) {
					return true
				}
				continue
			}
			if j >= 0 {
				if r.bindPhase(rec, j) {
					return true
				}
				continue
			}
		}
		if i < 0 {
			r.pos = len(line)
			break
		}
		at := r.pos + i
		tail := line[at:]
		switch {
		case bytes.HasPrefix(tail, markMono):
			if end, ok := r.parsePrefix(line, at, &r.pfx); ok {
				r.pfxEnd = end
				r.pos = end
				continue
			}
		case bytes.HasPrefix(tail, markStrace):
			if r.span(rec, at) {
				return true
			}
			continue
		case bytes.HasPrefix(tail, markAnchor):
			if r.anchor(rec, at) {
				return true
			}
			continue
		case at == 0 && bytes.HasPrefix(tail, markStamp):
			if r.stamp(rec) {
				return true
			}
			continue
		}
		r.pos = at + 1
	}
	return false
}

// findHead returns the position of the first head mark (such as "bind
// phase=" or the autoload head) in line[from:to] that starts the line or
// follows a blank or ']', or -1.
func findHead(line []byte, from, to int, mark []byte) int {
	for to-from >= len(mark) {
		j := bytes.Index(line[from:to], mark)
		if j < 0 {
			return -1
		}
		at := from + j
		if at == 0 || line[at-1] == ' ' || line[at-1] == '\t' || line[at-1] == ']' {
			return at
		}
		from = at + 1
	}
	return -1
}

// boundary returns where a record starting at from ends: at the next log
// prefix or record marker on the line, or at the end of the line.
func (r *Reader) boundary(line []byte, from int) int {
	for from < len(line) {
		k := bytes.IndexByte(line[from:], '[')
		if k < 0 {
			return len(line)
		}
		at := from + k
		tail := line[at:]
		if bytes.HasPrefix(tail, markStrace) || bytes.HasPrefix(tail, markAnchor) {
			return at
		}
		if bytes.HasPrefix(tail, markMono) {
			var p Prefix
			if _, ok := r.parsePrefix(line, at, &p); ok {
				return at
			}
		}
		from = at + 1
	}
	return len(line)
}

// cut makes the parse of a record that ends at end a cut one when nothing
// follows it on a line without a line end: the input stopped inside it, so
// it may be cut even where its grammar completed (field names what was read
// last). A record whose bytes break the grammar stays malformed.
func (r *Reader) cut(p *parser, end int, field string) {
	if !r.open || end != len(r.line) {
		return
	}
	switch p.st {
	case stOK:
		p.st, p.field, p.what = stCut, field, "no line end after it"
	case stTorn:
		p.st = stCut
	}
}

// cutAttrs is cut for a record with attribute text after its fixed fields
// (p.i is where that text starts): when the input stopped inside its last
// attribute, the fixed fields are whole, and only that attribute may be
// cut. It reports whether the record is to be kept with its last
// attribute marked (Attr.MaybeCut); otherwise it is cut as cut decides.
func (r *Reader) cutAttrs(p *parser, end int, field string) bool {
	if p.st == stOK && r.open && end == len(r.line) && p.i < len(p.b) {
		return true
	}
	r.cut(p, end, field)
	return false
}

// markCut marks the last of attrs as possibly cut, and counts it.
func (r *Reader) markCut(attrs []Attr) {
	if n := len(attrs); n > 0 {
		attrs[n-1].MaybeCut = true
		r.stats.MaybeCut++
	}
}

// join marks a record that ends at end, directly before the next log
// prefix or record marker on its line (no blank between), as joined.
func (r *Reader) join(rec *Record, end int) {
	if end < len(r.line) && end > 0 && r.line[end-1] != ' ' && r.line[end-1] != '\t' {
		rec.Joined = true
		r.stats.Joined++
	}
}

// prefixAt returns the log prefix that ends exactly at at.
func (r *Reader) prefixAt(at int) Prefix {
	if r.pfxEnd == at {
		return r.pfx
	}
	return Prefix{}
}

func (r *Reader) begin(rec *Record, kind Kind, at int) {
	*rec = Record{Kind: kind, Pos: Pos{File: r.cfg.name, Line: r.lineNo, Offset: r.lineOff + int64(at)}}
	r.stats.Records.add(kind)
}

// span handles a [STRACE] head at at.
func (r *Reader) span(rec *Record, at int) bool {
	line := r.line
	r.stats.Heads.Strace++
	end := r.boundary(line, at+len(markStrace))
	r.pos = end
	p := parser{b: trimRight(line[at:end]), i: len(markStrace)}
	if r.cfg.spanFilter != nil {
		if depth, nameAt, nameEnd, ok := skimSpan(p.b); ok && !r.keepSpan(p.b[nameAt:nameEnd], depth) {
			r.stats.Skipped++
			return false
		}
	}
	var s Span
	if !p.spanFields(&s) {
		p.spanGrammar(&s)
	}
	maybeCut := r.cutAttrs(&p, end, lastField(&p, "dur"))
	if p.st != stOK {
		r.lost(at, &p)
		return false
	}
	r.begin(rec, KindSpan, at)
	r.join(rec, end)
	rec.Prefix = r.prefixAt(at)
	s.NameTruncated = p.nameEnd > p.nameAt && p.b[p.nameEnd-1] == '~'
	if text := p.b[p.nameAt:]; bytes.IndexByte(text, '%') < 0 {
		// Nothing to decode: one copy holds the name and every attribute.
		all := r.memory.arena.str(text)
		s.Name = all[:p.nameEnd-p.nameAt]
		s.Attrs, s.AttrsTruncated = r.parseAttrs(p.b[p.i:], all[p.i-p.nameAt:], true)
	} else {
		s.Name = r.memory.arena.decoded(p.b[p.nameAt:p.nameEnd])
		s.Attrs, s.AttrsTruncated = r.parseAttrs(p.b[p.i:], "", true)
	}
	if maybeCut {
		r.markCut(s.Attrs)
	}
	rec.Span = s
	return true
}

// keepSpan asks the span filter about a span of depth depth and encoded
// name name. The name is a view of the line (or of the decoded copy) made
// with unsafe.String, valid only during the call (see WithSpanFilter);
// TestSpanFilterNameAsPlain checks it against string(name). string(name)
// instead costs an allocation per span asked about and 4.7 % of a
// conversion (median of 36 interleaved pairs, 542 → 573 ms, of
// go test -run XXX -bench 'ConvertFile$' -benchtime 1x -benchfile F . in
// the root package, on a log of 100 MB from TestGenerateLog).
func (r *Reader) keepSpan(name []byte, depth int32) bool {
	if bytes.IndexByte(name, '%') >= 0 {
		r.scratch = appendDecoded(r.scratch[:0], name)
		name = r.scratch
	}
	if len(name) == 0 {
		return r.cfg.spanFilter(depth, "")
	}
	return r.cfg.spanFilter(depth, unsafe.String(&name[0], len(name)))
}

// skimKeys are the keys of the span fields before depth.
var skimKeys = [...]string{"pid=", "tid=", "inv=", "hid="}

// skimSpan reads the depth and where the name is in b, a span's text from
// its [STRACE] marker, passing over the fields before them without reading
// their values: enough to ask the span filter, which is asked before the
// span is read. It fails (and the span is read in full) when b does not
// follow the grammar as far as the name or has another version than 1.
func skimSpan(b []byte) (depth int32, nameAt, nameEnd int, ok bool) {
	if depth, nameAt, nameEnd, ok := skimWritten(b); ok {
		return depth, nameAt, nameEnd, true
	}
	return skimGrammar(b)
}

// skimGrammar is skimSpan by the grammar's rules.
func skimGrammar(b []byte) (depth int32, nameAt, nameEnd int, ok bool) {
	i := len(markStrace)
	i = skimKey(b, i, "v=")
	if i < 0 || i >= len(b) || b[i] != '1' || i+1 >= len(b) || (b[i+1] != ' ' && b[i+1] != '\t') {
		return 0, 0, 0, false
	}
	i++
	for _, k := range skimKeys {
		if i = skimKey(b, i, k); i < 0 {
			return 0, 0, 0, false
		}
		s := i
		for i < len(b) && b[i] != ' ' && b[i] != '\t' {
			i++
		}
		if i == s {
			return 0, 0, 0, false
		}
	}
	if i = skimKey(b, i, "depth="); i < 0 {
		return 0, 0, 0, false
	}
	neg := i < len(b) && b[i] == '-'
	if neg {
		i++
	}
	s := i
	var d int64
	for ; i < len(b) && '0' <= b[i] && b[i] <= '9' && i-s < 10; i++ {
		d = d*10 + int64(b[i]-'0')
	}
	if i == s || d > 1<<31 || (!neg && d == 1<<31) {
		return 0, 0, 0, false
	}
	if neg {
		d = -d
	}
	if i = skimKey(b, i, "name="); i < 0 {
		return 0, 0, 0, false
	}
	nameAt = i
	for i < len(b) && b[i] != ' ' && b[i] != '\t' {
		i++
	}
	return int32(d), nameAt, i, true
}

// skimWritten is skimSpan for the form the runtime writes: one space before
// each field and at most 10 digits of depth. It fails when b is not in that
// form, where skimGrammar reads on (reading the same from the texts the
// form accepts).
func skimWritten(b []byte) (depth int32, nameAt, nameEnd int, ok bool) {
	const head = "[STRACE] v=1 pid="
	if len(b) < len(head) || string(b[:len(head)]) != head {
		return 0, 0, 0, false
	}
	i := skimValue(b, len(head))
	if i < 0 || len(b)-i < 5 || string(b[i:i+5]) != " tid=" {
		return 0, 0, 0, false
	}
	if i = skimValue(b, i+5); i < 0 || len(b)-i < 5 || string(b[i:i+5]) != " inv=" {
		return 0, 0, 0, false
	}
	if i = skimValue(b, i+5); i < 0 || len(b)-i < 5 || string(b[i:i+5]) != " hid=" {
		return 0, 0, 0, false
	}
	if i = skimValue(b, i+5); i < 0 || len(b)-i < 7 || string(b[i:i+7]) != " depth=" {
		return 0, 0, 0, false
	}
	i += 7
	neg := i < len(b) && b[i] == '-'
	if neg {
		i++
	}
	s := i
	var d int64
	for ; i < len(b) && b[i]-'0' < 10 && i-s < 10; i++ {
		d = d*10 + int64(b[i]-'0')
	}
	if i == s || d > 1<<31 || (!neg && d == 1<<31) || len(b)-i < 6 || string(b[i:i+6]) != " name=" {
		return 0, 0, 0, false
	}
	if neg {
		d = -d
	}
	nameAt = i + 6
	return int32(d), nameAt, blankAt(b, nameAt), true
}

// skimValue passes over a field's value at b[i:], one or more bytes up to a
// space, returning where it ends, or -1 (no value, or a tab after it).
func skimValue(b []byte, i int) int {
	s := i
	for i < len(b) && b[i] != ' ' && b[i] != '\t' {
		i++
	}
	if i == s || i < len(b) && b[i] == '\t' {
		return -1
	}
	return i
}

// skimKey passes over the blanks and then the key k at b[i:], returning
// where the value starts, or -1.
func skimKey(b []byte, i int, k string) int {
	s := i
	for i < len(b) && (b[i] == ' ' || b[i] == '\t') {
		i++
	}
	if i == s || len(b)-i < len(k) || string(b[i:i+len(k)]) != k {
		return -1
	}
	return i + len(k)
}

// anchor handles a [CLOCK_ANCHOR] head at at.
// last is the last field of an anchor record of kind k.
func last(k Kind) string {
	if k == KindDeviceAnchor {
		return "dev_freq"
	}
	return "wall_ns"
}

func (r *Reader) anchor(rec *Record, at int) bool {
	line := r.line
	r.stats.Heads.ClockAnchor++
	end := r.boundary(line, at+len(markAnchor))
	r.pos = end
	p := parser{b: trimRight(line[at:end]), i: len(markAnchor)}
	var kind Kind
	var w WallAnchor
	var d DeviceAnchor
	if p.next("v=") {
		if v, ok := p.uint("v", 1<<32); ok && p.version(v == 1 || v == 2) {
			if v == 1 {
				kind = KindWallAnchor
				_ = p.next("pid=") && p.i32(&w.Pid, "pid") &&
					p.next("mono_ns=") && p.i64(&w.MonoNS, "mono_ns") &&
					p.next("wall_ns=") && p.i64(&w.WallNS, "wall_ns") &&
					p.end("wall_ns")
			} else {
				kind = KindDeviceAnchor
				_ = p.next("pid=") && p.i32(&d.Pid, "pid") &&
					p.next("tid=") && p.i64(&d.Tid, "tid") &&
					p.next("dev=") && p.i32(&d.Dev, "dev") &&
					p.next("host_ns=") && p.i64(&d.HostNS, "host_ns") &&
					p.next("window_ns=") && p.i64(&d.WindowNS, "window_ns") &&
					p.next("dev_cyc=") && p.u64(&d.DevCyc, "dev_cyc") &&
					p.next("dev_freq=") && p.u64(&d.DevFreq, "dev_freq") &&
					p.end("dev_freq")
				if p.st == stOK && d.WindowNS < 0 {
					p.fail(stMalformed, "window_ns", "negative")
				}
				if p.st == stOK && d.DevFreq == 0 {
					p.fail(stMalformed, "dev_freq", "zero")
				}
			}
		}
	}
	pfx := r.prefixAt(at)
	if p.st == stOK {
		switch {
		case end != len(line) && len(p.b) != end-at:
			// Blanks, then another record: text after the last value.
			p.fail(stMalformed, "anchor", "another record follows on its line after a blank")
		case !pfx.Present || pfx.Level != "TIMING" || pfx.Func != "clock_anchor":
			p.fail(stMalformed, "anchor", "not preceded by its [TIMING] clock_anchor: log prefix")
		}
	}
	r.cut(&p, end, last(kind))
	if p.st != stOK {
		r.lost(at, &p)
		return false
	}
	r.begin(rec, kind, at)
	// Another rank's write may follow the last value directly: the
	// runtime writes a record whole, so its value is whole too (a device
	// anchor's dev_freq can be confirmed against its device's others).
	r.join(rec, end)
	rec.Prefix = pfx
	rec.WallAnchor = w
	rec.DeviceAnchor = d
	return true
}

// bindPhase handles a "bind phase=" head at at.
func (r *Reader) bindPhase(rec *Record, at int) bool {
	line := r.line
	r.stats.Heads.BindPhase++
	end := r.boundary(line, at+len(markBind))
	r.pos = end
	p := parser{b: trimRight(line[at:end]), i: len(markBind)}
	var b BindPhase
	var phaseEnd int
	if p.word("phase") {
		phaseEnd = p.i
		_ = p.next("start_ns=") && p.u64(&b.StartNS, "start_ns") &&
			p.next("dur_ns=") && p.u64(&b.DurNS, "dur_ns") &&
			p.tail("dur_ns")
	}
	maybeCut := r.cutAttrs(&p, end, lastField(&p, "dur_ns"))
	if p.st != stOK {
		r.lost(at, &p)
		return false
	}
	r.begin(rec, KindBindPhase, at)
	r.join(rec, end)
	if r.pfxEnd >= 0 && r.pfxEnd <= at {
		if src, ok := sourceTag(line[r.pfxEnd:at]); ok {
			rec.Prefix = r.pfx
			b.Source = r.memory.arena.str(src)
		}
	}
	b.Phase = r.memory.arena.str(p.b[len(markBind):phaseEnd])
	b.Attrs, _ = r.parseAttrs(p.b[p.i:], "", false)
	if maybeCut {
		r.markCut(b.Attrs)
	}
	rec.BindPhase = b
	return true
}

// sourceTag accepts the text between a log prefix and a bind phase marker:
// nothing, or one "[...]" tag and blanks.
func sourceTag(b []byte) ([]byte, bool) {
	if len(b) == 0 {
		return nil, true
	}
	if b[0] != '[' {
		return nil, false
	}
	k := bytes.IndexByte(b, ']')
	if k < 0 || bytes.IndexByte(b[1:k], '[') >= 0 {
		return nil, false
	}
	rest := b[k+1:]
	if len(rest) == 0 {
		return nil, false
	}
	for _, c := range rest {
		if c != ' ' && c != '\t' {
			return nil, false
		}
	}
	return b[:k+1], true
}

// stamp handles a "[stamp]" head at the start of the line.
func (r *Reader) stamp(rec *Record) bool {
	r.stats.Heads.Stamp++
	end := r.boundary(r.line, len(markStamp))
	r.pos = end
	line := r.line[:end]
	var p parser
	switch {
	case len(line) == len(markStamp):
		p.fail(stTorn, "stamp", "no text")
	case line[len(markStamp)] != ' ':
		p.fail(stMalformed, "stamp", "expected a space after [stamp]")
	}
	r.cut(&p, end, "stamp")
	if p.st != stOK {
		r.lost(0, &p)
		return false
	}
	r.begin(rec, KindStamp, 0)
	r.join(rec, end)
	rec.Stamp.Text = r.memory.arena.str(line[len(markStamp)+1:])
	return true
}

// parseAttrs splits attribute text into attributes. decode applies the span
// encoding (bind phase attributes are raw). When same is not empty it holds
// b's bytes and needs no decoding: keys and values are taken from it.
func (r *Reader) parseAttrs(b []byte, same string, decode bool) ([]Attr, bool) {
	attrs := r.memory.attrs[:0]
	if r.memory.owned != nil {
		attrs = r.memory.owned.tail()
	}
	if same != "" {
		attrs = splitAttrs(attrs, b, same)
	} else {
		attrs = r.decodeAttrs(attrs, b, decode)
	}
	truncated := decode && len(b) > 0 && b[len(b)-1] == '~'
	if truncated && len(attrs) > 0 {
		attrs[len(attrs)-1].Truncated = true
	}
	if r.memory.owned != nil {
		attrs = r.memory.owned.keep(attrs)
	} else {
		r.memory.attrs = attrs
	}
	if len(attrs) == 0 {
		return nil, truncated
	}
	return attrs, truncated
}

// keyStop marks the bytes that end an attribute's key: blanks and '='.
var keyStop = [256]bool{' ': true, '\t': true, '=': true}

// splitAttrs appends the attributes of b, whose text same holds (nothing to
// decode), to attrs: blank-separated tokens, each a key, '=' and a value or
// a bare key. An integer value is read as its bytes go by.
func splitAttrs(attrs []Attr, b []byte, same string) []Attr {
	for i := 0; i < len(b); {
		for i < len(b) && (b[i] == ' ' || b[i] == '\t') {
			i++
		}
		start := i
		for i < len(b) && !keyStop[b[i]] {
			i++
		}
		if i == len(b) || b[i] != '=' {
			if i == start {
				break
			}
			attrs = append(attrs, Attr{Key: same[start:i], Bare: true})
			continue
		}
		eq := i
		i++
		j := i
		if j < len(b) && b[j] == '-' {
			j++
		}
		digits := j
		var u uint64
		for ; j < len(b) && b[j]-'0' < 10; j++ {
			u = u*10 + uint64(b[j]-'0') // wraps past 19 digits: not used then
		}
		end := j
		for end < len(b) && b[end] != ' ' && b[end] != '\t' {
			end++
		}
		a := Attr{Key: same[start:eq], Value: same[eq+1 : end]}
		if n := j - digits; end == j && n > 0 {
			// Only digits: an integer when canonical and in range
			// (typeValue's rules, taken whole for the long ones).
			switch neg := digits > i; {
			case n > 18:
				a.Type, a.Int, a.Uint = typeValue(b[i:end])
			case b[digits] == '0' && (n > 1 || neg):
			case neg:
				a.Type, a.Int = TypeInt, -int64(u)
			default:
				a.Type, a.Int = TypeInt, int64(u)
			}
		}
		attrs = append(attrs, a)
		i = end
	}
	return attrs
}

// decodeAttrs appends the attributes of b, decoding keys and values when
// decode is set, to attrs.
func (r *Reader) decodeAttrs(attrs []Attr, b []byte, decode bool) []Attr {
	for i := 0; i < len(b); {
		for i < len(b) && (b[i] == ' ' || b[i] == '\t') {
			i++
		}
		start := i
		eq := -1
		for i < len(b) && b[i] != ' ' && b[i] != '\t' {
			if b[i] == '=' && eq < 0 {
				eq = i
			}
			i++
		}
		if i == start {
			break
		}
		attrs = append(attrs, Attr{})
		a := &attrs[len(attrs)-1]
		if eq < 0 {
			a.Bare = true
			a.Key = r.text(b[start:i], decode)
			continue
		}
		a.Key = r.text(b[start:eq], decode)
		val := b[eq+1 : i]
		a.Value = r.text(val, decode)
		if decode && bytes.IndexByte(val, '%') >= 0 {
			val = []byte(a.Value)
		}
		a.Type, a.Int, a.Uint = typeValue(val)
	}
	return attrs
}

func (r *Reader) text(b []byte, decode bool) string {
	if decode {
		return r.memory.arena.decoded(b)
	}
	return r.memory.arena.str(b)
}

// intern returns b as a string, shared between records for the few distinct
// values a log prefix holds.
func (r *Reader) intern(b []byte) string {
	if string(b) == r.names.lastLevel {
		return r.names.lastLevel
	}
	if string(b) == r.names.lastFunc {
		return r.names.lastFunc
	}
	if s, ok := r.names.interns[string(b)]; ok {
		return s
	}
	if len(r.names.interns) >= 4096 {
		if r.memory.arena.reuse {
			return string(b) // a canonical string outlives the memory reused
		}
		return r.memory.arena.str(b)
	}
	s := string(b)
	r.names.interns[s] = s
	return s
}

// parsePrefix parses "[mono_ns=<ns>][T0x<hex>][<LEVEL>]<blanks><func>:<blanks>"
// at line[at:], returning where it ends. func holds no blank, ':' or '['.
func (r *Reader) parsePrefix(line []byte, at int, out *Prefix) (int, bool) {
	p := parser{b: line, i: at + len(markMono)}
	var pf Prefix
	if !p.prefixTimes(&pf) && (!p.i64(&pf.MonoNS, "mono_ns") || !p.lit("][T0x") || !p.hex(&pf.Thread, "thread") || !p.lit("][")) {
		return 0, false
	}
	if t := r.names.lastTail; t != "" && len(line)-p.i >= len(t) && string(line[p.i:p.i+len(t)]) == t {
		// The same level and function as the last prefix: the common case.
		pf.Present, pf.Level, pf.Func = true, r.names.lastLevel, r.names.lastFunc
		*out = pf
		return p.i + len(t), true
	}
	tailAt := p.i
	ls := p.i
	for p.i < len(line) && 'A' <= line[p.i] && line[p.i] <= 'Z' {
		p.i++
	}
	le := p.i
	if le == ls || !p.lit("]") || !p.blanks() {
		return 0, false
	}
	fs := p.i
	for p.i < len(line) {
		c := line[p.i]
		if c == ':' || c == ' ' || c == '\t' || c == '[' {
			break
		}
		p.i++
	}
	fe := p.i
	if fe == fs || !p.lit(":") || !p.blanks() {
		return 0, false
	}
	pf.Present = true
	pf.Level = r.intern(line[ls:le])
	r.names.lastLevel = pf.Level
	pf.Func = r.intern(line[fs:fe])
	r.names.lastFunc = pf.Func
	if tail := line[tailAt:p.i]; string(tail) != r.names.lastTail {
		r.names.lastTail = r.intern(tail)
	}
	*out = pf
	return p.i, true
}

// lastField names what a parse that completed read last: the attributes
// when there are any, else the last fixed field.
func lastField(p *parser, field string) string {
	if p.i < len(p.b) {
		return "attributes"
	}
	return field
}

func trimRight(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

// headCounter counts record heads in a line seen in pieces, by marker
// occurrence.
type headCounter struct {
	heads Heads
	tail  [maxMark + 1]byte
	n     int   // bytes in tail
	total int64 // bytes fed
}

const maxMark = 31 // len("torch_backend_autoload setting=")

func (h *headCounter) feed(b []byte) {
	if len(b) == 0 {
		return
	}
	if h.total == 0 && bytes.HasPrefix(b, markStamp) {
		h.heads.Stamp++
	}
	// Heads that straddle the previous piece and this one.
	if h.n > 0 {
		var win [2 * maxMark]byte
		w := append(win[:0], h.tail[:h.n]...)
		w = append(w, b[:min(len(b), maxMark-1)]...)
		prev := -1 // w[0] starts the line
		if h.total > int64(h.n) {
			prev = 0 // unknown but not a head boundary; only matters at i == 0, which cannot straddle
		}
		for i := 0; i < h.n; i++ {
			h.countAt(w, i, h.n, prev)
		}
	}
	// Heads inside this piece.
	prev := -1
	if h.n > 0 {
		prev = int(h.tail[h.n-1])
	}
	for i := 0; i < len(b); {
		k := indexHeadStart(b[i:])
		if k < 0 {
			break
		}
		h.countAt(b, i+k, 0, prev)
		i += k + 1
	}
	h.total += int64(len(b))
	// Keep the last bytes for the next piece.
	if len(b) >= len(h.tail) {
		h.n = copy(h.tail[:], b[len(b)-len(h.tail):])
	} else {
		keep := min(h.n, len(h.tail)-len(b))
		copy(h.tail[:], h.tail[h.n-keep:h.n])
		h.n = keep + copy(h.tail[keep:], b)
	}
}

// indexHeadStart returns the first index that may start a head.
func indexHeadStart(b []byte) int {
	for i, c := range b {
		if c == '[' || c == 'b' || c == 't' {
			return i
		}
	}
	return -1
}

// countAt counts a head that starts at w[i], fits in w and ends past
// w[split-1]. prev is the byte before w[0], or -1 at the start of the line.
func (h *headCounter) countAt(w []byte, i, split, prev int) {
	t := w[i:]
	switch {
	case bytes.HasPrefix(t, markStrace):
		if i+len(markStrace) > split {
			h.heads.Strace++
		}
	case bytes.HasPrefix(t, markAnchor):
		if i+len(markAnchor) > split {
			h.heads.ClockAnchor++
		}
	case bytes.HasPrefix(t, markBind), bytes.HasPrefix(t, markAutoload):
		mark := markBind
		if t[0] == 't' {
			mark = markAutoload
		}
		if i+len(mark) <= split {
			return
		}
		before := prev
		if i > 0 {
			before = int(w[i-1])
		}
		switch {
		case before != -1 && before != ' ' && before != '\t' && before != ']':
		case t[0] == 't':
			h.heads.Autoload++
		default:
			h.heads.BindPhase++
		}
	}
}
