package main

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/phasetrace/phasetrace"
	"github.com/phasetrace/phasetrace/strace"
)

// maxAnchorLine bounds the line a wall-clock anchor is looked for in (the
// runtime's are about 130 bytes).
const maxAnchorLine = 4096

// wallMark starts a wall-clock anchor record.
var wallMark = []byte("[CLOCK_ANCHOR] v=1 ")

// anchorScan passes a log through and parses the lines that hold a
// wall-clock anchor with the log's own reader, so that every table sees
// them while the consumers read nothing but their records.
type anchorScan struct {
	r     io.Reader
	name  string
	walls *wallAnchors
	line  int64  // lines ended
	cur   []byte // the current line so far; nil once longer than maxAnchorLine
	long  bool
}

func (a *anchorScan) Read(p []byte) (int, error) {
	n, err := a.r.Read(p)
	buf := p[:n]
	for len(buf) > 0 {
		i := bytes.IndexByte(buf, '\n')
		if i < 0 {
			a.extend(buf)
			break
		}
		a.extend(buf[:i+1])
		a.endLine()
		buf = buf[i+1:]
	}
	if err == io.EOF && len(a.cur) > 0 {
		a.endLine() // a last line without its line end
	}
	return n, err
}

func (a *anchorScan) extend(b []byte) {
	switch {
	case a.long:
	case len(a.cur)+len(b) > maxAnchorLine:
		a.long, a.cur = true, a.cur[:0]
	default:
		a.cur = append(a.cur, b...)
	}
}

func (a *anchorScan) endLine() {
	a.line++
	if !a.long && bytes.Contains(a.cur, wallMark) {
		rd := strace.NewReader(bytes.NewReader(a.cur), strace.WithKinds(strace.KindWallAnchor))
		for {
			rec, err := rd.Read()
			if err == io.EOF {
				break
			}
			if err == nil && rec.Kind == strace.KindWallAnchor {
				a.walls.add(rec.WallAnchor, a.name+":"+strconv.FormatInt(a.line, 10))
			}
		}
	}
	a.cur, a.long = a.cur[:0], false
}

// wallAnchors counts the distinct wall-clock anchors of each process (one
// written again, as in a log given twice, is the same anchor, as the
// converter takes it), with where the first two are.
type wallAnchors struct {
	pids map[int32]*pidAnchors
}

type pidAnchors struct {
	n    int
	at   [2]string
	seen map[strace.WallAnchor]bool
}

func (w *wallAnchors) add(a strace.WallAnchor, at string) {
	if w.pids == nil {
		w.pids = map[int32]*pidAnchors{}
	}
	p := w.pids[a.Pid]
	if p == nil {
		p = &pidAnchors{seen: map[strace.WallAnchor]bool{}}
		w.pids[a.Pid] = p
	}
	if p.seen[a] {
		return
	}
	p.seen[a] = true
	if p.n < len(p.at) {
		p.at[p.n] = at
	}
	p.n++
}

// warn warns, in the converter's words, about each process that wrote
// more than one wall-clock anchor (the runtime writes one per process).
func (w *wallAnchors) warn(stderr io.Writer) {
	var pids []int32
	for pid, p := range w.pids {
		if p.n > 1 {
			pids = append(pids, pid)
		}
	}
	slices.Sort(pids)
	for _, pid := range pids {
		p := w.pids[pid]
		fmt.Fprintf(stderr, "stracestat: warning: %s\n", phasetrace.SeveralWallAnchors(pid, p.n, p.at[0], p.at[1]))
	}
}
