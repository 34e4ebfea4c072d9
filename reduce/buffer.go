package reduce

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/phasetrace/phasetrace/strace"
)

// NumSlots is the number of task-timing slot records per thread.
const NumSlots = 16

// Layout sizes in bytes.
const (
	HeaderSize = 16
	RecordSize = 16
	// PhaseBytesPerThread is the size of one thread's phase records.
	PhaseBytesPerThread = NumPhases * RecordSize
	// SlotBytesPerThread is the size of one thread's task-timing records.
	SlotBytesPerThread = NumSlots * RecordSize
	// MaxThreads bounds the thread count a buffer may be decoded with.
	MaxThreads = 1 << 16
)

// Unset is the start (or dispatch) sentinel of a record nobody stamped. A
// record whose end (or finish) is 0 was never ended.
const Unset Cycles = 1<<64 - 1

var slotNames = func() (n [NumSlots]string) {
	for i := range n {
		n[i] = fmt.Sprintf("%s.task_slot_%d", strace.SpanDeviceWall, i)
	}
	return n
}()

// SlotName returns the name the runtime logs task-timing slot n under.
func SlotName(n int) string {
	if n >= 0 && n < NumSlots {
		return slotNames[n]
	}
	return fmt.Sprintf("%s.task_slot_%d", strace.SpanDeviceWall, n)
}

// Header is the buffer's 16-byte header.
type Header struct {
	// TailUsed is nonzero when the task-timing tail holds at least one
	// dispatched slot. Zero means the tail may be absent (a prefix-only
	// buffer) and, if present, is not read.
	TailUsed uint64
	Reserved uint64
}

// Record is one phase record (Start, End) or one task-timing record
// (Start = dispatch, End = finish), in raw cycles.
type Record struct {
	Start Cycles
	End   Cycles
}

// Complete reports whether the record counts in a reduction: it was stamped
// (Start != Unset) and ended after it started (End > Start).
func (r Record) Complete() bool { return r.Start != Unset && r.End > r.Start }

// Buffer is a decoded device-phase buffer. Its slices are its own (they do
// not alias the input bytes).
type Buffer struct {
	Header  Header
	Threads int
	// Phases holds Threads×NumPhases records, thread-major: thread t's
	// phase p is Phases[t*NumPhases+p].
	Phases []Record
	// Slots holds Threads×NumSlots task-timing records, thread-major, or is
	// nil when the buffer is prefix-only.
	Slots []Record
}

// Phase returns thread t's record for phase p.
func (b *Buffer) Phase(t int, p Phase) Record { return b.Phases[t*NumPhases+int(p)] }

// ThreadPhases returns thread t's phase records (aliasing b.Phases).
func (b *Buffer) ThreadPhases(t int) []Record { return b.Phases[t*NumPhases : (t+1)*NumPhases] }

// ThreadSlots returns thread t's task-timing records (aliasing b.Slots), or
// nil for a prefix-only buffer.
func (b *Buffer) ThreadSlots(t int) []Record {
	if b.Slots == nil {
		return nil
	}
	return b.Slots[t*NumSlots : (t+1)*NumSlots]
}

// TailRead reports whether the reduction reads the task-timing tail: the
// header says it is used and it is present.
func (b *Buffer) TailRead() bool { return b.Header.TailUsed != 0 && b.Slots != nil }

// PrefixSize returns the size of a prefix-only buffer for threads threads:
// 16 + 160·threads.
func PrefixSize(threads int) int { return HeaderSize + threads*PhaseBytesPerThread }

// FullSize returns the size of a buffer with its task-timing tail for
// threads threads: 16 + 416·threads.
func FullSize(threads int) int { return PrefixSize(threads) + threads*SlotBytesPerThread }

// Decoding errors. A *DecodeError unwraps to one of them.
var (
	// ErrThreads: the thread count is impossible (< 1 or > MaxThreads).
	ErrThreads = errors.New("impossible thread count")
	// ErrTruncated: the buffer ends inside the header or the phase records.
	ErrTruncated = errors.New("truncated buffer")
	// ErrTruncatedTail: the header says the tail is used but the buffer
	// ends before the tail does.
	ErrTruncatedTail = errors.New("truncated task-timing tail")
	// ErrSize: the buffer's size is neither the prefix-only size nor the
	// full size for the given thread count.
	ErrSize = errors.New("wrong buffer size")
)

// DecodeError is a decoding failure at a byte offset.
type DecodeError struct {
	Offset int    // byte offset where the problem was found
	Want   string // what was expected there
	Err    error  // one of ErrThreads, ErrTruncated, ErrTruncatedTail, ErrSize
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("reduce: device-phase buffer: offset %d: %v: want %s", e.Offset, e.Err, e.Want)
}

func (e *DecodeError) Unwrap() error { return e.Err }

