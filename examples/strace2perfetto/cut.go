package main

import (
	"fmt"
	"io"
	"sync"

	"github.com/phasetrace/phasetrace"
	"github.com/phasetrace/phasetrace/examples/internal/cli"
)

// cutLogs remembers the inputs whose gzip stream ended early: each is
// read up to the cut (see cli.CutReader), and the cut is a loss -strict
// counts.
type cutLogs struct {
	mu   sync.Mutex
	cuts map[string]error // by input name: why it ended early
	seen []string         // the names, in the order they were cut
}

// watch is in, read through a cli.CutReader.
func (c *cutLogs) watch(in phasetrace.Input) phasetrace.Input {
	open := in.Open
	in.Open = func() (io.ReadCloser, error) {
		rc, err := open()
		if err != nil {
			return nil, err
		}
		return &cutWatch{CutReader: cli.NewCutReader(rc), logs: c, name: in.Name}, nil
	}
	return in
}

func (c *cutLogs) add(name string, cut error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cuts == nil {
		c.cuts = map[string]error{}
	}
	if _, ok := c.cuts[name]; !ok {
		c.cuts[name] = cut
		c.seen = append(c.seen, name)
	}
}

// count is how many inputs were cut.
func (c *cutLogs) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.seen)
}

// notes say, for the summary, which inputs were cut and where.
func (c *cutLogs) notes() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var notes []string
	for _, name := range c.seen {
		notes = append(notes, fmt.Sprintf("%s: %v; the records before the cut are kept", name, c.cuts[name]))
	}
	return notes
}

type cutWatch struct {
	*cli.CutReader
	logs *cutLogs
	name string
}

func (w *cutWatch) Read(p []byte) (int, error) {
	n, err := w.CutReader.Read(p)
	if w.Cut != nil {
		w.logs.add(w.name, w.Cut)
	}
	return n, err
}
