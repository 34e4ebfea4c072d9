package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phasetrace/phasetrace/perfetto/check"
)

func chdir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	t.Chdir(dir)
	return dir
}

func readTrace(t *testing.T, path string) *check.Trace {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := check.ReadBytes(b)
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Err(); err != nil {
		t.Fatal(err)
	}
	return tr
}

func TestEmbeddedSample(t *testing.T) {
	chdir(t)
	var stderr bytes.Buffer
	if code := run(nil, strings.NewReader(""), &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	tr := readTrace(t, sampleOut)
	if len(tr.Slices) == 0 || len(tr.Flows) == 0 {
		t.Errorf("sample trace has %d slices, %d flows", len(tr.Slices), len(tr.Flows))
	}
	for _, want := range []string{"read embedded sample:", "lost 1 records (1 torn", "device pid=4100 dev=0", "aligned", "wall time: known", "trace: " + sampleOut, "ui.perfetto.dev"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, stderr.String())
		}
	}
}

func TestFlags(t *testing.T) {
	dir := chdir(t)
	// A gzipped log, a log from stdin, a calibration file and the summary
	// as JSON.
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(sample)
	zw.Close()
	os.WriteFile("run.log.gz", gz.Bytes(), 0o644)
	os.WriteFile("cal.json", []byte(`{"device_timestamp_unit": "syscnt_cycles", "raw_device_timestamp_unit": "syscnt_cycles", "samples": [
	  {"position": "pre_host_orchestration", "sample_idx": 0, "host_before_ns": 5000000000, "device_cycles": 1, "host_after_ns": 4000000000}]}`), 0o644)
	var stderr bytes.Buffer
	code := run([]string{"-calibration", "4100:0=cal.json", "-summary-json", "sum.json", "-q", "run.log.gz"}, strings.NewReader(""), &stderr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if stderr.Len() != 0 {
		t.Errorf("-q printed %q", stderr.String())
	}
	readTrace(t, "run.pftrace")
	var sum struct {
		Inputs    []struct{ Name string }
		Artifacts []struct {
			Kind    string
			Skipped int
		}
	}
	b, _ := os.ReadFile("sum.json")
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	if len(sum.Inputs) != 1 || sum.Inputs[0].Name != "run.log.gz" || len(sum.Artifacts) != 1 || sum.Artifacts[0].Skipped != 1 {
		t.Errorf("summary %s", b)
	}

	stderr.Reset()
	if code := run([]string{"-o", filepath.Join(dir, "in.pftrace"), "-"}, bytes.NewReader(sample), &stderr); code != 0 {
		t.Fatalf("stdin: exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "read stdin:") {
		t.Errorf("stdin summary: %s", stderr.String())
	}
	readTrace(t, "in.pftrace")
}

func TestErrors(t *testing.T) {
	chdir(t)
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"missing.log"}, 1, "missing.log"},
		{[]string{"-calibration", "nope", "x.log"}, 1, "want PID:DEV=FILE"},
		{[]string{"-records", "missing.jsonl"}, 1, "missing.jsonl"},
		{[]string{"-bogus"}, 2, "flag provided but not defined"},
	} {
		var stderr bytes.Buffer
		if code := run(c.args, strings.NewReader(""), &stderr); code != c.code || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d mentioning %q", c.args, code, stderr.String(), c.code, c.want)
		}
	}
	if _, err := os.Stat("x.pftrace"); err == nil {
		t.Error("a failed conversion left an output file")
	}
}

func TestOutputName(t *testing.T) {
	for in, want := range map[string]string{"run.log": "run.pftrace", "a/b.log.gz": "a/b.pftrace", "x.txt": "x.pftrace", "noext": "noext.pftrace", "-": "stdin.pftrace"} {
		if got := outputName(in); got != want {
			t.Errorf("outputName(%q) = %q, want %q", in, got, want)
		}
	}
}