// DecodeBuffer decodes a little-endian device-phase buffer written for
// threads AICPU threads. The thread count is required: the prefix-only size
// 16+160·T and the full size 16+416·T coincide for different T (T=13 prefix
// and T=5 full are both 2096 bytes), so it cannot be inferred from the size.
//
// A buffer is either prefix-only (header + phase records, accepted only when
// the header's TailUsed is 0) or full (header + phase records + tail).
func DecodeBuffer(b []byte, threads int) (*Buffer, error) {
	if threads < 1 || threads > MaxThreads {
		return nil, &DecodeError{Offset: 0, Want: fmt.Sprintf("thread count in 1..%d, got %d", MaxThreads, threads), Err: ErrThreads}
	}
	prefix, full := PrefixSize(threads), FullSize(threads)
	if len(b) < HeaderSize {
		return nil, &DecodeError{Offset: len(b), Want: fmt.Sprintf("%d-byte header, have %d bytes", HeaderSize, len(b)), Err: ErrTruncated}
	}
	h := Header{
		TailUsed: binary.LittleEndian.Uint64(b[0:]),
		Reserved: binary.LittleEndian.Uint64(b[8:]),
	}
	if len(b) < prefix {
		off := len(b) - (len(b)-HeaderSize)%RecordSize
		rec := (off - HeaderSize) / RecordSize
		return nil, &DecodeError{
			Offset: off,
			Want: fmt.Sprintf("phase record %d of %d (thread %d, %v), %d bytes; buffer is %d bytes, %d threads need %d",
				rec, threads*NumPhases, rec/NumPhases, Phase(rec%NumPhases), RecordSize, len(b), threads, prefix),
			Err: ErrTruncated,
		}
	}
	switch {
	case len(b) == prefix && h.TailUsed != 0:
		return nil, &DecodeError{
			Offset: prefix,
			Want:   fmt.Sprintf("%d-byte task-timing tail (header task_timing_tail_used=%d)", threads*SlotBytesPerThread, h.TailUsed),
			Err:    ErrTruncatedTail,
		}
	case len(b) > prefix && len(b) < full:
		if h.TailUsed != 0 {
			off := len(b) - (len(b)-prefix)%RecordSize
			rec := (off - prefix) / RecordSize
			return nil, &DecodeError{
				Offset: off,
				Want: fmt.Sprintf("task-timing record %d of %d (thread %d, slot %d), %d bytes; %d threads need %d bytes",
					rec, threads*NumSlots, rec/NumSlots, rec%NumSlots, RecordSize, threads, full),
				Err: ErrTruncatedTail,
			}
		}
		return nil, &DecodeError{
			Offset: prefix,
			Want:   fmt.Sprintf("end of buffer (prefix-only, %d bytes) or a %d-byte tail; have %d bytes", prefix, full-prefix, len(b)-prefix),
			Err:    ErrSize,
		}
	case len(b) > full:
		return nil, &DecodeError{
			Offset: full,
			Want:   fmt.Sprintf("end of buffer (%d threads: %d or %d bytes); have %d bytes", threads, prefix, full, len(b)),
			Err:    ErrSize,
		}
	}
	buf := &Buffer{Header: h, Threads: threads, Phases: decodeRecords(b[HeaderSize:prefix])}
	if len(b) == full {
		buf.Slots = decodeRecords(b[prefix:full])
	}
	return buf, nil
}

func decodeRecords(b []byte) []Record {
	rs := make([]Record, len(b)/RecordSize)
	for i := range rs {
		o := i * RecordSize
		rs[i] = Record{
			Start: Cycles(binary.LittleEndian.Uint64(b[o:])),
			End:   Cycles(binary.LittleEndian.Uint64(b[o+8:])),
		}
	}
	return rs
}

// AppendBinary appends the buffer's wire form to dst: the header, the phase
// records and, when Slots is not nil, the tail.
func (b *Buffer) AppendBinary(dst []byte) ([]byte, error) {
	if b.Threads < 1 || b.Threads > MaxThreads || len(b.Phases) != b.Threads*NumPhases ||
		(b.Slots != nil && len(b.Slots) != b.Threads*NumSlots) {
		return dst, fmt.Errorf("reduce: buffer with %d threads, %d phase and %d slot records is not encodable", b.Threads, len(b.Phases), len(b.Slots))
	}
	dst = binary.LittleEndian.AppendUint64(dst, b.Header.TailUsed)
	dst = binary.LittleEndian.AppendUint64(dst, b.Header.Reserved)
	for _, r := range b.Phases {
		dst = binary.LittleEndian.AppendUint64(dst, uint64(r.Start))
		dst = binary.LittleEndian.AppendUint64(dst, uint64(r.End))
	}
	for _, r := range b.Slots {
		dst = binary.LittleEndian.AppendUint64(dst, uint64(r.Start))
		dst = binary.LittleEndian.AppendUint64(dst, uint64(r.End))
	}
	return dst, nil
}

// NewBuffer returns a reset buffer for threads threads, as the host prepares
// it before a run: every record {Unset, 0}, header zero; with a tail when
// withTail is set.
func NewBuffer(threads int, withTail bool) (*Buffer, error) {
	if threads < 1 || threads > MaxThreads {
		return nil, &DecodeError{Offset: 0, Want: fmt.Sprintf("thread count in 1..%d, got %d", MaxThreads, threads), Err: ErrThreads}
	}
	b := &Buffer{Threads: threads, Phases: make([]Record, threads*NumPhases)}
	for i := range b.Phases {
		b.Phases[i] = Record{Start: Unset}
	}
	if withTail {
		b.Slots = make([]Record, threads*NumSlots)
		for i := range b.Slots {
			b.Slots[i] = Record{Start: Unset}
		}
	}
	return b, nil
}
