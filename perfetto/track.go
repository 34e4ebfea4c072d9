package perfetto

import "encoding/binary"

// Track is a timeline in the trace: a process, a thread, a custom track or a
// counter track. The zero Track is "no track" (a custom track with no parent
// sits at the top level).
type Track struct {
	uuid uint64
	st   *trackState // the writer's state of the track, to skip a lookup
}

// UUID is the track's uuid in the trace. It is derived from the track's
// identity (its kind, pid, tid, parent and name or key), so the same input
// always gives the same uuid.
func (t Track) UUID() uint64 { return t.uuid }

// IsZero reports whether t is the zero Track.
func (t Track) IsZero() bool { return t.uuid == 0 }

// ChildOrder says how the UI orders a track's children.
type ChildOrder int32

// Child orderings (TrackDescriptor.ChildTracksOrdering).
const (
	ChildOrderDefault       ChildOrder = 0 // the UI's choice
	ChildOrderLexicographic ChildOrder = 1 // by name
	ChildOrderChronological ChildOrder = 2 // by first event
	ChildOrderExplicit      ChildOrder = 3 // by each child's Rank
)

// Merge says whether the UI may merge a track with its siblings.
type Merge int32

// Sibling merge behaviours (TrackDescriptor.SiblingMergeBehavior).
const (
	MergeDefault Merge = 0 // the UI's choice (it merges same-named siblings)
	MergeByName  Merge = 1 // merge siblings of the same name
	MergeNone    Merge = 2 // never merge: lanes that must stay apart
	MergeByKey   Merge = 3 // merge siblings with the same Key
)

// Unit is the unit of a counter track.
type Unit int32

// Counter units (CounterDescriptor.Unit).
const (
	UnitUnspecified Unit = 0
	UnitTimeNs      Unit = 1
	UnitCount       Unit = 2
	UnitSizeBytes   Unit = 3
)

// ProcessSpec describes a process track.
type ProcessSpec struct {
	Pid        int32
	Name       string
	Labels     []string   // shown beside the name
	SortIndex  int32      // UI ordering among processes, lower first (0: unset)
	ChildOrder ChildOrder // ordering of the process's child tracks
}

// ThreadSpec describes a thread track; it belongs to the process with the
// same pid.
type ThreadSpec struct {
	Pid       int32
	Tid       int64
	Name      string
	SortIndex int32 // UI ordering among the process's threads, lower first (0: unset)
}

// TrackSpec describes a custom track under a parent track.
type TrackSpec struct {
	Name        string
	Description string     // shown in the track's details
	Key         string     // identity among siblings when names repeat; merge key for MergeByKey
	Rank        int32      // position among siblings when the parent orders explicitly
	ChildOrder  ChildOrder // ordering of this track's children
	Merge       Merge
}

// CounterSpec describes a counter track under a parent track.
type CounterSpec struct {
	Name        string
	Description string
	Key         string // identity among siblings when names repeat
	Rank        int32
	Unit        Unit
	UnitName    string // free-form unit, used when Unit is UnitUnspecified
	// YAxisShareKey names a y-axis counter tracks share: the UI draws
	// counter tracks with the same key and the same parent track on one
	// range, so that their values compare at a glance (empty: a range of
	// its own). The UI takes the parent from the trace processor's track
	// table, where a counter track under a process has none: counter
	// tracks of one key under different processes share one range too.
	YAxisShareKey string
}

// Kinds of track, which are part of a track's identity.
const (
	trackProcess = 'p'
	trackThread  = 't'
	trackCustom  = 'c'
	trackCounter = 'n'
	trackLane    = 'o' // an overflow lane of a track
)

// trackState is what the writer keeps per track: constant in the number of
// events, apart from the slices waiting for the next Flush, and small, since
// a trace may have a hundred thousand threads with a slice or two each.
type trackState struct {
	w      *Writer
	uuid   uint64
	parent uint64 // the parent's uuid (a thread's: its process's)
	name   string // the name given, if any
	tid    int64  // threads
	pid    int32  // processes and threads
	kind   byte
	stream bool  // the track has had Begin/End events
	wrote  bool  // complete slices have been flushed on the track
	dirty  bool  // listed in Writer.waiting.dirty
	open   int32 // slices begun with Begin and not yet ended
	seq    *sequence

	mem     laneMemory     // what the track remembers of earlier flushes
	lanes   []overflowLane // overflow lanes, lane i+1 at lanes[i]
	pending []pendingSlice
}

