package reduce

import (
	"errors"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/phasetrace/phasetrace/strace"
)

const a2a3 Hz = 50_000_000 // 20 ns per cycle

func mustReduce(t *testing.T, bb *builder, f Hz) *Reduction {
	t.Helper()
	b, err := DecodeBuffer(bb.bytes(), bb.b.Threads)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Reduce(b, f)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestReduceTypical(t *testing.T) {
	t.Parallel()
	r := mustReduce(t, typical(t), a2a3)
	if r.Origin != 1010 || r.OriginSource != OriginSubPhase {
		t.Fatalf("origin = %d (%v), want 1010 from the earliest sub-phase, not RunWall", r.Origin, r.OriginSource)
	}
	if got := r.Phases[RunWall]; got != (Window{990, 2010, true}) {
		t.Errorf("RunWall = %+v, want min(start)=990 max(end)=2010", got)
	}
	if got := r.Slots[3]; got != (Window{1280, 1400, true}) {
		t.Errorf("slot 3 = %+v, want min(dispatch)=1280 max(finish)=1400", got)
	}
	spans, err := r.Spans()
	if err != nil {
		t.Fatal(err)
	}
	const w = strace.SpanDeviceWall
	want := []DeviceSpan{
		{Name: w, Depth: 2, TS: 0, Dur: 20400, StartCyc: 990, Phase: RunWall, Slot: -1},
		{Name: w + ".preamble", Depth: 3, TS: 0, Dur: 1800, StartCyc: 1010, Phase: Preamble, Slot: -1},
		{Name: w + ".graph_build", Depth: 3, TS: 1800, Dur: 16000, StartCyc: 1100, Phase: GraphBuild, Slot: -1},
		{Name: w + ".config_validate", Depth: 3, TS: 2000, Dur: 800, StartCyc: 1110, Phase: ConfigValidate, Slot: -1},
		{Name: w + ".arena_wire", Depth: 3, TS: 2800, Dur: 1000, StartCyc: 1150, Phase: ArenaWire, Slot: -1},
		{Name: w + ".sm_reset", Depth: 3, TS: 3800, Dur: 1000, StartCyc: 1200, Phase: SmReset, Slot: -1},
		{Name: w + ".post_orch", Depth: 3, TS: 17800, Dur: 1800, StartCyc: 1900, Phase: PostOrch, Slot: -1},
		{Name: w + ".orch", Depth: 3, TS: 4800, Dur: 9000, StartCyc: 1250, Phase: OrchWindow, Slot: -1},
		{Name: w + ".sched", Depth: 3, TS: 4820, Dur: 12780, StartCyc: 1251, Phase: SchedWindow, Slot: -1},
		{Name: w + ".task_slot_3", Depth: 3, TS: 5400, Dur: 2400, StartCyc: 1280, Phase: -1, Slot: 3},
	}
	if diff := cmp.Diff(want, spans); diff != "" {
		t.Errorf("spans (-want +got):\n%s", diff)
	}
	eff, ok, err := r.Effective()
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	if want := (Derived{Start: 1250, End: 1890, TS: 4800, Dur: 12800}); eff != want {
		t.Errorf("Effective = %+v, want %+v", eff, want)
	}
	s, e, ok, err := r.WallOffset()
	if err != nil || !ok || s != -400 || e != 20000 {
		t.Errorf("WallOffset = %d, %d, %v, %v; want -400, 20000 (RunWall starts 20 cycles before the origin)", s, e, ok, err)
	}
}

func TestReduceOnlyCompletedRecords(t *testing.T) {
	t.Parallel()
	bb := newBuilder(t, 4, false).
		phase(0, Preamble, 100, 200).
		phase(1, Preamble, Unset, 300). // never stamped: ignored
		phase(2, Preamble, 50, 0).      // never ended: must not pull the start down
		phase(3, Preamble, 80, 80)      // end == start: not complete
	r := mustReduce(t, bb, a2a3)
	if got := r.Phases[Preamble]; got != (Window{100, 200, true}) {
		t.Errorf("Preamble = %+v, want {100 200 true}", got)
	}
	// A phase no thread completed is invalid and not emitted.
	bb = newBuilder(t, 2, false).phase(0, SoLoad, 5, 0).phase(1, SoLoad, Unset, 9)
	r = mustReduce(t, bb, a2a3)
	if r.Phases[SoLoad].Valid || r.OriginSource != OriginNone {
		t.Errorf("SoLoad = %+v, origin %v", r.Phases[SoLoad], r.OriginSource)
	}
	if spans, _ := r.Spans(); len(spans) != 0 {
		t.Errorf("spans of an unstamped run: %v", spans)
	}
}

func TestReduceZeroNsNotEmitted(t *testing.T) {
	t.Parallel()
	// At 3 GHz one cycle is 0.33 ns, which floors to 0 ns.
	const f Hz = 3_000_000_000
	bb := newBuilder(t, 1, false).
		phase(0, RunWall, 0, 100).
		phase(0, Preamble, 10, 11).  // 0 ns: not emitted
		phase(0, GraphBuild, 11, 20) // 3 ns
	spans, err := mustReduce(t, bb, f).Spans()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range spans {
		names = append(names, s.Name)
	}
	if diff := cmp.Diff([]string{strace.SpanDeviceWall, strace.SpanDeviceWall + ".graph_build"}, names); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
	// The zero-length phase still sets the origin (the runtime reduces
	// before it converts).
	if spans[1].TS != 0 {
		t.Errorf("graph_build ts = %d, want 0 (origin from preamble at cycle 10, 1 cycle = 0 ns)", spans[1].TS)
	}
}

func TestReduceSlotOriginFallback(t *testing.T) {
	t.Parallel()
	// A host_build_graph run stamps no sub-phases: the slots' origin is
	// the earliest tagged dispatch.
	bb := newBuilder(t, 2, true).
		phase(0, RunWall, 900, 3000).
		slot(0, 0, 1000, 1100).
		slot(1, 5, 1050, 1500).
		slot(1, 7, 1200, 0) // dispatched, never finished: skipped
	r := mustReduce(t, bb, a2a3)
	if r.Origin != 1000 || r.OriginSource != OriginSlot {
		t.Fatalf("origin %d %v, want 1000 from slot 0", r.Origin, r.OriginSource)
	}
	spans, err := r.Spans()
	if err != nil {
		t.Fatal(err)
	}
	want := []DeviceSpan{
		{Name: strace.SpanDeviceWall, Depth: 2, Dur: 42000, StartCyc: 900, Phase: RunWall, Slot: -1},
		{Name: strace.SpanDeviceWall + ".task_slot_0", Depth: 3, TS: 0, Dur: 2000, StartCyc: 1000, Phase: -1, Slot: 0},
		{Name: strace.SpanDeviceWall + ".task_slot_5", Depth: 3, TS: 1000, Dur: 9000, StartCyc: 1050, Phase: -1, Slot: 5},
	}
	if diff := cmp.Diff(want, spans); diff != "" {
		t.Errorf("spans (-want +got):\n%s", diff)
	}
}

func TestReduceSlotBeforeOriginDropped(t *testing.T) {
	t.Parallel()
	bb := newBuilder(t, 1, true).
		phase(0, Preamble, 1000, 1100).
		slot(0, 1, 900, 1050) // dispatched before the phase origin
	spans, err := mustReduce(t, bb, a2a3).Spans()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range spans {
		if s.Slot == 1 {
			t.Errorf("slot dispatched before the origin emitted: %+v", s)
		}
	}
}

func TestReduceSlotDurationIsDifferenceOfFloors(t *testing.T) {
	t.Parallel()
	// At 3 GHz: dispatch 2 cycles after the origin (0.67 ns → 0), finish
	// 3 cycles after (1.0 ns → 1). The runtime emits dur = 1 − 0 = 1 ns
	// for this one-cycle (0.33 ns) slot, and so does Spans.
	const f Hz = 3_000_000_000
	bb := newBuilder(t, 1, true).
		phase(0, Preamble, 3000, 3900).
		slot(0, 0, 3002, 3003)
	spans, err := mustReduce(t, bb, f).Spans()
	if err != nil {
		t.Fatal(err)
	}
	last := spans[len(spans)-1]
	if last.Slot != 0 || last.TS != 0 || last.Dur != 1 {
		t.Errorf("slot 0 = %+v, want ts 0 dur 1", last)
	}
}

func TestReduceRunWallOnly(t *testing.T) {
	t.Parallel()
	bb := newBuilder(t, 1, false).phase(0, RunWall, 500, 1500)
	r := mustReduce(t, bb, a2a3)
	if r.Origin != 500 || r.OriginSource != OriginRunWall {
		t.Errorf("origin %d %v", r.Origin, r.OriginSource)
	}
	spans, _ := r.Spans()
	if len(spans) != 1 || spans[0].Dur != 20000 {
		t.Errorf("spans = %+v", spans)
	}
}

func TestReduceZeroFrequency(t *testing.T) {
	t.Parallel()
	b, _ := NewBuffer(1, false)
	if _, err := Reduce(b, 0); !errors.Is(err, ErrRange) {
		t.Errorf("err = %v, want ErrRange", err)
	}
}

func TestReduceRejectsInconsistentBuffer(t *testing.T) {
	t.Parallel()
	if _, err := Reduce(&Buffer{Threads: 2, Phases: make([]Record, 10)}, a2a3); err == nil {
		t.Error("no error for 10 phase records and 2 threads")
	}
}

func TestEffectiveOneSide(t *testing.T) {
	t.Parallel()
	bb := newBuilder(t, 1, false).phase(0, SchedWindow, 100, 200)
	d, ok, err := mustReduce(t, bb, a2a3).Effective()
	if err != nil || !ok || d.Dur != 2000 || d.TS != 0 {
		t.Errorf("Effective = %+v %v %v", d, ok, err)
	}
	bb = newBuilder(t, 1, false).phase(0, Preamble, 100, 200)
	if _, ok, _ := mustReduce(t, bb, a2a3).Effective(); ok {
		t.Error("Effective without orch or sched")
	}
}

// Property: the reduction (and the spans) do not depend on thread order.
func TestReduceThreadOrderInvariant(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	for iter := range 200 {
		threads := 1 + r.IntN(8)
		b, _ := NewBuffer(threads, true)
		b.Header.TailUsed = 1
		rec := func() Record {
			switch r.IntN(5) {
			case 0:
				return Record{Start: Unset}
			case 1:
				return Record{Start: Cycles(r.IntN(1000)), End: 0}
			}
			s := Cycles(1000 + r.IntN(1000))
			return Record{Start: s, End: s + Cycles(r.IntN(1000))}
		}
		for i := range b.Phases {
			b.Phases[i] = rec()
		}
		for i := range b.Slots {
			b.Slots[i] = rec()
		}
		want, err := Reduce(b, a2a3)
		if err != nil {
			t.Fatal(err)
		}
		wantSpans, _ := want.Spans()
		perm := r.Perm(threads)
		p, _ := NewBuffer(threads, true)
		p.Header = b.Header
		for to, from := range perm {
			copy(p.ThreadPhases(to), b.ThreadPhases(from))
			copy(p.ThreadSlots(to), b.ThreadSlots(from))
		}
		got, err := Reduce(p, a2a3)
		if err != nil {
			t.Fatal(err)
		}
		gotSpans, _ := got.Spans()
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("iteration %d, permutation %v (-want +got):\n%s", iter, perm, diff)
		}
		if diff := cmp.Diff(wantSpans, gotSpans); diff != "" {
			t.Fatalf("iteration %d spans (-want +got):\n%s", iter, diff)
		}
	}
}

