package phasetrace

import (
	"errors"
	"fmt"
	"io"

	"github.com/phasetrace/phasetrace/internal/firstpass"
	"github.com/phasetrace/phasetrace/internal/held"
	"github.com/phasetrace/phasetrace/reduce"
	"github.com/phasetrace/phasetrace/strace"
)

// Builder writes one Perfetto trace from Go values — host and device spans,
// legacy bind phase lines, raw device-phase buffers — exactly as Convert
// writes it from logs: Convert is a Builder fed by the log readers. Give it
// values in the order the runtime wrote them (a span when it ended, a run's
// spans before its root, as the runtime logs them; a root given before its
// run's other spans keeps the run open until the next root of its thread).
// Every bad value is counted in the Summary, never an error; positions of
// values are "values:N", the N-th value given. A Builder is not safe for
// concurrent use, and must be closed.
type Builder struct {
	c      *converter
	file   uint64
	n      int64
	closed bool
}

// ErrBuilderClosed is returned for values given to a closed Builder.
var ErrBuilderClosed = errors.New("phasetrace: builder is closed")

// NewBuilder returns a Builder that writes to w what survey s says (nil: an
// empty Survey) and the values it is given. The options are Convert's;
// those that name inputs (WithPhaseRecords, WithCalibration) are read
// now, and an error reading them is returned.
func NewBuilder(w io.Writer, s *Survey, opts ...Option) (*Builder, error) {
	c := newConverter(opts)
	if err := c.cfg.check(); err != nil {
		return nil, err
	}
	if s == nil {
		s = NewSurvey()
	}
	c.survey = s
	c.planFromSurvey(s)
	if err := c.loadArtifacts(true); err != nil {
		return nil, err
	}
	c.start(w, c.remote != nil)
	return &Builder{c: c, file: c.acct.file(valuesName)}, nil
}

func (b *Builder) next() held.Pos {
	b.n++
	return held.PosAt(b.file, b.n)
}

// Span draws a host span, or a device span (clk=dev) of its run. The
// Builder copies what it keeps. A span read from a log is better given
// with its log prefix (Record).
func (b *Builder) Span(sp strace.Span) error { return b.span(sp, strace.Prefix{}) }

// span draws sp, read with log prefix p.
func (b *Builder) span(sp strace.Span, p strace.Prefix) error {
	if b.closed {
		return ErrBuilderClosed
	}
	b.c.sum.Spans.Read++
	rec := strace.Record{Kind: strace.KindSpan, Span: sp.Clone(), Prefix: p}
	b.c.takeSpan(&rec, b.next())
	return nil
}

// Record draws a record as strace.Reader returns it: a span (Span), a
// legacy bind phase line (BindPhase) or a device clock anchor
// (DeviceAnchor), each with its log prefix. A span given with its prefix
// is drawn exactly as Convert draws it: a legacy bind phase line belongs to
// the chip.run.bind written by the thread of its own log prefix, which
// Span cannot tell. A wall-clock anchor is the Survey's
// (Survey.WallAnchor); it, and a record of no other kind, is misuse
// (ErrInvalidInput). The Builder copies what it keeps.
func (b *Builder) Record(rec strace.Record) error {
	switch rec.Kind {
	case strace.KindSpan:
		return b.span(rec.Span, rec.Prefix)
	case strace.KindBindPhase:
		return b.BindPhase(rec.BindPhase, rec.Prefix.Thread)
	case strace.KindDeviceAnchor:
		return b.DeviceAnchor(rec.DeviceAnchor)
	}
	if b.closed {
		return ErrBuilderClosed
	}
	return fmt.Errorf("%w: a Builder draws spans, bind phase lines and device anchors (a wall-clock anchor is the Survey's), not record kind %v", ErrInvalidInput, rec.Kind)
}

// BindPhase draws a legacy "bind phase=" line inside the chip.run.bind
// that contains it, written by the thread whose log-prefix handle is
// thread (0: any).
func (b *Builder) BindPhase(p strace.BindPhase, thread uint64) error {
	if b.closed {
		return ErrBuilderClosed
	}
	rec := strace.Record{Kind: strace.KindBindPhase, BindPhase: p.Clone(), Prefix: strace.Prefix{Thread: thread}}
	b.c.runDrawer.takeBindLine(&rec, b.next())
	return nil
}

// DeviceAnchor adds a device clock anchor now: runs drawn after it are
// placed with it.
func (b *Builder) DeviceAnchor(a strace.DeviceAnchor) error {
	if b.closed {
		return ErrBuilderClosed
	}
	b.c.deviceDrawer.addAnchor(a)
	return nil
}

