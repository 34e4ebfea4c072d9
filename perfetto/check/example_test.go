package check_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/phasetrace/phasetrace/perfetto"
	"github.com/phasetrace/phasetrace/perfetto/check"
)

// Reading a trace back: what the trace processor would build, and the
// problems it would report.
func ExampleRead() {
	var b bytes.Buffer
	w := perfetto.NewWriter(&b)
	th := w.Thread(perfetto.ThreadSpec{Pid: 7, Tid: 7, Name: "main"})
	w.Slice(th, perfetto.Slice{Name: "chip.run", TS: 1_000, Dur: 500, Args: []perfetto.Arg{perfetto.Uint("inv", 3)}})
	w.Slice(th, perfetto.Slice{Name: "chip.run.bind", TS: 1_000, Dur: 100, Depth: 1})
	if err := w.Close(); err != nil {
		fmt.Println(err)
		return
	}
	tr, err := check.Read(&b)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range tr.Slices {
		fmt.Println(s.Depth, s.Name, s.TS, s.Dur, s.Args)
	}
	fmt.Println("problems:", tr.Err())
	// Output:
	// 0 chip.run 1000 500 [{inv 3}]
	// 1 chip.run.bind 1000 100 []
	// problems: <nil>
}

// Dump prints a stable text form of a trace, for golden files.
func ExampleTrace_Dump() {
	var b bytes.Buffer
	w := perfetto.NewWriter(&b)
	w.Slice(w.Thread(perfetto.ThreadSpec{Pid: 7, Tid: 8, Name: "worker"}), perfetto.Slice{Name: "step", TS: 5, Dur: 2})
	w.Close()
	tr, _ := check.ReadBytes(b.Bytes())
	tr.Dump(os.Stdout)
	// Output:
	// clock MONOTONIC
	// thread 7/8 "worker"
	//   [5 +2] step
}

// A file that is not a trace: the error says where, and unwraps to
// ErrFormat and to its cause.
func ExampleReadBytes_error() {
	_, err := check.ReadBytes([]byte{0x0a, 0xff})
	fmt.Println(err)
	fmt.Println(errors.Is(err, check.ErrFormat), errors.Is(err, io.ErrUnexpectedEOF))
	// Output:
	// check: byte 2: malformed trace: reading a length: unexpected EOF
	// true true
}

// FormatValue prints an argument value as Dump does, in its own type.
func ExampleFormatValue() {
	fmt.Println(check.FormatValue(uint64(3)), check.FormatValue("x"), check.FormatValue([]check.Arg{{Name: "n", Value: int64(-1)}}))
	// Output:
	// 3 "x" {n=-1}
}

// A Reader hands over what it finds one record at a time: here a slice
// whose child ends first, a flow between the two, and the problem of a
// slice never ended. Only the arguments of slices on tracks named "main"
// are kept: chip.wait, on track "waits", has none.
func ExampleReader() {
	var b bytes.Buffer
	w := perfetto.NewWriter(&b)
	th := w.Thread(perfetto.ThreadSpec{Pid: 7, Tid: 7, Name: "main"})
	id := perfetto.FlowIDOf("run 3")
	w.Slice(th, perfetto.Slice{Name: "chip.run", TS: 1_000, Dur: 500, Args: []perfetto.Arg{perfetto.Uint("inv", 3)}, Flows: []perfetto.FlowID{id}})
	w.Slice(th, perfetto.Slice{Name: "chip.run.bind", TS: 1_000, Dur: 100, Depth: 1, EndFlows: []perfetto.FlowID{id}})
	w.Begin(w.Track(th, perfetto.TrackSpec{Name: "waits"}), perfetto.Slice{Name: "chip.wait", TS: 2_000, Args: []perfetto.Arg{perfetto.Uint("inv", 4)}})
	if err := w.Close(); err != nil {
		fmt.Println(err)
		return
	}
	rd := check.NewReader(&b, check.WithArgs(func(tr *check.Track) bool { return tr != nil && tr.Name == "main" }))
	defer rd.Close()
	for {
		rec, err := rd.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			fmt.Println(err)
			return
		}
		switch rec.Kind {
		case check.KindSlice:
			fmt.Println(rec.Kind, rec.Index, rec.Slice.Name, rec.Slice.TS, rec.Slice.Dur, rec.Slice.Args)
		case check.KindFlow:
			fmt.Println(rec.Kind, rec.Flow.From, "->", rec.Flow.To)
		case check.KindProblem:
			fmt.Println(rec.Kind, rec.Problem)
		}
	}
	fmt.Println(len(rd.Trace().Tracks), "tracks,", rd.Trace().Packets, "packets")
	// Output:
	// flow 0 -> 1
	// slice 1 chip.run.bind 1000 100 []
	// slice 0 chip.run 1000 500 [{inv 3}]
	// slice 2 chip.wait 2000 -1 []
	// problem slice_not_ended: slice "chip.wait" at 2000 never ended
	// 2 tracks, 10 packets
}
