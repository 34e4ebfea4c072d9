package phasetrace_test

import (
	"io"

	"github.com/phasetrace/phasetrace/strace/stracetest"
)

// The log generator is stracetest's; these are the names this package's
// tests know it by.

// genConfig shapes a generated log (see stracetest.Config).
type genConfig = stracetest.Config

// truthKey names a device span of a generated log (stracetest.TruthKey,
// with this package's field names).
type truthKey struct {
	pid  int32
	inv  uint64
	name string
}

// generated returns a generated log.
func generated(cfg genConfig) []byte {
	b, _ := stracetest.GenerateTruth(cfg)
	return b
}

// generatedWithTruth returns a generated log and the true host start of
// each of its device spans.
func generatedWithTruth(cfg genConfig) ([]byte, map[truthKey]int64) {
	b, truth := stracetest.GenerateTruth(cfg)
	out := make(map[truthKey]int64, len(truth))
	for k, v := range truth {
		out[truthKey{k.Pid, k.Inv, k.Name}] = v
	}
	return b, out
}

// generate writes a generated log to w.
func generate(w io.Writer, cfg genConfig) { stracetest.Generate(w, cfg) }
