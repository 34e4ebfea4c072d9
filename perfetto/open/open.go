package open

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Defaults.
const (
	// DefaultPort is the only port the UI's Content-Security-Policy lets it
	// fetch from on 127.0.0.1 (the port of trace_processor_shell --httpd).
	DefaultPort = 9001
	// DefaultOrigin is the UI's origin.
	DefaultOrigin = "https://ui.perfetto.dev"
	// DefaultReferrer is the referrer argument of the UI's address: it tells
	// the UI which tool opened the trace.
	DefaultReferrer = "phasetrace"
)

// shutdownGrace is how long Serve waits, once the trace is fetched, for
// other requests in progress to end before closing their connections.
const shutdownGrace = 5 * time.Second

// MaxConns is how many connections Serve holds at once. A connection
// beyond it makes room by closing the one that has waited longest without
// a request in progress (one that connected and sent nothing, or an idle
// keep-alive), or is closed itself when every one is busy: clients that
// connect and never send cannot exhaust descriptors nor keep the UI out.
const MaxConns = 32

// IdleTimeout is how long a connection may send no request header, sit
// idle between requests, or take no byte of the trace, before Serve
// closes it.
const IdleTimeout = 10 * time.Second

// copyChunk is what the trace is written in, each chunk with its own
// IdleTimeout.
const copyChunk = 1 << 20

var (
	// ErrPortBusy is wrapped by Listen's error when the port is taken.
	ErrPortBusy = errors.New("port is busy")
	// ErrNotLoopback is wrapped by NewServer's error when the listener is
	// not bound to a loopback address.
	ErrNotLoopback = errors.New("listener is not bound to a loopback address")
)

// Option configures a Server.
type Option func(*config)

type config struct {
	origin, referrer string
}

// WithOrigin serves the trace to a UI at origin instead of DefaultOrigin
// (http://localhost:10000 for Perfetto's UI dev server). A path in origin
// is kept in the UI's address but not in Access-Control-Allow-Origin.
func WithOrigin(origin string) Option {
	return func(c *config) { c.origin = strings.TrimSuffix(origin, "/") }
}

// WithReferrer sets the referrer argument of the UI's address (default
// DefaultReferrer); "" leaves it out.
func WithReferrer(referrer string) Option {
	return func(c *config) { c.referrer = referrer }
}

// Listen listens on 127.0.0.1:port (0: any free port). When the port is
// taken, the error wraps ErrPortBusy.
func Listen(port int) (net.Listener, error) {
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	ln, err := net.Listen("tcp4", addr)
	if errors.Is(err, syscall.EADDRINUSE) {
		return nil, fmt.Errorf("%s: %w (another trace being served, or trace_processor_shell --httpd?)", addr, ErrPortBusy)
	}
	return ln, err
}

// Server serves one trace file to the UI until the UI has fetched it.
type Server struct {
	ln      net.Listener
	path    string // the file
	name    string // its name in the URL, without the leading /
	cfg     config
	fetched chan struct{}
	once    sync.Once
	// maxConns and idle are MaxConns and IdleTimeout (tests change them;
	// idle even while serving).
	maxConns int
	idle     atomic.Int64 // a time.Duration
	conns    connTable
}

// connTable is the connections Serve holds, with their states.
type connTable struct {
	mu    sync.Mutex
	conns map[net.Conn]*connState // until their serving goroutine ends
	open  int                     // those not closed
	seq   uint64
	peak  int   // the most open at once (after making room)
	shed  int64 // connections closed to make room
}

type connState struct {
	seq   uint64 // order of arrival
	state http.ConnState
}

// track records c's new state. A new connection past limit closes the
// oldest one without a request in progress, or itself.
func (t *connTable) track(c net.Conn, st http.ConnState, limit int) {
	var victim net.Conn
	t.mu.Lock()
	switch st {
	case http.StateNew:
		if t.conns == nil {
			t.conns = map[net.Conn]*connState{}
		}
		t.seq++
		t.conns[c] = &connState{seq: t.seq, state: st}
		t.open++
		if t.open > limit {
			victim = c
			oldest := uint64(0)
			for o, cs := range t.conns {
				if o != c && cs.state != http.StateActive && cs.state != http.StateClosed && (oldest == 0 || cs.seq < oldest) {
					victim, oldest = o, cs.seq
				}
			}
			t.conns[victim].state = http.StateClosed // closed: not a victim again
			t.open--
			t.shed++
		}
	case http.StateActive, http.StateIdle:
		if cs := t.conns[c]; cs != nil && cs.state != http.StateClosed {
			cs.state = st
		}
	case http.StateClosed, http.StateHijacked:
		if cs := t.conns[c]; cs != nil && cs.state != http.StateClosed {
			t.open--
		}
		delete(t.conns, c)
	}
	t.peak = max(t.peak, t.open)
	t.mu.Unlock()
	if victim != nil {
		victim.Close()
	}
}

