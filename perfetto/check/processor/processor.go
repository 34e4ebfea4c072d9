package processor

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// EnvVar names the environment variable that holds the path of a
// trace_processor_shell binary.
const EnvVar = "PHASETRACE_TRACE_PROCESSOR"

// Shell runs a trace_processor_shell binary.
type Shell struct {
	Path string
}

// FromEnv returns the Shell named by EnvVar; ok is false when the variable
// is unset or empty.
func FromEnv() (sh *Shell, ok bool) {
	p := os.Getenv(EnvVar)
	if p == "" {
		return nil, false
	}
	return &Shell{Path: p}, true
}

// Stat is a row of the trace processor's stats table.
type Stat struct {
	Name     string
	Idx      int64  // -1 for a stat that is not indexed
	Severity string // "info", "notice", "data_loss" or "error"
	Source   string // "trace" or "analysis"
	Value    int64
}

func (s Stat) String() string {
	name := s.Name
	if s.Idx >= 0 {
		name += "[" + strconv.FormatInt(s.Idx, 10) + "]"
	}
	return fmt.Sprintf("%s = %d (%s, %s)", name, s.Value, s.Severity, s.Source)
}

// Result is what the trace processor imported from a trace.
type Result struct {
	// Stats lists every stat above zero, of any severity, in the trace
	// processor's order.
	Stats []Stat
	// Problems are the Stats of severity error or data_loss: an empty list
	// means the trace loaded clean.
	Problems []Stat

	// Slices counts the rows of the slice table: slices, and instants
	// (dur 0). Unended counts those never ended (dur -1). MaxDepth is the
	// largest depth, -1 without slices.
	Slices, Unended, MaxDepth int64
	// SliceSums fingerprints the slice table.
	SliceSums SliceSums
	// Flows counts the rows of the flow table, one per arrow. FlowSum is
	// the sum over arrows of ts(from) + 2·ts(to), each ts modulo Modulus.
	Flows, FlowSum int64
	// Counters counts the rows of the counter table; CounterSum is the sum
	// of their ts, each modulo Modulus.
	Counters, CounterSum int64
	// Tracks counts the rows of the track table. It is not check's
	// len(Trace.Tracks): see Compare.
	Tracks int64
}

// SliceSums are sums over the slices of a trace that agree between two
// readings only if (barring coincidence) every slice starts, lasts and
// nests the same in both. Each term is reduced modulo Modulus, so no sum
// overflows even for traces of billions of slices in boot-time
// nanoseconds.
type SliceSums struct {
	TS      int64 // Σ ts mod Modulus
	Dur     int64 // Σ dur mod Modulus (an unended slice's dur is -1)
	Depth   int64 // Σ depth
	TSDepth int64 // Σ (ts mod Modulus)·depth mod Modulus
}

// Modulus reduces each term of the sums in Result. (Go's % and SQLite's
// agree: the remainder has the sign of the dividend.)
const Modulus = 1_000_000_007

// Errors, wrapped by Load and by the errors of Agree and Compare.
var (
	// ErrRun is wrapped by the error of a trace processor that failed or
	// printed what Load cannot read.
	ErrRun = errors.New("trace processor failed")
	// ErrProblems is wrapped by Result.Err when the trace processor
	// reports a stat of severity error or data_loss.
	ErrProblems = errors.New("trace processor reports problems")
	// ErrDisagree is wrapped by each Mismatch.
	ErrDisagree = errors.New("check disagrees with the trace processor")
)

// query produces one row per stat above zero and one per figure, all with
// the same six columns, in one statement: the shell prints every
// statement's result, and one table is the simplest to read back. Only
// identifiers and integers are printed (the shell quotes strings without
// escaping them).
var query = strings.ReplaceAll(`select 'stat' as kind, name, ifnull(idx, -1) as idx, severity, source, value from stats where value > 0
union all select 'count', 'slices', -1, '', '', count(*) from slice
union all select 'count', 'unended', -1, '', '', count(*) from slice where dur = -1
union all select 'count', 'max_depth', -1, '', '', ifnull(max(depth), -1) from slice
union all select 'count', 'slice_ts', -1, '', '', ifnull(sum(ts % $P), 0) from slice
union all select 'count', 'slice_dur', -1, '', '', ifnull(sum(dur % $P), 0) from slice
union all select 'count', 'slice_depth', -1, '', '', ifnull(sum(depth), 0) from slice
union all select 'count', 'slice_ts_depth', -1, '', '', ifnull(sum((ts % $P) * depth % $P), 0) from slice
union all select 'count', 'flows', -1, '', '', count(*) from flow
union all select 'count', 'flow_sum', -1, '', '', ifnull(sum(o.ts % $P + 2 * (i.ts % $P)), 0)
  from flow f join slice o on f.slice_out = o.id join slice i on f.slice_in = i.id
union all select 'count', 'counters', -1, '', '', count(*) from counter
union all select 'count', 'counter_sum', -1, '', '', ifnull(sum(ts % $P), 0) from counter
union all select 'count', 'tracks', -1, '', '', count(*) from track;
`, "$P", strconv.Itoa(Modulus))

