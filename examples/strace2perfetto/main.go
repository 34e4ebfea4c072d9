// Command strace2perfetto converts an NPU runtime's logs into one Perfetto
// trace (.pftrace) where host stages, device phases, scheduler hand-offs and
// bind segments sit on one timeline. Open the result in ui.perfetto.dev.
//
//	go run ./examples/strace2perfetto [flags] [LOG ...]
//
// LOG may be - (standard input) or a .gz file. The converter reads every log
// twice, so standard input and any LOG that is not a regular file (a pipe
// such as <(zcat run.log.gz)) are first copied to $TMPDIR. With no LOG it
// reads standard input when that is not a terminal (cat run.log |
// strace2perfetto -o run.pftrace); on a terminal it converts an embedded,
// real-shaped sample — an L3 parent and two chip ranks with device phases,
// clock anchors, hand-offs and bind segments — to phasetrace-sample.pftrace.
// Flags may come before, between or after the logs; -- ends the flags.
//
// Flags:
//
//	-o FILE                    output (default: the first log's name with .pftrace); - is standard output
//	-compare                   two runs in one trace: LOG is BASE MEASURE, each a log or logs joined by commas: see Comparing two runs below
//	-records FILE              host_phase_records.jsonl (repeatable); without it, the one beside the first log is used
//	-no-records-beside         do not use the host_phase_records.jsonl beside the first log
//	-calibration PID:DEV=FILE  clock-calibration samples of a device (repeatable)
//	-summary-json FILE         the conversion summary, machine-readable; - is standard output
//	-compress N                deflate the trace at zlib level N, 1 (fastest) to 9 (smallest); 0: off (default 6)
//	-window A:B                draw only the slices that meet [A, B): see Windows below
//	-split N                   write the trace as parts of at most N slices each (a run larger than that in a part of its own) and an overview: see Big logs below
//	-max-rate-error PPM        the largest rate error of a device counter against the host clock placement assumes (default 100)
//	-rate-stability PPM        how far placement lets a counter's rate move within -rate-horizon (default 10): see Clocks below
//	-rate-horizon DUR          the host time -rate-stability holds over (default 2s)
//	-host-rate-stability PPM   how far a remote host's clock rate may move within -host-rate-horizon (default 10)
//	-host-rate-horizon DUR     the remote host time -host-rate-stability holds over (default 10s)
//	-strict                    exit 3 when the logs did not read clean (Summary.Clean)
//	-q                         no summary on stderr
//	-open                      after converting, open the trace in ui.perfetto.dev (see below)
//	-port N                    the port -open serves the trace on, on 127.0.0.1 (default 9001)
//	-version                   print the command's version and exit
//
// Bad data never costs the trace: records that cannot be used are repaired,
// set aside or dropped and counted. A .gz cut short (in its data or its
// trailer), whose checksum does not match or whose compressed data is
// corrupt is read up to the damage: the records before it are converted,
// the summary says the cut on the log's line (InputSummary.Cut; not
// clean), and -strict counts it. Logs that hold no record the reader can read whole (an empty
// file, a binary, text of another program) are a failure (exit 1), said
// plainly, and neither a trace file nor the -summary-json file is left (a
// trace written in place — standard output, a device, a FIFO — cannot be
// taken back). The summary printed to stderr says what
// was read, what was lost and why, how device spans were placed and where
// the trace is. Progress is shown on large inputs when stderr is a terminal.
//
// # Clocks
//
// Device phases are placed on the host timeline through the clock anchors,
// each with a bound that holds under the placement model's assumptions
// (package reduce, "Published bounds"): by default that the counter's rate
// error against the host clock stays within 100 ppm and moves by at most
// 10 ppm within 2 s of host time — what a host clock NTP slews or a
// crystal warming up does. On a clock known to be steadier (no NTP slewing
// CLOCK_MONOTONIC, a device at temperature), -rate-stability 0.05
// -rate-horizon 60s makes bounds about ten times tighter; if the clock
// moves more than the flags say, the bounds published do not hold. A
// remote host's clock is fitted to the dispatching host's on the same
// model, its rate moving by at most 10 ppm within 10 s
// (-host-rate-stability, -host-rate-horizon).
//
// # Windows
//
// -window A:B writes only the part of the trace in [A, B): each of A and B
// is a trace time in ns (an integer, as the trace's timestamps) or a
// duration after the first slice in Go's syntax (12.5s, 500ms, 1m2s);
// either may be empty, leaving the window open on that side (-window :14s,
// -window 12s:); a window that holds no time, its end not after its start
// in the same unit (2s:1s, 5s:5s), is a usage error. The first slice is
// the earliest start of a host span the
// first pass reads (every depth-0, node. and ext. span) of the logs on
// the trace's own axis (phasetrace.Window). The logs are read whole — every
// clock anchor and run places the slices as without -window — and the
// trace holds exactly the slices of the whole trace that meet the window
// (a slice [ts, ts+dur], its end included: one ending at A is drawn, one
// starting at B is not), with their arrows when both ends are drawn, on
// the tracks drawn on. The summary says the window in trace ns and counts
// the spans outside it ("outside the window asked for"), which are not a
// loss: -strict does not count them. A window with no slice in it writes a trace without slices.
//
// # Comparing two runs
//
// -compare BASE MEASURE writes one trace of a base run and a measure run
// (before and after a change), each side one log or its ranks' logs
// joined by commas (base.log,base.rank1.log), so that the UI shows them
// one above the other (phasetrace.Compare): process tracks named "base ·
// …" and "measure · …", a measure pid that base uses too given a trace
// pid of its own, the measure side moved in time so that its first decode
// step starts with base's (the exact shift is in the summary and in the
// trace's conversion instant), the decode callables' step-time counters
// on one y-axis, and per rank pair a delta counter: measure's i-th decode
// chip.run duration minus base's i-th (the README's Counters names the
// trace's counter tracks). The
// default output is the first base log's name with .compare.pftrace.
// -records, -calibration, -worker and -mpi do not apply.
//
// # Big logs
//
// A log of a few GB makes a trace the UI cannot load (its trace processor
// needs some 20 times the trace's size in memory). To look at one stretch
// of it, -window A:B draws that stretch only; to keep all of it, -split N
// writes the conversion as parts of at most N slices each (a run larger
// than that, with the hand-off that launched it, gets a part of its own:
// -split 1 gives a part per run), every part a trace of its own the UI
// loads alone, and an overview to find the part to load
// (phasetrace.WithSplit):
//
//	strace2perfetto -split 2000000 -o run.pftrace run.log
//
// writes run.part001.pftrace, run.part002.pftrace, ... beside
// run.pftrace, the overview. A part holds whole invocations (a run's host
// spans, device phases and bind segments), those that start in its
// stretch of trace time; the parts' slices add up to the slices of the
// trace written without -split, an arrow between two parts being in
// neither (counted). The overview holds one slice per invocation — its
// root, with a part argument naming the part that holds it — the
// counters, and a "parts" track with one slice per part over the time it
// covers: open the overview, find the moment, and open that part:
//
//	go run ./examples/pftrace open run.part003.pftrace
//
// The summary ends with where the overview and the parts are;
// -summary-json lists the parts (split) with their slices and time. Every
// part is written as the trace is (see Output): to a hidden file, renamed
// into place, the parts before the overview, only when the whole
// conversion succeeded. Parts of an earlier conversion to the same -o
// beyond the last one written are then removed, and said so. -split needs
// the trace in a regular file (not -o - nor a device), and refuses a LOG,
// -records or -calibration file named like a part of the output
// (run.partNNN.pftrace). With -open, the overview is served, and the
// command that opens a part printed.
//
// Memory stays flat for any log size (it grows with threads, strings and
// clock anchors): the command asks Go's garbage collector to keep Go's
// memory within 46 MiB while the live heap is under 31 MiB, then within
// three times the live heap less 46 MiB, which is where the collector
// collects anyway once the live heap passes 46 MiB (debug.SetMemoryLimit);
// with GOMEMLIMIT or GOGC set, the collector follows those instead.
//
// # Output
//
// A regular file (or a symbolic link to one) is written to a hidden file
// beside it and renamed into place only when the trace is complete, so a
// failed or interrupted conversion leaves an earlier file as it was. All
// outputs or none: the -summary-json file is written whole (to its own
// hidden file, or to standard output) before the parts, the trace and it
// are renamed into place, so a summary that cannot be written (a full
// disk) leaves no trace behind. Anything else — a character device such as /dev/null, a FIFO,
// /dev/stdout — is written in place, never replaced. An output or summary
// file that is one of the files read (a LOG, -records, -calibration, or the
// file standard input is when a log is read from it) is refused before
// anything is opened for writing, whatever path leads to it: a symbolic or
// hard link, /dev/stdin, /dev/fd/N, /proc/self/fd/N (files are compared by
// device and inode).
//
// Any signal that ends the process and can be caught (SIGINT, SIGTERM,
// SIGHUP, SIGQUIT, SIGPIPE, ...) stops a conversion: the hidden partial
// output (and parts, with -split) and the copy of standard input are
// removed, and the command exits 1. A second signal ends it at once.
//
// # Opening the trace
//
// With -open the command, once the trace is written, serves it on
// 127.0.0.1:PORT — to ui.perfetto.dev only, that one file only — prints the
// link that opens it in the UI,
//
//	https://ui.perfetto.dev/#!/?url=http://127.0.0.1:9001/run.pftrace&referrer=phasetrace
//
// and opens a browser on it where the system has an opener (xdg-open, open,
// rundll32; without one, open the link yourself). It serves until the UI has
// fetched the whole trace, or until a terminating signal, then exits (0, or
// 3 under -strict). This is what Perfetto's tools/open_trace_in_ui does; see
// package perfetto/open. The port is bound once the trace is written: when
// it is busy the command says so and exits 1, the trace kept. ui.perfetto.dev
// fetches only from port 9001 (its Content-Security-Policy): another -port
// is for a UI that allows it. -open needs the trace in a regular file: not
// -o - nor a device.
//
// # Exit status
//
//	0  a trace was written; the summary says what was repaired or dropped
//	1  failure: an input cannot be read or holds no record, the output or
//	   the summary file cannot be written (all outputs or none: neither is
//	   left), the conversion failed or was interrupted, a stale part could
//	   not be removed (the trace is kept), the -open port is busy (the trace
//	   is kept)
//	2  usage error: an unknown flag, a bad flag value, - given twice, an output
//	   that is one of the inputs, -open or -split without a regular output
//	   file, an input named like a part of the -split output; nothing was
//	   read or written
//	3  only with -strict: the trace was written, but the logs did not read
//	   clean: something was lost, set aside or moved, or a .gz was cut short
//	   (Summary.Clean; the exact repairs of the runtime's own ns truncation,
//	   which any runtime log may need, do not count)
package main

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/phasetrace/phasetrace"
	"github.com/phasetrace/phasetrace/examples/internal/cli"
	"github.com/phasetrace/phasetrace/perfetto"
	"github.com/phasetrace/phasetrace/perfetto/open"
	"github.com/phasetrace/phasetrace/reduce"
)

