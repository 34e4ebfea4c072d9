package tracks

import (
	"sort"
	"strconv"
	"strings"

	"github.com/phasetrace/phasetrace/internal/firstpass"
	"github.com/phasetrace/phasetrace/perfetto"
	"github.com/phasetrace/phasetrace/reduce"
	"github.com/phasetrace/phasetrace/strace"
)

// A TrackSet is the trace's tracks as the converter lays them out: one
// process track per pid, a thread track per tid (a thread that drove
// several runs at once split into pipeline-slot lanes, as the survey
// decided), and per device a group with its lanes. It creates each track
// the first time a slice is drawn on it — a process's when the first of
// its tracks is created — and none past the writer's track limit (a zero
// Track then).
type TrackSet struct {
	w        *perfetto.Writer
	Scan     *firstpass.ScanResult
	Procs    map[int32]perfetto.Track
	Lanes    map[LaneKey]perfetto.Track
	DevLanes map[DevLane]perfetto.Track

	// The last device lanes asked for: a run's phases ask for the same
	// few again and again. The memo saves 5.7 % of a conversion's time
	// (median of 24 pairs of conversions of a 100 MB log with and
	// without it, each `go test -run XXX -bench 'ConvertFile$' -benchtime
	// 1x -benchfile LOG .`).
	lastDev [DevMemo]devLaneMemo
	nextDev int
}

type devLaneMemo struct {
	key   DevLane
	track perfetto.Track
}

// DevMemo is how many device lanes the track set remembers: a run's
// phases, orch, sched, effective and a task slot or two, for the two or
// three devices whose runs come in turn (the oldest remembered is
// forgotten first, so too few would be forgotten before asked for again).
const DevMemo = 16

func NewTrackSet(w *perfetto.Writer, scan *firstpass.ScanResult) *TrackSet {
	return &TrackSet{w: w, Scan: scan, Procs: map[int32]perfetto.Track{}, Lanes: map[LaneKey]perfetto.Track{}, DevLanes: map[DevLane]perfetto.Track{}}
}

// Declare orders the processes (scheduler parents first, then chip
// children, then external producers, each by pid) and returns them in
// that order. It writes no track: a process track is declared, with its
// place in that order (SortIndex), when the first track under it is — a
// track is spent only when something is drawn on it, so that past the
// track limit the tracks before it are drawn, not the processes that
// happen to come first.
func (tr *TrackSet) Declare() []*firstpass.ProcInfo {
	procs := make([]*firstpass.ProcInfo, 0, len(tr.Scan.Procs))
	for _, p := range tr.Scan.Procs {
		procs = append(procs, p)
	}
	sort.Slice(procs, func(i, j int) bool {
		if a, b := procs[i].Side, procs[j].Side; a != b {
			return a < b // a comparison's base side first
		}
		if a, b := procs[i].MachineRank, procs[j].MachineRank; a != b {
			return a < b // the dispatching host's first, then each remote machine's
		}
		if a, b := procs[i].Rank(), procs[j].Rank(); a != b {
			return a < b
		}
		return procs[i].Pid < procs[j].Pid
	})
	for i, p := range procs {
		p.SortIndex = int32(i + 1)
	}
	return procs
}

// NewTrack creates a track under the process pid with mk, declaring the
// process first if it is not yet. It creates nothing unless the track
// limit leaves room for the process, if it is new, and need tracks (the
// track, and for a device group the lane it is created for), so that no
// track is spent on one that cannot be drawn.
func (tr *TrackSet) NewTrack(pid int32, need int, mk func(proc perfetto.Track) perfetto.Track) (perfetto.Track, bool) {
	proc, declared := tr.Procs[pid]
	if !declared {
		need++
	}
	if tr.w.TracksLeft() < need {
		return perfetto.Track{}, false
	}
	if !declared {
		p := tr.Scan.Proc(pid)
		proc = tr.w.Process(perfetto.ProcessSpec{Pid: pid, Name: p.Label(), SortIndex: p.SortIndex})
		if proc.IsZero() {
			return perfetto.Track{}, false
		}
		tr.Procs[pid] = proc
	}
	t := mk(proc)
	return t, !t.IsZero()
}