// Load runs the trace processor on trace and returns what it imported. The
// trace and the query are written to a temporary directory, removed
// afterwards. When the trace processor fails, the error wraps ErrRun and
// quotes what it printed on stderr.
func (s *Shell) Load(trace []byte) (*Result, error) {
	out, err := s.run(trace, query)
	if err != nil {
		return nil, err
	}
	r, err := parse(out)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrRun, s.Path, err)
	}
	return r, nil
}

// Query runs the trace processor on trace with one SQL statement and
// returns the rows it printed (the header first), as strings. An error
// wraps ErrRun.
func (s *Shell) Query(trace []byte, sql string) ([][]string, error) {
	out, err := s.run(trace, sql)
	if err != nil {
		return nil, err
	}
	rows, err := csv.NewReader(bytes.NewReader(out)).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrRun, s.Path, err)
	}
	return rows, nil
}

// run runs the trace processor on trace with sql, both written to a
// temporary directory removed afterwards, and returns what it printed.
func (s *Shell) run(trace []byte, sql string) ([]byte, error) {
	dir, err := os.MkdirTemp("", "phasetrace-processor-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	tracePath, queryPath := filepath.Join(dir, "trace.pftrace"), filepath.Join(dir, "query.sql")
	if err := os.WriteFile(tracePath, trace, 0o600); err != nil {
		return nil, err
	}
	if err := os.WriteFile(queryPath, []byte(sql), 0o600); err != nil {
		return nil, err
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(s.Path, "-q", queryPath, tracePath)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%w: %s: %v: %s", ErrRun, s.Path, err, lastLines(stderr.String(), 20))
	}
	return stdout.Bytes(), nil
}

// lastLines returns the end of the shell's stderr, where its error is,
// without its progress chatter.
func lastLines(s string, n int) string {
	var keep []string
	for _, l := range strings.Split(s, "\n") {
		// "Loading trace: 0.00 MB" progress lines end with a carriage
		// return instead of a newline.
		if i := strings.LastIndexByte(l, '\r'); i >= 0 {
			l = l[i+1:]
		}
		if l = strings.TrimSpace(l); l != "" {
			keep = append(keep, l)
		}
	}
	if len(keep) > n {
		keep = keep[len(keep)-n:]
	}
	return strings.Join(keep, "\n")
}

// parse reads the query's output: a header, then rows of six fields.
func parse(out []byte) (*Result, error) {
	r := &Result{MaxDepth: -1}
	figures := map[string]*int64{
		"slices": &r.Slices, "unended": &r.Unended, "max_depth": &r.MaxDepth,
		"slice_ts": &r.SliceSums.TS, "slice_dur": &r.SliceSums.Dur,
		"slice_depth": &r.SliceSums.Depth, "slice_ts_depth": &r.SliceSums.TSDepth,
		"flows": &r.Flows, "flow_sum": &r.FlowSum, "counters": &r.Counters, "counter_sum": &r.CounterSum,
		"tracks": &r.Tracks,
	}
	seen := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	header := false
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimRight(sc.Text(), "\r")
		if text == "" {
			continue
		}
		f := strings.Split(text, ",")
		if len(f) != 6 {
			return nil, fmt.Errorf("output line %d: %d fields, want 6: %q", line, len(f), text)
		}
		for i := range f {
			f[i] = unquote(f[i])
		}
		if !header {
			if strings.Join(f, ",") != "kind,name,idx,severity,source,value" {
				return nil, fmt.Errorf("output line %d: header %q", line, text)
			}
			header = true
			continue
		}
		idx, err1 := strconv.ParseInt(f[2], 10, 64)
		v, err2 := strconv.ParseInt(f[5], 10, 64)
		if err := errors.Join(err1, err2); err != nil {
			return nil, fmt.Errorf("output line %d: %v", line, err)
		}
		switch f[0] {
		case "stat":
			st := Stat{Name: f[1], Idx: idx, Severity: f[3], Source: f[4], Value: v}
			r.Stats = append(r.Stats, st)
			if st.Severity == "error" || st.Severity == "data_loss" {
				r.Problems = append(r.Problems, st)
			}
		case "count":
			p, ok := figures[f[1]]
			if !ok || seen[f[1]] {
				return nil, fmt.Errorf("output line %d: unexpected figure %q", line, f[1])
			}
			*p = v
			seen[f[1]] = true
		default:
			return nil, fmt.Errorf("output line %d: unexpected row %q", line, text)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading the output: %v", err)
	}
	if len(seen) != len(figures) {
		return nil, fmt.Errorf("output has %d of the %d figures:\n%s", len(seen), len(figures), out)
	}
	return r, nil
}

func unquote(s string) string {
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		return s[1 : len(s)-1]
	}
	return s
}

// Err returns nil when the trace loaded clean, or an error wrapping
// ErrProblems that lists the stats of severity error or data_loss.
func (r *Result) Err() error {
	if len(r.Problems) == 0 {
		return nil
	}
	var b strings.Builder
	for _, p := range r.Problems {
		b.WriteString("\n\t")
		b.WriteString(p.String())
	}
	return fmt.Errorf("%w:%s", ErrProblems, b.String())
}

// Value returns the sum of the named stat over its indices.
func (r *Result) Value(name string) int64 {
	var v int64
	for _, s := range r.Stats {
		if s.Name == name {
			v += s.Value
		}
	}
	return v
}
