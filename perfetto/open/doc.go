// Package open serves one trace file to the Perfetto UI (ui.perfetto.dev), the
// way Perfetto's own tools/open_trace_in_ui does, so that a command can open
// the trace it wrote in one step.
//
// The UI loads a trace from a URL given in its address:
//
//	https://ui.perfetto.dev/#!/?url=http://127.0.0.1:9001/run.pftrace&referrer=phasetrace
//
// The page fetches that URL with a cross-origin GET from its own origin, so
// the server answers with Access-Control-Allow-Origin naming the UI's origin.
// The UI's Content-Security-Policy lets it connect to http://127.0.0.1:9001
// only (the port of trace_processor_shell --httpd), which is why
// DefaultPort is 9001 and why the server listens on 127.0.0.1 and not on
// localhost or ::1.
//
// # Protocol
//
// What Perfetto's tools/open_trace_in_ui does, and what Serve does:
//
//   - every response carries Access-Control-Allow-Origin: <origin> and
//     Cache-Control: no-cache;
//   - GET /<name> answers the file (200, Content-Length, the whole file);
//     any other path and any other method answer 404;
//   - the server stops once the trace has been requested.
//
// Where Serve does more, it does what trace_processor_shell --httpd does:
//
//   - OPTIONS (a CORS preflight, or Chrome's Private Network Access
//     preflight) answers 204 with Access-Control-Allow-Methods: GET,
//     Access-Control-Allow-Headers: *, Access-Control-Allow-Private-Network:
//     true and Access-Control-Max-Age;
//   - a request whose Origin header is present and is not the UI's is
//     refused with 403, so that no other page can consume the one fetch;
//   - HEAD /<name> answers the headers only.
//
// And where it is stricter: the server stops only when the whole file has
// been written to a GET of it (a fetch that broke off does not end it), a
// Host header that is not a loopback name is refused with 403 (DNS
// rebinding), and the name in the URL is the file's base name with anything
// but letters, digits, '.', '_' and '-' replaced by '_', so that it needs no
// escaping inside the UI's address.
//
// # Limits
//
// Serve holds at most MaxConns connections: one more closes the oldest
// that has no request in progress (it connected and sent nothing, or sits
// idle between requests), or itself when all are busy. A connection that
// sends no request header, sits idle, or takes no byte of the trace for
// IdleTimeout is closed. Clients that connect and never read thus cost a
// bounded number of descriptors and little memory, and cannot keep the UI's
// fetch out or cut it short.
//
// # Use
//
//	ln, err := open.Listen(open.DefaultPort) // 127.0.0.1:9001; ErrPortBusy when taken
//	srv, err := open.NewServer(ln, "run.pftrace")
//	fmt.Println(srv.URL())                   // print it, and open a browser on it
//	err = srv.Serve(ctx)                     // nil once the UI has fetched the trace
package open
