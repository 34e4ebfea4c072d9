// Command stracestat prints the timing tables the runtime's users read
// from a log of [STRACE] spans, with the numbers of the runtime's own
// tools:
//
//	go run ./examples/stracestat tpot [-strict] LOG...      per-callable chip.run and stage means
//	go run ./examples/stracestat rounds [-strict] LOG...    per-round Host/Device/Effective/Orch/Sched (µs)
//	go run ./examples/stracestat tree [-strict] LOG...      median span tree per callable
//	go run ./examples/stracestat overlap [-require-hidden] [-strict] LOG...
//	go run ./examples/stracestat bind [-ranks N | -rounds N] [-keep-first] [-records FILE] [-strict] LOG...
//	go run ./examples/stracestat compare [-ranks N | -rounds N] [-keep-first] [-strict] BASE MEASURE [BASE MEASURE ...]
//	go run ./examples/stracestat steps [-format text|csv|json|parquet] [-table steps|binds] [-o FILE] LOG...
//	go run ./examples/stracestat slow [-top N] [-split N] [-cold] LOG...
//	go run ./examples/stracestat -version
//
// Several tables can come from one read of the logs: give the commands
// joined by commas ("stracestat tpot,rounds,tree run.log"); the tables are
// printed in that order, each as its command alone prints it, and the
// flags are those of every command named. compare, steps and slow stand
// alone. steps (a row per run) and slow (each callable's slowest runs and
// where their time went) convert the logs as strace2perfetto does, to no
// trace, and take the rows the conversion hands over (phasetrace.WithSteps).
// Every command streams the logs in memory that does not hold the spans (see
// the analysis package).
//
// Flags may come before, between or after the logs; -- ends the flags.
// "stracestat <command> -h" lists the command's flags and says what its
// table is. Several LOGs are read as one log, concatenated in order. A LOG
// may be gzip-compressed, and "-" reads standard input; with no LOG,
// standard input is read unless it is a terminal. For compare, the
// logs alternate between the two arms in the order they were run (base,
// measure, base, measure); a log holding several runs, each starting with
// its "[stamp]" line, counts as that many repetitions.
//
// bind takes a bind's segments from the log's chip.run.bind.<segment>
// spans, from legacy "bind phase=" lines (each belongs to the chip.run.bind
// written by the same log thread whose interval contains it) and from
// -records host_phase_records.jsonl files (a pass gives the segments of the
// bind with its pid and inv, and wins over the log's own for the segments
// it has). The records files are read beside the logs, not held: a pass is
// matched to its bind within ten seconds of host time (the runtime writes
// both as the bind ends), and a pass that matches no bind is counted in a
// warning.
//
// Memory grows with the distinct span names (a name's bytes and, past
// them, tens of bytes per table), the invocations (a key each, and a row
// for rounds) and, for tree, the spans (8 bytes each): not with the log's
// bytes or the records files'.
//
// The rounds table keeps the layout benchmark scripts parse (a header
// starting "  Round     Host (us)" and an "  Avg Host:" line).
//
// Records the reader could not use (torn, malformed, of an unknown version,
// in over-long lines) are left out. When one of them is a record the table
// uses (a span; for bind and compare also a [stamp] line, an autoload
// record or a bind phase line), a warning on standard error says how many
// were lost and where the first ones are; clock anchors, which no table
// uses, are not warned about.
//
// A .gz cut short (in its data or its trailer), whose checksum does not
// match or whose compressed data is corrupt is read up to the damage, as
// strace2perfetto reads it (the same cut, in the same words): the table
// is computed from the records before it, a warning says the log was cut,
// and -strict counts it. A process that wrote more than one wall-clock
// anchor ([CLOCK_ANCHOR] v=1; the runtime writes one per process) is
// warned about in strace2perfetto's words, with where the first two are.
//
// # Exit status
//
// As for every command of this module:
//
//	0  the table was printed
//	1  failure: an input cannot be read, it holds nothing to analyse
//	   ("No [STRACE] markers found."), or the overlap proof failed
//	2  usage error: an unknown command or flag, a bad flag value, no LOG
//	   with standard input a terminal, - given twice, compare's logs not
//	   in pairs
//	3  only with -strict: the table was printed, but the reader lost
//	   records (any kind) in a log it was computed from, or a .gz was cut
//	   short
package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/phasetrace/phasetrace"
	"github.com/phasetrace/phasetrace/examples/internal/cli"
	"github.com/phasetrace/phasetrace/reduce/analysis"
	"github.com/phasetrace/phasetrace/strace"
)

// Exit statuses.
const (
	exitOK      = cli.ExitOK     // the table was printed
	exitFail    = cli.ExitFail   // unreadable input, nothing to analyse, failed overlap proof
	exitUsage   = cli.ExitUsage  // bad command, flags or flag values
	exitStrict  = cli.ExitStrict // -strict: the table was printed but records were lost
	maxProblems = 8              // positions listed per log on standard error
)

