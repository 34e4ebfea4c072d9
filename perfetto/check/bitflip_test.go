package check_test

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/phasetrace/phasetrace"
	"github.com/phasetrace/phasetrace/perfetto"
	"github.com/phasetrace/phasetrace/perfetto/check"
	"github.com/phasetrace/phasetrace/perfetto/check/processor"
	"github.com/phasetrace/phasetrace/strace/stracetest"
)

var (
	flips     = flag.Int("flips", 200, "bit-flipped variants of each trace TestBitFlipsAgree reads")
	flipsSave = flag.String("flips.save", "", "directory where TestBitFlipsAgree writes the variants it finds disagreeing")
)

// flipSources are traces check reads with no problem: converted runtime
// logs, uncompressed (a flip in a deflated bundle mostly fails its
// checksum, and the framing is the same), and a writer's trace with delta
// timestamps and a small intern limit, so that sequences clear their
// incremental state often.
func flipSources(t testing.TB) map[string][]byte {
	t.Helper()
	srcs := map[string][]byte{}
	for _, seed := range []uint64{3, 4} {
		cfg := stracetest.Config{Seed: seed, Rounds: 4, AnchorEvry: 2_000_000, Pipelined: seed%2 == 0, Legacy: true, Ext: true}
		var log bytes.Buffer
		if err := stracetest.Generate(&log, cfg); err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if _, err := phasetrace.Convert(&b, []phasetrace.Input{phasetrace.Bytes("run.log", log.Bytes())}); err != nil {
			t.Fatal(err)
		}
		srcs[fmt.Sprint("log", seed)] = b.Bytes()
	}
	var b bytes.Buffer
	w := perfetto.NewWriter(&b, perfetto.WithDeltaTimestamps(true), perfetto.WithInternLimit(4), perfetto.WithFlushThreshold(256))
	th := [2]perfetto.Track{w.Thread(perfetto.ThreadSpec{Pid: 1, Tid: 2, Name: "main"}), w.Thread(perfetto.ThreadSpec{Pid: 1, Tid: 3, Name: "peer"})}
	c := w.CounterTrack(th[0], perfetto.CounterSpec{Name: "depth"})
	for i := range int64(12) {
		id := perfetto.FlowIDOf(fmt.Sprint("round ", i))
		w.Slice(th[i%2], perfetto.Slice{Name: fmt.Sprint("run ", i%5), TS: 100 * i, Dur: 50, Flows: []perfetto.FlowID{id},
			Args: []perfetto.Arg{perfetto.String("hid", fmt.Sprint(i%3)), perfetto.Int("inv", i)}})
		w.Slice(th[1-i%2], perfetto.Slice{Name: "peer", TS: 100*i + 60, Dur: 10, EndFlows: []perfetto.FlowID{id}})
		w.Counter(c, 100*i+1, i)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	srcs["writer"] = b.Bytes()
	for name, b := range srcs {
		tr, err := check.ReadBytes(b)
		if err != nil {
			t.Fatal(err)
		}
		if err := tr.Err(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	return srcs
}

// flipBits returns a copy of b with 1 to 4 bits flipped, chosen by r.
func flipBits(r *rand.Rand, b []byte) []byte {
	c := bytes.Clone(b)
	for range 1 + r.IntN(4) {
		i := r.IntN(len(c) * 8)
		c[i/8] ^= 1 << (i % 8)
	}
	return c
}

// Every bit-flipped variant of a clean trace that check reads with no
// problem, the trace processor reads the same way (processor.Agree): check
// must report what makes the trace processor read a trace differently.
// Variant i of a source is flipped by the seed i; -flips sets how many,
// -flips.save where the disagreeing ones are written.
func TestBitFlipsAgree(t *testing.T) {
	t.Parallel()
	sh, ok := processor.FromEnv()
	if !ok {
		t.Skip("set " + processor.EnvVar + " to a trace_processor_shell to compare check with Perfetto's trace processor")
	}
	for name, src := range flipSources(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			clean, bad := 0, 0
			for i := range uint64(*flips) {
				b := flipBits(rand.New(rand.NewPCG(i, 0xf11b)), src)
				tr, err := check.ReadBytes(b)
				if err != nil || tr.Err() != nil {
					continue
				}
				clean++
				r, err := sh.Load(b)
				if err != nil {
					t.Fatalf("variant %d: %v", i, err)
				}
				if err := processor.Agree(tr, r); err != nil {
					bad++
					t.Errorf("variant %d: %v", i, err)
					if *flipsSave != "" {
						if err := os.WriteFile(filepath.Join(*flipsSave, fmt.Sprintf("%s-%d.pftrace", name, i)), b, 0o644); err != nil {
							t.Fatal(err)
						}
					}
				}
			}
			t.Logf("%d of %d variants read clean by check, %d of them disagreeing", clean, *flips, bad)
		})
	}
}

// FuzzTraceProcessor reads bit-flipped clean traces: every way of reading
// agrees with the reference reader, and a trace check reads with no
// problem the trace processor, where PHASETRACE_TRACE_PROCESSOR names one,
// reads the same way (processor.Agree). The seeds are the clean traces and
// the flipped ones (testdata/fuzz/FuzzTraceProcessor/flipped-*) the trace
// processor read differently before check reported them
// (TestFlippedSeedsReported).
func FuzzTraceProcessor(f *testing.F) {
	for _, b := range flipSources(f) {
		f.Add(b)
	}
	sh, ok := processor.FromEnv()
	f.Fuzz(func(t *testing.T, b []byte) {
		t.Parallel() // the seeds side by side; no effect while fuzzing
		agreeOn(t, b)
		tr, err := check.ReadBytes(b)
		if err != nil || tr.Err() != nil || !ok {
			return
		}
		r, err := sh.Load(b)
		if err != nil {
			t.Fatal(err)
		}
		if err := processor.Agree(tr, r); err != nil {
			t.Error(err)
		}
	})
}

// Each flipped seed of FuzzTraceProcessor, which the trace processor
// reads otherwise than check would without its problem, is reported by
// check, with or without the trace processor at hand.
func TestFlippedSeedsReported(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("testdata/fuzz/FuzzTraceProcessor/flipped-*")
	if err != nil || len(files) == 0 {
		t.Fatalf("no flipped seeds: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			t.Parallel()
			b := readSeed(t, file)
			tr, err := check.ReadBytes(b)
			if err != nil {
				t.Fatal(err)
			}
			if !errors.Is(tr.Err(), check.ErrProblems) {
				t.Error("check reads it with no problem")
			}
		})
	}
}

// readSeed reads a seed file of one []byte value.
func readSeed(t *testing.T, file string) []byte {
	t.Helper()
	text, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	header, value, ok := strings.Cut(strings.TrimSpace(string(text)), "\n")
	if !ok || header != "go test fuzz v1" || !strings.HasPrefix(value, "[]byte(") || !strings.HasSuffix(value, ")") {
		t.Fatalf("%s: not a seed of one []byte", file)
	}
	s, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(value, "[]byte("), ")"))
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return []byte(s)
}
