package stracetest

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"errors"
	"io"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/phasetrace/phasetrace/strace"
)

// readSpans reads log back: every line a span, none lost.
func readSpans(t *testing.T, log []byte) []strace.Span {
	t.Helper()
	recs, st := readBack(t, log)
	var spans []strace.Span
	for _, rec := range recs {
		if rec.Kind != strace.KindSpan {
			t.Fatalf("a record of kind %v, want spans only", rec.Kind)
		}
		spans = append(spans, rec.Span)
	}
	if st.Lost() != 0 || st.Joined != 0 || st.Unterminated || st.Lines != int64(len(spans)) || st.Records.Total() != st.Records.Spans {
		t.Errorf("read back: %+v, want %d lines, each a span, none lost", st, len(spans))
	}
	return spans
}

// distinctIDs counts the distinct pids and tids of spans.
func distinctIDs(spans []strace.Span) (pids, tids int) {
	p, th := map[int32]bool{}, map[int64]bool{}
	for _, s := range spans {
		p[s.Pid], th[s.Tid] = true, true
	}
	return len(p), len(th)
}

func TestOverlappingSpans(t *testing.T) {
	t.Parallel()
	spans := readSpans(t, OverlappingSpans(1000))
	if len(spans) != 1000 {
		t.Fatalf("%d spans, want 1000", len(spans))
	}
	for i, s := range spans {
		if s.Pid != 5 || s.Tid != 5 || s.TS != 1_000_000_000_000+int64(i) || s.Dur != 1_000_000 || s.Depth != 0 {
			t.Fatalf("span %d: %+v", i, s)
		}
		if i > 0 && !(spans[i-1].TS < s.TS && s.TS < spans[i-1].TS+spans[i-1].Dur && spans[i-1].TS+spans[i-1].Dur < s.TS+s.Dur) {
			t.Fatalf("span %d does not overlap the next partially: %+v, %+v", i-1, spans[i-1], s)
		}
	}
}

func TestNestedSpans(t *testing.T) {
	t.Parallel()
	const n = 2000
	spans := readSpans(t, NestedSpans(n))
	if len(spans) != n {
		t.Fatalf("%d spans, want %d", len(spans), n)
	}
	for i, s := range spans {
		if s.Pid != 4300 || s.Tid != 4300 || s.Depth != int32(n-1-i) {
			t.Fatalf("span %d: %+v, want depth %d", i, s, n-1-i)
		}
		// Innermost first: each span holds the one logged before it, and
		// starts and ends strictly outside it.
		if i > 0 {
			in := spans[i-1]
			if !(s.TS < in.TS && in.TS+in.Dur < s.TS+s.Dur) {
				t.Fatalf("span at depth %d [%d, %d) does not hold the one at depth %d [%d, %d)", s.Depth, s.TS, s.TS+s.Dur, in.Depth, in.TS, in.TS+in.Dur)
			}
		}
	}
}

// checkRun checks that bind and run are a run as Processes and Threads
// write it: its chip.run.bind, then its chip.run, on one thread.
func checkRun(t *testing.T, bind, run strace.Span) {
	t.Helper()
	if bind.Name != "chip.run.bind" || bind.Depth != 1 || run.Name != "chip.run" || run.Depth != 0 ||
		bind.Pid != run.Pid || bind.Tid != run.Tid || bind.Inv != run.Inv ||
		bind.TS < run.TS || bind.TS+bind.Dur > run.TS+run.Dur {
		t.Fatalf("%+v is not a run's bind, %+v its root", bind, run)
	}
}