// Close draws what still waits (runs whose root never came, hand-offs
// waiting for their other end), writes the rest of the trace and returns
// the summary. The error is an I/O error of w; a second Close returns
// ErrBuilderClosed.
func (b *Builder) Close() (*Summary, error) {
	if b.closed {
		return nil, ErrBuilderClosed
	}
	b.closed = true
	b.c.drain()
	return b.c.close()
}

// DeviceBuffer is one run's raw device-phase buffer as the host reads it
// back from the device (package reduce documents the layout), with what
// the buffer itself does not say: how many AICPU threads wrote it, the
// counter's frequency, and the run it belongs to.
type DeviceBuffer struct {
	Data    []byte
	Threads int    // AICPU threads the buffer was written for
	Freq    uint64 // device counter frequency in Hz
	Pid     int32  // the chip child that ran it
	Tid     int64  // the thread that logs its spans (0: Pid)
	Inv     uint64 // the run's invocation id
	Hid     uint64 // its callable hash
	Dev     int32  // the device it ran on
}

// DeviceBuffer reduces a raw device-phase buffer across its threads and
// draws the run's device phases, placed like the device spans the runtime
// logs — with one difference: from a buffer, RunWall's true start is
// known, so device_wall is drawn where it really began rather than as the
// runtime's bracket at the origin. Give a run's buffer before its root
// span, as the runtime logs device spans before chip.run. A buffer that
// does not decode or reduce is counted in the summary (NotDrawn), not
// returned: the error is only for misuse (no data, no thread count, no
// frequency).
func (b *Builder) DeviceBuffer(db DeviceBuffer) error {
	switch {
	case b.closed:
		return ErrBuilderClosed
	case len(db.Data) == 0 || db.Threads <= 0 || db.Freq == 0:
		return fmt.Errorf("%w: a device buffer needs its data, thread count and frequency", ErrInvalidInput)
	}
	at := b.next()
	spans, wall, err := reduceBuffer(db)
	if err != nil {
		b.c.acct.notDrawn(ReasonDeviceBuffers, at, err.Error(), 1)
		return nil
	}
	for _, sp := range spans {
		b.c.sum.Spans.Read++
		rec := strace.Record{Kind: strace.KindSpan, Span: sp}
		b.c.takeSpan(&rec, at)
	}
	if wall != nil {
		if run := b.c.runs.waiting(firstpass.InvKey{Pid: db.Pid, Inv: db.Inv}); run != nil {
			run.wall = wall
		}
	}
	return nil
}

// reduceBuffer turns a raw buffer into the device spans the runtime would
// log for it, and RunWall's true extent.
func reduceBuffer(db DeviceBuffer) ([]strace.Span, *reduce.DeviceWindow, error) {
	buf, err := reduce.DecodeBuffer(db.Data, db.Threads)
	if err != nil {
		return nil, nil, err
	}
	red, err := reduce.Reduce(buf, reduce.Hz(db.Freq))
	if err != nil {
		return nil, nil, err
	}
	ds, err := red.Spans()
	if err != nil {
		return nil, nil, err
	}
	tid := db.Tid
	if tid == 0 {
		tid = int64(db.Pid)
	}
	out := make([]strace.Span, len(ds))
	for i, s := range ds {
		attrs := []strace.Attr{strace.String("clk", "dev")}
		if s.Name == strace.SpanDeviceWall {
			attrs = append(attrs, strace.Uint("origin_cyc", uint64(red.Origin)), strace.Int("dev", int64(db.Dev)))
		}
		out[i] = strace.Span{Pid: db.Pid, Tid: tid, Inv: db.Inv, Hid: db.Hid, Depth: int32(s.Depth), Name: s.Name, TS: int64(s.TS), Dur: int64(s.Dur), Attrs: attrs}
	}
	var wall *reduce.DeviceWindow
	if s, e, ok, err := red.WallOffset(); err == nil && ok {
		wall = &reduce.DeviceWindow{Start: s, End: e}
	}
	return out, wall, nil
}

// RemoteSpan draws a span machine logged on its own clock, placed on the
// dispatching host's axis as Convert places that machine's logs. A machine
// the Survey never heard of is drawn at its own times.
func (b *Builder) RemoteSpan(machine string, sp strace.Span) error {
	if b.closed {
		return ErrBuilderClosed
	}
	b.c.sum.Spans.Read++
	rec := strace.Record{Kind: strace.KindSpan, Span: sp.Clone()}
	if m := b.c.survey.machines; m != nil && b.c.remote != nil {
		if i, ok := m.index[machine]; ok {
			rec.Span.Pid = m.tracePid(i, rec.Span.Pid)
			if i < len(b.c.shift) && !rec.Span.IsDevice() {
				rec.Span.TS += b.c.shift[i]
			}
			if !b.c.remote.Adjust(i, &rec, nil) {
				b.c.unmapped(&rec, b.next())
				return nil
			}
		}
	}
	b.c.takeSpan(&rec, b.next())
	return nil
}
