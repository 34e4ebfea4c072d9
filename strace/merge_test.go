package strace

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
	"time"
	"unsafe"

	"github.com/google/go-cmp/cmp"
)

func spanLine(mono int64, name string, attrs string) string {
	s := fmt.Sprintf("[STRACE] v=1 pid=1 tid=1 inv=1 hid=1 depth=0 name=%s ts=1 dur=1%s\n", name, attrs)
	if mono < 0 {
		return s
	}
	return fmt.Sprintf("[mono_ns=%d][T0x1][TIMING] emit_host_span: ", mono) + s
}

// readMerged reads every record of a merge as "input:name".
func readMerged(t *testing.T, m *Merger) ([]string, error) {
	t.Helper()
	var got []string
	for {
		rec, in, err := m.Read()
		if err == io.EOF {
			return got, nil
		}
		if err != nil {
			return got, err
		}
		got = append(got, fmt.Sprintf("%d:%s", in, rec.Span.Name))
	}
}

// Records come in the order they were written across inputs; a record
// without a prefix keeps its place in its own input; ties go to the earlier
// input; MonoShift moves an input on the common axis.
func TestMergeOrder(t *testing.T) {
	t.Parallel()
	a := spanLine(10, "a1", "") + spanLine(-1, "a2", "") + spanLine(30, "a3", "") + spanLine(50, "a4", "")
	b := spanLine(-1, "b0", "") + spanLine(20, "b1", "") + spanLine(30, "b2", "") + spanLine(-1, "b3", "") + spanLine(60, "b4", "")
	c := spanLine(1005, "c1", "") + spanLine(1040, "c2", "")
	m := NewMerger([]MergeInput{{Name: "a", R: strings.NewReader(a)}, {Name: "b", R: strings.NewReader(b)}, {Name: "c", R: strings.NewReader(c), MonoShift: -1000}})
	defer m.Close()
	got, err := readMerged(t, m)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"1:b0", "2:c1", "0:a1", "0:a2", "1:b1", "0:a3", "1:b2", "1:b3", "2:c2", "0:a4", "1:b4"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
	if _, _, err := m.Read(); err != io.EOF {
		t.Errorf("Read after the end: %v", err)
	}
	m.Close()
	st := m.Stats()
	if len(st) != 3 || st[0].Records.Spans != 4 || st[1].Records.Spans != 5 || st[2].Records.Spans != 2 {
		t.Errorf("stats: %+v", st)
	}
}

// WithKinds selects the records the merge returns; the others are counted.
func TestMergeKinds(t *testing.T) {
	t.Parallel()
	log := "[stamp] x\n" + spanLine(1, "s", "") + "bind phase=args start_ns=1 dur_ns=2\n" +
		"[mono_ns=2][T0x1][TIMING] clock_anchor: [CLOCK_ANCHOR] v=1 pid=1 mono_ns=1 wall_ns=2\n"
	m := NewMerger([]MergeInput{{Name: "a", R: strings.NewReader(log)}}, WithKinds(KindSpan, KindBindPhase))
	var kinds []Kind
	for {
		rec, _, err := m.Read()
		if err != nil {
			break
		}
		kinds = append(kinds, rec.Kind)
	}
	m.Close()
	if diff := cmp.Diff([]Kind{KindSpan, KindBindPhase}, kinds); diff != "" {
		t.Errorf("kinds (-want +got):\n%s", diff)
	}
	if st := m.Stats()[0]; st.Records.Total() != 4 {
		t.Errorf("records: %+v", st.Records)
	}
}

// A record's contents stay as they were read after further Reads and after
// Close (the Record value is reused, so a shallow copy keeps it): its
// attributes are never written again, its strings are shared among repeats.
func TestMergeRecordsOwnTheirMemory(t *testing.T) {
	t.Parallel()
	var log strings.Builder
	for i := range 3 * mergeBatchLen {
		log.WriteString(spanLine(int64(i), "chip.run", fmt.Sprintf(" role=worker n=%d", i)))
	}
	m := NewMerger([]MergeInput{{Name: "a", R: strings.NewReader(log.String())}})
	var recs []Record
	var kept []Record
	for {
		rec, _, err := m.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, *rec)
		kept = append(kept, rec.Clone())
	}
	m.Close()
	for i, rec := range recs {
		if diff := quickDiff(kept[i], rec); diff != "" {
			t.Fatalf("record %d changed (-read +now):\n%s", i, diff)
		}
		if a, _ := rec.Span.Attr("n"); a.Int != int64(i) {
			t.Fatalf("record %d: n=%d", i, a.Int)
		}
	}
	first, last := recs[0].Span, recs[len(recs)-1].Span
	if unsafe.StringData(first.Name) != unsafe.StringData(last.Name) ||
		unsafe.StringData(first.Attrs[0].Value) != unsafe.StringData(last.Attrs[0].Value) {
		t.Error("repeated names and short values are not shared")
	}
}