const usage = `usage: stracestat <command>[,<command>...] [flags] LOG ...
       stracestat -version

commands:
  tpot      per-callable chip.run mean/min/max and per-stage means
  rounds    per-round Host/Device/Effective/Orch/Sched table of the busiest callable
  tree      median span tree per callable, orch ∥ sched under Effective
  overlap   prove bind(N+1) overlaps runner_run(N) and runner_run(N+1) follows claim_release(N)
  bind      bind-segment statistics (control plane = min of per-bind sums)
  compare   interleaved comparison: BASE MEASURE [BASE MEASURE ...]
  steps     one row per run: host times, device phases, bound, cold (text, csv, json, parquet)
  slow      per callable the slowest runs and the stages that took the excess

Commands joined by commas (tpot,rounds,tree) print several tables from one
read of the logs. LOG may be gzip-compressed; "-" is standard input, read
too when no LOG is given and it is not a terminal. Flags may come before,
between or after the logs; -- ends the flags. Run
"stracestat <command> -h" for a command's flags.

Exit status: 0 table printed; 1 failure (unreadable input, nothing to
analyse, failed overlap proof); 2 usage error; 3 with -strict, table
printed but the reader lost records or a .gz was cut.
`

// command is one subcommand: its arguments, what its table is, and which
// flags it takes.
type command struct {
	args  string
	about string
	flags []string // besides -strict and -version
	// bindKinds: the table also uses [stamp] lines, autoload records and
	// bind phase lines, so losing one changes it.
	bindKinds bool
}

var commands = map[string]command{
	"tpot": {args: "LOG ...", about: `Per-callable TPOT table: for each callable (hid; the most invoked is decode,
one seen once is prefill) the invocation count, chip.run mean / min / max and
every stage's mean with its count.`},
	"rounds": {args: "LOG ...", about: `Per-round table of the busiest callable, one row per invocation: Host
(chip.run), Device (device_wall), Effective (orch ∪ sched), Orch and Sched in
µs, then their averages (trimmed past 2·` + fmt.Sprint(analysis.TrimRounds) + ` rounds).`},
	"tree": {args: "LOG ...", about: `Median span tree per callable: each span's median duration over the
callable's invocations, nested by dotted names, with orch ∥ sched side by
side under the median Effective.`},
	"overlap": {args: "LOG ...", flags: []string{"require-hidden"}, about: `Native-overlap proof: on every process lane, bind(N+1) must overlap
runner_run(N) and runner_run(N+1) must not start before claim_release(N).
A failed proof is a failure: the reasons go to standard error, exit 1.`},
	"bind": {args: "LOG ...", flags: []string{"ranks", "rounds", "keep-first", "records"}, bindKinds: true, about: `Bind-segment statistics: per segment min / median / max over the warm binds
(one cold bind per rank dropped), the control-plane total (the minimum of
per-bind sums of host_orch + graph_pack + arena_h2d), on/off-CPU and minflt.
Segments come from chip.run.bind.<segment> spans, from legacy "bind phase="
lines (each belongs to the chip.run.bind of the same log thread whose
interval contains it) and from -records files (a pass wins over the log's
own segments of its bind).`},
	"compare": {args: "BASE MEASURE [BASE MEASURE ...]", flags: []string{"ranks", "rounds", "keep-first"}, bindKinds: true, about: `Interleaved comparison of the bind control plane of two arms: the logs
alternate base, measure in the order they were run; per repetition the
minimum of per-bind sums of each arm and their delta, and a verdict only
when the deltas agree in sign. Then, for the decode callable (the most
invoked), every host stage and device phase: per repetition each arm's
median across its invocations and the delta measure - base, in us, with a
verdict under the same rule.`},
}

// config is what the command line asks for.
type config struct {
	cmd           string   // as given: one command, or several joined by commas
	cmds          []string // the commands, in order
	logs          []string
	requireHidden bool
	ranks, rounds int
	keepFirst     bool
	records       []string
	strict        bool
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run is the whole command, with its streams, returning the exit status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 && runsCommands[args[0]].args != "" {
		return runRuns(args, stdin, stdout, stderr)
	}
	cfg, code := parse(args, stdout, stderr)
	if cfg == nil {
		return code
	}
	if len(cfg.logs) == 0 {
		if isTerminal(stdin) {
			fmt.Fprintf(stderr, "stracestat %s: no LOG given, and standard input is a terminal\nRun stracestat %s -h for usage.\n", cfg.cmd, cfg.cmd)
			return exitUsage
		}
		cfg.logs = []string{"-"} // a pipe or a file: the log
		if err := cfg.check(); err != nil {
			fmt.Fprintf(stderr, "stracestat %s: %v\nRun stracestat %s -h for usage.\n", cfg.cmd, err, cfg.cmd)
			return exitUsage
		}
	}
	var lost losses
	if cfg.streams() {
		code, lost = streamTables(cfg, stdin, stdout, stderr)
	} else {
		code, lost = compareLogs(cfg, stdin, stdout, stderr)
	}
	if code == exitOK && cfg.strict && lost.records > 0 {
		fmt.Fprintf(stderr, "stracestat: -strict: the reader lost %d record(s) (torn, malformed, of an unknown version or in over-long lines); the table is printed\n", lost.records)
		code = exitStrict
	}
	if cfg.strict && lost.cuts > 0 && (code == exitOK || code == exitStrict) {
		fmt.Fprintf(stderr, "stracestat: -strict: %d log(s) cut short; the table is printed\n", lost.cuts)
		code = exitStrict
	}
	return code
}

