package phasetrace_test

import (
	"testing"

	"github.com/phasetrace/phasetrace/perfetto/check"
)

func processorAgrees(t *testing.T, out []byte, tr *check.Trace) {}
