package firstpass

import (
	"bytes"
	"io"
	"sync"

	"github.com/phasetrace/phasetrace/internal/repeats"
	"github.com/phasetrace/phasetrace/strace"
)

// lineChunker reads a log for the first pass's parsers in chunks of whole
// lines, read in large blocks straight into the chunk, and cuts it into
// captures (see captures) as its lines go by: the cutter sees every byte of
// every line. The lines of captures known to repeat an earlier one are left
// out, and so are lines longer than the parsers read (they would skip
// them): an empty line takes the place of each, so that the parsers' line
// numbers stay the log's.
type lineChunker struct {
	r        io.Reader
	cut      *repeats.CaptureCutter
	skip     []repeats.Repeat // lines to leave out: captures repeating earlier ones
	next     int              // in skip
	maxPiece int              // the parsers' buffer: a longer line, with its line end, is one they skip
	long     bool             // inside a line longer than maxPiece, left out
	line     int64            // lines ended so far (each handed out, or an empty line in its place)
	off      int64            // bytes handed out so far
	size     int              // a chunk holds at least this many bytes (chunkSize)
	carry    []byte           // the start of a line read with the last chunk, not yet looked at
	err      error
}

// chunkSize is how many bytes of lines a first-pass chunk holds, at least
// (a chunk ends at a line end). The chunks in flight then fit in a core's
// cache, and the parsers start, and end, sooner: a conversion of a 100 MB
// log took 0.973 of the time with chunks of 256 KiB instead of 1 MiB
// (median of 40 pairs of the command run in turn; 128 KiB: 0.969 of 30),
// its peak memory 1.5 MiB less.
const chunkSize = 1 << 18

// maxChunkParsers bounds the first pass's parsers: one goroutine reading
// and cutting the log keeps about this many busy, and the chunks in flight
// (two per parser) bound the pass's memory.
const maxChunkParsers = 4

func newLineChunker(r io.Reader, cut *repeats.CaptureCutter, skip []repeats.Repeat, maxLine int) *lineChunker {
	// A line that does not fit in the parsers' buffer, as large as NewReader
	// makes it, is one they skip.
	return &lineChunker{r: r, cut: cut, skip: skip, maxPiece: max(maxLine, strace.MinMaxLine) + 2, size: chunkSize}
}

// fill reads the next chunk into j. It returns io.EOF with the last chunk
// (which may be empty), or the error reading the log.
func (c *lineChunker) fill(j *chunkJob) error {
	j.line, j.off = c.line, c.off
	// Room for a chunk, the start of a line beyond it and a large read.
	if need := c.size + c.size/4 + c.maxPiece; cap(j.buf) < need {
		j.buf = make([]byte, 0, need)
	}
	buf := append(j.buf[:0], c.carry...)
	w := 0     // buf[:w] is handed out; buf[w:] starts a line not yet looked at
	empty := 0 // reads in a row that returned nothing
	for {
		buf, w = c.lines(buf, w)
		if w >= c.size || c.err != nil {
			break
		}
		n, err := c.r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		switch {
		case err != nil:
			c.err = err
		case n > 0:
			empty = 0
		default:
			if empty++; empty >= 100 { // as bufio gives up on a reader
				c.err = io.ErrNoProgress
			}
		}
	}
	c.carry = append(c.carry[:0], buf[w:]...)
	j.buf = buf[:w]
	c.off += int64(w)
	return c.err
}

// lines hands out the lines buf[w:] holds, moving them to w when lines before
// them were left out, and returns buf cut after them and the start of an
// unended line (a last line without a line end is handed out once the log
// is over), and where the lines handed out end. The cutter is written the
// bytes of the lines in runs between the lines that start captures.
func (c *lineChunker) lines(buf []byte, w int) ([]byte, int) {
	eof := c.err != nil
	p, h := w, w // the next byte to look at; the next to write to the cutter
	if c.long {
		k := bytes.IndexByte(buf[p:], '\n')
		if k < 0 {
			c.cut.Write(buf[p:])
			return buf[:w], w
		}
		p += k + 1
		c.cut.Write(buf[h:p])
		h = p
		buf[w] = '\n' // in place of the line left out
		w++
		c.line++
		c.long = false
	}
	for p < len(buf) {
		k := bytes.IndexByte(buf[p:], '\n')
		end := p + k + 1
		if k < 0 {
			if !eof && len(buf)-p < c.maxPiece {
				break // the rest of the line is still to be read
			}
			end = len(buf)
		}
		if buf[p] == '[' {
			if mono, ok := repeats.PrefixMono(buf[p:end]); ok && c.cut.StartsCapture(mono) {
				c.cut.Write(buf[h:p])
				h = p
				c.cut.Cut(c.line + 1)
			}
		}
		drop := false
		if c.next < len(c.skip) {
			_, drop = repeats.RepeatOf(c.skip, &c.next, c.line+1)
		}
		if k < 0 && !eof {
			// A line longer than the parsers read, cut by the end of what
			// is read: left out, to its end.
			c.cut.Write(buf[h:])
			c.long = true
			return buf[:w], w
		}
		n := end - p
		drop = drop || n > c.maxPiece || n == c.maxPiece && k < 0
		if drop || w != p {
			c.cut.Write(buf[h:end]) // before its bytes are written over
			h = end
		}
		switch {
		case !drop:
			w += copy(buf[w:], buf[p:end])
		case k >= 0:
			buf[w] = '\n' // in place of the line left out
			w++
		}
		if k >= 0 {
			c.line++
		}
		p = end
	}
	c.cut.Write(buf[h:p])
	if w != p {
		return buf[:w+copy(buf[w:], buf[p:])], w
	}
	return buf, w
}

