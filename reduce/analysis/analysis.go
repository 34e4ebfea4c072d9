package analysis

import (
	"fmt"
	"io"
	"math/big"
	"math/bits"
	"sort"
	"strconv"

	"github.com/phasetrace/phasetrace/strace"
)

// Log is what the analyses read from one runtime log (or several
// concatenated, see [Concat]): its complete spans, its "[stamp]" lines, its
// torch_backend_autoload records and the reader's account of what it lost.
type Log struct {
	Name  string
	Spans []strace.Span // complete spans in input order; each owns its Attrs
	// Stamps are the "[stamp]" lines in input order. A measurement recipe
	// writes one as the first line of every run's log.
	Stamps []LogStamp
	// Autoload holds every torch_backend_autoload record in input order,
	// repeats included (see [Log.AutoloadDistinct]).
	Autoload []AutoloadRecord
	// BindLines are the legacy "bind phase=" lines in input order: a bind's
	// segments as older runtimes logged them (see [AnalyzeBinds]).
	BindLines []BindLine
	// BindThreads gives the log-prefix thread of every host chip.run.bind
	// span written with a prefix, in input order: the thread a legacy bind
	// line shares with its bind.
	BindThreads []SpanThread
	// Stats is the reader's account of the input: torn, malformed and
	// unknown-version records are counted there, never turned into spans.
	Stats strace.Stats
}

// LogStamp is a "[stamp]" line of a log.
type LogStamp struct {
	Text   string // everything after "[stamp] "
	Offset int64  // byte offset of the line in the (concatenated) input
	Span   int    // number of spans before it: Log.Spans[Span:] follow it
}

// AutoloadRecord is a torch_backend_autoload record of a log (see
// [strace.Autoload]); its Text is what the analyses compare:
//
//	torch_backend_autoload setting=0 raw="0" raw_truncated=false effective=disabled torch_imported=true torch_npu_loaded=false
type AutoloadRecord struct {
	strace.Autoload
	Offset int64 // byte offset of the record in the (concatenated) input
}

// BindLine is a legacy "bind phase=<segment> start_ns= dur_ns=" line of a
// log (a [strace.KindBindPhase] record). It names no process: it belongs to
// the bind written by the same log thread whose interval contains it.
type BindLine struct {
	strace.BindPhase
	Thread uint64 // the log prefix's thread handle; 0 without a prefix
	Offset int64  // byte offset of the record in the (concatenated) input
}

// SpanThread is the log-prefix thread handle of the span Log.Spans[Span].
type SpanThread struct {
	Span   int
	Thread uint64
}

// Stamp returns the text of the first "[stamp]" line and whether there is one.
func (l *Log) Stamp() (string, bool) {
	if len(l.Stamps) == 0 {
		return "", false
	}
	return l.Stamps[0].Text, true
}

// AutoloadDistinct returns the distinct torch_backend_autoload records in
// the order they first appear.
func (l *Log) AutoloadDistinct() []string {
	var out []string
	seen := make(map[string]bool)
	for _, a := range l.Autoload {
		if !seen[a.Text] {
			seen[a.Text] = true
			out = append(out, a.Text)
		}
	}
	return out
}

// ReadOption configures [ReadLog].
type ReadOption func(*readConfig)

type readConfig struct {
	name   string
	reader []strace.Option
}

// WithName names the log: its Log.Name, and the file in the reader's
// positions and problems and in ReadLog's error.
func WithName(name string) ReadOption { return func(c *readConfig) { c.name = name } }

// WithReaderOptions passes options to [strace.NewReader], such as
// [strace.WithMaxLine] or [strace.WithMaxProblems]. The name is WithName's: a
// [strace.WithName] among them is overridden.
func WithReaderOptions(opts ...strace.Option) ReadOption {
	return func(c *readConfig) { c.reader = append(c.reader, opts...) }
}

// ReadLog reads a runtime log with [strace.NewReader] and keeps what the
// analyses need: spans, stamps and autoload records. Bad records never stop
// it: they are counted in Log.Stats. The error is the underlying reader's,
// with the log's name.
func ReadLog(r io.Reader, opts ...ReadOption) (*Log, error) {
	var cfg readConfig
	for _, o := range opts {
		o(&cfg)
	}
	rd := strace.NewReader(r, append(cfg.reader, strace.WithName(cfg.name))...)
	l := &Log{Name: cfg.name}
	for {
		rec, err := rd.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", cfg.name, err)
		}
		switch rec.Kind {
		case strace.KindSpan:
			if rec.Span.Name == strace.SpanBind && rec.Prefix.Present && !rec.Span.IsDevice() {
				l.BindThreads = append(l.BindThreads, SpanThread{Span: len(l.Spans), Thread: rec.Prefix.Thread})
			}
			l.Spans = append(l.Spans, rec.Span.Clone())
		case strace.KindBindPhase:
			var thread uint64
			if rec.Prefix.Present {
				thread = rec.Prefix.Thread
			}
			l.BindLines = append(l.BindLines, BindLine{BindPhase: rec.BindPhase.Clone(), Thread: thread, Offset: rec.Pos.Offset})
		case strace.KindStamp:
			l.Stamps = append(l.Stamps, LogStamp{Text: rec.Stamp.Text, Offset: rec.Pos.Offset, Span: len(l.Spans)})
		case strace.KindAutoload:
			l.Autoload = append(l.Autoload, AutoloadRecord{Autoload: rec.Autoload, Offset: rec.Pos.Offset})
		}
	}
	l.Stats = rd.Stats().Clone()
	return l, nil
}

