package check

import (
	"bufio"
	"bytes"
	"cmp"
	"container/heap"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
)

// ErrTemp is wrapped by the errors of the temporary files a Reader sorts
// events in.
var ErrTemp = errors.New("check: temporary file")

// tempFiles creates the temporary files of one Reader and removes them.
// Where the system allows it (not on Windows), a file's name is removed as
// soon as it is created: the file lives on, unnamed, until it is closed, so
// that nothing is left behind even when the process is killed.
type tempFiles struct {
	dir   string
	files []*os.File
	named []bool // whether files[i] still has its name
}

func (t *tempFiles) create() (*os.File, error) {
	f, err := os.CreateTemp(t.dir, "check-events-*")
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrTemp, err)
	}
	t.files = append(t.files, f)
	t.named = append(t.named, os.Remove(f.Name()) != nil)
	return f, nil
}

// remove closes and removes f.
func (t *tempFiles) remove(f *os.File) {
	i := slices.Index(t.files, f)
	if i < 0 {
		return
	}
	f.Close()
	if t.named[i] {
		os.Remove(f.Name())
	}
	t.files = slices.Delete(t.files, i, i+1)
	t.named = slices.Delete(t.named, i, i+1)
}

// removeAll closes and removes every file.
func (t *tempFiles) removeAll() {
	for len(t.files) > 0 {
		t.remove(t.files[0])
	}
}

func tempErr(err error) error {
	if err == nil || errors.Is(err, ErrTemp) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrTemp, err)
}

// spool is an append-only stream of bytes, read back once from its start:
// in memory up to limit bytes (any length when limit ≤ 0), in a temporary
// file past it.
type spool struct {
	limit int
	temp  *tempFiles
	mem   []byte
	f     *os.File
	w     *bufio.Writer
	err   error
}

const ioBuffer = 256 << 10

func (s *spool) write(parts ...[]byte) {
	if s.err != nil {
		return
	}
	if s.w == nil {
		for _, p := range parts {
			s.mem = append(s.mem, p...)
		}
		if s.limit <= 0 || len(s.mem) <= s.limit {
			return
		}
		if s.f, s.err = s.temp.create(); s.err != nil {
			return
		}
		s.w = bufio.NewWriterSize(s.f, ioBuffer)
		_, s.err = s.w.Write(s.mem)
		s.mem = nil
		return
	}
	for _, p := range parts {
		if _, err := s.w.Write(p); err != nil {
			s.err = tempErr(err)
			return
		}
	}
}

// reader returns the bytes written, from the start.
func (s *spool) reader() (byteReader, error) {
	if s.err != nil {
		return nil, tempErr(s.err)
	}
	if s.w == nil {
		return bytes.NewReader(s.mem), nil
	}
	if err := s.w.Flush(); err != nil {
		return nil, tempErr(err)
	}
	if _, err := s.f.Seek(0, io.SeekStart); err != nil {
		return nil, tempErr(err)
	}
	return bufio.NewReaderSize(s.f, ioBuffer), nil
}

// sorter sorts events by timestamp, file order breaking ties: in memory up
// to limit bytes (events and their index; any number when limit ≤ 0), then
// in sorted runs written to a temporary file, merged at the end.
type sorter struct {
	limit int
	temp  *tempFiles
	arena []byte      // the events' encodings
	index []sortEntry // into arena
	runs  []run       // spilled, in file
	file  *os.File    // of the runs
	w     *bufio.Writer
	off   int64 // bytes written to file
	head  [3 * binary.MaxVarintLen64]byte
}

// sortEntry is an event waiting in memory.
type sortEntry struct {
	ts       int64
	packet   int
	off, end int // its encoding in the arena
}

// sortEntrySize is what an entry costs beside its encoding.
const sortEntrySize = 32

// run is a sorted run of events in the runs file: each a timestamp (as the
// difference from the previous one, modulo 2^64), the packet index and the
// encoding, length first.
type run struct{ off, n int64 }

