package strace

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// recycleLogs returns logs that exercise every kind of record and string: the
// hand-made ones, the realistic one, a generated one, and one with long
// text values and percent-encoded names and keys.
func recycleLogs(t *testing.T) map[string][]byte {
	t.Helper()
	logs := map[string][]byte{}
	for _, path := range append(handMadeLogs(t), filepath.Join("testdata", "realistic.log")) {
		logs[filepath.Base(path)] = readFile(t, path)
	}
	var gen bytes.Buffer
	if _, err := generateLog(&gen, 1<<20, 3); err != nil {
		t.Fatal(err)
	}
	logs["generated"] = gen.Bytes()
	var odd strings.Builder
	for i := range 3 * mergeBatchLen {
		odd.WriteString(spanLine(int64(i), fmt.Sprintf("chip.run%%2Ex%d", i%5),
			fmt.Sprintf(" k%%3D%d=v%d short=%s canon=%s long=%s bare n=%d",
				i%3, i%7, strings.Repeat("s", 64+i%3), strings.Repeat("c", CanonicalValueLen-i%2), strings.Repeat("l", CanonicalValueLen+1+i%2), i)))
		if i%10 == 0 {
			fmt.Fprintf(&odd, "[mono_ns=%d][T0x1][INFO] prepare: [bind.cpp:%d] bind phase=p%d start_ns=1 dur_ns=2 role=w%d n=%d\n", i, i%3, i%4, i%2, i)
		}
	}
	logs["odd"] = []byte(odd.String())
	return logs
}

// mergeBoth reads a log, merged with a generated one, through a default
// Merger and a recycled one in step, calling each with both records as they
// are read (the default one owns its memory; the recycled one is valid until
// the next Read).
func mergeBoth(t *testing.T, name string, log []byte, each func(def, rec *Record)) {
	t.Helper()
	var gen bytes.Buffer
	if _, err := generateLog(&gen, 256<<10, 9); err != nil {
		t.Fatal(err)
	}
	inputs := func() []MergeInput {
		return []MergeInput{{Name: "log", R: bytes.NewReader(log)}, {Name: "gen", R: bytes.NewReader(gen.Bytes()), MonoShift: 1e9}}
	}
	opts := logOptions(name)
	def := NewMerger(inputs(), opts...)
	defer def.Close()
	rec := NewMerger(inputs(), append(opts, WithRecycledMemory())...)
	defer rec.Close()
	for n := 0; ; n++ {
		d, din, derr := def.Read()
		r, rin, rerr := rec.Read()
		if derr != nil || rerr != nil {
			if derr != io.EOF || rerr != io.EOF {
				t.Fatalf("record %d: errors %v (default) and %v (recycled)", n, derr, rerr)
			}
			break
		}
		if din != rin {
			t.Fatalf("record %d: input %d (default) and %d (recycled)", n, din, rin)
		}
		each(d, r)
	}
	def.Close()
	rec.Close()
	if diff := quickDiff(def.Stats(), rec.Stats(), statsCmp); diff != "" {
		t.Errorf("stats (-default +recycled):\n%s", diff)
	}
}

// statsCmp compares Stats by the problems' contents.
var statsCmp = cmp.Options{
	cmp.Transformer("problems", func(ps []*SyntaxError) []SyntaxError {
		out := make([]SyntaxError, len(ps))
		for i, p := range ps {
			out[i] = *p
		}
		return out
	}),
	cmpopts.EquateErrors(),
}

// A recycled Merger returns the records a default one returns.
func TestRecycledMergerReadsAsDefault(t *testing.T) {
	t.Parallel()
	for name, log := range recycleLogs(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			mergeBoth(t, name, log, func(def, rec *Record) {
				if diff := quickDiff(def.Clone(), rec.Clone()); diff != "" {
					t.Fatalf("%s (-default +recycled):\n%s", def.Pos, diff)
				}
			})
		})
	}
}

// canonical returns the strings of rec that a recycled Merger keeps valid
// for good.
func canonical(rec *Record) []string {
	s := []string{rec.Prefix.Level, rec.Prefix.Func, rec.Span.Name, rec.BindPhase.Phase, rec.BindPhase.Source}
	for _, attrs := range [][]Attr{rec.Span.Attrs, rec.BindPhase.Attrs} {
		for _, a := range attrs {
			s = append(s, a.Key)
			if a.Type == TypeString && len(a.Value) <= CanonicalValueLen {
				s = append(s, a.Value)
			}
		}
	}
	return s
}

