package phasetrace

import (
	"io"
	"strconv"

	"github.com/phasetrace/phasetrace/strace"
)

// Convert reads a host_phase_records artifact in its second pass through a
// window of passWindowSize passes: before a run is drawn, the artifact is
// read through its pass f+passWindowAhead (passes counted from 0 in the
// order written), f being the furthest pass an earlier run took (-1 before
// any), and the run takes the passes of its (pid, inv) among the last
// passWindowSize passes read.
const (
	passWindowSize  = 8192
	passWindowAhead = passWindowSize / 2
)

// passWindow is the window over one host_phase_records artifact (above). A
// pass no run took — pushed out by the pass read passWindowSize after it,
// or still held or not read once every run is drawn — is counted under
// ReasonPassesWithoutBind.
type passWindow struct {
	read     func() (strace.PhasePass, error) // the next pass; io.EOF after the last
	end      bool                             // read said io.EOF or failed
	ring     []windowPass                     // pass n at n % passWindowSize
	next     int64                            // passes read
	furthest int64                            // the furthest pass taken; -1 before any
	byKey    map[invKey][]int64               // the passes held of each (pid, inv), in order
}

type windowPass struct {
	pass strace.PhasePass
	held bool // read and not yet taken or pushed out
}

func newPassWindow(read func() (strace.PhasePass, error)) *passWindow {
	return &passWindow{read: read, ring: make([]windowPass, passWindowSize), furthest: -1, byKey: map[invKey][]int64{}}
}

// fill reads the artifact through pass furthest+passWindowAhead, pushing
// out the oldest pass held when the window is full.
func (w *passWindow) fill(d *runDrawer) {
	for w.next <= w.furthest+passWindowAhead {
		p, ok := w.readPass(d)
		if !ok {
			return
		}
		if w.next >= passWindowSize {
			w.pushOut(d, w.next-passWindowSize)
		}
		k := invKey{p.Pid, p.Inv}
		w.ring[w.next%passWindowSize] = windowPass{pass: p, held: true}
		w.byKey[k] = append(w.byKey[k], w.next)
		w.next++
	}
}

// pushOut counts pass n, the oldest the window holds, if no run took it,
// and lets it go.
func (w *passWindow) pushOut(d *runDrawer, n int64) {
	slot := &w.ring[n%passWindowSize]
	if !slot.held {
		return
	}
	p := &slot.pass
	k := invKey{p.Pid, p.Inv}
	if l := w.byKey[k]; len(l) > 1 {
		w.byKey[k] = l[1:] // n is its (pid, inv)'s first
	} else {
		delete(w.byKey, k)
	}
	d.passWithoutBind(p)
	*slot = windowPass{}
}

// take appends the passes of k the window holds to out, in the order they
// were written.
func (w *passWindow) take(k invKey, out []strace.PhasePass) []strace.PhasePass {
	for _, n := range w.byKey[k] {
		slot := &w.ring[n%passWindowSize]
		out = append(out, slot.pass)
		*slot = windowPass{}
		w.furthest = max(w.furthest, n)
	}
	delete(w.byKey, k)
	return out
}

// drain counts the passes still held and those never read, in the order
// they were written.
func (w *passWindow) drain(d *runDrawer) {
	for n := max(0, w.next-passWindowSize); n < w.next; n++ {
		w.pushOut(d, n)
	}
	for {
		p, ok := w.readPass(d)
		if !ok {
			return
		}
		d.passWithoutBind(&p)
	}
}

// readPass reads the artifact's next pass; at its end, or at an error
// reading it (which is d.recordsErr), it reports false from then on.
func (w *passWindow) readPass(d *runDrawer) (strace.PhasePass, bool) {
	if w.end {
		return strace.PhasePass{}, false
	}
	p, err := w.read()
	if err != nil {
		w.end = true
		if err != io.EOF && d.recordsErr == nil {
			d.recordsErr = err
		}
		return strace.PhasePass{}, false
	}
	return p, true
}

// passes takes the host_phase_records passes of run k: those a Survey was
// given, then those of Convert's windows, artifact by artifact.
func (d *runDrawer) passes(k invKey) []strace.PhasePass {
	passes := d.records[k]
	delete(d.records, k)
	if len(d.windows) == 0 {
		return passes
	}
	out := append(d.windowPasses[:0], passes...)
	for _, w := range d.windows {
		w.fill(d)
		out = w.take(k, out)
	}
	d.windowPasses = out
	return out
}

// passWithoutBind counts a pass not drawn: its run has no bind, or never came.
func (d *runDrawer) passWithoutBind(p *strace.PhasePass) {
	d.led.notDrawn(ReasonPassesWithoutBind, d.led.pos(p.Pos), "pid="+itoa(int64(p.Pid))+" inv="+strconv.FormatUint(p.Inv, 10), 1)
}