// losses are what -strict counts: records the reader lost, and .gz files
// cut short or damaged (read up to the damage).
type losses struct {
	records, cuts int64
}

// streams reports whether the commands asked for are computed while the
// logs stream by: all but compare.
func (cfg *config) streams() bool { return cfg.cmd != "compare" }

// spanTable is the streamed table of a command; 0 for the others.
func spanTable(cmd string) analysis.Table {
	switch cmd {
	case "tpot":
		return analysis.TableTPOT
	case "rounds":
		return analysis.TableRounds
	case "tree":
		return analysis.TableTree
	}
	return 0
}

// streamTables computes the span tables, the overlap proof and the bind
// statistics while reading the logs once, in memory that does not hold the
// spans, and prints them in the order asked.
func streamTables(cfg *config, stdin io.Reader, stdout, stderr io.Writer) (code int, lost losses) {
	var c consumers
	var want analysis.Table
	for _, cmd := range cfg.cmds {
		want |= spanTable(cmd)
		switch cmd {
		case "overlap":
			c.ov = analysis.NewOverlap(cfg.overlapOptions()...)
		case "bind":
			// The records files are streamed beside the logs: the binds
			// take their passes as they close. What the files have to say
			// comes after the logs'.
			recs, err := openRecords(cfg.records, stdin)
			if err != nil {
				fmt.Fprintf(stderr, "stracestat: %v\n", err)
				return exitFail, lost
			}
			defer func() {
				n, cuts := recs.finish(stderr)
				lost.records += n
				lost.cuts += cuts
			}()
			names := make([]string, len(cfg.logs))
			for i, l := range cfg.logs {
				names[i] = shownName(l)
			}
			c.binds = analysis.NewBinds(strings.Join(names, " "), cfg.bindOptions(recs.readers()...)...)
		}
	}
	if want != 0 {
		c.tables = analysis.NewTables(analysis.WithTables(want))
	}
	tables, ov := c.tables, c.ov
	// What stays live is small and long-lived (sums, rows, the tree's
	// durations), while parsing leaves garbage fast: collecting at 50%
	// growth keeps the peak near the live heap for ~1% more CPU.
	defer debug.SetGCPercent(debug.SetGCPercent(50))
	for _, name := range cfg.logs {
		st, idx, err := stream(name, stdin, &c)
		if err != nil {
			fmt.Fprintf(stderr, "stracestat: %v\n", err)
			return exitFail, lost
		}
		reportLosses(stderr, st.name, &st.stats, idx, c.binds != nil)
		lost.records += st.stats.Lost()
		lost.cuts += warnCut(stderr, st.name, st.cut)
	}
	if c.walls != nil {
		c.walls.warn(stderr)
	}
	var late int64
	if tables != nil {
		late = tables.Late()
	}
	if ov != nil {
		late = max(late, ov.Late())
	}
	if c.binds != nil {
		late = max(late, c.binds.Late())
	}
	if late > 0 {
		fmt.Fprintf(stderr, "stracestat: warning: %d span(s) came after %d newer invocations had begun; the tables leave them out\n", late, analysis.DefaultMaxOpen)
	}
	return printTables(cfg, &c, stdout, stderr), lost
}

