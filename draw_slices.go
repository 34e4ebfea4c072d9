package phasetrace

import (
	"errors"
	"slices"
	"strings"

	"github.com/phasetrace/phasetrace/internal/compareplan"
	"github.com/phasetrace/phasetrace/internal/firstpass"
	"github.com/phasetrace/phasetrace/internal/held"
	"github.com/phasetrace/phasetrace/internal/remoteplan"
	"github.com/phasetrace/phasetrace/internal/tracks"
	"github.com/phasetrace/phasetrace/perfetto"
	"github.com/phasetrace/phasetrace/strace"
)

// sliceDrawer hands slices to the trace writer and accounts for each in the
// account: a span's slice is drawn, or counted under the reason it is not —
// also when the writer refuses or moves it later (refused, overflowed).
// Every stage that draws draws through it.
type sliceDrawer struct {
	// out is the trace's writer and tracks; a split trace's batches go to
	// their parts' instead (batch).
	out    sink
	scan   *firstpass.ScanResult // what the first pass learned
	acct   *account
	arrows *arrowAccount
	remote *remoteplan.Plan // nil: every log on this host
	hosts  []HostSummary    // per machine of remote: its slices drawn and their bounds (remoteArgs, drawnOn)
	// flushSlices is how many slices are handed to the writer between
	// flushes; handed counts them since the last one.
	flushSlices int
	handed      int
	refusals    int64          // slices the writer refused (refused)
	args        []perfetto.Arg // reused for each slice's arguments
	hids        map[uint64]string
	window      timeWindow
	// parts writes a split trace (WithSplit; nil: none): each batch is
	// drawn on the writer and tracks of the part it picks (batch).
	parts *partSet
	// walls are the wall-clock snapshots the trace holds (wallClocks),
	// for each part's writer.
	walls [][2]int64
	// pendingDevice counts the device slices in their devices' summaries
	// once written (flush).
	pendingDevice *pendingDevice
	// about is what each trace written says of itself; a part says it as
	// it is written out. firstHanded is the earliest start of a slice
	// handed to a writer (anyHanded: there is one), where the trace's own
	// instant goes (converter.aboutAt).
	about       *about
	firstHanded int64
	anyHanded   bool
	anomalyArgs []perfetto.Arg // reused for each anomaly's arguments
}

// A sink is where a batch of drawing goes: the writer of the trace, or of
// the part of a split trace that takes the batch, and the tracks declared
// on it. A track is drawn on only through its own sink's writer.
type sink struct {
	w      *perfetto.Writer
	tracks *tracks.TrackSet
}

// batch begins a batch of drawing — a whole run, or one slice — that starts
// at key (noKey: none to go by) and draws at most bound slices, and
// returns the sink it draws into: in a split trace, the part that takes
// it.
func (cv *sliceDrawer) batch(key int64, bound int) sink {
	if cv.parts == nil {
		return cv.out
	}
	return cv.batchIn(key, bound, nil, false)
}

// batchIn begins a batch of a split trace in part to (promised: to holds
// room for it) while that part is open and has room; else as batch.
func (cv *sliceDrawer) batchIn(key int64, bound int, to *part, promised bool) sink {
	cv.parts.writeOut()
	return cv.parts.route(key, bound, to, promised).sink
}

// timeWindow is the window a conversion draws (WithWindow), in trace ns:
// the slices that meet [start, end), a slice [ts, ts+dur] closed. Without
// one (on false) every slice is drawn.
type timeWindow struct {
	on, noStart, noEnd bool
	start, end         int64
}

// outside reports whether the slice [ts, ts+dur] is outside the window,
// so that it is not drawn and needs no track. A slice whose interval is
// not one is not outside: hand counts it under its own reason.
func (cv *sliceDrawer) outside(ts, dur int64) bool {
	w := &cv.window
	if !w.on || ts < 0 || dur < 0 || ts+dur < ts {
		return false
	}
	return !w.noEnd && ts >= w.end || !w.noStart && ts+dur < w.start
}

// part is the part of a split trace being drawn (0: the trace is not
// split).
func (cv *sliceDrawer) part() int {
	if cv.parts == nil {
		return 0
	}
	return cv.parts.cur.n
}

// threadFor is the real-tid lane of sp's thread, or the zero Track,
// without creating it, when sp is outside the window.
func (cv *sliceDrawer) threadFor(s sink, sp *held.Span) perfetto.Track {
	if cv.outside(sp.TS, sp.Dur) {
		return perfetto.Track{}
	}
	return s.tracks.Thread(sp.Pid, sp.Tid)
}