// Concat joins logs read separately into one, as if the files had been
// concatenated: offsets and span positions of each later log are shifted
// past the earlier ones, and the statistics are added up.
func Concat(name string, logs ...*Log) *Log {
	out := &Log{Name: name}
	var off int64
	for _, l := range logs {
		base := len(out.Spans)
		out.Spans = append(out.Spans, l.Spans...)
		for _, s := range l.Stamps {
			s.Offset += off
			s.Span += base
			out.Stamps = append(out.Stamps, s)
		}
		for _, a := range l.Autoload {
			a.Offset += off
			out.Autoload = append(out.Autoload, a)
		}
		for _, b := range l.BindLines {
			b.Offset += off
			out.BindLines = append(out.BindLines, b)
		}
		for _, t := range l.BindThreads {
			t.Span += base
			out.BindThreads = append(out.BindThreads, t)
		}
		addStats(&out.Stats, &l.Stats)
		off += l.Stats.Bytes
	}
	return out
}

func addStats(dst, src *strace.Stats) {
	dst.Lines += src.Lines
	dst.Bytes += src.Bytes
	dst.LongLines += src.LongLines
	dst.Heads.Strace += src.Heads.Strace
	dst.Heads.ClockAnchor += src.Heads.ClockAnchor
	dst.Heads.BindPhase += src.Heads.BindPhase
	dst.Heads.Stamp += src.Heads.Stamp
	dst.Heads.Autoload += src.Heads.Autoload
	dst.Records.Spans += src.Records.Spans
	dst.Records.WallAnchors += src.Records.WallAnchors
	dst.Records.DeviceAnchors += src.Records.DeviceAnchors
	dst.Records.BindPhases += src.Records.BindPhases
	dst.Records.Stamps += src.Records.Stamps
	dst.Records.Autoloads += src.Records.Autoloads
	dst.Torn += src.Torn
	dst.UnknownVersion += src.UnknownVersion
	dst.Malformed += src.Malformed
	dst.InLongLines += src.InLongLines
	dst.Problems = append(dst.Problems, src.Problems...)
	dst.ProblemsOmitted += src.ProblemsOmitted
}

// Repetitions splits a log at its "[stamp]" lines: a measurement recipe
// starts every run's log with one, so a log holding several runs appended
// one after another holds one repetition per stamp. Spans before the first
// stamp form a repetition of their own (without a stamp). A log without
// stamps is one repetition. Stats stay with the whole log.
func (l *Log) Repetitions() []*Log {
	if len(l.Stamps) == 0 {
		return []*Log{l}
	}
	var out []*Log
	if first := l.Stamps[0]; first.Span > 0 {
		out = append(out, l.slice(fmt.Sprintf("%s (before its first stamp)", l.Name), 0, first.Span, -1, first.Offset, nil))
	}
	for i, s := range l.Stamps {
		end, endOff := len(l.Spans), int64(-1)
		if i+1 < len(l.Stamps) {
			end, endOff = l.Stamps[i+1].Span, l.Stamps[i+1].Offset
		}
		name := l.Name
		if len(l.Stamps) > 1 {
			name = fmt.Sprintf("%s (repetition %d)", l.Name, i+1)
		}
		stamp := s
		out = append(out, l.slice(name, s.Span, end, s.Offset, endOff, &stamp))
	}
	return out
}

// slice returns the spans [from, to) and the autoload records in the byte
// range [fromOff, toOff) (toOff < 0: to the end; fromOff < 0: from the start).
func (l *Log) slice(name string, from, to int, fromOff, toOff int64, stamp *LogStamp) *Log {
	out := &Log{Name: name, Spans: l.Spans[from:to:to]}
	if stamp != nil {
		s := *stamp
		s.Span = 0
		out.Stamps = []LogStamp{s}
	}
	for _, a := range l.Autoload {
		if (fromOff < 0 || a.Offset >= fromOff) && (toOff < 0 || a.Offset < toOff) {
			out.Autoload = append(out.Autoload, a)
		}
	}
	for _, b := range l.BindLines {
		if (fromOff < 0 || b.Offset >= fromOff) && (toOff < 0 || b.Offset < toOff) {
			out.BindLines = append(out.BindLines, b)
		}
	}
	for _, t := range l.BindThreads {
		if t.Span >= from && t.Span < to {
			t.Span -= from
			out.BindThreads = append(out.BindThreads, t)
		}
	}
	return out
}

