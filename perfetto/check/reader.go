package check

import (
	"encoding/binary"
	"fmt"
	"io"

	pb "github.com/phasetrace/phasetrace/proto"
)

// A Reader reads a trace as Read does, but hands over what it finds one
// record at a time instead of building a Trace, in memory that does not
// grow with the trace's length: it keeps each packet sequence's interned
// strings and clocks, the clock snapshots, the track descriptors, each
// track's open slices and the open flows.
//
// The trace processor sorts a trace's events by timestamp before it builds
// slices, and a trace need not be written in that order (phasetrace's
// writer orders each flush, and a later flush can hold a slice that
// encloses slices flushed before). So does a Reader: it reads every packet
// first, writing each track event, its interned data resolved, to memory
// and past WithMemoryLimit to a temporary file; then converts the
// timestamps to the trace clock (which needs every clock snapshot) and
// sorts the events, in sorted runs of at most that memory merged at the
// end; then replays them. Its temporary files, removed once read, by
// Close or at the end, peak at some 30 bytes an event, more with the
// arguments kept (WithArgs): about three times the size of a compressed
// trace of phasetrace's.
//
// Records come in the order Read builds the Trace in: the problems of the
// packets in file order, then those of the clocks and the track
// hierarchy, then, events in timestamp order, the slices, flows, counters
// and the problems found in replaying them, then the slices never ended
// and the flows never terminated.
type Reader struct {
	cfg    config
	frames *framer
	pkt    pb.TracePacket
	p      *parser
	out    outbox
	temp   tempFiles
	phase  phase
	events byteReader // phaseConvert: the events in file order
	enc    []byte
	sorter sorter
	sorted eventSource // phaseReplay: the events in timestamp order
	replay *replay
	err    error // returned by every Read once the records are out
}

type phase int

const (
	phasePackets phase = iota // reading packets
	phaseConvert              // converting timestamps, sorting
	phaseReplay               // building slices in timestamp order
	phaseDone
)

// Kind is what a Record holds.
type Kind uint8

// Kinds of records.
const (
	KindProblem Kind = iota + 1 // Record.Problem
	KindSlice                   // Record.Slice and Record.Index
	KindFlow                    // Record.Flow, Record.FromTrack and Record.ToTrack
	KindCounter                 // Record.Counter
)

