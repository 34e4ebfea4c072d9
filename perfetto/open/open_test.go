package open

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// newServer serves a trace of known bytes on a free loopback port.
func newServer(t *testing.T, name string, opts ...Option) (*Server, []byte) {
	t.Helper()
	return newServerSize(t, name, 700_000, opts...)
}

func newServerSize(t *testing.T, name string, size int, opts ...Option) (*Server, []byte) {
	t.Helper()
	data := bytes.Repeat([]byte("trace bytes\x00\x01"), size/13)
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	ln, err := Listen(0)
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewServer(ln, path, opts...)
	if err != nil {
		ln.Close()
		t.Fatal(err)
	}
	return s, data
}

// serve runs s.Serve in the background; the channel receives its result.
func serve(ctx context.Context, s *Server) <-chan error {
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	return done
}

// client is a client of its own, so that its idle connections can be
// closed at the end of a test.
func client(t *testing.T) *http.Client {
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// do sends a request as the UI does, with the UI's Origin.
func do(t *testing.T, c *http.Client, method, url, origin string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

// noServerGoroutines fails when a goroutine of the server is still there.
func noServerGoroutines(t *testing.T) {
	t.Helper()
	var stacks string
	for range 200 { // a connection's goroutine ends just after it says so
		buf := make([]byte, 1<<20)
		stacks = string(buf[:runtime.Stack(buf, true)])
		if !strings.Contains(stacks, "net/http.(*conn).serve") && !strings.Contains(stacks, "net/http.(*Server).Serve") {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Errorf("server goroutines left behind:\n%s", stacks)
}

func TestURL(t *testing.T) {
	t.Parallel()
	s, _ := newServer(t, "run 1 (a&b).pftrace")
	s.ln.Close()
	addr := s.ln.Addr().String()
	want := "https://ui.perfetto.dev/#!/?url=http://" + addr + "/run_1__a_b_.pftrace&referrer=phasetrace"
	if got := s.URL(); got != want {
		t.Errorf("URL() = %q, want %q", got, want)
	}
	s2, _ := newServer(t, "x.pftrace", WithOrigin("http://localhost:10000/ui/"), WithReferrer(""))
	s2.ln.Close()
	if got, want := s2.URL(), "http://localhost:10000/ui/#!/?url=http://"+s2.ln.Addr().String()+"/x.pftrace"; got != want {
		t.Errorf("URL() = %q, want %q", got, want)
	}
	if got := s2.allowOrigin(); got != "http://localhost:10000" {
		t.Errorf("allowOrigin() = %q", got)
	}
}

func TestServe(t *testing.T) {
	s, data := newServer(t, "run.pftrace")
	if ip := s.ln.Addr().(*net.TCPAddr).IP; !ip.Equal(net.IPv4(127, 0, 0, 1)) {
		t.Errorf("listening on %v, want 127.0.0.1", ip)
	}
	done := serve(context.Background(), s)
	c := client(t)
	base := "http://" + s.ln.Addr().String()
	cors := func(resp *http.Response) {
		t.Helper()
		if got := resp.Header.Get("Access-Control-Allow-Origin"); got != DefaultOrigin {
			t.Errorf("%s %s: Access-Control-Allow-Origin %q, want %q", resp.Request.Method, resp.Request.URL, got, DefaultOrigin)
		}
		if got := resp.Header.Get("Cache-Control"); got != "no-cache" {
			t.Errorf("%s %s: Cache-Control %q", resp.Request.Method, resp.Request.URL, got)
		}
	}

	// A preflight, as a browser sends before a private-network fetch.
	resp, _ := do(t, c, http.MethodOptions, s.TraceURL(), DefaultOrigin)
	if resp.StatusCode != http.StatusNoContent {
		t.Errorf("OPTIONS: status %d, want 204", resp.StatusCode)
	}
	cors(resp)
	for k, v := range map[string]string{"Access-Control-Allow-Private-Network": "true", "Access-Control-Allow-Methods": "GET, HEAD, OPTIONS"} {
		if got := resp.Header.Get(k); got != v {
			t.Errorf("OPTIONS: %s %q, want %q", k, got, v)
		}
	}
	// Any other path, other methods, other origins, another host: refused.
	for _, p := range []string{"/", "/other.pftrace", "/run.pftrace/x", "/../run.pftrace", "/run.pftrace.gz"} {
		resp, _ := do(t, c, http.MethodGet, base+p, DefaultOrigin)
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: status %d, want 404", p, resp.StatusCode)
		}
		cors(resp)
	}
	if resp, _ := do(t, c, http.MethodPost, s.TraceURL(), DefaultOrigin); resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST: status %d, want 405", resp.StatusCode)
	}
	if resp, _ := do(t, c, http.MethodGet, s.TraceURL(), "https://evil.example"); resp.StatusCode != http.StatusForbidden {
		t.Errorf("GET from another origin: status %d, want 403", resp.StatusCode)
	}
	req, _ := http.NewRequest(http.MethodGet, s.TraceURL(), nil)
	req.Host = "rebound.example:9001"
	if resp, err := c.Do(req); err != nil {
		t.Fatal(err)
	} else if resp.Body.Close(); resp.StatusCode != http.StatusForbidden {
		t.Errorf("GET with Host %s: status %d, want 403", req.Host, resp.StatusCode)
	}
	// HEAD does not count as the fetch.
	if resp, body := do(t, c, http.MethodHead, s.TraceURL(), DefaultOrigin); resp.StatusCode != http.StatusOK || len(body) != 0 || resp.ContentLength != int64(len(data)) {
		t.Errorf("HEAD: status %d, %d bytes, Content-Length %d", resp.StatusCode, len(body), resp.ContentLength)
	}
	select {
	case err := <-done:
		t.Fatalf("Serve returned %v before the trace was fetched", err)
	default:
	}

	// The fetch.
	resp, body := do(t, c, http.MethodGet, s.TraceURL(), DefaultOrigin)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET: status %d", resp.StatusCode)
	}
	cors(resp)
	if !bytes.Equal(body, data) {
		t.Errorf("GET: %d bytes, not the trace's %d", len(body), len(data))
	}
	if err := <-done; err != nil {
		t.Errorf("Serve: %v", err)
	}
	c.CloseIdleConnections()
	if _, err := c.Get(s.TraceURL()); err == nil {
		t.Error("the server still answers after the trace was fetched")
	}
	noServerGoroutines(t)
}

// A fetch without an Origin (curl, the browser's address bar) is served.
func TestServeWithoutOrigin(t *testing.T) {
	s, data := newServer(t, "run.pftrace")
	done := serve(context.Background(), s)
	c := client(t)
	if resp, body := do(t, c, http.MethodGet, s.TraceURL(), ""); resp.StatusCode != http.StatusOK || !bytes.Equal(body, data) {
		t.Errorf("GET: status %d, %d bytes", resp.StatusCode, len(body))
	}
	if err := <-done; err != nil {
		t.Errorf("Serve: %v", err)
	}
	noServerGoroutines(t)
}

// A fetch that breaks off does not end the server.
func TestBrokenFetch(t *testing.T) {
	s, data := newServerSize(t, "run.pftrace", 64<<20) // more than the sockets' buffers hold
	done := serve(context.Background(), s)
	conn, err := net.Dial("tcp", s.ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(conn, "GET /run.pftrace HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: "+DefaultOrigin+"\r\n\r\n")
	if _, err := io.ReadFull(conn, make([]byte, 100)); err != nil {
		t.Fatal(err)
	}
	conn.(*net.TCPConn).SetLinger(0) // reset, not a clean close
	conn.Close()
	c := client(t)
	if resp, _ := do(t, c, http.MethodOptions, s.TraceURL(), DefaultOrigin); resp.StatusCode != http.StatusNoContent {
		t.Errorf("OPTIONS after a broken fetch: status %d", resp.StatusCode)
	}
	if resp, body := do(t, c, http.MethodGet, s.TraceURL(), DefaultOrigin); !bytes.Equal(body, data) {
		t.Errorf("GET: status %d, %d bytes", resp.StatusCode, len(body))
	}
	if err := <-done; err != nil {
		t.Errorf("Serve: %v", err)
	}
	noServerGoroutines(t)
}

func TestServeCanceled(t *testing.T) {
	s, _ := newServer(t, "run.pftrace")
	ctx, cancel := context.WithCancel(context.Background())
	done := serve(ctx, s)
	// An idle keep-alive connection must not hold Serve up.
	c := client(t)
	if resp, _ := do(t, c, http.MethodOptions, s.TraceURL(), DefaultOrigin); resp.StatusCode != http.StatusNoContent {
		t.Errorf("OPTIONS: status %d", resp.StatusCode)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Serve after cancel: %v, want context.Canceled", err)
	}
	noServerGoroutines(t)
}

func TestPortBusy(t *testing.T) {
	t.Parallel()
	ln, err := Listen(0)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, err = Listen(ln.Addr().(*net.TCPAddr).Port)
	if !errors.Is(err, ErrPortBusy) {
		t.Errorf("Listen on a taken port: %v, want ErrPortBusy", err)
	}
}

func TestNotLoopback(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp4", "0.0.0.0:0")
	if err != nil {
		t.Skip("cannot listen on 0.0.0.0:", err)
	}
	defer ln.Close()
	path := filepath.Join(t.TempDir(), "x.pftrace")
	os.WriteFile(path, nil, 0o644)
	if _, err := NewServer(ln, path); !errors.Is(err, ErrNotLoopback) {
		t.Errorf("NewServer on 0.0.0.0: %v, want ErrNotLoopback", err)
	}
}

func TestNotAFile(t *testing.T) {
	t.Parallel()
	ln, err := Listen(0)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if _, err := NewServer(ln, t.TempDir()); err == nil {
		t.Error("NewServer on a directory: no error")
	}
	if _, err := NewServer(ln, filepath.Join(t.TempDir(), "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("NewServer on a missing file: %v", err)
	}
}
