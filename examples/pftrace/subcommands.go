package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/phasetrace/phasetrace"
	"github.com/phasetrace/phasetrace/perfetto/check"
	"github.com/phasetrace/phasetrace/perfetto/open"
)

// read reads the trace in the file.
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
			tr, err := read(f)
			switch {
			case err != nil:
				code = exitFail
				r.Error = err.Error()
				if !*asJSON {
					fmt.Fprintln(c.stdout, "pftrace:", err)
				}
			case len(tr.Problems) > 0:
				code = exitFail
				for _, p := range tr.Problems {
					r.Problems = append(r.Problems, problemJSON{p.Name, p.Packet, p.Detail})
					if !*asJSON {
						fmt.Fprintf(c.stdout, "%s: %s\n", f, p)
					}
				}
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

// counts are what stats counts.
type counts struct {
	Tracks   int `json:"tracks"`
	Slices   int `json:"slices"`
	Instants int `json:"instants"`
	Flows    int `json:"flows"`
	Counters int `json:"counters"`
}

func statsFlags(c *command, fs *flag.FlagSet) func(context.Context, []string) int {
	asJSON := fs.Bool("json", false, "write the counts (and the parts of a split trace's overview) as a JSON object")
	return func(_ context.Context, files []string) int {
		tr, err := read(files[0])
		if err != nil {
			return c.fail(err)
		}
		st := newStats(tr)
		st.Parts = findParts(tr, files[0])
		if *asJSON {
			err = writeJSON(c.stdout, st)
		} else {
			err = st.write(c.stdout, files[0])
		}
		if err != nil {
			return c.fail(err)
		}
		return exitOK
	}
}

type trackStats struct {
	UUID    uint64 `json:"uuid"`
	Kind    string `json:"kind"`
	Name    string `json:"name"`
	Process string `json:"process,omitempty"`
	counts
}

type processStats struct {
	Pid  int32  `json:"pid"`
	Name string `json:"name"`
	counts
}

type stats struct {
	Total     counts         `json:"total"`
	Processes []processStats `json:"processes"`
	Tracks    []trackStats   `json:"tracks"`
	// Parts are the parts a split trace's overview lists (nil for any
	// other trace).
	Parts []partStats `json:"parts,omitempty"`
}

// newStats counts tr's events per track and per process.
func newStats(tr *check.Trace) stats {
	st := stats{Total: counts{Tracks: len(tr.Tracks), Flows: len(tr.Flows), Counters: len(tr.Counters)}, Processes: []processStats{}, Tracks: []trackStats{}}
	index := map[uint64]int{}
	procIndex := map[uint64]int{}
	owner := make([]int, len(tr.Tracks)) // the process of each track, -1 when none
	for i, t := range tr.Tracks {
		index[t.UUID] = i
		st.Tracks = append(st.Tracks, trackStats{UUID: t.UUID, Kind: t.Kind, Name: t.Name, counts: counts{Tracks: 1}})
		if t.Kind == "process" {
			procIndex[t.UUID] = len(st.Processes)
			st.Processes = append(st.Processes, processStats{Pid: t.Pid, Name: t.Name})
		}
	}
	pidProc := map[int32]int{}
	for _, t := range tr.Tracks {
		if t.Kind == "process" {
			pidProc[t.Pid] = procIndex[t.UUID]
		}
	}
	for i, t := range tr.Tracks {
		owner[i] = -1
		for hops := 0; hops <= len(tr.Tracks); hops++ {
			if p, ok := procIndex[t.UUID]; ok {
				owner[i] = p
				break
			}
			if p, ok := pidProc[t.Pid]; ok && t.Kind == "thread" {
				owner[i] = p
				break
			}
			j, ok := index[t.Parent]
			if !ok {
				break
			}
			t = tr.Tracks[j]
		}
		if p := owner[i]; p >= 0 {
			st.Tracks[i].Process = st.Processes[p].Name
			st.Processes[p].Tracks++
		}
	}
	add := func(track uint64, f func(*counts)) {
		if i, ok := index[track]; ok {
			f(&st.Tracks[i].counts)
			if p := owner[i]; p >= 0 {
				f(&st.Processes[p].counts)
			}
		}
	}
	for _, s := range tr.Slices {
		if s.Instant {
			st.Total.Instants++
			add(s.Track, func(c *counts) { c.Instants++ })
		} else {
			st.Total.Slices++
			add(s.Track, func(c *counts) { c.Slices++ })
		}
	}
	for _, f := range tr.Flows { // once per track and once per process it touches
		seenTrack, seenProc := map[int]bool{}, map[int]bool{}
		for _, u := range []uint64{tr.Slices[f.From].Track, tr.Slices[f.To].Track} {
			i, ok := index[u]
			if !ok || seenTrack[i] {
				continue
			}
			seenTrack[i] = true
			st.Tracks[i].Flows++
			if p := owner[i]; p >= 0 && !seenProc[p] {
				seenProc[p] = true
				st.Processes[p].Flows++
			}
		}
	}
	for _, ct := range tr.Counters {
		add(ct.Track, func(c *counts) { c.Counters++ })
	}
	return st
}

func (st stats) write(w io.Writer, file string) error {
	section := func(head string, rows func(row func(name string, c counts))) error {
		t := table(w)
		fmt.Fprintf(t, "%s\ttracks\tslices\tinstants\tflows\tcounters\n", head)
		rows(func(name string, c counts) {
			fmt.Fprintf(t, "%s\t%d\t%d\t%d\t%d\t%d\n", name, c.Tracks, c.Slices, c.Instants, c.Flows, c.Counters)
		})
		return t.Flush()
	}
	err := section(file, func(row func(string, counts)) { row("total", st.Total) })
	fmt.Fprintln(w)
	if err == nil {
		err = section("process", func(row func(string, counts)) {
			for _, p := range st.Processes {
				row(fmt.Sprintf("%d %q", p.Pid, p.Name), p.counts)
			}
		})
	}
	fmt.Fprintln(w)
	if err == nil {
		err = section("track", func(row func(string, counts)) {
			for _, tr := range st.Tracks {
				name := fmt.Sprintf("%s %q", tr.Kind, tr.Name)
				if tr.Process != "" && tr.Kind != "process" {
					name += fmt.Sprintf(" in %q", tr.Process)
				}
				row(name, tr.counts)
			}
		})
	}
	if err == nil && st.Parts != nil {
		fmt.Fprintln(w)
		err = writeParts(w, st.Parts)
	}
	return err
}

// partStats is one part of a split trace, as its overview lists it.
type partStats struct {
	Part        int    `json:"part"` // from 1
	Name        string `json:"name"`
	Slices      int64  `json:"slices"`
	Invocations int64  `json:"invocations"`
	Start       int64  `json:"start_ns"`
	End         int64  `json:"end_ns"`
	// Path is where the part is: beside the overview, under its name.
	Path   string `json:"path"`
	Exists bool   `json:"exists"`
}

// findParts returns the parts tr lists when it is a split trace's
// overview (phasetrace.WithSplit): the slices with an integer part
// argument on the top-level track named phasetrace.PartsTrack or its
// overflow lanes, sorted by part number; nil when there are none. Each
// part's file is looked for beside file, the overview.
func findParts(tr *check.Trace, file string) []partStats {
	onParts := map[uint64]bool{}
	for _, t := range tr.Tracks {
		if t.Kind == "track" && t.Parent == 0 && (t.Name == phasetrace.PartsTrack || strings.HasPrefix(t.Name, phasetrace.PartsTrack+" (overflow")) {
			onParts[t.UUID] = true
		}
	}
	var parts []partStats
	for _, s := range tr.Slices {
		if !onParts[s.Track] || s.Instant {
			continue
		}
		n, ok := intArg(s.Args, "part")
		if !ok {
			continue
		}
		p := partStats{Part: int(n), Name: s.Name, Start: s.TS, End: s.TS + s.Dur}
		if s.Dur < 0 { // never ended
			p.End = s.TS
		}
		p.Slices, _ = intArg(s.Args, "slices")
		p.Invocations, _ = intArg(s.Args, "invocations")
		p.Path = filepath.Join(filepath.Dir(file), filepath.Base(s.Name))
		fi, err := os.Stat(p.Path)
		p.Exists = err == nil && fi.Mode().IsRegular()
		parts = append(parts, p)
	}
	slices.SortStableFunc(parts, func(a, b partStats) int { return cmp.Compare(a.Part, b.Part) })
	return parts
}

// intArg returns the integer argument named name, when there is one.
func intArg(args []check.Arg, name string) (int64, bool) {
	for _, a := range args {
		if a.Name != name {
			continue
		}
		switch v := a.Value.(type) {
		case int64:
			return v, true
		case uint64:
			if v <= maxInt64 {
				return int64(v), true
			}
		}
		return 0, false
	}
	return 0, false
}

// writeParts writes the parts table, and how to open a part.
func writeParts(w io.Writer, parts []partStats) error {
	t := table(w)
	fmt.Fprintln(t, "part\tname\tslices\tinvocations\tstart_ns\tend_ns\tfile")
	for _, p := range parts {
		file := "missing"
		if p.Exists {
			file = "ok"
		}
		fmt.Fprintf(t, "%d\t%s\t%d\t%d\t%d\t%d\t%s\n", p.Part, p.Name, p.Slices, p.Invocations, p.Start, p.End, file)
	}
	if err := t.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "\nopen a part: pftrace open %s\n", parts[0].Path)
	return err
}

