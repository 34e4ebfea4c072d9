package perfetto_test

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/phasetrace/phasetrace/perfetto"
	"github.com/phasetrace/phasetrace/perfetto/check"
)

// laneSpan is a slice as read back, with the name of the track it is on
// and the reason it was relocated there, if any.
type laneSpan struct {
	Track  string
	Name   string
	TS     int64
	Dur    int64
	Depth  int
	Parent string
	Reason string
}

// laneSpans lists the slices of a trace with their tracks' names, in the
// trace's order.
func laneSpans(tr *check.Trace) []laneSpan {
	var out []laneSpan
	for _, s := range tr.Slices {
		tk, _ := tr.Track(s.Track)
		ls := laneSpan{Track: tk.Name, Name: s.Name, TS: s.TS, Dur: s.Dur, Depth: s.Depth}
		if s.Parent >= 0 {
			ls.Parent = tr.Slices[s.Parent].Name
		}
		for _, a := range s.Args {
			if a.Name == "overflow_reason" {
				ls.Reason, _ = a.Value.(string)
			}
		}
		out = append(out, ls)
	}
	return out
}

// writeBatches writes each batch of slices on one thread named "main" and
// flushes after each; it returns the trace and the overflows reported.
func writeBatches(t *testing.T, batches [][]perfetto.Slice, opts ...perfetto.Option) ([]byte, []perfetto.Overflow) {
	t.Helper()
	var buf bytes.Buffer
	var ovs []perfetto.Overflow
	opts = append(opts, perfetto.WithOverflowFunc(func(o perfetto.Overflow) { ovs = append(ovs, o) }))
	w := perfetto.NewWriter(&buf, opts...)
	th := w.Thread(perfetto.ThreadSpec{Pid: 1, Tid: 2, Name: "main"})
	for _, batch := range batches {
		for _, s := range batch {
			w.Slice(th, s)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), ovs
}

const lane1 = "main 2 (overflow 1)"

func TestOverflowLanes(t *testing.T) {
	t.Parallel()
	s := func(name string, ts, dur int64) perfetto.Slice { return perfetto.Slice{Name: name, TS: ts, Dur: dur} }
	cases := []struct {
		name    string
		batches [][]perfetto.Slice // flushed one after the other
		want    []laneSpan
		errs    []error // of the overflows, in order
	}{
		{
			name:    "siblings overlapping by 1 ns",
			batches: [][]perfetto.Slice{{s("b", 9, 10), s("a", 0, 10)}},
			want: []laneSpan{
				{Track: "main", Name: "a", TS: 0, Dur: 10},
				{Track: lane1, Name: "b", TS: 9, Dur: 10, Reason: `partially overlaps "a" [0, +10]`},
			},
			errs: []error{perfetto.ErrOverlap},
		},
		{
			name:    "a child past its parent's end by 1 ns",
			batches: [][]perfetto.Slice{{s("child", 50, 51), s("parent", 0, 100), s("inside", 10, 10)}},
			want: []laneSpan{
				{Track: "main", Name: "parent", TS: 0, Dur: 100},
				{Track: "main", Name: "inside", TS: 10, Dur: 10, Depth: 1, Parent: "parent"},
				{Track: lane1, Name: "child", TS: 50, Dur: 51, Reason: `partially overlaps "parent" [0, +100]`},
			},
			errs: []error{perfetto.ErrOverlap},
		},
		{
			name:    "exactly abutting and exactly enclosing stay on the track",
			batches: [][]perfetto.Slice{{s("b", 10, 10), s("a", 0, 10), s("p", 0, 20), s("a.1", 0, 10), s("b.1", 15, 5)}},
			want: []laneSpan{
				{Track: "main", Name: "p", TS: 0, Dur: 20},
				{Track: "main", Name: "a", TS: 0, Dur: 10, Depth: 1, Parent: "p"},
				{Track: "main", Name: "a.1", TS: 0, Dur: 10, Depth: 2, Parent: "a"},
				{Track: "main", Name: "b", TS: 10, Dur: 10, Depth: 1, Parent: "p"},
				{Track: "main", Name: "b.1", TS: 15, Dur: 5, Depth: 2, Parent: "b"},
			},
		},
		{
			name:    "identical intervals nest, in one flush and across flushes",
			batches: [][]perfetto.Slice{{s("x", 5, 5), s("y", 5, 5), s("u", 20, 5)}, {s("v", 20, 5)}},
			want: []laneSpan{
				{Track: "main", Name: "x", TS: 5, Dur: 5},
				{Track: "main", Name: "y", TS: 5, Dur: 5, Depth: 1, Parent: "x"},
				{Track: "main", Name: "u", TS: 20, Dur: 5},
				{Track: "main", Name: "v", TS: 20, Dur: 5, Depth: 1, Parent: "u"},
			},
		},
		{
			name:    "after a flush: abutting it, inside it, enclosing it",
			batches: [][]perfetto.Slice{{s("r", 10, 10), s("q", 30, 10)}, {s("after", 20, 5), s("in", 12, 3), s("around", 5, 40)}},
			want: []laneSpan{
				{Track: "main", Name: "around", TS: 5, Dur: 40},
				{Track: "main", Name: "r", TS: 10, Dur: 10, Depth: 1, Parent: "around"},
				{Track: "main", Name: "in", TS: 12, Dur: 3, Depth: 2, Parent: "r"},
				{Track: "main", Name: "after", TS: 20, Dur: 5, Depth: 1, Parent: "around"},
				{Track: "main", Name: "q", TS: 30, Dur: 10, Depth: 1, Parent: "around"},
			},
		},
		{
			// The trace processor would put the later slice inside the
			// earlier one, or end the earlier one with the later one's end.
			name:    "after a flush: enclosing one that starts with it, ending where one starts",
			batches: [][]perfetto.Slice{{s("r", 10, 10)}, {s("wider", 10, 20), s("before", 0, 10)}},
			want: []laneSpan{
				{Track: "main", Name: "r", TS: 10, Dur: 10},
				{Track: lane1, Name: "before", TS: 0, Dur: 10, Reason: "ends where [10, +10] written before starts"},
				{Track: lane1, Name: "wider", TS: 10, Dur: 20, Reason: "encloses [10, +10] written before, which starts at the same instant"},
			},
			errs: []error{perfetto.ErrOutOfOrder, perfetto.ErrOutOfOrder},
		},
		{
			name:    "after a flush: overlapping by 1 ns",
			batches: [][]perfetto.Slice{{s("r", 10, 10)}, {s("late", 19, 10), s("early", 0, 11)}},
			want: []laneSpan{
				{Track: "main", Name: "r", TS: 10, Dur: 10},
				{Track: lane1, Name: "early", TS: 0, Dur: 11, Reason: "partially overlaps [10, +10] written before"},
				{Track: lane1, Name: "late", TS: 19, Dur: 10, Reason: "partially overlaps [10, +10] written before"},
			},
			errs: []error{perfetto.ErrOverlap, perfetto.ErrOverlap},
		},
		{
			// Among r's children, where it would nest depends on them,
			// which the writer no longer knows; before or after them all,
			// it nests in r.
			name:    "after a flush: inside a slice written with children",
			batches: [][]perfetto.Slice{{s("r", 0, 100), s("r.1", 10, 10), s("r.2", 60, 10)}, {s("among", 30, 5), s("before", 2, 3), s("after", 70, 30)}},
			want: []laneSpan{
				{Track: "main", Name: "r", TS: 0, Dur: 100},
				{Track: "main", Name: "before", TS: 2, Dur: 3, Depth: 1, Parent: "r"},
				{Track: "main", Name: "r.1", TS: 10, Dur: 10, Depth: 1, Parent: "r"},
				{Track: "main", Name: "r.2", TS: 60, Dur: 10, Depth: 1, Parent: "r"},
				{Track: "main", Name: "after", TS: 70, Dur: 30, Depth: 1, Parent: "r"},
				{Track: lane1, Name: "among", TS: 30, Dur: 5, Reason: "lies among the children of [0, +100] written before, which the writer no longer remembers"},
			},
			errs: []error{perfetto.ErrUnverifiable},
		},
		{
			name: "instants",
			batches: [][]perfetto.Slice{
				{s("p", 0, 10), s("q", 5, 10)},
				{{Name: "tick", TS: 7}, {Name: "tock", TS: 100}},
			},
			want: []laneSpan{
				{Track: "main", Name: "p", TS: 0, Dur: 10},
				{Track: lane1, Name: "q", TS: 5, Dur: 10, Reason: `partially overlaps "p" [0, +10]`},
				{Track: "main", Name: "tick", TS: 7, Depth: 1, Parent: "p"},
				{Track: "main", Name: "tock", TS: 100},
			},
			errs: []error{perfetto.ErrOverlap},
		},
	}
	for _, delta := range []bool{true, false} {
		for _, c := range cases {
			t.Run(fmt.Sprintf("%s/delta=%v", c.name, delta), func(t *testing.T) {
				t.Parallel()
				b, ovs := writeBatches(t, c.batches, perfetto.WithDeltaTimestamps(delta))
				tr := readBack(t, b)
				sortSpans := cmpopts.SortSlices(func(a, b laneSpan) bool {
					return a.Track < b.Track || a.Track == b.Track && a.TS < b.TS || a.Track == b.Track && a.TS == b.TS && a.Depth < b.Depth
				})
				if diff := cmp.Diff(c.want, laneSpans(tr), sortSpans); diff != "" {
					t.Errorf("slices (-want +got):\n%s", diff)
				}
				var errs []error
				for _, o := range ovs {
					errs = append(errs, o.Err)
				}
				if diff := cmp.Diff(c.errs, errs, cmpopts.EquateErrors()); diff != "" {
					t.Errorf("overflows (-want +got):\n%s\n%+v", diff, ovs)
				}
				traceProcessor(t, b, tr)
			})
		}
	}
}

// The writer remembers the latest 64 top-level slices of each lane one by
// one, and the earlier ones as the stretches they cover: a later slice in
// a gap between forgotten slices, before them all, or enclosing some of
// them is decided exactly; one that lies inside a forgotten slice goes to
// an overflow lane (ErrUnverifiable).
func TestOverflowUnverifiable(t *testing.T) {
	t.Parallel()
	var first []perfetto.Slice
	for i := range 70 {
		first = append(first, perfetto.Slice{Name: fmt.Sprint("r", i), TS: int64(100 + i*10), Dur: 5})
	}
	b, ovs := writeBatches(t, [][]perfetto.Slice{first, {
		{Name: "inside", TS: 120, Dur: 2, Ref: 1},
		{Name: "gap", TS: 106, Dur: 3, Ref: 2},
		{Name: "kept", TS: 160, Dur: 2, Ref: 3},
		{Name: "later", TS: 1000, Dur: 2, Ref: 4},
		{Name: "prewarm", TS: 0, Dur: 90, Ref: 5},
		{Name: "around", TS: 125, Dur: 30, Ref: 6},
	}})
	want := []perfetto.Overflow{{Track: "thread 1/2", Lane: 1, Name: "inside", TS: 120, Dur: 2, Ref: 1, Err: perfetto.ErrUnverifiable}}
	if diff := cmp.Diff(want, ovs, cmpopts.EquateErrors()); diff != "" {
		t.Errorf("overflows (-want +got):\n%s", diff)
	}
	tr := readBack(t, b)
	var got []laneSpan
	for _, s := range laneSpans(tr) {
		if i, err := strconv.Atoi(strings.TrimPrefix(s.Name, "r")); err != nil || i >= 3 && i <= 6 {
			got = append(got, s)
		}
	}
	wantSpans := []laneSpan{
		{Track: "main", Name: "prewarm", TS: 0, Dur: 90},
		{Track: "main", Name: "gap", TS: 106, Dur: 3},
		{Track: "main", Name: "around", TS: 125, Dur: 30},
		{Track: "main", Name: "r3", TS: 130, Dur: 5, Depth: 1, Parent: "around"},
		{Track: "main", Name: "r4", TS: 140, Dur: 5, Depth: 1, Parent: "around"},
		{Track: "main", Name: "r5", TS: 150, Dur: 5, Depth: 1, Parent: "around"},
		{Track: "main", Name: "r6", TS: 160, Dur: 5},
		{Track: "main", Name: "kept", TS: 160, Dur: 2, Depth: 1, Parent: "r6"},
		{Track: "main", Name: "later", TS: 1000, Dur: 2},
		{Track: lane1, Name: "inside", TS: 120, Dur: 2, Reason: "lies in [120, +5], covered by slices written long before, which the writer no longer remembers one by one"},
	}
	sortSpans := cmpopts.SortSlices(func(a, b laneSpan) bool {
		return a.Track < b.Track || a.Track == b.Track && a.TS < b.TS || a.Track == b.Track && a.TS == b.TS && a.Depth < b.Depth
	})
	if diff := cmp.Diff(wantSpans, got, sortSpans); diff != "" {
		t.Errorf("slices (-want +got):\n%s", diff)
	}
	traceProcessor(t, b, tr)
}

// A chain of nested slices deeper than the trace processor keeps is split
// over lanes of MaxDepth slices each, and every slice is drawn.
func TestOverflowDeepChain(t *testing.T) {
	t.Parallel()
	const n = 10_001
	var chain []perfetto.Slice
	for i := range n {
		chain = append(chain, perfetto.Slice{Name: fmt.Sprint("s", i), TS: int64(1000 + i), Dur: int64(2*n - 2*i), Depth: int32(i)})
	}
	rand.New(rand.NewPCG(5, 6)).Shuffle(n, func(i, j int) { chain[i], chain[j] = chain[j], chain[i] })
	for _, delta := range []bool{true, false} {
		t.Run(fmt.Sprint("delta=", delta), func(t *testing.T) {
			t.Parallel()
			b, ovs := writeBatches(t, [][]perfetto.Slice{chain}, perfetto.WithDeltaTimestamps(delta))
			tr := readBack(t, b)
			if len(tr.Slices) != n || len(ovs) != n-perfetto.MaxDepth {
				t.Fatalf("%d slices read back, %d overflows, want %d and %d", len(tr.Slices), len(ovs), n, n-perfetto.MaxDepth)
			}
			lanes := map[string]int{}
			for _, s := range laneSpans(tr) {
				i, _ := strconv.Atoi(strings.TrimPrefix(s.Name, "s"))
				want := laneSpan{Track: "main", Name: s.Name, TS: int64(1000 + i), Dur: int64(2*n - 2*i), Depth: i % perfetto.MaxDepth}
				if lane := i / perfetto.MaxDepth; lane > 0 {
					want.Track = fmt.Sprintf("main 2 (overflow %d)", lane)
					want.Reason = fmt.Sprint("nested deeper than ", perfetto.MaxDepth)
				}
				if want.Depth > 0 {
					want.Parent = fmt.Sprint("s", i-1)
				}
				if diff := cmp.Diff(want, s); diff != "" {
					t.Fatalf("slice (-want +got):\n%s", diff)
				}
				lanes[s.Track]++
			}
			if want := (n + perfetto.MaxDepth - 1) / perfetto.MaxDepth; len(lanes) != want {
				t.Errorf("%d lanes, want %d", len(lanes), want)
			}
			traceProcessor(t, b, tr)
		})
	}
}

// Instants at one timestamp nest in one another in the trace processor, so
// they too are split over lanes past MaxDepth.
func TestOverflowInstantsAtOneTimestamp(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	w := perfetto.NewWriter(&buf)
	th := w.Thread(perfetto.ThreadSpec{Pid: 1, Tid: 2, Name: "main"})
	for i := range 600 {
		w.Instant(th, perfetto.Instant{Name: fmt.Sprint("i", i), TS: 50})
		if i == 299 {
			w.Flush()
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	tr := readBack(t, buf.Bytes())
	if got := w.Stats(); got.Instants != 600 || got.Overflowed == 0 {
		t.Errorf("stats %+v, want 600 instants, some on an overflow lane", got)
	}
	if len(tr.Slices) != 600 {
		t.Errorf("%d instants read back, want 600", len(tr.Slices))
	}
	traceProcessor(t, buf.Bytes(), tr)
}

// Every slice and instant is drawn, whatever overlaps and flushes the
// input has: the trace reads back clean with each one given, at its place,
// nested only in slices that contain it.
func TestOverflowRandom(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(7, 8))
	for iter := range 300 {
		var buf bytes.Buffer
		w := perfetto.NewWriter(&buf, perfetto.WithDeltaTimestamps(iter%2 == 0))
		th := w.Thread(perfetto.ThreadSpec{Pid: 1, Tid: 2, Name: "main"})
		var given []laneSpan
		span := 10 + r.IntN(150)
		for i := range 1 + r.IntN(120) {
			s := laneSpan{Name: fmt.Sprint("s", i), TS: int64(r.IntN(span))}
			switch r.IntN(8) {
			case 0:
				w.Instant(th, perfetto.Instant{Name: s.Name, TS: s.TS})
			case 1:
				w.Slice(th, perfetto.Slice{Name: s.Name, TS: s.TS})
			default:
				s.Dur = int64(r.IntN(span/2 + 1))
				w.Slice(th, perfetto.Slice{Name: s.Name, TS: s.TS, Dur: s.Dur, Depth: int32(r.IntN(3))})
			}
			given = append(given, s)
			if r.IntN(12) == 0 {
				if err := w.Flush(); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		tr := readBack(t, buf.Bytes())
		var got []laneSpan
		for _, s := range tr.Slices {
			got = append(got, laneSpan{Name: s.Name, TS: s.TS, Dur: s.Dur})
			if s.Parent >= 0 {
				p := tr.Slices[s.Parent]
				if p.Track != s.Track || s.TS < p.TS || s.TS+s.Dur > p.TS+p.Dur {
					t.Fatalf("iteration %d: %q [%d +%d] nested in %q [%d +%d]", iter, s.Name, s.TS, s.Dur, p.Name, p.TS, p.Dur)
				}
			}
		}
		sortSpans := cmpopts.SortSlices(func(a, b laneSpan) bool { return a.Name < b.Name })
		if diff := cmp.Diff(given, got, sortSpans); diff != "" {
			t.Fatalf("iteration %d (-given +read back):\n%s", iter, diff)
		}
		if iter%10 == 0 {
			traceProcessor(t, buf.Bytes(), tr)
		}
	}
}

func TestOverflowLimits(t *testing.T) {
	t.Parallel()
	// Slices that all overlap one another need a lane each.
	var buf bytes.Buffer
	var ovs []perfetto.Overflow
	w := perfetto.NewWriter(&buf, perfetto.WithOverflowFunc(func(o perfetto.Overflow) { ovs = append(ovs, o) }))
	dev := w.Track(perfetto.Track{}, perfetto.TrackSpec{Name: "device"})
	for i := range perfetto.MaxOverflowLanes + 3 {
		w.Slice(dev, perfetto.Slice{Name: fmt.Sprint("s", i), TS: int64(i), Dur: 100, Ref: uint64(i)})
	}
	err := w.Close()
	want := []perfetto.EventError{
		{Track: "device", Name: "s65", TS: 65, Dur: 100, Other: `partially overlaps "s0" [0, +100]`, Err: perfetto.ErrTooManyLanes},
		{Track: "device", Name: "s66", TS: 66, Dur: 100, Other: `partially overlaps "s0" [0, +100]`, Err: perfetto.ErrTooManyLanes},
	}
	if diff := cmp.Diff(want, eventErrors(err), cmpopts.EquateErrors()); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
	if st := w.Stats(); st.Overflowed != perfetto.MaxOverflowLanes || st.Dropped != 2 || st.Tracks != 1+perfetto.MaxOverflowLanes {
		t.Errorf("stats %+v", st)
	}
	if len(ovs) != perfetto.MaxOverflowLanes || ovs[63].Lane != 64 || ovs[63].Ref != 64 || ovs[63].Track != "device" {
		t.Errorf("%d overflows, the last %+v", len(ovs), ovs[len(ovs)-1])
	}
	tr := readBack(t, buf.Bytes())
	if tk, _ := tr.Track(tr.Slices[len(tr.Slices)-1].Track); tk.Name != "device (overflow 64)" || tk.Merge != int32(perfetto.MergeNone) || tk.Parent != 0 {
		t.Errorf("last lane %+v", tk)
	}

	// Overflow lanes count against the limit on tracks; a thread's lane
	// needs its process's track too.
	buf.Reset()
	w = perfetto.NewWriter(&buf, perfetto.WithMaxTracks(2))
	th := w.Thread(perfetto.ThreadSpec{Pid: 1, Tid: 2})
	w.Slice(th, perfetto.Slice{Name: "a", TS: 0, Dur: 10})
	w.Slice(th, perfetto.Slice{Name: "b", TS: 5, Dur: 10})
	err = w.Close()
	if errs := eventErrors(err); len(errs) != 1 || !errors.Is(errs[0].Err, perfetto.ErrTooManyTracks) {
		t.Errorf("Close: %v, want ErrTooManyTracks", err)
	}
	if st := w.Stats(); st.Tracks != 1 || st.TracksRefused != 1 || st.Dropped != 1 || st.Slices != 1 {
		t.Errorf("stats %+v", st)
	}
	buf.Reset()
	w = perfetto.NewWriter(&buf, perfetto.WithMaxTracks(3))
	th = w.Thread(perfetto.ThreadSpec{Pid: 1, Tid: 2})
	w.Slice(th, perfetto.Slice{Name: "a", TS: 0, Dur: 10})
	w.Slice(th, perfetto.Slice{Name: "b", TS: 5, Dur: 10})
	if err := w.Close(); err != nil || w.TracksLeft() != 0 {
		t.Errorf("Close: %v, %d tracks left", err, w.TracksLeft())
	}
	tr = readBack(t, buf.Bytes())
	var kinds []string
	for _, tk := range tr.Tracks {
		kinds = append(kinds, tk.Kind+" "+tk.Name)
	}
	if diff := cmp.Diff([]string{"thread ", "process ", "track thread 2 (overflow 1)"}, kinds); diff != "" {
		t.Errorf("tracks (-want +got):\n%s", diff)
	}
}

// traceProcessor loads a trace into Perfetto's own trace processor, when
// PHASETRACE_TRACE_PROCESSOR names its trace_processor_shell, and checks
// that it logs no error and builds the slices the checker read back (tr),
// at the same times and depths.
func traceProcessor(t *testing.T, trace []byte, tr *check.Trace) {
	t.Helper()
	bin := os.Getenv("PHASETRACE_TRACE_PROCESSOR")
	if bin == "" {
		t.Run("trace processor", func(t *testing.T) {
			t.Skip("PHASETRACE_TRACE_PROCESSOR does not name a trace_processor_shell")
		})
		return
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "trace.pftrace")
	if err := os.WriteFile(path, trace, 0o644); err != nil {
		t.Fatal(err)
	}
	query := func(sql string) []string {
		t.Helper()
		q := filepath.Join(dir, "query.sql")
		if err := os.WriteFile(q, []byte(sql), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(bin, "-q", q, path).Output()
		if err != nil {
			t.Fatalf("%s: %v", bin, err)
		}
		return strings.Split(strings.TrimSpace(string(out)), "\n")[1:] // after the header
	}
	if rows := query("select name, idx, severity, source, value from stats where value > 0 and severity in ('error', 'data_loss');"); len(rows) > 0 {
		t.Errorf("the trace processor reports %q", rows)
	}
	if rows := query("select count(*) from slice;"); !slices.Equal(rows, []string{strconv.Itoa(len(tr.Slices))}) {
		t.Errorf("the trace processor has %q slices, the checker %d", rows, len(tr.Slices))
	}
	got := query("select ts, dur, depth, name from slice;")
	var want []string
	for _, s := range tr.Slices {
		want = append(want, fmt.Sprintf("%d,%d,%d,%q", s.TS, s.Dur, s.Depth, s.Name))
	}
	slices.Sort(got)
	slices.Sort(want)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("slices (-checker +trace processor):\n%s", diff)
	}
}
