package strace

import (
	"errors"
	"io"
	"os"
	"sync"
	"time"
)

// Writer defaults.
const (
	// DefaultLevel is the log level the runtime writes records at.
	DefaultLevel = "TIMING"
	// SpanFunc is the function name in the log prefix of a span.
	SpanFunc = "emit_host_span"
	// AnchorFunc is the function name in the log prefix of a clock anchor.
	AnchorFunc = "clock_anchor"
	// DefaultThread is the thread handle written in log prefixes unless
	// WithThread says otherwise.
	DefaultThread uint64 = 1
)

type writerConfig struct {
	pid    int32
	tid    int64
	thread uint64
	mono   func() int64
	wall   func() int64
}

// WriterOption configures a Writer.
type WriterOption func(*writerConfig)

// WithProcess sets the pid and tid written in spans and anchors. The default
// is the process id for both (the tid of a process's main thread).
func WithProcess(pid int32, tid int64) WriterOption {
	return func(c *writerConfig) { c.pid, c.tid = pid, tid }
}

// WithThread sets the thread handle written in log prefixes ("T0x...").
func WithThread(handle uint64) WriterOption {
	return func(c *writerConfig) { c.thread = handle }
}

// WithClock sets the clocks: mono returns CLOCK_MONOTONIC ns (prefixes,
// scopes, wall anchors), wall returns ns since the Unix epoch (wall
// anchors). Fixed clocks make output deterministic for tests and examples.
func WithClock(mono, wall func() int64) WriterOption {
	return func(c *writerConfig) { c.mono, c.wall = mono, wall }
}

// Writer writes records exactly as the runtime does, one Write call per
// record on the underlying writer.
//
// Its invocation context (inv, hid) and scope depth model one runtime
// thread: scopes opened with Start must be ended in reverse order. A Writer
// is safe for concurrent use, but concurrent scopes on one Writer share one
// depth; give each goroutine its own Writer (WithProcess sets its tid).
type Writer struct {
	mu    sync.Mutex
	w     io.Writer
	cfg   writerConfig
	buf   []byte
	depth int32
	inv   uint64
	hid   uint64
	last  uint64 // last invocation id handed out
	err   error  // first write error
}

// NewWriter returns a Writer to w.
func NewWriter(w io.Writer, opts ...WriterOption) *Writer {
	pid := int32(os.Getpid())
	cfg := writerConfig{pid: pid, tid: int64(pid), thread: DefaultThread, mono: monotonicNow, wall: wallNow}
	for _, o := range opts {
		o(&cfg)
	}
	return &Writer{w: w, cfg: cfg, buf: make([]byte, 0, 512)}
}

func wallNow() int64 { return time.Now().UnixNano() }

// Err returns the first error a write returned.
func (w *Writer) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// BeginInvocation allocates the next invocation id (1, 2, ...) and makes it
// and hid the context of the spans that follow, as the runtime does once per
// run.
func (w *Writer) BeginInvocation(hid uint64) uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.last++
	w.inv, w.hid = w.last, hid
	return w.inv
}

// SetInvocation sets the invocation context explicitly.
func (w *Writer) SetInvocation(inv, hid uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.inv, w.hid = inv, hid
}

// Scope is an open span; End writes it.
type Scope struct {
	w     *Writer
	name  string
	attrs []Attr
	ts    int64
	depth int32
	inv   uint64
	hid   uint64
	ended bool
}

// errScopeEnded is returned by a second End.
var errScopeEnded = errors.New("strace: scope already ended")

// Start opens a span named name at the current depth, starting now. The
// attributes are written when it ends, before any given to End.
func (w *Writer) Start(name string, attrs ...Attr) *Scope {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := &Scope{w: w, name: name, attrs: attrs, depth: w.depth, inv: w.inv, hid: w.hid}
	w.depth++
	s.ts = w.cfg.mono()
	return s
}