func TestNanosExact(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 4))
	freqs := []Hz{1, 7, 50_000_000, 1_000_000_000, 1_800_000_000, 3_000_000_000, math.MaxUint64}
	vals := []Cycles{0, 1, 49_999_999, 1 << 40, 18_446_744_073, math.MaxInt64, math.MaxUint64}
	for range 200 {
		vals = append(vals, Cycles(r.Uint64()))
	}
	for _, f := range freqs {
		for _, c := range vals {
			exact := new(big.Int).Mul(new(big.Int).SetUint64(uint64(c)), big.NewInt(1e9))
			q, m := new(big.Int).QuoRem(exact, new(big.Int).SetUint64(uint64(f)), new(big.Int))
			got, err := f.Nanos(c)
			if !q.IsInt64() {
				if !errors.Is(err, ErrRange) {
					t.Errorf("%d cycles at %d Hz: %v, %v; want ErrRange", c, f, got, err)
				}
				continue
			}
			if err != nil || int64(got) != q.Int64() {
				t.Errorf("%d cycles at %d Hz = %d, %v; want %v", c, f, got, err, q)
			}
			ceil, err := f.NanosCeil(c)
			wantCeil := q.Int64()
			if m.Sign() != 0 {
				wantCeil++
			}
			if err == nil && int64(ceil) != wantCeil {
				t.Errorf("ceil %d cycles at %d Hz = %d, want %d", c, f, ceil, wantCeil)
			}
		}
	}
	// 2^64−1 cycles at 1 GHz is ~584 years: the product overflows 64 bits
	// but not the 128-bit intermediate.
	got, err := Hz(1_000_000_000).Nanos(math.MaxUint64 / 2)
	if err != nil || got != math.MaxUint64/2 {
		t.Errorf("MaxUint64/2 cycles at 1 GHz = %d, %v", got, err)
	}
	if _, err := Hz(0).Nanos(1); !errors.Is(err, ErrRange) {
		t.Errorf("zero frequency: %v", err)
	}
	// Cycles against the exact floor of ns·f/1e9, on both sides of a
	// product of 2^64 (where its 64-bit path ends) and of the range's end.
	nss := []DeviceNanos{0, 1, 999_999_999, 1_000_000_000, 1 << 34, math.MaxInt64}
	for range 200 {
		nss = append(nss, DeviceNanos(r.Int64()), DeviceNanos(r.Int64N(1<<36)))
	}
	for _, f := range freqs {
		if f > 1 {
			nss = append(nss, DeviceNanos(math.MaxUint64/uint64(f)), DeviceNanos(math.MaxUint64/uint64(f)+1))
		}
	}
	for _, f := range freqs {
		for _, ns := range nss {
			exact := new(big.Int).Mul(big.NewInt(int64(ns)), new(big.Int).SetUint64(uint64(f)))
			q := exact.Quo(exact, big.NewInt(1e9))
			got, err := f.Cycles(ns)
			switch {
			case !q.IsUint64():
				if !errors.Is(err, ErrRange) {
					t.Errorf("Cycles(%d ns) at %d Hz = %d, %v; want ErrRange", ns, f, got, err)
				}
			case err != nil || uint64(got) != q.Uint64():
				t.Errorf("Cycles(%d ns) at %d Hz = %d, %v; want %v", ns, f, got, err, q)
			}
		}
	}
	if c, err := Hz(50_000_000).Cycles(1_000_000_000); err != nil || c != 50_000_000 {
		t.Errorf("Cycles(1 s) = %d, %v", c, err)
	}
	if _, err := Hz(50_000_000).Cycles(-1); !errors.Is(err, ErrRange) {
		t.Errorf("Cycles(-1): %v", err)
	}
}

