package strace

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestAutoload reads the two forms of the record, with and without its raw
// fields, and writes them back byte for byte.
func TestAutoload(t *testing.T) {
	t.Parallel()
	const (
		withRaw = `torch_backend_autoload setting=0 raw="0" raw_truncated=false effective=disabled torch_imported=true torch_npu_loaded=false`
		older   = `torch_backend_autoload setting=1 effective=enabled torch_imported=true torch_npu_loaded=true`
		prefix  = "[mono_ns=10][T0x7f3a][TIMING] report: "
	)
	in := prefix + withRaw + "\n" + older + " pid=7\n"
	recs, st := readAll(t, strings.NewReader(in), WithName("a.log"))
	want := []Record{
		{Kind: KindAutoload, Pos: Pos{File: "a.log", Line: 1, Offset: int64(len(prefix))},
			Prefix:   Prefix{Present: true, MonoNS: 10, Thread: 0x7f3a, Level: "TIMING", Func: "report"},
			Autoload: Autoload{Text: withRaw, Setting: "0", Raw: `"0"`, Effective: "disabled", TorchImported: true}},
		{Kind: KindAutoload, Pos: Pos{File: "a.log", Line: 2, Offset: int64(len(prefix + withRaw + "\n"))},
			Autoload: Autoload{Text: older, Setting: "1", Effective: "enabled", TorchImported: true, TorchNPULoaded: true}},
	}
	if diff := cmp.Diff(want, recs); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
	if st.Heads.Autoload != 2 || st.Records.Autoloads != 2 || st.Lost() != 0 {
		t.Errorf("stats %+v", st)
	}
	var out bytes.Buffer
	w := NewWriter(&out)
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := out.String(), prefix+withRaw+"\n"+older+"\n"; got != want {
		t.Errorf("written:\n%s\nwant:\n%s", got, want)
	}
}

// TestAutoloadLosses: a head whose record breaks the grammar is malformed,
// one cut before its grammar completes is torn, and text that only mentions
// the word is no head.
func TestAutoloadLosses(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		line string
		err  error
	}{
		{`torch_backend_autoload setting=0 effective=disabled torch_imported=yes torch_npu_loaded=false`, ErrMalformed},
		{`torch_backend_autoload setting=0  effective=disabled torch_imported=true torch_npu_loaded=false`, ErrMalformed},
		{`torch_backend_autoload setting=0 raw="0" effective=disabled torch_imported=true torch_npu_loaded=false`, ErrMalformed},
		{`torch_backend_autoload setting=0 raw=0 raw_truncated=false effective=disabled torch_imported=true torch_npu_loaded=false`, ErrMalformed},
		{`torch_backend_autoload setting=0 effective=disabled torch_imported=true torch_npu_loaded=falsely`, ErrMalformed},
		{`torch_backend_autoload setting=0 effective=disabled torch_imported=true torch_npu_loaded=fa`, ErrTorn},
		{`torch_backend_autoload setting=0 raw="a b raw_truncated=false`, ErrTorn},
		{`torch_backend_autoload setting=`, ErrTorn},
		{`torch_backend_autoload setting=0 effective=disabled [STRACE] v=1 pid=1 tid=1 inv=1 hid=1 depth=0 name=a ts=1 dur=1`, ErrTorn},
	} {
		recs, st := readAll(t, strings.NewReader(c.line+"\n"))
		if st.Heads.Autoload != 1 || st.Records.Autoloads != 0 || len(st.Problems) != 1 || !errors.Is(st.Problems[0], c.err) {
			t.Errorf("%s: %d records, %+v", c.line, len(recs), st)
		}
	}
	for _, line := range []string{
		"torch_backend_autoload is on",
		"xtorch_backend_autoload setting=0 effective=x torch_imported=true torch_npu_loaded=true",
	} {
		recs, st := readAll(t, strings.NewReader(line+"\n"))
		if st.Heads.Total() != 0 || len(recs) != 0 {
			t.Errorf("%s: %d records, %+v", line, len(recs), st)
		}
	}
}

// TestAutoloadHeadsInLongLines counts the heads of a skipped line across the
// pieces it is read in.
func TestAutoloadHeadsInLongLines(t *testing.T) {
	t.Parallel()
	const rec = "torch_backend_autoload setting=0 effective=disabled torch_imported=true torch_npu_loaded=false"
	for shift := range 40 {
		line := strings.Repeat("z", shift) + strings.Repeat(" "+rec+" x"+rec, 200)
		recs, st := readAll(t, strings.NewReader(line+"\n"+rec+"\n"), WithMaxLine(MinMaxLine))
		if st.Heads.Autoload != 201 || st.InLongLines != 200 || len(recs) != 1 || recs[0].Kind != KindAutoload {
			t.Errorf("shift %d: %d records, %+v", shift, len(recs), st)
		}
	}
}