// sliceRow is a slice as slices prints it.
type sliceRow struct {
	TS       int64   `json:"ts"`
	Dur      int64   `json:"dur"` // -1: never ended
	Track    string  `json:"track"`
	Name     string  `json:"name"`
	Category string  `json:"category,omitempty"`
	Depth    int     `json:"depth"`
	Instant  bool    `json:"instant,omitempty"`
	Args     argList `json:"args"`
}

// filter is what slices selects.
type filter struct {
	name, track      string
	from, to, minDur int64
	sort             string
	top              int
}

func (f *filter) check() error {
	for _, g := range []struct{ flag, glob string }{{"-name", f.name}, {"-track", f.track}} {
		if _, err := match(g.glob, ""); err != nil {
			return fmt.Errorf("%s %q: %w", g.flag, g.glob, err)
		}
	}
	if f.sort != "dur" && f.sort != "ts" && f.sort != "name" {
		return fmt.Errorf("-sort %q: want dur, ts or name", f.sort)
	}
	if f.top < 0 {
		return fmt.Errorf("-top %d: want 0 (all) or more", f.top)
	}
	if f.from > f.to {
		return fmt.Errorf("-from %d is after -to %d", f.from, f.to)
	}
	return nil
}

// match reports whether name matches glob in path.Match syntax, where *
// and ? match "/" too: names are not paths ("orchestrator / facade"). An
// empty glob matches every name.
func match(glob, name string) (bool, error) {
	if glob == "" {
		return true, nil
	}
	const slash = "\x00" // a byte no track or slice name holds, and no separator
	return path.Match(strings.ReplaceAll(glob, "/", slash), strings.ReplaceAll(name, "/", slash))
}