//go:embed sample.log
var sample []byte

// sampleOut is where the embedded sample is converted to.
const sampleOut = "phasetrace-sample.pftrace"

// Exit statuses.
const (
	exitOK     = cli.ExitOK     // a trace was written
	exitFail   = cli.ExitFail   // I/O failure, unreadable input, interrupted
	exitUsage  = cli.ExitUsage  // bad flags or flag values
	exitStrict = cli.ExitStrict // -strict: the trace was written but the logs did not read clean
)

const usageText = `usage: strace2perfetto [flags] [LOG ...]

Converts runtime logs (- for stdin, .gz accepted) to a Perfetto trace.
With no LOG, reads standard input, or on a terminal converts an embedded
sample to %s. An output that is an input is refused.
Flags may come before, between or after the logs; -- ends the flags.
-o - writes the trace to standard output; devices and FIFOs are written
in place; a regular file is replaced only once the trace is complete.

-open serves the trace to ui.perfetto.dev on 127.0.0.1:9001 once written
and opens a browser on it, until the UI has fetched it or Ctrl-C.

Logs from several machines (an L4 process and its remote L3 worker
daemons) are drawn on the dispatching host's clock, each remote machine
placed by the tasks it ran, with a bound; -worker names which worker a
machine served when the logs do not tell.

-compare BASE MEASURE writes two runs in one trace, each a log or logs
joined by commas: processes named "base · …" and "measure · …", the
measure run moved so that its first decode step starts with base's, and a
per-step counter of measure − base decode chip.run time per rank pair.

-window A:B writes only the slices that meet [A, B), the logs still read
whole: A and B are trace times in ns (integers) or durations after the
first slice (12.5s:14s, 500ms:1.2s); either may be empty (:14s, 12s:).
Spans outside the window are counted, not lost (-strict ignores them).

-split N writes the trace as parts of at most N slices each (a run
larger than that in a part of its own), each a trace the UI can load alone (run.part001.pftrace, ... beside the -o file),
and to the -o file an overview: a slice per invocation naming its part,
and a parts track. Open the overview, then the part you need with
go run ./examples/pftrace open run.part003.pftrace. For one stretch of a
big log, -window A:B; for all of it, -split N.

Exit status: 0 trace written; 1 failure (I/O, unreadable input, no
records, interrupted, -open port busy); 2 usage error; 3 with -strict,
trace written but something was lost, set aside or moved, or a .gz was cut.

Flags:
`

