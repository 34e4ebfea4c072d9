package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/phasetrace/phasetrace"
	"github.com/phasetrace/phasetrace/examples/internal/cli"
	"github.com/phasetrace/phasetrace/reduce/analysis"
)

// runsCommands are the commands of the runs, one row per run, made by
// converting the logs to no trace (phasetrace.WithSteps): they stand alone.
var runsCommands = map[string]command{
	"steps": {args: "LOG ...", about: `One row per run (the spans of a (pid, inv) with a chip.run root), in the
order the trace numbers them (its run argument), as the run completes: its
identity, host times, device phases, the widest placement bound and whether
it is cold. -table binds gives one row per bind segment instead, joined to
steps on run. Formats: text, csv, json (JSON Lines), parquet (for DuckDB,
Spark, BigQuery). Columns:

` + columnHelp(analysis.StepColumns) + `
binds columns:

` + columnHelp(analysis.BindColumns)},
	"slow": {args: "LOG ...", about: `Per callable, most invoked first, the -top slowest warm runs by chip.run
against the callable's medians over its warm runs, each with the stages and
device phases that took the excess (its duration minus that phase's median;
the largest first). A run is named by its run number in the trace, pid,
dev, inv and start (trace ns) and, with -split N, the part of
"strace2perfetto -split N" that holds it.`},
}

// columnHelp lists columns, one a line, for -h.
func columnHelp(cols []analysis.Column) string {
	var b strings.Builder
	for _, c := range cols {
		fmt.Fprintf(&b, "  %-19s %s\n", c.Name, c.Doc)
	}
	return b.String()
}

// runsConfig is what the command line of steps or slow asks for.
type runsConfig struct {
	cmd     string
	logs    []string
	records []string
	format  analysis.StepFormat
	table   analysis.StepTable
	out     string
	top     int
	split   int
	cold    bool
	strict  bool
	// noBeside: not the records file beside the first log.
	noBeside bool
}

// runRuns is the steps and slow commands.
func runRuns(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cfg, code := parseRuns(args, stdout, stderr)
	if cfg == nil {
		return code
	}
	if len(cfg.logs) == 0 {
		if isTerminal(stdin) {
			fmt.Fprintf(stderr, "stracestat %s: no LOG given, and standard input is a terminal\nRun stracestat %s -h for usage.\n", cfg.cmd, cfg.cmd)
			return exitUsage
		}
		cfg.logs = []string{"-"}
	}
	inputs, cleanup, err := runInputs(cfg.logs, stdin)
	defer cleanup()
	if err != nil {
		fmt.Fprintf(stderr, "stracestat: %v\n", err)
		return exitFail
	}
	var sink rowSink
	var out io.Writer = stdout
	if cfg.out != "" && cfg.out != "-" {
		f, err := os.Create(cfg.out)
		if err != nil {
			fmt.Fprintf(stderr, "stracestat: %v\n", err)
			return exitFail
		}
		defer f.Close()
		out = f
	}
	bw := bufio.NewWriterSize(out, 64<<10)
	if cfg.cmd == "steps" {
		sink = analysis.NewStepWriter(bw, cfg.table, cfg.format)
	} else {
		sink = &slowSink{slow: analysis.NewSlow(cfg.top, cfg.cold), w: bw, split: cfg.split > 0}
	}
	rows := 0
	opts := []phasetrace.Option{phasetrace.WithSteps(func(s *analysis.Step) {
		rows++
		sink.Write(s) // the first error is kept, and returned by Close
	})}
	records := cfg.records
	if beside := cfg.recordsBeside(); beside != "" {
		records = []string{beside}
	}
	for _, r := range records {
		opts = append(opts, phasetrace.WithPhaseRecords(phasetrace.File(r)))
	}
	if cfg.split > 0 {
		opts = append(opts, phasetrace.WithSplit(cfg.split, func(n int) (io.WriteCloser, string, error) {
			return discard{}, filepath.Base(phasetrace.PartName(cli.TraceName(cfg.logs[0]), n)), nil
		}))
	}
	sum, err := phasetrace.Convert(io.Discard, inputs, opts...)
	if err != nil {
		fmt.Fprintf(stderr, "stracestat: %v\n", err)
		return exitFail
	}
	lost := warnInputs(stderr, sum)
	if rows == 0 {
		fmt.Fprintln(stderr, "stracestat: no run with a chip.run root in the logs")
		return exitFail
	}
	err = sink.Close()
	if err == nil {
		err = bw.Flush()
	}
	if err == nil && cfg.out != "" && cfg.out != "-" {
		err = out.(*os.File).Close()
	}
	if err != nil {
		fmt.Fprintf(stderr, "stracestat: %v\n", err)
		return exitFail
	}
	if cfg.strict && lost > 0 {
		fmt.Fprintf(stderr, "stracestat: -strict: %d record(s) lost or log(s) cut; the table is printed\n", lost)
		return exitStrict
	}
	return exitOK
}

