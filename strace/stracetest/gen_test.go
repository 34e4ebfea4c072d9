package stracetest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/big"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/phasetrace/phasetrace/strace"
)

// floorNanos is the exact floor of c·1e9/freq.
func TestFloorNanos(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	check := func(c, freq uint64) {
		want := new(big.Int).Mul(new(big.Int).SetUint64(c), big.NewInt(1_000_000_000))
		want.Quo(want, new(big.Int).SetUint64(freq))
		if !want.IsInt64() {
			return
		}
		if got := floorNanos(c, freq); got != want.Int64() {
			t.Errorf("floorNanos(%d, %d) = %d, want %s", c, freq, got, want)
		}
	}
	for range 100_000 {
		check(rng.Uint64()>>rng.IntN(64), max(rng.Uint64()>>rng.IntN(64), 1))
	}
	for _, f := range []uint64{1, 3, 50_000_000, 1_000_000_000, 1<<64 - 1} {
		for _, c := range []uint64{0, 1, f - 1, f, f + 1, 1<<63 - 1, 1<<64 - 1} {
			check(c, f)
		}
	}
}

// A configuration always gives the same log, and every case reads back
// with the reader's accounting intact.
func TestCasesReadBack(t *testing.T) {
	t.Parallel()
	for _, c := range Cases() {
		again, _ := GenerateTruth(c.Config)
		if !bytes.Equal(c.Log, again) {
			t.Errorf("%s: two generations differ", c.Name)
		}
		var w bytes.Buffer
		Generate(&w, c.Config)
		if !bytes.Equal(c.Log, w.Bytes()) {
			t.Errorf("%s: Generate and GenerateTruth differ", c.Name)
		}
		r := strace.NewReader(bytes.NewReader(c.Log))
		for {
			_, err := r.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		st := r.Stats()
		if err := st.Check(); err != nil || st.Records.Spans == 0 {
			t.Errorf("%s: %v, %d spans", c.Name, err, st.Records.Spans)
		}
	}
}

// Golden passes on equal output, and keeps the new output beside a golden
// file it differs from.
func TestGolden(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "x.golden")
	if err := os.WriteFile(path, []byte("same\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	Golden(t, path, []byte("same\n"))
	ft := &fakeT{TB: t}
	Golden(ft, path, []byte("other\n"))
	if !ft.failed {
		t.Error("a difference did not fail")
	}
	if got, err := os.ReadFile(path + ".got"); err != nil || string(got) != "other\n" {
		t.Errorf("kept %q, %v", got, err)
	}
}

type fakeT struct {
	testing.TB
	failed bool
}

func (f *fakeT) Helper()               {}
func (f *fakeT) Errorf(string, ...any) { f.failed = true }

// readBack reads a generated log, returning its records (cloned) and stats.
func readBack(t *testing.T, log []byte) ([]strace.Record, strace.Stats) {
	t.Helper()
	r := strace.NewReader(bytes.NewReader(log), strace.WithMaxProblems(1<<20))
	var recs []strace.Record
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rec.Clone())
	}
	st := r.Stats()
	if err := st.Check(); err != nil {
		t.Fatal(err)
	}
	return recs, st
}

// JoinRate joins records of every kind, each complete, and Unterminated
// ends the log on a whole span without a line end: across seeds, the
// reader loses nothing, and finds the joins and the possibly cut
// attribute where the generator made them.
func TestJoinsAndUnterminated(t *testing.T) {
	t.Parallel()
	for seed := uint64(1); seed <= 8; seed++ {
		for _, cfg := range []Config{
			{Seed: seed, Rounds: 6, AnchorEvry: 2_000_000, Legacy: true, Damage: Damage{JoinRate: 0.05}},
			{Seed: seed, Rounds: 6, AnchorEvry: 2_000_000, Ext: true, Pipelined: true, Damage: Damage{Unterminated: true}},
			{Seed: seed, Rounds: 6, AnchorEvry: 1_000_000, Legacy: true, Ext: true, HostParentsFirst: true, Damage: Damage{JoinRate: 0.3, Unterminated: true}},
		} {
			log, _ := GenerateTruth(cfg)
			recs, st := readBack(t, log)
			if st.Lost() != 0 {
				t.Fatalf("%+v: lost %d: %v", cfg, st.Lost(), st.Problems)
			}
			joined := map[strace.Kind]int{}
			for _, r := range recs {
				if r.Joined {
					joined[r.Kind]++
				}
			}
			if cfg.JoinRate > 0 {
				for _, k := range []strace.Kind{strace.KindSpan, strace.KindWallAnchor, strace.KindDeviceAnchor, strace.KindBindPhase} {
					if joined[k] == 0 {
						t.Errorf("%+v: no %s joined (%v)", cfg, k, joined)
					}
				}
				if st.Joined < int64(cfg.JoinRate*float64(len(recs))/2) {
					t.Errorf("%+v: %d of %d records joined", cfg, st.Joined, len(recs))
				}
			} else if st.Joined != 0 {
				t.Errorf("%+v: %d records joined", cfg, st.Joined)
			}
			if !cfg.Unterminated {
				continue
			}
			last := recs[len(recs)-1]
			if bytes.HasSuffix(log, []byte("\n")) || !st.Unterminated || st.MaybeCut != 1 ||
				last.Kind != strace.KindSpan || !last.Span.Attrs[len(last.Span.Attrs)-1].MaybeCut {
				t.Fatalf("%+v: ends %q; stats %+v", cfg, log[len(log)-min(len(log), 40):], st)
			}
			// Ended, the log reads the same but for the mark.
			full, st2 := readBack(t, append(log, '\n'))
			last.Span.Attrs[len(last.Span.Attrs)-1].MaybeCut = false
			if len(full) != len(recs) || st2.MaybeCut != 0 || !reflect.DeepEqual(full[len(full)-1].Span, last.Span) {
				t.Errorf("%+v: with its line end, %d records (%d without), last %+v", cfg, len(full), len(recs), full[len(full)-1])
			}
		}
	}
}