func main() {
	limitHeap()
	c, ctx, stop := mainCommand(os.Stdin, os.Stdout, os.Stderr)
	code := c.run(ctx, os.Args[1:])
	stop()
	os.Exit(code)
}

// mainCommand is the command as main runs it: interrupted by a terminating
// signal until the conversion is over, then released (the summary file is
// still written), and interrupted again while -open serves.
func mainCommand(stdin io.Reader, stdout, stderr io.Writer) (*command, context.Context, context.CancelFunc) {
	ctx, stop, release := releasableSignalContext()
	return &command{stdin: stdin, stdout: stdout, stderr: stderr, file: phasetrace.File, converted: release, serving: signalContext}, ctx, stop
}

// command is the command's surroundings.
type command struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	// file makes the input a named regular file is read from
	// (phasetrace.File; tests replace it).
	file func(path string) phasetrace.Input
	// converted, when set, is called once the conversion is over and the
	// trace in place (main restores default signal handling with it).
	converted func()
	// serving, when set, is the context -open serves the trace in (main:
	// until a signal); without it, the command's context.
	serving func() (context.Context, context.CancelFunc)
	// browser opens a browser on the UI's address (open.StartBrowser when
	// nil; tests replace it).
	browser func(url string) error
	// terminal, when set, says whether standard input is a terminal
	// (tests); without it, stdin is one when it is an *os.File with
	// terminal attributes.
	terminal func() bool
}

// ppmFlag is a flag's value: a rate in ppm, 0 or more, kept in ppb.
func ppmFlag(ppb **int64) func(string) error {
	return func(v string) error {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(f) || f < 0 || f > 500_000 {
			return errors.New("want ppm, 0 to 500000")
		}
		n := int64(math.Round(f * 1000))
		*ppb = &n
		return nil
	}
}

