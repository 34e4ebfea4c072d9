package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// namedFile is a file named on the command line.
type namedFile struct {
	what string      // how messages call it: "log", "-records file", "-o", ...
	path string      // as given; "-" is a standard stream
	info os.FileInfo // nil when it does not exist (an output), or is a standard stream that is no file
}

// checkInputs checks that every file to be read exists and can be read,
// before anything is. It returns the logs first, in order, then the
// -records and -calibration files. A log "-" is standard input, with the
// file stdin is (a file, a pipe, a terminal) when it is one, so that no
// output can name it (/dev/stdin, /dev/fd/0, /proc/self/fd/0, the file
// itself).
func checkInputs(cfg *config, stdin io.Reader) ([]namedFile, error) {
	var files []namedFile
	add := func(what, path string) error {
		f := namedFile{what: what, path: path}
		if path == "-" && what == "log" {
			if sf, ok := stdin.(*os.File); ok {
				f.info, _ = sf.Stat()
			}
		} else {
			st, err := readable(path)
			if err != nil {
				return err
			}
			f.info = st
		}
		files = append(files, f)
		return nil
	}
	for _, l := range cfg.logs {
		if err := add("log", l); err != nil {
			return nil, err
		}
	}
	for _, r := range cfg.records {
		if err := add("-records file", r); err != nil {
			return nil, fmt.Errorf("-records: %w", err)
		}
	}
	for _, c := range cfg.calibration {
		if err := add("-calibration file", c.file); err != nil {
			return nil, fmt.Errorf("-calibration: %w", err)
		}
	}
	return files, nil
}

// readable stats path and, for a regular file, opens it once to see that
// it can be read. Other files (a pipe) are not opened: that could consume
// or block.
func readable(path string) (os.FileInfo, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if st.IsDir() {
		return nil, &fs.PathError{Op: "read", Path: path, Err: errors.New("is a directory")}
	}
	if st.Mode().IsRegular() {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		f.Close()
	}
	return st, nil
}

// written is what the command will write: the trace and, if asked for, the
// summary. "-" is standard output.
func (c *command) written(out, summaryJSON string) []namedFile {
	files := []namedFile{{what: "-o", path: out}}
	if summaryJSON != "" {
		files = append(files, namedFile{what: "-summary-json", path: summaryJSON})
	}
	for i, f := range files {
		if f.path == "-" {
			if sf, ok := c.stdout.(*os.File); ok {
				files[i].info, _ = sf.Stat()
			}
			continue
		}
		files[i].info, _ = os.Stat(f.path)
	}
	return files
}

// clash refuses a written file that is one of the files read, or that is
// written twice.
func clash(read, written []namedFile) error {
	name := func(f namedFile) string {
		if f.path == "-" {
			return "standard output"
		}
		return f.path
	}
	for i, w := range written {
		for _, r := range read {
			// A character device (a terminal, /dev/null) is not a file
			// writing can destroy.
			if w.info != nil && r.info != nil && os.SameFile(w.info, r.info) && r.info.Mode()&os.ModeCharDevice == 0 {
				what := r.what + " " + r.path
				if r.path == "-" {
					what = "log read from standard input"
				}
				return fmt.Errorf("%s %s is the %s: refusing to overwrite an input", w.what, name(w), what)
			}
		}
		for _, o := range written[:i] {
			if samePath(o, w) {
				return fmt.Errorf("%s %s and %s %s are the same file", o.what, name(o), w.what, name(w))
			}
		}
	}
	return nil
}

func samePath(a, b namedFile) bool {
	if a.info != nil && b.info != nil {
		return os.SameFile(a.info, b.info)
	}
	if a.info != nil || b.info != nil || a.path == "-" || b.path == "-" {
		return false
	}
	pa, err1 := filepath.Abs(a.path)
	pb, err2 := filepath.Abs(b.path)
	return err1 == nil && err2 == nil && pa == pb
}

// output is a file the command writes: standard output, a file written in
// place (a device, a FIFO, /dev/stdout), or a regular file written to a
// hidden file beside it and renamed into place on commit. Its errors name
// the path the user gave, never the hidden file.
type output struct {
	name   string    // the path as given, for messages
	w      io.Writer // standard output or f
	f      *os.File  // nil for standard output
	target string    // what f is renamed to on commit; "" when written in place
	mode   os.FileMode
	done   bool
	// closed says f is closed, closeErr what closing it returned.
	closed   bool
	closeErr error
}

