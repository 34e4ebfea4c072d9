package analysis

import (
	"fmt"
	"io"
	"math"

	"github.com/phasetrace/phasetrace/strace"
)

// PassReader reads the passes of a host_phase_records.jsonl in file order,
// ending with io.EOF; *strace.PhaseRecordsReader is one.
type PassReader interface {
	Read() (strace.PhasePass, error)
}

// WithPhaseRecordsFrom streams the passes of host_phase_records.jsonl files
// (one reader each) to a [Binds], which matches them to its binds as they
// close without holding the files: see [PassHorizon]. [AnalyzeBinds],
// which holds its log whole, reads them whole.
func WithPhaseRecordsFrom(rds ...PassReader) BindOption {
	return func(c *bindConfig) { c.passReaders = append(c.passReaders, rds...) }
}

// PassHorizon is how far, in the host time of its segments, a streamed
// pass ([WithPhaseRecordsFrom]) is held from the bind closing: a [Binds]
// reads each file ahead until its passes start PassHorizon after the start
// of the bind it closes, and lets go of a pass that starts PassHorizon
// before it. The runtime writes a pass as its bind ends, so a pass and its
// bind lie within milliseconds of each other; a pass let go unmatched is
// counted with those that match no bind.
const PassHorizon = 10_000_000_000

// MaxHeldSegments bounds the bind segments of the streamed passes a
// [Binds] holds at once (24 bytes each): once it holds that many, it reads
// no further ahead until binds closing let go of older passes. Only a file
// far denser than the runtime writes (a million segments within the
// horizon) reaches it; its passes then match their binds only once they
// are read, and those whose binds closed before are counted unmatched.
const MaxHeldSegments = 1 << 20

// heldPass is what the bind statistics read of a pass.
type heldPass struct {
	seq   int64 // read order
	key   bindKey
	pos   strace.Pos
	start int64 // its earliest segment's start, for the horizon
	segs  []passSeg
	used  bool
}

// passSeg is a bind-segment entry of a pass.
type passSeg struct {
	phase      int // an id of the binds' segment names
	start, end uint64
}

// passSource is one file's passes as they are read.
type passSource struct {
	rd       PassReader
	frontier int64 // the start of the pass read last
	done     bool
}

// passWindow holds the passes the binds may still claim: all of them when
// they were given as a slice, else those of each source within the
// horizon of the bind closing.
type passWindow struct {
	srcs   []passSource
	err    error // the first error of a source other than io.EOF
	seq    int64
	held   []*heldPass // read order; nil where let go
	head   int
	byKey  map[bindKey][]*heldPass
	segs   int // segments held
	stream bool

	unmatched int
	first     string // the first pass let go unmatched
}

func newPassWindow(cfg *bindConfig, names *segNames) *passWindow {
	w := &passWindow{byKey: make(map[bindKey][]*heldPass), stream: len(cfg.passReaders) > 0}
	for i := range cfg.passes {
		w.hold(&cfg.passes[i], names)
	}
	for _, rd := range cfg.passReaders {
		w.srcs = append(w.srcs, passSource{rd: rd, frontier: math.MinInt64})
	}
	return w
}

// hold keeps what the statistics read of p.
func (w *passWindow) hold(p *strace.PhasePass, names *segNames) *heldPass {
	h := &heldPass{seq: w.seq, key: bindKey{p.Pid, p.Inv}, pos: p.Pos, start: math.MaxInt64}
	w.seq++
	for _, r := range p.Records {
		if !strace.IsBindSegment(r.Phase) {
			continue // an orchestrator operation, not a segment
		}
		h.segs = append(h.segs, passSeg{phase: names.id(r.Phase), start: r.StartNS, end: r.EndNS})
		if r.StartNS <= math.MaxInt64 {
			h.start = min(h.start, int64(r.StartNS))
		}
	}
	w.held = append(w.held, h)
	w.byKey[h.key] = append(w.byKey[h.key], h)
	w.segs += len(h.segs)
	return h
}

// fill reads each source until its passes start past until, or until it
// holds MaxHeldSegments.
func (w *passWindow) fill(until int64, names *segNames) {
	for i := range w.srcs {
		s := &w.srcs[i]
		for !s.done && s.frontier <= until && w.segs < MaxHeldSegments {
			p, err := s.rd.Read()
			if err != nil {
				if err != io.EOF && w.err == nil {
					w.err = err
				}
				s.done = true
				break
			}
			h := w.hold(&p, names)
			if h.start == math.MaxInt64 {
				h.start = s.frontier // no segment: it goes with its neighbours
			}
			s.frontier = h.start
		}
	}
}

// take returns the passes of k, which are then used.
func (w *passWindow) take(k bindKey) []*heldPass {
	ps := w.byKey[k]
	for _, p := range ps {
		p.used = true
	}
	return ps
}

// expire lets go of the passes read before those that start at or after
// before (all of them when before is MaxInt64).
func (w *passWindow) expire(before int64) {
	for w.head < len(w.held) {
		if h := w.held[w.head]; h != nil && !h.used && h.start >= before {
			break
		}
		w.dropOldest()
	}
	if w.head > 1024 && w.head > len(w.held)/2 {
		w.held = append(w.held[:0], w.held[w.head:]...)
		w.head = 0
	}
}

// dropOldest drops the pass read longest ago, counting it when no bind used it.
func (w *passWindow) dropOldest() {
	h := w.held[w.head]
	w.held[w.head] = nil
	w.head++
	if h == nil {
		return
	}
	w.segs -= len(h.segs)
	if ps := w.byKey[h.key]; len(ps) > 0 && ps[0] == h {
		if len(ps) == 1 {
			delete(w.byKey, h.key)
		} else {
			w.byKey[h.key] = ps[1:]
		}
	}
	if !h.used {
		w.unmatch(h.key, h.pos)
	}
}

func (w *passWindow) unmatch(k bindKey, pos strace.Pos) {
	if w.unmatched == 0 {
		w.first = fmt.Sprintf("pid=%d inv=%d at %v", k.pid, k.inv, pos)
	}
	w.unmatched++
}

// drain reads the sources to their end and lets go of every pass: no bind
// is left to claim them.
func (w *passWindow) drain() {
	w.expire(math.MaxInt64)
	for i := range w.srcs {
		s := &w.srcs[i]
		for !s.done {
			p, err := s.rd.Read()
			if err != nil {
				if err != io.EOF && w.err == nil {
					w.err = err
				}
				s.done = true
				break
			}
			w.unmatch(bindKey{p.Pid, p.Inv}, p.Pos)
		}
	}
	w.held, w.byKey = nil, nil
}