// durationFlag is a flag's value: a duration more than 0, kept in ns.
func durationFlag(ns **int64) func(string) error {
	return func(v string) error {
		d, err := time.ParseDuration(v)
		if err == nil && d <= 0 {
			err = errors.New("want more than 0")
		}
		n := d.Nanoseconds()
		*ns = &n
		return err
	}
}

// hostClock is the remote hosts' clock model's options the flags ask for.
func (cfg *config) hostClock() []reduce.HostFitOption {
	var ho []reduce.HostFitOption
	if cfg.hostStability != nil {
		ho = append(ho, reduce.WithHostRateStability(reduce.PPB(*cfg.hostStability)))
	}
	if cfg.hostHorizon != nil {
		ho = append(ho, reduce.WithHostRateHorizon(reduce.HostNanos(*cfg.hostHorizon)))
	}
	return ho
}

// placement is the placement model's options the flags ask for.
func (cfg *config) placement() []reduce.PlacerOption {
	var po []reduce.PlacerOption
	if cfg.maxRate != nil {
		po = append(po, reduce.WithMaxRateError(reduce.PPB(*cfg.maxRate)))
	}
	if cfg.stability != nil {
		po = append(po, reduce.WithRateStability(reduce.PPB(*cfg.stability)))
	}
	if cfg.horizon != nil {
		po = append(po, reduce.WithRateHorizon(reduce.HostNanos(*cfg.horizon)))
	}
	return po
}

// stdinIsTerminal reports whether standard input is a terminal: with no
// LOG the command reads standard input unless it is one.
func (c *command) stdinIsTerminal() bool {
	if c.terminal != nil {
		return c.terminal()
	}
	f, ok := c.stdin.(*os.File)
	return ok && cli.StdinIsTerminal(f)
}

// config is what the command line asks for.
type config struct {
	logs        []string
	out         string
	records     []string
	calibration []calibration
	summaryJSON string
	compress    int
	quiet       bool
	strict      bool
	open        bool
	port        int
	version     bool
	// noBeside turns off picking up the host_phase_records.jsonl beside
	// the first log.
	noBeside bool
	// workers names which worker_id a remote machine's logs served
	// (-worker), mpi that frames went over MPI (-mpi).
	workers []remoteWorker
	mpi     bool
	// window is what -window asks for (nil: the whole trace).
	window *phasetrace.Window
	// split is the most slices a part holds (-split; 0: one trace).
	split int
	// compare: the logs are two runs' (-compare), the first baseLogs of
	// them base's.
	compare  bool
	baseLogs int
	// The placement model's assumptions, where given (-max-rate-error,
	// -rate-stability in ppb, -rate-horizon in ns), and the remote hosts'
	// (-host-rate-stability, -host-rate-horizon).
	maxRate, stability, horizon *int64
	hostStability, hostHorizon  *int64
}

type remoteWorker struct {
	name string
	id   int64
}

type calibration struct {
	pid  int32
	dev  int64
	file string
}