func TestProcesses(t *testing.T) {
	t.Parallel()
	const n = 300
	spans := readSpans(t, Processes(n))
	if len(spans) != 2*n {
		t.Fatalf("%d spans, want %d", len(spans), 2*n)
	}
	if p, th := distinctIDs(spans); p != n || th != n {
		t.Errorf("%d pids and %d tids, want %d of each", p, th, n)
	}
	for i := 0; i < len(spans); i += 2 {
		checkRun(t, spans[i], spans[i+1])
		if pid := int32(10_000 + i/2); spans[i].Pid != pid || spans[i].Tid != int64(pid) {
			t.Fatalf("process %d: %+v", i/2, spans[i])
		}
	}
}

func TestThreads(t *testing.T) {
	t.Parallel()
	const n, runs = 300, 4
	spans := readSpans(t, Threads(n, runs))
	if len(spans) != 2*n*runs {
		t.Fatalf("%d spans, want %d", len(spans), 2*n*runs)
	}
	if p, th := distinctIDs(spans); p != 1 || th != n {
		t.Errorf("%d pids and %d tids, want 1 and %d", p, th, n)
	}
	per := map[int64]int{}
	invs := map[uint64]bool{}
	last := map[int64]int64{} // each thread's last run's end
	for i := 0; i < len(spans); i += 2 {
		bind, run := spans[i], spans[i+1]
		checkRun(t, bind, run)
		if run.Pid != 4100 {
			t.Fatalf("run %d: %+v", i/2, run)
		}
		if i > 0 && run.TS <= spans[i-1].TS {
			t.Fatalf("run %d starts at %d, before the one logged before it (%d)", i/2, run.TS, spans[i-1].TS)
		}
		if end, ok := last[run.Tid]; ok && run.TS < end {
			t.Fatalf("run %d overlaps its thread's last run", i/2)
		}
		per[run.Tid]++
		invs[run.Inv] = true
		last[run.Tid] = run.TS + run.Dur
	}
	for tid, c := range per {
		if c != runs {
			t.Errorf("thread %d has %d runs, want %d", tid, c, runs)
		}
	}
	if len(invs) != n*runs {
		t.Errorf("%d invs, want one a run (%d)", len(invs), n*runs)
	}
}

func TestDistinctIDs(t *testing.T) {
	t.Parallel()
	const n = 1000
	for _, tc := range []struct {
		name       string
		log        []byte
		pids, tids int
	}{
		{"DistinctPids", DistinctPids(n), n, n},
		{"DistinctTids", DistinctTids(n), 1, n},
	} {
		spans := readSpans(t, tc.log)
		if p, th := distinctIDs(spans); len(spans) != n || p != tc.pids || th != tc.tids {
			t.Errorf("%s: %d spans, %d pids, %d tids: want %d, %d, %d", tc.name, len(spans), p, th, n, tc.pids, tc.tids)
		}
		for i := 1; i < len(spans); i++ {
			if spans[i].Tid == spans[i-1].Tid || spans[i].TS < spans[i-1].TS+spans[i-1].Dur {
				t.Fatalf("%s: span %d %+v is not of a new thread, after the one before it", tc.name, i, spans[i])
			}
		}
	}
}

func TestBusyDispatch(t *testing.T) {
	t.Parallel()
	const busy = 70
	spans := readSpans(t, BusyDispatch(busy))
	if len(spans) != busy+3 {
		t.Fatalf("%d spans, want %d", len(spans), busy+3)
	}
	submit, dispatch := spans[len(spans)-2], spans[len(spans)-1]
	if submit.Name != "node.submit" || dispatch.Name != "node.dispatch" || submit.Pid != dispatch.Pid || submit.Tid == dispatch.Tid {
		t.Fatalf("the hand-off: %+v, %+v", submit, dispatch)
	}
	for _, key := range []string{"run_id", "task_slot"} {
		a, _ := submit.Attr(key)
		b, _ := dispatch.Attr(key)
		if a.Value == "" || a.Value != b.Value {
			t.Errorf("%s: submit's %q, dispatch's %q", key, a.Value, b.Value)
		}
	}
	overlapped := 0
	for i, s := range spans[:len(spans)-2] {
		if s.Name != "ext.app.busy" {
			continue
		}
		overlapped++
		if s.Tid != dispatch.Tid || !(s.TS < dispatch.TS && dispatch.TS < s.TS+s.Dur && s.TS+s.Dur < dispatch.TS+dispatch.Dur) {
			t.Errorf("busy span %d %+v does not overlap the dispatch partially", i, s)
		}
		if next := spans[i+1]; next.Name == "ext.app.busy" && !(next.TS < s.TS+s.Dur) {
			t.Errorf("busy span %d does not overlap the next", i)
		}
	}
	if overlapped != busy {
		t.Errorf("%d busy spans, want %d", overlapped, busy)
	}
}

