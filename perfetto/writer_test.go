package perfetto_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/phasetrace/phasetrace/perfetto"
	"github.com/phasetrace/phasetrace/perfetto/check"
	pb "github.com/phasetrace/phasetrace/proto"
	"github.com/phasetrace/phasetrace/strace/stracetest"
)

// readBack decodes what a writer produced and fails the test on any
// problem the trace processor would report.
func readBack(t *testing.T, b []byte) *check.Trace {
	t.Helper()
	tr, err := check.ReadBytes(b)
	if err != nil {
		t.Fatalf("reading the trace back: %v", err)
	}
	if err := tr.Err(); err != nil {
		t.Fatalf("the trace processor would report: %v", err)
	}
	return tr
}

// span is a slice as a test means it: where it is, and who its parent is.
type span struct {
	Name   string
	TS     int64
	Dur    int64
	Depth  int
	Parent string
}

// spansOf lists the slices of one track as spans, in the trace's order.
func spansOf(tr *check.Trace, track uint64) []span {
	var out []span
	for _, s := range tr.Slices {
		if s.Track != track {
			continue
		}
		sp := span{Name: s.Name, TS: s.TS, Dur: s.Dur, Depth: s.Depth}
		if s.Parent >= 0 {
			sp.Parent = tr.Slices[s.Parent].Name
		}
		out = append(out, sp)
	}
	return out
}

func TestSliceNestingHazards(t *testing.T) {
	t.Parallel()
	// Each case gives slices in a scrambled order; the trace must replay
	// them nested exactly as their intervals say.
	cases := []struct {
		name  string
		given []perfetto.Slice
		want  []span
	}{
		{
			name: "children before parent, as a log writes them",
			given: []perfetto.Slice{
				{Name: "bind.args", TS: 110, Dur: 20},
				{Name: "bind", TS: 100, Dur: 50},
				{Name: "run", TS: 100, Dur: 200},
			},
			want: []span{
				{Name: "run", TS: 100, Dur: 200},
				{Name: "bind", TS: 100, Dur: 50, Depth: 1, Parent: "run"},
				{Name: "bind.args", TS: 110, Dur: 20, Depth: 2, Parent: "bind"},
			},
		},
		{
			name: "child starts and ends exactly with its parent's bounds",
			given: []perfetto.Slice{
				{Name: "first", TS: 0, Dur: 10},
				{Name: "last", TS: 90, Dur: 10},
				{Name: "parent", TS: 0, Dur: 100},
			},
			want: []span{
				{Name: "parent", TS: 0, Dur: 100},
				{Name: "first", TS: 0, Dur: 10, Depth: 1, Parent: "parent"},
				{Name: "last", TS: 90, Dur: 10, Depth: 1, Parent: "parent"},
			},
		},
		{
			name: "adjacent siblings share a boundary",
			given: []perfetto.Slice{
				{Name: "b", TS: 10, Dur: 10},
				{Name: "a", TS: 0, Dur: 10},
				{Name: "c", TS: 20, Dur: 5},
			},
			want: []span{
				{Name: "a", TS: 0, Dur: 10},
				{Name: "b", TS: 10, Dur: 10},
				{Name: "c", TS: 20, Dur: 5},
			},
		},
		{
			name: "identical intervals ordered by depth",
			given: []perfetto.Slice{
				{Name: "graph_build", TS: 5, Dur: 50, Depth: 3},
				{Name: "device_wall", TS: 5, Dur: 50, Depth: 2},
			},
			want: []span{
				{Name: "device_wall", TS: 5, Dur: 50},
				{Name: "graph_build", TS: 5, Dur: 50, Depth: 1, Parent: "device_wall"},
			},
		},
		{
			name: "zero-duration slices at a parent's start and end",
			given: []perfetto.Slice{
				{Name: "z_end", TS: 100, Dur: 0},
				{Name: "z_start", TS: 0, Dur: 0},
				{Name: "p", TS: 0, Dur: 100},
			},
			want: []span{
				{Name: "p", TS: 0, Dur: 100},
				{Name: "z_start", TS: 0, Dur: 0, Depth: 1, Parent: "p"},
				{Name: "z_end", TS: 100, Dur: 0, Depth: 1, Parent: "p"},
			},
		},
		{
			// A zero-length slice on a boundary two slices share lies in
			// both; it nests in the one that starts there.
			name: "zero-duration slice on a shared boundary",
			given: []perfetto.Slice{
				{Name: "z", TS: 100, Dur: 0},
				{Name: "next", TS: 100, Dur: 10},
				{Name: "p", TS: 0, Dur: 100},
			},
			want: []span{
				{Name: "p", TS: 0, Dur: 100},
				{Name: "next", TS: 100, Dur: 10},
				{Name: "z", TS: 100, Dur: 0, Depth: 1, Parent: "next"},
			},
		},
		{
			name: "deep chain all starting at one instant",
			given: []perfetto.Slice{
				{Name: "d3", TS: 7, Dur: 1},
				{Name: "d1", TS: 7, Dur: 3},
				{Name: "d0", TS: 7, Dur: 4},
				{Name: "d2", TS: 7, Dur: 2},
			},
			want: []span{
				{Name: "d0", TS: 7, Dur: 4},
				{Name: "d1", TS: 7, Dur: 3, Depth: 1, Parent: "d0"},
				{Name: "d2", TS: 7, Dur: 2, Depth: 2, Parent: "d1"},
				{Name: "d3", TS: 7, Dur: 1, Depth: 3, Parent: "d2"},
			},
		},
		{
			name: "deep chain all ending at one instant",
			given: []perfetto.Slice{
				{Name: "e2", TS: 8, Dur: 2},
				{Name: "e0", TS: 0, Dur: 10},
				{Name: "after", TS: 10, Dur: 1},
				{Name: "e1", TS: 5, Dur: 5},
			},
			want: []span{
				{Name: "e0", TS: 0, Dur: 10},
				{Name: "e1", TS: 5, Dur: 5, Depth: 1, Parent: "e0"},
				{Name: "e2", TS: 8, Dur: 2, Depth: 2, Parent: "e1"},
				{Name: "after", TS: 10, Dur: 1},
			},
		},
	}
	for _, delta := range []bool{true, false} {
		for _, c := range cases {
			t.Run(fmt.Sprintf("%s/delta=%v", c.name, delta), func(t *testing.T) {
				t.Parallel()
				var buf bytes.Buffer
				w := perfetto.NewWriter(&buf, perfetto.WithDeltaTimestamps(delta))
				th := w.Thread(perfetto.ThreadSpec{Pid: 1, Tid: 2, Name: "main"})
				for _, s := range c.given {
					w.Slice(th, s)
				}
				if err := w.Close(); err != nil {
					t.Fatal(err)
				}
				tr := readBack(t, buf.Bytes())
				if diff := cmp.Diff(c.want, spansOf(tr, th.UUID())); diff != "" {
					t.Errorf("slices (-want +got):\n%s", diff)
				}
			})
		}
	}
}