// Thread is the real-tid lane of a thread (the zero Track past the
// track limit).
func (tr *TrackSet) Thread(pid int32, tid int64) perfetto.Track {
	k := LaneKey{Pid: pid, Tid: tid, Slot: -1}
	if t, ok := tr.Lanes[k]; ok {
		return t
	}
	t, ok := tr.NewTrack(pid, 1, func(perfetto.Track) perfetto.Track {
		info := tr.Scan.Thread(pid, tid)
		name := info.ThreadName(tr.Scan.RecordPids[pid])
		if info.Split && len(info.Producers) > 0 {
			// A split thread's runs are on slot lanes: what lands on its
			// own track is what it emitted outside them.
			name = "ext " + firstpass.JoinSorted(info.Producers, "/")
		}
		return tr.w.Thread(perfetto.ThreadSpec{Pid: pid, Tid: tid, Name: name})
	})
	if ok {
		tr.Lanes[k] = t
	}
	return t
}

// MayHave reports whether thread (pid, tid) has its real-tid lane, or the
// track limit leaves room for it, without creating it.
func (tr *TrackSet) MayHave(pid int32, tid int64) bool {
	if _, ok := tr.Lanes[LaneKey{Pid: pid, Tid: tid, Slot: -1}]; ok {
		return true
	}
	need := 1
	if _, ok := tr.Procs[pid]; !ok {
		need++
	}
	return tr.w.TracksLeft() >= need
}

// LaneKey names a lane: a thread's real-tid lane (slot -1) or one of its
// pipeline-slot lanes.
type LaneKey struct {
	Pid  int32
	Tid  int64
	Slot int64
}

// Lane is the lane of a run on thread (pid, tid) holding pipeline slot
// slot, when the thread is split; else its real-tid lane.
func (tr *TrackSet) Lane(pid int32, tid int64, slot int64, hasSlot bool) (perfetto.Track, bool) {
	t := tr.Scan.Threads[firstpass.ThreadKey{Pid: pid, Tid: tid}] // a thread the survey does not know is not split
	if t == nil || !t.Split || !hasSlot || slot < 0 {
		return tr.Thread(pid, tid), false
	}
	k := LaneKey{Pid: pid, Tid: tid, Slot: slot}
	if t, ok := tr.Lanes[k]; ok {
		return t, true
	}
	// A lane is a child of its thread's track, so that the trace
	// processor gives its slices the thread (thread_slice, and every query
	// through thread_track); past the track limit, of the process's.
	var thread perfetto.Track
	if _, has := tr.Lanes[LaneKey{Pid: pid, Tid: tid, Slot: -1}]; has || tr.w.TracksLeft() >= 3 {
		thread = tr.Thread(pid, tid) // room for it, the lane and the process
	}
	lane, ok := tr.NewTrack(pid, 1, func(proc perfetto.Track) perfetto.Track {
		parent := proc
		if !thread.IsZero() {
			parent = thread
		}
		return tr.w.Track(parent, perfetto.TrackSpec{
			Name:        "pipeline slot " + strconv.FormatInt(slot, 10), // a thread's track: the UI adds its tid
			Key:         "lane " + strconv.FormatInt(tid, 10) + "/" + strconv.FormatInt(slot, 10),
			Description: "runs of thread " + strconv.FormatInt(tid, 10) + " that held pipeline slot " + strconv.FormatInt(slot, 10) + "; the thread drove several runs at once",
			Merge:       perfetto.MergeNone,
		})
	})
	if ok {
		tr.Lanes[k] = lane
	}
	return lane, true
}

