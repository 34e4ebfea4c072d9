package check_test

import (
	"bytes"
	"testing"

	"github.com/phasetrace/phasetrace/perfetto"
	"github.com/phasetrace/phasetrace/perfetto/check"
)

// FuzzRead feeds arbitrary bytes to the reader: it must return a trace or
// an error, never panic, and a trace's indices must be in range. Every way
// of reading — Read, a Reader in memory, a Reader sorting in temporary
// files, a Reader without arguments — must give what the reference
// in-memory reader gives, the same trace or the same error.
func FuzzRead(f *testing.F) {
	var buf bytes.Buffer
	w := perfetto.NewWriter(&buf)
	th := w.Thread(perfetto.ThreadSpec{Pid: 1, Tid: 2, Name: "main"})
	c := w.CounterTrack(th, perfetto.CounterSpec{Name: "c"})
	id := perfetto.FlowIDOf("x")
	w.Slice(th, perfetto.Slice{Name: "a", TS: 10, Dur: 5, Args: []perfetto.Arg{perfetto.Int("n", 1), perfetto.Dict("d", perfetto.String("s", "v"))}, Flows: []perfetto.FlowID{id}})
	w.Slice(th, perfetto.Slice{Name: "b", TS: 20, Dur: 5, EndFlows: []perfetto.FlowID{id}})
	w.Counter(c, 12, 3)
	w.WallClock(10, 1000)
	w.Close()
	f.Add(buf.Bytes())
	var z bytes.Buffer
	w = perfetto.NewWriter(&z, perfetto.WithCompression(1))
	th = w.Thread(perfetto.ThreadSpec{Pid: 1, Tid: 2})
	w.Slice(th, perfetto.Slice{Name: "a", TS: 10, Dur: 5})
	w.Close()
	f.Add(z.Bytes())
	f.Add([]byte{})
	f.Add([]byte{0x0a, 0x00})
	f.Fuzz(func(t *testing.T, b []byte) {
		agreeOn(t, b)
		tr, err := check.ReadBytes(b)
		if err != nil {
			return
		}
		for _, fl := range tr.Flows {
			if fl.From < 0 || fl.From >= len(tr.Slices) || fl.To < 0 || fl.To >= len(tr.Slices) {
				t.Fatalf("flow %+v out of range", fl)
			}
		}
		for _, s := range tr.Slices {
			if s.Parent >= len(tr.Slices) {
				t.Fatalf("slice %+v has parent out of range", s)
			}
		}
		_ = tr.Dump(&bytes.Buffer{})
	})
}