// tree builds a random well-nested forest of slices on [lo, hi), with
// shared boundaries and zero durations on purpose.
func tree(r *rand.Rand, lo, hi int64, depth int, prefix string, out *[]span, parent string) {
	t := lo
	for i := 0; t < hi && i < 4; i++ {
		start := t + r.Int64N(3) // often 0: siblings touch
		if start > hi {
			break
		}
		end := start + r.Int64N(hi-start+1)
		if r.IntN(4) == 0 {
			end = hi // ends with its parent
		}
		if end == start {
			// A zero-length slice touching another slice's boundary is
			// ambiguous (it lies in both); keep it strictly inside.
			if start == lo || start == t || start >= hi {
				continue
			}
			*out = append(*out, span{Name: fmt.Sprintf("%s%d", prefix, i), TS: start, Depth: depth, Parent: parent})
			t = start + 1
			continue
		}
		name := fmt.Sprintf("%s%d", prefix, i)
		*out = append(*out, span{Name: name, TS: start, Dur: end - start, Depth: depth, Parent: parent})
		if depth < 4 && end > start {
			tree(r, start, end, depth+1, name+".", out, name)
		}
		t = end
	}
}

func TestSliceNestingRandomOrder(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	for iter := 0; iter < 200; iter++ {
		var want []span
		tree(r, 1000, 1100, 0, "s", &want, "")
		given := slices.Clone(want)
		r.Shuffle(len(given), func(i, j int) { given[i], given[j] = given[j], given[i] })
		var buf bytes.Buffer
		w := perfetto.NewWriter(&buf)
		th := w.Thread(perfetto.ThreadSpec{Pid: 1, Tid: 1})
		for _, s := range given {
			// Depth is only a tie-breaker for identical intervals; give it
			// as the log does.
			w.Slice(th, perfetto.Slice{Name: s.Name, TS: s.TS, Dur: s.Dur, Depth: int32(s.Depth)})
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		tr := readBack(t, buf.Bytes())
		got := spansOf(tr, th.UUID())
		// A zero-length slice at its parent's end, or identical intervals,
		// may legitimately land at either of two equivalent depths only
		// when the input is ambiguous; tree() never produces ambiguity
		// beyond what Depth resolves, so the nesting must match exactly.
		sortSpans := cmpopts.SortSlices(func(a, b span) bool { return a.Name < b.Name })
		if diff := cmp.Diff(want, got, sortSpans); diff != "" {
			t.Fatalf("iteration %d: slices (-want +got):\n%s", iter, diff)
		}
	}
}

func TestSliceErrors(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	w := perfetto.NewWriter(&buf)
	th := w.Thread(perfetto.ThreadSpec{Pid: 1, Tid: 1})
	c := w.CounterTrack(perfetto.Track{}, perfetto.CounterSpec{Name: "c"})
	w.Slice(th, perfetto.Slice{Name: "a", TS: 0, Dur: 10})
	w.Slice(th, perfetto.Slice{Name: "negative", TS: -1, Dur: 10})
	w.Slice(c, perfetto.Slice{Name: "on a counter", TS: 1, Dur: 1})
	w.Counter(th, 5, 1)
	w.End(th, 20)
	err := w.Flush()
	want := []perfetto.EventError{
		{Track: "thread 1/1", Name: "negative", TS: -1, Dur: 10, Err: perfetto.ErrNegativeTimestamp},
		{Track: "c", Name: "on a counter", TS: 1, Dur: 1, Err: perfetto.ErrWrongTrackKind},
		{Track: "thread 1/1", TS: 5, Err: perfetto.ErrWrongTrackKind},
		{Track: "thread 1/1", TS: 20, Err: perfetto.ErrUnmatchedEnd},
	}
	if diff := cmp.Diff(want, eventErrors(err), cmpopts.EquateErrors()); diff != "" {
		t.Errorf("Flush errors (-want +got):\n%s", diff)
	}
	w.Begin(th, perfetto.Slice{Name: "streamed on a track of complete slices", TS: 30})
	want = append(want, perfetto.EventError{Track: "thread 1/1", Name: "streamed on a track of complete slices", TS: 30, Err: perfetto.ErrMixedTrack})
	if diff := cmp.Diff(want, eventErrors(w.Close()), cmpopts.EquateErrors()); diff != "" {
		t.Errorf("Close errors (-want +got):\n%s", diff)
	}
	if st := w.Stats(); st.Slices != 1 || st.Dropped != 5 || st.Errors != 5 {
		t.Errorf("stats %+v, want 1 slice written and 5 refused", st)
	}
	tr := readBack(t, buf.Bytes())
	if diff := cmp.Diff([]span{{Name: "a", TS: 0, Dur: 10}}, spansOf(tr, th.UUID())); diff != "" {
		t.Errorf("slices (-want +got):\n%s", diff)
	}
	if err := w.Close(); !errors.Is(err, perfetto.ErrClosed) {
		t.Errorf("second Close: %v, want ErrClosed", err)
	}
}

func TestBeginEnd(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	w := perfetto.NewWriter(&buf)
	th := w.Thread(perfetto.ThreadSpec{Pid: 3, Tid: 4})
	w.Begin(th, perfetto.Slice{Name: "outer", TS: 10, Args: []perfetto.Arg{perfetto.Int("n", 1)}})
	w.Begin(th, perfetto.Slice{Name: "inner", TS: 10})
	w.End(th, 20)
	w.End(th, 20)
	w.End(th, 21)
	err := w.Close()
	if !errors.Is(err, perfetto.ErrUnmatchedEnd) {
		t.Errorf("Close: %v, want ErrUnmatchedEnd", err)
	}
	tr := readBack(t, buf.Bytes())
	want := []span{{Name: "outer", TS: 10, Dur: 10}, {Name: "inner", TS: 10, Dur: 10, Depth: 1, Parent: "outer"}}
	if diff := cmp.Diff(want, spansOf(tr, th.UUID())); diff != "" {
		t.Errorf("slices (-want +got):\n%s", diff)
	}
}

func TestArgsKeepTypes(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	w := perfetto.NewWriter(&buf)
	th := w.Thread(perfetto.ThreadSpec{Pid: 1, Tid: 1})
	args := []perfetto.Arg{
		perfetto.Int("neg", -5),
		perfetto.Uint("big", 1<<63+1),
		perfetto.Bool("ok", true),
		perfetto.Float("ratio", 0.25),
		perfetto.String("hid", "ab12"),
		perfetto.String("long", string(bytes.Repeat([]byte("x"), 300))),
		perfetto.Dict("kernel", perfetto.Int("cpu_ns", 7), perfetto.Dict("nested", perfetto.String("k", "v"))),
		perfetto.Array("list", perfetto.Int("", 1), perfetto.String("", "two")),
	}
	w.Slice(th, perfetto.Slice{Name: "s", TS: 1, Dur: 1, Args: args})
	args[0] = perfetto.Int("clobbered", 0) // the writer copied them
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	tr := readBack(t, buf.Bytes())
	want := []check.Arg{
		{Name: "neg", Value: int64(-5)},
		{Name: "big", Value: uint64(1<<63 + 1)},
		{Name: "ok", Value: true},
		{Name: "ratio", Value: 0.25},
		{Name: "hid", Value: "ab12"},
		{Name: "long", Value: string(bytes.Repeat([]byte("x"), 300))},
		{Name: "kernel", Value: []check.Arg{{Name: "cpu_ns", Value: int64(7)}, {Name: "nested", Value: []check.Arg{{Name: "k", Value: "v"}}}}},
		{Name: "list", Value: []any{int64(1), "two"}},
	}
	if diff := cmp.Diff(want, tr.Slices[0].Args); diff != "" {
		t.Errorf("args (-want +got):\n%s", diff)
	}
}

func TestInternLimitClearsState(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	w := perfetto.NewWriter(&buf, perfetto.WithInternLimit(8))
	th := w.Thread(perfetto.ThreadSpec{Pid: 1, Tid: 1})
	c := w.CounterTrack(th, perfetto.CounterSpec{Name: "c"})
	streamed := w.Thread(perfetto.ThreadSpec{Pid: 1, Tid: 2})
	var want []span
	for i := range 100 {
		name := fmt.Sprintf("name%d", i%37)
		w.Slice(th, perfetto.Slice{Name: name, TS: int64(i * 10), Dur: 5, Args: []perfetto.Arg{perfetto.String("v", fmt.Sprint(i))}})
		want = append(want, span{Name: name, TS: int64(i * 10), Dur: 5})
		w.Begin(streamed, perfetto.Slice{Name: name, TS: int64(i * 10), Args: []perfetto.Arg{perfetto.String("v", fmt.Sprint(i))}})
		w.End(streamed, int64(i*10+5))
		w.Counter(c, int64(i*10), int64(i))
		if i%7 == 6 {
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// The tables were cleared and refilled many times on every sequence.
	var trace pb.Trace
	if err := proto.Unmarshal(buf.Bytes(), &trace); err != nil {
		t.Fatal(err)
	}
	clears := map[uint32]int{}
	for _, p := range trace.GetPacket() {
		if p.GetSequenceFlags()&uint32(pb.TracePacket_SEQ_INCREMENTAL_STATE_CLEARED) != 0 {
			clears[p.GetTrustedPacketSequenceId()]++
		}
	}
	if clears[2] < 5 || clears[3] < 5 {
		t.Errorf("incremental-state clears per sequence: %v", clears)
	}
	tr := readBack(t, buf.Bytes())
	if diff := cmp.Diff(want, spansOf(tr, streamed.UUID())); diff != "" {
		t.Errorf("streamed slices (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, spansOf(tr, th.UUID())); diff != "" {
		t.Errorf("slices (-want +got):\n%s", diff)
	}
	i := 0
	for _, s := range tr.Slices {
		if s.Track != th.UUID() {
			continue
		}
		if got := s.Args[0].Value; got != fmt.Sprint(i) {
			t.Fatalf("slice %d arg %v, want %q", i, got, fmt.Sprint(i))
		}
		i++
	}
}

func TestTimestampsGoingBackwards(t *testing.T) {
	t.Parallel()
	// Flushes in separate batches may go back in time on a track: the
	// writer falls back to absolute timestamps and the clock still resolves.
	var buf bytes.Buffer
	w := perfetto.NewWriter(&buf)
	th := w.Thread(perfetto.ThreadSpec{Pid: 1, Tid: 1})
	w.Slice(th, perfetto.Slice{Name: "later", TS: 5000, Dur: 10})
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	w.Slice(th, perfetto.Slice{Name: "earlier", TS: 100, Dur: 10})
	w.Slice(th, perfetto.Slice{Name: "between", TS: 200, Dur: 10})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	tr := readBack(t, buf.Bytes())
	want := []span{{Name: "earlier", TS: 100, Dur: 10}, {Name: "between", TS: 200, Dur: 10}, {Name: "later", TS: 5000, Dur: 10}}
	if diff := cmp.Diff(want, spansOf(tr, th.UUID())); diff != "" {
		t.Errorf("slices (-want +got):\n%s", diff)
	}
}

func TestCompressionGivesTheSameTrace(t *testing.T) {
	t.Parallel()
	build := func(opts ...perfetto.Option) []byte {
		var buf bytes.Buffer
		w := perfetto.NewWriter(&buf, opts...)
		writeSample(w)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	plain := build()
	packed := build(perfetto.WithCompression(6))
	small := build(perfetto.WithCompression(1), perfetto.WithFlushThreshold(64))
	a, b, c := readBack(t, plain), readBack(t, packed), readBack(t, small)
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("compressed trace differs (-plain +compressed):\n%s", diff)
	}
	if diff := cmp.Diff(a, c); diff != "" {
		t.Errorf("compressed trace with a tiny threshold differs:\n%s", diff)
	}
	if len(packed) >= len(plain) {
		t.Errorf("compressed %d bytes, plain %d", len(packed), len(plain))
	}
}

func TestDeterministic(t *testing.T) {
	t.Parallel()
	var a, b bytes.Buffer
	for _, buf := range []*bytes.Buffer{&a, &b} {
		w := perfetto.NewWriter(buf)
		writeSample(w)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("the same input gave different bytes")
	}
}

type failingWriter struct{ after int }

var errDisk = errors.New("disk full")

func (f *failingWriter) Write(p []byte) (int, error) {
	if f.after <= 0 {
		return 0, errDisk
	}
	f.after--
	return len(p), nil
}

func TestWriteErrorsAreReturned(t *testing.T) {
	t.Parallel()
	w := perfetto.NewWriter(&failingWriter{after: 1}, perfetto.WithFlushThreshold(1))
	th := w.Thread(perfetto.ThreadSpec{Pid: 1, Tid: 1})
	w.Slice(th, perfetto.Slice{Name: "negative", TS: -1})
	for i := range 10 {
		w.Slice(th, perfetto.Slice{Name: "s", TS: int64(i), Dur: 1})
	}
	err := w.Flush()
	if !errors.Is(err, errDisk) || !errors.Is(err, perfetto.ErrWrite) {
		t.Errorf("Flush: %v, want the writer's error wrapping ErrWrite", err)
	}
	// The I/O error comes first, then the data errors, which are not
	// write errors.
	errs := err.(interface{ Unwrap() []error }).Unwrap()
	if len(errs) != 2 || !errors.Is(errs[0], perfetto.ErrWrite) || errors.Is(errs[1], perfetto.ErrWrite) || !errors.Is(errs[1], perfetto.ErrNegativeTimestamp) {
		t.Errorf("Flush errors %q, want the write error then the data error", errs)
	}
	if err := w.Close(); !errors.Is(err, errDisk) {
		t.Errorf("Close: %v, want the writer's error again", err)
	}
}

// eventErrors lists the EventErrors joined in err.
func eventErrors(err error) []perfetto.EventError {
	var out []perfetto.EventError
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			var ee *perfetto.EventError
			if errors.As(e, &ee) {
				out = append(out, *ee)
			}
		}
	}
	return out
}

// Errors are kept for the whole stream: when a flush happens does not
// change what Flush, Close and Err report.
func TestErrorsKeptForTheStream(t *testing.T) {
	t.Parallel()
	run := func(flushEvery int) (st perfetto.Stats, flushes []error, closeErr, errAfter error) {
		w := perfetto.NewWriter(&bytes.Buffer{})
		th := w.Thread(perfetto.ThreadSpec{Pid: 1, Tid: 1})
		for i := range 20 {
			w.Slice(th, perfetto.Slice{Name: fmt.Sprint("bad", i), TS: -int64(i) - 1})
			w.Slice(th, perfetto.Slice{Name: "good", TS: int64(i), Dur: 1})
			if flushEvery > 0 && i%flushEvery == 0 {
				flushes = append(flushes, w.Flush())
			}
		}
		closeErr = w.Close()
		return w.Stats(), flushes, closeErr, w.Err()
	}
	st, _, never, neverAfter := run(0)
	_, flushes, often, oftenAfter := run(1)
	if diff := cmp.Diff(eventErrors(never), eventErrors(often), cmpopts.EquateErrors()); diff != "" {
		t.Errorf("Close errors depend on flushes (-never +every event):\n%s", diff)
	}
	if diff := cmp.Diff(eventErrors(never), eventErrors(neverAfter), cmpopts.EquateErrors()); diff != "" {
		t.Errorf("Err after Close differs from Close (-close +err):\n%s", diff)
	}
	if diff := cmp.Diff(eventErrors(often), eventErrors(oftenAfter), cmpopts.EquateErrors()); diff != "" {
		t.Errorf("Err after Close differs from Close (-close +err):\n%s", diff)
	}
	for i, err := range flushes {
		if !errors.Is(err, perfetto.ErrNegativeTimestamp) {
			t.Errorf("flush %d: %v, want the first error still reported", i, err)
		}
	}
	errs := never.(interface{ Unwrap() []error }).Unwrap()
	var first *perfetto.EventError
	if len(errs) != 16 || !errors.As(errs[0], &first) || first.Name != "bad0" {
		t.Errorf("Close kept %d errors starting with %v, want the first 16", len(errs), errs[0])
	}
	if st.Errors != 20 || st.Dropped != 20 || st.Slices != 20 {
		t.Errorf("stats %+v, want 20 errors, 20 dropped, 20 slices", st)
	}
	if err := perfetto.NewWriter(&bytes.Buffer{}).Err(); err != nil {
		t.Errorf("Err of a new writer: %v", err)
	}
}

// writeSample writes a trace that uses every feature of the writer.
func writeSample(w *perfetto.Writer) {
	w.WallClock(1_000, 1_700_000_000_000_001_000)
	p := w.Process(perfetto.ProcessSpec{Pid: 100, Name: "chip rank 0", Labels: []string{"dev 0"}, SortIndex: 1, ChildOrder: perfetto.ChildOrderExplicit})
	th := w.Thread(perfetto.ThreadSpec{Pid: 100, Tid: 7, Name: "main"})
	dev := w.Track(p, perfetto.TrackSpec{Name: "device 0", Description: "AICPU phases, placed by clock anchors", Rank: 10, ChildOrder: perfetto.ChildOrderExplicit})
	orch := w.Track(dev, perfetto.TrackSpec{Name: "orch", Rank: 1, Merge: perfetto.MergeNone})
	sched := w.Track(dev, perfetto.TrackSpec{Name: "sched", Rank: 2, Merge: perfetto.MergeNone})
	lane := w.Track(p, perfetto.TrackSpec{Name: "pipeline slot 1 (tid 7)", Key: "slot1", Rank: 2, Merge: perfetto.MergeByKey})
	cnt := w.CounterTrack(p, perfetto.CounterSpec{Name: "bytes in flight", Unit: perfetto.UnitSizeBytes, YAxisShareKey: "bytes"})
	ratio := w.CounterTrack(p, perfetto.CounterSpec{Name: "occupancy", UnitName: "%"})

	flow := perfetto.FlowIDOf("100/run1/slot0")
	w.Slice(th, perfetto.Slice{Name: "chip.run.bind", Category: "host", TS: 1_000, Dur: 300, Depth: 1,
		Args: []perfetto.Arg{perfetto.Int("inv", 1), perfetto.String("hid", "ab12")}})
	w.Slice(th, perfetto.Slice{Name: "chip.run", Category: "host", TS: 1_000, Dur: 2_000,
		Args: []perfetto.Arg{perfetto.Int("inv", 1), perfetto.String("hid", "ab12")}, EndFlows: []perfetto.FlowID{flow}})
	w.Slice(th, perfetto.Slice{Name: "chip.run.runner_run", TS: 1_300, Dur: 1_700, Depth: 1})
	w.Instant(th, perfetto.Instant{Name: "anchor", TS: 1_300})
	w.Slice(lane, perfetto.Slice{Name: "node.submit", TS: 900, Dur: 50, Flows: []perfetto.FlowID{flow}})
	w.Slice(dev, perfetto.Slice{Name: "device_wall", TS: 1_400, Dur: 1_000,
		Args: []perfetto.Arg{perfetto.String("placement", "aligned"), perfetto.Int("bound_ns", 20)}})
	w.Slice(orch, perfetto.Slice{Name: "orch", TS: 1_500, Dur: 400})
	w.Slice(sched, perfetto.Slice{Name: "sched", TS: 1_500, Dur: 800})
	w.Counter(cnt, 1_000, 4096)
	w.Counter(cnt, 2_000, 0)
	w.CounterFloat(ratio, 1_500, 0.5)
	w.Begin(w.Thread(perfetto.ThreadSpec{Pid: 100, Tid: 8, Name: "worker"}), perfetto.Slice{Name: "streamed", TS: 1_100})
	w.End(w.Thread(perfetto.ThreadSpec{Pid: 100, Tid: 8}), 1_200)
}

func TestGolden(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	w := perfetto.NewWriter(&buf)
	writeSample(w)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	tr := readBack(t, buf.Bytes())
	var dump bytes.Buffer
	if err := tr.Dump(&dump); err != nil {
		t.Fatal(err)
	}
	stracetest.Golden(t, filepath.Join("testdata", "sample.golden"), dump.Bytes())
}

func TestCompressedWriteErrorsAreReturned(t *testing.T) {
	t.Parallel()
	w := perfetto.NewWriter(&failingWriter{after: 0}, perfetto.WithCompression(1))
	th := w.Thread(perfetto.ThreadSpec{Pid: 1, Tid: 1})
	for i := range 50_000 {
		w.Slice(th, perfetto.Slice{Name: "s", TS: int64(i * 10), Dur: 5, Args: []perfetto.Arg{perfetto.Int("i", int64(i))}})
		if i%1000 == 999 {
			w.Flush() // may or may not see the error yet: bundles are written in the background
		}
	}
	if err := w.Close(); !errors.Is(err, errDisk) {
		t.Errorf("Close: %v, want the writer's error", err)
	}
	bad := perfetto.NewWriter(&bytes.Buffer{}, perfetto.WithCompression(42))
	bad.Thread(perfetto.ThreadSpec{Pid: 1, Tid: 1})
	if err := bad.Close(); err == nil {
		t.Error("Close with an invalid compression level: no error")
	}
}

// Slices given after a flush may enclose slices already written (an
// external producer's span logged after the runs it wrapped): the trace
// processor's sort puts them outside, as long as they start earlier.
func TestEnclosingAfterFlush(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 4))
	for iter := 0; iter < 100; iter++ {
		var want []span
		tree(r, 1000, 1200, 1, "s", &want, "")
		var buf bytes.Buffer
		w := perfetto.NewWriter(&buf)
		th := w.Thread(perfetto.ThreadSpec{Pid: 1, Tid: 1})
		// The runs first, flushed; then the wrappers around them, each
		// starting before what it wraps.
		for _, s := range want {
			w.Slice(th, perfetto.Slice{Name: s.Name, TS: s.TS, Dur: s.Dur, Depth: int32(s.Depth)})
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		w.Slice(th, perfetto.Slice{Name: "outer", TS: 990, Dur: 230})
		w.Slice(th, perfetto.Slice{Name: "wrapper", TS: 995, Dur: 215, Depth: 1})
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		tr := readBack(t, buf.Bytes())
		got := spansOf(tr, th.UUID())
		expect := []span{{Name: "outer", TS: 990, Dur: 230}, {Name: "wrapper", TS: 995, Dur: 215, Depth: 1, Parent: "outer"}}
		for _, s := range want {
			s.Depth++ // under the wrapper
			if s.Parent == "" {
				s.Parent = "wrapper"
			}
			expect = append(expect, s)
		}
		sortSpans := cmpopts.SortSlices(func(a, b span) bool { return a.Name < b.Name })
		if diff := cmp.Diff(expect, got, sortSpans); diff != "" {
			t.Fatalf("iteration %d (-want +got):\n%s", iter, diff)
		}
	}
}

// panickingWriter panics with errBoom after some writes.
type panickingWriter struct{ after int }

var errBoom = errors.New("boom")

func (p *panickingWriter) Write(b []byte) (int, error) {
	if p.after <= 0 {
		panic(errBoom)
	}
	p.after--
	return len(b), nil
}

// recovered runs f and returns what it panicked with, if anything.
func recovered(f func()) (v any) {
	defer func() { v = recover() }()
	f()
	return nil
}

// A compressing writer's goroutine ends at Close whatever its io.Writer
// did, and a panic of the io.Writer reaches the caller's goroutine once.
func TestCompressorGoroutineEnds(t *testing.T) {
	base := runtime.NumGoroutine()
	sinks := []struct {
		after  int
		panics bool
	}{{0, false}, {2, false}, {0, true}, {2, true}}
	for iter := range 25 {
		for k, sink := range sinks {
			var dst io.Writer = &failingWriter{after: sink.after}
			if sink.panics {
				dst = &panickingWriter{after: sink.after}
			}
			w := perfetto.NewWriter(dst, perfetto.WithCompression(1))
			th := w.Thread(perfetto.ThreadSpec{Pid: 1, Tid: 1})
			var panics []any
			n := 0
			if iter%5 == 0 {
				n = 40_000 // several bundles: the failure comes while slices are given
			}
			for i := range n {
				if v := recovered(func() {
					w.Slice(th, perfetto.Slice{Name: "s", TS: int64(i * 10), Dur: 5, Args: []perfetto.Arg{perfetto.Int("i", int64(i))}})
					if i%5000 == 4999 {
						w.Flush()
					}
				}); v != nil {
					panics = append(panics, v)
				}
			}
			var err error
			if v := recovered(func() { err = w.Close() }); v != nil {
				panics = append(panics, v)
				err = w.Err()
			}
			fails := sink.after == 0 || n > 0 // n slices take more than two bundles
			switch {
			case fails && sink.panics && (len(panics) != 1 || panics[0] != errBoom):
				t.Fatalf("sink %d, %d slices: panics %v, want errBoom once", k, n, panics)
			case (!fails || !sink.panics) && len(panics) > 0:
				t.Fatalf("sink %d, %d slices: panics %v", k, n, panics)
			case fails != errors.Is(err, perfetto.ErrWrite):
				t.Fatalf("sink %d, %d slices: Close: %v", k, n, err)
			}
			if err := w.Close(); !errors.Is(err, perfetto.ErrClosed) {
				t.Fatalf("sink %d: second Close: %v", k, err)
			}
		}
	}
	// Close waited for each goroutine to finish its work; let them exit.
	for i := 0; i < 1000 && runtime.NumGoroutine() > base; i++ {
		runtime.Gosched()
		time.Sleep(time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > base {
		t.Errorf("%d goroutines after closing every writer, %d before", n, base)
	}
}

func TestTrackLimit(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	w := perfetto.NewWriter(&buf, perfetto.WithMaxTracks(3))
	if n := w.TracksLeft(); n != 3 {
		t.Errorf("TracksLeft of a new writer: %d, want 3", n)
	}
	p := w.Process(perfetto.ProcessSpec{Pid: 1, Name: "p"})
	th := w.Thread(perfetto.ThreadSpec{Pid: 1, Tid: 2})
	dev := w.Track(p, perfetto.TrackSpec{Name: "device"})
	if n := w.TracksLeft(); n != 0 {
		t.Errorf("TracksLeft after three tracks: %d, want 0", n)
	}
	refused := []perfetto.Track{
		w.Thread(perfetto.ThreadSpec{Pid: 1, Tid: 3}),
		w.Track(p, perfetto.TrackSpec{Name: "more"}),
		w.CounterTrack(p, perfetto.CounterSpec{Name: "c"}),
		w.Process(perfetto.ProcessSpec{Pid: 2}),
	}
	for i, r := range refused {
		if !r.IsZero() {
			t.Errorf("track %d past the limit: %v, want the zero Track", i, r)
		}
	}
	if again := w.Thread(perfetto.ThreadSpec{Pid: 1, Tid: 2}); again != th {
		t.Errorf("a declared track asked again: %v, want %v", again, th)
	}
	w.Slice(th, perfetto.Slice{Name: "kept", TS: 1, Dur: 1})
	w.Slice(dev, perfetto.Slice{Name: "kept too", TS: 1, Dur: 1})
	w.Slice(refused[0], perfetto.Slice{Name: "dropped", TS: 1, Dur: 1})
	w.Counter(refused[2], 1, 1)
	err := w.Close()
	if errs := eventErrors(err); len(errs) != 1 || !errors.Is(errs[0].Err, perfetto.ErrTooManyTracks) || errs[0].Track != "thread 1/3" {
		t.Errorf("Close: %v, want one ErrTooManyTracks naming the first track refused", err)
	}
	st := w.Stats()
	if st.Tracks != 3 || st.TracksRefused != 4 || st.Dropped != 2 || st.Slices != 2 {
		t.Errorf("stats %+v, want 3 tracks, 4 refused, 2 events dropped, 2 slices", st)
	}
	tr := readBack(t, buf.Bytes())
	if len(tr.Tracks) != 3 || len(tr.Slices) != 2 {
		t.Errorf("read back %d tracks and %d slices, want 3 and 2", len(tr.Tracks), len(tr.Slices))
	}
}

// TestEventLayout checks the order an event's fields are written in (see
// the package documentation): the sequence fields first, then the
// TrackEvent — its arguments, each value before its name, then its name
// and type —, then the timestamp. A protobuf reader does not care; deflate
// does, and this order is what keeps traces small.
func TestEventLayout(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	w := perfetto.NewWriter(&out)
	th := w.Thread(perfetto.ThreadSpec{Pid: 1, Tid: 2, Name: "main"})
	w.Slice(th, perfetto.Slice{Name: "run", TS: 1000, Dur: 10, Args: []perfetto.Arg{perfetto.Int("inv", 7), perfetto.String("clk", "dev")}})
	// The same name and arguments on the sequence that has interned them:
	// the events most slices make, written in one pass.
	w.Slice(th, perfetto.Slice{Name: "run", TS: 2000, Dur: 10, Args: []perfetto.Arg{perfetto.Int("inv", 8), perfetto.String("clk", "dev")}})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	fields := func(b []byte) (nums []protowire.Number, vals [][]byte) {
		for len(b) > 0 {
			num, typ, n := protowire.ConsumeTag(b)
			if n < 0 {
				t.Fatalf("bad tag")
			}
			m := protowire.ConsumeFieldValue(num, typ, b[n:])
			if m < 0 {
				t.Fatalf("bad field %d", num)
			}
			v := b[n : n+m]
			if typ == protowire.BytesType {
				v, _ = protowire.ConsumeBytes(v)
			}
			nums, vals = append(nums, num), append(vals, v)
			b = b[n+m:]
		}
		return nums, vals
	}
	var events [][]protowire.Number
	var annotations [][]protowire.Number
	_, packets := fields(out.Bytes())
	for _, p := range packets {
		nums, vals := fields(p)
		i := slices.Index(nums, 11) // track_event
		if i < 0 || slices.Contains(nums, 60) {
			continue // not an event, or a track descriptor
		}
		events = append(events, nums)
		ev, evVals := fields(vals[i])
		for j, num := range ev {
			if num == 4 { // debug_annotations
				a, _ := fields(evVals[j])
				annotations = append(annotations, a)
			}
		}
		if got, want := ev[len(ev)-1], protowire.Number(9); got != want { // type, after the arguments and name
			t.Errorf("TrackEvent fields %v: want type (9) last", ev)
		}
	}
	want := [][]protowire.Number{
		{10, 13, 11, 12, 8}, // begin: sequence id, flags, track_event, interned_data, timestamp
		{10, 13, 11, 8},     // end
		{10, 13, 11, 8},     // begin, all interned already
		{10, 13, 11, 8},     // end
	}
	if diff := cmp.Diff(want, events); diff != "" {
		t.Errorf("event packets' fields (-want +got):\n%s", diff)
	}
	wantAnn := [][]protowire.Number{{4, 1}, {17, 1}, {4, 1}, {17, 1}} // int_value, name_iid; string_value_iid, name_iid
	if diff := cmp.Diff(wantAnn, annotations); diff != "" {
		t.Errorf("annotations' fields (-want +got):\n%s", diff)
	}
}