// label names the track in errors: "process 12", "thread 12/34" or the
// track's name.
func (t *trackState) label() string {
	switch t.kind {
	case trackProcess:
		return processLabel(t.pid)
	case trackThread:
		return threadLabel(t.pid, t.tid)
	}
	return t.name
}

// trackUUID derives a track's uuid from its identity: FNV-1a over the kind
// and the identifying fields. Zero is reserved for "no track".
func trackUUID(kind byte, parent uint64, a, b int64, name, key string) uint64 {
	var buf [25]byte
	buf[0] = kind
	binary.LittleEndian.PutUint64(buf[1:], parent)
	binary.LittleEndian.PutUint64(buf[9:], uint64(a))
	binary.LittleEndian.PutUint64(buf[17:], uint64(b))
	h := fnvBytes(fnvOffset, buf[:])
	h = fnvString(h, name)
	h = fnvBytes(h, []byte{0})
	h = fnvString(h, key)
	if h == 0 {
		h = 1
	}
	return h
}

// FNV-1a, 64 bits.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func fnvBytes(h uint64, b []byte) uint64 {
	for _, c := range b {
		h ^= uint64(c)
		h *= fnvPrime
	}
	return h
}

func fnvString(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= fnvPrime
	}
	return h
}

// newTrack registers track t and writes its descriptor, whose parent_uuid
// is parent (zero for processes and threads).
func (w *Writer) newTrack(t *trackState, parent uint64, descriptor func([]byte) []byte) Track {
	if parent != 0 {
		if _, ok := w.tracks[parent]; !ok {
			w.dataError(&EventError{Track: t.label(), Err: ErrUnknownTrack})
		}
	}
	t.w = w
	w.tracks[t.uuid] = t
	w.writeDescriptor(t.uuid, parent, descriptor)
	return Track{t.uuid, t}
}

// TracksLeft is how many more tracks the Writer may declare (WithMaxTracks),
// overflow lanes included.
func (w *Writer) TracksLeft() int { return max(0, w.cfg.maxTracks-w.stats.Tracks) }

// refuseTrack counts a track refused past the limit; the first refusal is
// a data error.
func (w *Writer) refuseTrack(t *trackState) Track {
	w.stats.TracksRefused++
	if w.stats.TracksRefused == 1 {
		w.dataError(&EventError{Track: t.label(), Err: ErrTooManyTracks})
	}
	return Track{}
}

// writeDescriptor writes a TrackDescriptor on the global sequence.
func (w *Writer) writeDescriptor(uuid, parent uint64, descriptor func([]byte) []byte) {
	w.stats.Tracks++
	b, pm := w.globalPacketStart()
	var m message
	b, m = begin(b, fPacketTrackDescriptor)
	b = appendVarintField(b, fTrackUUID, uuid)
	if parent != 0 {
		b = appendVarintField(b, fTrackParent, parent)
	}
	b = descriptor(b)
	b = m.end(b)
	w.globalPacketEnd(b, pm)
}

// Process returns the process track for s.Pid, writing its descriptor the
// first time. Later calls with the same pid return the same track. Past the
// limit on tracks (WithMaxTracks), a new track is refused: Process, Thread,
// Track and CounterTrack then return the zero Track.
func (w *Writer) Process(s ProcessSpec) Track {
	uuid := processUUID(s.Pid)
	if st, ok := w.tracks[uuid]; ok {
		return Track{uuid, st}
	}
	t := &trackState{uuid: uuid, kind: trackProcess, pid: s.Pid, name: s.Name}
	if w.TracksLeft() == 0 {
		return w.refuseTrack(t)
	}
	return w.newTrack(t, 0, func(b []byte) []byte {
		if s.ChildOrder != ChildOrderDefault {
			b = appendVarintField(b, fTrackChildOrder, uint64(s.ChildOrder))
		}
		var m message
		b, m = begin(b, fTrackProcess)
		b = appendSignedField(b, fProcessPid, int64(s.Pid))
		if s.Name != "" {
			b = appendStringField(b, fProcessName, s.Name)
		}
		if s.SortIndex != 0 {
			b = appendSignedField(b, fProcessSortIndex, int64(s.SortIndex))
		}
		for _, l := range s.Labels {
			b = appendStringField(b, fProcessLabels, l)
		}
		return m.end(b)
	})
}

