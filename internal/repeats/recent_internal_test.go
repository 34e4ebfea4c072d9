package repeats

import (
	"errors"
	"flag"
	"io"
	"math/rand/v2"
	"os"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"github.com/phasetrace/phasetrace/strace"
	"github.com/phasetrace/phasetrace/strace/stracetest"
)

// The repeat detector drops exactly the spans equal in (pid, tid, inv, name,
// ts, dur) to one of the last recentSpanCount, whatever memory the spans it was
// given held.
func TestRecentSpans(t *testing.T) {
	long := strings.Repeat("v", strace.CanonicalValueLen+1)
	span := func(ts int64, attrs ...strace.Attr) strace.Span {
		return strace.Span{Pid: 1, Tid: 2, Inv: 3, Hid: 4, Depth: 1, Name: "chip.run.bind", TS: ts, Dur: 10, Attrs: attrs}
	}
	r := NewRecentSpans(nil)
	// Each span is given in a scratch copy, overwritten after the call, as
	// the reader's recycled records are.
	scratch := make([]strace.Attr, 8)
	var text []byte
	repeated := func(sp strace.Span) bool {
		in := sp
		in.Attrs = append(scratch[:0], sp.Attrs...)
		for i := range in.Attrs {
			if v := in.Attrs[i].Value; len(v) > strace.CanonicalValueLen {
				text = append(text[:0], v...)
				in.Attrs[i].Value = unsafe.String(&text[0], len(text))
			}
		}
		got := r.repeated(&in)
		for i := range scratch {
			scratch[i] = strace.Attr{Key: "poison", Value: "poison", Int: -1}
		}
		for i := range text {
			text[i] = '#'
		}
		return got
	}
	first := span(100, strace.Int("n", 7), strace.String("s", "x"), strace.String("l", long))
	if repeated(first) {
		t.Fatal("first span taken for a repeat")
	}
	if !repeated(first) {
		t.Error("the same span again not taken for a repeat")
	}
	// A span repeats when equal in (pid, tid, inv, name, ts, dur), whatever
	// its other fields.
	same := []strace.Span{
		span(100, strace.Int("n", 8), strace.String("s", "x"), strace.String("l", long)),
		span(100, strace.Int("n", 7), strace.String("s", "y")),
		span(100),
	}
	hid := span(100, first.Attrs...)
	hid.Hid, hid.Depth, hid.AttrsTruncated = 5, 2, true
	same = append(same, hid)
	for i, sp := range same {
		if !repeated(sp) {
			t.Errorf("span %d equal in its key not taken for a repeat", i)
		}
	}
	differ := []strace.Span{span(101, first.Attrs...), span(100, first.Attrs...), span(100, first.Attrs...), span(100, first.Attrs...), span(100, first.Attrs...), span(100, first.Attrs...)}
	differ[1].Pid++
	differ[2].Tid++
	differ[3].Inv++
	differ[4].Dur++
	differ[5].Name = "chip.run.bOnd"
	long1, long2 := span(300), span(300)
	long1.Name = "chip.run.runner_run.device_wall." + strings.Repeat("a", 40)
	long2.Name = "chip.run.runner_run.device_wall." + strings.Repeat("a", 20) + "b" + strings.Repeat("a", 19)
	differ = append(differ, long1, long2)
	for i, sp := range differ {
		if repeated(sp) {
			t.Errorf("span %d taken for a repeat of an unequal one", i)
		}
	}
	// The ring: a span repeats while fewer than recentSpanCount spans came
	// after it.
	r = NewRecentSpans(nil)
	for i := range RecentSpanCount {
		if repeated(span(int64(i), strace.Int("i", int64(i)))) {
			t.Fatalf("span %d taken for a repeat", i)
		}
	}
	if !repeated(span(0, strace.Int("i", 0))) {
		t.Error("the oldest span of the ring not taken for a repeat")
	}
	for i := range 3 * RecentSpanCount {
		if repeated(span(int64(RecentSpanCount+i), strace.Int("i", int64(i)))) {
			t.Fatalf("span %d taken for a repeat", RecentSpanCount+i)
		}
	}
	// Span i of the loop is the (W+i)th remembered (W = recentSpanCount): W-2
	// came after span 2W+1, W after span 2W-1, which left the ring.
	if !repeated(span(int64(3*RecentSpanCount+1), strace.Int("i", int64(2*RecentSpanCount+1)))) {
		t.Error("a span in the ring not taken for a repeat")
	}
	if repeated(span(int64(3*RecentSpanCount-1), strace.Int("i", int64(2*RecentSpanCount-1)))) {
		t.Error("a span out of the ring taken for a repeat")
	}
}