// maxFanIn bounds the runs merged at once. Each holds a read buffer of
// the limit's share (runBuffer), so that a merge holds no more than the
// limit.
const maxFanIn = 128

// runBuffer is the read buffer of a run merged under limit.
func runBuffer(limit int) int {
	if limit <= 0 {
		return 64 << 10
	}
	return min(max(limit/maxFanIn, 4<<10), 64<<10)
}

func compareEntries(a, b sortEntry) int {
	if c := cmp.Compare(a.ts, b.ts); c != 0 {
		return c
	}
	return cmp.Compare(a.packet, b.packet)
}

func (s *sorter) add(ts int64, packet int, enc []byte) error {
	off := len(s.arena)
	s.arena = append(s.arena, enc...)
	s.index = append(s.index, sortEntry{ts: ts, packet: packet, off: off, end: len(s.arena)})
	if s.limit > 0 && len(s.arena)+sortEntrySize*len(s.index) > s.limit {
		return s.spill()
	}
	return nil
}

// spill writes the events in memory as a sorted run.
func (s *sorter) spill() error {
	if s.file == nil {
		f, err := s.temp.create()
		if err != nil {
			return err
		}
		s.file, s.w = f, bufio.NewWriterSize(f, ioBuffer)
	}
	slices.SortFunc(s.index, compareEntries)
	start := s.off
	var prev int64
	for _, e := range s.index {
		n, err := writeRunEvent(s.w, s.head[:0], &prev, e.ts, e.packet, s.arena[e.off:e.end])
		if err != nil {
			return err
		}
		s.off += n
	}
	s.runs = append(s.runs, run{off: start, n: s.off - start})
	s.arena, s.index = s.arena[:0], s.index[:0]
	return nil
}

// events returns the events sorted, the sorter's memory handed over.
func (s *sorter) events() (eventSource, error) {
	if len(s.runs) == 0 {
		slices.SortFunc(s.index, compareEntries)
		return &memorySource{s: s}, nil
	}
	if len(s.index) > 0 {
		if err := s.spill(); err != nil {
			return nil, err
		}
	}
	s.arena, s.index = nil, nil
	if err := s.w.Flush(); err != nil {
		return nil, tempErr(err)
	}
	// Merge groups of runs into longer runs until few enough are left.
	for len(s.runs) > maxFanIn {
		f, err := s.temp.create()
		if err != nil {
			return nil, err
		}
		w := bufio.NewWriterSize(f, ioBuffer)
		var runs []run
		var off int64
		for i := 0; i < len(s.runs); i += maxFanIn {
			m := newMerger(s.file, s.runs[i:min(i+maxFanIn, len(s.runs))], runBuffer(s.limit))
			n, err := m.writeRun(w)
			if err != nil {
				return nil, err
			}
			runs = append(runs, run{off: off, n: n})
			off += n
		}
		if err := w.Flush(); err != nil {
			return nil, tempErr(err)
		}
		s.temp.remove(s.file)
		s.file, s.runs = f, runs
	}
	return newMerger(s.file, s.runs, runBuffer(s.limit)), nil
}

// eventSource hands over sorted events: next returns the next one's
// timestamp, packet and encoding (valid until the following call), and
// false after the last.
type eventSource interface {
	next() (ts int64, packet int, enc []byte, ok bool, err error)
}

// memorySource is a sorter that never spilled.
type memorySource struct {
	s *sorter
	i int
}

func (m *memorySource) next() (int64, int, []byte, bool, error) {
	if m.i >= len(m.s.index) {
		return 0, 0, nil, false, nil
	}
	e := m.s.index[m.i]
	m.i++
	return e.ts, e.packet, m.s.arena[e.off:e.end], true, nil
}

// runReader reads one run.
type runReader struct {
	r      *bufio.Reader
	ts     int64
	packet int
	enc    []byte
}