// End closes the scope and writes its span (ts = start, dur = now - start),
// with attrs appended to those given to Start.
func (s *Scope) End(attrs ...Attr) error {
	w := s.w
	w.mu.Lock()
	defer w.mu.Unlock()
	if s.ended {
		return errScopeEnded
	}
	s.ended = true
	now := w.cfg.mono()
	w.depth = s.depth
	all := s.attrs
	if len(attrs) > 0 {
		all = append(append([]Attr(nil), s.attrs...), attrs...)
	}
	sp := Span{Pid: w.cfg.pid, Tid: w.cfg.tid, Inv: s.inv, Hid: s.hid, Depth: s.depth,
		Name: s.name, TS: s.ts, Dur: satSub(now, s.ts), Attrs: all}
	return w.writeLocked(Record{Kind: KindSpan, Prefix: w.prefixLocked(SpanFunc, now), Span: sp})
}

func satSub(a, b int64) int64 {
	if d, ok := subInt64(a, b); ok {
		return d
	}
	if b > 0 {
		return -maxInt64 - 1
	}
	return maxInt64
}

// HostSpan writes a span measured elsewhere, on the host clock, in the
// current invocation.
func (w *Writer) HostSpan(name string, ts, dur int64, depth int32, attrs ...Attr) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	sp := Span{Pid: w.cfg.pid, Tid: w.cfg.tid, Inv: w.inv, Hid: w.hid, Depth: depth,
		Name: name, TS: ts, Dur: dur, Attrs: attrs}
	return w.writeLocked(Record{Kind: KindSpan, Prefix: w.prefixLocked(SpanFunc, w.cfg.mono()), Span: sp})
}

// DeviceSpan writes a device-clock span (ts from the invocation's device
// origin) in the current invocation: its attributes are clk=dev and then
// attrs.
func (w *Writer) DeviceSpan(name string, ts, dur int64, depth int32, attrs ...Attr) error {
	all := make([]Attr, 0, 1+len(attrs))
	all = append(all, Attr{Key: "clk", Value: "dev"})
	all = append(all, attrs...)
	return w.HostSpan(name, ts, dur, depth, all...)
}

// WallAnchor writes this process's [CLOCK_ANCHOR] v=1 record from the
// Writer's clocks.
func (w *Writer) WallAnchor() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	mono := w.cfg.mono()
	a := WallAnchor{Pid: w.cfg.pid, MonoNS: mono, WallNS: w.cfg.wall()}
	return w.writeLocked(Record{Kind: KindWallAnchor, Prefix: w.prefixLocked(AnchorFunc, mono), WallAnchor: a})
}

// DeviceAnchor writes a [CLOCK_ANCHOR] v=2 record. Zero Pid and Tid are
// replaced by the Writer's.
func (w *Writer) DeviceAnchor(a DeviceAnchor) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if a.Pid == 0 && a.Tid == 0 {
		a.Pid, a.Tid = w.cfg.pid, w.cfg.tid
	}
	return w.writeLocked(Record{Kind: KindDeviceAnchor, Prefix: w.prefixLocked(AnchorFunc, w.cfg.mono()), DeviceAnchor: a})
}

// Write writes rec as it is: its own log prefix when rec.Prefix.Present,
// else none (an anchor, which is only valid with its prefix, gets one from
// the Writer's clock). A span's name and attributes are encoded and capped
// as the runtime does.
func (w *Writer) Write(rec Record) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !rec.Prefix.Present && (rec.Kind == KindWallAnchor || rec.Kind == KindDeviceAnchor) {
		rec.Prefix = w.prefixLocked(AnchorFunc, w.cfg.mono())
	}
	return w.writeLocked(rec)
}

// errKind is returned by Write for a record of no known kind.
var errKind = errors.New("strace: record of unknown kind")

func (w *Writer) prefixLocked(fn string, mono int64) Prefix {
	return Prefix{Present: true, MonoNS: mono, Thread: w.cfg.thread, Level: DefaultLevel, Func: fn}
}

func (w *Writer) writeLocked(rec Record) error {
	b, err := AppendRecord(w.buf[:0], &rec)
	if err != nil {
		return err
	}
	w.buf = b[:0]
	if len(b) > 4096 {
		w.buf = nil // do not keep a rare huge buffer
	}
	if _, err := w.w.Write(b); err != nil {
		if w.err == nil {
			w.err = err
		}
		return err
	}
	return nil
}

