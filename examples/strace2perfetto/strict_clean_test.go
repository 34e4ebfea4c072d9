package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phasetrace/phasetrace/strace/stracetest"
)

// TestStrictOnCleanLogs: -strict exits 0 on clean generated logs whose
// records are joined to the next on their line and whose last line has no
// line end, with the runtime's truncating ns conversion (whose exact
// repairs are clean), long early prewarm spans and pipelined runs.
func TestStrictOnCleanLogs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for seed := uint64(1); seed <= 3; seed++ {
		var b bytes.Buffer
		stracetest.Generate(&b, stracetest.Config{Seed: seed, Rounds: 8, AnchorEvry: 2_000_000, Legacy: true, Ext: true,
			RuntimeNs: seed == 2, Prewarm: seed >= 2, Pipelined: seed == 3, Damage: stracetest.Damage{JoinRate: 0.2, Unterminated: true}})
		log := filepath.Join(dir, "clean.log")
		if err := os.WriteFile(log, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		args := []string{"-q", "-strict", "-o", filepath.Join(dir, "clean.pftrace"), log}
		if code, _, stderr := runArgs(args, strings.NewReader("")); code != exitOK {
			t.Errorf("seed %d: strace2perfetto -strict: exit %d\n%s", seed, code, stderr)
		}
	}
}
