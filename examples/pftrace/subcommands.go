package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"github.com/phasetrace/phasetrace/perfetto/check"
	"github.com/phasetrace/phasetrace/perfetto/open"
)

// read reads the whole trace in file into memory (dump needs it all).
func read(file string) (*check.Trace, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	tr, err := check.Read(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if tr.Packets == 0 {
		// An empty protobuf stream parses, but no writer makes one.
		return nil, fmt.Errorf("%s: not a trace: it holds no packet", file)
	}
	return tr, nil
}

// scan reads the trace in file as a stream of records, in memory that
// does not grow with the trace (check.Reader, which sorts the events in
// temporary files past check.DefaultMemoryLimit), and hands each record
// to each with what the packets describe: tr is complete from the first
// record that is not a problem of a packet on.
func (c *command) scan(file string, opts []check.Option, each func(rec *check.Record, tr *check.Trace) error) (*check.Trace, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rd := check.NewReader(f, append(opts, c.readerOptions...)...)
	defer rd.Close()
	var rec check.Record // one for every record: each must not keep it
	for {
		rec, err = rd.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		if err := each(&rec, rd.Trace()); err != nil {
			return nil, err
		}
	}
	tr := rd.Trace()
	if tr.Packets == 0 {
		// An empty protobuf stream parses, but no writer makes one.
		return nil, fmt.Errorf("%s: not a trace: it holds no packet", file)
	}
	return tr, nil
}

// writeJSON writes v as indented JSON.
func writeJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// table writes aligned columns.
func table(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
}

func checkFlags(c *command, fs *flag.FlagSet) func(context.Context, []string) int {
	asJSON := fs.Bool("json", false, "write the results as a JSON array, one object per file")
	return func(_ context.Context, files []string) int {
		type problemJSON struct {
			Name   string `json:"name"`
			Packet int    `json:"packet"`
			Detail string `json:"detail"`
		}
		type fileJSON struct {
			File     string        `json:"file"`
			Error    string        `json:"error,omitempty"`
			Problems []problemJSON `json:"problems"`
		}
		code := exitOK
		var out []fileJSON
		for _, f := range files {
			r := fileJSON{File: f, Problems: []problemJSON{}}
			found := 0
			_, err := c.scan(f, nil, func(rec *check.Record, _ *check.Trace) error {
				if rec.Kind != check.KindProblem {
					return nil
				}
				found++
				p := rec.Problem
				if *asJSON {
					r.Problems = append(r.Problems, problemJSON{p.Name, p.Packet, p.Detail})
				} else {
					fmt.Fprintf(c.stdout, "%s: %s\n", f, p)
				}
				return nil
			})
			switch {
			case err != nil:
				code = exitFail
				r.Error = err.Error()
				if !*asJSON {
					fmt.Fprintln(c.stdout, "pftrace:", err)
				}
			case found > 0:
				code = exitFail
			case !*asJSON:
				fmt.Fprintf(c.stdout, "%s: ok\n", f)
			}
			out = append(out, r)
		}
		if *asJSON {
			if err := writeJSON(c.stdout, out); err != nil {
				return c.fail(err)
			}
		}
		return code
	}
}

func dumpFlags(c *command, fs *flag.FlagSet) func(context.Context, []string) int {
	asJSON := fs.Bool("json", false, "write the trace as a JSON object")
	return func(_ context.Context, files []string) int {
		tr, err := read(files[0])
		if err != nil {
			return c.fail(err)
		}
		if *asJSON {
			err = writeJSON(c.stdout, dumpJSON(tr))
		} else {
			err = tr.Dump(c.stdout)
		}
		if err != nil {
			return c.fail(err)
		}
		return exitOK
	}
}

// traceJSON is the trace as dump -json writes it.
type traceJSON struct {
	PrimaryClock uint32            `json:"primary_clock"`
	Packets      int               `json:"packets"`
	Wall         []check.WallClock `json:"wall"`
	Tracks       []check.Track     `json:"tracks"`
	Slices       []sliceJSON       `json:"slices"`
	Flows        []check.Flow      `json:"flows"`
	Counters     []counterJSON     `json:"counters"`
	Problems     []check.Problem   `json:"problems"`
}

type sliceJSON struct {
	check.Slice
	Args argList `json:"Args"`
}

type counterJSON struct {
	check.Counter
	Value argValue `json:"Value"` // NaN and infinities as strings
}

func dumpJSON(tr *check.Trace) traceJSON {
	out := traceJSON{PrimaryClock: tr.PrimaryClock, Packets: tr.Packets, Wall: nonNil(tr.Wall), Tracks: nonNil(tr.Tracks),
		Flows: nonNil(tr.Flows), Problems: nonNil(tr.Problems), Slices: []sliceJSON{}, Counters: []counterJSON{}}
	for _, s := range tr.Slices {
		out.Slices = append(out.Slices, sliceJSON{Slice: s, Args: argList(s.Args)})
	}
	for _, c := range tr.Counters {
		var v any = c.Value
		if !c.Float {
			v = c.Int
		}
		out.Counters = append(out.Counters, counterJSON{Counter: c, Value: argValue{v}})
	}
	return out
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func openFlags(c *command, fs *flag.FlagSet) func(context.Context, []string) int {
	port := fs.Int("port", open.DefaultPort, "serve on 127.0.0.1:`port` (ui.perfetto.dev fetches only from 9001)")
	return func(ctx context.Context, files []string) int {
		if *port < 0 || *port > 65535 {
			return c.usage("open", fmt.Errorf("-port %d: want 0 to 65535", *port))
		}
		if _, err := c.scan(files[0], nil, func(*check.Record, *check.Trace) error { return nil }); err != nil {
			return c.fail(err)
		}
		ln, err := open.Listen(*port)
		if err != nil {
			return c.fail(err)
		}
		srv, err := open.NewServer(ln, files[0])
		if err != nil {
			ln.Close()
			return c.fail(err)
		}
		fmt.Fprintf(c.stderr, "open: %s\nserving %s at %s until the UI has fetched it (Ctrl-C to stop)\n", srv.URL(), files[0], srv.TraceURL())
		browser := c.browser
		if browser == nil {
			browser = open.StartBrowser
		}
		if err := browser(srv.URL()); err != nil {
			fmt.Fprintln(c.stderr, "no browser opened: open the link above")
		}
		if err := srv.Serve(ctx); errors.Is(err, ctx.Err()) && err != nil {
			fmt.Fprintln(c.stderr, "stopped serving")
		} else if err != nil {
			return c.fail(err)
		} else {
			fmt.Fprintln(c.stderr, "the UI has fetched the trace")
		}
		return exitOK
	}
}