func TestChangeOneDur(t *testing.T) {
	t.Parallel()
	log, _ := GenerateTruth(Config{Seed: 3, Rounds: 4})
	changed, dur := ChangeOneDur(log, "chip.run.bind.args")
	if len(changed) != len(log) {
		t.Fatalf("the copy is %d bytes, the log %d", len(changed), len(log))
	}
	diff := 0
	for i := range log {
		if log[i] != changed[i] {
			diff++
		}
	}
	if diff != 1 {
		t.Errorf("%d bytes changed, want 1", diff)
	}
	// Every record read back as from the log, but the one span's dur.
	want, st := readBack(t, log)
	got, stc := readBack(t, changed)
	if st.Lost() != 0 || stc.Lost() != 0 || len(want) != len(got) {
		t.Fatalf("%d records read back from the copy, %d from the log, %d and %d lost", len(got), len(want), stc.Lost(), st.Lost())
	}
	first := slices.IndexFunc(want, func(rec strace.Record) bool {
		return rec.Kind == strace.KindSpan && rec.Span.Name == "chip.run.bind.args"
	})
	if first < 0 {
		t.Fatal("the log holds no chip.run.bind.args")
	}
	if want[first].Span.Dur == dur {
		t.Errorf("the log's first chip.run.bind.args has the changed dur already (%d)", dur)
	}
	want[first].Span.Dur = dur
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("the copy read back differs from the log with its first chip.run.bind.args of dur %d (-want +got):\n%s", dur, d)
	}
	if c, d := ChangeOneDur(log, "no.such.span"); c != nil || d != 0 {
		t.Errorf("a name the log does not hold: %d bytes, dur %d; want nil, 0", len(c), d)
	}
}

// TestDamagedGzips: each damaged stream fails the way its name says, the
// cut ones after a prefix of the log.
func TestDamagedGzips(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	Generate(&b, Config{Seed: 1, Rounds: 4})
	log := b.Bytes()
	if got := gunzip(t, Gzip(log)); !bytes.Equal(got, log) {
		t.Fatal("Gzip does not give the log back")
	}
	want := map[string]error{"half": io.ErrUnexpectedEOF, "no trailer": io.ErrUnexpectedEOF, "half a trailer": io.ErrUnexpectedEOF, "bad checksum": gzip.ErrChecksum}
	var names []string
	for _, d := range DamagedGzips(log) {
		names = append(names, d.Name)
		zr, err := gzip.NewReader(bytes.NewReader(d.Gz))
		if err != nil {
			t.Fatalf("%s: %v", d.Name, err)
		}
		got, err := io.ReadAll(zr)
		var ce flate.CorruptInputError
		switch {
		case d.Name != "corrupt data" && !bytes.HasPrefix(log, got): // corrupt data may decode wrong before it fails
			t.Errorf("%s: reads %d bytes that are no prefix of the log", d.Name, len(got))
		case d.Name == "corrupt data" && !errors.As(err, &ce), d.Name != "corrupt data" && !errors.Is(err, want[d.Name]):
			t.Errorf("%s: read error %v", d.Name, err)
		}
	}
	if len(names) != 5 {
		t.Errorf("damages %q, want five", names)
	}
}

func gunzip(t *testing.T, z []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(z))
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