// parse reads the command line. It returns nil and the exit status when the
// command is over (help, or a usage error already reported).
func parse(args []string, stderr io.Writer) (*config, int) {
	var cfg config
	fs := flag.NewFlagSet("strace2perfetto", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.BoolVar(&cfg.compare, "compare", false, "two runs in one trace: the logs are `BASE MEASURE`, each a log or logs joined by commas, the measure run moved onto base's first decode step")
	fs.StringVar(&cfg.out, "o", "", "output trace `file`, - for standard output (default: the first log's name with .pftrace)")
	fs.Func("records", "host_phase_records.jsonl `file` (repeatable)", func(v string) error {
		cfg.records = append(cfg.records, v)
		return nil
	})
	fs.Func("calibration", "clock-calibration samples of a device, as `PID:DEV=FILE` (repeatable)", func(v string) error {
		c, err := parseCalibration(v)
		if err == nil {
			cfg.calibration = append(cfg.calibration, c)
		}
		return err
	})
	fs.Func("worker", "a remote machine (its daemon banner's name, or one of its logs) and the worker_id whose tasks it ran, as `MACHINE=ID`, where the logs do not tell (repeatable)", func(v string) error {
		name, id, ok := strings.Cut(v, "=")
		n, err := strconv.ParseInt(id, 10, 64)
		if !ok || name == "" || err != nil {
			return errors.New("want MACHINE=ID, ID an integer")
		}
		cfg.workers = append(cfg.workers, remoteWorker{name, n})
		return nil
	})
	fs.BoolVar(&cfg.mpi, "mpi", false, "remote workers' frames went over MPI: a remote run is only known to follow its network1.dispatch's start (default: a socket, after its end)")
	fs.Func("window", "draw only the slices that meet `A:B`: each a trace time in ns or a duration after the first slice (12.5s, 500ms); either may be empty (:14s, 12s:)", func(v string) error {
		w, err := phasetrace.ParseWindow(v)
		if errors.Is(err, phasetrace.ErrWindowEmpty) {
			return errors.New("the window is empty: want its end after its start")
		}
		if err != nil {
			return errors.New("want A:B, each a trace time in ns (an integer), a duration after the first slice (12.5s, 500ms) or empty")
		}
		cfg.window = &w
		return nil
	})
	fs.Func("split", "write the trace as parts of at most `N` slices each, a run larger than that in a part of its own (run.part001.pftrace, ... beside the -o file) and to the -o file an overview that names the part of each invocation", func(v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return errors.New("want a number of slices, 1 or more")
		}
		cfg.split = n
		return nil
	})
	fs.Func("max-rate-error", "the largest rate error of a device counter against the host clock the placement assumes, in `ppm` (default 100)", ppmFlag(&cfg.maxRate))
	fs.Func("rate-stability", "how far the placement lets a counter's rate move within -rate-horizon, in `ppm` (default 10); a steady clock (host clock not slewed) may take 0.05 with -rate-horizon 60s for bounds ten times tighter", ppmFlag(&cfg.stability))
	fs.Func("rate-horizon", "the host time over which -rate-stability holds (default 2s)", durationFlag(&cfg.horizon))
	fs.Func("host-rate-stability", "how far a remote host's clock rate may move against the dispatching host's within -host-rate-horizon, in `ppm` (default 10)", ppmFlag(&cfg.hostStability))
	fs.Func("host-rate-horizon", "the remote host time over which -host-rate-stability holds (default 10s)", durationFlag(&cfg.hostHorizon))
	fs.StringVar(&cfg.summaryJSON, "summary-json", "", "write the conversion summary as JSON to `file`, - for standard output")
	fs.IntVar(&cfg.compress, "compress", perfetto.DefaultCompressionLevel, "deflate the trace at zlib `level`, 1 (fastest) to 9 (smallest); 0: off")
	fs.BoolVar(&cfg.strict, "strict", false, "exit 3 when anything was lost, set aside or moved, or a log was cut (the trace is still written)")
	fs.BoolVar(&cfg.quiet, "q", false, "print no summary")
	fs.BoolVar(&cfg.open, "open", false, "once written, serve the trace to ui.perfetto.dev on 127.0.0.1 and open a browser on it, until the UI has fetched it or Ctrl-C")
	fs.IntVar(&cfg.port, "port", open.DefaultPort, "the `port` -open serves the trace on (the UI fetches only from 9001)")
	fs.BoolVar(&cfg.version, "version", false, "print the version and exit")
	fs.BoolVar(&cfg.noBeside, "no-records-beside", false, "do not use the "+cli.RecordsFile+" beside the first log when no -records is given")
	fs.Usage = func() {
		fmt.Fprintf(stderr, usageText, sampleOut)
		fs.PrintDefaults()
	}
	logs, err := cli.ParseAnywhere(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return nil, exitOK
	}
	if err != nil {
		return nil, exitUsage // the flag package has said why
	}
	cfg.logs = logs
	err = cfg.sides()
	if err == nil {
		err = cfg.check()
	}
	if err != nil {
		fmt.Fprintf(stderr, "strace2perfetto: %v\nRun strace2perfetto -h for usage.\n", err)
		return nil, exitUsage
	}
	return &cfg, exitOK
}

// check validates the values of the flags, before anything is read.
func (cfg *config) check() error {
	if cfg.compress < 0 || cfg.compress > 9 {
		return fmt.Errorf("-compress %d: want a zlib level from 0 (off) to 9", cfg.compress)
	}
	stdin := 0
	for _, l := range cfg.logs {
		if l == "-" {
			stdin++
		}
	}
	if stdin > 1 {
		return errors.New("- (standard input) given more than once")
	}
	if cfg.out == "-" && cfg.summaryJSON == "-" {
		return errors.New("-o - and -summary-json - both name standard output")
	}
	if cfg.port < 0 || cfg.port > 65535 {
		return fmt.Errorf("-port %d: want 0 to 65535", cfg.port)
	}
	if cfg.open && cfg.out == "-" {
		return errors.New("-open serves a trace file: not with -o -")
	}
	if cfg.split > 0 && cfg.out == "-" {
		return errors.New("-split writes the parts beside the overview's file: not with -o -")
	}
	return nil
}

// parseCalibration parses PID:DEV=FILE.
func parseCalibration(v string) (calibration, error) {
	key, file, ok := strings.Cut(v, "=")
	p, d, ok2 := strings.Cut(key, ":")
	if !ok || !ok2 || file == "" {
		return calibration{}, errors.New("want PID:DEV=FILE")
	}
	pv, err1 := strconv.ParseInt(p, 10, 32)
	dv, err2 := strconv.ParseInt(d, 10, 64)
	if err1 != nil || err2 != nil {
		return calibration{}, errors.New("PID and DEV must be integers")
	}
	return calibration{pid: int32(pv), dev: dv, file: file}, nil
}

func (c *command) run(ctx context.Context, args []string) int {
	cfg, code := parse(args, c.stderr)
	if cfg == nil {
		return code
	}
	if cfg.version {
		fmt.Fprintln(c.stdout, phasetrace.Version("strace2perfetto"))
		return exitOK
	}
	return c.convert(ctx, cfg)
}

// fail reports err and returns code.
func (c *command) fail(code int, err error) int {
	fmt.Fprintln(c.stderr, "strace2perfetto:", err)
	return code
}

