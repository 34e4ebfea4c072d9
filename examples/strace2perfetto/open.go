package main

import (
	"context"
	"fmt"
	"io"
	"net"

	"github.com/phasetrace/phasetrace/perfetto/open"
)

// serveTrace serves the trace at path on ln to the Perfetto UI and opens a
// browser on it, until the UI has fetched it or ctx is done. Both end well:
// the trace is on disk either way. It returns an error only when the trace
// cannot be served at all.
func serveTrace(ctx context.Context, ln net.Listener, path string, stderr io.Writer, browser func(url string) error) error {
	srv, err := open.NewServer(ln, path)
	if err != nil {
		ln.Close()
		return err
	}
	fmt.Fprintf(stderr, "open: %s\nserving %s at %s until the UI has fetched it (Ctrl-C to stop)\n", srv.URL(), path, srv.TraceURL())
	if browser == nil {
		browser = open.StartBrowser
	}
	if err := browser(srv.URL()); err != nil {
		fmt.Fprintln(stderr, "no browser opened: open the link above")
	}
	if err := srv.Serve(ctx); err != nil {
		fmt.Fprintln(stderr, "stopped serving; the trace is kept")
		return nil
	}
	fmt.Fprintln(stderr, "the UI has fetched the trace")
	return nil
}
