package phasetrace_test

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/phasetrace/phasetrace"
	"github.com/phasetrace/phasetrace/perfetto"
	"github.com/phasetrace/phasetrace/perfetto/check"
	"github.com/phasetrace/phasetrace/perfetto/check/processor"
)

// readTrace decodes a trace as perfetto/check reads it, without what the
// trace says of itself (stripAbout), which the tests that count slices
// against a Summary leave aside.
func readTrace(b []byte) (*check.Trace, error) {
	tr, err := check.ReadBytes(b)
	if err != nil {
		return tr, err
	}
	stripAbout(tr)
	return tr, nil
}

// stripAbout takes the trace's own track and its instant out of tr
// (check.Trace.WithoutTrack), and the anomalies track with its instants
// (tested apart: anomalies_test.go), so that what is left is what the
// logs gave; it returns the conversion instant (nil when there is none).
func stripAbout(tr *check.Trace) *check.Slice {
	out, dropped := tr.WithoutTrack("phasetrace")
	out, _ = out.WithoutTrack("anomalies")
	*tr = *out
	if len(dropped) == 0 {
		return nil
	}
	return &dropped[0]
}

// flatArgs flattens a slice's arguments as the trace processor names
// them in its args table, without the "debug." prefix: dictionaries by
// dots, arrays by [i].
func flatArgs(args []check.Arg) map[string]string {
	m := map[string]string{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch v := v.(type) {
		case []check.Arg:
			for _, a := range v {
				walk(prefix+"."+a.Name, a.Value)
			}
		case []any:
			for i, e := range v {
				walk(prefix+"["+strconv.Itoa(i)+"]", e)
			}
		default:
			m[prefix] = fmt.Sprint(v)
		}
	}
	for _, a := range args {
		walk(a.Name, a.Value)
	}
	return m
}

// TestTheTraceSaysWhatItIs: a trace holds, on its "phasetrace" track, one
// instant "conversion" at its first slice naming the version that wrote
// it, each input's name, size and [stamp] line, and the account as the
// Summary has it — the same in the trace processor's args table.
func TestTheTraceSaysWhatItIs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	stamp := "4d31f482 env SIMPLER_HBG_BIND_BREAKDOWN_ENABLE=1 python main.py --rounds 3"
	log := "[stamp] " + stamp + "\n" + string(mustRead(t, sampleInput(t)))
	name := filepath.Join(dir, "run.log")
	if err := os.WriteFile(name, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	sum, err := phasetrace.Convert(&out, []phasetrace.Input{phasetrace.File(name)},
		phasetrace.WithWriterOptions(perfetto.WithCompression(perfetto.DefaultCompressionLevel)))
	if err != nil {
		t.Fatal(err)
	}
	tr, err := check.ReadBytes(out.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	first := tr.Slices[0].TS
	about := stripAbout(tr)
	if about == nil {
		t.Fatal("the trace holds no conversion instant")
	}
	if about.Name != "conversion" || !about.Instant || about.Category != "phasetrace" || about.TS != tr.Slices[0].TS || about.TS != first {
		t.Errorf("conversion instant %q (instant %v, category %q) at %d, want at the first slice %d", about.Name, about.Instant, about.Category, about.TS, tr.Slices[0].TS)
	}
	got := flatArgs(about.Args)
	want := wantAbout(sum)
	want["inputs[0].stamp"] = stamp
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the conversion instant's arguments (-want +got):\n%s", diff)
	}
	if sum.Inputs[0].Torn != 1 || got["account.lost.torn"] != "1" {
		t.Errorf("the sample's torn record: summary %d, trace %s", sum.Inputs[0].Torn, got["account.lost.torn"])
	}

	// The trace processor reads the same arguments.
	sh, ok := processor.FromEnv()
	if !ok {
		t.Skipf("%s is not set: Perfetto's trace processor is not run", processor.EnvVar)
	}
	rows, err := sh.Query(out.Bytes(), `select key, display_value from args where arg_set_id = (select arg_set_id from slice where name = 'conversion' and category = 'phasetrace')`)
	if err != nil {
		t.Fatal(err)
	}
	fromTP := map[string]string{}
	for _, r := range rows[1:] {
		k := strings.TrimPrefix(r[0], "debug.")
		fromTP[k] = r[1]
	}
	for k, v := range want {
		if v == "true" || v == "false" { // display_value of a bool
			if (fromTP[k] == "1") == (v == "true") || fromTP[k] == v {
				continue
			}
		}
		if fromTP[k] != v {
			t.Errorf("trace processor: %s = %q, want %q", k, fromTP[k], v)
		}
	}
	if len(fromTP) != len(want) {
		t.Errorf("trace processor: %d arguments, want %d:\n%v", len(fromTP), len(want), fromTP)
	}
}