// convert checks the files named, converts and writes the trace, then the
// summary, stage by stage: the inputs' defaults, the outputs' names and
// checks (plan), opening them, reading the inputs, converting, putting the
// outputs in place (commit, settle), the summary on stderr (report), and
// -open (serve).
func (c *command) convert(ctx context.Context, cfg *config) int {
	c.defaults(cfg)
	j, code, err := c.plan(ctx, cfg)
	if err != nil {
		return c.fail(code, err)
	}
	defer j.abort()
	if err := j.open(cfg.summaryJSON, c.stdout); err != nil {
		return c.fail(exitFail, err)
	}
	logs, records, remove, err := c.readInputs(ctx, cfg, j.read)
	if err != nil {
		return c.fail(exitFail, interrupted(ctx, err))
	}
	sum, err := c.convertLogs(ctx, cfg, j, logs, records)
	remove()
	if err == nil {
		err = ctx.Err() // interrupted after the last read: keep nothing
	}
	noRecords := err == nil && empty(sum)
	if err == nil && !noRecords {
		err = j.commit(sum)
	}
	stale, staleErr := j.settle(err == nil && !noRecords)
	if c.converted != nil {
		c.converted()
	}
	switch {
	case err != nil:
		if sum != nil && !cfg.quiet {
			sum.WriteText(c.stderr)
		}
		return c.fail(exitFail, interrupted(ctx, err))
	case noRecords:
		return c.noRecords(cfg, j, sum)
	case !cfg.quiet:
		c.report(cfg, j, sum, stale)
	}
	code = exitOK
	if staleErr != nil {
		code = c.fail(exitFail, fmt.Errorf("%w; the trace is written: %s", staleErr, j.out))
	}
	if code == exitOK && cfg.strict && !sum.Clean() {
		if !cfg.quiet {
			fmt.Fprintln(c.stderr, "strace2perfetto: -strict: records were lost, set aside or moved, or a log was cut (see the summary); the trace is kept")
		}
		code = exitStrict
	}
	if (code == exitOK || code == exitStrict) && cfg.open {
		code = c.serve(ctx, cfg, j, code)
	}
	return code
}

// defaults completes the inputs the command line leaves out: standard
// input when it is not a terminal and no LOG is given, and the records
// beside the first log.
func (c *command) defaults(cfg *config) {
	if len(cfg.logs) == 0 && !c.stdinIsTerminal() {
		cfg.logs = []string{"-"} // a pipe or a file: the log, not the sample
	}
	if beside := recordsBeside(cfg); beside != "" {
		cfg.records = []string{beside}
		if !cfg.quiet {
			fmt.Fprintf(c.stderr, "using %s beside the log (-no-records-beside to leave it out)\n", beside)
		}
	}
}

// job is one conversion's files: those it reads, and the outputs it puts
// in place together or not at all.
type job struct {
	read   []namedFile // the inputs (checkInputs)
	out    string      // the trace's name (-o, or after the first log)
	split  *parts      // -split's parts, nil without -split
	dst    *output     // the trace (the overview with -split)
	sumDst *output     // the -summary-json file, put in place with the trace
}

// plan checks the files named before any is opened for writing: the
// inputs can be read, no output is one of them, and -open and -split have
// a regular file to write. On error it returns the exit status to give.
func (c *command) plan(ctx context.Context, cfg *config) (*job, int, error) {
	read, err := checkInputs(cfg, c.stdin)
	if err != nil {
		return nil, exitFail, err
	}
	j := &job{read: read, out: outputName(cfg)}
	if err := clash(read, c.written(j.out, cfg.summaryJSON)); err != nil {
		return nil, exitUsage, err
	}
	if cfg.open {
		if _, inPlace, err := resolveOutput(j.out); err == nil && inPlace {
			return nil, exitUsage, fmt.Errorf("-open serves a trace file: -o %s is not a regular file", j.out)
		}
	}
	if cfg.split > 0 {
		if _, inPlace, err := resolveOutput(j.out); err == nil && inPlace {
			return nil, exitUsage, fmt.Errorf("-split writes the parts beside the overview's file: -o %s is not a regular file", j.out)
		}
		if err := checkParts(read, j.out, cfg.summaryJSON); err != nil {
			return nil, exitUsage, err
		}
		j.split = &parts{ctx: ctx, out: j.out, read: read}
	}
	return j, exitOK, nil
}

// outputName is the trace's name: -o, or the sample's, or after the first
// log.
func outputName(cfg *config) string {
	switch {
	case cfg.out != "":
		return cfg.out
	case len(cfg.logs) == 0:
		return sampleOut
	case cfg.compare:
		return strings.TrimSuffix(cli.TraceName(cfg.logs[0]), ".pftrace") + ".compare.pftrace"
	}
	return cli.TraceName(cfg.logs[0])
}

// open opens the trace's output and the -summary-json file, if any.
func (j *job) open(summaryJSON string, stdout io.Writer) error {
	var err error
	if j.dst, err = openOutput(j.out, stdout); err != nil {
		return err
	}
	if summaryJSON != "" {
		if j.sumDst, err = openOutput(summaryJSON, stdout); err != nil {
			return fmt.Errorf("-summary-json: %w; no trace written", err)
		}
	}
	return nil
}

