// Command pftrace inspects Perfetto traces (.pftrace) without the UI, and
// opens them in it.
//
//	go run ./examples/pftrace check FILE ...
//	go run ./examples/pftrace stats FILE
//	go run ./examples/pftrace slices [-name GLOB] [-track GLOB] [-from NS] [-to NS] [-min-dur NS] [-arg KEY=VALUE ...] [-sort dur|ts|name] [-top N] FILE
//	go run ./examples/pftrace dump FILE
//	go run ./examples/pftrace open [-port N] FILE
//
// Every trace is read by package perfetto/check, the way Perfetto's trace
// processor reads it. check, stats, slices and open read it as a stream
// (check.Reader), in memory that does not grow with the trace — some
// 50 MB, where dump, which holds the whole trace, takes 1.2–1.6 KB a slice
// (0.6–0.8 GB for a 100 MB log's) — sorting its events in temporary files
// in $TMPDIR (at most about three times the trace's size; six for slices,
// which keeps the arguments), removed at the end. Output is aligned
// columns for people; -json (every
// subcommand but open) writes one JSON document for scripts, with argument
// values in their own JSON type (integers, unsigned 64-bit integers exactly,
// booleans, floats, strings, objects, arrays). In the human output an
// argument is name=value with the value as written: inv=3, ok=true,
// hid="9f3c". Flags may come before, between or after the files; -- ends
// the flags. "pftrace SUBCOMMAND -h" lists that subcommand's flags.
//
// # Subcommands
//
// check FILE ... prints one line per problem the trace processor would
// report (its stat name, the packet and the detail), prefixed by the file's
// name, as it finds them, and "FILE: ok" for a clean trace; a file found
// not to be a trace past its first problems prints its error after them.
// It exits 1 when any file has a
// problem or cannot be read, so it can gate CI. A file that holds no packet
// (an empty file) is not a trace, and a compressed bundle that inflates
// past 256 MiB is an error, never read in part.
//
// stats FILE prints the number of tracks, slices, instants, flows and
// counter values, then the same per process and per track (a track counts
// the flows that start or end on its slices). When FILE is the overview of
// a split trace (phasetrace.WithSplit: run.pftrace beside its parts
// run.part001.pftrace, run.part002.pftrace, ...), a table of the parts
// follows, by part number: each part's number, name, slices, invocations,
// the trace time it covers (start and end, ns) and whether its file is
// beside FILE ("ok" or "missing"), then the command that opens the first
// one ("pftrace open DIR/run.part001.pftrace", DIR being FILE's directory).
// The overview is recognized by its parts track: a top-level track named
// "parts" (phasetrace.PartsTrack), or one of its overflow lanes ("parts
// (overflow 1)"), whose slices carry an integer part argument. With -json
// the object has a "parts" array then, each part with the same fields and
// its "path" and whether it "exists"; for any other trace there is neither
// the table nor the array.
//
// slices FILE lists slices, like a quick SQL query: each one's start,
// duration, process (the pid of its thread, or of the process its track
// is under; "-" for none, and no "pid" in JSON), track, name and
// arguments. With no flag, every slice:
//
//	-name GLOB      only slices whose name or full_name argument matches (path.Match syntax: * ? [a-z], where * and ? match / too)
//	-track GLOB     only slices on tracks whose name matches ("orchestrator / *")
//	-from NS        only slices that end at or after NS (trace time, ns)
//	-to NS          only slices that start at or before NS
//	-min-dur NS     only slices that last at least NS (unended slices always do)
//	-arg KEY=VALUE  only slices with an argument KEY whose value prints as VALUE, as
//	                slices prints it (-arg inv=42, -arg ok=true; a string also unquoted,
//	                -arg hid=9f3c; a dictionary's entry as DICT.KEY, -arg seg.on=200);
//	                repeatable, every one must match
//	-sort KEY       order by dur (longest first), ts (default) or name (then ts)
//	-top N          print the first N only (0: all)
//	-json           JSON array of slices
//
// With -top N, slices holds N rows at most, whatever the trace's length;
// without, it holds every row it selects until it prints them sorted.
//
// When filters select none of the trace's slices, slices says so on
// standard error and exits 1 (like grep), after the empty table or array;
// a trace without slices is said to be one (exit 0).
//
// dump FILE prints check.Trace.Dump: the clock, the track tree with each
// track's slices nested by depth, counters, flows and problems — with
// unsigned argument values as plain numbers (inv=3, where Dump writes 3u).
// With -json it prints the same as one JSON object. It reads the whole
// trace into memory first: for a large trace, stats and slices.
//
// open FILE serves the trace on 127.0.0.1 to ui.perfetto.dev, prints the
// link that opens it there and opens a browser on it (xdg-open, open,
// rundll32, where there is one), until the UI has fetched the whole trace
// or Ctrl-C; see package perfetto/open. -port N serves on another port
// (default 9001, the only one ui.perfetto.dev fetches from).
//
// # Flags of the command
//
//	-version   print the version (from the build information) and exit
//	-h         print the usage
//
// # Exit status
//
//	0  done; check found no problem; open served the trace or was stopped
//	1  failure: a file cannot be read or is not a trace (holds no packet),
//	   check found problems, the filters of slices matched no slice, the
//	   port of open is busy
//	2  usage error: no or unknown subcommand, an unknown flag, a bad flag
//	   value, a wrong number of files
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/phasetrace/phasetrace"
	"github.com/phasetrace/phasetrace/examples/internal/cli"
	"github.com/phasetrace/phasetrace/perfetto/check"
)

