package phasetrace

import (
	"bytes"
	"flag"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/phasetrace/phasetrace/strace"
	"github.com/phasetrace/phasetrace/strace/stracetest"
)

// recordedSecondPass is the second pass's records of its logs, each with
// its log's index, read once and replayed.
type recordedSecondPass struct {
	logs []Input
	recs []strace.Record
	srcs []int
	// inputs are what Convert's summary says of the logs once read.
	inputs []InputSummary
}

// recordSecondPass reads the second pass's records of logs as the converter
// gets them, keeping copies that stay valid.
func recordSecondPass(tb testing.TB, logs []Input) *recordedSecondPass {
	c := newConverter(nil)
	if err := c.prepare(logs); err != nil {
		tb.Fatal(err)
	}
	c.start(io.Discard, true)
	defer c.close()
	ss := c.openSources(logs)
	r := &recordedSecondPass{logs: logs}
	for {
		s, err := ss.next()
		if err != nil {
			tb.Fatal(err)
		}
		if s == nil {
			for i, st := range ss.close(new(error)) { // what the trace says of its inputs
				r.inputs = append(r.inputs, inputSummary(logs[i].Name, st, ss.rcs[i]))
			}
			return r
		}
		rec := s.rec.Clone()
		for _, as := range [][]strace.Attr{rec.Span.Attrs, rec.BindPhase.Attrs} {
			for i := range as {
				if len(as[i].Value) > strace.CanonicalValueLen { // in the recycled memory
					as[i].Value = strings.Clone(as[i].Value)
				}
			}
		}
		r.recs = append(r.recs, rec)
		r.srcs = append(r.srcs, s.index)
	}
}

// replay converts the recorded records to w as Convert's second pass does,
// once their logs are prepared as Convert prepares them; started is called
// then.
func (r *recordedSecondPass) replay(tb testing.TB, w io.Writer, started func()) {
	c := newConverter(nil)
	if err := c.prepare(r.logs); err != nil {
		tb.Fatal(err)
	}
	c.start(w, true)
	srcs := make([]*source, len(r.logs))
	for i, in := range r.logs {
		srcs[i] = &source{index: i, file: c.acct.file(in.Name), shift: c.shift[i]}
	}
	started()
	for i := range r.recs {
		s := srcs[r.srcs[i]]
		s.rec = &r.recs[i]
		c.takeRecord(s)
	}
	c.drain()
	c.sum.Inputs = r.inputs
	for _, in := range r.inputs {
		c.sum.Spans.Read += in.Records["span"]
	}
	if _, err := c.close(); err != nil {
		tb.Fatal(err)
	}
}

// The replay BenchmarkSecondPass measures writes Convert's trace, byte for
// byte: for a log, a log given twice (a repeated capture), a log with a span
// line repeated, and two logs merged.
func TestReplayedSecondPassIsConvert(t *testing.T) {
	gen := func(seed uint64) []byte {
		log, _ := stracetest.GenerateTruth(stracetest.Config{Seed: seed, Rounds: 40, AnchorEvry: 50_000_000, Pipelined: true, Legacy: true, Ext: true})
		return log
	}
	one, other := gen(5), gen(6)
	lines := bytes.SplitAfter(one, []byte("\n"))
	var dup []byte
	for i, l := range lines {
		dup = append(dup, l...)
		if i%50 == 7 && bytes.Contains(l, []byte("[STRACE]")) {
			dup = append(dup, l...)
		}
	}
	for _, c := range []struct {
		name string
		logs []Input
	}{
		{"one log", []Input{Bytes("gen.log", one)}},
		{"a log given twice", []Input{Bytes("twice.log", append(append([]byte(nil), one...), one...))}},
		{"spans repeated", []Input{Bytes("dup.log", dup)}},
		{"two logs", []Input{Bytes("a.log", one), Bytes("b.log", other)}},
	} {
		var want, got bytes.Buffer
		sum, err := Convert(&want, c.logs)
		if err != nil {
			t.Fatal(err)
		}
		if c.name != "one log" && c.name != "two logs" && len(sum.Spans.NotDrawn) == 0 {
			t.Errorf("%s: nothing left out as a repeat", c.name)
		}
		recordSecondPass(t, c.logs).replay(t, &got, func() {})
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("%s: the replayed second pass wrote %d bytes, Convert %d, not the same", c.name, got.Len(), want.Len())
		}
	}
}

// BenchmarkSecondPass replays the second pass's records of the -benchfile
// log (else of a generated one of -convsize bytes, BenchmarkConvert's)
// through the converter, the trace written uncompressed nowhere: the
// conversion's own work per span, without parsing (the first pass runs
// with the timer stopped).
//
//	go test -run XXX -bench SecondPass -benchtime 10x -benchfile /tmp/mid.log .
func BenchmarkSecondPass(b *testing.B) {
	var logs []Input
	if f := flag.Lookup("benchfile"); f != nil && f.Value.String() != "" {
		logs = []Input{File(f.Value.String())}
	} else {
		size := 8 << 20
		if f := flag.Lookup("convsize"); f != nil {
			size, _ = strconv.Atoi(f.Value.String())
		}
		// The shape of BenchmarkConvert's log, rounds added until it is size bytes.
		cfg := stracetest.Config{Seed: 99, Rounds: 64, AnchorEvry: 100_000_000, Pipelined: true, Legacy: true, Ext: true}
		one, _ := stracetest.GenerateTruth(cfg)
		cfg.Rounds = size/(len(one)/cfg.Rounds) + 1
		log, _ := stracetest.GenerateTruth(cfg)
		logs = []Input{Bytes("bench.log", log)}
	}
	r := recordSecondPass(b, logs)
	var spans int64
	for i := range r.recs {
		if r.recs[i].Kind == strace.KindSpan {
			spans++
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		r.replay(b, io.Discard, b.StartTimer)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(spans*int64(b.N)), "ns/span")
}