// compareLogs streams each log, computing the bind statistics of each of
// its repetitions, and prints their comparison.
func compareLogs(cfg *config, stdin io.Reader, stdout, stderr io.Writer) (code int, lost losses) {
	defer debug.SetGCPercent(debug.SetGCPercent(50))
	var base, measure []analysis.RepStats
	var baseTrees, measureTrees []*analysis.Tree
	var late, lateSpans int64
	for i, name := range cfg.logs {
		c := consumers{reps: analysis.NewBindRepetitions(shownName(name), cfg.bindOptions()...), phases: analysis.NewPhaseRepetitions()}
		st, idx, err := stream(name, stdin, &c)
		if err != nil {
			fmt.Fprintf(stderr, "stracestat: %v\n", err)
			return exitFail, lost
		}
		reportLosses(stderr, st.name, &st.stats, idx, true)
		lost.records += st.stats.Lost()
		lost.cuts += warnCut(stderr, st.name, st.cut)
		c.walls.warn(stderr)
		late += c.reps.Late()
		lateSpans += c.phases.Late()
		reps := c.reps.Stats()
		for _, r := range reps {
			// The comparison prints each repetition's summary: its
			// per-bind rows need not wait for the other logs.
			r.Stats.Binds, r.Stats.ControlPlane.Totals, r.Stats.Sequences = nil, nil, nil
		}
		if i%2 == 0 {
			base = append(base, reps...)
			baseTrees = append(baseTrees, c.phases.Trees()...)
		} else {
			measure = append(measure, reps...)
			measureTrees = append(measureTrees, c.phases.Trees()...)
		}
	}
	if late > 0 {
		fmt.Fprintf(stderr, "stracestat: warning: %d segment(s) came after %d newer binds had begun; the statistics leave them out\n", late, analysis.MaxOpenBinds)
	}
	if lateSpans > 0 {
		fmt.Fprintf(stderr, "stracestat: warning: %d span(s) came after %d newer invocations had begun; the phase medians leave them out\n", lateSpans, analysis.DefaultMaxOpen)
	}
	code = compare(base, measure, stdout, stderr)
	if code == exitOK {
		code = comparePhases(baseTrees, measureTrees, stdout, stderr)
	}
	return code, lost
}

