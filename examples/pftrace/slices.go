package main

import (
	"cmp"
	"container/heap"
	"context"
	"flag"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"

	"github.com/phasetrace/phasetrace/perfetto/check"
)

// sliceRow is a slice as slices prints it.
type sliceRow struct {
	TS  int64 `json:"ts"`
	Dur int64 `json:"dur"` // -1: never ended
	// Pid is the process the slice's track belongs to (nil: none).
	Pid      *int32  `json:"pid,omitempty"`
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
	args             []argMatch
	sort             string
	top              int
}

// argMatch is an -arg KEY=VALUE: a slice has an argument named KEY (a
// dictionary's entry as DICT.KEY) whose value prints as VALUE, as slices
// prints it (inv=42, ok=true, seg={on=200 off=100}), a string also
// unquoted (hid=9f3c as well as hid="9f3c").
type argMatch struct {
	key   string
	path  []string // key cut at its dots
	value string
}

// parseArgMatch parses KEY=VALUE.
func parseArgMatch(s string) (argMatch, error) {
	key, value, ok := strings.Cut(s, "=")
	if !ok || key == "" {
		return argMatch{}, fmt.Errorf("-arg %q: want KEY=VALUE", s)
	}
	return argMatch{key: key, path: strings.Split(key, "."), value: value}, nil
}

// matches reports whether args hold the argument m asks for.
func (m argMatch) matches(args []check.Arg) bool {
	return matchPath(args, m.key, m.value) || len(m.path) > 1 && matchNested(args, m.path, m.value)
}

// matchPath reports whether args hold an argument named key whose value
// prints as value.
func matchPath(args []check.Arg, key, value string) bool {
	for _, a := range args {
		if a.Name == key && printsAs(a.Value, value) {
			return true
		}
	}
	return false
}

// matchNested follows path through dictionaries.
func matchNested(args []check.Arg, path []string, value string) bool {
	if len(path) == 1 {
		return matchPath(args, path[0], value)
	}
	for _, a := range args {
		if d, ok := a.Value.([]check.Arg); ok && a.Name == path[0] && matchNested(d, path[1:], value) {
			return true
		}
	}
	return false
}

