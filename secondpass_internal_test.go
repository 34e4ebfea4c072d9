package phasetrace

import (
	"flag"
	"io"
	"strings"
	"testing"

	"github.com/phasetrace/phasetrace/strace"
)

// recordedSecondPass is the second pass's records of one log, each with its
// source, read once and replayed.
type recordedSecondPass struct {
	logs []Input
	recs []strace.Record
	srcs []int
}

// recordSecondPass reads the second pass's records of logs as the converter
// gets them, keeping copies that stay valid.
func recordSecondPass(tb testing.TB, logs []Input) *recordedSecondPass {
	c := newConverter(nil)
	for _, in := range logs {
		c.names = append(c.names, in.Name)
	}
	if err := c.firstPass(logs, nil); err != nil {
		tb.Fatal(err)
	}
	c.start(io.Discard, c.scan.shifts)
	defer c.close()
	ss := c.openSources(logs)
	defer ss.close(new(error))
	r := &recordedSecondPass{logs: logs}
	for {
		s, err := ss.next()
		if err != nil {
			tb.Fatal(err)
		}
		if s == nil {
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

// BenchmarkSecondPass replays the second pass's records of the -benchfile
// log (else a generated one of -convsize bytes) through the converter, the
// trace written uncompressed nowhere: the conversion's own work per span,
// without parsing (the first pass runs with the timer stopped).
//
//	go test -run XXX -bench SecondPass -benchtime 10x -benchfile /tmp/mid.log .
func BenchmarkSecondPass(b *testing.B) {
	var logs []Input
	if f := flag.Lookup("benchfile"); f != nil && f.Value.String() != "" {
		logs = []Input{File(f.Value.String())}
	} else {
		b.Skip("no -benchfile log given")
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
		c := newConverter(nil)
		for _, in := range logs {
			c.names = append(c.names, in.Name)
		}
		if err := c.firstPass(logs, nil); err != nil {
			b.Fatal(err)
		}
		c.start(io.Discard, c.scan.shifts)
		srcs := make([]*source, len(logs))
		for i, in := range logs {
			srcs[i] = &source{index: i, file: c.led.file(in.Name), shift: c.shift[i]}
		}
		b.StartTimer()
		for i := range r.recs {
			s := srcs[r.srcs[i]]
			s.rec = &r.recs[i]
			c.record(s)
		}
		c.drain()
		if _, err := c.close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(spans*int64(b.N)), "ns/span")
}