// Closed early, a merge leaves no goroutine behind.
func TestMergeCloseEarly(t *testing.T) {
	before := runtime.NumGoroutine()
	var log strings.Builder
	for i := range 20 * mergeBatchLen {
		log.WriteString(spanLine(int64(i), "chip.run", ""))
	}
	var ins []MergeInput
	for i := range 4 {
		ins = append(ins, MergeInput{Name: fmt.Sprint(i), R: strings.NewReader(log.String())})
	}
	m := NewMerger(ins)
	for range 10 {
		if _, _, err := m.Read(); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := m.Read(); err == nil || err == io.EOF {
		t.Errorf("Read after Close: %v", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines after Close, %d before", n, before)
	}
}

// An input whose reader fails hands over its records first; the error
// names the input.
func TestMergeReadError(t *testing.T) {
	t.Parallel()
	boom := errors.New("disk gone")
	var log strings.Builder
	for i := range mergeBatchLen + 10 {
		log.WriteString(spanLine(int64(i), "chip.run", ""))
	}
	r := io.MultiReader(strings.NewReader(log.String()), iotest.ErrReader(boom))
	m := NewMerger([]MergeInput{{Name: "ok.log", R: strings.NewReader(spanLine(1e9, "late", ""))}, {Name: "bad.log", R: r}})
	defer m.Close()
	got, err := readMerged(t, m)
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "bad.log") {
		t.Fatalf("error %v", err)
	}
	if len(got) != mergeBatchLen+10 {
		t.Errorf("%d records before the error, want %d", len(got), mergeBatchLen+10)
	}
	if _, _, err2 := m.Read(); err2 != err {
		t.Errorf("the error is not kept: %v", err2)
	}
}

type panicReader struct{ r io.Reader }

func (p *panicReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	if err == io.EOF {
		panic("reader exploded")
	}
	return n, err
}

// A panic of an input's reader reaches the caller of Read.
func TestMergeReaderPanic(t *testing.T) {
	t.Parallel()
	m := NewMerger([]MergeInput{{Name: "p", R: &panicReader{strings.NewReader(spanLine(1, "a", ""))}}})
	defer m.Close()
	defer func() {
		if v := recover(); v != "reader exploded" {
			t.Errorf("recovered %v", v)
		}
	}()
	readMerged(t, m)
	t.Error("no panic")
}

func BenchmarkMerge(b *testing.B) { benchMerge(b) }

// BenchmarkMergeRecycled is BenchmarkMerge with WithRecycledMemory.
func BenchmarkMergeRecycled(b *testing.B) { benchMerge(b, WithRecycledMemory()) }

func benchMerge(b *testing.B, opts ...Option) {
	one, err := os.ReadFile("testdata/realistic.log")
	if err != nil {
		b.Fatal(err)
	}
	log := bytes.Repeat(one, (4<<20)/len(one)+1)
	b.SetBytes(2 * int64(len(log)))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		m := NewMerger([]MergeInput{{Name: "a", R: bytes.NewReader(log)}, {Name: "b", R: bytes.NewReader(log)}}, append(opts, WithKinds(KindSpan, KindBindPhase))...)
		for {
			if _, _, err := m.Read(); err != nil {
				if err != io.EOF {
					b.Fatal(err)
				}
				break
			}
		}
		m.Close()
	}
}

// own interns every string a span repeats to the very string (the same
// address) that looking each up in the table gives, whatever it compared
// first; also once the table is full.
func TestOwnInternsAsTheTable(t *testing.T) {
	t.Parallel()
	log := readFile(t, "testdata/realistic.log")
	log = append(log, bytes.ReplaceAll(log, []byte("name=chip.run"), []byte("name=chip.run.x"))...)
	for _, full := range []bool{false, true} {
		rd := NewBytesReader(log)
		names, plain := newInternTable(), newInternTable()
		if full {
			for i := range maxInterned - 40 {
				k := strconv.Itoa(i)
				names.of(k)
				plain.of(k)
			}
		}
		for {
			rec, err := rd.Read()
			if err != nil {
				break
			}
			want := rec.Clone()
			own(&rec, &names)
			if rec.Kind != KindSpan {
				continue
			}
			same := func(a, b string) bool { return a == b && unsafe.StringData(a) == unsafe.StringData(b) }
			if !same(plain.of(want.Span.Name), rec.Span.Name) {
				t.Fatalf("name %q interned elsewhere", rec.Span.Name)
			}
			for i, a := range want.Span.Attrs {
				got := rec.Span.Attrs[i]
				v := a.Value
				if a.Type == TypeString && len(v) <= maxInternedValue {
					v = plain.of(v)
				}
				if !same(plain.of(a.Key), got.Key) || !same(v, got.Value) {
					t.Fatalf("%s: attribute %q=%q interned elsewhere", rec.Pos, a.Key, a.Value)
				}
			}
		}
	}
}
