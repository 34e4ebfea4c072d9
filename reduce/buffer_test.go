package reduce

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSizes(t *testing.T) {
	t.Parallel()
	if got := PrefixSize(1); got != 176 {
		t.Errorf("PrefixSize(1) = %d, want 176", got)
	}
	if got := FullSize(1); got != 432 {
		t.Errorf("FullSize(1) = %d, want 432", got)
	}
	// SPEC §4: the two sizes coincide for different thread counts, so the
	// count is never inferred.
	if PrefixSize(13) != FullSize(5) {
		t.Fatalf("PrefixSize(13)=%d FullSize(5)=%d", PrefixSize(13), FullSize(5))
	}
	b := make([]byte, PrefixSize(13))
	b13, err := DecodeBuffer(b, 13)
	if err != nil || b13.Slots != nil || len(b13.Phases) != 130 {
		t.Fatalf("13 threads: %v, slots=%v, phases=%d", err, b13.Slots != nil, len(b13.Phases))
	}
	b5, err := DecodeBuffer(b, 5)
	if err != nil || b5.Slots == nil || len(b5.Phases) != 50 {
		t.Fatalf("5 threads: %v", err)
	}
}

func TestDecodeLayout(t *testing.T) {
	t.Parallel()
	// Two threads, prefix-only: header, then thread 0's ten records, then
	// thread 1's; little-endian u64 pairs.
	raw := make([]byte, PrefixSize(2))
	binary.LittleEndian.PutUint64(raw[8:], 7) // reserved
	put := func(th int, p Phase, s, e uint64) {
		o := HeaderSize + (th*NumPhases+int(p))*RecordSize
		binary.LittleEndian.PutUint64(raw[o:], s)
		binary.LittleEndian.PutUint64(raw[o+8:], e)
	}
	put(0, RunWall, 10, 20)
	put(1, SmReset, 30, 40)
	b, err := DecodeBuffer(raw, 2)
	if err != nil {
		t.Fatal(err)
	}
	if b.Header != (Header{Reserved: 7}) {
		t.Errorf("header = %+v", b.Header)
	}
	if got := b.Phase(0, RunWall); got != (Record{10, 20}) {
		t.Errorf("thread 0 RunWall = %v", got)
	}
	if got := b.Phase(1, SmReset); got != (Record{30, 40}) {
		t.Errorf("thread 1 SmReset = %v", got)
	}
	if got := b.ThreadPhases(1)[SmReset]; got != (Record{30, 40}) {
		t.Errorf("ThreadPhases(1)[SmReset] = %v", got)
	}
	if b.ThreadSlots(0) != nil || b.TailRead() {
		t.Error("prefix-only buffer has a tail")
	}
}

func TestDecodeRoundTrip(t *testing.T) {
	t.Parallel()
	bb := typical(t)
	got, err := DecodeBuffer(bb.bytes(), 2)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(bb.b, got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	if got.ThreadSlots(1)[3] != (Record{1300, 1400}) {
		t.Errorf("thread 1 slot 3 = %v", got.ThreadSlots(1)[3])
	}
}

func TestDecodeErrors(t *testing.T) {
	t.Parallel()
	tailUsed := func(n int) []byte {
		b := make([]byte, n)
		if n >= 8 {
			b[0] = 1
		}
		return b
	}
	tests := []struct {
		name    string
		b       []byte
		threads int
		want    error
		offset  int
	}{
		{"zero threads", make([]byte, 16), 0, ErrThreads, 0},
		{"negative threads", make([]byte, 16), -3, ErrThreads, 0},
		{"too many threads", make([]byte, 16), MaxThreads + 1, ErrThreads, 0},
		{"empty", nil, 1, ErrTruncated, 0},
		{"short header", make([]byte, 9), 1, ErrTruncated, 9},
		{"mid record", make([]byte, 16+16*3+5), 1, ErrTruncated, 16 + 16*3},
		{"one record short", make([]byte, PrefixSize(2)-16), 2, ErrTruncated, PrefixSize(2) - 16},
		{"tail used but absent", tailUsed(PrefixSize(2)), 2, ErrTruncatedTail, PrefixSize(2)},
		{"tail cut", tailUsed(PrefixSize(2) + 40), 2, ErrTruncatedTail, PrefixSize(2) + 32},
		{"unused partial tail", make([]byte, PrefixSize(2)+40), 2, ErrSize, PrefixSize(2)},
		{"trailing bytes", make([]byte, FullSize(2)+1), 2, ErrSize, FullSize(2)},
		{"wrong thread count", make([]byte, FullSize(3)), 2, ErrSize, FullSize(2)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeBuffer(tt.b, tt.threads)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("err %T is not a *DecodeError", err)
			}
			if de.Offset != tt.offset {
				t.Errorf("offset = %d, want %d (%v)", de.Offset, tt.offset, err)
			}
			if de.Want == "" {
				t.Error("no expectation in the error")
			}
		})
	}
}

func TestDecodeFullWithUnusedTail(t *testing.T) {
	t.Parallel()
	// Header says the tail is unused: it is decoded (still visible per
	// thread) but not read by the reduction.
	bb := newBuilder(t, 1, true).phase(0, Preamble, 10, 20)
	bb.b.Slots[2] = Record{Start: 12, End: 18}
	b, err := DecodeBuffer(bb.bytes(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if b.TailRead() {
		t.Fatal("TailRead with task_timing_tail_used = 0")
	}
	r, err := Reduce(b, 50_000_000)
	if err != nil {
		t.Fatal(err)
	}
	if r.Slots[2].Valid {
		t.Error("slot reduced from an unused tail")
	}
}

func TestAppendBinaryRejectsInconsistent(t *testing.T) {
	t.Parallel()
	if _, err := (&Buffer{Threads: 2, Phases: make([]Record, 3)}).AppendBinary(nil); err == nil {
		t.Error("no error for 3 phase records and 2 threads")
	}
}