// BenchmarkGenerate measures Generate on Realistic logs of two sizes: its
// time per byte is the same at both, and so is its memory (B/op grows with
// the log only by what its lines are made of, not by lines held).
func BenchmarkGenerate(b *testing.B) {
	for _, size := range []int64{16 << 20, 64 << 20} {
		cfg := Realistic(size)
		var n countWriter
		Generate(&n, cfg)
		b.Run(fmt.Sprintf("%dMB", size>>20), func(b *testing.B) {
			b.SetBytes(int64(n))
			b.ReportAllocs()
			for b.Loop() {
				Generate(io.Discard, cfg)
			}
		})
	}
}

// A hand-off placed where its thread is busy waits until the thread is
// free; one placed where it is free keeps its time, and forgetting the
// past keeps what comes after.
func TestThreadBusy(t *testing.T) {
	t.Parallel()
	var b threadBusy
	if got := b.free(1, 1_000_000, 3_000); got != 1_000_000 {
		t.Fatalf("free thread: placed at %d", got)
	}
	if got := b.free(2, 1_000_500, 3_000); got != 1_000_500 {
		t.Fatalf("another thread: placed at %d", got)
	}
	if got := b.free(1, 1_002_000, 2_000); got != 1_003_500 {
		t.Fatalf("overlapping the first: placed at %d, want 1003500", got)
	}
	if got := b.free(1, 999_000, 2_000); got != 1_005_500+500 {
		t.Fatalf("overlapping both in turn: placed at %d, want 1006000", got)
	}
	b.forget(1_000_000 + 2*busyBucket)
	if got := b.free(1, 1_000_000, 3_000); got != 1_000_000 {
		t.Fatalf("after forget: placed at %d", got)
	}
}

// The pipelined rank falls behind the others by a few ms a round, and the
// generator holds their lines for as long as it lags: its lag stops at
// maxPipelineLag (and a round), so that memory stays flat however long
// the log. Run k of rank 0 starts at most that long before run k of rank 1.
func TestPipelineLagBounded(t *testing.T) {
	t.Parallel()
	cfg := Realistic(0)
	cfg.Rounds, cfg.Ranks = 1500, 3
	var log bytes.Buffer
	if err := Generate(&log, cfg); err != nil {
		t.Fatal(err)
	}
	recs, _ := readBack(t, log.Bytes())
	binds := map[int32]map[uint64]int64{} // pid → inv → bind start
	for _, r := range recs {
		if r.Kind == strace.KindSpan && r.Span.Name == strace.SpanBind {
			if binds[r.Span.Pid] == nil {
				binds[r.Span.Pid] = map[uint64]int64{}
			}
			binds[r.Span.Pid][r.Span.Inv] = r.Span.TS
		}
	}
	const round = 300_000_000 // ns, more than a round of three ranks takes
	worst := int64(0)
	for inv, ts0 := range binds[4100] {
		ts1, ok := binds[4200][inv]
		if !ok {
			t.Fatalf("run %d of rank 1 missing", inv)
		}
		worst = max(worst, ts1-ts0)
	}
	if worst > maxPipelineLag+round {
		t.Errorf("rank 0's run starts %d ns before rank 1's, past maxPipelineLag (%d ns) and a round", worst, maxPipelineLag)
	}
	if worst < maxPipelineLag/2 {
		t.Errorf("rank 0 lags by at most %d ns: the case does not reach the bound", worst)
	}
}