// finish returns the log's captures, once it is read.
func (c *lineChunker) finish() []repeats.Capture {
	return c.cut.Finish(c.line)
}

// chunkJob is one chunk of the first pass: its lines, and the records its
// parser kept. A job is used again for chunk after chunk, with its memory:
// the records it holds, and their strings, are valid until it is released
// (their strings live in its reader's memory, which the next chunk reuses,
// see strace.Reader.ResetBytes), so what the survey keeps of them is
// copied (setAdd) or is a number.
type chunkJob struct {
	buf       []byte
	line, off int64           // lines and bytes before it
	spans     []strace.Span   // the spans kept
	lines     []int64         // the line of each
	attrs     []strace.Attr   // their attributes, one after another
	anchors   []strace.Record // the clock anchors
	rd        *strace.Reader  // the chunk's reader, made for the first chunk and reset for the next
	done      chan struct{}   // sent to once the chunk is parsed
	panicked  bool
	panicVal  any
}

// chunkParsers parses chunks on goroutines of their own and hands back
// their records in the order the chunks were started.
type chunkParsers struct {
	name    string
	maxLine int
	jobs    chan *chunkJob
	queue   []*chunkJob // started, in log order
	free    []*chunkJob
	depth   int
	wg      sync.WaitGroup
	stopped bool
}

func newChunkParsers(name string, maxLine, workers int) *chunkParsers {
	workers = max(workers, 1)
	p := &chunkParsers{name: name, maxLine: maxLine, depth: 2 * workers, jobs: make(chan *chunkJob, 2*workers)}
	for range workers {
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			for j := range p.jobs {
				p.parse(j)
			}
		}()
	}
	return p
}

// job returns an empty job to fill.
func (p *chunkParsers) job() *chunkJob {
	if n := len(p.free); n > 0 {
		j := p.free[n-1]
		p.free = p.free[:n-1]
		return j
	}
	return &chunkJob{spans: make([]strace.Span, 0, 1024), lines: make([]int64, 0, 1024), attrs: make([]strace.Attr, 0, 4096), done: make(chan struct{}, 1)}
}

// release takes back a job whose records have been learnt from.
func (p *chunkParsers) release(j *chunkJob) {
	clear(j.spans)
	clear(j.attrs)
	clear(j.anchors)
	j.spans, j.lines, j.attrs, j.anchors = j.spans[:0], j.lines[:0], j.attrs[:0], j.anchors[:0]
	j.panicked, j.panicVal = false, nil
	p.free = append(p.free, j)
}

// start hands j to a parser. When as many chunks as it keeps in flight are
// started, it returns the oldest, parsed, for the caller to learn from and
// release.
func (p *chunkParsers) start(j *chunkJob) *chunkJob {
	p.queue = append(p.queue, j)
	p.jobs <- j
	if len(p.queue) < p.depth {
		return nil
	}
	return p.wait()
}

// wait returns the oldest started chunk once it is parsed (nil when none
// is left), for the caller to learn from and release. A panic of its
// parser is raised again here.
func (p *chunkParsers) wait() *chunkJob {
	if len(p.queue) == 0 {
		return nil
	}
	j := p.queue[0]
	n := copy(p.queue, p.queue[1:]) // in place: the queue never grows past its depth
	p.queue[n] = nil
	p.queue = p.queue[:n]
	<-j.done
	if j.panicked {
		panic(j.panicVal)
	}
	return j
}

// stop ends the parsers' goroutines and waits for them.
func (p *chunkParsers) stop() {
	if !p.stopped {
		p.stopped = true
		close(p.jobs)
		p.wg.Wait()
	}
}

// parse reads a chunk's records as the first pass's reader does, keeping
// each record's attributes in the job and its position in the log.
func (p *chunkParsers) parse(j *chunkJob) {
	defer func() {
		if v := recover(); v != nil {
			j.panicked, j.panicVal = true, v
		}
		j.done <- struct{}{}
	}()
	rd := j.rd
	if rd == nil {
		rd = strace.NewBytesReader(j.buf, strace.WithName(p.name), strace.WithMaxLine(p.maxLine),
			strace.WithSpanFilter(firstPassSpan), strace.WithKinds(strace.KindSpan, strace.KindWallAnchor, strace.KindDeviceAnchor, strace.KindStamp))
		j.rd = rd
	} else {
		rd.ResetBytes(j.buf)
	}
	for {
		rec, err := rd.Read()
		if err != nil { // io.EOF: a chunk in memory cannot fail
			break
		}
		if rec.Kind != strace.KindSpan {
			rec.Pos.Line += j.line
			rec.Pos.Offset += j.off
			j.anchors = append(j.anchors, rec)
			continue
		}
		n := len(j.attrs)
		j.attrs = append(j.attrs, rec.Span.Attrs...)
		rec.Span.Attrs = j.attrs[n:len(j.attrs):len(j.attrs)] // re-pointed below: attrs may grow
		j.spans = append(j.spans, rec.Span)
		j.lines = append(j.lines, rec.Pos.Line+j.line)
	}
	n := 0
	for i := range j.spans {
		a := &j.spans[i].Attrs
		k := len(*a)
		*a = j.attrs[n : n+k : n+k]
		n += k
	}
}