// Exit statuses.
const (
	exitOK    = cli.ExitOK
	exitFail  = cli.ExitFail
	exitUsage = cli.ExitUsage
)

const usageText = `usage: pftrace SUBCOMMAND [flags] FILE ...

Inspects Perfetto traces as the trace processor reads them.

  check FILE ...  problems the trace processor would report; exit 1 on any
  stats FILE      tracks, slices, flows and counters, per process and track;
                  the parts of a split trace's overview
  slices FILE     slices filtered by name, track, time, duration and
                  argument, sorted, with their process
  dump FILE       the whole trace as text, read into memory
  open FILE       serve the trace to ui.perfetto.dev and open a browser

Flags may come anywhere; -json for machine-readable output.
"pftrace SUBCOMMAND -h" lists a subcommand's flags. pftrace -version
prints the version.

Exit status: 0 ok; 1 failure or problems found; 2 usage error.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := (&command{stdout: os.Stdout, stderr: os.Stderr}).run(ctx, os.Args[1:])
	stop()
	os.Exit(code)
}

// command is the command's surroundings.
type command struct {
	stdout, stderr io.Writer
	// browser opens a browser on the UI's address (open.StartBrowser when
	// nil; tests replace it).
	browser func(url string) error
	// readerOptions are added to those of every check.Reader (tests make
	// it sort in temporary files with them).
	readerOptions []check.Option
}

// subcommand is one of pftrace's subcommands.
type subcommand struct {
	args  string // what follows the flags in the usage line
	about string
	files func(n int) bool
	// flags declares the subcommand's flags on fs and returns what runs it
	// once they are parsed.
	flags func(c *command, fs *flag.FlagSet) func(ctx context.Context, files []string) int
}

var subcommands map[string]subcommand

func init() {
	one := func(n int) bool { return n == 1 }
	subcommands = map[string]subcommand{
		"check":  {"FILE ...", "prints the problems the trace processor would report; exits 1 on any", func(n int) bool { return n > 0 }, checkFlags},
		"stats":  {"FILE", "counts tracks, slices, flows and counter values, per process and per track, and lists the parts of a split trace's overview", one, statsFlags},
		"slices": {"FILE", "lists slices with their process, filtered and sorted; it holds the rows it prints (with -top N, N of them)", one, slicesFlags},
		"dump":   {"FILE", "prints the whole trace as the trace processor reads it, holding all of it in memory (stats and slices do not)", one, dumpFlags},
		"open":   {"FILE", "serves the trace to ui.perfetto.dev and opens a browser on it, until the UI has fetched it or Ctrl-C", one, openFlags},
	}
}

// run is the whole command, returning the exit status.
func (c *command) run(ctx context.Context, args []string) int {
	if len(args) == 0 {
		fmt.Fprint(c.stderr, usageText)
		return exitUsage
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(c.stderr, usageText)
		return exitOK
	case "-version", "--version", "version":
		fmt.Fprintln(c.stdout, phasetrace.Version("pftrace"))
		return exitOK
	}
	sub, ok := subcommands[args[0]]
	if !ok {
		fmt.Fprintf(c.stderr, "pftrace: unknown subcommand %q\n\n%s", args[0], usageText)
		return exitUsage
	}
	name := args[0]
	fs := flag.NewFlagSet("pftrace "+name, flag.ContinueOnError)
	fs.SetOutput(c.stderr)
	runSub := sub.flags(c, fs)
	showVersion := fs.Bool("version", false, "print the version and exit")
	fs.Usage = func() {
		fmt.Fprintf(c.stderr, "usage: pftrace %s [flags] %s\n\nThe %s subcommand %s.\nFlags may come before, between or after the files.\n\nFlags:\n", name, sub.args, name, sub.about)
		fs.PrintDefaults()
	}
	files, err := cli.ParseAnywhere(fs, args[1:])
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		return exitUsage // the flag package has said why
	}
	if *showVersion {
		fmt.Fprintln(c.stdout, phasetrace.Version("pftrace"))
		return exitOK
	}
	if !sub.files(len(files)) {
		fmt.Fprintf(c.stderr, "pftrace %s: want %s, got %d files\nRun pftrace %s -h for usage.\n", name, sub.args, len(files), name)
		return exitUsage
	}
	return runSub(ctx, files)
}

// usage reports a bad flag value.
func (c *command) usage(sub string, err error) int {
	fmt.Fprintf(c.stderr, "pftrace %s: %v\nRun pftrace %s -h for usage.\n", sub, err, sub)
	return exitUsage
}

// fail reports err and returns exitFail.
func (c *command) fail(err error) int {
	fmt.Fprintln(c.stderr, "pftrace:", err)
	return exitFail
}