// drawable reports whether thread (pid, tid) has a track, creating it.
// In a split trace the track is not created (the part the span goes to
// is not chosen yet): it reports whether the current part has it or room
// for it.
func (cv *sliceDrawer) drawable(pid int32, tid int64) bool {
	if cv.parts != nil {
		return cv.parts.cur.tracks.MayHave(pid, tid)
	}
	return !cv.out.tracks.Thread(pid, tid).IsZero()
}

// drawSpan draws one host span on track t, with its identity and every
// attribute as typed arguments.
func (cv *sliceDrawer) drawSpan(out sink, t perfetto.Track, sp *held.Span, extra []perfetto.Arg, laneSplit bool) {
	cv.drawSpanWithFlows(out, t, sp, extra, laneSplit, nil, nil)
}

// drawSpanWithFlows is drawSpan with flows attached: flows start or continue at the
// span, endFlows end there.
func (cv *sliceDrawer) drawSpanWithFlows(out sink, t perfetto.Track, sp *held.Span, extra []perfetto.Arg, laneSplit bool, flows, endFlows []perfetto.FlowID) {
	if cv.outside(sp.TS, sp.Dur) { // as hand would, without its arguments
		cv.hand(out, t, &perfetto.Slice{TS: sp.TS, Dur: sp.Dur}, sp.At)
		if len(flows)+len(endFlows) > 0 {
			cv.arrows.dropped(cv.arrows.live(flows))
			cv.arrows.dropped(cv.arrows.live(endFlows))
		}
		return
	}
	args := cv.args[:0]
	args = append(args, perfetto.Uint("inv", sp.Inv), perfetto.String("hid", cv.hidString(sp.Hid)), perfetto.Int("depth", int64(sp.Depth)))
	if laneSplit {
		args = append(args, perfetto.Int("os_tid", sp.Tid))
	}
	args = appendAttrs(args, sp.Attrs)
	args = cv.remoteArgs(args, sp.Pid, sp.TS, sp.End(), true)
	if sp.NameTruncated || sp.AttrsTruncated {
		args = append(args, perfetto.Bool("truncated_by_emitter", true))
	}
	if len(extra) > 0 {
		args = append(args, extra...)
	}
	arrows := len(flows)+len(endFlows) > 0
	if arrows {
		flows, endFlows = cv.arrows.live(flows), cv.arrows.live(endFlows)
	}
	drawn := cv.hand(out, t, &perfetto.Slice{Name: sp.Name, Category: categoryOf(sp.Name), TS: sp.TS, Dur: sp.Dur, Depth: sp.Depth, Args: args, Flows: flows, EndFlows: endFlows, Ref: uint64(sp.At)}, sp.At)
	if drawn {
		cv.acct.drawn()
		cv.drawnOn(sp.Pid)
	}
	if arrows {
		if drawn {
			cv.arrows.handed(flows)
			cv.arrows.handed(endFlows)
		} else {
			cv.arrows.dropped(flows)
			cv.arrows.dropped(endFlows)
		}
	}
}

// hand hands one slice to the writer, unless it is outside the window
// (WithWindow), its track is over the track limit or its interval is not
// one after placement (a device span mapped outside the int64 range); it
// reports whether it did. Callers count the slices of spans as drawn; the
// reasons it refuses are counted here.
func (cv *sliceDrawer) hand(out sink, t perfetto.Track, s *perfetto.Slice, p held.Pos) bool {
	switch cv.write(out, t, s) {
	case notInWindow:
		bump(&cv.acct.sum.Spans.NotDrawn, ReasonOutsideWindow, 1) // asked for: no example
	case noTrack:
		cv.acct.dropSpan(ReasonTrackLimit, p, s.Name, 1)
	case badInterval:
		cv.acct.dropSpan(ReasonOutsideTimeRange, p, s.Name+" at "+itoa(s.TS)+" +"+itoa(s.Dur), 1)
	default:
		return true
	}
	return false
}

// Why write did not write a slice.
const (
	written     = iota
	notInWindow // outside the window asked for (WithWindow)
	noTrack     // its track is over the track limit (the zero Track)
	badInterval // its interval is not one after placement
)

