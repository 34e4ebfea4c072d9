package strace

import (
	"bytes"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// FuzzReader: no input panics the reader, memory stays bounded by the
// maximum line, the counts always add up, every record sits at its marker,
// a missing last line end costs at most the last record (or marks its last
// attribute), joining two lines changes nothing but the join, and what is
// read writes and reads back the same.
func FuzzReader(f *testing.F) {
	for _, path := range handMadeLogs(f) {
		f.Add(readFile(f, path))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		recs, st := readAll(t, bytes.NewReader(data), WithMaxLine(MinMaxLine))
		checkInvariants(t, data, recs, st)
		if st.Lines > 0 && st.Lines != int64(bytes.Count(data, []byte("\n")))+boolInt(data[len(data)-1] != '\n') {
			t.Errorf("Lines = %d", st.Lines)
		}
		checkUnterminated(t, data, recs, st)
		checkJoined(t, data, recs, st)
		inPlace, st2, _ := readEvery(NewBytesReader(data, WithMaxLine(MinMaxLine)))
		if diff := quickDiff(recs, inPlace, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("records (-NewReader +NewBytesReader):\n%s", diff)
		}
		if diff := quickDiff(st, st2, cmp.Comparer(func(a, b *SyntaxError) bool { return *a == *b })); diff != "" {
			t.Errorf("stats (-NewReader +NewBytesReader):\n%s", diff)
		}
		checkRecycled(t, data, recs, st)
		var out bytes.Buffer
		w := NewWriter(&out)
		for _, r := range recs {
			if err := w.Write(r); err != nil {
				t.Fatal(err)
			}
		}
		back, st2 := readAll(t, bytes.NewReader(out.Bytes()))
		if st2.Lost() != 0 {
			t.Fatalf("rewritten records lost: %v\n%q", st2.Problems, out.Bytes())
		}
		if diff := quickDiff(cutAsWritten(t, recs, back), back, ignorePos); diff != "" {
			t.Errorf("read, write, read (-first +second):\n%s", diff)
		}
	})
}

// checkRecycled checks that what reuses memory reads data as a new Reader
// does (recs and st): a Reader reset onto data after reading other bytes,
// and a Merger with WithRecycledMemory (each record compared as it is read).
func checkRecycled(t *testing.T, data []byte, recs []Record, st Stats) {
	t.Helper()
	rd := NewBytesReader([]byte(spanLine(1, "x%20y", " a=b c=1 d")+"bind phase=p start_ns=1 dur_ns=2 e=f\n"), WithMaxLine(MinMaxLine))
	readEvery(rd)
	rd.ResetBytes(data)
	again, st2, _ := readEvery(rd)
	if diff := quickDiff(recs, again, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("records (-NewReader +ResetBytes):\n%s", diff)
	}
	if diff := quickDiff(st, st2, cmp.Comparer(func(a, b *SyntaxError) bool { return *a == *b })); diff != "" {
		t.Errorf("stats (-NewReader +ResetBytes):\n%s", diff)
	}
	m := NewMerger([]MergeInput{{R: bytes.NewReader(data)}}, WithMaxLine(MinMaxLine), WithRecycledMemory())
	defer m.Close()
	for i := 0; ; i++ {
		rec, _, err := m.Read()
		if err != nil {
			if i != len(recs) {
				t.Errorf("a recycled Merger read %d records, a Reader %d", i, len(recs))
			}
			break
		}
		if i >= len(recs) {
			continue
		}
		if diff := quickDiff(recs[i], rec.Clone(), cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("record %d (-Reader +recycled Merger):\n%s", i, diff)
		}
	}
}

// cutAsWritten returns recs with the fields the writer had to cut taken
// from back. A log the runtime did not write can hold a name or attribute
// text that fits its cap as read but not as the emitter encodes it (a raw
// '%' becomes %25), so writing it cuts it, as the emitter would: such a
// record must come back flagged as cut, and the same in everything else.
func cutAsWritten(t *testing.T, recs, back []Record) []Record {
	t.Helper()
	if len(recs) != len(back) {
		return recs
	}
	out := slices.Clone(recs)
	for i := range out {
		r := &out[i].Span
		if out[i].Kind != KindSpan {
			continue
		}
		b := back[i].Span
		if !r.NameTruncated && bytes.HasSuffix(appendName(nil, r.Name), []byte("~")) {
			if !b.NameTruncated {
				t.Errorf("record %d: name %q cut in writing but not flagged as cut: %q", i, r.Name, b.Name)
			}
			r.Name, r.NameTruncated = b.Name, b.NameTruncated
		}
		if !r.AttrsTruncated && bytes.HasSuffix(appendAttrText(nil, r.Attrs), []byte("~")) {
			if !b.AttrsTruncated {
				t.Errorf("record %d: attributes %v cut in writing but not flagged as cut: %v", i, r.Attrs, b.Attrs)
			}
			r.Attrs, r.AttrsTruncated = b.Attrs, b.AttrsTruncated
		}
	}
	return out
}