// printsAs reports whether v prints as s, a string also unquoted.
func printsAs(v any, s string) bool {
	if str, ok := v.(string); ok && str == s {
		return true
	}
	return check.FormatValue(v) == s
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

// filtered reports whether f asks for less than every slice.
func (f *filter) filtered() bool {
	return f.name != "" || f.track != "" || f.from != minInt64 || f.to != maxInt64 || f.minDur > 0 || len(f.args) > 0
}

// nameMatches reports whether -name matches s's name or its full_name
// argument: phasetrace labels a slice by the last word of its dotted name
// and keeps the whole name there, so -name graph_build and -name
// 'chip.run.*' both find chip.run.runner_run.device_wall.graph_build.
func (f *filter) nameMatches(s *check.Slice) bool {
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

// keep reports whether s on a track named track is selected.
func (f *filter) keep(s *check.Slice, track string) bool {
	if !f.nameMatches(s) {
		return false
	}
	if ok, _ := match(f.track, track); !ok {
		return false
	}
	if s.TS > f.to || s.Dur >= 0 && s.TS+s.Dur < f.from {
		return false
	}
	if s.Dur >= 0 && s.Dur < f.minDur {
		return false
	}
	for _, m := range f.args {
		if !m.matches(s.Args) {
			return false
		}
	}
	return true
}

// argsOn keeps the arguments of the slices on the tracks f may select.
func (f *filter) argsOn(tr *check.Track) bool {
	if tr == nil {
		return true
	}
	ok, _ := match(f.track, tr.Name)
	return ok
}

func slicesFlags(c *command, fs *flag.FlagSet) func(context.Context, []string) int {
	f := &filter{}
	fs.StringVar(&f.name, "name", "", "only slices whose name or full_name argument matches the `glob` (path.Match syntax; * and ? match / too; default: every slice)")
	fs.StringVar(&f.track, "track", "", "only slices on tracks whose name matches the `glob` (path.Match syntax; * and ? match / too; default: every track)")
	fs.Int64Var(&f.from, "from", minInt64, "only slices that end at or after `ns` (trace time)")
	fs.Int64Var(&f.to, "to", maxInt64, "only slices that start at or before `ns` (trace time)")
	fs.Int64Var(&f.minDur, "min-dur", 0, "only slices that last at least `ns`")
	fs.Func("arg", "only slices with an argument `KEY=VALUE`, the value as printed (inv=42, hid=9f3c; DICT.KEY for a dictionary's entry); repeatable, all must match", func(s string) error {
		m, err := parseArgMatch(s)
		if err == nil {
			f.args = append(f.args, m)
		}
		return err
	})
	fs.StringVar(&f.sort, "sort", "ts", "order by `key`: dur (longest first), ts or name")
	fs.IntVar(&f.top, "top", 0, "print the first `N` slices only, holding no more than N in memory (0: all, every one selected held)")
	asJSON := fs.Bool("json", false, "write the slices as a JSON array")
	return func(_ context.Context, files []string) int {
		if err := f.check(); err != nil {
			return c.usage("slices", err)
		}
		sel := newSelection(f)
		_, err := c.scan(files[0], []check.Option{check.WithArgs(f.argsOn)}, func(rec *check.Record, tr *check.Trace) error {
			if rec.Kind == check.KindSlice {
				sel.add(rec, tr.Tracks)
			}
			return nil
		})
		if err != nil {
			return c.fail(err)
		}
		rows := sel.rows()
		if *asJSON {
			err = writeJSON(c.stdout, rows)
		} else {
			err = writeSlices(c.stdout, rows)
		}
		if err != nil {
			return c.fail(err)
		}
		switch {
		case sel.seen == 0:
			fmt.Fprintf(c.stderr, "pftrace slices: %s holds no slice\n", files[0])
		case len(rows) == 0 && f.filtered():
			// Like grep: nothing selected is said, and exits 1.
			fmt.Fprintf(c.stderr, "pftrace slices: none of the %d slices of %s matches the filters\n", sel.seen, files[0])
			return exitFail
		}
		return exitOK
	}
}

const (
	minInt64 = -1 << 63
	maxInt64 = 1<<63 - 1
)

// selection is the slices a filter selects, in the filter's order: with
// -top N the first N only, in a heap whose root is the last of them, so
// that it holds N rows whatever the trace's length; without, every row
// selected, sorted at the end. A slice comes with its index in the trace's
// slices (by start, ties in file order), which orders equal keys.
type selection struct {
	f      *filter
	tracks map[uint64]trackInfo
	ranked []rankedRow
	seen   int // slices in the trace
}

// trackInfo is what a row says of its track: its name and its process.
type trackInfo struct {
	name string
	pid  *int32
}

type rankedRow struct {
	index int
	row   sliceRow
}

func newSelection(f *filter) *selection { return &selection{f: f} }

// add selects rec's slice when the filter does.
func (s *selection) add(rec *check.Record, tracks []check.Track) {
	if s.tracks == nil {
		s.tracks = trackInfos(tracks)
	}
	s.seen++
	sl := &rec.Slice
	tr := s.tracks[sl.Track]
	if !s.f.keep(sl, tr.name) {
		return
	}
	r := rankedRow{rec.Index, sliceRow{TS: sl.TS, Dur: sl.Dur, Pid: tr.pid, Track: tr.name, Name: sl.Name, Category: sl.Category, Depth: sl.Depth, Instant: sl.Instant, Args: argList(sl.Args)}}
	switch {
	case s.f.top == 0:
		s.ranked = append(s.ranked, r)
	case len(s.ranked) < s.f.top:
		heap.Push(s, r)
	case s.before(r, s.ranked[0]):
		s.ranked[0] = r
		heap.Fix(s, 0)
	}
}

// trackInfos returns what rows say of each track: its name and the pid of
// the nearest thread or process track up its parents (a thread's own
// pid), where a track's slices show in the UI.
func trackInfos(tracks []check.Track) map[uint64]trackInfo {
	index := make(map[uint64]int, len(tracks))
	for i, t := range tracks {
		index[t.UUID] = i
	}
	infos := make(map[uint64]trackInfo, len(tracks))
	for _, t := range tracks {
		info := trackInfo{name: t.Name}
		for u, hops := t, 0; hops <= len(tracks); hops++ {
			if u.Kind == "thread" || u.Kind == "process" {
				info.pid = &u.Pid
				break
			}
			j, ok := index[u.Parent]
			if !ok {
				break
			}
			u = tracks[j]
		}
		infos[t.UUID] = info
	}
	return infos
}

// rows returns the rows selected, in order.
func (s *selection) rows() []sliceRow {
	slices.SortFunc(s.ranked, func(a, b rankedRow) int {
		switch {
		case s.before(a, b):
			return -1
		case s.before(b, a):
			return 1
		}
		return 0
	})
	rows := make([]sliceRow, len(s.ranked))
	for i, r := range s.ranked {
		rows[i] = r.row
	}
	return rows
}

// before reports whether a comes before b in the order asked: by start
// (the trace's order), longest first, or by name, equal keys in the
// trace's order.
func (s *selection) before(a, b rankedRow) bool {
	var c int
	switch s.f.sort {
	case "dur":
		c = cmp.Compare(sortDur(b.row), sortDur(a.row))
	case "name":
		c = cmp.Compare(a.row.Name, b.row.Name)
	}
	return cmp.Or(c, cmp.Compare(a.index, b.index)) < 0
}

// sortDur is a row's duration for -sort dur: a slice never ended lasts
// longest.
func sortDur(r sliceRow) int64 {
	if r.Dur < 0 {
		return maxInt64
	}
	return r.Dur
}

// The heap of -top: the root is the row that comes last.
func (s *selection) Len() int           { return len(s.ranked) }
func (s *selection) Less(i, j int) bool { return s.before(s.ranked[j], s.ranked[i]) }
func (s *selection) Swap(i, j int)      { s.ranked[i], s.ranked[j] = s.ranked[j], s.ranked[i] }
func (s *selection) Push(x any)         { s.ranked = append(s.ranked, x.(rankedRow)) }
func (s *selection) Pop() any {
	x := s.ranked[len(s.ranked)-1]
	s.ranked = s.ranked[:len(s.ranked)-1]
	return x
}

func writeSlices(w io.Writer, rows []sliceRow) error {
	t := table(w)
	fmt.Fprintln(t, "ts\tdur\tpid\ttrack\tname\targs")
	for _, r := range rows {
		dur := fmt.Sprint(r.Dur)
		switch {
		case r.Instant:
			dur = "instant"
		case r.Dur < 0:
			dur = "unended"
		}
		pid := "-"
		if r.Pid != nil {
			pid = fmt.Sprint(*r.Pid)
		}
		fmt.Fprintf(t, "%d\t%s\t%s\t%s\t%s\t%s\n", r.TS, dur, pid, r.Track, r.Name, r.Args)
	}
	return t.Flush()
}
