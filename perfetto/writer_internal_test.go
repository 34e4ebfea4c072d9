package perfetto

import (
	"bytes"
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"unsafe"

	"google.golang.org/protobuf/encoding/protowire"
)

// sortKeys gives the order of a plain sort by (start, longest first,
// Depth, given order) on keys in order, nearly in order (parents after
// their children), shuffled and reversed — the last two past the
// insertion sort's budget.
func TestSortKeys(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	want := func(keys []sortKey) []sortKey {
		keys = slices.Clone(keys)
		slices.SortFunc(keys, func(a, b sortKey) int {
			return cmp.Or(cmp.Compare(a.ts, b.ts), cmp.Compare(b.end, a.end), cmp.Compare(a.depth, b.depth), cmp.Compare(a.i, b.i))
		})
		return keys
	}
	for _, n := range []int{0, 1, 2, 3, 10, 100, 1000} {
		for _, shape := range []string{"sorted", "children first", "shuffled", "reversed", "ties"} {
			var keys []sortKey
			for i := range n {
				k := sortKey{ts: int64(i) * 10, end: int64(i)*10 + 5, i: int32(i)}
				switch shape {
				case "children first":
					// runs of 4: three children, then their parent
					run := int64(i / 4 * 100)
					if i%4 == 3 {
						k.ts, k.end = run, run+100
					} else {
						k.ts, k.end, k.depth = run+int64(i%4)*20, run+int64(i%4)*20+10, 1
					}
				case "reversed":
					k.ts, k.end = int64(n-i)*10, int64(n-i)*10+5
				case "ties":
					k.ts, k.end, k.depth = int64(rng.IntN(3)), int64(3+rng.IntN(3)), int32(rng.IntN(2))
				}
				keys = append(keys, k)
			}
			if shape == "shuffled" {
				rng.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
			}
			w := want(keys)
			sortKeys(keys)
			if !slices.Equal(keys, w) {
				t.Errorf("%d keys %s: sortKeys gives %v, want %v", n, shape, keys, w)
			}
		}
	}
}

// BenchmarkAnnotations measures the encoding of ten arguments, as a log's
// host spans have them, on a busy sequence.
func BenchmarkAnnotations(b *testing.B) {
	benchAnnotations(b, "chip.run.bind.args", []Arg{Uint("inv", 1234), String("hid", "9f3c2a11d00db1e5"), Int("depth", 2),
		Int("cpu_ns", 155161), Int("rec_cpu_ns", 51720), Int("minflt", 161), Int("tminflt", 35),
		Int("nvcsw", 8), Int("nivcsw", 1), String("src", "host_phase_records")})
}

// BenchmarkAnnotationsDevice is BenchmarkAnnotations with a device span's
// arguments: device times of four bytes, a cycle count of eight.
func BenchmarkAnnotationsDevice(b *testing.B) {
	benchAnnotations(b, "chip.run.runner_run.device_wall.sched", []Arg{Uint("inv", 1234), String("hid", "9f3c2a11d00db1e5"), Int("depth", 3),
		String("clk", "dev"), Int("device_ts", 9412197), Int("device_dur", 22443059), Uint("start_cyc", 987660045313375),
		String("placement", "aligned"), Int("bound_ns", 6321)})
}

func benchAnnotations(b *testing.B, event string, args []Arg) {
	s := &sequence{id: 2}
	s.resetInterning()
	name := s.internName(event)
	var buf []byte
	for range 2 * busyLookups {
		buf = appendAnnotations(buf[:0], s, args, fEventAnnotations, true, s.argMemo(name))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		args[0].num = uint64(i)
		buf = appendAnnotations(buf[:0], s, args, fEventAnnotations, true, s.argMemo(name))
	}
}