// nameMatches reports whether -name matches s's name or its full_name
// argument: phasetrace labels a slice by the last word of its dotted name
// and keeps the whole name there, so -name graph_build and -name
// 'chip.run.*' both find chip.run.runner_run.device_wall.graph_build.
func (f *filter) nameMatches(s check.Slice) bool {
	if ok, _ := match(f.name, s.Name); ok {
		return true
	}
	for _, a := range s.Args {
		if full, isString := a.Value.(string); a.Name == "full_name" && isString {
			ok, _ := match(f.name, full)
			return ok
		}
	}
	return false
}

// filtered reports whether f asks for less than every slice.
func (f *filter) filtered() bool {
	return f.name != "" || f.track != "" || f.from != minInt64 || f.to != maxInt64 || f.minDur > 0
}

// keep reports whether s on a track named track is selected.
func (f *filter) keep(s check.Slice, track string) bool {
	if !f.nameMatches(s) {
		return false
	}
	if ok, _ := match(f.track, track); !ok {
		return false
	}
	if s.TS > f.to || s.Dur >= 0 && s.TS+s.Dur < f.from {
		return false
	}
	return s.Dur < 0 || s.Dur >= f.minDur
}

func slicesFlags(c *command, fs *flag.FlagSet) func(context.Context, []string) int {
	f := &filter{}
	fs.StringVar(&f.name, "name", "", "only slices whose name or full_name argument matches the `glob` (path.Match syntax; * and ? match / too; default: every slice)")
	fs.StringVar(&f.track, "track", "", "only slices on tracks whose name matches the `glob` (path.Match syntax; * and ? match / too; default: every track)")
	fs.Int64Var(&f.from, "from", minInt64, "only slices that end at or after `ns` (trace time)")
	fs.Int64Var(&f.to, "to", maxInt64, "only slices that start at or before `ns` (trace time)")
	fs.Int64Var(&f.minDur, "min-dur", 0, "only slices that last at least `ns`")
	fs.StringVar(&f.sort, "sort", "ts", "order by `key`: dur (longest first), ts or name")
	fs.IntVar(&f.top, "top", 0, "print the first `N` slices only (0: all)")
	asJSON := fs.Bool("json", false, "write the slices as a JSON array")
	return func(_ context.Context, files []string) int {
		if err := f.check(); err != nil {
			return c.usage("slices", err)
		}
		tr, err := read(files[0])
		if err != nil {
			return c.fail(err)
		}
		rows := selectSlices(tr, f)
		if *asJSON {
			err = writeJSON(c.stdout, rows)
		} else {
			err = writeSlices(c.stdout, rows)
		}
		if err != nil {
			return c.fail(err)
		}
		switch {
		case len(tr.Slices) == 0:
			fmt.Fprintf(c.stderr, "pftrace slices: %s holds no slice\n", files[0])
		case len(rows) == 0 && f.filtered():
			// Like grep: nothing selected is said, and exits 1.
			fmt.Fprintf(c.stderr, "pftrace slices: none of the %d slices of %s matches the filters\n", len(tr.Slices), files[0])
			return exitFail
		}
		return exitOK
	}
}

