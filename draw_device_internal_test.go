package phasetrace

import (
	"bytes"
	"errors"
	"hash/maphash"
	"io"
	"strings"
	"testing"

	"github.com/phasetrace/phasetrace/internal/firstpass"
	"github.com/phasetrace/phasetrace/internal/held"
	"github.com/phasetrace/phasetrace/internal/repeats"
	"github.com/phasetrace/phasetrace/internal/tracks"
	"github.com/phasetrace/phasetrace/perfetto"
	"github.com/phasetrace/phasetrace/perfetto/check"
	"github.com/phasetrace/phasetrace/strace"
	"github.com/phasetrace/phasetrace/strace/stracetest"
)

// TestDeviceDrawerAlone runs the device stage on its own: a survey of a
// generated log gives the clock anchors, a run collector the runs, and a
// device drawer draws each run's device phases through a slice drawer of its own
// — no converter. Every device slice read back lies within its published
// bound of where the generator truly started it, and the drawer's summary
// counts what it drew.
func TestDeviceDrawerAlone(t *testing.T) {
	for _, cfg := range []stracetest.Config{
		{Seed: 21, Rounds: 20, AnchorEvry: 100_000_000, Pipelined: true},
		{Seed: 22, Rounds: 12}, // no anchors: containment alone
	} {
		log, truth := stracetest.GenerateTruth(cfg)
		scan := firstpass.NewScan()
		if _, err := scan.ScanLog(bytes.NewReader(log), "gen.log", strace.DefaultMaxLine, maphash.MakeSeed(), nil); err != nil {
			t.Fatal(err)
		}
		scan.Decide()

		var out bytes.Buffer
		sum := &Summary{}
		led := newAccount(sum)
		cv := &sliceDrawer{acct: led, flushSlices: 1 << 12, pendingDevice: &pendingDevice{acct: led}}
		cv.arrows = &arrowAccount{acct: led, site: cv}
		w := perfetto.NewWriter(&out, perfetto.WithOverflowFunc(cv.overflowed), perfetto.WithRefusalFunc(cv.refused))
		cv.out = sink{w, tracks.NewTrackSet(w, scan)}
		dv := &deviceDrawer{sliceDrawer: cv, links: &runLinks{}}
		dv.buildPlacer(scan, nil)
		runs := runCollector{maxPending: 64, drawer: runFunc(func(b *invBuf) {
			var root, runner *held.Span
			for i := range b.host {
				switch s := &b.host[i]; {
				case s.Name == strace.SpanRunnerRun:
					runner = s
				case s.Name == strace.SpanRun && s.Depth == 0:
					root = s
				}
			}
			dv.links.next(b.dev)
			dv.run(cv.out, b.key, root, runner, b.dev, nil)
		})}
		r := strace.NewReader(bytes.NewReader(log))
		for {
			rec, err := r.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				continue // the generator's torn records
			}
			if rec.Kind == strace.KindSpan && (rec.Span.IsDevice() || strace.FamilyOf(rec.Span.Name).HasInvocation()) {
				runs.add(repeats.Unshared(&rec.Span), 0, rec.Span.IsDevice(), 0)
			}
		}
		runs.flush()
		if err := cv.out.w.Close(); err != nil {
			t.Fatal(err)
		}
		cv.pendingDevice.commit()
		tr, err := check.ReadBytes(out.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		drawn := 0
		for _, s := range tr.Slices {
			s.Name, _ = sliceArg(s, argFullName).(string)
			if !strings.HasPrefix(s.Name, strace.SpanDeviceWall) || sliceArg(s, "derived") != nil {
				continue
			}
			inv, bound := sliceArg(s, "inv"), sliceArg(s, "bound_ns")
			tk, _ := tr.Track(s.Track)
			group, _ := tr.Track(tk.Parent)
			proc, _ := tr.Track(group.Parent)
			want, ok := truth[stracetest.TruthKey{Pid: proc.Pid, Inv: inv.(uint64), Name: s.Name}]
			if !ok {
				t.Fatalf("no truth for %s of pid %d inv %v", s.Name, proc.Pid, inv)
			}
			if e := max(s.TS-want, want-s.TS); e > bound.(int64) {
				t.Errorf("%s pid %d inv %v drawn at %d, truly at %d: %d ns off, bound %d ns", s.Name, proc.Pid, inv, s.TS, want, e, bound)
			}
			drawn++
		}
		if drawn == 0 || drawn != len(truth) || sum.Spans.Drawn != int64(drawn) {
			t.Errorf("%d device slices read back, %d counted drawn, the log has %d", drawn, sum.Spans.Drawn, len(truth))
		}
		var placed int64
		for _, ds := range dv.summaries() {
			placed += ds.Aligned + ds.Contained
		}
		if placed != int64(drawn) {
			t.Errorf("device summaries count %d placed, %d drawn", placed, drawn)
		}
		t.Logf("anchors every %d ns: %d device slices within their bounds", cfg.AnchorEvry, drawn)
	}
}

// sliceArg returns the value of a slice's argument (nil when it has none).
func sliceArg(s check.Slice, name string) any {
	for _, a := range s.Args {
		if a.Name == name {
			return a.Value
		}
	}
	return nil
}
