package open

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"
)

// dialIdle opens n connections to s that send nothing.
func dialIdle(t *testing.T, s *Server, n int) []net.Conn {
	t.Helper()
	var conns []net.Conn
	for range n {
		c, err := net.Dial("tcp", s.ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	t.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	return conns
}

// Clients that connect and never send hold no more than maxConns
// connections, and the UI's fetch after them gets the whole trace.
func TestIdleClientsCapped(t *testing.T) {
	s, data := newServerSize(t, "run.pftrace", 8<<20)
	s.maxConns = 8
	s.idle.Store(int64(time.Second)) // the idle ones end soon after the fetch
	done := serve(context.Background(), s)
	idle := dialIdle(t, s, 20*s.maxConns)
	c := client(t)
	if resp, body := do(t, c, http.MethodGet, s.TraceURL(), DefaultOrigin); resp.StatusCode != http.StatusOK || !bytes.Equal(body, data) {
		t.Errorf("GET behind %d idle clients: status %d, %d of %d bytes", len(idle), resp.StatusCode, len(body), len(data))
	}
	if err := <-done; err != nil {
		t.Errorf("Serve: %v", err)
	}
	s.conns.mu.Lock()
	peak, shed := s.conns.peak, s.conns.shed
	s.conns.mu.Unlock()
	if peak > s.maxConns || shed == 0 {
		t.Errorf("held up to %d connections (cap %d), closed %d to make room", peak, s.maxConns, shed)
	}
	serverGoroutinesEnd()
}

// A connection that sends no request is closed after the idle timeout.
func TestIdleClientClosed(t *testing.T) {
	s, _ := newServer(t, "run.pftrace")
	s.idle.Store(int64(20 * time.Millisecond))
	ctx, cancel := context.WithCancel(context.Background())
	done := serve(ctx, s)
	conn := dialIdle(t, s, 1)[0]
	if n, err := conn.Read(make([]byte, 1)); err == nil {
		t.Errorf("read %d bytes from a connection that sent nothing", n)
	}
	cancel()
	<-done
	noServerGoroutines(t)
}

// A client that asks for the trace and stops reading is closed once the
// trace makes no progress for the idle timeout, and the UI's fetch after
// it is served.
func TestStalledReaderClosed(t *testing.T) {
	s, data := newServerSize(t, "run.pftrace", 64<<20) // more than the sockets' buffers hold
	s.idle.Store(int64(250 * time.Millisecond))        // ReadHeaderTimeout too: the UI sends its header at once
	done := serve(context.Background(), s)
	stalled := dialIdle(t, s, 1)[0]
	io.WriteString(stalled, "GET /run.pftrace HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: "+DefaultOrigin+"\r\n\r\n")
	for !s.conns.gaveUp() { // the server takes it, then gives it up
		time.Sleep(time.Millisecond)
	}
	s.idle.Store(int64(IdleTimeout)) // the UI reads at its pace
	c := client(t)
	if resp, body := do(t, c, http.MethodGet, s.TraceURL(), DefaultOrigin); !bytes.Equal(body, data) {
		t.Errorf("GET: status %d, %d bytes", resp.StatusCode, len(body))
	}
	if err := <-done; err != nil {
		t.Errorf("Serve: %v", err)
	}
	serverGoroutinesEnd()
}

// gaveUp reports whether every connection taken so far is closed, after
// one was taken.
func (t *connTable) gaveUp() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.seq > 0 && t.open == 0
}

// serverGoroutinesEnd waits until no goroutine of a server is left (many
// connections take a while to end on a loaded machine).
func serverGoroutinesEnd() {
	buf := make([]byte, 1<<20)
	for {
		stacks := string(buf[:runtime.Stack(buf, true)])
		if !strings.Contains(stacks, "net/http.(*conn).serve") && !strings.Contains(stacks, "net/http.(*Server).Serve") {
			return
		}
		time.Sleep(time.Millisecond)
	}
}
