package passes

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/phasetrace/phasetrace/strace"
)

// artifact is a host_phase_records artifact in memory, opened as bytes
// that seek or as a stream that does not; opens counts its openings.
type artifact struct {
	data  []byte
	seeks bool
	opens int
}

func (a *artifact) Open() (io.ReadCloser, error) {
	a.opens++
	if a.seeks {
		return seekingBytes{bytes.NewReader(a.data)}, nil
	}
	return io.NopCloser(bytes.NewReader(a.data)), nil // hides Seek
}

type seekingBytes struct{ *bytes.Reader }

func (seekingBytes) Close() error { return nil }

// passesOf is an artifact of n passes of about 1 KiB, written in a random
// order of (pid, inv), some (pid, inv) twice, and the passes read whole.
func passesOf(t *testing.T, n int, rng *rand.Rand) ([]byte, []strace.PhasePass) {
	t.Helper()
	var b strings.Builder
	for i := range n {
		inv := rng.IntN(n * 3 / 4) // about a third of the invs twice or more
		fmt.Fprintf(&b, `{"pid": %d, "inv": %d, "clock": "host_monotonic_ns", "records": [{"phase": "host_orch", "start_ns": %d, "end_ns": %d}], "pad": %q}`+"\n",
			100+inv%3, inv, i, i+1, strings.Repeat("x", 900+rng.IntN(200)))
	}
	data := []byte(b.String())
	pr := strace.NewPhaseRecordsReader(bytes.NewReader(data), strace.WithName("records.jsonl"))
	var all []strace.PhasePass
	for {
		p, err := pr.Read()
		if err == io.EOF {
			return data, all
		}
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, p)
	}
}

// Every (pid, inv) taken once, in the order written, in reverse and at
// random, from an input that seeks and from one that does not: each Take
// gives the passes of its (pid, inv) as the survey read them, in the order
// written; a reverse order opens an input that cannot seek a few times,
// not once a pass.
func TestTakeInAnyOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	data, all := passesOf(t, 3000, rng)
	type key struct {
		pid int32
		inv uint64
	}
	want := map[key][]strace.PhasePass{}
	var written []key
	for _, p := range all {
		k := key{p.Pid, p.Inv}
		if want[k] == nil {
			written = append(written, k)
		}
		want[k] = append(want[k], p)
	}
	reverse, random := slices.Clone(written), slices.Clone(written)
	slices.Reverse(reverse)
	rng.Shuffle(len(random), func(i, j int) { random[i], random[j] = random[j], random[i] })
	for _, tc := range []struct {
		name  string
		order []key
	}{{"written", written}, {"reverse", reverse}, {"random", random}} {
		name, order := tc.name, tc.order
		for _, seeks := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/seeks=%t", name, seeks), func(t *testing.T) {
				in := &artifact{data: data, seeks: seeks}
				x := New("records.jsonl", in)
				for i := range all {
					x.Add(&all[i])
				}
				x.Sort()
				var out []strace.PhasePass
				for _, k := range order {
					var err error
					if out, err = x.Take(k.pid, k.inv, out[:0]); err != nil {
						t.Fatal(err)
					}
					if diff := cmp.Diff(want[k], out); diff != "" {
						t.Fatalf("pid %d inv %d (-want +got):\n%s", k.pid, k.inv, diff)
					}
					if out, _ = x.Take(k.pid, k.inv, out[:0]); len(out) != 0 {
						t.Fatalf("pid %d inv %d taken twice", k.pid, k.inv)
					}
				}
				if !seeks && name == "reverse" && in.opens > 3 {
					t.Errorf("opened %d times", in.opens)
				}
				x.Untaken(func(p *strace.PhasePass) { t.Errorf("untaken %v", p.Pos) })
				if err := x.Close(); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

// The passes not taken come back in the order written, with their
// positions; an artifact that no longer holds a pass where the survey read
// one is an error that says so.
func TestUntakenAndChanged(t *testing.T) {
	data := []byte(`{"pid": 1, "inv": 2, "records": []}` + "\n" +
		`{"pid": 1, "inv": 1, "records": []}` + "\n" +
		`{"pid": 2, "inv": 1, "records": []}` + "\n")
	survey := func(in *artifact) *Index {
		x := New("records.jsonl", in)
		pr := strace.NewPhaseRecordsReader(bytes.NewReader(data), strace.WithName("records.jsonl"))
		for {
			p, err := pr.Read()
			if err != nil {
				break
			}
			x.Add(&p)
		}
		x.Sort()
		return x
	}
	x := survey(&artifact{data: data})
	if out, err := x.Take(1, 1, nil); err != nil || len(out) != 1 || out[0].Pos.Line != 2 {
		t.Fatalf("took %v, %v", out, err)
	}
	var left []string
	x.Untaken(func(p *strace.PhasePass) {
		left = append(left, fmt.Sprintf("%s:%d pid=%d inv=%d", p.Pos.File, p.Pos.Line, p.Pid, p.Inv))
	})
	if diff := cmp.Diff([]string{"records.jsonl:1 pid=1 inv=2", "records.jsonl:3 pid=2 inv=1"}, left); diff != "" {
		t.Errorf("untaken (-want +got):\n%s", diff)
	}

	for _, seeks := range []bool{true, false} {
		in := &artifact{seeks: seeks}
		x := survey(in)
		in.data = bytes.Replace(data, []byte(`"pid": 2`), []byte(`"pid": 3`), 1)
		if _, err := x.Take(2, 1, nil); !errors.Is(err, errChanged) || !strings.HasPrefix(err.Error(), "line 3: ") {
			t.Errorf("seeks=%t: %v", seeks, err)
		}
	}
}