// wantAbout is what the conversion instant of a trace in one piece says
// for sum, flattened, but for stamps.
func wantAbout(sum *phasetrace.Summary) map[string]string {
	m := map[string]string{"full_name": "conversion", "version": phasetrace.Version("phasetrace")}
	for i, in := range sum.Inputs {
		p := "inputs[" + strconv.Itoa(i) + "]."
		m[p+"name"], m[p+"bytes"], m[p+"lines"] = in.Name, fmt.Sprint(in.Bytes), fmt.Sprint(in.Lines)
	}
	a := "account."
	set := func(k string, v any) { m[a+k] = fmt.Sprint(v) }
	set("spans.read", sum.Spans.Read)
	set("spans.drawn", sum.Spans.Drawn)
	set("spans.superseded", sum.Spans.Superseded)
	for r, n := range sum.Spans.NotDrawn {
		set("spans.not_drawn."+string(r), n)
	}
	for r, n := range sum.Spans.Moved {
		set("spans.moved."+string(r), n)
	}
	var torn, unknown, malformed, inLong, cut int64
	for _, in := range sum.Inputs {
		torn, unknown, malformed, inLong = torn+in.Torn, unknown+in.UnknownVersion, malformed+in.Malformed, inLong+in.InLongLines
		if in.Cut != "" {
			cut++
		}
	}
	for _, ar := range sum.Artifacts {
		torn, malformed = torn+ar.Torn, malformed+ar.Malformed
		if ar.Cut != "" {
			cut++
		}
	}
	set("lost.torn", torn)
	set("lost.unknown_version", unknown)
	set("lost.malformed", malformed)
	set("lost.in_long_lines", inLong)
	set("lost.inputs_cut", cut)
	set("invocations", sum.Invocations)
	for name, c := range map[string]phasetrace.ReasonCounts{"not_drawn": sum.NotDrawn, "superseded": sum.Superseded, "repaired": sum.Repaired, "moved": sum.Moved, "unlinked": sum.Unlinked} {
		for r, n := range c {
			set(name+"."+string(r), n)
		}
	}
	for k, n := range sum.Flows {
		set("flows."+string(k), n)
	}
	set("clean", sum.Clean())
	set("lossless", sum.Lossless())
	return m
}

// TestEachPartSaysWhatItIs: in a split trace each part holds the
// conversion instant with the version and the inputs' names, at its own
// first slice; the overview holds it with the account.
func TestEachPartSaysWhatItIs(t *testing.T) {
	t.Parallel()
	log := mustRead(t, sampleInput(t))
	parts := map[string]*bytes.Buffer{}
	var ov bytes.Buffer
	sum, err := phasetrace.Convert(&ov, []phasetrace.Input{phasetrace.Bytes("sample.log", log)},
		phasetrace.WithSplit(200, func(n int) (io.WriteCloser, string, error) {
			b := &bytes.Buffer{}
			name := fmt.Sprintf("part%03d", n)
			parts[name] = b
			return nopCloser{b}, name, nil
		}))
	if err != nil {
		t.Fatal(err)
	}
	if len(parts) < 2 {
		t.Fatalf("%d parts, want several", len(parts))
	}
	for name, b := range parts {
		tr, err := check.ReadBytes(b.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		about := stripAbout(tr)
		if about == nil {
			t.Fatalf("%s holds no conversion instant", name)
		}
		want := map[string]string{"full_name": "conversion", "version": phasetrace.Version("phasetrace"), "inputs[0].name": "sample.log"}
		if diff := cmp.Diff(want, flatArgs(about.Args)); diff != "" {
			t.Errorf("%s: the conversion instant's arguments (-want +got):\n%s", name, diff)
		}
		if len(tr.Slices) > 0 && about.TS != tr.Slices[0].TS {
			t.Errorf("%s: the conversion instant at %d, its first slice at %d", name, about.TS, tr.Slices[0].TS)
		}
	}
	tr, err := check.ReadBytes(ov.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	about := stripAbout(tr)
	if about == nil {
		t.Fatal("the overview holds no conversion instant")
	}
	if diff := cmp.Diff(wantAbout(sum), flatArgs(about.Args)); diff != "" {
		t.Errorf("the overview's conversion instant (-want +got):\n%s", diff)
	}
}