// write hands s to the writer on t, unless it is outside the window, has
// no track or no interval, and says which (written: it was handed, and
// counted in its part of a split trace). The arguments' buffer is kept
// grown either way: the writer copied the arguments.
func (cv *sliceDrawer) write(out sink, t perfetto.Track, s *perfetto.Slice) (why int) {
	switch {
	case cv.outside(s.TS, s.Dur):
		why = notInWindow
	case t.IsZero():
		why = noTrack
	case s.TS < 0 || s.Dur < 0 || s.TS+s.Dur < s.TS:
		why = badInterval
	default:
		writeLabelled(out.w, t, s)
		cv.handed++
		if !cv.anyHanded || s.TS < cv.firstHanded {
			cv.firstHanded, cv.anyHanded = s.TS, true
		}
		if cv.parts != nil {
			cv.parts.took(s.TS, s.Dur)
		}
	}
	if cap(s.Args) > cap(cv.args) {
		cv.args = s.Args[:0]
	}
	return why
}

// refused takes back a slice the writer refused: a span counted as drawn
// is counted under the reason instead, once per track when its overflow
// lanes ran out; its arrows are not drawn.
func (cv *sliceDrawer) refused(r perfetto.Refusal) {
	cv.refusals++
	cv.arrows.refused(r.Flows, r.Alone)
	what, at := cv.acct.fromSliceRef(r.Ref)
	if what != "" {
		cv.acct.notDrawn(otherReasons[what][2], at, r.Name+" on "+r.Track+": "+r.Err.Error(), 1)
		return
	}
	cv.acct.sum.Spans.Drawn--
	cv.pendingDevice.refused(at, r.TS, r.Dur) // a device span is not counted placed
	switch {
	case errors.Is(r.Err, perfetto.ErrTooManyLanes):
		cv.acct.dropOnTrack(ReasonLanesFull, r.Track, at)
	case errors.Is(r.Err, perfetto.ErrTooManyTracks) && r.Track != "":
		cv.acct.dropOnTrack(ReasonLanesLimit, r.Track, at)
	case errors.Is(r.Err, perfetto.ErrTooManyTracks):
		cv.acct.dropSpan(ReasonTrackLimit, at, r.Name, 1)
	default:
		cv.acct.dropSpan(ReasonWriterRefused, at, r.Name+" on "+r.Track+": "+r.Err.Error(), 1)
	}
}

// overflowed counts a slice the writer moved to an overflow lane.
func (cv *sliceDrawer) overflowed(o perfetto.Overflow) {
	reason := ReasonCouldNotNest
	switch {
	case errors.Is(o.Err, perfetto.ErrOverlap):
		reason = ReasonPartialOverlap
	case errors.Is(o.Err, perfetto.ErrTooDeep):
		reason = ReasonTooDeep
	case errors.Is(o.Err, perfetto.ErrOutOfOrder), errors.Is(o.Err, perfetto.ErrUnverifiable):
		reason = ReasonTimeBackwards
	}
	what, at := cv.acct.fromSliceRef(o.Ref)
	cv.acct.moved(reason, at, o.Name+" on "+o.Track+": "+o.Err.Error())
	if what == "" { // a span of the log
		bump(&cv.acct.sum.Spans.Moved, reason, 1)
	}
}

// maybeFlush lets the writer write what it holds once enough has been
// handed to it. It is called only between whole runs, so a run's tree is
// always resolved in one flush. An I/O error stops nothing here: the
// writer keeps it, and Convert returns it at the end.
func (cv *sliceDrawer) maybeFlush() {
	if cv.handed >= cv.flushSlices {
		cv.flush()
	}
}

