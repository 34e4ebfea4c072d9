package perfetto_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/phasetrace/phasetrace/perfetto"
)

// Every slice given is written, on its track or an overflow lane, or
// reported refused with its Ref: a caller that counts what it gave knows
// what the trace holds.
func TestRefusals(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	var refused []perfetto.Refusal
	w := perfetto.NewWriter(&buf, perfetto.WithRefusalFunc(func(r perfetto.Refusal) { refused = append(refused, r) }))
	dev := w.Track(perfetto.Track{}, perfetto.TrackSpec{Name: "device"})
	for i := range perfetto.MaxOverflowLanes + 3 {
		w.Slice(dev, perfetto.Slice{Name: fmt.Sprint("s", i), TS: int64(i), Dur: 100, Ref: uint64(i)})
	}
	w.Slice(dev, perfetto.Slice{Name: "neg", TS: -1, Dur: 1, Ref: 100})
	if len(refused) != 0 {
		t.Errorf("refusals reported before the flush: %+v", refused)
	}
	w.Flush()
	w.Slice(perfetto.Track{}, perfetto.Slice{Name: "nowhere", TS: 1, Ref: 101})
	w.Close()
	want := []perfetto.Refusal{
		{Track: "device", Name: "neg", TS: -1, Dur: 1, Ref: 100, Err: perfetto.ErrNegativeTimestamp},
		{Track: "device", Name: "s65", TS: 65, Dur: 100, Ref: 65, Err: perfetto.ErrTooManyLanes, Other: `partially overlaps "s0" [0, +100]`},
		{Track: "device", Name: "s66", TS: 66, Dur: 100, Ref: 66, Err: perfetto.ErrTooManyLanes, Other: `partially overlaps "s0" [0, +100]`},
		{Name: "nowhere", TS: 1, Ref: 101, Err: perfetto.ErrUnknownTrack},
	}
	if diff := cmp.Diff(want, refused, cmpopts.EquateErrors()); diff != "" {
		t.Errorf("refusals (-want +got):\n%s", diff)
	}
	st := w.Stats()
	if n := int64(len(readBack(t, buf.Bytes()).Slices)); n != st.Slices || n+int64(len(refused)) != perfetto.MaxOverflowLanes+3+2 || st.Dropped != int64(len(refused)) {
		t.Errorf("%d slices read back, stats %+v, %d refused", n, st, len(refused))
	}

	// A lane over the limit on tracks.
	buf.Reset()
	refused = nil
	w = perfetto.NewWriter(&buf, perfetto.WithMaxTracks(2), perfetto.WithRefusalFunc(func(r perfetto.Refusal) { refused = append(refused, r) }))
	th := w.Thread(perfetto.ThreadSpec{Pid: 1, Tid: 2})
	w.Slice(th, perfetto.Slice{Name: "a", TS: 0, Dur: 10, Ref: 1})
	w.Slice(th, perfetto.Slice{Name: "b", TS: 5, Dur: 10, Ref: 2})
	w.Close()
	want = []perfetto.Refusal{{Track: "thread 1/2", Name: "b", TS: 5, Dur: 10, Ref: 2, Err: perfetto.ErrTooManyTracks, Other: `partially overlaps "a" [0, +10]`}}
	if diff := cmp.Diff(want, refused, cmpopts.EquateErrors()); diff != "" {
		t.Errorf("refusals (-want +got):\n%s", diff)
	}
}

