package compareplan

import (
	"testing"

	"github.com/phasetrace/phasetrace/internal/firstpass"
)

// TestPidMaps gives the measure side's pids that base uses too trace pids
// of their own, counting down from MaxInt32 past the pids in use.
func TestPidMaps(t *testing.T) {
	p := New(1, 3)
	rs := &firstpass.RemoteScan{Pids: []map[int32]bool{{10: true, 11: true}, {11: true, 1<<31 - 1: true}, {10: true, 12: true}}}
	pm := p.PidMaps(rs)
	want := map[int32]int32{10: 1<<31 - 2, 11: 1<<31 - 3}
	if len(pm) != 3 || pm[0] != nil || len(p.Pids) != len(want) {
		t.Fatalf("PidMaps = %v, Pids %v", pm, p.Pids)
	}
	for o, tr := range want {
		if p.Pids[o] != tr || pm[1][o] != tr || pm[2][o] != tr {
			t.Errorf("pid %d: trace pid %d, want %d", o, p.Pids[o], tr)
		}
	}
	if pm := New(1, 2).PidMaps(&firstpass.RemoteScan{Pids: []map[int32]bool{{10: true}, {11: true}}}); pm != nil {
		t.Errorf("no pid repeats, PidMaps = %v", pm)
	}
}

// TestStep pairs the i-th decode step of each side of a rank pair,
// whichever comes first, and lets a side run at most MaxBehind steps
// ahead.
func TestStep(t *testing.T) {
	p := New(1, 2)
	p.side = map[int32]firstpass.Side{1: firstpass.BaseSide, 2: firstpass.MeasureSide}
	p.Aligned, p.BaseHid, p.MeasureHid = ByDecode, 0xa, 0xb
	p.pair(map[int32]bool{1: true}, map[int32]bool{2: true})
	if len(p.Pairs) != 1 || p.Note != "" {
		t.Fatalf("pairs %v, note %q", p.Pairs, p.Note)
	}
	if _, ok := p.Step(1, 0xb, 0, 10, 0); ok {
		t.Error("base's step of measure's callable taken")
	}
	if _, ok := p.Step(1, 0xa, 100, 10, 0); ok {
		t.Error("base's first step paired before measure's came")
	}
	d, ok := p.Step(2, 0xb, 105, 13, 7)
	if want := (Delta{Pair: 0, TS: 105, At: 7, Value: 3}); !ok || d != want {
		t.Errorf("measure's first step: %+v %v, want %+v", d, ok, want)
	}
	d, ok = p.Step(2, 0xb, 200, 20, 8) // measure ahead
	if ok {
		t.Errorf("measure's second step came before base's: %+v", d)
	}
	d, ok = p.Step(1, 0xa, 190, 25, 9)
	if want := (Delta{Pair: 0, TS: 200, At: 8, Value: -5}); !ok || d != want {
		t.Errorf("base's second step: %+v %v, want %+v", d, ok, want)
	}
	for i := range MaxBehind {
		if _, ok := p.Step(1, 0xa, int64(300+i), 1, 0); ok {
			t.Fatalf("base step %d ahead came to something", i)
		}
	}
	if d, ok := p.Step(1, 0xa, 1<<20, 1, 0); !ok || d.Unpaired != firstpass.BaseSide {
		t.Errorf("a step past MaxBehind ahead: %+v %v, want unpaired", d, ok)
	}
	if d, _ := p.Step(2, 0xb, 300, 1, 0); d.Unpaired != 0 { // pairs with the first waiting
		t.Errorf("measure's third step: %+v", d)
	}
	if got := p.Drain(); len(got) != 1 || got[0] != [2]int64{MaxBehind - 1, 0} {
		t.Errorf("Drain = %v, want [[%d 0]]", got, MaxBehind-1)
	}
}
