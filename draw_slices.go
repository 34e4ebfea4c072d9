package phasetrace

import (
	"errors"
	"slices"
	"strconv"

	"github.com/phasetrace/phasetrace/perfetto"
	"github.com/phasetrace/phasetrace/strace"
)

// host draws one host span on track t, with its identity and every
// attribute as typed arguments.
func (c *converter) host(t perfetto.Track, sp *heldSpan, extra []perfetto.Arg, laneSplit bool) {
	c.hostFlows(t, sp, extra, laneSplit, nil, nil)
}

// hostFlows is host with flows attached: flows start or continue at the
// span, endFlows end there.
func (c *converter) hostFlows(t perfetto.Track, sp *heldSpan, extra []perfetto.Arg, laneSplit bool, flows, endFlows []perfetto.FlowID) {
	args := c.args[:0]
	args = append(args, perfetto.Uint("inv", sp.Inv), perfetto.String("hid", c.hidString(sp.Hid)), perfetto.Int("depth", int64(sp.Depth)))
	if laneSplit {
		args = append(args, perfetto.Int("os_tid", sp.Tid))
	}
	args = appendAttrs(args, sp.Attrs)
	args = c.remote.args(args, sp.Pid, sp.TS, sp.End(), true)
	if sp.NameTruncated || sp.AttrsTruncated {
		args = append(args, perfetto.Bool("truncated_by_emitter", true))
	}
	if len(extra) > 0 {
		args = append(args, extra...)
	}
	arrows := len(flows)+len(endFlows) > 0
	if arrows {
		flows, endFlows = c.arrows.live(flows), c.arrows.live(endFlows)
	}
	drawn := c.slice(t, &perfetto.Slice{Name: sp.Name, TS: sp.TS, Dur: sp.Dur, Depth: sp.Depth, Args: args, Flows: flows, EndFlows: endFlows, Ref: uint64(sp.at)}, sp.at)
	if drawn {
		c.led.drawn()
		c.remote.drawnOn(sp.Pid)
	}
	if arrows {
		if drawn {
			c.arrows.handed(flows)
			c.arrows.handed(endFlows)
		} else {
			c.arrows.dropped(flows)
			c.arrows.dropped(endFlows)
		}
	}
}

// slice hands one slice to the writer, unless its track is over the track
// limit or its interval is not one after placement (a device span mapped
// outside the int64 range); it reports whether it did. Callers count the
// slices of spans as drawn; the reasons it refuses are counted here.
func (c *converter) slice(t perfetto.Track, s *perfetto.Slice, p where) bool {
	switch {
	case t.IsZero():
		c.led.dropSpan(ReasonTrackLimit, p, s.Name, 1)
		return false
	case s.TS < 0 || s.Dur < 0 || s.TS+s.Dur < s.TS:
		c.led.dropSpan(ReasonOutsideTimeRange, p, s.Name+" at "+itoa(s.TS)+" +"+itoa(s.Dur), 1)
		return false
	}
	c.w.Slice(t, *s)
	c.handed++
	if cap(s.Args) > cap(c.args) {
		c.args = s.Args[:0] // the writer copied the arguments: reuse the buffer
	}
	return true
}

// refused takes back a slice the writer refused: a span counted as drawn
// is counted under the reason instead, once per track when its overflow
// lanes ran out; its arrows are not drawn.
func (c *converter) refused(r perfetto.Refusal) {
	c.refusals++
	c.arrows.refused(r.Flows, r.Alone)
	what, at := c.led.fromRef(r.Ref)
	if what != "" {
		c.led.notDrawn(otherReasons[what][2], at, r.Name+" on "+r.Track+": "+r.Err.Error(), 1)
		return
	}
	c.sum.Spans.Drawn--
	switch {
	case errors.Is(r.Err, perfetto.ErrTooManyLanes):
		c.led.dropOnTrack(ReasonLanesFull, r.Track, at)
	case errors.Is(r.Err, perfetto.ErrTooManyTracks) && r.Track != "":
		c.led.dropOnTrack(ReasonLanesLimit, r.Track, at)
	case errors.Is(r.Err, perfetto.ErrTooManyTracks):
		c.led.dropSpan(ReasonTrackLimit, at, r.Name, 1)
	default:
		c.led.dropSpan(ReasonWriterRefused, at, r.Name+" on "+r.Track+": "+r.Err.Error(), 1)
	}
}

