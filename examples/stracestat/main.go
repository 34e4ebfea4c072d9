// Command stracestat prints the timing tables the runtime's users read
// from a log of [STRACE] spans, with the numbers of the runtime's own
// tools:
//
//	go run ./examples/stracestat tpot LOG...       per-callable chip.run and stage means
//	go run ./examples/stracestat rounds LOG...     per-round Host/Device/Effective/Orch/Sched (µs)
//	go run ./examples/stracestat tree LOG...       median span tree per callable
//	go run ./examples/stracestat overlap [-require-hidden] LOG...
//	go run ./examples/stracestat bind [-ranks N | -rounds N] [-keep-first] LOG...
//	go run ./examples/stracestat compare [-ranks N | -rounds N] [-keep-first] BASE MEASURE [BASE MEASURE ...]
//
// Several LOGs are read as one log, concatenated in order. A LOG may be
// gzip-compressed, and "-" reads standard input. For compare, the logs
// alternate between the two arms in the order they were run (base,
// measure, base, measure); a log holding several runs, each starting with
// its "[stamp]" line, counts as that many repetitions.
//
// The rounds table keeps the layout benchmark scripts parse (a header
// starting "  Round     Host (us)" and an "  Avg Host:" line).
//
// Records the reader could not use (torn, malformed, of an unknown version,
// in over-long lines) are reported on standard error. Exit status: 0 on
// success; 1 when an input cannot be read or holds nothing to analyse; 2
// when the overlap proof fails; 64 on a usage error.
package main

import (
	"bufio"
	"compress/gzip"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/phasetrace/phasetrace/reduce/analysis"
)

// Exit statuses.
const (
	exitOK      = 0
	exitInput   = 1
	exitProof   = 2
	exitUsage   = 64
	maxProblems = 8 // problems listed per log on standard error
)