// checkUnterminated compares the reading of data with that of data ended by
// a line end: if data's last line has none, its last record is the only
// difference: counted as torn instead of returned, or returned with its
// last attribute marked as possibly cut (a span or bind phase line whose
// fixed fields came whole).
func checkUnterminated(t *testing.T, data []byte, recs []Record, st Stats) {
	t.Helper()
	open := len(data) > 0 && data[len(data)-1] != '\n'
	if st.Unterminated != open {
		t.Fatalf("Unterminated = %v for input ending %q", st.Unterminated, data[max(0, len(data)-8):])
	}
	if !open {
		return
	}
	full, st2 := readAll(t, bytes.NewReader(append(data[:len(data):len(data)], '\n')), WithMaxLine(MinMaxLine))
	cut := int64(len(full) - len(recs))
	if cut < 0 || cut > 1 || st.Torn != st2.Torn+cut ||
		st.Malformed != st2.Malformed || st.UnknownVersion != st2.UnknownVersion || st.InLongLines != st2.InLongLines {
		t.Fatalf("without the line end %d records, stats %+v; with it %d, %+v", len(recs), st, len(full), st2)
	}
	if st2.MaybeCut != 0 || st.MaybeCut != 0 && cut != 0 {
		t.Fatalf("maybe cut: %d without the line end (%d cut), %d with it", st.MaybeCut, cut, st2.MaybeCut)
	}
	kept := slices.Clone(recs)
	if st.MaybeCut == 1 {
		last := &kept[len(kept)-1]
		attrs := last.Span.Attrs
		if last.Kind == KindBindPhase {
			attrs = last.BindPhase.Attrs
		}
		if last.Pos.Line != st.Lines || len(attrs) == 0 || !attrs[len(attrs)-1].MaybeCut ||
			last.Kind != KindSpan && last.Kind != KindBindPhase {
			t.Fatalf("maybe cut, but the last record is %+v", *last)
		}
		attrs = slices.Clone(attrs)
		attrs[len(attrs)-1].MaybeCut = false
		last.Span.Attrs, last.BindPhase.Attrs = nil, nil
		if last.Kind == KindSpan {
			last.Span.Attrs = attrs
		} else {
			last.BindPhase.Attrs = attrs
		}
	}
	for _, r := range kept {
		for _, a := range append(r.Span.Attrs, r.BindPhase.Attrs...) {
			if a.MaybeCut {
				t.Fatalf("an attribute marked maybe cut elsewhere than last on the last line: %+v", r)
			}
		}
	}
	if diff := quickDiff(full[:len(recs)], kept, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("records before the cut differ (-with line end +without):\n%s", diff)
	}
	if cut == 1 {
		last := full[len(full)-1].Pos
		if last.Line != st.Lines || !hasProblemAt(st, ErrUnterminated, last.Offset) {
			t.Errorf("the record at %v is not counted as cut: %v", last, st.Problems)
		}
	}
}