// flush lets the writers write what they hold, and, in a split trace,
// writes out the parts done with.
func (cv *sliceDrawer) flush() {
	cv.handed = 0
	if cv.parts == nil {
		cv.out.w.Flush()
	} else {
		cv.parts.flush()
	}
	cv.arrows.flushed()
	cv.pendingDevice.commit()
	if cv.parts != nil {
		cv.parts.expire()
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

// drawDerived draws a slice that is not a span of the log (a bind phase line, a
// host_phase_records entry); what reasons the writer cannot take it for
// are counted under what.
func (cv *sliceDrawer) drawDerived(out sink, t perfetto.Track, s perfetto.Slice, p held.Pos, what string) {
	s.Ref = cv.acct.sliceRef(what, p)
	switch cv.write(out, t, &s) {
	case notInWindow:
		bump(&cv.acct.sum.NotDrawn, otherReasons[what][3], 1) // asked for: no example
	case noTrack:
		cv.acct.notDrawn(otherReasons[what][0], p, s.Name, 1)
	case badInterval:
		cv.acct.notDrawn(otherReasons[what][1], p, s.Name, 1)
	}
}

// hidString is hex(hid), remembered: a run's spans share their hid, and a
// log has few callables.
func (cv *sliceDrawer) hidString(h uint64) string { return remembered(&cv.hids, h, hex) }

// logThread is "0x" + hex of a log-prefix thread handle, remembered.
func (d *runDrawer) logThread(t uint64) string {
	return remembered(&d.logThreads, t, func(v uint64) string { return "0x" + hex(v&^compareplan.MeasureThread) })
}

// segmentName is the name of the bind segment drawn for phase, remembered.
func (d *runDrawer) segmentName(phase string) string {
	return remembered(&d.segNames, phase, func(p string) string { return strace.SpanBind + "." + p })
}

// maxRemembered bounds each table of remembered strings.
const maxRemembered = 1 << 10

// remembered returns format(v), kept in *m (up to maxRemembered entries)
// so that a value seen again costs a lookup. Without it every slice would
// format its hid anew: a conversion of a 100 MB log takes 6.6 % longer
// (median of 24 pairs, `go test -run XXX -bench 'ConvertFile$' -benchtime
// 1x -benchfile LOG .`) and one of 10 MB makes 11 063 allocations instead
// of 1 771.
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

// A slice shows its label and keeps its span's whole dotted name in the
// argument full_name (argFullName). The label is the name with its
// parent's dotted name removed — its last dotted word: chip.run.runner_run
// shows as runner_run, chip.run.runner_run.device_wall.graph_build as
// graph_build, chip.run.bind.args as args, a task slot as task_slot_N,
// the derived window as effective. The UI cuts a label to the width of its
// slice, so a shared dotted prefix filled it ("chip.run.ru…") and hid the
// word that tells a slice from its kin; the nesting shows the rest. A root
// keeps its whole name: a name of at most two words (chip.run,
// node.dispatch, network1.complete) or, for an external producer, three
// (ext.<producer>.<span>), and a name whose last word is empty.
//
// In SQL, slice.name is the label and extract_arg(arg_set_id,
// 'debug.full_name') the name the runtime logged: a label names one kind
// of slice in the runtime's vocabulary (graph_build is the device phase;
// the remote run's node.graph_build keeps its name).
const argFullName = "full_name"

// sliceLabel is the label of a slice whose full name is name (above). It
// allocates nothing: the label is part of the name.
func sliceLabel(name string) string {
	first, last := strings.IndexByte(name, '.'), strings.LastIndexByte(name, '.')
	switch {
	case first == last || last == len(name)-1: // one word or two; an empty last word
		return name
	case strace.FamilyOf(name[:first]) == strace.FamilyExt && strings.IndexByte(name[first+1:last], '.') < 0: // ext.<producer>.<span>
		return name
	}
	return name[last+1:]
}

// writeLabelled hands s to the writer on t, named by its label, its full name
// added to its arguments (in s.Args' room: the slice drawer's reused buffer, so
// s.Args is left grown).
func writeLabelled(w *perfetto.Writer, t perfetto.Track, s *perfetto.Slice) {
	name := s.Name
	s.Name, s.Args = sliceLabel(name), append(s.Args, perfetto.String(argFullName, name))
	w.Slice(t, *s)
	s.Name, s.Args = name, s.Args[:len(s.Args)-1]
}

// The categories of slices, one for each kind the trace holds (a slice's
// category column in the trace processor): host stages, the bind stage and
// its segments (from spans, bind phase lines or host_phase_records),
// device phases (placed on the host axis; derived ones also "derived"),
// scheduler hand-offs, an external producer's spans, a split trace's
// overview, what the trace says of itself (about) and the anomalies.
const (
	categoryHost          = "host"
	categoryBind          = "bind"
	categoryDevice        = "device"
	categoryDeviceDerived = "device,derived"
	categoryNode          = "node"
	categoryExt           = "ext"
	categoryOverview      = "overview"
	categoryAbout         = "phasetrace"
	categoryAnomaly       = "anomaly"
)

// categoryOf is the category of the slice of a span named name.
func categoryOf(name string) string {
	switch {
	case strings.HasPrefix(name, strace.SpanDeviceWall):
		return categoryDevice
	case name == strace.SpanBind || strings.HasPrefix(name, strace.SpanBind) && len(name) > len(strace.SpanBind) && name[len(strace.SpanBind)] == '.':
		return categoryBind
	}
	switch strace.FamilyOf(name) {
	case strace.FamilyNode:
		return categoryNode
	case strace.FamilyExt:
		return categoryExt
	}
	return categoryHost
}
