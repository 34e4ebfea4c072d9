package strace

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzReader: no input panics the reader, memory stays bounded by the
// maximum line, the counts always add up, every record sits at its marker,
// and what is read writes and reads back the same.
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
		if diff := cmp.Diff(recs, back, ignorePos); diff != "" {
			t.Errorf("read, write, read (-first +second):\n%s", diff)
		}
	})
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