// openOutput opens the output path ("-": stdout) for writing.
func openOutput(path string, stdout io.Writer) (*output, error) {
	if path == "-" {
		return &output{name: "standard output", w: stdout}, nil
	}
	target, inPlace, err := resolveOutput(path)
	if err != nil {
		return nil, err
	}
	if inPlace {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
		if err != nil {
			return nil, err
		}
		return &output{name: path, w: f, f: f}, nil
	}
	mode := os.FileMode(0o644)
	if st, err := os.Stat(target); err == nil {
		mode = st.Mode().Perm() // a replaced file keeps its permissions
	}
	dir := filepath.Dir(target)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("%s: directory %s does not exist", path, dir)
	}
	f, err := os.CreateTemp(dir, ".strace2perfetto-*")
	if err != nil {
		return nil, fmt.Errorf("%s: cannot create a file in %s: %w", path, dir, cause(err))
	}
	return &output{name: path, w: f, f: f, target: target, mode: mode}, nil
}

// resolveOutput says where a trace written to path goes: the file to
// replace, or in place. A missing path or a regular file is replaced, a
// symbolic link to a regular file replaces the file it names; a device, a
// FIFO, a socket and a link naming an open file descriptor (/dev/stdout,
// /dev/fd/N, /proc/self/fd/N) are written in place.
func resolveOutput(path string) (target string, inPlace bool, err error) {
	lst, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return path, false, nil
	case err != nil:
		return "", false, err
	case lst.Mode().IsRegular():
		return path, false, nil
	case lst.Mode()&os.ModeSymlink == 0:
		if lst.IsDir() {
			return "", false, &fs.PathError{Op: "write", Path: path, Err: errors.New("is a directory")}
		}
		return path, true, nil
	}
	if fdAlias(path) {
		return path, true, nil
	}
	st, err := os.Stat(path)
	if err != nil {
		return "", false, err // a link to nothing
	}
	if st.IsDir() {
		return "", false, &fs.PathError{Op: "write", Path: path, Err: errors.New("is a directory")}
	}
	if !st.Mode().IsRegular() {
		return path, true, nil
	}
	target, err = filepath.EvalSymlinks(path)
	return target, false, err
}

// fdAlias reports whether path, or a link it leads through, names an open
// file descriptor: /dev/stdout is a link to /proc/self/fd/1.
func fdAlias(path string) bool {
	for range 40 {
		p, err := filepath.Abs(path)
		if err != nil {
			return false
		}
		if strings.HasPrefix(p, "/proc/") || strings.HasPrefix(p, "/dev/fd/") {
			return true
		}
		t, err := os.Readlink(p)
		if err != nil {
			return false
		}
		if !filepath.IsAbs(t) {
			t = filepath.Join(filepath.Dir(p), t)
		}
		path = t
	}
	return false
}

func (o *output) Write(p []byte) (int, error) {
	n, err := o.w.Write(p)
	if err != nil && o.f != nil {
		err = &fs.PathError{Op: "write", Path: o.name, Err: cause(err)}
	}
	return n, err
}

// commit closes the output and, for a regular file, renames it into place.
func (o *output) commit() error {
	if o.done {
		return nil
	}
	o.done = true
	if o.f == nil {
		return nil
	}
	err := o.closeFile()
	if err == nil && o.target != "" {
		err = os.Chmod(o.f.Name(), o.mode)
		if err == nil {
			err = os.Rename(o.f.Name(), o.target)
		}
	}
	if err != nil {
		if o.target != "" {
			os.Remove(o.f.Name())
		}
		return fmt.Errorf("%s: %w", o.name, cause(err))
	}
	return nil
}

// abort closes an output not committed and removes its hidden file.
func (o *output) abort() {
	if o.done {
		return
	}
	o.done = true
	if o.f == nil {
		return
	}
	o.closeFile()
	if o.target != "" {
		os.Remove(o.f.Name())
	}
}

// closeFile closes the file once, before commit or abort (a part of a
// split trace is closed once whole, and renamed into place with the rest),
// and returns what closing it returned.
func (o *output) closeFile() error {
	if !o.closed {
		o.closed = true
		o.closeErr = o.f.Close()
	}
	return o.closeErr
}

// cause is the error of a path or link error, without the path (which may
// be the hidden file's).
func cause(err error) error {
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		return pe.Err
	case errors.As(err, &le):
		return le.Err
	}
	return err
}