// linkSpan is a span of the tests of links, told apart by its ts.
func linkSpan(ts int64) strace.Span {
	return strace.Span{Pid: 1, Tid: 2, Inv: 3, Hid: 4, Depth: 1, Name: "chip.run", TS: ts, Dur: 10}
}

func bucketOf(sp strace.Span) uint64 { return spanHash(&sp) & (dedupBuckets - 1) }

// oneChain returns n spans of one chain (ts below 0).
func oneChain(n int) []strace.Span {
	var ys []strace.Span
	for ts := int64(-1); len(ys) < n; ts-- {
		if sp := linkSpan(ts); len(ys) == 0 || bucketOf(sp) == bucketOf(ys[0]) {
			ys = append(ys, sp)
		}
	}
	return ys
}

// remember gives r each span, none of which may repeat.
func admit(t *testing.T, r *RecentSpans, spans ...strace.Span) {
	t.Helper()
	for _, sp := range spans {
		if r.repeated(&sp) {
			t.Fatalf("span at %d taken for a repeat", sp.TS)
		}
	}
}

// rememberOthers gives r n spans of chains other than y's (ts from 0) and
// returns the ts after the last.
func rememberOthers(t *testing.T, r *RecentSpans, n int, y strace.Span) int64 {
	t.Helper()
	ts := int64(0)
	for ; n > 0; ts++ {
		if sp := linkSpan(ts); bucketOf(sp) != bucketOf(y) {
			if r.repeated(&sp) {
				t.Fatalf("span at %d taken for a repeat", ts)
			}
			n--
		}
	}
	return ts
}

// A link names a span by its sequence number modulo 2^linkSeqBits, so a
// chain idle that long has a head that reads as a link into the ring.
// The walk must still find exactly the spans of the ring: it visits the
// span of the ring in that ring slot and walks on from it to older ones.
func TestRecentSpansAliasedLinks(t *testing.T) {
	r := NewRecentSpans(nil)
	x := linkSpan(-1)
	admit(t, r, x)
	// Keep x's chain idle while 2^linkSeqBits+10 other spans come: x's
	// link then reads as the link of the span remembered 11th last.
	ts := rememberOthers(t, r, 1<<linkSeqBits+10, x)
	if r.repeated(&x) {
		t.Error("a span out of the ring (its chain's link aliased into it) taken for a repeat")
	}
	if !r.repeated(&x) {
		t.Error("the same span again not taken for a repeat")
	}
	// The spans of the ring are still found.
	for _, back := range []int64{1, 11, 12, 100, RecentSpanCount - 100} {
		sp := linkSpan(ts - back)
		if bucketOf(sp) == bucketOf(x) {
			continue
		}
		if !r.repeated(&sp) {
			t.Errorf("the span at %d (in the ring) not taken for a repeat", ts-back)
		}
	}
}

// A chain whose oldest link aliases the newest span of the same chain
// would loop forever but for the rule that a walk only goes to older spans.
func TestRecentSpansAliasedLoop(t *testing.T) {
	ys := oneChain(4)
	r := NewRecentSpans(nil)
	// y0 is remembered as span s; y1 as s+2^linkSeqBits-1; y2 as
	// s+2^linkSeqBits, so that y1's link to y0 reads as a link to y2.
	admit(t, r, ys[0])
	rememberOthers(t, r, 1<<linkSeqBits-2, ys[0])
	admit(t, r, ys[1], ys[2])
	admit(t, r, ys[3]) // walks y2, y1, then the aliased link, which must end it
	if !r.repeated(&ys[1]) || !r.repeated(&ys[2]) || r.repeated(&ys[0]) {
		t.Error("the chain's spans in the ring not found exactly")
	}
}