// checkJoined joins two lines of data — the first whose successor starts
// with a log prefix or a record marker, and whose own text ends in neither
// a blank nor a CR — as two ranks writing one stream do, and checks that
// the join changes nothing but itself: the same records, the last of the
// first line (when its text reached the line end) now Joined, and the same
// counts but for one line, one byte and the join.
func checkJoined(t *testing.T, data []byte, recs []Record, st Stats) {
	t.Helper()
	at := -1
	for i := bytes.IndexByte(data, '\n'); i >= 0; {
		next := data[i+1:]
		if i > 0 && data[i-1] != ' ' && data[i-1] != '\t' && data[i-1] != '\r' && data[i-1] != '\n' &&
			(bytes.HasPrefix(next, markStrace) || bytes.HasPrefix(next, markAnchor) || startsWithPrefix(next)) {
			at = i
			break
		}
		k := bytes.IndexByte(next, '\n')
		if k < 0 {
			break
		}
		i += 1 + k
	}
	if at < 0 {
		return
	}
	lineStart := bytes.LastIndexByte(data[:at], '\n') + 1
	nextEnd := len(data)
	if k := bytes.IndexByte(data[at+1:], '\n'); k >= 0 {
		nextEnd = at + 1 + k
	}
	if nextEnd-lineStart-1 > MinMaxLine || at-lineStart > MinMaxLine || bytes.HasSuffix(data[:nextEnd], []byte("\r")) {
		return // over the maximum joined, or not apart; a CR cut at the end is a line end
	}
	joined := append(slices.Clone(data[:at]), data[at+1:]...)
	recs2, st2 := readAll(t, bytes.NewReader(joined), WithMaxLine(MinMaxLine))
	if len(recs2) != len(recs) {
		t.Fatalf("joined at byte %d: %d records, apart %d\n%q", at, len(recs2), len(recs), joined)
	}
	changed := 0
	for i := range recs {
		if recs2[i].Joined != recs[i].Joined {
			changed++
			if recs[i].Joined || recs[i].Pos.Offset >= int64(at) || i+1 < len(recs) && recs[i+1].Pos.Offset < int64(at) {
				t.Errorf("joined at byte %d: record %d (%v) newly joined", at, i, recs[i].Pos)
			}
		}
	}
	if diff := quickDiff(recs, recs2, ignorePos, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("joined at byte %d (-apart +joined):\n%s", at, diff)
	}
	want := st
	want.Lines--
	want.Bytes--
	want.Joined += int64(changed)
	want.Problems, st2.Problems = nil, nil
	if diff := cmp.Diff(want, st2); diff != "" {
		t.Errorf("joined at byte %d: stats (-apart +joined):\n%s", at, diff)
	}
}

// startsWithPrefix reports whether the line b starts starts with a log
// prefix.
func startsWithPrefix(b []byte) bool {
	if k := bytes.IndexByte(b, '\n'); k >= 0 {
		b = b[:k]
	}
	if !bytes.HasPrefix(b, markMono) {
		return false
	}
	var p Prefix
	_, ok := newReader(nil).parsePrefix(b, 0, &p)
	return ok
}

