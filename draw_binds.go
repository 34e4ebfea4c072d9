package phasetrace

import (
	"fmt"
	"strconv"

	"github.com/phasetrace/phasetrace/internal/firstpass"
	"github.com/phasetrace/phasetrace/internal/held"
	"github.com/phasetrace/phasetrace/internal/repeats"
	"github.com/phasetrace/phasetrace/perfetto"
	"github.com/phasetrace/phasetrace/strace"
)

// bindLine is a legacy "bind phase=" line waiting for the chip.run.bind
// that contains it.
type bindLine struct {
	rec   strace.BindPhase
	at    held.Pos
	logT  uint64     // the log prefix's thread handle
	store held.Store // rec's attributes
}

// maxBindLines bounds the bind-phase lines waiting for their bind.
const maxBindLines = 4096

// takeBindLine keeps a legacy bind phase line until the chip.run.bind that
// holds it is drawn (a repeat of a recent line is left out).
func (d *runDrawer) takeBindLine(rec *strace.Record, at held.Pos) {
	if key, _ := repeats.RecordKey(rec); d.recentBinds.Repeated(key) {
		d.acct.notDrawn(ReasonRepeatedRecord, at, "phase="+rec.BindPhase.Phase, 1)
		return
	}
	if len(d.bindLines) >= maxBindLines {
		l := &d.bindLines[0]
		d.acct.notDrawn(ReasonBindOutsideBind, l.at, "phase="+l.rec.Phase, 1)
		d.recycle(l)
		d.bindLines = d.bindLines[1:]
	}
	l := bindLine{rec: rec.BindPhase, at: at, logT: rec.Prefix.Thread}
	if n := len(d.bindStores); n > 0 {
		l.store = d.bindStores[n-1]
		d.bindStores = d.bindStores[:n-1]
	}
	l.rec.Attrs = l.store.Keep(l.rec.Attrs) // its Phase and Source are canonical
	d.bindLines = append(d.bindLines, l)
}

// recycle keeps the store of a bind line that is drawn or given up, for the
// next line.
func (d *runDrawer) recycle(l *bindLine) {
	l.store.Reset()
	d.bindStores = append(d.bindStores, l.store)
	l.store = held.Store{}
}

// drawRecords draws the host_phase_records of a run inside its bind: bind
// segments directly under the bind on its lane, orchestrator operations a
// level deeper under host_orch — on the recording worker's own thread when
// a worker recorded them.
func (d *runDrawer) drawRecords(out sink, lane perfetto.Track, bind *held.Span, passes []strace.PhasePass) {
	for _, p := range passes {
		for _, r := range p.Records {
			if r.EndNS < r.StartNS || r.StartNS > maxInt64 || r.EndNS > maxInt64 {
				d.acct.notDrawn(ReasonImpossibleInterval, d.acct.pos(p.Pos), "phase="+r.Phase, 1)
				continue
			}
			tid := bind.Tid
			if r.HasTid && r.Tid > 0 {
				tid = r.Tid
			}
			name, depth, thread := strace.SpanBind+"."+r.Phase, bind.Depth+1, "host_main"
			t := lane
			if !strace.IsBindSegment(r.Phase) {
				name, depth = strace.SpanBind+".host_orch."+r.Phase, bind.Depth+2
				switch {
				case (r.Phase == "record_node" || r.Phase == "build_definition") && tid != bind.Tid:
					thread = "graph_record_worker"
				case r.Phase == "graph_submit":
					thread = "graph_submit_main"
				}
				if tid != bind.Tid && !d.outside(int64(r.StartNS), int64(r.EndNS-r.StartNS)) {
					t = out.tracks.Thread(bind.Pid, tid)
				}
			}
			args := append(d.args[:0],
				perfetto.Uint("inv", bind.Inv), perfetto.String("hid", d.hidString(bind.Hid)), perfetto.Int("depth", int64(depth)),
				perfetto.String("src", "host_phase_records"), perfetto.String("host_phase_thread", thread), d.links.key,
			)
			if r.HasDetail {
				args = append(args, perfetto.Uint("detail", r.Detail))
			}
			if r.HasTid {
				args = append(args, perfetto.Int("os_tid", r.Tid))
			}
			d.drawDerived(out, t, perfetto.Slice{Name: name, Category: categoryBind, TS: int64(r.StartNS), Dur: int64(r.EndNS - r.StartNS), Depth: depth, Args: args}, d.acct.pos(p.Pos), otherHostPhase)
			d.steps.segmentPass(&r)
		}
	}
}

// recordsInWindow reports whether a host_phase_records entry of passes
// drawn on bind's lane is inside the window (the bind lines drawn are
// inside their bind).
func (d *runDrawer) recordsInWindow(bind *held.Span, passes []strace.PhasePass) bool {
	for _, p := range passes {
		for _, r := range p.Records {
			onLane := strace.IsBindSegment(r.Phase) || !r.HasTid || r.Tid <= 0 || r.Tid == bind.Tid
			if onLane && r.EndNS >= r.StartNS && r.EndNS <= maxInt64 && !d.outside(int64(r.StartNS), int64(r.EndNS-r.StartNS)) {
				return true
			}
		}
	}
	return false
}

