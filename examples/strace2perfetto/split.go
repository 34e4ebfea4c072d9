package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/phasetrace/phasetrace"
)

// parts writes the parts of a split trace (-split) beside the overview,
// part n to phasetrace.PartName(out, n). Each is written as the trace is
// (openOutput): to a hidden file beside it, closed once the converter has
// written it whole, and renamed into place only by commit, once the whole
// conversion has succeeded; abort removes every hidden file.
type parts struct {
	ctx  context.Context
	out  string      // the overview's path, as given
	read []namedFile // the files read: no part may be one
	// files are the parts opened, in the order the converter opened them
	// (on the goroutine that called Convert).
	files []*output
}

// open opens part n for the converter (phasetrace.WithSplit). The name
// the overview gives the part is its file name: the parts sit beside it.
func (p *parts) open(n int) (io.WriteCloser, string, error) {
	path := phasetrace.PartName(p.out, n)
	name := filepath.Base(path)
	if err := p.ctx.Err(); err != nil {
		return nil, name, err
	}
	// The inputs were checked against the parts that existed before
	// anything was read; a file may have been given a part's name since.
	if st, err := os.Stat(path); err == nil {
		if err := clash(p.read, []namedFile{{what: "-split part", path: path, info: st}}); err != nil {
			return nil, name, err
		}
	}
	_, inPlace, err := resolveOutput(path)
	if err != nil {
		return nil, name, err
	}
	if inPlace {
		return nil, name, fmt.Errorf("-split part %s is not a regular file: refusing to write it in place", path)
	}
	o, err := openOutput(path, nil)
	if err != nil {
		return nil, name, err
	}
	p.files = append(p.files, o)
	return partWriter{interruptibleWriter{p.ctx, o}, o}, name, nil
}

// commit renames every part into place, in order. After a failure it
// removes the hidden files of the parts not yet renamed.
func (p *parts) commit() error {
	for i, o := range p.files {
		if err := o.commit(); err != nil {
			for _, rest := range p.files[i+1:] {
				rest.abort()
			}
			return err
		}
	}
	return nil
}

// abort removes the hidden files of the parts not committed.
func (p *parts) abort() {
	for _, o := range p.files {
		o.abort()
	}
}

// partWriter is a part as the converter writes it: it fails once ctx is
// done, and closing it only closes the hidden file (commit renames it).
type partWriter struct {
	interruptibleWriter
	o *output
}

func (w partWriter) Close() error {
	if err := w.o.closeFile(); err != nil {
		return fmt.Errorf("%s: %w", w.o.name, cause(err))
	}
	return nil
}

// isPartName reports whether the file name is named like a part of the
// overview out.
func isPartName(out, name string) bool {
	_, ok := phasetrace.PartNumber(out, name)
	return ok
}

// existingParts lists the files beside out named like a part of it, of
// this conversion or of an earlier one.
func existingParts(out string) []string {
	dir := filepath.Dir(out)
	es, err := os.ReadDir(dir)
	if err != nil {
		return nil // no directory: opening the output says so
	}
	var ps []string
	for _, e := range es {
		if isPartName(out, e.Name()) {
			ps = append(ps, filepath.Join(dir, e.Name()))
		}
	}
	return ps
}

// checkParts refuses, before anything is read, a file read that is named
// like a part of out — a part written, or a stale part removed, would
// destroy it — and a -summary-json file named so.
func checkParts(read []namedFile, out, summaryJSON string) error {
	var written []namedFile
	for _, p := range existingParts(out) {
		st, err := os.Stat(p)
		if err != nil {
			continue
		}
		written = append(written, namedFile{what: "-split part", path: p, info: st})
	}
	if err := clash(read, written); err != nil {
		return err
	}
	if summaryJSON != "" && summaryJSON != "-" && isPartName(out, filepath.Base(summaryJSON)) {
		d1, err1 := filepath.Abs(filepath.Dir(summaryJSON))
		d2, err2 := filepath.Abs(filepath.Dir(out))
		if err1 == nil && err2 == nil && d1 == d2 {
			return fmt.Errorf("-summary-json %s is named like a part of -o %s: refusing to overwrite it with a part", summaryJSON, out)
		}
	}
	return nil
}

// removeStale removes the parts of an earlier conversion to out beyond
// the n parts this one wrote: PartName(out, n+1), n+2, ... as long as they
// exist. It returns the paths removed.
func removeStale(out string, n int) ([]string, error) {
	var removed []string
	for k := n + 1; ; k++ {
		path := phasetrace.PartName(out, k)
		if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
			return removed, nil
		}
		if err := os.Remove(path); err != nil {
			return removed, fmt.Errorf("removing a stale part of an earlier conversion: %w", err)
		}
		removed = append(removed, path)
	}
}

// splitSummary says where the overview and the parts are, the last line
// of the summary on stderr.
func splitSummary(out string, sum *phasetrace.Summary) string {
	var ps []string
	for _, p := range sum.Split.Parts {
		ps = append(ps, phasetrace.PartName(out, p.Part))
	}
	parts := "none (no slice was drawn)"
	if len(ps) > 0 {
		parts = fmt.Sprintf("%s (at most %d slices each; a run larger than that in a part of its own)", fileRange(ps), sum.Split.MaxSlices)
	}
	return fmt.Sprintf("overview: %s (%d %s); parts: %s", out, sum.Invocations, plural(int(sum.Invocations), "invocation"), parts)
}

// fileRange is "a", or "a … z" for files numbered one after the other.
func fileRange(files []string) string {
	if len(files) == 1 {
		return files[0]
	}
	return files[0] + " … " + files[len(files)-1]
}

// plural is thing, or things when n is not 1.
func plural(n int, thing string) string {
	if n == 1 {
		return thing
	}
	return thing + "s"
}
