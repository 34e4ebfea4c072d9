package phasetrace_test

import (
	"bytes"
	"io"
	"os"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/phasetrace/phasetrace"
	"github.com/phasetrace/phasetrace/perfetto"
	"github.com/phasetrace/phasetrace/strace/stracetest"
)

// FuzzConvert converts arbitrary logs: the converter must never fail or
// panic on data, whatever it writes must read back without a problem the
// trace processor would report, and every span read must be drawn or
// counted under a reason — drawn meaning in the trace: read back, it holds
// as many slices of spans as Spans.Drawn and as many arrows as
// Summary.Flows counts.
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
	f.Add(stracetest.OverlappingSpans(perfetto.MaxOverflowLanes + 5)) // spans refused by the writer
	for _, tc := range hostileLogs() {
		if len(tc.logs) == 1 && len(tc.logs[0]) < 64<<10 {
			f.Add([]byte(tc.logs[0]))
		}
	}
	f.Fuzz(func(t *testing.T, log []byte) {
		t.Parallel() // the seeds side by side; no effect while fuzzing
		// The rule: bad data is never an error, the trace reads back
		// clean, and every span read is drawn or counted under a reason,
		// with the trace holding what the summary says was drawn — for
		// the log alone, given twice (a second input: repeats), and cut
		// in two logs under a track limit its first byte sets.
		var out bytes.Buffer
		sum, err := phasetrace.Convert(&out, []phasetrace.Input{phasetrace.Bytes("fuzz.log", log)})
		if err != nil {
			t.Fatalf("Convert failed on data: %v", err)
		}
		wholeTrace(t, out.Bytes(), sum)
		recordsInAnyOrder(t, log)

		out.Reset()
		sum, err = phasetrace.Convert(&out, []phasetrace.Input{phasetrace.Bytes("fuzz.log", log), phasetrace.Bytes("again.log", log)})
		if err != nil {
			t.Fatalf("Convert failed on the log given twice: %v", err)
		}
		wholeTrace(t, out.Bytes(), sum)

		if len(log) == 0 {
			return
		}
		half := len(log) / 2
		if i := bytes.IndexByte(log[half:], '\n'); i >= 0 {
			half += i + 1
		}
		out.Reset()
		limit := phasetrace.WithMaxTracks(1 + int(log[0])%12)
		sum, err = phasetrace.Convert(&out, []phasetrace.Input{phasetrace.Bytes("a.log", log[:half]), phasetrace.Bytes("b.log", log[half:])}, limit)
		if err != nil {
			t.Fatalf("Convert failed on the log in two under a track limit: %v", err)
		}
		wholeTrace(t, out.Bytes(), sum)
	})
}

// recordsInAnyOrder converts log with a host_phase_records pass for each
// of its binds, written in order, reversed, and reversed again through an
// input that cannot seek: the order never changes the trace or the
// account.
func recordsInAnyOrder(t *testing.T, log []byte) {
	lines := bindPassLines(log)
	if len(lines) < 2 {
		return
	}
	reversed := slices.Clone(lines)
	slices.Reverse(reversed)
	art := jsonl(reversed)
	convert := func(in phasetrace.Input) ([]byte, *phasetrace.Summary) {
		var out bytes.Buffer
		sum, err := phasetrace.Convert(&out, []phasetrace.Input{phasetrace.Bytes("fuzz.log", log)}, phasetrace.WithPhaseRecords(in))
		if err != nil {
			t.Fatalf("Convert failed on data with records: %v", err)
		}
		return out.Bytes(), sum
	}
	want, wantSum := convert(phasetrace.Bytes("records.jsonl", jsonl(lines)))
	wholeTrace(t, want, wantSum)
	for _, in := range []phasetrace.Input{
		phasetrace.Bytes("records.jsonl", art),
		{Name: "records.jsonl", Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(art)), nil }},
	} {
		got, sum := convert(in)
		if !bytes.Equal(got, want) {
			t.Fatal("the records reversed change the trace")
		}
		if diff := cmp.Diff(wantSum.NotDrawn, sum.NotDrawn); diff != "" {
			t.Fatalf("the records reversed change what is not drawn (-in order +reversed):\n%s", diff)
		}
	}
}