const (
	minInt64 = -1 << 63
	maxInt64 = 1<<63 - 1
)

// selectSlices is the slices of tr that f selects, in f's order.
func selectSlices(tr *check.Trace, f *filter) []sliceRow {
	names := map[uint64]string{}
	for _, t := range tr.Tracks {
		names[t.UUID] = t.Name
	}
	rows := []sliceRow{}
	for _, s := range tr.Slices {
		track := names[s.Track]
		if !f.keep(s, track) {
			continue
		}
		rows = append(rows, sliceRow{TS: s.TS, Dur: s.Dur, Track: track, Name: s.Name, Category: s.Category, Depth: s.Depth, Instant: s.Instant, Args: argList(s.Args)})
	}
	// tr.Slices is in ts order already; stable sorts keep it among equals.
	switch f.sort {
	case "dur":
		dur := func(r sliceRow) int64 {
			if r.Dur < 0 {
				return maxInt64
			}
			return r.Dur
		}
		slices.SortStableFunc(rows, func(a, b sliceRow) int { return cmp.Compare(dur(b), dur(a)) })
	case "name":
		slices.SortStableFunc(rows, func(a, b sliceRow) int { return cmp.Compare(a.Name, b.Name) })
	}
	if f.top > 0 && len(rows) > f.top {
		rows = rows[:f.top]
	}
	return rows
}

func writeSlices(w io.Writer, rows []sliceRow) error {
	t := table(w)
	fmt.Fprintln(t, "ts\tdur\ttrack\tname\targs")
	for _, r := range rows {
		dur := fmt.Sprint(r.Dur)
		switch {
		case r.Instant:
			dur = "instant"
		case r.Dur < 0:
			dur = "unended"
		}
		fmt.Fprintf(t, "%d\t%s\t%s\t%s\t%s\n", r.TS, dur, r.Track, r.Name, r.Args)
	}
	return t.Flush()
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
		if _, err := read(files[0]); err != nil {
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
