package perfetto_test

import (
	"bytes"
	"fmt"
	"os"

	"github.com/phasetrace/phasetrace/perfetto"
	"github.com/phasetrace/phasetrace/perfetto/check"
)

// Slices can be given in any order — here children first, as a log writes
// them, with a child starting exactly where its parent does. The writer
// orders the events so the trace processor rebuilds the nesting; check.Read
// shows what it would build.
func ExampleWriter() {
	var buf bytes.Buffer
	w := perfetto.NewWriter(&buf)
	th := w.Thread(perfetto.ThreadSpec{Pid: 10, Tid: 11, Name: "main"})
	w.Slice(th, perfetto.Slice{Name: "chip.run.bind", TS: 1000, Dur: 200, Depth: 1})
	w.Slice(th, perfetto.Slice{Name: "chip.run.runner_run", TS: 1200, Dur: 700, Depth: 1})
	w.Slice(th, perfetto.Slice{Name: "chip.run", TS: 1000, Dur: 1000,
		Args: []perfetto.Arg{perfetto.Int("inv", 3), perfetto.String("hid", "9f3c")}})
	if err := w.Close(); err != nil {
		fmt.Println(err)
		return
	}

	tr, err := check.ReadBytes(buf.Bytes())
	if err != nil {
		fmt.Println(err)
		return
	}
	tr.Dump(os.Stdout)
	// Output:
	// clock MONOTONIC
	// thread 10/11 "main"
	//   [1000 +1000] chip.run inv=3 hid="9f3c"
	//     [1000 +200] chip.run.bind
	//     [1200 +700] chip.run.runner_run
}

// Flows draw an arrow from the slice that starts them to the slice that
// terminates them.
func ExampleFlowIDOf() {
	var buf bytes.Buffer
	w := perfetto.NewWriter(&buf)
	sched := w.Thread(perfetto.ThreadSpec{Pid: 1, Tid: 1, Name: "scheduler"})
	id := perfetto.FlowIDOf("1/run 7/slot 0")
	w.Slice(sched, perfetto.Slice{Name: "node.submit", TS: 100, Dur: 10, Flows: []perfetto.FlowID{id}})
	w.Slice(sched, perfetto.Slice{Name: "node.dispatch", TS: 150, Dur: 10, EndFlows: []perfetto.FlowID{id}})
	w.Close()

	tr, _ := check.ReadBytes(buf.Bytes())
	for _, f := range tr.Flows {
		fmt.Println(tr.Slices[f.From].Name, "->", tr.Slices[f.To].Name)
	}
	// Output:
	// node.submit -> node.dispatch
}

// A slice that cannot nest on its track — here one that starts inside
// another and ends after it — is drawn on an overflow lane beside the
// track, with the reason; the caller hears of it with its own Ref.
func ExampleWithOverflowFunc() {
	var buf bytes.Buffer
	w := perfetto.NewWriter(&buf, perfetto.WithOverflowFunc(func(o perfetto.Overflow) {
		fmt.Printf("line %d: %s moved to overflow lane %d: %v\n", o.Ref, o.Name, o.Lane, o.Err)
	}))
	th := w.Thread(perfetto.ThreadSpec{Pid: 10, Tid: 11, Name: "main"})
	w.Slice(th, perfetto.Slice{Name: "chip.run", TS: 1000, Dur: 500, Ref: 1})
	w.Slice(th, perfetto.Slice{Name: "chip.run.bind", TS: 1400, Dur: 200, Ref: 2})
	if err := w.Close(); err != nil {
		fmt.Println(err)
		return
	}

	tr, err := check.ReadBytes(buf.Bytes())
	if err != nil {
		fmt.Println(err)
		return
	}
	tr.Dump(os.Stdout)
	// Output:
	// line 2: chip.run.bind moved to overflow lane 1: slice partially overlaps another slice on the same track
	// clock MONOTONIC
	// process 10 ""
	//   track "main 11 (overflow 1)" merge=none
	//     [1400 +200] chip.run.bind overflow_reason="partially overlaps \"chip.run\" [1000, +500]"
	//   thread 10/11 "main"
	//     [1000 +500] chip.run
}