// rowSink takes the rows as the runs complete.
type rowSink interface {
	Write(*analysis.Step) error
	Close() error
}

// slowSink gathers the slow table, printed at Close.
type slowSink struct {
	slow  *analysis.Slow
	w     io.Writer
	split bool
}

func (s *slowSink) Write(st *analysis.Step) error { s.slow.Add(st); return nil }
func (s *slowSink) Close() error {
	return analysis.WriteSlow(s.w, s.slow.Result(), s.split)
}

// discard is a part of a split trace that is only counted.
type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
func (discard) Close() error                { return nil }

// recordsBeside is the records file strace2perfetto would use beside the
// logs, "" for none.
func (cfg *runsConfig) recordsBeside() string {
	if cfg.noBeside || len(cfg.records) > 0 {
		return ""
	}
	return cli.RecordsBeside(cfg.logs[0])
}

// runInputs are the logs as the converter reads them, twice: standard
// input is spooled to a temporary file, removed by cleanup.
func runInputs(logs []string, stdin io.Reader) ([]phasetrace.Input, func(), error) {
	cleanup := func() {}
	var ins []phasetrace.Input
	for _, l := range logs {
		if l != "-" {
			if _, err := os.Stat(l); err != nil {
				return nil, cleanup, err
			}
			ins = append(ins, phasetrace.File(l))
			continue
		}
		f, err := os.CreateTemp("", "stracestat-stdin-")
		if err != nil {
			return nil, cleanup, err
		}
		cleanup = func() { os.Remove(f.Name()) }
		_, err = io.Copy(f, stdin)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, cleanup, fmt.Errorf("standard input: %w", err)
		}
		in := phasetrace.File(f.Name())
		in.Name = "-"
		ins = append(ins, in)
	}
	return ins, cleanup, nil
}

// warnInputs warns about what the readers lost and the logs cut, as the
// other commands do, and returns how many (records and cuts).
func warnInputs(stderr io.Writer, sum *phasetrace.Summary) int64 {
	var lost int64
	for _, in := range sum.Inputs {
		n := in.Torn + in.UnknownVersion + in.Malformed + in.LongLines
		if n > 0 {
			fmt.Fprintf(stderr, "stracestat: warning: %s: lost %d record(s) (torn, malformed, of an unknown version or in over-long lines); the table is computed without them\n", in.Name, n)
			for i, p := range in.Problems {
				if i == maxProblems {
					break
				}
				fmt.Fprintf(stderr, "  %s\n", p)
			}
			lost += n
		}
		if in.Cut != "" {
			fmt.Fprintf(stderr, "stracestat: warning: %s: %s after %d bytes; the table is computed from the records before it\n", in.Name, in.Cut, in.CutAfter)
			lost++
		}
	}
	if sum.Incomplete > 0 {
		fmt.Fprintf(stderr, "stracestat: warning: %d run(s) without their root span: no row\n", sum.Incomplete)
	}
	return lost
}

