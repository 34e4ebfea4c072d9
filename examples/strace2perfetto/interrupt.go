package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"

	"github.com/phasetrace/phasetrace"
)

// signalContext is a context done at the first terminating signal (SIGINT,
// SIGTERM, SIGHUP, SIGQUIT, ...: see terminating). That signal also
// restores their default handling, so that a second one ends
// the process at once; stop restores it too.
func signalContext() (ctx context.Context, stop context.CancelFunc) {
	ctx, stop, _ = releasableSignalContext()
	return ctx, stop
}

// releasableSignalContext is signalContext with release, which restores
// the default handling of the signals without ending the context: once a
// conversion is over, a signal no longer means "interrupted".
func releasableSignalContext() (ctx context.Context, stop context.CancelFunc, release func()) {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, terminating...)
	done := make(chan struct{})
	release = sync.OnceFunc(func() {
		signal.Stop(ch)
		// A write to a reader gone is an error to clean up after, not a
		// signal that ends the process before it can.
		ignoreBrokenPipe()
		close(done)
	})
	go func() {
		select {
		case <-ch:
			release()
			cancel()
		case <-done:
		}
	}()
	return ctx, func() { release(); cancel() }, release
}

// interruptible is in with readers that fail with ctx's error once ctx is
// done, so that a conversion stops at its next read.
func interruptible(ctx context.Context, in phasetrace.Input) phasetrace.Input {
	open := in.Open
	in.Open = func() (io.ReadCloser, error) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		rc, err := open()
		if err != nil {
			return nil, err
		}
		r := &interruptibleReader{ctx: ctx, ReadCloser: rc}
		if s, ok := rc.(io.Seeker); ok {
			// The converter seeks to the host_phase_records passes a run
			// needs, when it can.
			return &interruptibleSeeker{r, s}, nil
		}
		return r, nil
	}
	return in
}

// interruptibleSeeker is an interruptibleReader of an input that can seek.
type interruptibleSeeker struct {
	*interruptibleReader
	s io.Seeker
}

func (r *interruptibleSeeker) Seek(offset int64, whence int) (int64, error) {
	if err := r.ctx.Err(); err != nil {
		return 0, err
	}
	return r.s.Seek(offset, whence)
}

type interruptibleReader struct {
	ctx context.Context
	io.ReadCloser
}

func (r *interruptibleReader) Read(p []byte) (int, error) {
	if err := r.ctx.Err(); err != nil {
		return 0, err
	}
	n, err := r.ReadCloser.Read(p)
	if cerr := r.ctx.Err(); cerr != nil {
		err = cerr // a read that waited for the interruption
	}
	return n, err
}

// interruptibleWriter fails with ctx's error once ctx is done.
type interruptibleWriter struct {
	ctx context.Context
	w   io.Writer
}

func (w interruptibleWriter) Write(p []byte) (int, error) {
	if err := w.ctx.Err(); err != nil {
		return 0, err
	}
	return w.w.Write(p)
}

// spool copies what open returns to a file in $TMPDIR, so that it can be
// read twice, and returns it as an input named name with the function that
// removes it. It returns when ctx is done even if the copy is waiting to
// read (a terminal, a pipe nobody writes to): the copy is then removed and
// the reader abandoned.
func spool(ctx context.Context, name string, open func() (io.ReadCloser, error)) (phasetrace.Input, func(), error) {
	f, err := os.CreateTemp("", "strace2perfetto-stdin-*")
	if err != nil {
		return phasetrace.Input{}, nil, err
	}
	remove := func() { os.Remove(f.Name()) }
	copied := make(chan error, 1)
	go func() {
		rc, err := open()
		if err == nil {
			_, err = io.Copy(f, &interruptibleReader{ctx: ctx, ReadCloser: rc})
			rc.Close()
		}
		copied <- err
	}()
	select {
	case err = <-copied:
	case <-ctx.Done():
		err = ctx.Err()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		remove()
		if ctx.Err() == nil {
			err = fmt.Errorf("%s: copying to a temporary file: %w", name, err)
		}
		return phasetrace.Input{}, nil, err
	}
	in := phasetrace.File(f.Name())
	in.Name = name
	return in, remove, nil
}