// DeviceGroup is the track grouping one device's lanes under its process
// (the zero Track past the track limit).
func (tr *TrackSet) DeviceGroup(pid int32, dev int32) perfetto.Track {
	k := DevLane{pid, dev, "\x00group"}
	if t, ok := tr.DevLanes[k]; ok {
		return t
	}
	name := "device " + strconv.FormatInt(int64(dev), 10)
	if dev == NoDevice {
		name = "device (unnamed)"
	}
	t, ok := tr.NewTrack(pid, 2, func(proc perfetto.Track) perfetto.Track {
		return tr.w.Track(proc, perfetto.TrackSpec{
			Name: name, Key: name, ChildOrder: perfetto.ChildOrderExplicit, Merge: perfetto.MergeNone,
			Description: "AICPU phases of " + name + " placed on the host timeline; each slice says how it was placed and its bound in ns",
		})
	})
	if ok {
		tr.DevLanes[k] = t
	}
	return t
}

// DevLane names a device track: a device's group or one of its lanes.
type DevLane struct {
	Pid  int32
	Dev  int32
	Lane string
}

// DeviceLane is the lane a device span is drawn on: the phases reduce
// draws on lanes of their own (orch and sched, concurrent) and each task
// slot on lanes of their own, device_wall and the sequential phases
// together on "phases".
func DeviceLane(name string) string {
	short := strings.TrimPrefix(strings.TrimPrefix(name, strace.SpanDeviceWall), ".")
	if strings.HasPrefix(short, "task_slot_") {
		return short
	}
	if p, ok := reduce.SubPhase(short); ok {
		if lane, _ := p.OwnLane(); lane != 0 {
			return short
		}
	}
	return "phases"
}

// Device is the track of a device lane (the zero Track past the
// track limit).
func (tr *TrackSet) Device(pid int32, dev int32, group perfetto.Track, lane string) perfetto.Track {
	k := DevLane{pid, dev, lane}
	for i := range tr.lastDev {
		if m := &tr.lastDev[i]; m.key == k && !m.track.IsZero() {
			return m.track
		}
	}
	if t, ok := tr.DevLanes[k]; ok {
		tr.rememberDevice(k, t)
		return t
	}
	if group.IsZero() {
		return perfetto.Track{}
	}
	t, ok := tr.NewTrack(pid, 1, func(perfetto.Track) perfetto.Track { return tr.newDevice(group, lane) })
	if ok {
		tr.DevLanes[k] = t
		tr.rememberDevice(k, t)
	}
	return t
}

func (tr *TrackSet) rememberDevice(k DevLane, t perfetto.Track) {
	tr.lastDev[tr.nextDev] = devLaneMemo{key: k, track: t}
	tr.nextDev = (tr.nextDev + 1) % DevMemo
}

func (tr *TrackSet) newDevice(group perfetto.Track, lane string) perfetto.Track {
	if p, ok := reduce.SubPhase(lane); ok {
		if n, about := p.OwnLane(); n != 0 { // after phases (rank 1)
			return tr.w.Track(group, perfetto.TrackSpec{Name: lane, Rank: 1 + int32(n), Merge: perfetto.MergeNone, Description: about})
		}
	}
	switch {
	case lane == "effective":
		return tr.w.Track(group, perfetto.TrackSpec{Name: "effective (derived)", Rank: 4, Merge: perfetto.MergeNone,
			Description: "orch ∪ sched: the merged window of the concurrent orchestrator and scheduler, derived here, never stamped by the device"})
	case strings.HasPrefix(lane, "task_slot_"):
		return tr.w.Track(group, perfetto.TrackSpec{Name: strings.ReplaceAll(lane, "_", " "), Rank: 10, Merge: perfetto.MergeNone, Description: "tagged task's dispatch → finish window"})
	}
	return tr.w.Track(group, perfetto.TrackSpec{Name: "phases", Rank: 1, Merge: perfetto.MergeNone, Description: "device_wall and its sequential phases"})
}

// NoDevice is the device id of a run whose device_wall names none.
const NoDevice = -1