// The runtime converts with (double)c/f·1e6·1000 and truncates; that can
// come out 1 ns short of the exact floor. This package always floors
// exactly.
func TestRuntimeFloatCanBeOneShort(t *testing.T) {
	t.Parallel()
	runtime := func(c Cycles, f Hz) DeviceNanos {
		return DeviceNanos(uint64((float64(c) / float64(f)) * 1000000.0 * 1000.0))
	}
	short := 0
	for c := Cycles(1); c < 200_000; c++ {
		exact, _ := a2a3.Nanos(c)
		rt := runtime(c, a2a3)
		if d := exact - rt; d < 0 || d > 1 {
			t.Fatalf("%d cycles: runtime %d, exact %d", c, rt, exact)
		} else if d == 1 {
			short++
		}
	}
	if short == 0 {
		t.Error("expected some conversions where the runtime is 1 ns short")
	}
	t.Logf("runtime's floating-point conversion is 1 ns short for %d of 199999 cycle counts at 50 MHz", short)
}

func TestPhaseNames(t *testing.T) {
	t.Parallel()
	want := map[Phase]string{
		RunWall: "chip.run.runner_run.device_wall", Preamble: "chip.run.runner_run.device_wall.preamble",
		SoLoad: "chip.run.runner_run.device_wall.so_load", GraphBuild: "chip.run.runner_run.device_wall.graph_build",
		PostOrch: "chip.run.runner_run.device_wall.post_orch", OrchWindow: "chip.run.runner_run.device_wall.orch",
		SchedWindow: "chip.run.runner_run.device_wall.sched", ConfigValidate: "chip.run.runner_run.device_wall.config_validate",
		ArenaWire: "chip.run.runner_run.device_wall.arena_wire", SmReset: "chip.run.runner_run.device_wall.sm_reset",
	}
	for p, n := range want {
		if p.SpanName() != n {
			t.Errorf("%v.SpanName() = %q, want %q", p, p.SpanName(), n)
		}
	}
	if Phase(10).SpanName() != "" || Phase(-1).String() != "Phase(-1)" {
		t.Error("out-of-range phase")
	}
	if SlotName(15) != "chip.run.runner_run.device_wall.task_slot_15" {
		t.Error(SlotName(15))
	}
}