// drawBindLines draws the legacy "bind phase=" lines whose interval lies
// inside bind, unless the artifact or the log's own segment spans already
// drew that segment for this bind. A line carries no pid: it belongs to the
// bind written by the same thread (the log prefixes' thread handle) whose
// interval contains it.
func (d *runDrawer) drawBindLines(out sink, lane perfetto.Track, bind *held.Span, logT uint64, covered, drawn *nameSet) {
	kept := d.bindLines[:0]
	for _, l := range d.bindLines {
		if !l.inside(bind, logT) {
			kept = append(kept, l)
			continue
		}
		start, dur := l.rec.StartNS, l.rec.DurNS
		if covered.has(l.rec.Phase) || drawn.has(l.rec.Phase) {
			d.acct.superseded(ReasonBindPhaseSuperseded, 1)
			d.recycle(&l)
			continue
		}
		args := append(d.args[:0], perfetto.Uint("inv", bind.Inv), perfetto.String("hid", d.hidString(bind.Hid)), perfetto.Int("depth", int64(bind.Depth+1)))
		args = appendAttrs(args, l.rec.Attrs)
		args = append(args, perfetto.String("log_thread", d.logThread(l.logT)), perfetto.String("src", "bind_phase"), d.links.key)
		if l.rec.Source != "" {
			args = append(args, perfetto.String("source", l.rec.Source))
		}
		d.drawDerived(out, lane, perfetto.Slice{Name: d.segmentName(l.rec.Phase), Category: categoryBind, TS: int64(start), Dur: int64(dur), Depth: bind.Depth + 1, Args: args}, l.at, otherBindPhase)
		d.steps.segmentLine(&l.rec)
		d.recycle(&l)
	}
	clear(d.bindLines[len(kept):])
	d.bindLines = kept
}

// inside reports whether bind line l belongs to bind, a chip.run.bind
// written by the thread whose log-prefix handle is logT (0: unknown): its
// interval lies within the bind's, and a handle it has is the bind's.
func (l *bindLine) inside(bind *held.Span, logT uint64) bool {
	start, dur := l.rec.StartNS, l.rec.DurNS
	return start <= maxInt64 && dur <= maxInt64 && int64(start) >= bind.TS && int64(start)+int64(dur) <= bind.End() &&
		(logT == 0 || l.logT == 0 || l.logT == logT)
}

const maxInt64 = 1<<63 - 1

// nameSet is a set of names, a run's bind segments: a list while it is
// short (a run has a dozen), a map past smallNameSet.
type nameSet struct {
	small []string
	big   map[string]bool
}

const smallNameSet = 32

func (s *nameSet) add(name string) {
	switch {
	case s.big != nil:
		s.big[name] = true
	case len(s.small) < smallNameSet:
		s.small = append(s.small, name)
	default:
		s.big = make(map[string]bool, 2*smallNameSet)
		for _, n := range s.small {
			s.big[n] = true
		}
		s.big[name] = true
	}
}

func (s *nameSet) has(name string) bool {
	if s.big != nil {
		return s.big[name]
	}
	for _, n := range s.small {
		if n == name {
			return true
		}
	}
	return false
}

// reset empties the set, keeping its list's memory.
func (s *nameSet) reset() { s.small, s.big = s.small[:0], nil }

// passes takes the host_phase_records passes of run k: those a Survey was
// given, then those of Convert's artifacts, artifact by artifact. An error
// reading an artifact is d.recordsErr, and ends the reading of artifacts.
func (d *runDrawer) passes(k firstpass.InvKey) []strace.PhasePass {
	passes := d.records[k]
	delete(d.records, k)
	if len(d.artifacts) == 0 {
		return passes
	}
	out := append(d.artifactPasses[:0], passes...)
	for _, x := range d.artifacts {
		if d.recordsErr != nil {
			break
		}
		var err error
		if out, err = x.Take(k.Pid, k.Inv, out); err != nil {
			d.recordsErr = fmt.Errorf("phasetrace: %s: %w", x.Name(), err)
		}
	}
	d.artifactPasses = out
	return out
}

// passWithoutBind counts a pass not drawn: its run has no bind, or never came.
func (d *runDrawer) passWithoutBind(p *strace.PhasePass) {
	d.acct.notDrawn(ReasonPassesWithoutBind, d.acct.pos(p.Pos), "pid="+itoa(int64(p.Pid))+" inv="+strconv.FormatUint(p.Inv, 10), 1)
}

// drain counts what still waits once every run is drawn: bind phase lines
// and host_phase_records passes whose bind never came.
func (d *runDrawer) drain() {
	for _, l := range d.bindLines {
		d.acct.notDrawn(ReasonBindOutsideBind, l.at, "phase="+l.rec.Phase, 1)
	}
	d.bindLines = nil
	for _, ps := range d.records {
		for i := range ps {
			d.passWithoutBind(&ps[i])
		}
	}
	d.records = nil
	if d.recordsErr == nil {
		for _, x := range d.artifacts {
			x.Untaken(d.passWithoutBind)
		}
	}
}
