package check_test

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/phasetrace/phasetrace/perfetto/check"
)

// streamRead builds the Trace Read builds from a Reader's records.
func streamRead(b []byte, opts ...check.Option) (*check.Trace, error) {
	rd := check.NewReader(bytes.NewReader(b), opts...)
	defer rd.Close()
	var t check.Trace
	var flowTracks [][2]uint64
	for {
		rec, err := rd.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		switch rec.Kind {
		case check.KindProblem:
			t.Problems = append(t.Problems, rec.Problem)
		case check.KindSlice:
			for len(t.Slices) <= rec.Index {
				t.Slices = append(t.Slices, check.Slice{Name: "never handed over"})
			}
			t.Slices[rec.Index] = rec.Slice
		case check.KindFlow:
			t.Flows = append(t.Flows, rec.Flow)
			flowTracks = append(flowTracks, [2]uint64{rec.FromTrack, rec.ToTrack})
		case check.KindCounter:
			t.Counters = append(t.Counters, rec.Counter)
		}
	}
	for i, f := range t.Flows {
		if flowTracks[i] != [2]uint64{t.Slices[f.From].Track, t.Slices[f.To].Track} {
			return nil, errors.New("a flow's tracks are not its slices'")
		}
	}
	read := rd.Trace()
	t.PrimaryClock, t.Wall, t.Tracks, t.Packets = read.PrimaryClock, read.Wall, read.Tracks, read.Packets
	return &t, nil
}

// formatError is what a read error says, for comparing two of them.
type formatError struct {
	Offset int64
	Format bool
	Text   string
}

func errorOf(err error) *formatError {
	if err == nil {
		return nil
	}
	var fe *check.FormatError
	if !errors.As(err, &fe) {
		return &formatError{Offset: -1, Text: err.Error()}
	}
	return &formatError{Offset: fe.Offset, Format: errors.Is(err, check.ErrFormat), Text: err.Error()}
}

// withoutArgs is tr with no slice's arguments.
func withoutArgs(tr *check.Trace) *check.Trace {
	if tr == nil {
		return nil
	}
	c := *tr
	c.Slices = append([]check.Slice(nil), tr.Slices...)
	for i := range c.Slices {
		c.Slices[i].Args = nil
	}
	return &c
}

// agreeOn requires every way of reading b to give what the reference
// reader (the in-memory reader Read used to be) gives: Read, a Reader
// that keeps everything in memory, one that sorts in runs of a few events
// in temporary files, and one without arguments.
func agreeOn(t testing.TB, b []byte) {
	t.Helper()
	want, wantErr := check.ReferenceRead(bytes.NewReader(b))
	small := max(1, len(b)/8) // a few runs, merged in more than one round for many events
	for _, c := range []struct {
		name string
		read func() (*check.Trace, error)
		args bool
	}{
		{"Read", func() (*check.Trace, error) { return check.ReadBytes(b) }, true},
		{"Reader in memory", func() (*check.Trace, error) {
			return streamRead(b, check.WithArgs(nil), check.WithMemoryLimit(0))
		}, true},
		{"Reader in runs", func() (*check.Trace, error) {
			return streamRead(b, check.WithArgs(nil), check.WithMemoryLimit(small), check.WithTempDir(t.TempDir()))
		}, true},
		{"Reader in runs of one event", func() (*check.Trace, error) {
			return streamRead(b, check.WithArgs(nil), check.WithMemoryLimit(1), check.WithTempDir(t.TempDir()))
		}, true},
		{"Reader without arguments", func() (*check.Trace, error) {
			return streamRead(b, check.WithMemoryLimit(small), check.WithTempDir(t.TempDir()))
		}, false},
	} {
		got, err := c.read()
		if diff := cmp.Diff(errorOf(wantErr), errorOf(err)); diff != "" {
			t.Fatalf("%s: error (-reference +got):\n%s", c.name, diff)
		}
		w := want
		if !c.args {
			w = withoutArgs(want)
		}
		if diff := cmp.Diff(w, got, cmpopts.EquateNaNs()); diff != "" {
			t.Fatalf("%s: trace (-reference +got):\n%s", c.name, diff)
		}
	}
}

// readAgreed is check.ReadBytes, required to agree with every other way of
// reading b.
func readAgreed(t testing.TB, b []byte) (*check.Trace, error) {
	t.Helper()
	agreeOn(t, b)
	return check.ReadBytes(b)
}