// The canonical strings of the records a recycled Merger returned stay
// unchanged once the whole log is read (under the race detector the memory
// recycled is poisoned meanwhile), also once the intern table is full.
func TestRecycledMergerCanonicalStringsStay(t *testing.T) {
	t.Parallel()
	logs := recycleLogs(t)
	var full strings.Builder
	for i := range maxInterned + 2*mergeBatchLen*inputBatches(1) {
		full.WriteString(spanLine(int64(i), fmt.Sprintf("n%d", i), fmt.Sprintf(" k%d=v%d", i, i)))
	}
	logs["full"] = []byte(full.String())
	for name, log := range logs {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var kept, want []string
			var first []Attr // the attributes of the first span with some
			var firstWas Attr
			mergeBoth(t, name, log, func(def, rec *Record) {
				for i, s := range canonical(rec) {
					kept = append(kept, s)
					want = append(want, canonical(def)[i])
				}
				if first == nil && len(rec.Span.Attrs) > 0 {
					first, firstWas = rec.Span.Attrs, rec.Span.Attrs[0]
				}
			})
			for i := range kept {
				if kept[i] != want[i] {
					t.Fatalf("canonical string %d: %q, read as %q", i, kept[i], want[i])
				}
			}
			if poison && len(log) > 1<<20 && first[0] == firstWas {
				t.Errorf("under the race detector, the first span's attributes were not poisoned once recycled")
			}
		})
	}
}

// mergeAllocs returns the allocations of reading log through a Merger of
// opts, and the number of records.
func mergeAllocs(t *testing.T, log []byte, opts ...Option) (allocs uint64, records int) {
	t.Helper()
	var ms0, ms1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms0)
	m := NewMerger([]MergeInput{{Name: "a", R: bytes.NewReader(log)}}, opts...)
	for {
		_, _, err := m.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		records++
	}
	m.Close()
	runtime.ReadMemStats(&ms1)
	return ms1.Mallocs - ms0.Mallocs, records
}

// A recycled Merger allocates nothing per record once its memory holds a
// batch of the runtime's records: reading twice as much costs no more than
// a few blocks more (a batch's memory grows to the most its records needed;
// how many batches are in flight, at most inputBatches(n)+2 for each of n inputs, depends
// on the goroutines' timing). The default Merger allocates as it reads,
// which shows the measure sees the allocations a Merger makes.
func TestRecycledMergerAllocations(t *testing.T) {
	if testing.Short() && poison {
		t.Skip("slow under the race detector")
	}
	var one bytes.Buffer
	if _, err := generateLog(&one, 2<<20, 1); err != nil {
		t.Fatal(err)
	}
	two := bytes.Repeat(one.Bytes(), 2)
	for _, c := range []struct {
		name               string
		opts               []Option
		minAdded, maxAdded uint64 // allocations the second half adds
	}{
		{"recycled", []Option{WithRecycledMemory()}, 0, 24},
		{"default", nil, 10, math.MaxUint64},
	} {
		a1, n1 := mergeAllocs(t, one.Bytes(), c.opts...)
		a2, n2 := mergeAllocs(t, two, c.opts...)
		added := a2 - min(a1, a2)
		t.Logf("%s: %d allocations for %d records, %d for %d: %d for the %d records added", c.name, a1, n1, a2, n2, added, n2-n1)
		if added < c.minAdded || added > c.maxAdded {
			t.Errorf("%s: %d allocations for %d records added, want %d to %d", c.name, added, n2-n1, c.minAdded, c.maxAdded)
		}
	}
}

// A Reader reset for each chunk of a log reads what a new Reader of each
// chunk reads, and its prefixes' levels and functions stay valid.
func TestReaderResetBytes(t *testing.T) {
	t.Parallel()
	logs := recycleLogs(t)
	var kept, want []string
	for name, log := range logs {
		opts := logOptions(name)
		var rd *Reader
		for off := 0; off < len(log); {
			end := min(off+64<<10, len(log))
			if k := bytes.IndexByte(log[end:], '\n'); k >= 0 {
				end += k + 1
			} else {
				end = len(log)
			}
			chunk := log[off:end]
			off = end
			fresh := NewBytesReader(chunk, opts...)
			if rd == nil {
				rd = NewBytesReader(chunk, opts...)
			} else {
				rd.ResetBytes(chunk)
			}
			for {
				w, werr := fresh.Read()
				g, gerr := rd.Read()
				if werr != gerr {
					t.Fatalf("%s: errors %v (new) and %v (reset)", name, werr, gerr)
				}
				if werr != nil {
					break
				}
				if diff := quickDiff(w, g); diff != "" {
					t.Fatalf("%s: %s (-new +reset):\n%s", name, w.Pos, diff)
				}
				kept = append(kept, g.Prefix.Level, g.Prefix.Func)
				want = append(want, w.Prefix.Level, w.Prefix.Func)
			}
			if diff := quickDiff(fresh.Stats(), rd.Stats(), statsCmp); diff != "" {
				t.Fatalf("%s: stats (-new +reset):\n%s", name, diff)
			}
		}
	}
	if diff := quickDiff(want, kept); diff != "" {
		t.Errorf("prefixes read (-read +kept):\n%s", diff)
	}
}

// A Reader reset for each chunk allocates nothing once its memory holds a
// chunk.
func TestReaderResetBytesAllocations(t *testing.T) {
	var log bytes.Buffer
	if _, err := generateLog(&log, 256<<10, 1); err != nil {
		t.Fatal(err)
	}
	rd := NewBytesReader(nil)
	read := func() {
		rd.ResetBytes(log.Bytes())
		for {
			if _, err := rd.Read(); err != nil {
				break
			}
		}
	}
	read()
	if n := testing.AllocsPerRun(5, read); n != 0 {
		t.Errorf("%v allocations per chunk read", n)
	}
}
