package phasetrace_test

import (
	"bytes"
	"os"
	"testing"

	"github.com/phasetrace/phasetrace"
	"github.com/phasetrace/phasetrace/perfetto/check"
)

// FuzzConvert converts arbitrary logs: the converter must never panic, and
// whatever it writes must read back without a problem the trace processor
// would report (a record it cannot place is counted, never drawn wrong).
func FuzzConvert(f *testing.F) {
	sample, err := os.ReadFile(samplePath)
	if err != nil {
		f.Fatal(err)
	}
	// Seeds: slices of the sample (a whole run with its device spans, the
	// L3 hand-offs, anchors), and the quirks of real logs.
	lines := bytes.SplitAfter(sample, []byte("\n"))
	f.Add(bytes.Join(lines[:60], nil))
	f.Add(bytes.Join(lines[100:180], nil))
	f.Add(generated(genConfig{Seed: 1, Rounds: 2, AnchorEvry: 1_000_000, Pipelined: true}))
	f.Add([]byte("[mono_ns=1][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=1 tid=1 inv=1 hid=1 depth=0 name=chip.run ts=10 dur=5 slot_id=0\n" +
		"[mono_ns=2][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=1 tid=1 inv=2 hid=1 depth=0 name=chip.run ts=12 dur=5 slot_id=1\n"))
	f.Add([]byte("[mono_ns=1][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=1 tid=1 inv=1 hid=1 depth=2 name=chip.run.runner_run.device_wall ts=0 dur=50 clk=dev origin_cyc=7 dev=0\n" +
		"[mono_ns=1][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=1 tid=1 inv=1 hid=1 depth=1 name=chip.run.runner_run ts=100 dur=10\n" +
		"[mono_ns=2][T0x1][TIMING] clock_anchor: [CLOCK_ANCHOR] v=2 pid=1 tid=1 dev=0 host_ns=90 window_ns=4 dev_cyc=5 dev_freq=1000000000\n" +
		"[mono_ns=3][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=1 tid=1 inv=1 hid=1 depth=0 name=chip.run ts=95 dur=30\n"))
	f.Fuzz(func(t *testing.T, log []byte) {
		var out bytes.Buffer
		sum, err := phasetrace.Convert(&out, []phasetrace.Input{phasetrace.Bytes("fuzz.log", log)})
		if err != nil {
			return // the writer refused an event: reported, nothing drawn wrong
		}
		tr, err := check.ReadBytes(out.Bytes())
		if err != nil {
			t.Fatalf("the trace does not decode: %v", err)
		}
		if err := tr.Err(); err != nil {
			t.Fatalf("the trace processor would report: %v\nsummary %+v", err, sum)
		}
	})
}