// A link exactly 2^linkSeqBits spans back reads as the span it leaves
// from: the walk, at that span already, must end there, not visit it again.
func TestRecentSpansAliasedSelf(t *testing.T) {
	ys := oneChain(3)
	r := NewRecentSpans(nil)
	// y0 is remembered as span s, y1 as s+2^linkSeqBits: y1's link to y0
	// reads as y1.
	admit(t, r, ys[0])
	rememberOthers(t, r, 1<<linkSeqBits-1, ys[0])
	admit(t, r, ys[1])
	admit(t, r, ys[2]) // walks y1, then the link that reads as y1, which must end it
	if !r.repeated(&ys[1]) || r.repeated(&ys[0]) {
		t.Error("the chain's spans in the ring not found exactly")
	}
}

// A link is never 0, which means none: not even the link of a span whose
// hash's top bits are 0, remembered as span 2^linkSeqBits-1 (its sequence
// number plus one then reads 0).
func TestRecentSpansZeroLink(t *testing.T) {
	z := linkSpan(-1)
	for spanHash(&z)>>(64-linkTagBits) != 0 {
		z.TS--
	}
	r := NewRecentSpans(nil)
	for ts := range int64(1<<linkSeqBits - 1) {
		if sp := linkSpan(ts); r.repeated(&sp) {
			t.Fatalf("span at %d taken for a repeat", ts)
		}
	}
	admit(t, r, z)
	if !r.repeated(&z) {
		t.Error("a span whose link would read 0 not taken for a repeat")
	}
}

// The repeat detector against an exact reference — the sequence number
// each span was remembered as — over a stream long enough for links to
// alias: new spans in three quarters of the chains, spans given again at
// ages around the ring's edge, and in the other quarter spans that come
// back 2^linkSeqBits spans later, give or take a ring, so that their
// chains' stale links read as links into the ring.
func TestRecentSpansAgainstReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	cold := func(sp strace.Span) bool { return bucketOf(sp) < dedupBuckets/4 }
	r := NewRecentSpans(nil)
	seqOf := map[int64]uint64{} // the sequence number a span (by ts) was remembered as
	var sent []int64            // the spans given, in order
	n := uint64(0)
	lastIn := map[uint64]uint64{} // per chain: the sequence number of its newest span
	aliased := 0                  // walks that started at a stale head read as in the ring
	give := func(ts int64) {
		sp := linkSpan(ts)
		if l, ok := lastIn[bucketOf(sp)]; ok && n-1-l >= RecentSpanCount && (uint32(n)-l32(l))&linkSeqMask < RecentSpanCount {
			aliased++
		}
		s, ok := seqOf[ts]
		want := ok && n-1-s < RecentSpanCount
		if got := r.repeated(&sp); got != want {
			t.Fatalf("span %d of the stream (ts %d, remembered as %d, %d remembered): repeated %v, want %v", len(sent), ts, s, n, got, want)
		}
		if !want {
			seqOf[ts] = n
			lastIn[bucketOf(sp)] = n
			n++
		}
		sent = append(sent, ts)
	}
	// Chains left idle: one span in each of some cold chains, to come back.
	back := map[uint64][]int64{} // when so many spans are remembered: spans to give again
	next := int64(0)
	fresh := func(isCold bool) int64 {
		for {
			next++
			if cold(linkSpan(next)) == isCold {
				return next
			}
		}
	}
	for n < 1<<linkSeqBits+2*RecentSpanCount {
		if ts := back[n]; len(ts) > 0 {
			// One at a time, the rest when one more is remembered.
			delete(back, n)
			if len(ts) > 1 {
				back[n+1] = append(back[n+1], ts[1:]...)
			}
			give(ts[0])
			continue
		}
		switch x := rng.IntN(100); {
		case x < 2 && n < RecentSpanCount:
			// A cold chain's span, given again and a new one after it
			// about 2^linkSeqBits later.
			ts := fresh(true)
			give(ts)
			at := n + 1<<linkSeqBits + uint64(rng.IntN(2*RecentSpanCount)) - RecentSpanCount
			back[at] = append(back[at], ts, fresh(true))
		case x < 10 && len(sent) > RecentSpanCount+16:
			// A span given again around the ring's edge.
			give(sent[len(sent)-RecentSpanCount+rng.IntN(16)-8])
		default:
			give(fresh(false))
		}
	}
	if aliased == 0 {
		t.Error("no walk started at a stale link read as one in the ring: the stream does not test aliasing")
	}
}

