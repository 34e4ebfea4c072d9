package counters

import (
	"math"
	"strconv"

	"github.com/phasetrace/phasetrace/internal/compareplan"
	"github.com/phasetrace/phasetrace/internal/firstpass"
	"github.com/phasetrace/phasetrace/internal/held"
	"github.com/phasetrace/phasetrace/internal/tracks"
	"github.com/phasetrace/phasetrace/perfetto"
)

// A Set draws the counters of one writer (the trace's, or a split
// trace's overview).
type Set struct {
	W       *perfetto.Writer // where the counters are drawn, and the tracks declared on it
	Tracks  *tracks.TrackSet
	site    Site
	horizon int64
	// maxEvents bounds the runs in flight's events held: past it the
	// oldest are written (as the run collector hands over its oldest run
	// past its bound), and a root read later that starts before them is
	// late.
	maxEvents int
	runs      map[firstpass.CallableKey]int // index in callables
	// callables are the callables' tracks, in the order they were made.
	callables []callableCounter
	walls     map[deviceKey]perfetto.Track
	flight    map[int32]inFlight
	// events are the roots' +1 and −1 not yet written, a heap by (ts,
	// pid); every event before written is written.
	events  []flightEvent
	written int64
	// Cmp is a comparison's plan: its decode callables share a y-axis,
	// and its rank pairs have a delta counter (deltas.go).
	Cmp    *compareplan.Plan
	Deltas []DeltaTrack // by rank pair
}

// A Site is what the counters need of the conversion around them:
// the slice drawer's WithWindow window, and the account, which counts the
// values not drawn (with an example when at is a position) and the
// comparison's deltas and unpaired steps.
type Site interface {
	Outside(ts, dur int64) bool
	NotDrawn(why Why, at held.Pos, detail string, example bool)
	Delta(pair int)
	Unpaired(pair int, side firstpass.Side, n int64)
}

// A Why says why a counter value is not drawn.
type Why uint8

const (
	TrackLimit Why = iota // the track limit refused its track
	Late                  // a root read after the runs in flight were written past its start
)

// callableCounter is a callable's counter track in a process (zero until
// its first value), with the number of its runs and the last one's start,
// end and place in the log.
type callableCounter struct {
	pid        int32
	hid        uint64
	track      perfetto.Track
	overMedian perfetto.Track // each run's duration less the callable's median
	runs       int64
	start, end int64
	at         held.Pos
}

type deviceKey struct {
	pid int32
	dev int32
}

// inFlight is one process's runs in flight: the count so far, the value
// last written and its counter track.
type inFlight struct {
	count, value int64
	track        perfetto.Track
}

// flightEvent is a root's start (+1) or end (−1) in process pid.
type flightEvent struct {
	ts    int64
	pid   int32
	delta int32
}

func New(site Site, horizon int64, maxEvents int) *Set {
	return &Set{site: site, horizon: horizon, maxEvents: maxEvents, written: math.MinInt64,
		runs: map[firstpass.CallableKey]int{}, walls: map[deviceKey]perfetto.Track{}, flight: map[int32]inFlight{}}
}

// RunDuration writes the duration of a drawn run's root at its start on
// its callable's track, and counts the run (also one outside the window,
// so that a window draws the values the whole trace has in it).
func (cs *Set) RunDuration(root *held.Span) {
	if cs == nil { // a stage drawn on its own, without counters
		return
	}
	k := firstpass.CallableKey{Pid: root.Pid, Hid: root.Hid}
	i, ok := cs.runs[k]
	if !ok {
		i = len(cs.callables)
		cs.runs[k] = i
		cs.callables = append(cs.callables, callableCounter{pid: root.Pid, hid: root.Hid})
	}
	c := &cs.callables[i]
	c.runs++
	c.start, c.end, c.at = root.TS, root.End(), root.At // what endRunOnce needs of a run once
	if !cs.site.Outside(root.TS, 0) {
		cs.callableValue(c, root.At, root.TS, root.Dur)
		if ty, ok := cs.Tracks.Scan.TypicalRuns[k]; ok && ty.Runs > 1 {
			cs.overMedianValue(c, root.At, root.TS, root.Dur-ty.Median)
		}
	}
	if cs.Cmp != nil {
		cs.decodeStep(root)
	}
}

