package stracetest

import (
	"bytes"
	"errors"
	"io"
	"math/big"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/phasetrace/phasetrace/strace"
)

// floorNanos is the exact floor of c·1e9/freq.
func TestFloorNanos(t *testing.T) {
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