// NewServer returns a server of the trace file at path on ln, which must be
// bound to a loopback address (see Listen). The file is read at each request
// for it.
func NewServer(ln net.Listener, path string, opts ...Option) (*Server, error) {
	tcp, ok := ln.Addr().(*net.TCPAddr)
	if !ok || !tcp.IP.IsLoopback() {
		return nil, fmt.Errorf("%s: %w", ln.Addr(), ErrNotLoopback)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	f.Close()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	cfg := config{origin: DefaultOrigin, referrer: DefaultReferrer}
	for _, o := range opts {
		o(&cfg)
	}
	s := &Server{ln: ln, path: path, name: urlName(path), cfg: cfg, fetched: make(chan struct{}), maxConns: MaxConns}
	s.idle.Store(int64(IdleTimeout))
	return s, nil
}

// urlName is the file's base name with anything but letters, digits, '.',
// '_' and '-' replaced by '_'.
func urlName(path string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z', '0' <= r && r <= '9', r == '.', r == '_', r == '-':
			return r
		}
		return '_'
	}, filepath.Base(path))
}

// TraceURL is where the trace is served: http://127.0.0.1:PORT/NAME.
func (s *Server) TraceURL() string {
	return "http://" + s.ln.Addr().String() + "/" + s.name
}

// URL is the UI's address that opens the trace.
func (s *Server) URL() string {
	u := s.cfg.origin + "/#!/?url=" + s.TraceURL()
	if s.cfg.referrer != "" {
		u += "&referrer=" + s.cfg.referrer
	}
	return u
}

// allowOrigin is the origin without a path.
func (s *Server) allowOrigin() string {
	o := s.cfg.origin
	if i := strings.Index(o, "://"); i >= 0 {
		if j := strings.IndexByte(o[i+3:], '/'); j >= 0 {
			o = o[:i+3+j]
		}
	}
	return o
}

// Serve serves the trace until a GET of it has received the whole file, and
// returns nil; or until ctx is done, and returns ctx's error. It closes the
// listener, and returns only once every connection it accepted is closed.
// It holds at most MaxConns connections and closes those idle for
// IdleTimeout.
func (s *Server) Serve(ctx context.Context) error {
	var conns sync.WaitGroup
	hs := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: time.Duration(s.idle.Load()),
		IdleTimeout:       time.Duration(s.idle.Load()),
		ErrorLog:          log.New(io.Discard, "", 0),
		ConnState: func(c net.Conn, st http.ConnState) {
			s.conns.track(c, st, s.maxConns)
			switch st {
			case http.StateNew:
				conns.Add(1)
			case http.StateClosed, http.StateHijacked:
				conns.Done()
			}
		},
	}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(s.ln) }()
	var err error
	select {
	case <-s.fetched:
		sctx, cancel := context.WithTimeout(ctx, shutdownGrace)
		if hs.Shutdown(sctx) != nil {
			hs.Close()
		}
		cancel()
		<-served
	case <-ctx.Done():
		hs.Close()
		<-served
		err = ctx.Err()
	case err = <-served: // the listener failed
		hs.Close()
	}
	conns.Wait()
	return err
}

// ServeHTTP answers one request of the UI.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Cache-Control", "no-cache")
	h.Set("Vary", "Origin")
	if !loopbackHost(r.Host) {
		http.Error(w, "host not allowed", http.StatusForbidden)
		return
	}
	allow := s.allowOrigin()
	if o := r.Header.Get("Origin"); o != "" && !strings.EqualFold(o, allow) {
		http.Error(w, "origin not allowed", http.StatusForbidden)
		return
	}
	h.Set("Access-Control-Allow-Origin", allow)
	if r.URL.Path != "/"+s.name {
		http.Error(w, "file not found", http.StatusNotFound)
		return
	}
	switch r.Method {
	case http.MethodOptions:
		h.Set("Access-Control-Allow-Methods", "GET, HEAD, OPTIONS")
		h.Set("Access-Control-Allow-Headers", "*")
		h.Set("Access-Control-Allow-Private-Network", "true")
		h.Set("Access-Control-Max-Age", "86400")
		w.WriteHeader(http.StatusNoContent)
	case http.MethodGet, http.MethodHead:
		s.serveFile(w, r)
	default:
		h.Set("Allow", "GET, HEAD, OPTIONS")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
}

// serveFile answers the whole file, and marks the trace fetched once a GET
// has written all of it.
func (s *Server) serveFile(w http.ResponseWriter, r *http.Request) {
	f, err := os.Open(s.path)
	if err != nil {
		http.Error(w, "cannot read the trace", http.StatusInternalServerError)
		return
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		http.Error(w, "cannot read the trace", http.StatusInternalServerError)
		return
	}
	size := st.Size()
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return
	}
	// A client that stops reading is given IdleTimeout per chunk, not the
	// whole trace's time.
	rc := http.NewResponseController(w)
	idle := time.Duration(s.idle.Load())
	for n := int64(0); n < size; {
		rc.SetWriteDeadline(time.Now().Add(idle))
		m, err := io.CopyN(w, f, min(copyChunk, size-n))
		n += m
		if err != nil {
			return
		}
	}
	rc.SetWriteDeadline(time.Now().Add(idle))
	if rc.Flush() != nil {
		return
	}
	s.once.Do(func() { close(s.fetched) })
}

// loopbackHost reports whether a Host header names this machine's loopback.
func loopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// StartBrowser asks the system to open url in a browser (xdg-open, open or
// rundll32), without waiting for it. It returns an error when there is no
// opener; the caller has printed the URL and goes on.
func StartBrowser(url string) error {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", url)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", url)
	default:
		cmd = exec.Command("xdg-open", url)
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	go cmd.Wait() // reap it
	return nil
}
