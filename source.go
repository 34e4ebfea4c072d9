package phasetrace

import (
	"fmt"
	"io"

	"github.com/phasetrace/phasetrace/strace"
)

// source is one log of the second pass and its next record. A goroutine
// parses the log ahead of the conversion (on another core) and hands over
// batches of records that own their memory.
type source struct {
	index   int    // the log's index among the inputs
	file    uint64 // its file index in the ledger
	in      Input
	rc      io.ReadCloser
	openErr error
	rd      *strace.Reader
	batches chan recordBatch
	batch   recordBatch
	pos     int
	rec     *strace.Record
	key     int64 // when the record was written (its prefix's mono_ns)
	done    bool
	shift   int64 // added to the log's host times
	repeat  int   // the next repeated capture of the log that may hold rec
}

// recordBatch is what a parsing goroutine hands over: records, or the
// error (or the panic of the caller's reader) that ended the log.
type recordBatch struct {
	recs     []strace.Record
	err      error
	panicked bool
	panicVal any
}

// internTable canonicalises the strings a log repeats (span names,
// attribute keys), up to maxInterned distinct ones.
type internTable struct{ m map[string]string }

const maxInterned = 1 << 14

func (t *internTable) of(s string) string {
	if c, ok := t.m[s]; ok {
		return c
	}
	if len(t.m) < maxInterned {
		t.m[s] = s
	}
	return s
}

// attrArena hands out attribute slices carved from larger blocks.
type attrArena struct{ block []strace.Attr }

const attrBlock = 4096

// copy returns a copy of attrs that no later copy overlaps (its capacity is
// its length).
func (a *attrArena) copy(attrs []strace.Attr) []strace.Attr {
	if len(attrs) == 0 {
		return nil
	}
	if len(a.block)+len(attrs) > cap(a.block) {
		a.block = make([]strace.Attr, 0, max(attrBlock, len(attrs)))
	}
	n := len(a.block)
	a.block = append(a.block, attrs...)
	return a.block[n : n+len(attrs) : n+len(attrs)]
}

// batchSize is how many records a parsing goroutine hands over at once.
const batchSize = 256

// openSources opens every log and starts its parsing goroutine. A log that
// cannot be opened keeps its error in openErr.
func (c *converter) openSources(logs []Input) ([]*source, chan struct{}) {
	stop := make(chan struct{})
	srcs := make([]*source, len(logs))
	for i, in := range logs {
		s := &source{index: i, file: c.led.file(in.Name), in: in, shift: c.shift[i], batches: make(chan recordBatch, 4)}
		srcs[i] = s
		rc, err := in.Open()
		if err != nil {
			s.openErr = fmt.Errorf("phasetrace: %s: %w", in.Name, err)
			close(s.batches)
			continue
		}
		s.rc = rc
		s.rd = strace.NewReader(c.progress.wrap(rc), strace.WithName(in.Name), strace.WithMaxLine(c.cfg.maxLine))
		go s.parse(stop)
	}
	return srcs, stop
}

// closeSources stops the parsing goroutines, waits for them, closes the
// logs and returns the readers' statistics. A close error becomes *err if
// there is none yet.
func closeSources(srcs []*source, stop chan struct{}, err *error) []strace.Stats {
	close(stop)
	stats := make([]strace.Stats, len(srcs))
	for i, s := range srcs {
		for range s.batches { // let the parser finish before closing its input
		}
		if s.rd != nil {
			stats[i] = s.rd.Stats()
		}
		if s.rc != nil {
			if cerr := s.rc.Close(); cerr != nil && *err == nil {
				*err = fmt.Errorf("phasetrace: %s: %w", s.in.Name, cerr)
			}
		}
	}
	return stats
}

// parse runs in its own goroutine: it reads the log and sends its records
// (spans and bind-phase lines, the records the second pass draws) in
// batches, then closes the channel. stop ends it early. A panic of the
// log's reader is handed over, to be raised again on the caller's
// goroutine.
func (s *source) parse(stop <-chan struct{}) {
	defer close(s.batches)
	b := make([]strace.Record, 0, batchSize)
	send := func(batch recordBatch) bool {
		select {
		case s.batches <- batch:
			b = make([]strace.Record, 0, batchSize)
			return true
		case <-stop:
			return false
		}
	}
	defer func() {
		if v := recover(); v != nil {
			send(recordBatch{panicked: true, panicVal: v})
		}
	}()
	names := internTable{m: map[string]string{}}
	var arena attrArena
	for {
		rec, err := s.rd.Read()
		if err == io.EOF {
			if len(b) > 0 {
				send(recordBatch{recs: b})
			}
			return
		}
		if err != nil {
			send(recordBatch{recs: b, err: err})
			return
		}
		if rec.Kind != strace.KindSpan && rec.Kind != strace.KindBindPhase {
			continue
		}
		// The record owns its attributes from here: copied into a shared
		// arena (one allocation for many records, not one each).
		rec.Span.Attrs = arena.copy(rec.Span.Attrs)
		rec.BindPhase.Attrs = arena.copy(rec.BindPhase.Attrs)
		if rec.Kind == strace.KindSpan {
			// One string per distinct name and key: the trace writer then
			// knows repeats by their address instead of hashing them again.
			rec.Span.Name = names.of(rec.Span.Name)
			for i := range rec.Span.Attrs {
				a := &rec.Span.Attrs[i]
				a.Key = names.of(a.Key)
				if a.Type == strace.TypeString && len(a.Value) <= 64 {
					a.Value = names.of(a.Value) // short values repeat: roles, clk=dev, ...
				}
			}
		}
		b = append(b, rec)
		if len(b) == batchSize && !send(recordBatch{recs: b}) {
			return
		}
	}
}

// next moves to the log's next record. The records of a batch that ended
// in an error are taken before the error is returned.
func (s *source) next() error {
	for s.pos >= len(s.batch.recs) {
		if s.batch.err != nil {
			return fmt.Errorf("phasetrace: %s: %w", s.in.Name, s.batch.err)
		}
		b, ok := <-s.batches
		if !ok {
			s.done = true
			return nil
		}
		if b.panicked {
			panic(b.panicVal)
		}
		s.batch, s.pos = b, 0
	}
	s.rec = &s.batch.recs[s.pos]
	s.pos++
	if d := s.shift; d != 0 {
		// A log from another host: move its host times onto the first
		// log's axis (device-clock spans keep their device offsets).
		s.rec.Prefix.MonoNS += d
		switch {
		case s.rec.Kind == strace.KindSpan && !s.rec.Span.IsDevice():
			s.rec.Span.TS += d
		case s.rec.Kind == strace.KindBindPhase:
			s.rec.BindPhase.StartNS = uint64(int64(s.rec.BindPhase.StartNS) + d)
		}
	}
	if s.rec.Prefix.Present {
		s.key = s.rec.Prefix.MonoNS // a record without a prefix keeps its place
	}
	return nil
}
