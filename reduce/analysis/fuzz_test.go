package analysis

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// FuzzAnalyses runs every analysis and renderer on arbitrary log text:
// none may panic.
func FuzzAnalyses(f *testing.F) {
	paths, _ := filepath.Glob(filepath.Join("testdata", "*.log"))
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(rec(1, 1, "a", 0, "chip.run", -5, -9223372036854775808, "run_id=-1 dispatch_id=9223372036854775807 run_epoch=1 slot_id=0 generation=x")))
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := ReadLog(bytes.NewReader(data), WithName("fuzz"))
		if err != nil {
			t.Fatal(err)
		}
		_ = WriteTPOT(io.Discard, AnalyzeTPOT(l.Spans))
		_ = WriteRounds(io.Discard, AnalyzeRounds(l.Spans))
		_ = WriteTree(io.Discard, AnalyzeTree(l.Spans))
		p, _ := ProveOverlap(l.Spans, WithRequireHidden())
		_ = WriteOverlap(io.Discard, p)
		st, _ := AnalyzeBinds(l, WithRounds(2))
		_ = WriteBinds(io.Discard, st)
		reps := l.Repetitions()
		if c, err := CompareBinds(reps, reps); err == nil {
			_ = WriteComparison(io.Discard, c)
		}
	})
}