// parse reads the command line. It returns nil and the exit status when the
// command is over (help, version, or a usage error already reported).
func parse(args []string, stdout, stderr io.Writer) (*config, int) {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return nil, exitUsage
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		if len(args) == 2 {
			if runsCommands[args[1]].args != "" {
				runRuns([]string{args[1], "-h"}, nil, stdout, stderr)
				return nil, exitOK
			}
			if _, ok := commands[args[1]]; ok {
				return parse([]string{args[1], "-h"}, stdout, stderr)
			}
		}
		fmt.Fprint(stdout, usage)
		return nil, exitOK
	case "-version", "--version":
		fmt.Fprintln(stdout, phasetrace.Version("stracestat"))
		return nil, exitOK
	}
	cfg := &config{cmd: args[0]}
	cmd, cmds, err := lookup(cfg.cmd)
	if err != nil {
		fmt.Fprintf(stderr, "stracestat: %v\n%s", err, usage)
		return nil, exitUsage
	}
	cfg.cmds = cmds
	fs := flag.NewFlagSet("stracestat "+cfg.cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	for _, name := range cmd.flags {
		switch name {
		case "require-hidden":
			fs.BoolVar(&cfg.requireHidden, name, false, "also require bind(N+1) to end inside runner_run(N)")
		case "ranks":
			fs.IntVar(&cfg.ranks, name, 0, "ranks in the run; one cold bind is dropped per rank (default: one per process)")
		case "rounds":
			fs.IntVar(&cfg.rounds, name, 0, "rounds the run was given, to infer the rank count as binds / rounds")
		case "keep-first":
			fs.BoolVar(&cfg.keepFirst, name, false, "keep each rank's cold bind in the statistics")
		case "records":
			fs.Func(name, "host_phase_records.jsonl `file` of the run (repeatable); its passes give their binds' segments", func(v string) error {
				cfg.records = append(cfg.records, v)
				return nil
			})
		}
	}
	fs.BoolVar(&cfg.strict, "strict", false, "exit 3 when the reader lost records in a log (the table is still printed)")
	showVersion := fs.Bool("version", false, "print the version and exit")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: stracestat %s [flags] %s\n\n%s\n\n", cfg.cmd, cmd.args, cmd.about)
		fmt.Fprint(stderr, "LOG may be gzip-compressed; \"-\" is standard input, read too when no LOG\nis given and it is not a terminal. Flags may come before, between or after\nthe logs; -- ends the flags.\n\nExit status: 0 table printed; 1 failure; 2 usage error; 3 with -strict,\ntable printed but the reader lost records or a .gz was cut.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	logs, err := cli.ParseAnywhere(fs, args[1:])
	if errors.Is(err, flag.ErrHelp) {
		return nil, exitOK
	}
	if err != nil {
		return nil, exitUsage // the flag package has said why
	}
	if *showVersion {
		fmt.Fprintln(stdout, phasetrace.Version("stracestat"))
		return nil, exitOK
	}
	cfg.logs = logs
	if err := cfg.check(); err != nil {
		fmt.Fprintf(stderr, "stracestat %s: %v\nRun stracestat %s -h for usage.\n", cfg.cmd, err, cfg.cmd)
		return nil, exitUsage
	}
	return cfg, exitOK
}

// lookup finds the command named, or the commands of a comma-separated
// list ("tpot,rounds,tree": several tables from one read of the logs),
// merged into one: the union of their flags, their descriptions in turn.
// compare stands alone.
func lookup(name string) (command, []string, error) {
	if c, ok := commands[name]; ok {
		return c, []string{name}, nil
	}
	names := strings.Split(name, ",")
	var merged command
	var abouts []string
	seen := map[string]bool{}
	for _, n := range names {
		c, ok := commands[n]
		switch {
		case !ok:
			return command{}, nil, fmt.Errorf("unknown command %q", n)
		case n == "compare":
			return command{}, nil, errors.New("compare takes its logs in pairs and cannot be combined with another table")
		case seen[n]:
			return command{}, nil, fmt.Errorf("command %q given twice", n)
		}
		seen[n] = true
		merged.args = c.args
		abouts = append(abouts, n+": "+c.about)
		for _, f := range c.flags {
			if !slices.Contains(merged.flags, f) {
				merged.flags = append(merged.flags, f)
			}
		}
		merged.bindKinds = merged.bindKinds || c.bindKinds
	}
	merged.about = strings.Join(abouts, "\n\n")
	return merged, names, nil
}

// isTerminal reports whether stdin is a terminal: a terminal file, or a
// reader that says it is one (tests).
func isTerminal(stdin io.Reader) bool {
	switch r := stdin.(type) {
	case *os.File:
		return cli.StdinIsTerminal(r)
	case interface{ IsTerminal() bool }:
		return r.IsTerminal()
	}
	return false
}

// check validates the flags' values and the logs named (none: standard
// input, unless it is a terminal).
func (cfg *config) check() error {
	switch {
	case cfg.ranks < 0:
		return fmt.Errorf("-ranks %d: want a positive rank count", cfg.ranks)
	case cfg.rounds < 0:
		return fmt.Errorf("-rounds %d: want a positive round count", cfg.rounds)
	case cfg.ranks > 0 && cfg.rounds > 0:
		return errors.New("give -ranks or -rounds, not both")
	case cfg.cmd == "compare" && len(cfg.logs) > 0 && len(cfg.logs)%2 != 0:
		return errors.New("give the logs in pairs, base then measure, in the order they were run")
	}
	stdin := 0
	for _, l := range append(cfg.logs, cfg.records...) {
		if l == "-" {
			stdin++
		}
	}
	if stdin > 1 {
		return errors.New("- (standard input) given more than once")
	}
	return nil
}

// overlapOptions are the overlap proof's options cfg asks for.
func (cfg *config) overlapOptions() []analysis.OverlapOption {
	if cfg.requireHidden {
		return []analysis.OverlapOption{analysis.WithRequireHidden()}
	}
	return nil
}

// bindOptions are the bind statistics' options cfg asks for.
func (cfg *config) bindOptions(records ...analysis.PassReader) []analysis.BindOption {
	var opts []analysis.BindOption
	if cfg.ranks > 0 {
		opts = append(opts, analysis.WithRanks(cfg.ranks))
	}
	if cfg.rounds > 0 {
		opts = append(opts, analysis.WithRounds(cfg.rounds))
	}
	if cfg.keepFirst {
		opts = append(opts, analysis.WithKeepFirst())
	}
	if len(records) > 0 {
		opts = append(opts, analysis.WithPhaseRecordsFrom(records...))
	}
	return opts
}

// consumers are what the records of the logs are given to while they
// stream by; nil when not asked for.
type consumers struct {
	tables *analysis.Tables
	ov     *analysis.Overlap
	binds  *analysis.Binds
	reps   *analysis.BindRepetitions
	phases *analysis.PhaseRepetitions
	// walls counts the wall-clock anchors of each process; stream makes
	// it.
	walls *wallAnchors
}

// printTables prints the tables cfg asks for, in its order.
func printTables(cfg *config, c *consumers, out, stderr io.Writer) int {
	stdout := bufio.NewWriterSize(out, 64<<10) // a rounds table has a line per invocation
	code := printTablesTo(cfg, c, stdout, stderr)
	if err := stdout.Flush(); err != nil && code == exitOK {
		fmt.Fprintf(stderr, "stracestat: %v\n", err)
		return exitFail
	}
	return code
}

func printTablesTo(cfg *config, c *consumers, stdout, stderr io.Writer) int {
	tables := c.tables
	empty := false
	for _, cmd := range cfg.cmds {
		var err error
		switch cmd {
		case "tpot":
			t := tables.TPOT()
			empty = empty || len(t.Callables) == 0
			err = analysis.WriteTPOT(stdout, t)
		case "rounds":
			r := tables.Rounds()
			empty = empty || r == nil || len(r.Rows) == 0
			err = analysis.WriteRounds(stdout, r)
		case "tree":
			trees := tables.Tree()
			empty = empty || len(trees) == 0
			err = analysis.WriteTree(stdout, trees)
		case "overlap":
			proof, perr := c.ov.Proof()
			if perr != nil {
				// Pair by pair: the joined error's text is as long as
				// the proof.
				failed := []error{perr}
				if slices.ContainsFunc(proof.Pairs, func(p analysis.OverlapPair) bool { return p.Err != nil }) {
					failed = failed[:0]
					for _, p := range proof.Pairs {
						if p.Err != nil {
							failed = append(failed, p.Err)
						}
					}
				}
				ew := bufio.NewWriter(stderr)
				for _, e := range failed {
					for _, line := range strings.Split(e.Error(), "\n") {
						fmt.Fprintf(ew, "native overlap assertion failed: %s\n", line)
					}
				}
				ew.Flush()
				return exitFail
			}
			err = analysis.WriteOverlap(stdout, proof)
		case "bind":
			st, berr := c.binds.Stats()
			if berr != nil {
				fmt.Fprintf(stderr, "stracestat: %v\n", bindAdvice(berr))
				return exitFail
			}
			err = analysis.WriteBinds(stdout, st)
		}
		if err != nil {
			fmt.Fprintf(stderr, "stracestat: %v\n", err)
			return exitFail
		}
	}
	if empty {
		return exitFail // a table said "No [STRACE] markers found."
	}
	return exitOK
}

func compare(base, measure []analysis.RepStats, stdout, stderr io.Writer) int {
	c, err := analysis.CompareRepetitions(base, measure)
	if err != nil {
		fmt.Fprintf(stderr, "stracestat compare: %v\n", err)
		return exitFail
	}
	if err := analysis.WriteComparison(stdout, c); err != nil {
		fmt.Fprintf(stderr, "stracestat: %v\n", err)
		return exitFail
	}
	return exitOK
}

// comparePhases prints, after the comparison, the decode callable's
// phases compared arm by arm.
func comparePhases(base, measure []*analysis.Tree, stdout, stderr io.Writer) int {
	c, err := analysis.ComparePhases(base, measure)
	if err == nil {
		fmt.Fprintln(stdout)
		err = analysis.WritePhaseComparison(stdout, c)
	}
	if err != nil {
		fmt.Fprintf(stderr, "stracestat compare: %v\n", err)
		return exitFail
	}
	return exitOK
}

func bindAdvice(err error) error {
	switch {
	case errors.Is(err, analysis.ErrNoBinds):
		return fmt.Errorf("%w: either SIMPLER_HBG_BIND_BREAKDOWN_ENABLE=1 was not set, or an output run moved the host log into the process-session spool (parse those host.*.log files instead)", err)
	case errors.Is(err, analysis.ErrAllCold):
		return fmt.Errorf("%w: the first bind of each rank is warm-up, so a warm bind needs --rounds 2 or more on the run; -keep-first reports the cold binds instead", err)
	}
	return err
}

// open opens name ("-": standard input), decompressing gzip; close
// releases it. A gzip stream is read through a phasetrace.CutReader, returned as
// cut: a .gz cut short or damaged ends where it can no longer be read.
func open(name string, stdin io.Reader) (r io.Reader, shown string, close func(), cut *phasetrace.CutReader, err error) {
	close = func() {}
	src, shown := stdin, "<stdin>"
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, "", nil, nil, err
		}
		src, shown, close = f, name, func() { f.Close() }
	}
	br := bufio.NewReader(src)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			close()
			return nil, "", nil, nil, fmt.Errorf("%s: %w", shown, err)
		}
		closeFile := close
		cut := phasetrace.NewCutReader(zr)
		return cut, shown, func() { zr.Close(); closeFile() }, cut, nil
	}
	return br, shown, close, nil, nil
}

