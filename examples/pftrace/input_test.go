package main

import (
	"bytes"
	"compress/zlib"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/phasetrace/phasetrace/perfetto"
	pb "github.com/phasetrace/phasetrace/proto"
)

// slices lists every slice by default, those on tracks whose names hold
// "/" too; a glob's * matches "/"; filters that select nothing say so and
// exit 1.
func TestSlicesDefaultEverySlice(t *testing.T) {
	var buf bytes.Buffer
	w := perfetto.NewWriter(&buf)
	node := w.Process(perfetto.ProcessSpec{Pid: 10, Name: "node"})
	facade := w.Track(node, perfetto.TrackSpec{Name: "orchestrator / facade"})
	plain := w.Track(node, perfetto.TrackSpec{Name: "scheduler"})
	w.Slice(facade, perfetto.Slice{Name: "l3/submit", TS: 1000, Dur: 100})
	w.Slice(plain, perfetto.Slice{Name: "dispatch", TS: 2000, Dur: 100})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	trace := filepath.Join(t.TempDir(), "t.pftrace")
	os.WriteFile(trace, buf.Bytes(), 0o644)
	var nb bytes.Buffer
	nw := perfetto.NewWriter(&nb)
	nw.Process(perfetto.ProcessSpec{Pid: 10, Name: "node"})
	if err := nw.Close(); err != nil {
		t.Fatal(err)
	}
	none := filepath.Join(t.TempDir(), "none.pftrace")
	os.WriteFile(none, nb.Bytes(), 0o644)
	for _, c := range []struct {
		args   []string
		code   int
		rows   []string // names listed
		stderr string
	}{
		{[]string{"slices", trace}, exitOK, []string{"l3/submit", "dispatch"}, ""},
		{[]string{"slices", "-track", "orchestrator / *", trace}, exitOK, []string{"l3/submit"}, ""},
		{[]string{"slices", "-track", "*", trace}, exitOK, []string{"l3/submit", "dispatch"}, ""},
		{[]string{"slices", "-name", "l3*", trace}, exitOK, []string{"l3/submit"}, ""},
		{[]string{"slices", "-track", "nothing*", trace}, exitFail, nil, "none of the 2 slices of " + trace + " matches the filters"},
		{[]string{"slices", "-min-dur", "1000", "-json", trace}, exitFail, nil, "matches the filters"},
		{[]string{"slices", "-track", "x", none}, exitOK, nil, none + " holds no slice"},
	} {
		code, stdout, stderr := runArgs(c.args...)
		var rows []string
		for _, n := range []string{"l3/submit", "dispatch"} {
			if strings.Contains(stdout, n) {
				rows = append(rows, n)
			}
		}
		if code != c.code || strings.Join(rows, ",") != strings.Join(c.rows, ",") || !strings.Contains(stderr, c.stderr) || c.stderr == "" && stderr != "" {
			t.Errorf("%q: exit %d, rows %q, stderr %q; want exit %d, %q, %q", c.args, code, rows, stderr, c.code, c.rows, c.stderr)
		}
	}
}

// check (and every subcommand) refuses an empty file: it holds no packet,
// so it is not a trace.
func TestEmptyFileIsNoTrace(t *testing.T) {
	empty := filepath.Join(t.TempDir(), "empty.pftrace")
	os.WriteFile(empty, nil, 0o644)
	for _, sub := range []string{"check", "stats", "slices", "dump"} {
		code, stdout, stderr := runArgs(sub, empty)
		if code != exitFail || strings.Contains(stdout, "ok") || !strings.Contains(stdout+stderr, "not a trace: it holds no packet") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", sub, code, stdout, stderr)
		}
	}
}

// A compressed bundle that inflates past the 256 MiB a packet may hold
// is an error, not a trace read up to the cut.
func TestCheckInflatePastLimit(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("inflates 256 MiB")
	}
	var z bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&z, zlib.BestSpeed)
	// A valid packet first, so that what is read before the cut parses.
	pkt, _ := proto.Marshal(&pb.Trace{Packet: []*pb.TracePacket{{Timestamp: proto.Uint64(1)}}})
	zw.Write(pkt)
	io.CopyN(zw, zeros{}, 256<<20) // past the limit
	zw.Close()
	b, err := proto.Marshal(&pb.Trace{Packet: []*pb.TracePacket{{Data: &pb.TracePacket_CompressedPackets{CompressedPackets: z.Bytes()}}}})
	if err != nil {
		t.Fatal(err)
	}
	bomb := filepath.Join(t.TempDir(), "bomb.pftrace")
	os.WriteFile(bomb, b, 0o644)
	code, stdout, stderr := runArgs("check", bomb)
	if code != exitFail || strings.Contains(stdout, ": ok") || !strings.Contains(stdout, "inflate past 268435456 bytes") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