// readInputs makes the logs and the -records files the converter's inputs
// (both read twice: standard input and pipes are copied first), with the
// function that removes the copies.
func (c *command) readInputs(ctx context.Context, cfg *config, read []namedFile) (logs, records []phasetrace.Input, remove func(), err error) {
	logs, removeCopies, err := c.inputs(ctx, cfg, read)
	if err != nil {
		return nil, nil, nil, err
	}
	records, removeRecords, err := c.files(ctx, cfg.records, read[len(cfg.logs):])
	if err != nil {
		removeCopies()
		return nil, nil, nil, err
	}
	return logs, records, func() {
		removeCopies()
		removeRecords()
	}, nil
}

// convertLogs converts the logs into the job's trace (and parts).
func (c *command) convertLogs(ctx context.Context, cfg *config, j *job, logs, records []phasetrace.Input) (*phasetrace.Summary, error) {
	opts, progress := c.options(ctx, cfg, records)
	if j.split != nil {
		opts = append(opts, phasetrace.WithSplit(cfg.split, j.split.open))
	}
	sum, err := cfg.convert(interruptibleWriter{ctx, j.dst}, logs, opts)
	if progress {
		fmt.Fprint(c.stderr, "\r               \r")
	}
	return sum, err
}

// commit puts the outputs in place, all or none: the summary is written
// whole before anything is put in place, the parts before the overview
// that names them.
func (j *job) commit(sum *phasetrace.Summary) error {
	if j.sumDst != nil {
		if err := writeSummary(j.sumDst, sum); err != nil {
			return fmt.Errorf("-summary-json: %w; no trace written", err)
		}
	}
	if j.split != nil {
		if err := j.split.commit(); err != nil {
			return err
		}
	}
	if err := j.dst.commit(); err != nil {
		return err
	}
	if j.sumDst != nil {
		return j.sumDst.commit()
	}
	return nil
}

// settle removes the outputs not put in place and, once the conversion is
// in place (done), the parts of an earlier conversion beyond the last one
// written, which it returns.
func (j *job) settle(done bool) (stale []string, err error) {
	j.dst.abort() // no records: nothing is left behind
	if j.sumDst != nil {
		j.sumDst.abort()
	}
	if done && j.split != nil {
		stale, err = removeStale(j.out, len(j.split.files))
	}
	if j.split != nil {
		j.split.abort()
	}
	return stale, err
}

// abort removes every output not put in place.
func (j *job) abort() {
	if j.sumDst != nil {
		j.sumDst.abort()
	}
	if j.dst != nil {
		j.dst.abort()
	}
	if j.split != nil {
		j.split.abort()
	}
}

// noRecords says that the logs held no record, and what was left of the
// trace, and returns the failure's exit status.
func (c *command) noRecords(cfg *config, j *job, sum *phasetrace.Summary) int {
	if !cfg.quiet {
		sum.WriteText(c.stderr)
	}
	what := "no trace written"
	if j.dst.target == "" { // standard output, a device, a FIFO
		what = "an empty trace was written to " + j.dst.name
	}
	return c.fail(exitFail, fmt.Errorf("the input held no [STRACE], [CLOCK_ANCHOR] or bind phase record that could be read: %s", what))
}

// report writes the summary of a conversion put in place to stderr, and
// where the trace is.
func (c *command) report(cfg *config, j *job, sum *phasetrace.Summary, stale []string) {
	sum.WriteText(c.stderr)
	if len(cfg.logs) == 0 {
		fmt.Fprintln(c.stderr, "(the embedded sample ends with a record the runtime was killed in the middle of, on purpose: it shows how a torn record is counted)")
	}
	if j.split == nil {
		fmt.Fprintf(c.stderr, "trace: %s (open it in https://ui.perfetto.dev)\n", j.dst.name)
		return
	}
	if len(stale) > 0 {
		fmt.Fprintf(c.stderr, "removed %d stale %s of an earlier conversion: %s\n", len(stale), plural(len(stale), "part"), fileRange(stale))
	}
	fmt.Fprintln(c.stderr, splitSummary(j.out, sum))
}

// serve serves the trace written to the UI (-open) and returns the exit
// status, code unless serving fails. The port is bound once the trace is
// written: a busy port costs the link, never the trace.
func (c *command) serve(ctx context.Context, cfg *config, j *job, code int) int {
	ln, err := open.Listen(cfg.port)
	if err != nil {
		return c.fail(exitFail, fmt.Errorf("-open: %w; the trace is written: %s", err, j.dst.name))
	}
	if j.split != nil && len(j.split.files) > 0 {
		fmt.Fprintf(c.stderr, "open a part with: go run ./examples/pftrace open %s\n", cli.ShellQuote(phasetrace.PartName(j.out, 1)))
	}
	sctx := ctx
	if c.serving != nil {
		var stop context.CancelFunc
		sctx, stop = c.serving()
		defer stop()
	}
	if err := serveTrace(sctx, ln, j.out, c.stderr, c.browser); err != nil {
		code = c.fail(exitFail, fmt.Errorf("-open: %w", err))
	}
	return code
}