// warnCut warns that the log name was cut, when it was, and returns 1
// then (a loss -strict counts), 0 otherwise.
func warnCut(stderr io.Writer, name string, cut *phasetrace.CutReader) int64 {
	if cut == nil {
		return 0
	}
	why, _ := cut.Cut()
	if why == "" {
		return 0
	}
	fmt.Fprintf(stderr, "stracestat: warning: %s: %s; the table is computed from the records before it\n", name, why)
	return 1
}

// streamed is what stream says of one log.
type streamed struct {
	name  string
	stats strace.Stats
	cut   *phasetrace.CutReader // nil unless gzip
}

// stream reads one log, from standard input for "-", decompressing gzip,
// giving its records to c as they are read. The index it returns holds
// where the record heads are that the tables do not use (clock anchors;
// without the bind statistics also [stamp] lines, autoload records and
// bind phase lines).
func stream(name string, stdin io.Reader, c *consumers) (streamed, *headIndex, error) {
	r, shown, close, cut, err := open(name, stdin)
	if err != nil {
		return streamed{}, nil, err
	}
	defer close()
	if c.walls == nil {
		c.walls = &wallAnchors{}
	}
	r = &anchorScan{r: r, name: shown, walls: c.walls}
	marks := [][]byte{[]byte("[CLOCK_ANCHOR]")}
	kinds := []strace.Kind{strace.KindSpan, strace.KindBindPhase, strace.KindStamp, strace.KindAutoload}
	if c.binds == nil && c.reps == nil {
		marks = append(marks, []byte("[stamp]"), []byte("bind phase="), []byte("torch_backend_autoload setting="))
		kinds = kinds[:1]
	}
	idx := &headIndex{r: r, marks: marks, at: map[int64]bool{}}
	ra := newReadAhead(idx)
	defer ra.Close()
	rd := strace.NewReader(ra, strace.WithName(shown), strace.WithKinds(kinds...))
	if err := c.read(rd); err != nil {
		return streamed{}, nil, fmt.Errorf("%s: %w", shown, err)
	}
	return streamed{name: shown, stats: rd.Stats(), cut: cut}, idx, nil
}