// read reads the run's next event; false at its end.
func (rr *runReader) read() (bool, error) {
	d, err := binary.ReadUvarint(rr.r)
	if err == io.EOF {
		return false, nil
	}
	if err != nil {
		return false, tempErr(err)
	}
	packet, err := binary.ReadUvarint(rr.r)
	if err != nil {
		return false, tempErr(err)
	}
	n, err := binary.ReadUvarint(rr.r)
	if err != nil {
		return false, tempErr(err)
	}
	if n > maxPacket {
		return false, fmt.Errorf("%w: an event of %d bytes", ErrTemp, n)
	}
	rr.ts = int64(uint64(rr.ts) + d)
	rr.packet = int(packet)
	if uint64(cap(rr.enc)) < n {
		rr.enc = make([]byte, n)
	}
	rr.enc = rr.enc[:n]
	if _, err := io.ReadFull(rr.r, rr.enc); err != nil {
		return false, tempErr(err)
	}
	return true, nil
}

// merger merges sorted runs: a heap of their readers, each at its next
// event.
type merger struct {
	f       *os.File
	buffer  int // each run's read buffer
	pending []run
	heap    runHeap
	started bool
	last    *runReader // handed over at the previous call; read on at the next
}

func newMerger(f *os.File, runs []run, buffer int) *merger {
	return &merger{f: f, pending: runs, buffer: buffer}
}

func (m *merger) start() error {
	m.started = true
	for _, r := range m.pending {
		rr := &runReader{r: bufio.NewReaderSize(io.NewSectionReader(m.f, r.off, r.n), m.buffer)}
		ok, err := rr.read()
		if err != nil {
			return err
		}
		if ok {
			m.heap = append(m.heap, rr)
		}
	}
	m.pending = nil
	heap.Init(&m.heap)
	return nil
}

func (m *merger) next() (int64, int, []byte, bool, error) {
	if !m.started {
		if err := m.start(); err != nil {
			return 0, 0, nil, false, err
		}
	}
	if m.last != nil {
		ok, err := m.last.read()
		if err != nil {
			return 0, 0, nil, false, err
		}
		if ok {
			heap.Fix(&m.heap, 0)
		} else {
			heap.Pop(&m.heap)
		}
		m.last = nil
	}
	if len(m.heap) == 0 {
		return 0, 0, nil, false, nil
	}
	rr := m.heap[0]
	m.last = rr
	return rr.ts, rr.packet, rr.enc, true, nil
}

// writeRun writes the merged events to w as one run and returns its size.
func (m *merger) writeRun(w *bufio.Writer) (int64, error) {
	var n int64
	var prev int64
	var head [3 * binary.MaxVarintLen64]byte
	for {
		ts, packet, enc, ok, err := m.next()
		if err != nil {
			return 0, err
		}
		if !ok {
			return n, nil
		}
		k, err := writeRunEvent(w, head[:0], &prev, ts, packet, enc)
		if err != nil {
			return 0, err
		}
		n += k
	}
}

// writeRunEvent writes one event of a run as runReader.read reads it: its
// timestamp less the previous one's (*prev, then set to ts), its packet
// and its length as varints, then its bytes. It returns the bytes
// written; head is room for the varints.
func writeRunEvent(w *bufio.Writer, head []byte, prev *int64, ts int64, packet int, enc []byte) (int64, error) {
	h := binary.AppendUvarint(head, uint64(ts)-uint64(*prev))
	h = binary.AppendUvarint(h, uint64(packet))
	h = binary.AppendUvarint(h, uint64(len(enc)))
	*prev = ts
	if _, err := w.Write(h); err != nil {
		return 0, tempErr(err)
	}
	if _, err := w.Write(enc); err != nil {
		return 0, tempErr(err)
	}
	return int64(len(h) + len(enc)), nil
}

// runHeap orders run readers by their next event.
type runHeap []*runReader

func (h runHeap) Len() int { return len(h) }
func (h runHeap) Less(i, j int) bool {
	if h[i].ts != h[j].ts {
		return h[i].ts < h[j].ts
	}
	return h[i].packet < h[j].packet
}
func (h runHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *runHeap) Push(x any)   { *h = append(*h, x.(*runReader)) }
func (h *runHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