func (k Kind) String() string {
	switch k {
	case KindProblem:
		return "problem"
	case KindSlice:
		return "slice"
	case KindFlow:
		return "flow"
	case KindCounter:
		return "counter"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Record is one thing a Reader found.
type Record struct {
	Kind    Kind
	Problem Problem
	// Slice is a slice once it has ended (or at the end of the trace, with
	// Dur -1, when it never ends), or an instant; Index is its index in
	// Read's Trace.Slices, where Slice.Parent points too. Slices come in
	// the order they end in, instants as they are placed: not in Index
	// order. Slice.Args holds the arguments WithArgs keeps.
	Slice Slice
	Index int
	// Flow is a flow between slices by Index, with the tracks of both.
	Flow               Flow
	FromTrack, ToTrack uint64
	Counter            Counter
}

// Option configures a Reader.
type Option func(*config)

type config struct {
	keepArgs func(*Track) bool
	tempDir  string
	limit    int
}

// DefaultMemoryLimit is how many bytes of events a Reader holds in memory
// for sorting before it writes them to a temporary file. The sort holds up
// to twice as much at once: the events read and the events being sorted,
// or, at the end, the runs' read buffers.
const DefaultMemoryLimit = 8 << 20

// WithArgs makes the Reader keep the arguments of slices and instants on
// the tracks keep accepts, or of every one when keep is nil. keep is
// called as each event is read, with its track as described so far (nil
// when no descriptor has come yet). Without it, Record.Slice.Args is
// empty, and the events take less room while they are sorted.
func WithArgs(keep func(tr *Track) bool) Option {
	if keep == nil {
		keep = func(*Track) bool { return true }
	}
	return func(c *config) { c.keepArgs = keep }
}

// WithTempDir makes the Reader write its temporary files in dir instead of
// os.TempDir().
func WithTempDir(dir string) Option { return func(c *config) { c.tempDir = dir } }

// WithMemoryLimit sets how many bytes of events the Reader holds in memory
// before it writes them to temporary files (DefaultMemoryLimit); 0 or less
// holds them all in memory, and never writes a file.
func WithMemoryLimit(n int) Option { return func(c *config) { c.limit = n } }

// NewReader returns a Reader of the trace in r.
func NewReader(r io.Reader, opts ...Option) *Reader {
	cfg := config{limit: DefaultMemoryLimit}
	for _, o := range opts {
		o(&cfg)
	}
	rd := &Reader{cfg: cfg, frames: newFramer(r)}
	rd.temp.dir = cfg.tempDir
	rd.p = newParser(&rd.out)
	rd.p.keepArgs = cfg.keepArgs
	rd.p.events = spool{limit: cfg.limit, temp: &rd.temp}
	rd.sorter = sorter{limit: cfg.limit, temp: &rd.temp}
	return rd
}

// Read returns the next record, or io.EOF after the last. An error that
// is not io.EOF is a *FormatError (the bytes are not a trace; it says
// where) or one wrapping ErrTemp; Read returns it again from then on.
// The records are the Reader's own: Slice.Args and the strings stay valid.
func (r *Reader) Read() (Record, error) {
	for {
		if rec, ok := r.out.pop(); ok {
			return rec, nil
		}
		if r.err != nil {
			return Record{}, r.err
		}
		if err := r.step(); err != nil {
			r.err = err
			r.Close()
		}
	}
}

// Trace returns what the packets describe: the trace clock, the wall
// clock, the tracks and the number of packets. It is complete once every
// packet is read, before the first record that is not a problem of a
// packet, and at io.EOF. Its Slices, Flows, Counters and Problems stay
// empty: they are the records.
func (r *Reader) Trace() *Trace { return &r.p.t }

// Close removes the Reader's temporary files. A Reader that has returned
// an error or io.EOF has removed them already.
func (r *Reader) Close() error {
	r.temp.removeAll()
	return nil
}

// step does one unit of work: one packet, one event converted or one
// event replayed, or the passage from a phase to the next.
func (r *Reader) step() error {
	switch r.phase {
	case phasePackets:
		err := r.frames.next(&r.pkt)
		for _, sk := range r.frames.skipped {
			r.p.problem("trace_unknown_field", r.p.n, "field %d of Trace at byte %d is not a packet", sk.num, sk.offset)
		}
		if err == io.EOF {
			return r.endPackets()
		}
		if err != nil {
			return err
		}
		r.p.packet(&r.pkt)
	case phaseConvert:
		ok, err := r.convertNext()
		if err != nil || ok {
			return err
		}
		return r.endConvert()
	case phaseReplay:
		ts, packet, enc, ok, err := r.sorted.next()
		if err != nil {
			return err
		}
		if !ok {
			r.replay.finish()
			r.phase = phaseDone
			return nil
		}
		return r.replay.event(ts, packet, enc)
	case phaseDone:
		return io.EOF
	}
	return nil
}

// endPackets completes what the packets describe, once all are read.
func (r *Reader) endPackets() error {
	p := r.p
	t := &p.t
	t.Packets = p.n
	t.PrimaryClock = p.primary
	trace := clockKey{id: p.primary}
	// The trace processor bridges BOOTTIME to the trace clock for every
	// protobuf file and logs an error when nothing relates them.
	if p.hasPrim && p.primary != clockBoottime {
		if _, ok := p.convert(clockKey{id: clockBoottime}, 0, trace); !ok {
			p.problem("clock_sync_unrelatable_clock_domains", -1, "nothing relates BOOTTIME to the trace clock %d", p.primary)
		}
	}
	for _, s := range p.snaps {
		w, ok := s.value(clockKey{id: clockRealtime})
		if !ok {
			continue
		}
		for _, c := range s.clocks {
			if c.key.id == clockRealtime {
				continue
			}
			if ts, ok := p.convert(c.key, c.ns, trace); ok {
				t.Wall = append(t.Wall, WallClock{TS: ts, Wall: w})
				break
			}
		}
	}
	events, err := p.events.reader()
	if err != nil {
		return err
	}
	r.events, r.phase = events, phaseConvert
	return nil
}

// convertNext converts the timestamp of the next event in file order to
// the trace clock and hands the event to the sorter; false after the
// last.
func (r *Reader) convertNext() (bool, error) {
	p := r.p
	idx, err := binary.ReadUvarint(r.events)
	if err == io.EOF {
		return false, nil
	}
	var k, n uint64
	var ts int64
	if err == nil {
		k, err = binary.ReadUvarint(r.events)
	}
	if err == nil {
		ts, err = binary.ReadVarint(r.events)
	}
	if err == nil {
		n, err = binary.ReadUvarint(r.events)
	}
	if err == nil && (k >= uint64(len(p.keys)) || n > maxPacket) {
		err = io.ErrUnexpectedEOF
	}
	if err == nil {
		if uint64(cap(r.enc)) < n {
			r.enc = make([]byte, n)
		}
		r.enc = r.enc[:n]
		_, err = io.ReadFull(r.events, r.enc)
	}
	if err != nil {
		return false, tempErr(err)
	}
	packet, key := int(idx), p.keys[k]
	trace := clockKey{id: p.primary}
	if key.id != 0 && p.hasPrim && key != trace {
		c, ok := p.convert(key, ts, trace)
		if !ok {
			p.problem("clock_sync_failure_no_path", packet, "no path from clock %d to the trace clock %d", key.id, p.primary)
			return true, nil
		}
		ts = c
	}
	if ts < 0 {
		p.problem("track_event_negative_timestamp", packet, "timestamp %d is before the trace clock's zero", ts)
	}
	return true, r.sorter.add(ts, packet, r.enc)
}

// endConvert starts the replay once every event is sorted.
func (r *Reader) endConvert() error {
	r.events = nil
	if r.p.events.f != nil {
		r.temp.remove(r.p.events.f) // before the runs are merged into more
	}
	r.p.events = spool{}
	sorted, err := r.sorter.events()
	if err != nil {
		return err
	}
	r.p.checkHierarchy()
	r.sorted = sorted
	r.replay = newReplay(r.p, &r.out)
	r.phase = phaseReplay
	return nil
}

// outbox holds the records found and not yet returned: those of one
// packet or one event, or the problems of the end of a phase.
type outbox struct {
	recs []Record
	head int
}

func (o *outbox) push(rec Record) { o.recs = append(o.recs, rec) }

func (o *outbox) problem(name string, packet int, format string, args ...any) {
	o.push(Record{Kind: KindProblem, Problem: Problem{Name: name, Packet: packet, Detail: fmt.Sprintf(format, args...)}})
}

func (o *outbox) pop() (Record, bool) {
	if o.head == len(o.recs) {
		if o.head > 0 {
			clear(o.recs)
			o.recs, o.head = o.recs[:0], 0
		}
		return Record{}, false
	}
	rec := o.recs[o.head]
	o.head++
	return rec, true
}
