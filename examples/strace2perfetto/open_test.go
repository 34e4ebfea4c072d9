package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/phasetrace/phasetrace"
	"github.com/phasetrace/phasetrace/perfetto/open"
)

// uiFetch is a browser that does what the UI does with its address: it
// fetches the url argument with the UI's Origin. The fetched bytes, or an
// error, arrive on the channel.
func uiFetch(t *testing.T) (browser func(string) error, fetched <-chan []byte) {
	ch := make(chan []byte, 1)
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return func(ui string) error {
		_, arg, ok := strings.Cut(ui, "#!/?url=")
		traceURL, _, _ := strings.Cut(arg, "&")
		if !ok || !strings.HasPrefix(ui, open.DefaultOrigin+"/") {
			t.Errorf("UI address %q", ui)
		}
		go func() {
			req, _ := http.NewRequest(http.MethodGet, traceURL, nil)
			req.Header.Set("Origin", open.DefaultOrigin)
			resp, err := (&http.Client{Transport: tr}).Do(req)
			if err != nil {
				t.Error(err)
				ch <- nil
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if got := resp.Header.Get("Access-Control-Allow-Origin"); got != open.DefaultOrigin {
				t.Errorf("Access-Control-Allow-Origin %q", got)
			}
			ch <- b
		}()
		return nil
	}, ch
}

func TestOpen(t *testing.T) {
	chdir(t)
	os.WriteFile("run.log", sample, 0o644)
	browser, fetched := uiFetch(t)
	var stderr bytes.Buffer
	c := &command{stdin: strings.NewReader(""), stdout: io.Discard, stderr: &stderr, file: phasetrace.File, browser: browser}
	// -open anywhere among the arguments, on a free port.
	if code := c.run(context.Background(), []string{"run.log", "-q", "-open", "-port", "0"}); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	b := <-fetched
	want, _ := os.ReadFile("run.pftrace")
	if len(want) == 0 || !bytes.Equal(b, want) {
		t.Errorf("the UI fetched %d bytes, the trace is %d", len(b), len(want))
	}
	for _, w := range []string{"open: https://ui.perfetto.dev/#!/?url=http://127.0.0.1:", "/run.pftrace&referrer=phasetrace", "the UI has fetched the trace"} {
		if !strings.Contains(stderr.String(), w) {
			t.Errorf("stderr lacks %q:\n%s", w, stderr.String())
		}
	}
}

// Ctrl-C while serving: the trace is kept and the command exits 0.
func TestOpenInterrupted(t *testing.T) {
	chdir(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr bytes.Buffer
	c := &command{stdin: strings.NewReader(""), stdout: io.Discard, stderr: &stderr, file: phasetrace.File,
		serving:  func() (context.Context, context.CancelFunc) { return ctx, cancel },
		browser:  func(string) error { cancel(); return os.ErrNotExist }, // no browser; then Ctrl-C
		terminal: func() bool { return true },
	}
	if code := c.run(context.Background(), []string{"-open", "-port", "0", "-q"}); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	for _, w := range []string{"no browser opened", "stopped serving; the trace is kept"} {
		if !strings.Contains(stderr.String(), w) {
			t.Errorf("stderr lacks %q:\n%s", w, stderr.String())
		}
	}
	readTrace(t, sampleOut)
}

func TestOpenErrors(t *testing.T) {
	chdir(t)
	os.WriteFile("run.log", sample, 0o644)
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	busy := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"-open", "-port", busy, "run.log"}, exitFail, "port is busy (another trace being served, or trace_processor_shell --httpd?); the trace is written: run.pftrace"},
		{[]string{"-open", "-o", "-", "run.log"}, exitUsage, "not with -o -"},
		{[]string{"-open", "-o", os.DevNull, "run.log"}, exitUsage, "is not a regular file"},
		{[]string{"-port", "70000", "run.log"}, exitUsage, "-port 70000"},
	} {
		code, _, stderr := runArgs(c.args, strings.NewReader(""))
		if code != c.code || !strings.Contains(stderr, c.want) {
			t.Errorf("%q: exit %d, stderr %q; want exit %d mentioning %q", c.args, code, stderr, c.code, c.want)
		}
	}
	// The busy port cost the link, not the trace; the usage errors wrote
	// nothing.
	if got := names(t, "."); !slices.Equal(got, []string{"run.log", "run.pftrace"}) {
		t.Errorf("the runs left %q", got)
	}
	readTrace(t, "run.pftrace")
}

func TestVersion(t *testing.T) {
	t.Parallel()
	code, stdout, stderr := runArgs([]string{"run.log", "-version"}, strings.NewReader(""))
	// A build with no module version names the version the code knows,
	// never "(devel)" alone.
	if code != exitOK || !strings.HasPrefix(stdout, "strace2perfetto "+phasetrace.ModuleVersion) || strings.Contains(stdout, "(devel)") || stderr != "" {
		t.Errorf("-version: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}