// parseRuns reads the command line of steps or slow.
func parseRuns(args []string, stdout, stderr io.Writer) (*runsConfig, int) {
	cfg := &runsConfig{cmd: args[0], top: 5}
	cmd := runsCommands[cfg.cmd]
	fs := flag.NewFlagSet("stracestat "+cfg.cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	format, table := "text", "steps"
	if cfg.cmd == "steps" {
		fs.StringVar(&format, "format", format, "text, csv, json (JSON Lines) or parquet")
		fs.StringVar(&table, "table", table, "steps (a row per run) or binds (a row per bind segment)")
		fs.StringVar(&cfg.out, "o", "", "write the table to `FILE` (default: standard output)")
	} else {
		fs.IntVar(&cfg.top, "top", cfg.top, "slowest runs shown per callable")
		fs.IntVar(&cfg.split, "split", 0, "name the part of a trace split by strace2perfetto -split `N` that holds each run")
		fs.BoolVar(&cfg.cold, "cold", false, "rank cold runs too (their medians stay the warm runs')")
	}
	fs.Func("records", "host_phase_records.jsonl `file` of the run (repeatable): its passes give their binds' segments", func(v string) error {
		cfg.records = append(cfg.records, v)
		return nil
	})
	fs.BoolVar(&cfg.noBeside, "no-records-beside", false, "do not use the "+cli.RecordsFile+" beside the first log when no -records is given")
	fs.BoolVar(&cfg.strict, "strict", false, "exit 3 when the reader lost records in a log (the table is still printed)")
	showVersion := fs.Bool("version", false, "print the version and exit")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: stracestat %s [flags] %s\n\n%s\n", cfg.cmd, cmd.args, cmd.about)
		fmt.Fprint(stderr, "LOG may be gzip-compressed; \"-\" is standard input. The logs are converted\nas strace2perfetto converts them (with the "+cli.RecordsFile+" beside the first\nlog unless -records or -no-records-beside), to no trace.\n\nExit status: 0 table printed; 1 failure; 2 usage error; 3 with -strict,\ntable printed but the reader lost records or a .gz was cut.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	logs, err := cli.ParseAnywhere(fs, args[1:])
	if errors.Is(err, flag.ErrHelp) {
		return nil, exitOK
	}
	if err != nil {
		return nil, exitUsage
	}
	if *showVersion {
		fmt.Fprintln(stdout, phasetrace.Version("stracestat"))
		return nil, exitOK
	}
	cfg.logs = logs
	if err := cfg.check(format, table); err != nil {
		fmt.Fprintf(stderr, "stracestat %s: %v\nRun stracestat %s -h for usage.\n", cfg.cmd, err, cfg.cmd)
		return nil, exitUsage
	}
	return cfg, exitOK
}

// check validates the flags' values.
func (cfg *runsConfig) check(format, table string) error {
	var err error
	if cfg.format, err = analysis.ParseStepFormat(format); err != nil {
		return fmt.Errorf("-format: %w", err)
	}
	switch table {
	case "steps":
		cfg.table = analysis.TableSteps
	case "binds":
		cfg.table = analysis.TableBinds
	default:
		return fmt.Errorf("-table %q: want steps or binds", table)
	}
	switch {
	case cfg.top < 1:
		return fmt.Errorf("-top %d: want at least 1", cfg.top)
	case cfg.split < 0:
		return fmt.Errorf("-split %d: want a positive slice count", cfg.split)
	}
	stdin := 0
	for _, l := range append(slicesClone(cfg.logs), cfg.records...) {
		if l == "-" {
			stdin++
		}
	}
	if stdin > 1 {
		return errors.New("- (standard input) given more than once")
	}
	return nil
}

func slicesClone(s []string) []string { return append([]string(nil), s...) }