// FuzzConvertSplit converts arbitrary logs split into parts of a size the
// log's first byte sets: the converter must never fail on data, every part
// and the overview must read back without a problem the trace processor
// would report, every span read must be drawn or counted, the parts must
// hold the slices the summary says were drawn — no part over its size but
// one holding a single invocation — and their arrows those it says were
// drawn.
func FuzzConvertSplit(f *testing.F) {
	sample, err := os.ReadFile(samplePath)
	if err != nil {
		f.Fatal(err)
	}
	lines := bytes.SplitAfter(sample, []byte("\n"))
	f.Add(bytes.Join(lines[:60], nil))
	f.Add(bytes.Join(lines[100:300], nil))
	f.Add(generated(genConfig{Seed: 1, Rounds: 4, AnchorEvry: 1_000_000, Pipelined: true, Ext: true, Prewarm: true}))
	for _, tc := range hostileLogs() {
		if len(tc.logs) == 1 && len(tc.logs[0]) < 16<<10 {
			f.Add([]byte(tc.logs[0]))
		}
	}
	f.Fuzz(func(t *testing.T, log []byte) {
		t.Parallel() // the seeds side by side; no effect while fuzzing
		max := 1
		if len(log) > 0 {
			max += int(log[0]) % 64
		}
		m := &memParts{}
		var ov bytes.Buffer
		sum, err := phasetrace.Convert(&ov, []phasetrace.Input{phasetrace.Bytes("fuzz.log", log)}, phasetrace.WithSplit(max, m.openPart))
		if err != nil {
			t.Fatalf("Convert failed on data: %v", err)
		}
		if err := sum.Spans.Check(); err != nil {
			t.Fatal(err)
		}
		if len(m.parts) != len(sum.Split.Parts) {
			t.Fatalf("%d parts written, the summary lists %d", len(m.parts), len(sum.Split.Parts))
		}
		var spans, slices, flows, alone int64
		for i, p := range m.parts {
			tr, err := readTrace(p.Bytes())
			if err != nil {
				t.Fatalf("part %d does not decode: %v", i+1, err)
			}
			fullNamed(t, tr)
			if n := loneFlowIDs(tr); n > 0 && n == len(tr.Problems) {
				alone += int64(n) // an arrow across parts (checked below)
			} else if err := tr.Err(); err != nil && !strandedSaid(tr, sum) {
				t.Fatalf("part %d: the trace processor would report: %v", i+1, err)
			}
			if len(tr.Slices) > max && len(invocationsOf(tr)) != 1 {
				t.Errorf("part %d holds %d slices, over %d, of %d invocations", i+1, len(tr.Slices), max, len(invocationsOf(tr)))
			}
			if n := int64(len(tr.Slices)); n != sum.Split.Parts[i].Slices {
				t.Errorf("part %d holds %d slices, the summary says %d", i+1, n, sum.Split.Parts[i].Slices)
			}
			spans += spanSlices(tr)
			slices += int64(len(tr.Slices))
			flows += int64(len(tr.Flows))
		}
		if across := sum.Unlinked[phasetrace.ReasonArrowAcrossParts]; alone > across {
			t.Errorf("%d flow ids alone in their parts, %d arrows across parts", alone, across)
		}
		if spans != sum.Spans.Drawn || slices != sum.Output.Slices || flows != arrows(sum) {
			t.Errorf("the parts hold %d slices of spans, %d slices, %d arrows; the summary says %d, %d, %d", spans, slices, flows, sum.Spans.Drawn, sum.Output.Slices, arrows(sum))
		}
		tr, err := readTrace(ov.Bytes())
		if err != nil {
			t.Fatalf("the overview does not decode: %v", err)
		}
		fullNamed(t, tr)
		if err := tr.Err(); err != nil {
			t.Fatalf("the overview: the trace processor would report: %v", err)
		}
	})
}
