package phasetrace_test

import (
	"bytes"
	"fmt"
	"io"

	"github.com/phasetrace/phasetrace"
	"github.com/phasetrace/phasetrace/reduce/analysis"
	"github.com/phasetrace/phasetrace/strace/stracetest"
)

// The steps table of a log: a row per run as the conversion draws it,
// with its number in the trace, whether it is cold and the widest bound
// of its device slices. Converting to io.Discard keeps no trace; Slow
// ranks the rows (what "stracestat slow" prints).
func ExampleWithSteps() {
	var log bytes.Buffer
	stracetest.Generate(&log, stracetest.Config{Seed: 1, Rounds: 3, AnchorEvry: 100_000_000})
	slow := analysis.NewSlow(1, false)
	steps := phasetrace.WithSteps(func(s *analysis.Step) {
		fmt.Printf("run %d: pid %d inv %d, chip.run %d ns, device_wall %d ns, bound %d ns, cold %v\n",
			s.Run, s.Pid, s.Inv, s.ChipRun, s.DeviceWall().Int, s.Bound.Int, s.Cold)
		slow.Add(s)
	})
	if _, err := phasetrace.Convert(io.Discard, []phasetrace.Input{phasetrace.Bytes("run.log", log.Bytes())}, steps); err != nil {
		fmt.Println(err)
		return
	}
	top := slow.Result()[0].Slowest[0]
	fmt.Printf("slowest warm run of %x: run %d, %d ns over the median, most in %s\n", slow.Result()[0].Hid, top.Step.Run, top.Excess.Int, top.Stages[0].Name)
	// Output:
	// run 1: pid 4100 inv 1, chip.run 73689268 ns, device_wall 31587660 ns, bound 8148 ns, cold true
	// run 2: pid 4200 inv 1, chip.run 74426719 ns, device_wall 32561408 ns, bound 11754 ns, cold true
	// run 3: pid 4100 inv 2, chip.run 44835266 ns, device_wall 42975660 ns, bound 9987 ns, cold true
	// run 4: pid 4200 inv 2, chip.run 39021002 ns, device_wall 36782491 ns, bound 12227 ns, cold true
	// run 5: pid 4100 inv 3, chip.run 42648591 ns, device_wall 40159960 ns, bound 6387 ns, cold false
	// run 6: pid 4200 inv 3, chip.run 42964547 ns, device_wall 40927133 ns, bound 18261 ns, cold false
	// slowest warm run of 9f3c2a11d00db1e5: run 6, 157978 ns over the median, most in orch
}