// A refused slice's flow ids are left out of the events of its flush that
// carry them, wherever they are: the trace holds no end of an arrow that
// is not there.
func TestRefusedFlows(t *testing.T) {
	t.Parallel()
	for _, partnerFirst := range []bool{false, true} {
		t.Run(fmt.Sprint("partner given first ", partnerFirst), func(t *testing.T) {
			t.Parallel()
			var buf bytes.Buffer
			var refused []perfetto.Refusal
			w := perfetto.NewWriter(&buf, perfetto.WithRefusalFunc(func(r perfetto.Refusal) { refused = append(refused, r) }))
			a := w.Thread(perfetto.ThreadSpec{Pid: 1, Tid: 1})
			b := w.Thread(perfetto.ThreadSpec{Pid: 1, Tid: 2})
			kept, lost := perfetto.FlowID(7), perfetto.FlowID(8)
			if partnerFirst {
				w.Slice(a, perfetto.Slice{Name: "submit", TS: 0, Dur: 5, Flows: []perfetto.FlowID{lost, kept}})
			}
			// Every lane of b taken, then a slice that fits none of them.
			for i := range perfetto.MaxOverflowLanes + 1 {
				w.Slice(b, perfetto.Slice{Name: "busy", TS: int64(10 + i), Dur: 100})
			}
			w.Slice(b, perfetto.Slice{Name: "dispatch", TS: 75, Dur: 100, EndFlows: []perfetto.FlowID{lost}})
			w.Slice(b, perfetto.Slice{Name: "kept", TS: 200, Dur: 10, EndFlows: []perfetto.FlowID{kept}})
			if !partnerFirst {
				w.Slice(a, perfetto.Slice{Name: "submit", TS: 0, Dur: 5, Flows: []perfetto.FlowID{lost, kept}})
			}
			w.Close()
			if len(refused) != 1 || refused[0].Name != "dispatch" || !cmp.Equal(refused[0].Flows, []perfetto.FlowID{lost}) {
				t.Fatalf("refused %+v", refused)
			}
			tr := readBack(t, buf.Bytes())
			if len(tr.Flows) != 1 || tr.Slices[tr.Flows[0].From].Name != "submit" || tr.Slices[tr.Flows[0].To].Name != "kept" {
				t.Errorf("flows %+v, want submit → kept alone", tr.Flows)
			}
			if st := w.Stats(); st.Flows != 2 {
				t.Errorf("%d flow ids written, want 2", st.Flows)
			}
			traceProcessor(t, buf.Bytes(), tr)
		})
	}
}

// A refused slice whose flow id an event written before it in the flush
// carries says so: that id stays in the trace, alone.
func TestRefusedFlowsAlone(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	var refused []perfetto.Refusal
	w := perfetto.NewWriter(&buf, perfetto.WithMaxTracks(2), perfetto.WithRefusalFunc(func(r perfetto.Refusal) { refused = append(refused, r) }))
	a := w.Thread(perfetto.ThreadSpec{Pid: 1, Tid: 1})
	b := w.Thread(perfetto.ThreadSpec{Pid: 1, Tid: 2})
	w.Slice(a, perfetto.Slice{Name: "submit", TS: 0, Dur: 5, Flows: []perfetto.FlowID{9}})
	w.Slice(b, perfetto.Slice{Name: "x", TS: 10, Dur: 10})
	w.Slice(b, perfetto.Slice{Name: "dispatch", TS: 15, Dur: 10, EndFlows: []perfetto.FlowID{9}}) // needs a lane past the limit
	w.Close()
	want := []perfetto.Refusal{{Track: "thread 1/2", Name: "dispatch", TS: 15, Dur: 10, Flows: []perfetto.FlowID{9}, Alone: []perfetto.FlowID{9},
		Err: perfetto.ErrTooManyTracks, Other: `partially overlaps "x" [10, +10]`}}
	if diff := cmp.Diff(want, refused, cmpopts.EquateErrors()); diff != "" {
		t.Errorf("refusals (-want +got):\n%s", diff)
	}
}

// An arrow left out after one of its ends was given leaves no id in the
// trace, whichever end came first; the arrows given in full are kept, and
// an id left out is forgotten at the flush.
func TestLeaveOutFlows(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	w := perfetto.NewWriter(&buf)
	host := w.Thread(perfetto.ThreadSpec{Pid: 1, Tid: 1})
	dev := w.Track(perfetto.Track{}, perfetto.TrackSpec{Name: "device"})
	kept, left := perfetto.FlowID(3), perfetto.FlowID(4)
	w.Slice(host, perfetto.Slice{Name: "runner_run", TS: 0, Dur: 100, Flows: []perfetto.FlowID{kept, left}})
	w.LeaveOutFlows([]perfetto.FlowID{left})
	w.Slice(dev, perfetto.Slice{Name: "device_wall", TS: 10, Dur: 50, EndFlows: []perfetto.FlowID{kept}})
	w.Flush()
	w.Slice(host, perfetto.Slice{Name: "again", TS: 200, Dur: 10, Flows: []perfetto.FlowID{left}})
	w.Slice(dev, perfetto.Slice{Name: "again", TS: 205, Dur: 1, EndFlows: []perfetto.FlowID{left}})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	tr := readBack(t, buf.Bytes())
	var got []string
	for _, f := range tr.Flows {
		got = append(got, fmt.Sprintf("%d: %s → %s", f.ID, tr.Slices[f.From].Name, tr.Slices[f.To].Name))
	}
	want := []string{"3: runner_run → device_wall", "4: again → again"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("flows (-want +got):\n%s", diff)
	}
	if len(tr.Problems) > 0 {
		t.Errorf("problems: %v", tr.Problems)
	}
	if st := w.Stats(); st.Flows != 4 {
		t.Errorf("%d flow ids written, want 4", st.Flows)
	}
	traceProcessor(t, buf.Bytes(), tr)
}