// Median is the exact median of integer nanosecond values: the middle value
// (Lo == Hi), or for an even count the mean of the two middle ones, which
// can fall on a half nanosecond.
type Median struct{ Lo, Hi int64 }

// Nanos returns the median in nanoseconds (exact below 2^52 ns).
func (m Median) Nanos() float64 { return pyHalfSum(m.Lo, m.Hi) }

// medianSorted returns the median of sorted values; zero when empty.
func medianSorted(s []int64) Median {
	n := len(s)
	if n == 0 {
		return Median{}
	}
	if n%2 == 1 {
		return Median{s[n/2], s[n/2]}
	}
	return Median{s[n/2-1], s[n/2]}
}

// Spread is the minimum, median and maximum of integer nanosecond (or
// count) values, with how many there were.
type Spread struct {
	N        int
	Min, Max int64
	Median   Median
}

func spreadOf(values []int64) Spread {
	if len(values) == 0 {
		return Spread{}
	}
	s := append([]int64(nil), values...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return Spread{N: len(s), Min: s[0], Max: s[len(s)-1], Median: medianSorted(s)}
}

// sum128 is an exact two's-complement sum of int64 values.
type sum128 struct {
	hi int64
	lo uint64
}

func (s *sum128) add(v int64) {
	lo, carry := bits.Add64(s.lo, uint64(v), 0)
	s.hi += int64(carry)
	if v < 0 {
		s.hi--
	}
	s.lo = lo
}

func (s sum128) big() *big.Int {
	b := new(big.Int).SetInt64(s.hi)
	b.Lsh(b, 64)
	return b.Add(b, new(big.Int).SetUint64(s.lo))
}

// truncMean returns the mean of values truncated toward zero, exactly.
func truncMean(values []int64) int64 {
	if len(values) == 0 {
		return 0
	}
	var s sum128
	for _, v := range values {
		s.add(v)
	}
	return bigQuo(s, len(values))
}

// bigQuo returns s / n truncated toward zero, exactly.
func bigQuo(s sum128, n int) int64 {
	return new(big.Int).Quo(s.big(), big.NewInt(int64(n))).Int64()
}

// The renderers print what the runtime's Python tools print for the same
// log, so they reproduce the tools' floating-point arithmetic exactly:
// values become float64 the way Python converts an int, sums accumulate
// left to right, and "%.Nf" is the correctly rounded decimal of the binary
// double (strconv and Python's format agree on it, ties to even).

// pyFloat converts an int as Python's float(int) does (round to nearest).
func pyFloat(v int64) float64 { return float64(v) }

// pyHalfSum is Python's (a + b) / 2.0 for ints a and b: the exact integer
// sum converted once, then halved.
func pyHalfSum(a, b int64) float64 {
	sum := a + b // wraps on overflow, detected below
	// Overflow when a and b have the same sign and the sum does not.
	if (a >= 0) == (b >= 0) && (sum >= 0) != (a >= 0) {
		f, _ := new(big.Float).SetInt(new(big.Int).Add(big.NewInt(a), big.NewInt(b))).Float64()
		return f / 2.0
	}
	return float64(sum) / 2.0
}

// pySum adds floats left to right, as Python's sum() does before 3.12.
func pySum(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s
}

// fmtF formats like Python's f"{x:.{prec}f}".
func fmtF(x float64, prec int) string { return strconv.FormatFloat(x, 'f', prec, 64) }

// usText is Python's f"{ns / 1000.0:.1f}".
func usText(ns int64) string { return fmtF(pyFloat(ns)/1000.0, 1) }

// medianUS is the Python tools' median in µs: (a + b) / 2.0 / 1000.0.
func medianUS(m Median) float64 { return pyHalfSum(m.Lo, m.Hi) / 1000.0 }

// hidText prints a callable hash as the log writes it.
func hidText(hid uint64) string { return strconv.FormatUint(hid, 16) }

// errWriter remembers the first write error so renderers can write freely.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}

func (e *errWriter) write(b []byte) {
	if e.err == nil {
		_, e.err = e.w.Write(b)
	}
}

func (e *errWriter) println(s string) {
	if e.err == nil {
		_, e.err = io.WriteString(e.w, s+"\n")
	}
}

// noMarkers is what every table prints when a log has no invocations.
const noMarkers = "No [STRACE] markers found."
