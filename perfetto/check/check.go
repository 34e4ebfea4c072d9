package check

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
)

// Trace is what the trace processor would build from a trace file.
type Trace struct {
	// PrimaryClock is the trace's clock (a BuiltinClock id); 0 when no
	// ClockSnapshot named one.
	PrimaryClock uint32
	// Wall lists the REALTIME snapshots, as (trace time, wall time) pairs.
	Wall []WallClock
	// Tracks in the order their descriptors appear.
	Tracks []Track
	// Slices (and instants) sorted by start, ties in file order — the order
	// the trace processor inserts them.
	Slices   []Slice
	Flows    []Flow
	Counters []Counter
	// Problems the trace processor would count or log, in the order found.
	Problems []Problem
	// Packets is the number of TracePackets read (compressed bundles count
	// their contents).
	Packets int
}

// WallClock relates the trace clock to CLOCK_REALTIME.
type WallClock struct{ TS, Wall int64 }

// Track is a TrackDescriptor.
type Track struct {
	UUID, Parent uint64
	Kind         string // "process", "thread", "counter" or "track"
	Name         string // track name, process name or thread name
	Description  string
	Pid          int32
	Tid          int64
	Labels       []string
	SortIndex    int32
	ChildOrder   int32
	Rank         int32
	Merge        int32
	MergeKey     string
	Unit         int32
	UnitName     string

	// YAxisShareKey is a counter track's y_axis_share_key.
	YAxisShareKey string
}

// Slice is a slice or an instant on a track.
type Slice struct {
	Track    uint64
	Name     string
	Category string
	TS       int64
	Dur      int64 // -1 when the slice never ended
	Depth    int
	Parent   int // index in Trace.Slices, -1 at the top of its track
	Instant  bool
	Args     []Arg
}

// Arg is a debug annotation. Value is an int64, uint64, bool, float64,
// string, []Arg (a dictionary) or []any (an array).
type Arg struct {
	Name  string
	Value any
}

// Flow is an arrow between two slices (indices in Trace.Slices).
type Flow struct {
	ID       uint64
	From, To int
}

// Counter is one counter value.
type Counter struct {
	Track uint64
	TS    int64
	Value float64 // integer values converted; Int holds them exactly
	Int   int64
	Float bool // the value was written as a double
}

// Problem is something the trace processor would count in its stats or
// import logs. Name is the trace processor's stat name where it has one.
type Problem struct {
	Name   string
	Packet int // index of the packet (0-based), -1 when not tied to one
	Detail string
}

func (p Problem) String() string {
	if p.Packet < 0 {
		return p.Name + ": " + p.Detail
	}
	return fmt.Sprintf("%s: %s (packet %d)", p.Name, p.Detail, p.Packet)
}

// ErrProblems is wrapped by Trace.Err when the trace has problems.
var ErrProblems = errors.New("trace has problems")

// Err returns nil when the trace has no problems, or an error listing them.
func (t *Trace) Err() error {
	if len(t.Problems) == 0 {
		return nil
	}
	var b bytes.Buffer
	for i, p := range t.Problems {
		if i == 10 {
			fmt.Fprintf(&b, "\n\t...")
			break
		}
		fmt.Fprintf(&b, "\n\t%s", p)
	}
	return fmt.Errorf("%w: %d%s", ErrProblems, len(t.Problems), b.String())
}

// Track returns the track with the given uuid.
func (t *Trace) Track(uuid uint64) (Track, bool) {
	for _, tr := range t.Tracks {
		if tr.UUID == uuid {
			return tr, true
		}
	}
	return Track{}, false
}

// FormatError is a trace whose framing cannot be read.
type FormatError struct {
	Offset int64 // byte offset in the file
	Err    error
}

func (e *FormatError) Error() string {
	return "check: byte " + strconv.FormatInt(e.Offset, 10) + ": " + e.Err.Error()
}

func (e *FormatError) Unwrap() error { return e.Err }

// ErrFormat is wrapped by FormatError.
var ErrFormat = errors.New("malformed trace")

// maxPacket bounds a packet's size (the trace processor's own limit is far
// smaller in practice).
const maxPacket = 256 << 20

// Read reads a trace and rebuilds it as the trace processor would: it
// resolves interned data per sequence (honouring incremental-state clears),
// converts timestamps through the clock snapshots (incremental and
// sequence-scoped clocks included) to the trace clock, sorts events by
// timestamp keeping file order for ties, replays each track's slices as a
// stack, connects flows and collects counters. What the trace processor
// would complain about is reported in Trace.Problems; Read returns an error
// only when the bytes are not a trace.
//
// Read holds the whole trace in memory, every argument included; a Reader
// reads it in memory that does not grow with the trace.
func Read(r io.Reader) (*Trace, error) {
	rd := NewReader(r, WithArgs(nil), WithMemoryLimit(0))
	defer rd.Close()
	var t Trace
	for {
		rec, err := rd.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		switch rec.Kind {
		case KindProblem:
			t.Problems = append(t.Problems, rec.Problem)
		case KindSlice:
			if rec.Index >= len(t.Slices) {
				t.Slices = slices.Grow(t.Slices, rec.Index+1-len(t.Slices))[:rec.Index+1]
			}
			t.Slices[rec.Index] = rec.Slice
		case KindFlow:
			t.Flows = append(t.Flows, rec.Flow)
		case KindCounter:
			t.Counters = append(t.Counters, rec.Counter)
		}
	}
	read := rd.Trace()
	t.PrimaryClock, t.Wall, t.Tracks, t.Packets = read.PrimaryClock, read.Wall, read.Tracks, read.Packets
	return &t, nil
}

// ReadBytes is Read on a byte slice.
func ReadBytes(b []byte) (*Trace, error) { return Read(bytes.NewReader(b)) }
