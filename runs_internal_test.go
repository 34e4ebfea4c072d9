package phasetrace

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/phasetrace/phasetrace/strace"
)

// The run collector alone: a root written last completes its run at once;
// a root written first waits for the rest until the next root of its
// thread and slot; the oldest run is handed over past maxPending; flush
// hands over the rest, oldest first.
func TestRunCollector(t *testing.T) {
	var got []string
	r := runCollector{maxPending: 3, done: func(b *invBuf) {
		s := itoa(int64(b.key.inv)) + ":"
		for _, h := range b.host {
			s += " " + h.Name
		}
		got = append(got, s)
	}}
	span := func(inv uint64, depth int32, name string, slot int64) *strace.Span {
		sp := &strace.Span{Pid: 1, Tid: 1, Inv: inv, Depth: depth, Name: name}
		if slot >= 0 {
			sp.Attrs = []strace.Attr{strace.Int("slot_id", slot)}
		}
		return sp
	}
	r.add(span(1, 1, "chip.run.bind", -1), 0, false, 0)
	r.add(span(1, 0, "chip.run", 0), 0, false, 0) // children first: complete
	r.add(span(2, 0, "chip.run", 0), 0, false, 0) // parents first: waits
	r.add(span(2, 1, "chip.run.bind", -1), 0, false, 0)
	r.add(span(3, 0, "chip.run", 1), 0, false, 0) // another slot: 2 still waits
	r.add(span(4, 0, "chip.run", 0), 0, false, 0) // slot 0 again: 2 is complete
	r.add(span(5, 1, "chip.run.bind", -1), 0, false, 0)
	r.add(span(6, 1, "chip.run.bind", -1), 0, false, 0) // a fourth waiting run: the oldest (3) goes
	r.flush()
	want := []string{"1: chip.run.bind chip.run", "2: chip.run chip.run.bind", "3: chip.run", "4: chip.run", "5: chip.run.bind", "6: chip.run.bind"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("runs handed over (-want +got):\n%s", diff)
	}
}