// Thread returns the thread track for (s.Pid, s.Tid), writing its descriptor
// the first time.
func (w *Writer) Thread(s ThreadSpec) Track {
	uuid := trackUUID(trackThread, 0, int64(s.Pid), s.Tid, "", "")
	if st, ok := w.tracks[uuid]; ok {
		return Track{uuid, st}
	}
	t := &trackState{uuid: uuid, parent: processUUID(s.Pid), kind: trackThread, pid: s.Pid, tid: s.Tid, name: s.Name}
	if w.TracksLeft() == 0 {
		return w.refuseTrack(t)
	}
	return w.newTrack(t, 0, func(b []byte) []byte {
		var m message
		b, m = begin(b, fTrackThread)
		b = appendSignedField(b, fThreadPid, int64(s.Pid))
		b = appendSignedField(b, fThreadTid, s.Tid)
		if s.Name != "" {
			b = appendStringField(b, fThreadName, s.Name)
		}
		if s.SortIndex != 0 {
			b = appendSignedField(b, fThreadSortIndex, int64(s.SortIndex))
		}
		return m.end(b)
	})
}

// Track returns the custom track named s.Name (told apart from same-named
// siblings by s.Key) under parent, writing its descriptor the first time.
// A zero parent puts the track at the top level.
func (w *Writer) Track(parent Track, s TrackSpec) Track {
	uuid := trackUUID(trackCustom, parent.uuid, 0, 0, s.Name, s.Key)
	if st, ok := w.tracks[uuid]; ok {
		return Track{uuid, st}
	}
	t := &trackState{uuid: uuid, parent: parent.uuid, kind: trackCustom, name: s.Name}
	if w.TracksLeft() == 0 {
		return w.refuseTrack(t)
	}
	return w.newTrack(t, parent.uuid, func(b []byte) []byte {
		b = appendStringField(b, fTrackName, s.Name)
		if s.Description != "" {
			b = appendStringField(b, fTrackDescription, s.Description)
		}
		if s.ChildOrder != ChildOrderDefault {
			b = appendVarintField(b, fTrackChildOrder, uint64(s.ChildOrder))
		}
		if s.Rank != 0 {
			b = appendSignedField(b, fTrackSiblingRank, int64(s.Rank))
		}
		if s.Merge != MergeDefault {
			b = appendVarintField(b, fTrackSiblingMerge, uint64(s.Merge))
			if s.Merge == MergeByKey {
				b = appendStringField(b, fTrackMergeKey, s.Key)
			}
		}
		return b
	})
}

// CounterTrack returns the counter track named s.Name under parent, writing
// its descriptor the first time.
func (w *Writer) CounterTrack(parent Track, s CounterSpec) Track {
	uuid := trackUUID(trackCounter, parent.uuid, 0, 0, s.Name, s.Key)
	if st, ok := w.tracks[uuid]; ok {
		return Track{uuid, st}
	}
	t := &trackState{uuid: uuid, parent: parent.uuid, kind: trackCounter, name: s.Name}
	if w.TracksLeft() == 0 {
		return w.refuseTrack(t)
	}
	return w.newTrack(t, parent.uuid, func(b []byte) []byte {
		b = appendStringField(b, fTrackName, s.Name)
		if s.Description != "" {
			b = appendStringField(b, fTrackDescription, s.Description)
		}
		if s.Rank != 0 {
			b = appendSignedField(b, fTrackSiblingRank, int64(s.Rank))
		}
		var m message
		b, m = begin(b, fTrackCounter)
		if s.Unit != UnitUnspecified {
			b = appendVarintField(b, fCounterUnit, uint64(s.Unit))
		}
		if s.UnitName != "" {
			b = appendStringField(b, fCounterUnitName, s.UnitName)
		}
		if s.YAxisShareKey != "" {
			b = appendStringField(b, fCounterYAxisShareKey, s.YAxisShareKey)
		}
		return m.end(b)
	})
}

func processUUID(pid int32) uint64 { return trackUUID(trackProcess, 0, int64(pid), 0, "", "") }

func processLabel(pid int32) string {
	return "process " + itoa(int64(pid))
}

func threadLabel(pid int32, tid int64) string {
	return "thread " + itoa(int64(pid)) + "/" + itoa(tid)
}