// overMedianValue writes v, a run's duration less its callable's median
// (analysis.Typical, from the survey), at ts on c's second track: the
// step-time track draws from 0, where a step's few percent of variation
// are a flat line; around the median they fill the track.
func (cs *Set) overMedianValue(c *callableCounter, at held.Pos, ts, v int64) {
	if c.overMedian.IsZero() {
		name := OverMedian.name(strconv.FormatUint(c.hid, 16))
		c.overMedian, _ = cs.newTrack(c.pid, perfetto.CounterSpec{Name: name, Unit: perfetto.UnitTimeNs, YAxisShareKey: name,
			Description: "how much longer (above 0) or shorter than its callable's median each invocation of callable hid 0x" + strconv.FormatUint(c.hid, 16) +
				" ran (chip.run), at its start; the median is of every run of the callable in its process, within 1/128 (see the anomalies track's slow runs)"})
	}
	cs.value(c.overMedian, !c.overMedian.IsZero(), at, ts, v)
}

// callableValue writes v at ts on c's track, made on its first value.
func (cs *Set) callableValue(c *callableCounter, at held.Pos, ts, v int64) {
	if c.track.IsZero() {
		name := StepTime.name(strconv.FormatUint(c.hid, 16))
		axis := name
		if cs.Cmp.IsDecode(c.pid, c.hid) { // both sides' decode callables, whatever their hids
			axis = decodeAxis
		}
		c.track, _ = cs.newTrack(c.pid, perfetto.CounterSpec{Name: name, Unit: perfetto.UnitTimeNs, YAxisShareKey: axis,
			Description: "the duration of each invocation of callable hid 0x" + strconv.FormatUint(c.hid, 16) + " (its root span, chip.run), at its start: " +
				"the TPOT table's values, on one y-axis in every process (Display → Min/Max in the track's menu spreads them over the track); " +
				"a callable run once has a second value, 0, at its run's end"})
	}
	cs.value(c.track, !c.track.IsZero(), at, ts, v)
}

// endRunOnce writes the second value, 0, of each callable run once in its
// process, at its run's end, unless the run ends where it starts or
// outside the window.
func (cs *Set) endRunOnce() {
	for i := range cs.callables {
		if c := &cs.callables[i]; c.runs == 1 && c.end > c.start && !cs.site.Outside(c.end, 0) {
			cs.callableValue(c, c.at, c.end, 0)
		}
	}
}

// DeviceWall writes the placed duration of a drawn device_wall at its
// placed start on its device's track.
func (cs *Set) DeviceWall(pid int32, dev int32, at held.Pos, ts, dur int64) {
	if cs == nil || cs.site.Outside(ts, 0) {
		return
	}
	k := deviceKey{pid, dev}
	t, ok := cs.walls[k]
	if !ok {
		d := strconv.FormatInt(int64(dev), 10)
		if dev == tracks.NoDevice {
			d = "(unnamed)"
		}
		t, ok = cs.newTrack(pid, perfetto.CounterSpec{Name: DeviceWall.name(d), Unit: perfetto.UnitTimeNs,
			Description: "the placed duration of each run's device_wall on device " + d + ", at its placed start"})
		if ok {
			cs.walls[k] = t
		}
	}
	cs.value(t, ok, at, ts, dur)
}

// newTrack creates the counter track s under process pid, unless the
// track limit leaves no room for it besides a track for every process and
// thread the first pass found that has none yet: counters give way to
// slices.
func (cs *Set) newTrack(pid int32, s perfetto.CounterSpec) (perfetto.Track, bool) {
	tr := cs.Tracks
	owed := len(tr.Scan.Procs) + len(tr.Scan.Threads) - len(tr.Procs) - len(tr.Lanes)
	return tr.NewTrack(pid, 1+max(owed, 0), func(proc perfetto.Track) perfetto.Track { return cs.W.CounterTrack(proc, s) })
}