// overflowed counts a slice the writer moved to an overflow lane.
func (c *converter) overflowed(o perfetto.Overflow) {
	reason := ReasonCouldNotNest
	switch {
	case errors.Is(o.Err, perfetto.ErrOverlap):
		reason = ReasonPartialOverlap
	case errors.Is(o.Err, perfetto.ErrTooDeep):
		reason = ReasonTooDeep
	case errors.Is(o.Err, perfetto.ErrOutOfOrder), errors.Is(o.Err, perfetto.ErrUnverifiable):
		reason = ReasonTimeBackwards
	}
	what, at := c.led.fromRef(o.Ref)
	c.led.moved(reason, at, o.Name+" on "+o.Track+": "+o.Err.Error())
	if what == "" { // a span of the log
		bump(&c.sum.Spans.Moved, reason, 1)
	}
}

// maybeFlush lets the writer write what it holds once enough has been
// handed to it. It is called only between whole runs, so a run's tree is
// always resolved in one flush. An I/O error stops nothing here: the
// writer keeps it, and Convert returns it at the end.
func (c *converter) maybeFlush() {
	if c.handed >= c.cfg.flushSlices {
		c.handed = 0
		c.w.Flush()
		c.arrows.flushed()
	}
}

// appendAttrs adds a span's attributes as typed arguments, in order.
func appendAttrs(args []perfetto.Arg, attrs []strace.Attr) []perfetto.Arg {
	n := len(args)
	args = slices.Grow(args, len(attrs))[:n+len(attrs)]
	out := args[n:]
	for i := range out {
		switch a := &attrs[i]; {
		case a.Bare:
			out[i] = perfetto.Bool(a.Key, true)
		case a.Type == strace.TypeInt:
			out[i] = perfetto.Int(a.Key, a.Int)
		case a.Type == strace.TypeUint:
			out[i] = perfetto.Uint(a.Key, a.Uint)
		default:
			out[i] = perfetto.String(a.Key, a.Value)
		}
	}
	if n := len(attrs); n > 0 && attrs[n-1].MaybeCut {
		// The log ended inside the record's attributes, without a line end.
		args = append(args, perfetto.String("maybe_cut_by_log_end", attrs[n-1].Key))
	}
	return args
}

// other draws a slice that is not a span of the log (a bind phase line, a
// host_phase_records entry); what reasons the writer cannot take it for
// are counted under what.
func (c *converter) other(t perfetto.Track, s perfetto.Slice, p where, what string) {
	switch {
	case t.IsZero():
		c.led.notDrawn(otherReasons[what][0], p, s.Name, 1)
		return
	case s.TS < 0 || s.Dur < 0 || s.TS+s.Dur < s.TS:
		c.led.notDrawn(otherReasons[what][1], p, s.Name, 1)
		return
	}
	s.Ref = c.led.ref(what, p)
	c.w.Slice(t, s)
	c.handed++
	if cap(s.Args) > cap(c.args) {
		c.args = s.Args[:0]
	}
}

// hidString is hex(hid), remembered: a run's spans share their hid, and a
// log has few callables.
func (c *converter) hidString(h uint64) string {
	// A run's spans share one hid: the last one answers most calls.
	if h == c.lastHid && c.lastHidStr != "" {
		return c.lastHidStr
	}
	c.lastHid, c.lastHidStr = h, remembered(&c.hids, h, hex)
	return c.lastHidStr
}

// logThread is "0x" + hex of a log-prefix thread handle, remembered.
func (c *converter) logThread(t uint64) string {
	return remembered(&c.logThreads, t, func(v uint64) string { return "0x" + hex(v) })
}

// segmentName is the name of the bind segment drawn for phase, remembered.
func (c *converter) segmentName(phase string) string {
	return remembered(&c.segNames, phase, func(p string) string { return strace.SpanBind + "." + p })
}

// maxRemembered bounds each table of remembered strings.
const maxRemembered = 1 << 10

// remembered returns format(v), kept in *m (up to maxRemembered entries)
// so that a value seen again costs a lookup.
func remembered[K comparable](m *map[K]string, v K, format func(K) string) string {
	if s, ok := (*m)[v]; ok {
		return s
	}
	s := format(v)
	if *m == nil {
		*m = map[K]string{}
	}
	if len(*m) < maxRemembered {
		(*m)[v] = s
	}
	return s
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

func hex(v uint64) string { return strconv.FormatUint(v, 16) }
