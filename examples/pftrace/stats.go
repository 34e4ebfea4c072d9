package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/phasetrace/phasetrace"
	"github.com/phasetrace/phasetrace/perfetto/check"
)

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
		var tl *tally
		var parts partsFound
		tr, err := c.scan(files[0], []check.Option{check.WithArgs(mayBeParts)}, func(rec *check.Record, tr *check.Trace) error {
			if rec.Kind == check.KindProblem {
				return nil
			}
			if tl == nil {
				tl = newTally(tr.Tracks)
			}
			tl.add(rec)
			if rec.Kind == check.KindSlice {
				parts.add(rec, tl)
			}
			return nil
		})
		if err != nil {
			return c.fail(err)
		}
		if tl == nil { // no slice, flow or counter
			tl = newTally(tr.Tracks)
		}
		st := tl.st
		st.Parts = parts.list(files[0])
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

// tally counts a trace's slices, instants, flows and counter values per
// track and per process as the records come.
type tally struct {
	st     stats
	tracks []check.Track
	index  map[uint64]int // uuid → index in tracks and st.Tracks
	owner  []int          // the process of each track (index in st.Processes), -1 when none
}

// newTally starts the counts of a trace with the given tracks: a track
// belongs to the process track up its parents, or, a thread, to the
// process of its pid.
func newTally(tracks []check.Track) *tally {
	tl := &tally{
		st:     stats{Total: counts{Tracks: len(tracks)}, Processes: []processStats{}, Tracks: []trackStats{}},
		tracks: tracks,
		index:  map[uint64]int{},
		owner:  make([]int, len(tracks)),
	}
	st := &tl.st
	procIndex := map[uint64]int{}
	for i, t := range tracks {
		tl.index[t.UUID] = i
		st.Tracks = append(st.Tracks, trackStats{UUID: t.UUID, Kind: t.Kind, Name: t.Name, counts: counts{Tracks: 1}})
		if t.Kind == "process" {
			procIndex[t.UUID] = len(st.Processes)
			st.Processes = append(st.Processes, processStats{Pid: t.Pid, Name: t.Name})
		}
	}
	pidProc := map[int32]int{}
	for _, t := range tracks {
		if t.Kind == "process" {
			pidProc[t.Pid] = procIndex[t.UUID]
		}
	}
	for i, t := range tracks {
		tl.owner[i] = -1
		for hops := 0; hops <= len(tracks); hops++ {
			if p, ok := procIndex[t.UUID]; ok {
				tl.owner[i] = p
				break
			}
			if p, ok := pidProc[t.Pid]; ok && t.Kind == "thread" {
				tl.owner[i] = p
				break
			}
			j, ok := tl.index[t.Parent]
			if !ok {
				break
			}
			t = tracks[j]
		}
		if p := tl.owner[i]; p >= 0 {
			st.Tracks[i].Process = st.Processes[p].Name
			st.Processes[p].Tracks++
		}
	}
	return tl
}

// add counts a record: a slice or an instant on its track and process, a
// flow once per track and once per process it touches, a counter value.
func (tl *tally) add(rec *check.Record) {
	st := &tl.st
	switch rec.Kind {
	case check.KindSlice:
		if rec.Slice.Instant {
			st.Total.Instants++
			tl.count(rec.Slice.Track, func(c *counts) { c.Instants++ })
		} else {
			st.Total.Slices++
			tl.count(rec.Slice.Track, func(c *counts) { c.Slices++ })
		}
	case check.KindFlow:
		st.Total.Flows++
		from, okFrom := tl.index[rec.FromTrack]
		to, okTo := tl.index[rec.ToTrack]
		if okFrom {
			tl.countFlow(from, -1)
		}
		if okTo && (!okFrom || to != from) {
			owner := -1
			if okFrom {
				owner = tl.owner[from]
			}
			tl.countFlow(to, owner)
		}
	case check.KindCounter:
		st.Total.Counters++
		tl.count(rec.Counter.Track, func(c *counts) { c.Counters++ })
	}
}

// count applies f to the counts of a track and of its process.
func (tl *tally) count(track uint64, f func(*counts)) {
	if i, ok := tl.index[track]; ok {
		f(&tl.st.Tracks[i].counts)
		if p := tl.owner[i]; p >= 0 {
			f(&tl.st.Processes[p].counts)
		}
	}
}

// countFlow counts a flow on track i, and on its process unless that is
// counted (the process of the flow's other track).
func (tl *tally) countFlow(i, counted int) {
	tl.st.Tracks[i].Flows++
	if p := tl.owner[i]; p >= 0 && p != counted {
		tl.st.Processes[p].Flows++
	}
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

// isPartsTrack reports whether tr is a split trace's parts track
// (phasetrace.PartsTrack) or one of its overflow lanes: a top-level track
// of that name.
func isPartsTrack(tr *check.Track) bool {
	return tr.Kind == "track" && tr.Parent == 0 && (tr.Name == phasetrace.PartsTrack || strings.HasPrefix(tr.Name, phasetrace.PartsTrack+" (overflow"))
}

// mayBeParts keeps the arguments of the slices that may list parts: on a
// parts track, or on a track not described yet.
func mayBeParts(tr *check.Track) bool { return tr == nil || isPartsTrack(tr) }

// partsFound collects the parts a split trace's overview lists (see
// phasetrace.WithSplit): the slices with an integer part argument on its
// parts tracks.
type partsFound []partFound

type partFound struct {
	index int // in the trace's slices
	p     partStats
}

// add keeps the slice of rec when it names a part.
func (pf *partsFound) add(rec *check.Record, tl *tally) {
	s := &rec.Slice
	if s.Instant {
		return
	}
	i, ok := tl.index[s.Track]
	if !ok || !isPartsTrack(&tl.tracks[i]) {
		return
	}
	n, ok := intArg(s.Args, "part")
	if !ok {
		return
	}
	p := partStats{Part: int(n), Name: s.Name, Start: s.TS, End: s.TS + s.Dur}
	if s.Dur < 0 { // never ended
		p.End = s.TS
	}
	p.Slices, _ = intArg(s.Args, "slices")
	p.Invocations, _ = intArg(s.Args, "invocations")
	*pf = append(*pf, partFound{rec.Index, p})
}

// list returns the parts, by part number (then in the order of the
// trace's slices), each looked for beside file, the overview; nil when
// there are none.
func (pf partsFound) list(file string) []partStats {
	slices.SortFunc(pf, func(a, b partFound) int {
		return cmp.Or(cmp.Compare(a.p.Part, b.p.Part), cmp.Compare(a.index, b.index))
	})
	var parts []partStats
	for _, f := range pf {
		p := f.p
		p.Path = filepath.Join(filepath.Dir(file), filepath.Base(p.Name))
		fi, err := os.Stat(p.Path)
		p.Exists = err == nil && fi.Mode().IsRegular()
		parts = append(parts, p)
	}
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