// read gives every record of rd to the consumers. One alone reads rd
// itself (the tables on a goroutine of their own).
func (c *consumers) read(rd *strace.Reader) error {
	switch {
	case c.reps != nil && c.phases == nil:
		return c.reps.ReadFrom(rd)
	case c.reps != nil || c.phases != nil: // both: record by record, below
	case c.ov == nil && c.binds == nil:
		return c.tables.ReadFrom(rd)
	case c.tables == nil && c.binds == nil:
		return c.ov.ReadFrom(rd)
	case c.tables == nil && c.ov == nil:
		return c.binds.ReadFrom(rd)
	}
	for {
		rec, err := rd.Read()
		if err == io.EOF {
			if c.binds != nil {
				c.binds.Skip(rd.Stats().Bytes)
			}
			return nil
		}
		if err != nil {
			return err
		}
		if rec.Kind == strace.KindSpan {
			if c.tables != nil {
				c.tables.Add(&rec.Span)
			}
			if c.ov != nil {
				c.ov.Add(&rec.Span)
			}
		}
		if c.binds != nil {
			c.binds.Add(&rec)
		}
		if c.reps != nil {
			c.reps.Add(&rec)
		}
		if c.phases != nil {
			c.phases.Add(&rec)
		}
	}
}

// shownName is how a log named on the command line is named in messages.
func shownName(name string) string {
	if name == "-" {
		return "<stdin>"
	}
	return name
}

// readAhead reads its source on a goroutine of its own, a few chunks ahead
// of its reader: decompressing and indexing the log overlap parsing it.
type readAhead struct {
	full, free chan []byte
	stop       chan struct{}
	done       chan struct{}
	chunk      []byte // the chunk being read
	cur        []byte // what is left of it
	err        error  // the source's, after the last chunk
}

const (
	readAheadChunk  = 1 << 20
	readAheadChunks = 4
)

func newReadAhead(src io.Reader) *readAhead {
	ra := &readAhead{
		full: make(chan []byte, readAheadChunks),
		free: make(chan []byte, readAheadChunks),
		stop: make(chan struct{}),
		done: make(chan struct{}),
	}
	for range readAheadChunks {
		ra.free <- make([]byte, readAheadChunk)
	}
	go func() {
		defer close(ra.full)
		defer close(ra.done)
		for {
			var buf []byte
			select {
			case buf = <-ra.free:
			case <-ra.stop:
				return
			}
			n, err := io.ReadFull(src, buf[:cap(buf)])
			if n > 0 {
				ra.full <- buf[:n]
			}
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				return
			}
			if err != nil {
				ra.err = err
				return
			}
		}
	}()
	return ra
}

func (ra *readAhead) Read(p []byte) (int, error) {
	for len(ra.cur) == 0 {
		if ra.chunk != nil {
			ra.free <- ra.chunk
			ra.chunk = nil
		}
		buf, ok := <-ra.full
		if !ok {
			<-ra.done
			if ra.err != nil {
				return 0, ra.err
			}
			return 0, io.EOF
		}
		ra.chunk, ra.cur = buf, buf
	}
	n := copy(p, ra.cur)
	ra.cur = ra.cur[n:]
	return n, nil
}

// Close stops the goroutine reading ahead and waits for it.
func (ra *readAhead) Close() {
	close(ra.stop)
	for range ra.full { // unblock a pending send
	}
	<-ra.done
}

// records is the host_phase_records.jsonl files of a run, open for the
// bind statistics to stream.
type records struct {
	rds   []*strace.PhaseRecordsReader
	shown []string
	cuts  []*phasetrace.CutReader // nil unless gzip
	close []func()
}

// openRecords opens the records files, so that a missing one fails before
// any log is read.
func openRecords(names []string, stdin io.Reader) (*records, error) {
	rs := &records{}
	for _, name := range names {
		r, shown, close, cut, err := open(name, stdin)
		if err != nil {
			rs.finish(io.Discard)
			return nil, err
		}
		rs.rds = append(rs.rds, strace.NewPhaseRecordsReader(r, strace.WithName(shown)))
		rs.shown = append(rs.shown, shown)
		rs.cuts = append(rs.cuts, cut)
		rs.close = append(rs.close, close)
	}
	return rs, nil
}

