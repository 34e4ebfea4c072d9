package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const samplePath = "../strace2perfetto/sample.log"

// duckDBEnv names the directory of the npm package @duckdb/node-api;
// without it, the one under ~/.cache/phasetrace-duckdb (where .ci/run
// installs it) is used.
const duckDBEnv = "PHASETRACE_DUCKDB_NODE_API"

// duckDBReader reads a Parquet file with DuckDB and prints its rows as one
// JSON array of arrays of strings, the column names first, null as "".
const duckDBReader = `const { DuckDBInstance } = require(process.env.DUCKDB_NODE_API);
(async () => {
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  const r = await c.runAndReadAll("select * from read_parquet('" + process.argv[2] + "')");
  const out = [r.columnNames()];
  for (const row of r.getRows()) out.push(row.map(v => v === null ? '' : String(v)));
  process.stdout.write(JSON.stringify(out));
})().catch(e => { console.error(e); process.exit(1); });
`

// duckDB returns the node binary and the @duckdb/node-api directory, or
// skips the test saying which is missing.
func duckDB(t *testing.T) (node, api string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: the Parquet tables are not read back with DuckDB")
	}
	api = os.Getenv(duckDBEnv)
	if api == "" {
		home, _ := os.UserHomeDir()
		api = filepath.Join(home, ".cache", "phasetrace-duckdb", "node_modules", "@duckdb", "node-api")
	}
	if _, err := os.Stat(filepath.Join(api, "package.json")); err != nil {
		t.Skipf("@duckdb/node-api is not at %s (npm install --prefix ~/.cache/phasetrace-duckdb @duckdb/node-api, or set %s): the Parquet tables are not read back with DuckDB", api, duckDBEnv)
	}
	return node, api
}

// TestStepsParquetInDuckDB writes the steps and binds tables of the sample
// log as Parquet and as CSV, reads the Parquet back with DuckDB and wants
// the same columns, rows and values.
func TestStepsParquetInDuckDB(t *testing.T) {
	t.Parallel()
	node, api := duckDB(t)
	dir := t.TempDir()
	script := filepath.Join(dir, "read.js")
	if err := os.WriteFile(script, []byte(duckDBReader), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"steps", "binds"} {
		t.Run(table, func(t *testing.T) {
			pq := filepath.Join(dir, table+".parquet")
			if code, _, errs := runCmd(t, "", "steps", "-table", table, "-format", "parquet", "-o", pq, samplePath); code != exitOK {
				t.Fatalf("exit %d: %s", code, errs)
			}
			code, out, errs := runCmd(t, "", "steps", "-table", table, "-format", "csv", samplePath)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, errs)
			}
			want, err := csv.NewReader(strings.NewReader(out)).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(node, script, pq)
			cmd.Env = append(os.Environ(), "DUCKDB_NODE_API="+api)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("DuckDB: %v: %s", err, stderr.String())
			}
			var got [][]string
			if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
				t.Fatal(err)
			}
			if len(want) < 10 {
				t.Fatalf("%d rows: want many", len(want))
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("CSV (-) and the Parquet as DuckDB reads it (+):\n%s", diff)
			}
		})
	}
}

// TestStepsFormats checks that the text, CSV and JSON tables hold the
// same rows: as many, with the same values, empty where null.
func TestStepsFormats(t *testing.T) {
	t.Parallel()
	_, out, _ := runCmd(t, "", "steps", "-format", "csv", samplePath)
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	_, js, _ := runCmd(t, "", "steps", "-format", "json", samplePath)
	lines := strings.Split(strings.TrimSuffix(js, "\n"), "\n")
	_, text, _ := runCmd(t, "", "steps", samplePath)
	texts := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if len(lines) != len(rows)-1 || len(texts) != len(rows) {
		t.Fatalf("%d CSV rows, %d JSON lines, %d text lines", len(rows)-1, len(lines), len(texts)-1)
	}
	for i, l := range lines {
		var obj map[string]any
		dec := json.NewDecoder(strings.NewReader(l))
		dec.UseNumber() // wall_ns is past a float64's integers
		if err := dec.Decode(&obj); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		fields := strings.Fields(texts[i+1])
		for c, name := range rows[0] {
			want := rows[i+1][c]
			got := ""
			if v := obj[name]; v != nil {
				got = fmt.Sprint(v)
			}
			if got != want {
				t.Errorf("row %d %s: JSON %q, CSV %q", i+1, name, got, want)
			}
			if want == "" {
				want = "-"
			}
			if fields[c] != want {
				t.Errorf("row %d %s: text %q, CSV %q", i+1, name, fields[c], want)
			}
		}
	}
}

// TestSlowCommand names the sample's slowest warm decode run and the
// stages that took its excess, and with -split the part holding it.
func TestSlowCommand(t *testing.T) {
	t.Parallel()
	code, out, errs := runCmd(t, "", "slow", "-top", "1", samplePath)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{
		"decode 9f3c2a11d00db1e5: 22 runs (2 cold), median chip.run",
		"      4    4100    0       3         5111033245      45 039.4",
		"graph_build +4 963.7, sched +2 435.0",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
	_, out, _ = runCmd(t, "", "slow", "-top", "1", "-split", "300", samplePath)
	if !strings.Contains(out, "sample.part001.pftrace") {
		t.Errorf("-split: no part named:\n%s", out)
	}
}

// TestStepsUsage checks the flags' values are checked.
func TestStepsUsage(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"steps", "-format", "xml", samplePath},
		{"steps", "-table", "nodes", samplePath},
		{"slow", "-top", "0", samplePath},
	} {
		if code, _, errs := runCmd(t, "", args...); code != exitUsage || errs == "" {
			t.Errorf("%v: exit %d, stderr %q; want a usage error", args, code, errs)
		}
	}
	if code, _, errs := runCmd(t, "", "steps", "/nonexistent.log"); code != exitFail || errs == "" {
		t.Errorf("a missing log: exit %d, %q", code, errs)
	}
}