// hasProblemAt reports whether a kept problem unwraps to err at offset off,
// or whether problems were omitted.
func hasProblemAt(st Stats, err error, off int64) bool {
	if st.ProblemsOmitted > 0 {
		return true
	}
	for _, p := range st.Problems {
		if errors.Is(p, err) && p.Offset == off {
			return true
		}
	}
	return false
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// FuzzRoundtrip: a span built from arbitrary fields, written and read back,
// is the same span, except where the emitter's caps cut it (then the cut is
// flagged and writing again is stable).
func FuzzRoundtrip(f *testing.F) {
	f.Add(int32(4242), int64(4242), uint64(7), uint64(0x9f3c), int32(1), "chip.run.bind", int64(1000), int64(150), "ntensor", "4", "note", "a b=c[d]%", uint64(5), uint64(50_000_000))
	f.Add(int32(-1), int64(-1), uint64(1<<64-1), uint64(0), int32(-7), "ext.pypto.decode layer\n", int64(-1<<63), int64(1<<63-1), "", "", "k=ey", "~", uint64(0), uint64(1))
	f.Add(int32(0), int64(0), uint64(0), uint64(1), int32(0), strings.Repeat("n", 61)+"\nx", int64(0), int64(0), "k", strings.Repeat("v", 200), "x", "-0", uint64(1<<64-1), uint64(1<<64-1))
	f.Fuzz(func(t *testing.T, pid int32, tid int64, inv, hid uint64, depth int32, name string, ts, dur int64, k1, v1, k2, v2 string, cyc, freq uint64) {
		sp := Span{Pid: pid, Tid: tid, Inv: inv, Hid: hid, Depth: depth, Name: name, TS: ts, Dur: dur,
			Attrs: []Attr{String(k1, v1), String(k2, v2), Uint("cyc", cyc)}}
		da := DeviceAnchor{Pid: pid, Tid: tid, Dev: depth, HostNS: ts, WindowNS: max(dur, 0), DevCyc: cyc, DevFreq: max(freq, 1)}
		wa := WallAnchor{Pid: pid, MonoNS: ts, WallNS: dur}
		in := []Record{
			{Kind: KindSpan, Prefix: Prefix{Present: true, MonoNS: ts, Thread: hid, Level: "TIMING", Func: SpanFunc}, Span: sp},
			{Kind: KindDeviceAnchor, DeviceAnchor: da},
			{Kind: KindWallAnchor, WallAnchor: wa},
		}
		var out bytes.Buffer
		w := NewWriter(&out, WithThread(hid), WithClock(func() int64 { return ts }, func() int64 { return dur }))
		for _, r := range in {
			if err := w.Write(r); err != nil {
				t.Fatal(err)
			}
		}
		first := out.String()
		recs, st := readAll(t, strings.NewReader(first))
		if st.Lost() != 0 || len(recs) != len(in) {
			t.Fatalf("wrote %d records, read %d: %v\n%q", len(in), len(recs), st.Problems, first)
		}
		got := recs[0].Span
		nameFits := len(appendName(nil, name)) == len(name)+2*countUnsafe(name, false) && !strings.HasSuffix(name, "~")
		attrText := appendAttrText(nil, sp.Attrs)
		attrsFit := !bytes.HasSuffix(attrText, []byte("~")) && len(attrText) < AttrsCap
		if nameFits && got.Name != name {
			t.Errorf("name %q read back as %q", name, got.Name)
		}
		if got.NameTruncated != strings.HasSuffix(got.Name, "~") {
			t.Errorf("NameTruncated %v for %q", got.NameTruncated, got.Name)
		}
		if attrsFit && nameFits {
			want := sp
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("span (-wrote +read):\n%s\n%q", diff, first)
			}
		}
		if diff := cmp.Diff(in[1].DeviceAnchor, recs[1].DeviceAnchor); diff != "" {
			t.Errorf("device anchor (-wrote +read):\n%s", diff)
		}
		if diff := cmp.Diff(in[2].WallAnchor, recs[2].WallAnchor); diff != "" {
			t.Errorf("wall anchor (-wrote +read):\n%s", diff)
		}
		// The same records with the log cut in the last one (before its
		// line end, inside its last number, in and after its marker, and
		// where cyc says): the records before it are read as they were,
		// and the last one is never returned, only counted as torn where
		// the log ends.
		lastAt := strings.LastIndexByte(first[:len(first)-1], '\n') + 1
		markAt := lastAt + strings.Index(first[lastAt:], "[CLOCK_ANCHOR]")
		cuts := []int{len(first) - 1, len(first) - 2, markAt + 5, markAt + len("[CLOCK_ANCHOR]"),
			lastAt + 1 + int(cyc%uint64(len(first)-lastAt-1))}
		for _, cut := range cuts {
			in := first[:cut]
			recs2, st2 := readAll(t, strings.NewReader(in), WithMaxLine(len(first)))
			if !reflect.DeepEqual(recs[:2], recs2) {
				t.Fatalf("cut at %d of %q (-whole +cut):\n%s", cut, first, cmp.Diff(recs[:2], recs2))
			}
			if !st2.Unterminated {
				t.Errorf("cut at %d: not unterminated", cut)
			}
			heads := int64(0)
			if cut >= markAt+len("[CLOCK_ANCHOR]") {
				heads = 1 // a cut inside the marker leaves no head
			}
			if st2.Heads.ClockAnchor != 1+heads || st2.Torn != heads || st2.Lost() != heads ||
				heads == 1 && !hasProblemAt(st2, ErrUnterminated, int64(markAt)) {
				t.Fatalf("cut at %d of %q: %+v", cut, first, st2)
			}
		}

		// Writing what was read gives the same bytes.
		var again bytes.Buffer
		w2 := NewWriter(&again)
		for _, r := range recs {
			if err := w2.Write(r); err != nil {
				t.Fatal(err)
			}
		}
		if again.String() != first {
			t.Errorf("second write differs:\n%q\n%q", first, again.String())
		}
	})
}

// countUnsafe counts the bytes the emitter escapes.
func countUnsafe(s string, attrs bool) int {
	n := 0
	for i := 0; i < len(s); i++ {
		if !safeByte(s[i], attrs) {
			n++
		}
	}
	return n
}