const usage = `usage: stracestat <command> [flags] LOG ...

commands:
  tpot      per-callable chip.run mean/min/max and per-stage means
  rounds    per-round Host/Device/Effective/Orch/Sched table of the busiest callable
  tree      median span tree per callable, orch ∥ sched under Effective
  overlap   prove bind(N+1) overlaps runner_run(N) and runner_run(N+1) follows claim_release(N)
  bind      bind-segment statistics (control plane = min of per-bind sums)
  compare   interleaved comparison: BASE MEASURE [BASE MEASURE ...]

LOG may be gzip-compressed; "-" is standard input. Run "stracestat <command> -h" for flags.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run is the whole command, with its streams, returning the exit status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	cmd, rest := args[0], args[1:]
	fs := flag.NewFlagSet("stracestat "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	requireHidden := fs.Bool("require-hidden", false, "overlap: also require bind(N+1) to end inside runner_run(N)")
	ranks := fs.Int("ranks", 0, "bind, compare: ranks in the run; one cold bind is dropped per rank (default: one per process)")
	rounds := fs.Int("rounds", 0, "bind, compare: rounds the run was given, to infer the rank count as binds / rounds")
	keepFirst := fs.Bool("keep-first", false, "bind, compare: keep each rank's cold bind in the statistics")
	switch cmd {
	case "tpot", "rounds", "tree", "overlap", "bind", "compare":
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage)
		return exitOK
	default:
		fmt.Fprintf(stderr, "stracestat: unknown command %q\n%s", cmd, usage)
		return exitUsage
	}
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: stracestat %s [flags] LOG ...\n", cmd)
		fs.PrintDefaults()
	}
	if err := fs.Parse(rest); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if fs.NArg() == 0 {
		fmt.Fprintf(stderr, "stracestat %s: no LOG given\n", cmd)
		return exitUsage
	}
	set := make(map[string]bool)
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	for name, only := range map[string]string{"require-hidden": "overlap", "ranks": "bind compare", "rounds": "bind compare", "keep-first": "bind compare"} {
		if set[name] && !strings.Contains(only, cmd) {
			fmt.Fprintf(stderr, "stracestat %s: -%s applies only to %s\n", cmd, name, only)
			return exitUsage
		}
	}
	if *ranks < 0 || *rounds < 0 || (*ranks > 0 && *rounds > 0) {
		fmt.Fprintf(stderr, "stracestat %s: give -ranks or -rounds (positive), not both\n", cmd)
		return exitUsage
	}
	var bindOpts []analysis.BindOption
	if *ranks > 0 {
		bindOpts = append(bindOpts, analysis.WithRanks(*ranks))
	}
	if *rounds > 0 {
		bindOpts = append(bindOpts, analysis.WithRounds(*rounds))
	}
	if *keepFirst {
		bindOpts = append(bindOpts, analysis.WithKeepFirst())
	}

	logs := make([]*analysis.Log, 0, fs.NArg())
	stdinUsed := false
	for _, name := range fs.Args() {
		if name == "-" {
			if stdinUsed {
				fmt.Fprintln(stderr, "stracestat: standard input given twice")
				return exitUsage
			}
			stdinUsed = true
		}
		l, err := load(name, stdin)
		if err != nil {
			fmt.Fprintf(stderr, "stracestat: %v\n", err)
			return exitInput
		}
		reportLosses(stderr, l)
		logs = append(logs, l)
	}

	if cmd == "compare" {
		return compare(logs, bindOpts, stdout, stderr)
	}
	log := logs[0]
	if len(logs) > 1 {
		names := make([]string, len(logs))
		for i, l := range logs {
			names[i] = l.Name
		}
		log = analysis.Concat(strings.Join(names, " "), logs...)
	}
	var err error
	switch cmd {
	case "tpot":
		err = analysis.WriteTPOT(stdout, analysis.AnalyzeTPOT(log.Spans))
	case "rounds":
		err = analysis.WriteRounds(stdout, analysis.AnalyzeRounds(log.Spans))
	case "tree":
		err = analysis.WriteTree(stdout, analysis.AnalyzeTree(log.Spans))
	case "overlap":
		var opts []analysis.OverlapOption
		if *requireHidden {
			opts = append(opts, analysis.WithRequireHidden())
		}
		proof, perr := analysis.ProveOverlap(log.Spans, opts...)
		if perr != nil {
			for _, line := range strings.Split(perr.Error(), "\n") {
				fmt.Fprintf(stderr, "native overlap assertion failed: %s\n", line)
			}
			return exitProof
		}
		err = analysis.WriteOverlap(stdout, proof)
	case "bind":
		st, berr := analysis.AnalyzeBinds(log, bindOpts...)
		if berr != nil {
			fmt.Fprintf(stderr, "stracestat: %v\n", bindAdvice(berr))
			return exitInput
		}
		err = analysis.WriteBinds(stdout, st)
	}
	if err != nil {
		fmt.Fprintf(stderr, "stracestat: %v\n", err)
		return exitInput
	}
	return exitOK
}

func compare(logs []*analysis.Log, opts []analysis.BindOption, stdout, stderr io.Writer) int {
	if len(logs)%2 != 0 {
		fmt.Fprintln(stderr, "stracestat compare: give the logs in pairs, base then measure, in the order they were run")
		return exitUsage
	}
	var base, measure []*analysis.Log
	for i, l := range logs {
		if i%2 == 0 {
			base = append(base, l.Repetitions()...)
		} else {
			measure = append(measure, l.Repetitions()...)
		}
	}
	c, err := analysis.CompareBinds(base, measure, opts...)
	if err != nil {
		fmt.Fprintf(stderr, "stracestat compare: %v\n", err)
		return exitInput
	}
	if err := analysis.WriteComparison(stdout, c); err != nil {
		fmt.Fprintf(stderr, "stracestat: %v\n", err)
		return exitInput
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

// load reads one log, from standard input for "-", decompressing gzip.
func load(name string, stdin io.Reader) (*analysis.Log, error) {
	var r io.Reader
	if name == "-" {
		r = stdin
		name = "<stdin>"
	} else {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	br := bufio.NewReader(r)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		defer zr.Close()
		return analysis.ReadLog(zr, analysis.WithName(name))
	}
	return analysis.ReadLog(br, analysis.WithName(name))
}

// reportLosses says on stderr what the reader could not use.
func reportLosses(stderr io.Writer, l *analysis.Log) {
	s := &l.Stats
	if s.Lost() == 0 {
		return
	}
	var kinds []string
	for _, k := range []struct {
		n    int64
		what string
	}{{s.Torn, "torn"}, {s.Malformed, "malformed"}, {s.UnknownVersion, "of an unknown version"}, {s.InLongLines, "in over-long lines"}} {
		if k.n > 0 {
			kinds = append(kinds, fmt.Sprintf("%d %s", k.n, k.what))
		}
	}
	fmt.Fprintf(stderr, "stracestat: warning: %s: %d record(s) lost (%s) and excluded from the tables", l.Name, s.Lost(), strings.Join(kinds, ", "))
	if lost := s.LostSpans(); lost > 0 {
		fmt.Fprintf(stderr, "; %d of %d [STRACE] records are incomplete", lost, s.Heads.Strace)
	}
	fmt.Fprintln(stderr)
	for i, p := range s.Problems {
		if i == maxProblems {
			break
		}
		fmt.Fprintf(stderr, "  %v\n", p)
	}
	if more := int64(len(s.Problems)-min(len(s.Problems), maxProblems)) + s.ProblemsOmitted; more > 0 {
		fmt.Fprintf(stderr, "  ... and %d more\n", more)
	}
}