// l32 is the sequence field of the link of span s.
func l32(s uint64) uint32 { return uint32(s + 1) }

// BenchmarkRecentSpans replays the spans of the -benchfile log through the
// repeat detector, each from one reused record as the converter gets them:
//
//	go test -run XXX -bench RecentSpans -benchfile /tmp/mid.log .
func BenchmarkRecentSpans(b *testing.B) {
	f := flag.Lookup("benchfile")
	if f == nil || f.Value.String() == "" {
		b.Skip("no -benchfile log given")
	}
	in, err := os.Open(f.Value.String())
	if err != nil {
		b.Fatal(err)
	}
	defer in.Close()
	var spans []strace.Span
	rd := strace.NewReader(in)
	for {
		rec, err := rd.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			b.Fatal(err)
		}
		if rec.Kind == strace.KindSpan {
			spans = append(spans, rec.Span.Clone())
		}
	}
	var rec strace.Span
	scratch := make([]strace.Attr, 64)
	runtime.GC()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		r := NewRecentSpans(nil)
		for i := range spans {
			rec = spans[i]
			rec.Attrs = scratch[:copy(scratch, spans[i].Attrs)]
			r.repeated(&rec)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(spans)), "ns/span")
}

// The repeat detector shares its copies for exactly as long as it says: a
// copy numbered at least the valid number CopyOut was last told keeps every
// field until CopyOut is told again, and the copy just below it does not
// (its generation's memory serves the spans after), so a holder that
// copies out only the copies below it (runCollector.CopyOut) is not late.
func TestRecentSpansSharesExactly(t *testing.T) {
	// Spans of one size, so that a reused store is overwritten in place.
	span := func(i int) strace.Span {
		text := strings.Repeat(string(rune('a'+i%26)), strace.CanonicalValueLen+1)
		return strace.Span{Pid: 1, Tid: 2, Inv: uint64(i), Name: "chip.run", TS: int64(i), Dur: 1,
			Attrs: []strace.Attr{strace.Int("n", int64(i)), strace.String("text", text)}}
	}
	want := func(shared uint64) strace.Span {
		sp := span(int(shared - 1))
		sp.Attrs[0].Value = "" // a kept number drops its text
		return sp
	}
	shared := map[uint64]strace.Span{} // the copies, by number
	valid, checked := uint64(0), 0
	var r *RecentSpans
	r = NewRecentSpans(copyOutFunc(func(v uint64) {
		// Every copy valid since CopyOut was last told is intact; the one
		// below it, when it was reused, is not.
		for n, sp := range shared {
			if n >= valid && !stracetest.SameSpan(&sp, ptr(want(n))) {
				t.Fatalf("copy %d changed before CopyOut was told (valid from %d, now %d)", n, valid, v)
			}
		}
		if sp, ok := shared[valid-1]; valid > 0 && ok && stracetest.SameSpan(&sp, ptr(want(valid-1))) {
			t.Fatalf("copy %d still intact when CopyOut is told next: CopyOut was not exact", valid-1)
		}
		if valid > 0 {
			checked++
		}
		if v <= valid || v > r.n {
			t.Fatalf("CopyOut told %d after %d, with %d remembered", v, valid, r.n)
		}
		for n := range shared {
			if n < v-1 {
				delete(shared, n)
			}
		}
		valid = v
	}))
	for i := range 12 * RecentSpanCount {
		sp := span(i)
		l, repeated := r.Admit(&sp)
		kept, n := l.Span, l.N
		if repeated {
			t.Fatalf("span %d taken for a repeat", i)
		}
		shared[n] = *kept
		if i%5 == 0 {
			// A repeat in between: it lets nothing go.
			if _, repeated := r.Admit(&sp); !repeated {
				t.Fatalf("span %d again not taken for a repeat", i)
			}
		}
	}
	if checked < 8 {
		t.Fatalf("CopyOut was told %d times", checked)
	}
}

// repeated reports whether sp equals a recent span, remembering it if not.
func (r *RecentSpans) repeated(sp *strace.Span) bool {
	_, ok := r.Admit(sp)
	return ok
}

func ptr[T any](v T) *T { return &v }

// copyOutFunc copies out shared spans with a function (SharedHolder).
type copyOutFunc func(valid uint64)

func (f copyOutFunc) CopyOut(valid uint64) { f(valid) }