func (rs *records) readers() []analysis.PassReader {
	out := make([]analysis.PassReader, len(rs.rds))
	for i, rd := range rs.rds {
		out[i] = rd
	}
	return out
}

// finish closes the files, warns about the lines the readers could not
// use and the files cut short, and returns how many of each there were.
func (rs *records) finish(stderr io.Writer) (lost, cuts int64) {
	for i, rd := range rs.rds {
		st := rd.Stats()
		n := st.Torn + st.Malformed + st.LongLines
		lost += n
		if n == 0 {
			continue
		}
		fmt.Fprintf(stderr, "stracestat: warning: %s: %d line(s) lost (%d torn, %d malformed, %d over-long); the binds they held are computed from the log alone\n",
			rs.shown[i], n, st.Torn, st.Malformed, st.LongLines)
		for j, p := range st.Problems {
			if j == maxProblems {
				break
			}
			fmt.Fprintf(stderr, "  %v\n", p)
		}
		if more := n - int64(min(len(st.Problems), maxProblems)); more > 0 {
			fmt.Fprintf(stderr, "  ... and %d more\n", more)
		}
	}
	for i, c := range rs.close {
		cuts += warnCut(stderr, rs.shown[i], rs.cuts[i])
		c()
	}
	rs.rds, rs.close = nil, nil
	return lost, cuts
}

// maxIndexed bounds the heads a headIndex remembers; past it, problems are
// no longer told apart (all are shown).
const maxIndexed = 1 << 20

// headIndex passes a log through and remembers the byte offsets where
// marks begin, so that a problem the reader reports at a record head can be
// told to be about a record the table does not use.
type headIndex struct {
	r     io.Reader
	marks [][]byte
	off   int64  // bytes passed through
	tail  []byte // the last bytes passed, for a mark split between reads
	at    map[int64]bool
	full  bool
}

func (h *headIndex) Read(p []byte) (int, error) {
	n, err := h.r.Read(p)
	if n == 0 || h.full {
		return n, err
	}
	buf := append(h.tail, p[:n]...)
	base := h.off - int64(len(h.tail))
	for _, m := range h.marks {
		for i := 0; ; {
			j := bytes.Index(buf[i:], m)
			if j < 0 {
				break
			}
			h.at[base+int64(i+j)] = true
			i += j + 1
		}
	}
	if len(h.at) >= maxIndexed {
		h.full = true
	}
	h.off += int64(n)
	keep := 0
	for _, m := range h.marks {
		keep = max(keep, len(m)-1)
	}
	h.tail = append(h.tail[:0], buf[max(0, len(buf)-keep):]...)
	return n, err
}

// unused reports whether the reader's problem p is about a record the
// table does not use.
func (h *headIndex) unused(p *strace.SyntaxError) bool {
	return h != nil && !h.full && !errors.Is(p, strace.ErrLineTooLong) && h.at[p.Offset]
}

// reportLosses warns on stderr about the records the reader lost that
// the table would have used: spans, and for the bind tables [stamp] lines,
// autoload records and bind phase lines. Clock anchors are no table's.
func reportLosses(stderr io.Writer, name string, s *strace.Stats, idx *headIndex, bindKinds bool) {
	var parts []string
	total := int64(0)
	add := func(lost, heads int64, what string) {
		if lost > 0 {
			parts = append(parts, fmt.Sprintf("%d of %d %s", lost, heads, what))
			total += lost
		}
	}
	add(s.LostSpans(), s.Heads.Strace, "[STRACE] spans")
	if bindKinds {
		add(s.Heads.Stamp-s.Records.Stamps, s.Heads.Stamp, "[stamp] lines")
		add(s.Heads.Autoload-s.Records.Autoloads, s.Heads.Autoload, "torch_backend_autoload records")
		add(s.Heads.BindPhase-s.Records.BindPhases, s.Heads.BindPhase, "bind phase lines")
	}
	if total == 0 {
		return
	}
	fmt.Fprintf(stderr, "stracestat: warning: %s: lost %s (torn, malformed, of an unknown version or in over-long lines); the table is computed without them\n",
		name, strings.Join(parts, ", "))
	shown := 0
	for _, p := range s.Problems {
		if idx.unused(p) {
			continue
		}
		if shown == maxProblems {
			break
		}
		fmt.Fprintf(stderr, "  %v\n", p)
		shown++
	}
	if more := total - int64(shown); more > 0 && (shown == maxProblems || s.ProblemsOmitted > 0) {
		fmt.Fprintf(stderr, "  ... and %d more\n", more)
	}
}