// AppendRecord appends rec as one line (with its '\n') in the runtime's
// format, as Writer.Write writes it.
func AppendRecord(dst []byte, rec *Record) ([]byte, error) {
	if rec.Prefix.Present {
		dst = appendPrefix(dst, &rec.Prefix)
	}
	switch rec.Kind {
	case KindSpan:
		dst = appendSpan(dst, &rec.Span)
	case KindWallAnchor:
		a := &rec.WallAnchor
		dst = append(dst, "[CLOCK_ANCHOR] v=1 pid="...)
		dst = appendInt(dst, int64(a.Pid))
		dst = append(dst, " mono_ns="...)
		dst = appendInt(dst, a.MonoNS)
		dst = append(dst, " wall_ns="...)
		dst = appendInt(dst, a.WallNS)
	case KindDeviceAnchor:
		a := &rec.DeviceAnchor
		dst = append(dst, "[CLOCK_ANCHOR] v=2 pid="...)
		dst = appendInt(dst, int64(a.Pid))
		dst = append(dst, " tid="...)
		dst = appendInt(dst, a.Tid)
		dst = append(dst, " dev="...)
		dst = appendInt(dst, int64(a.Dev))
		dst = append(dst, " host_ns="...)
		dst = appendInt(dst, a.HostNS)
		dst = append(dst, " window_ns="...)
		dst = appendInt(dst, a.WindowNS)
		dst = append(dst, " dev_cyc="...)
		dst = appendUint(dst, a.DevCyc)
		dst = append(dst, " dev_freq="...)
		dst = appendUint(dst, a.DevFreq)
	case KindBindPhase:
		b := &rec.BindPhase
		if b.Source != "" {
			dst = append(dst, b.Source...)
			dst = append(dst, ' ')
		}
		dst = append(dst, "bind phase="...)
		dst = append(dst, b.Phase...)
		dst = append(dst, " start_ns="...)
		dst = appendUint(dst, b.StartNS)
		dst = append(dst, " dur_ns="...)
		dst = appendUint(dst, b.DurNS)
		dst = append(dst, ' ')
		dst = appendRawAttrs(dst, b.Attrs)
	case KindStamp:
		dst = append(dst, "[stamp] "...)
		dst = append(dst, rec.Stamp.Text...)
	case KindAutoload:
		dst = appendAutoload(dst, &rec.Autoload)
	default:
		return dst, errKind
	}
	return append(dst, '\n'), nil
}

// appendPrefix appends "[mono_ns=<ns>][T0x<hex>][<LEVEL>] <func>: ".
func appendPrefix(dst []byte, p *Prefix) []byte {
	dst = append(dst, "[mono_ns="...)
	dst = appendInt(dst, p.MonoNS)
	dst = append(dst, "][T0x"...)
	dst = appendHex(dst, p.Thread)
	dst = append(dst, "]["...)
	dst = append(dst, p.Level...)
	dst = append(dst, "] "...)
	dst = append(dst, p.Func...)
	return append(dst, ": "...)
}

// appendSpan appends the span marker. As the runtime's format string does, a
// blank always follows dur, attributes or not.
func appendSpan(dst []byte, s *Span) []byte {
	dst = append(dst, "[STRACE] v=1 pid="...)
	dst = appendInt(dst, int64(s.Pid))
	dst = append(dst, " tid="...)
	dst = appendInt(dst, s.Tid)
	dst = append(dst, " inv="...)
	dst = appendUint(dst, s.Inv)
	dst = append(dst, " hid="...)
	dst = appendHex(dst, s.Hid)
	dst = append(dst, " depth="...)
	dst = appendInt(dst, int64(s.Depth))
	dst = append(dst, " name="...)
	dst = appendName(dst, s.Name)
	dst = append(dst, " ts="...)
	dst = appendInt(dst, s.TS)
	dst = append(dst, " dur="...)
	dst = appendInt(dst, s.Dur)
	dst = append(dst, ' ')
	return appendAttrText(dst, s.Attrs)
}