// value writes v at ts on t, or counts it when the track limit refused t.
func (cs *Set) value(t perfetto.Track, ok bool, at held.Pos, ts, v int64) {
	if !ok {
		cs.site.NotDrawn(TrackLimit, at, "", true)
		return
	}
	cs.W.Counter(t, ts, v)
}

// Root takes a root span read at at, [ts, end) in process pid, now being
// the log's time: its events are held, and those that are final written.
func (cs *Set) Root(pid int32, ts, end int64, at held.Pos, now int64) {
	if ts < cs.written {
		cs.site.NotDrawn(Late, at, "pid="+strconv.FormatInt(int64(pid), 10)+" ts="+strconv.FormatInt(ts, 10)+", before "+strconv.FormatInt(cs.written, 10)+", written already", true)
		return
	}
	cs.push(flightEvent{ts, pid, 1})
	cs.push(flightEvent{end, pid, -1})
	if now > math.MinInt64+cs.horizon {
		cs.writeBefore(now - cs.horizon)
	}
	for len(cs.events) > cs.maxEvents {
		ts := cs.events[0].ts
		for len(cs.events) > 0 && cs.events[0].ts == ts {
			cs.writeAt(ts)
		}
		if ts < math.MaxInt64 {
			ts++
		}
		cs.written = max(cs.written, ts)
	}
}

// Drain writes every event held, and the end of each callable run once,
// once every root has been read.
func (cs *Set) Drain() {
	cs.endRunOnce()
	cs.drainDeltas()
	for len(cs.events) > 0 {
		cs.writeAt(cs.events[0].ts)
	}
	cs.written = math.MaxInt64
}

// writeBefore writes the runs in flight of every event before w.
func (cs *Set) writeBefore(w int64) {
	for len(cs.events) > 0 && cs.events[0].ts < w {
		cs.writeAt(cs.events[0].ts)
	}
	cs.written = max(cs.written, w)
}

// writeAt applies the events at ts of the first process that has one,
// and writes the count if it changed. A process with no run in flight and
// no track is let go of: what is kept of it is then what a process never
// seen has, so that the processes past the track limit (or outside the
// window) are not kept, one by one, to the end of the log.
func (cs *Set) writeAt(ts int64) {
	pid := cs.events[0].pid
	f := cs.flight[pid]
	for len(cs.events) > 0 && cs.events[0].ts == ts && cs.events[0].pid == pid {
		f.count += int64(cs.pop().delta)
	}
	cs.writeFlight(pid, &f, ts)
	if f.count == 0 && f.value == 0 && f.track.IsZero() {
		delete(cs.flight, pid)
	} else {
		cs.flight[pid] = f
	}
}

// writeFlight writes f's count at ts if it changed.
func (cs *Set) writeFlight(pid int32, f *inFlight, ts int64) {
	if f.count == f.value {
		return
	}
	f.value = f.count
	if cs.site.Outside(ts, 0) { // a window writes the values inside it
		return
	}
	if f.track.IsZero() {
		f.track, _ = cs.newTrack(pid, perfetto.CounterSpec{Name: InFlight.name(""), Unit: perfetto.UnitCount,
			Description: "how many runs of the process have started and not ended (their root spans), at each change"})
	}
	if f.track.IsZero() {
		cs.site.NotDrawn(TrackLimit, 0, "", false)
		return
	}
	cs.W.Counter(f.track, ts, f.count)
}

func (e flightEvent) before(o flightEvent) bool {
	return e.ts < o.ts || e.ts == o.ts && e.pid < o.pid
}

func (cs *Set) push(e flightEvent) {
	h := append(cs.events, e)
	for i := len(h) - 1; i > 0; {
		p := (i - 1) / 2
		if !h[i].before(h[p]) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
	cs.events = h
}

func (cs *Set) pop() flightEvent {
	h := cs.events
	top := h[0]
	n := len(h) - 1
	h[0] = h[n]
	h = h[:n]
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < n && h[l].before(h[m]) {
			m = l
		}
		if r := l + 1; r < n && h[r].before(h[m]) {
			m = r
		}
		if m == i {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	cs.events = h
	return top
}
