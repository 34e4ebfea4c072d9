package phasetrace

import (
	"strconv"
	"strings"

	"github.com/phasetrace/phasetrace/perfetto"
	"github.com/phasetrace/phasetrace/strace"
)

// run draws one run: its host spans on its lane, the bind stage's
// breakdown inside its chip.run.bind, and its device spans placed on the
// host timeline. A run whose root never came is drawn as found.
func (c *converter) run(b *invBuf) {
	// An invocation counts when a slice of it is drawn (not when its
	// spans are all over the track limit, say).
	drawn := c.sum.Spans.Drawn
	defer func() {
		if c.sum.Spans.Drawn > drawn {
			c.sum.Invocations++
		}
	}()
	// The run's root is its chip.run (else its first depth-0 span); its
	// bind and runner_run are found by name, whatever their depth.
	var root, bind, runner *heldSpan
	for i := range b.host {
		s := &b.host[i]
		switch {
		case s.Name == strace.SpanBind && bind == nil:
			bind = s
		case s.Name == strace.SpanRunnerRun && runner == nil:
			runner = s
		}
		if s.Depth == 0 && (root == nil || s.Name == strace.SpanRun && root.Name != strace.SpanRun) {
			root = s
		}
	}
	if root == nil {
		c.sum.Incomplete++
	}
	var slot int64
	hasSlot := false
	if root != nil {
		if a, ok := root.Attr("slot_id"); ok && a.Type == strace.TypeInt {
			slot, hasSlot = a.Int, true
		}
	}

	passes := c.records[b.key]
	delete(c.records, b.key)
	covered, drawnSegments := &c.covered, &c.drawnSegments
	covered.reset()
	drawnSegments.reset()
	if bind != nil {
		for _, p := range passes {
			for _, r := range p.Records {
				if strace.IsBindSegment(r.Phase) {
					covered.add(r.Phase)
				}
			}
		}
	}

	for i := range b.host {
		s := &b.host[i]
		lane, split := c.tracks.lane(s.Pid, s.Tid, slot, hasSlot)
		seg, isSeg := strings.CutPrefix(s.Name, strace.SpanBind+".")
		if isSeg && covered.has(seg) {
			c.sum.Spans.Superseded++
			continue
		}
		if isSeg {
			drawnSegments.add(seg)
		}
		extra := c.extra[:0]
		if isSeg { // a bind segment's on- and off-CPU split
			if cpu, ok := s.Attr("cpu_ns"); ok && cpu.Type == strace.TypeInt {
				extra = append(extra, perfetto.Int("on_cpu_ns", cpu.Int), perfetto.Int("off_cpu_ns", s.Dur-cpu.Int))
				c.extra = extra
			}
		}
		var endFlows []perfetto.FlowID
		if s == root {
			endFlows = c.flows.linkRun(&s.Span, !lane.IsZero())
		}
		c.hostFlows(lane, s, extra, split, nil, endFlows)
	}

	if bind != nil {
		lane, _ := c.tracks.lane(bind.Pid, bind.Tid, slot, hasSlot)
		c.drawRecords(lane, bind, passes)
		c.drawBindLines(lane, bind, b.bindLogT, covered, drawnSegments)
	} else {
		for _, p := range passes {
			c.led.notDrawn(ReasonPassesWithoutBind, c.led.where(p.Pos), "pid="+itoa(int64(p.Pid))+" inv="+strconv.FormatUint(p.Inv, 10), 1)
		}
	}
	c.device(b.key, root, runner, b.dev, b.wall)
	c.maybeFlush()
}

// drawRecords draws the host_phase_records of a run inside its bind: bind
// segments directly under the bind on its lane, orchestrator operations a
// level deeper under host_orch — on the recording worker's own thread when
// a worker recorded them.
func (c *converter) drawRecords(lane perfetto.Track, bind *heldSpan, passes []strace.PhasePass) {
	for _, p := range passes {
		for _, r := range p.Records {
			if r.EndNS < r.StartNS || r.StartNS > maxInt64 || r.EndNS > maxInt64 {
				c.led.notDrawn(ReasonImpossibleInterval, c.led.where(p.Pos), "phase="+r.Phase, 1)
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
				if tid != bind.Tid {
					t = c.tracks.thread(bind.Pid, tid)
				}
			}
			args := append(c.args[:0],
				perfetto.Uint("inv", bind.Inv), perfetto.String("hid", c.hidString(bind.Hid)), perfetto.Int("depth", int64(depth)),
				perfetto.String("src", "host_phase_records"), perfetto.String("host_phase_thread", thread),
			)
			if r.HasDetail {
				args = append(args, perfetto.Uint("detail", r.Detail))
			}
			if r.HasTid {
				args = append(args, perfetto.Int("os_tid", r.Tid))
			}
			c.other(t, perfetto.Slice{Name: name, TS: int64(r.StartNS), Dur: int64(r.EndNS - r.StartNS), Depth: depth, Args: args}, c.led.where(p.Pos), otherHostPhase)
		}
	}
}

// drawBindLines draws the legacy "bind phase=" lines whose interval lies
// inside bind, unless the artifact or the log's own segment spans already
// drew that segment for this bind. A line carries no pid: it belongs to the
// bind written by the same thread (the log prefixes' thread handle) whose
// interval contains it.
func (c *converter) drawBindLines(lane perfetto.Track, bind *heldSpan, logT uint64, covered, drawn *nameSet) {
	kept := c.bindLines[:0]
	for _, l := range c.bindLines {
		start, dur := l.rec.StartNS, l.rec.DurNS
		if start > maxInt64 || dur > maxInt64 || int64(start) < bind.TS || int64(start)+int64(dur) > bind.End() ||
			(logT != 0 && l.logT != 0 && l.logT != logT) {
			kept = append(kept, l)
			continue
		}
		if covered.has(l.rec.Phase) || drawn.has(l.rec.Phase) {
			c.led.superseded(ReasonBindPhaseSuperseded, 1)
			c.letGo(&l)
			continue
		}
		args := append(c.args[:0], perfetto.Uint("inv", bind.Inv), perfetto.String("hid", c.hidString(bind.Hid)), perfetto.Int("depth", int64(bind.Depth+1)))
		args = appendAttrs(args, l.rec.Attrs)
		args = append(args, perfetto.String("log_thread", c.logThread(l.logT)), perfetto.String("src", "bind_phase"))
		if l.rec.Source != "" {
			args = append(args, perfetto.String("source", l.rec.Source))
		}
		c.other(lane, perfetto.Slice{Name: c.segmentName(l.rec.Phase), TS: int64(start), Dur: int64(dur), Depth: bind.Depth + 1, Args: args}, l.at, otherBindPhase)
		c.letGo(&l)
	}
	clear(c.bindLines[len(kept):])
	c.bindLines = kept
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

// other draws a slice that is not a span of the log (a bind phase line, a
// host_phase_records entry); what reasons the writer cannot take it for
// are counted under what.
func (c *converter) other(t perfetto.Track, s perfetto.Slice, p where, what string) {
	switch {
	case t.IsZero():
		c.led.notDrawn(otherReasons[what][0], p, s.Name, 1)
		return
	case s.TS < 0 || s.Dur < 0 || s.TS+s.Dur < s.TS:
		c.led.notDrawn(otherReasons[what][1], p, s.Name, 1)
		return
	}
	s.Ref = c.led.ref(what, p)
	c.w.Slice(t, s)
	c.handed++
	if cap(s.Args) > cap(c.args) {
		c.args = s.Args[:0]
	}
}