// The arguments a memo knows are encoded as those it does not: events of
// a few names, their arguments' names and string values drawn from sets
// large enough that iids take two bytes, their numbers of every length
// (negative ones ten bytes), encode to the same bytes on a sequence with
// memos as on one without.
func TestKnownAnnotationsAsInterned(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	memoized, plain := &sequence{id: 2}, &sequence{id: 2}
	memoized.resetInterning()
	plain.resetInterning()
	for i := range 2 * busyLookups { // memoized becomes busy: it keeps memos
		memoized.internString("warm " + strconv.Itoa(i))
		plain.internString("warm " + strconv.Itoa(i))
	}
	keys := make([]string, 300)
	vals := make([]string, 300)
	for i := range keys {
		keys[i], vals[i] = "key"+strconv.Itoa(i), "value"+strconv.Itoa(i)
	}
	for i := len(keys) - 1; i >= 0; i-- { // the keys and values used most get the largest iids
		for _, s := range []*sequence{memoized, plain} {
			s.internAnnName(keys[i])
			s.internString(vals[i])
		}
	}
	number := func() uint64 { return rng.Uint64() >> rng.IntN(64) }
	known, all := 0, 0
	for ev := range 3000 {
		event := "event" + strconv.Itoa(ev%5)
		args := make([]Arg, 1+rng.IntN(memoArgs+4))
		all += len(args)
		for i := range args {
			name := keys[(ev%5*7+i)%len(keys)]
			if rng.IntN(50) == 0 {
				name = keys[rng.IntN(len(keys))] // now and then another name at a place
			}
			switch rng.IntN(5) {
			case 0:
				args[i] = Int(name, int64(number())*int64(1-2*rng.IntN(2)))
			case 1:
				args[i] = Uint(name, number())
			case 2:
				args[i] = Bool(name, rng.IntN(2) == 0)
			default:
				v := vals[(ev%5+i)%len(vals)]
				if rng.IntN(4) == 0 {
					v = vals[rng.IntN(len(vals))]
				}
				args[i] = String(name, v)
			}
		}
		m := memoized.argMemo(memoized.internName(event))
		if m == nil {
			t.Fatal("a busy sequence keeps no memo")
		}
		_, j := appendKnown(nil, args, 0, 0x22, m) // up to the first it does not know
		known += j
		got := appendAnnotations(nil, memoized, args, fEventAnnotations, true, m)
		plain.internName(event)
		want := appendAnnotations(nil, plain, args, fEventAnnotations, true, nil)
		if !bytes.Equal(got, want) {
			t.Fatalf("event %d %v: memoized % x, interned % x", ev, args, got, want)
		}
		if got, want := memoized.appendInterned(nil), plain.appendInterned(nil); !bytes.Equal(got, want) {
			t.Fatalf("event %d %v: interned data memoized % x, without memos % x", ev, args, got, want)
		}
	}
	if known < all/5 {
		t.Errorf("the memo knew %d arguments of %d", known, all)
	}
}

// Events of one name in two layouts, in turn (a log's bind segment spans
// and its legacy bind lines): once each layout has been seen, the memo
// knows every argument of either, and encodes them as interning does.
func TestKnownAnnotationsTwoLayouts(t *testing.T) {
	t.Parallel()
	memoized, plain := &sequence{id: 2}, &sequence{id: 2}
	memoized.resetInterning()
	plain.resetInterning()
	for i := range 2 * busyLookups {
		memoized.internString("warm " + strconv.Itoa(i))
		plain.internString("warm " + strconv.Itoa(i))
	}
	layouts := [][]Arg{
		{Uint("inv", 7), String("hid", "9f3c"), Int("depth", 2), Int("cpu_ns", 5), Int("rec_cpu_ns", 6), Int("minflt", 1), Int("on_cpu_ns", 5)},
		{Uint("inv", 7), String("hid", "9f3c"), Int("depth", 2), Int("cpu_ns", 5), String("log_thread", "0x7f3a"), String("src", "bind_phase"), String("source", "hbg_bind.cpp:88")},
	}
	for ev := range 40 {
		args := layouts[ev%2]
		args[0] = Uint("inv", uint64(ev))
		m := memoized.argMemo(memoized.internName("chip.run.bind.args"))
		if _, j := appendKnown(nil, args, 0, 0x22, m); ev >= 2 && j != len(args) {
			t.Fatalf("event %d: the memo knew %d of its %d arguments", ev, j, len(args))
		}
		got := appendAnnotations(nil, memoized, args, fEventAnnotations, true, m)
		plain.internName("chip.run.bind.args")
		want := appendAnnotations(nil, plain, args, fEventAnnotations, true, nil)
		if !bytes.Equal(got, want) {
			t.Fatalf("event %d: memoized % x, interned % x", ev, got, want)
		}
		if got, want := memoized.appendInterned(nil), plain.appendInterned(nil); !bytes.Equal(got, want) {
			t.Fatalf("event %d: interned data memoized % x, without memos % x", ev, got, want)
		}
	}
}