// interrupted says so when err is the end of an interrupted conversion.
func interrupted(ctx context.Context, err error) error {
	switch {
	case ctx.Err() == nil:
		return err
	case errors.Is(err, ctx.Err()):
		return errors.New("interrupted: no trace written, partial files removed")
	}
	return fmt.Errorf("interrupted: no trace written, partial files removed; before that: %w", err)
}

// recordsBeside is the host_phase_records artifact beside the first log
// that a conversion takes when given none, "" for none.
func recordsBeside(cfg *config) string {
	if cfg.noBeside || cfg.compare || len(cfg.records) > 0 || len(cfg.logs) == 0 {
		return ""
	}
	return cli.RecordsBeside(cfg.logs[0])
}

// empty reports whether the logs held no record the reader could read
// whole: an empty file, a binary, text of another program. Record heads
// it lost (a torn or malformed record) do not make a log.
func empty(sum *phasetrace.Summary) bool {
	for _, in := range sum.Inputs {
		for _, n := range in.Records {
			if n > 0 {
				return false
			}
		}
	}
	return true
}

// options are the converter's options for cfg, with the -records inputs
// records (recordInputs), and whether they show progress.
func (c *command) options(ctx context.Context, cfg *config, records []phasetrace.Input) (opts []phasetrace.Option, progress bool) {
	for _, r := range records {
		opts = append(opts, phasetrace.WithPhaseRecords(r))
	}
	for _, cal := range cfg.calibration {
		opts = append(opts, phasetrace.WithCalibration(cal.pid, cal.dev, interruptible(ctx, c.file(cal.file))))
	}
	if cfg.compress != 0 {
		opts = append(opts, phasetrace.WithWriterOptions(perfetto.WithCompression(cfg.compress)))
	}
	for _, w := range cfg.workers {
		opts = append(opts, phasetrace.WithRemoteWorker(w.name, w.id))
	}
	if cfg.mpi {
		opts = append(opts, phasetrace.WithTransport(phasetrace.TransportMPI))
	}
	if cfg.window != nil {
		opts = append(opts, phasetrace.WithWindowOf(*cfg.window))
	}
	if po := cfg.placement(); len(po) > 0 {
		opts = append(opts, phasetrace.WithPlacement(po...))
	}
	if ho := cfg.hostClock(); len(ho) > 0 {
		opts = append(opts, phasetrace.WithHostClock(ho...))
	}
	if isTerminal(c.stderr) && !cfg.quiet {
		total := int64(0)
		for _, l := range cfg.logs {
			if st, err := os.Stat(l); err == nil && st.Mode().IsRegular() {
				total += 2 * st.Size() // two passes
			}
		}
		if total > 64<<20 {
			opts = append(opts, phasetrace.WithProgress(func(read int64) {
				fmt.Fprintf(c.stderr, "\rconverting: %3d%%", min(100, read*100/total))
			}))
			progress = true
		}
	}
	return opts, progress
}

// inputs are the converter's inputs for the logs: named regular files as
// they are; standard input and other files that can be read only once are
// copied to $TMPDIR first, since the converter reads every log twice. The
// function returned removes the copies. A .gz cut short is read up to the
// cut, which the summary counts (InputSummary.Cut).
func (c *command) inputs(ctx context.Context, cfg *config, read []namedFile) ([]phasetrace.Input, func(), error) {
	if len(cfg.logs) == 0 {
		return []phasetrace.Input{interruptible(ctx, phasetrace.Bytes("embedded sample", sample))}, func() {}, nil
	}
	return c.files(ctx, cfg.logs, read)
}

// files are the paths as inputs (read: their namedFile entries, in
// order): "-" (standard input) and a file that is not a regular file (a
// pipe) copied to $TMPDIR, since they are read twice, each read
// interruptible by ctx; with the function that removes the copies.
func (c *command) files(ctx context.Context, paths []string, read []namedFile) ([]phasetrace.Input, func(), error) {
	var removes []func()
	remove := func() {
		for _, r := range removes {
			r()
		}
		removes = nil
	}
	var inputs []phasetrace.Input
	for i, p := range paths {
		var in phasetrace.Input
		var err error
		var rm func()
		switch {
		case p == "-":
			in, rm, err = spool(ctx, "stdin", func() (io.ReadCloser, error) { return io.NopCloser(c.stdin), nil })
		case !read[i].info.Mode().IsRegular():
			in, rm, err = spool(ctx, p, func() (io.ReadCloser, error) { return os.Open(p) })
		default:
			in = c.file(p)
		}
		if err != nil {
			remove()
			return nil, nil, err
		}
		if rm != nil {
			removes = append(removes, rm)
		}
		inputs = append(inputs, interruptible(ctx, in))
	}
	return inputs, remove, nil
}

// writeSummary writes the summary as JSON to dst and closes its file,
// which commit then puts in place: what can fail, a full disk, fails
// before any output is in place.
func writeSummary(dst *output, sum *phasetrace.Summary) error {
	b, err := json.MarshalIndent(sum, "", "  ")
	if err != nil {
		return err
	}
	if _, err := dst.Write(append(b, '\n')); err != nil {
		return err
	}
	if dst.f != nil {
		if err := dst.closeFile(); err != nil {
			return fmt.Errorf("%s: %w", dst.name, cause(err))
		}
	}
	return nil
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
