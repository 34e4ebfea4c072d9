package phasetrace

import (
	"fmt"
	"io"

	"github.com/phasetrace/phasetrace/internal/held"
	"github.com/phasetrace/phasetrace/internal/repeats"
	"github.com/phasetrace/phasetrace/strace"
)

// source is one log of the second pass and the record it holds.
type source struct {
	index  int    // the log's index among the inputs
	file   uint64 // its file index in the account
	rec    *strace.Record
	shift  int64 // added to the log's host times
	repeat int   // the next repeated capture of the log that may hold rec
	// Captures that repeat earlier ones in part: the next that may hold
	// rec, and rec's key (recordKey, of the record as the log holds it)
	// when the log has any (keyed).
	near  int
	keyed bool
	key   uint64
}

// sources reads the logs of the second pass together, in the order their
// records were written (strace.Merger), keeping the spans and bind-phase
// lines, the records the second pass draws.
type sources struct {
	srcs    []*source
	names   []string
	rcs     []*CutReader // each log read up to where its stream was cut
	m       *strace.Merger
	openErr error // the first log that could not be opened
	// adjust puts a record of a remote machine's log on the axis
	// (remoteplan.Plan.Adjust); nil when there is none.
	adjust func(i int, rec *strace.Record)
}

// openSources opens every log and starts reading them. A log that cannot be
// opened leaves its error in openErr, and none is read.
func (c *converter) openSources(logs []Input) *sources {
	ss := &sources{srcs: make([]*source, len(logs)), names: make([]string, len(logs)), rcs: make([]*CutReader, len(logs))}
	ins := make([]strace.MergeInput, len(logs))
	for i, in := range logs {
		ss.srcs[i] = &source{index: i, file: c.acct.file(in.Name), shift: c.shift[i], keyed: c.repeated.Near != nil && len(c.repeated.Near[i]) > 0}
		ss.names[i] = in.Name
		rc, err := openInput(in)
		if err != nil {
			if ss.openErr == nil {
				ss.openErr = fmt.Errorf("phasetrace: %s: %w", in.Name, err)
			}
			continue
		}
		ss.rcs[i] = rc
		ins[i] = strace.MergeInput{Name: in.Name, R: c.progress.wrap(rc), MonoShift: c.shift[i] + c.remote.MergeShift(i)}
	}
	switch {
	case c.remote != nil:
		ss.adjust = c.adjustRemote
	case c.cmp != nil:
		ss.adjust = c.cmp.Adjust
	}
	if ss.openErr == nil {
		ss.m = strace.NewMerger(ins, strace.WithMaxLine(c.cfg.maxLine), strace.WithKinds(strace.KindSpan, strace.KindBindPhase), strace.WithRecycledMemory())
	}
	return ss
}

// close stops reading, waits for the readers, closes the logs and returns
// the readers' statistics. A close error becomes *err if there is none yet.
func (ss *sources) close(err *error) []strace.Stats {
	stats := make([]strace.Stats, len(ss.srcs))
	if ss.m != nil {
		ss.m.Close()
		stats = ss.m.Stats()
	}
	for i, rc := range ss.rcs {
		if rc == nil {
			continue
		}
		if cerr := rc.Close(); cerr != nil && *err == nil {
			*err = fmt.Errorf("phasetrace: %s: %w", ss.names[i], cerr)
		}
	}
	return stats
}

// next returns the log holding the next record, or nil when every log is
// over. A log from another host has its host times moved onto the first
// log's axis.
func (ss *sources) next() (*source, error) {
	rec, i, err := ss.m.Read()
	if err == io.EOF {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("phasetrace: %w", err)
	}
	s := ss.srcs[i]
	s.rec = rec
	if s.keyed {
		s.key, _ = repeats.RecordKey(rec)
	}
	if d := s.shift; d != 0 {
		// Device-clock spans keep their device offsets.
		rec.Prefix.MonoNS += d
		switch {
		case rec.Kind == strace.KindSpan && !rec.Span.IsDevice():
			rec.Span.TS += d
		case rec.Kind == strace.KindBindPhase:
			rec.BindPhase.StartNS = uint64(int64(rec.BindPhase.StartNS) + d)
		}
	}
	if ss.adjust != nil {
		ss.adjust(i, rec)
	}
	return s, nil
}

// adjustRemote puts a record of log i on the dispatching host's axis.
func (c *converter) adjustRemote(i int, rec *strace.Record) {
	var pm map[int32]int32
	if i < len(c.pidMaps) {
		pm = c.pidMaps[i]
	}
	if !c.remote.Adjust(i, rec, pm) {
		c.unmapped(rec, c.acct.pos(rec.Pos))
	}
}

// unmapped counts a span its machine's mapping cannot carry and leaves it
// out (a record of no kind is not drawn).
func (c *converter) unmapped(rec *strace.Record, at held.Pos) {
	c.acct.dropSpan(ReasonUnmapped, at, rec.Span.Name+" ts="+itoa(rec.Span.TS), 1)
	rec.Kind = 0
}