// appendKnown writes what appendScalar writes, and what protowire encodes,
// for values and iids at every boundary of a varint's length, after bytes
// already in the buffer and with any room left in it; it does not take
// an empty name or value for known.
func TestKnownAnnotationBoundaries(t *testing.T) {
	t.Parallel()
	var edges []uint64
	for s := range 64 {
		edges = append(edges, 1<<s-1, 1<<s, 1<<s+1)
	}
	edges = append(edges, math.MaxUint64, math.MaxUint32)
	name, value := "name", "value"
	protowireOf := func(kind Kind, v, iid uint64) []byte {
		var body []byte
		switch kind {
		case KindString:
			body = protowire.AppendVarint(protowire.AppendTag(body, fAnnStringIID, protowire.VarintType), v)
		default:
			num := map[Kind]protowire.Number{KindInt: fAnnInt, KindUint: fAnnUint, KindBool: fAnnBool}[kind]
			body = protowire.AppendVarint(protowire.AppendTag(body, num, protowire.VarintType), v)
		}
		body = protowire.AppendVarint(protowire.AppendTag(body, fAnnNameIID, protowire.VarintType), iid)
		return protowire.AppendBytes(protowire.AppendTag(nil, fEventAnnotations, protowire.BytesType), body)
	}
	tag := byte(fEventAnnotations<<3) | byte(protowire.BytesType)
	for _, iid := range edges {
		if iid == 0 || iid > math.MaxUint32 {
			continue
		}
		for _, v := range edges {
			for _, kind := range []Kind{KindInt, KindUint, KindBool, KindString} {
				var a Arg
				var m argMemo
				m.reset()
				m.names[0] = memoEntry{p: unsafe.StringData(name), n: uint32(len(name)), iid: uint32(iid)}
				switch kind {
				case KindInt:
					a = Int(name, int64(v))
				case KindUint:
					a = Uint(name, v)
				case KindBool:
					a = Arg{Name: name, kind: KindBool, num: v}
				case KindString:
					if v == 0 || v > math.MaxUint32 {
						continue
					}
					a = String(name, value)
					m.values[0] = memoEntry{p: unsafe.StringData(value), n: uint32(len(value)), iid: uint32(v)}
				}
				for _, room := range []int{0, 3, 20, 31, 32, 33} {
					b := append(make([]byte, 0, 5+room), "head!"...)
					got, j := appendKnown(b, []Arg{a}, 0, tag, &m)
					want := append([]byte("head!"), protowireOf(kind, v, iid)...)
					if j != 1 || !bytes.Equal(got, want) || !bytes.Equal(appendScalar([]byte("head!"), tag, kind, v, iid), want) {
						t.Fatalf("%v value %d, name iid %d, room %d: known % x (%d), protowire % x", kind, v, iid, room, got, j, want)
					}
				}
			}
		}
	}
	// An empty name or value is never known, nor is anything by an entry
	// that remembers nothing (argMemo.reset).
	var empty, named argMemo
	empty.reset()
	named.reset()
	named.names[0] = memoEntry{p: unsafe.StringData(name), n: uint32(len(name)), iid: 7}
	for _, c := range []struct {
		m   *argMemo
		arg Arg
	}{
		{&empty, Int("", 1)},
		{&empty, Int(name[:0], 1)},
		{&empty, String("", "")},
		{&named, String(name, "")},
		{&named, String(name, value[:0])},
	} {
		if _, j := appendKnown(nil, []Arg{c.arg}, 0, tag, c.m); j != 0 {
			t.Errorf("%+v taken for known", c.arg)
		}
	}
}

// A busy sequence's memos of event names and categories give the iids, and
// leave the interned data, that intern gives and leaves: for canonical
// strings (one address each), for copies of them at other addresses, for
// more names than the memo has slots, and across a reset of the interning.
func TestNameMemoAsInterned(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 6))
	memoized, plain := &sequence{id: 2}, &sequence{id: 2}
	memoized.resetInterning()
	plain.resetInterning()
	for i := range 2 * busyLookups { // memoized becomes busy: it keeps memos
		memoized.internString("warm " + strconv.Itoa(i))
		plain.intern(internString, "warm "+strconv.Itoa(i))
	}
	if memoized.cache == nil {
		t.Fatal("the warmed sequence is not busy")
	}
	names := make([]string, 3*nameSlots)
	for i := range names {
		names[i] = "chip.run.bind.stage" + strconv.Itoa(i)
	}
	cats := []string{"host", "device", "bind", "node", "ext", "runner"}
	hits := 0
	for ev := range 20000 {
		if ev == 12000 {
			memoized.resetInterning()
			plain.resetInterning()
		}
		name := names[rng.IntN(8)] // a track's few names, mostly
		if rng.IntN(10) == 0 {
			name = names[rng.IntN(len(names))]
		}
		if rng.IntN(20) == 0 {
			name = string([]byte(name)) // the same name at another address
		}
		cat := cats[rng.IntN(len(cats))]
		if rng.IntN(20) == 0 {
			cat = string([]byte(cat))
		}
		if e := &memoized.cache.names[slotOf(name, nameSlots)]; e.hit(name) != 0 {
			hits++
		}
		if got, want := memoized.internName(name), plain.intern(internName, name); got != want {
			t.Fatalf("event %d: name %q memoized %d, interned %d", ev, name, got, want)
		}
		if got, want := memoized.internCategory(cat), plain.intern(internCategory, cat); got != want {
			t.Fatalf("event %d: category %q memoized %d, interned %d", ev, cat, got, want)
		}
		if got, want := memoized.appendInterned(nil), plain.appendInterned(nil); !bytes.Equal(got, want) {
			t.Fatalf("event %d: interned data memoized % x, without memos % x", ev, got, want)
		}
	}
	if hits < 20000/2 {
		t.Errorf("the memo knew %d names of 20000", hits)
	}
}
