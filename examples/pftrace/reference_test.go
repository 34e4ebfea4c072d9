package main

import (
	"bytes"
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"

	"github.com/phasetrace/phasetrace"
	"github.com/phasetrace/phasetrace/perfetto"
	"github.com/phasetrace/phasetrace/perfetto/check"
	pb "github.com/phasetrace/phasetrace/proto"
	"github.com/phasetrace/phasetrace/strace/stracetest"
)

// The subcommands as they were when they read the whole trace into memory
// (check.Read): the reference the streaming subcommands must agree with.

// refStats counts tr's events per track and per process.
func refStats(tr *check.Trace) stats {
	st := stats{Total: counts{Tracks: len(tr.Tracks), Flows: len(tr.Flows), Counters: len(tr.Counters)}, Processes: []processStats{}, Tracks: []trackStats{}}
	index := map[uint64]int{}
	procIndex := map[uint64]int{}
	owner := make([]int, len(tr.Tracks))
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
	for _, f := range tr.Flows {
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

// refParts returns the parts tr lists when it is a split trace's overview.
func refParts(tr *check.Trace, file string) []partStats {
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
		if s.Dur < 0 {
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

// refSelect is the slices of tr that f selects, in f's order.
func refSelect(tr *check.Trace, f *filter) []sliceRow {
	infos := trackInfos(tr.Tracks)
	rows := []sliceRow{}
	for _, s := range tr.Slices {
		info := infos[s.Track]
		if !f.keep(&s, info.name) {
			continue
		}
		rows = append(rows, sliceRow{TS: s.TS, Dur: s.Dur, Pid: info.pid, Track: info.name, Name: s.Name, Category: s.Category, Depth: s.Depth, Instant: s.Instant, Args: argList(s.Args)})
	}
	switch f.sort {
	case "dur":
		slices.SortStableFunc(rows, func(a, b sliceRow) int { return cmp.Compare(sortDur(b), sortDur(a)) })
	case "name":
		slices.SortStableFunc(rows, func(a, b sliceRow) int { return cmp.Compare(a.Name, b.Name) })
	}
	if f.top > 0 && len(rows) > f.top {
		rows = rows[:f.top]
	}
	return rows
}

// refOutput is what the subcommand args[0] printed on standard output for
// the trace in file, reading it into memory.
func refOutput(t *testing.T, file string, args []string) string {
	t.Helper()
	tr, err := check.Read(mustOpen(t, file))
	if err != nil {
		t.Fatal(err)
	}
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "")
	f := &filter{}
	fs.StringVar(&f.name, "name", "", "")
	fs.StringVar(&f.track, "track", "", "")
	fs.Int64Var(&f.from, "from", minInt64, "")
	fs.Int64Var(&f.to, "to", maxInt64, "")
	fs.Int64Var(&f.minDur, "min-dur", 0, "")
	fs.StringVar(&f.sort, "sort", "ts", "")
	fs.IntVar(&f.top, "top", 0, "")
	fs.Func("arg", "", func(s string) error {
		m, err := parseArgMatch(s)
		f.args = append(f.args, m)
		return err
	})
	if err := fs.Parse(args[1:]); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	switch args[0] {
	case "check":
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
		r := fileJSON{File: file, Problems: []problemJSON{}}
		for _, p := range tr.Problems {
			r.Problems = append(r.Problems, problemJSON{p.Name, p.Packet, p.Detail})
			if !*asJSON {
				fmt.Fprintf(&b, "%s: %s\n", file, p)
			}
		}
		switch {
		case *asJSON:
			err = writeJSON(&b, []fileJSON{r})
		case len(tr.Problems) == 0:
			fmt.Fprintf(&b, "%s: ok\n", file)
		}
	case "stats":
		st := refStats(tr)
		st.Parts = refParts(tr, file)
		if *asJSON {
			err = writeJSON(&b, st)
		} else {
			err = st.write(&b, file)
		}
	case "slices":
		rows := refSelect(tr, f)
		if *asJSON {
			err = writeJSON(&b, rows)
		} else {
			err = writeSlices(&b, rows)
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func mustOpen(t *testing.T, file string) io.Reader {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.NewReader(b)
}

// writeFile writes b to a file in a test directory and returns its path.
func writeFile(t *testing.T, name string, b []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// convertedLog converts a generated runtime log of about size bytes.
func convertedLog(t *testing.T, size int64) string {
	t.Helper()
	var log, b bytes.Buffer
	if err := stracetest.Generate(&log, stracetest.Realistic(size)); err != nil {
		t.Fatal(err)
	}
	if _, err := phasetrace.Convert(&b, []phasetrace.Input{phasetrace.Bytes("run.log", log.Bytes())}); err != nil {
		t.Fatal(err)
	}
	return writeFile(t, "run.pftrace", b.Bytes())
}

// troubledTrace writes a trace with problems: a slice never ended, an end
// with nothing open, an event on a track never described, a flow never
// terminated, and slices and instants at equal timestamps.
func troubledTrace(t *testing.T) string {
	t.Helper()
	seq := &pb.TracePacket_TrustedPacketSequenceId{TrustedPacketSequenceId: 1}
	desc := func(uuid uint64, name string) *pb.TracePacket {
		return &pb.TracePacket{OptionalTrustedPacketSequenceId: seq, Data: &pb.TracePacket_TrackDescriptor{TrackDescriptor: &pb.TrackDescriptor{
			Uuid: proto.Uint64(uuid), StaticOrDynamicName: &pb.TrackDescriptor_Name{Name: name}}}}
	}
	ev := func(ts uint64, typ pb.TrackEvent_Type, track uint64, name string, flows ...uint64) *pb.TracePacket {
		return &pb.TracePacket{OptionalTrustedPacketSequenceId: seq, Timestamp: proto.Uint64(ts),
			Data: &pb.TracePacket_TrackEvent{TrackEvent: &pb.TrackEvent{Type: typ.Enum(), TrackUuid: proto.Uint64(track),
				NameField: &pb.TrackEvent_Name{Name: name}, FlowIds: flows}}}
	}
	begin, end, instant := pb.TrackEvent_TYPE_SLICE_BEGIN, pb.TrackEvent_TYPE_SLICE_END, pb.TrackEvent_TYPE_INSTANT
	b, err := proto.Marshal(&pb.Trace{Packet: []*pb.TracePacket{
		desc(1, "a"), desc(2, "b"),
		ev(50, begin, 1, "late"), ev(10, begin, 1, "outer", 7), ev(10, instant, 1, "i1"), ev(10, instant, 1, "i2"),
		ev(20, end, 1, ""), ev(30, end, 2, ""), ev(40, instant, 9, "lost"), ev(45, begin, 2, "b1", 7), ev(46, end, 2, ""),
		ev(60, begin, 2, "open"),
	}})
	if err != nil {
		t.Fatal(err)
	}
	return writeFile(t, "troubled.pftrace", b)
}

// The subcommands, streaming, print what they printed reading the whole
// trace into memory, on small, troubled, split and converted traces, with
// the events sorted in memory and in temporary files.
func TestStreamingAgreesWithInMemory(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	overview, _ := writeSplit(t, dir, 100)
	var parts bytes.Buffer
	w := perfetto.NewWriter(&parts)
	pt := w.Track(perfetto.Track{}, perfetto.TrackSpec{Name: phasetrace.PartsTrack})
	w.Slice(pt, perfetto.Slice{Name: "t.part002.pftrace", TS: 100, Dur: 50, Args: []perfetto.Arg{perfetto.Int("part", 2)}})
	w.Slice(pt, perfetto.Slice{Name: "t.part001.pftrace", TS: 120, Dur: 50, Args: []perfetto.Arg{perfetto.Uint("part", 1)}})
	w.Slice(pt, perfetto.Slice{Name: "t.part001b.pftrace", TS: 200, Dur: 50, Args: []perfetto.Arg{perfetto.Int("part", 1)}})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	traces := []string{writeTrace(t), troubledTrace(t), overview, writeFile(t, "parts.pftrace", parts.Bytes()), convertedLog(t, 512<<10)}
	for _, trace := range traces {
		for _, args := range [][]string{
			{"check"}, {"check", "-json"}, {"stats"}, {"stats", "-json"},
			{"slices"}, {"slices", "-json"}, {"slices", "-sort", "dur", "-top", "3"}, {"slices", "-sort", "dur", "-top", "20"},
			{"slices", "-sort", "name", "-top", "5"}, {"slices", "-sort", "name"}, {"slices", "-sort", "dur"}, {"slices", "-top", "1"},
			{"slices", "-name", "chip.run*", "-track", "*", "-from", "1400", "-to", "200000000000", "-min-dur", "500", "-sort", "dur", "-top", "7"},
			{"slices", "-arg", "inv=3", "-json"}, {"slices", "-arg", "depth=0", "-arg", "slot_id=1", "-sort", "dur", "-top", "4"},
			{"slices", "-arg", "part=1"},
		} {
			name := filepath.Base(trace) + " " + strings.Join(args, " ")
			want := refOutput(t, trace, args)
			for _, opts := range [][]check.Option{nil, {check.WithMemoryLimit(2 << 10), check.WithTempDir(t.TempDir())}} {
				var stdout bytes.Buffer
				(&command{stdout: &stdout, stderr: io.Discard, readerOptions: opts}).run(context.Background(), append(args, trace))
				if diff := gocmp.Diff(want, stdout.String()); diff != "" {
					t.Errorf("%s, %d options (-in memory +streaming):\n%s", name, len(opts), diff)
				}
			}
		}
	}
}
