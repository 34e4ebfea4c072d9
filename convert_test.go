package phasetrace_test

import (
	"bytes"
	"os"
	"testing"

	"github.com/phasetrace/phasetrace"
	"github.com/phasetrace/phasetrace/perfetto/check"
)

func TestRealisticLog(t *testing.T) {
	var out bytes.Buffer
	sum, err := phasetrace.Convert(&out, []phasetrace.Input{phasetrace.File("examples/strace2perfetto/sample.log")})
	if err != nil {
		t.Fatal(err)
	}
	sum.WriteText(os.Stdout)
	tr, err := check.ReadBytes(out.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Err(); err != nil {
		t.Fatal(err)
	}
	tr.Dump(os.Stdout)
}
