// Command loggen writes a realistic NPU runtime log, so that the other
// commands can be tried without the runtime: an L3 parent driving chip
// ranks, with device phases, clock anchors, scheduler hand-offs and bind
// segments, its device side simulated consistently (package
// strace/stracetest). The same flags always give the same bytes.
//
//	go run ./examples/loggen [flags]
//
// By default it writes about 100 MB of log to standard output in the shape
// the converter's benchmarks measure (stracetest.Realistic): two chip ranks,
// rank 0 pipelined, rank 1 logging its bind breakdown as legacy lines and
// wrapped by an external producer, device clock anchors every 100 ms.
//
// Flags:
//
//	-o FILE           output (default: standard output; - too); an existing FILE is refused without -f
//	-f                overwrite an existing FILE
//	-size N           about how long the log is: 100MB, 1GB, 512KiB, 0.5GB or plain bytes (default 100MB);
//	                  at least one round (see below)
//	-ranks N          chip ranks, 2 to 64 (default 2); ranks past the second run plainly
//	-seed N           the seed everything is drawn from (default 99)
//	-anchors DUR      host time between device clock anchors, 10ms or more, such as 100ms or 1s; 0: none;
//	                  launch: one read just before every run (default 100ms)
//	-sparse-anchors   anchors only every 2 s, and an idle second after every fourth round
//	-drift-ppm F      the ranks' counter drift, -100 to 100: rank 0 F ppm fast, rank 1 wandering
//	                  slowly within ±F ppm (default 0: the generator's own, 23 and -41 ppm, and
//	                  7 ppm more for each further rank, within ±60); with -remote, the remote
//	                  machines' clock drift, alternately +F and -F ppm
//	-rate-steps PPM   every counter's rate drawn anew every -rate-step-every (default 2s) within
//	                  ±PPM of its drift, as a host clock NTP slews does
//	-rate-wander PPM  every counter's rate wandering along a sine of ±PPM around its drift,
//	                  period -rate-wander-period (default 60s), as a warming crystal does
//	                  (the two together at most 40 ppm, or 100 less |F|: every counter within
//	                  100 ppm; the converter's model assumes the rate moves by at most 10 ppm
//	                  within 2 s, so steps past ±5 ppm want strace2perfetto -rate-stability)
//	-pipelined        rank 0 binds run N+1 while run N is on the device (default true; -pipelined=false: off)
//	-remote N         a dispatching host's log and the logs of N remote machines, 1 to 64 (needs -o FILE)
//	-damage KIND      damage the log as real logs are damaged (see below; kinds of the log may be
//	                  joined by commas)
//	-gz               gzip-compress the output
//	-version          print the command's version and exit
//
// Sizes count in powers of 1024: KB and KiB, MB and MiB, GB and GiB alike.
// The size is that of the uncompressed log (all logs, with -remote): a log
// is whole rounds, a round or two past -size; -size 100MB gives the bytes
// the converter's benchmarks were measured on (BenchmarkConvertFile). A
// -size smaller than the first round is refused (the message says how
// large that is: 13 KB with the defaults). A round runs every rank in
// turn, about 40 ms each, and a device anchor of every rank falls every
// -anchors: a round's bytes grow with the ranks and with the anchors per
// rank, which is why -ranks stops at 64 and -anchors at 10ms (a round of
// 64 ranks with anchors every 10ms is about 6 MB, made in about a second).
// The logs of -remote are made in memory (about 6 bytes of memory a byte
// of log), and a remote machine's device anchors run the whole log: -remote
// stops at 64 machines and its -size at 64MB. A .gz to damage is made in
// memory too (twice the compressed log): its -size stops at 512MB.
//
// # Damage
//
// Kinds of the log (stracetest.Config's knobs). The reader recovers every
// record of joined, shared-line and unterminated (the log still reads
// clean: Summary.Clean); the converter counts what the others cost
// (strace2perfetto -strict exits 3):
//
//	torn-anchors   every third device clock anchor cut inside its record
//	cut-at-end     the log ends inside its last record, as a log copied while being written
//	joined         about 1 % of the records run into the next (no line end), as two ranks writing one stream
//	shared-line    now and then two records on one line, as forked ranks sharing one stderr
//	unterminated   no line end after the last record (it is whole)
//	quirks         a torn last record, records sharing a line and CRLF line ends, as the bundled sample
//
// Kinds of the .gz (with -gz; stracetest.DamageGzip's, but corrupt-data's
// byte is chosen without a search), which the converter reads up to the
// damage:
//
//	half           the compressed file cut in half
//	no-trailer     its CRC-32 and size missing
//	half-a-trailer half of them missing
//	bad-checksum   a CRC-32 that does not match
//	corrupt-data   the header of a block from the middle on made invalid (block type 3), so that the data does not inflate
//
// A damaged .gz is compressed in memory before it is damaged: it needs
// memory for the compressed log (about a fifth of the log) twice.
//
// # Remote machines
//
// With -remote N the command writes an L4 run whose workers are L3 worker
// daemons on N other machines (stracetest.GenerateRemote), each machine on
// its own clock: FILE is the dispatching host's log, and STEM.remote1.log
// to STEM.remoteN.log (.log.gz with -gz) are the machines' (machine1 to
// machineN), STEM being FILE less its .gz and .log. It prints the
// strace2perfetto command that converts them; the logs say which worker
// each machine served (its daemon banner and its tasks), so it needs no
// -worker flag, and the frames went over a socket, so no -mpi. The logs
// are made in memory before they are written.
//
// # Examples
//
//	go run ./examples/loggen -size 100MB -o /tmp/mid.log && go run ./examples/strace2perfetto -o /tmp/mid.pftrace /tmp/mid.log
//	go run ./examples/loggen -size 1GB -o /tmp/big.log && /usr/bin/time -v go run ./examples/strace2perfetto -o /tmp/big.pftrace /tmp/big.log
//	go run ./examples/loggen -size 10MB | go run ./examples/stracestat rounds
//	go run ./examples/loggen -size 10MB -damage joined,cut-at-end -o /tmp/bad.log && go run ./examples/strace2perfetto -strict /tmp/bad.log
//	go run ./examples/loggen -size 10MB -gz -damage half -o /tmp/half.log.gz && go run ./examples/strace2perfetto /tmp/half.log.gz
//	go run ./examples/loggen -size 10MB -remote 2 -o /tmp/l4.log   # prints the strace2perfetto command for the three logs
//	go run ./examples/pftrace stats /tmp/mid.pftrace
//
// Standard output is refused when it is a terminal. On an error, or when
// interrupted (SIGINT, SIGTERM, SIGHUP), the files the command was writing
// are removed.
//
// # Exit status
//
//	0  the log (or logs) written
//	1  failure: an output file exists (without -f), cannot be written, or
//	   the command was interrupted; nothing is left of the output files
//	2  usage error: an unknown flag, a bad flag value, an unknown -damage
//	   kind, a flag that does not apply (-remote with -damage, -ranks,
//	   -sparse-anchors or -pipelined; a .gz kind without -gz; -remote
//	   without -o FILE), a -size below the first round's bytes or above
//	   what is made in memory, standard output a terminal; nothing was
//	   written
package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/phasetrace/phasetrace"
	"github.com/phasetrace/phasetrace/examples/internal/cli"
	"github.com/phasetrace/phasetrace/strace/stracetest"
)

// Exit statuses.
const (
	exitOK    = cli.ExitOK    // the log was written
	exitFail  = cli.ExitFail  // I/O failure, an existing output, interrupted
	exitUsage = cli.ExitUsage // bad flags or flag values
)

const usageText = `usage: loggen [-o FILE] [-size N] [-ranks N] [-seed N] [-anchors DUR] [-sparse-anchors]
              [-drift-ppm F] [-pipelined] [-remote N] [-damage KIND] [-gz]

Writes a realistic runtime log (about -size bytes, 100MB by default) to
FILE or standard output, to try strace2perfetto, stracestat and pftrace
on. The same flags always give the same bytes. An existing FILE is
refused without -f. Sizes: 100MB, 1GB, 512KiB, plain bytes (powers of 1024).
A log is whole rounds: a -size below the first round is refused. Time and
memory stay bounded: -ranks 2 to 64, -anchors 10ms or more, -remote up to
64 machines and 64MB, a damaged .gz up to 512MB.

-remote N writes FILE, the dispatching host's log, and STEM.remote1.log
... STEM.remoteN.log, and prints the strace2perfetto command for them.

-damage KIND, kinds of the log (may be joined by commas):
%s
kinds of the .gz (with -gz):
%s
Exit status: 0 written; 1 failure (an existing FILE, I/O, interrupted);
2 usage error.

Flags:
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	c := &command{stdout: os.Stdout, stderr: os.Stderr, terminal: func() bool { return cli.StdinIsTerminal(os.Stdout) }}
	code := c.run(ctx, os.Args[1:])
	stop()
	os.Exit(code)
}

// command is the command's surroundings.
type command struct {
	stdout, stderr io.Writer
	// terminal says whether standard output is a terminal.
	terminal func() bool
}

// damage is a -damage kind.
type damage struct {
	name, help string
	set        func(*stracetest.Config) // a kind of the log
	gz         string                   // a kind of the .gz: stracetest.DamageGzip's name
}

var damages = []damage{
	{name: "torn-anchors", help: "every third device clock anchor cut inside its record", set: func(c *stracetest.Config) { c.TornAnchors = true }},
	{name: "cut-at-end", help: "the log ends inside its last record", set: func(c *stracetest.Config) { c.CutAtEnd = true }},
	{name: "joined", help: "about 1 % of the records run into the next (no line end; still reads clean)", set: func(c *stracetest.Config) { c.JoinRate = 0.01 }},
	{name: "shared-line", help: "now and then two records on one line (still reads clean)", set: func(c *stracetest.Config) { c.SharedLine = true }},
	{name: "unterminated", help: "no line end after the last record (still reads clean)", set: func(c *stracetest.Config) { c.Unterminated = true }},
	{name: "quirks", help: "a torn last record, records sharing a line, CRLF line ends", set: func(c *stracetest.Config) { c.Quirks = true }},
	{name: "half", help: "the compressed file cut in half", gz: "half"},
	{name: "no-trailer", help: "its CRC-32 and size missing", gz: "no trailer"},
	{name: "half-a-trailer", help: "half of them missing", gz: "half a trailer"},
	{name: "bad-checksum", help: "a CRC-32 that does not match", gz: "bad checksum"},
	{name: "corrupt-data", help: "a block's header from the middle on made invalid", gz: "corrupt data"},
}

// damageList lists the kinds of the log (gz false) or of the .gz.
func damageList(gz bool) string {
	var b strings.Builder
	for _, d := range damages {
		if (d.gz != "") == gz {
			fmt.Fprintf(&b, "  %-15s %s\n", d.name, d.help)
		}
	}
	return b.String()
}

// config is what the command line asks for.
type config struct {
	out       string
	force     bool
	size      int64
	ranks     int
	seed      uint64
	anchors   time.Duration
	perLaunch bool // -anchors launch
	sparse    bool
	driftPPM  float64
	rate      stracetest.RateChange
	pipelined bool
	remote    int
	damage    []damage // kinds of the log
	gzDamage  string   // a kind of the .gz (stracetest.DamageGzip's name)
	gz        bool
	version   bool
}

// parse reads the command line. It returns nil and the exit status when the
// command is over (help, or a usage error already reported).
func parse(args []string, stderr io.Writer) (*config, int) {
	def := stracetest.Realistic(0)
	cfg := config{size: 100 << 20, ranks: 2}
	fs := flag.NewFlagSet("loggen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.out, "o", "", "output `file`, - for standard output (default: standard output)")
	fs.BoolVar(&cfg.force, "f", false, "overwrite an existing output file")
	fs.Func("size", "about how many bytes of log: 100MB, 1GB, 512KiB, plain bytes (default 100MB)", func(v string) error {
		n, err := parseSize(v)
		cfg.size = n
		return err
	})
	fs.IntVar(&cfg.ranks, "ranks", cfg.ranks, "chip ranks, 2 to 64")
	fs.Uint64Var(&cfg.seed, "seed", def.Seed, "the seed everything is drawn from")
	cfg.anchors = time.Duration(def.AnchorEvry)
	fs.Func("anchors", "host time between device clock anchors, 10ms or more, such as 100ms (0: none), or launch: one before every run (default 100ms)", func(v string) error {
		if v == "launch" {
			cfg.anchors, cfg.perLaunch = 0, true
			return nil
		}
		d, err := time.ParseDuration(v)
		cfg.anchors, cfg.perLaunch = d, false
		return err
	})
	fs.BoolVar(&cfg.sparse, "sparse-anchors", def.SparseAnchors, "device anchors only every 2 s, and an idle second after every fourth round")
	fs.Float64Var(&cfg.driftPPM, "drift-ppm", def.DriftPPM, "the ranks' counter drift in ppm, rank 0's constant, rank 1's varying (0: the generator's own); with -remote, the machines' clocks' (alternately + and -)")
	fs.Float64Var(&cfg.rate.StepPPM, "rate-steps", 0, "every counter's rate drawn anew every -rate-step-every within ±`PPM` of its drift")
	fs.Func("rate-step-every", "host time between the rate's steps (default 2s; whole 100 ms)", durationNs(&cfg.rate.StepEvery))
	fs.Float64Var(&cfg.rate.WanderPPM, "rate-wander", 0, "every counter's rate wandering along a sine of ±`PPM` around its drift")
	fs.Func("rate-wander-period", "the wander's period (default 60s)", durationNs(&cfg.rate.WanderPeriod))
	fs.BoolVar(&cfg.pipelined, "pipelined", def.Pipelined, "rank 0 binds run N+1 while run N is on the device")
	fs.IntVar(&cfg.remote, "remote", 0, "write a dispatching host's log and the logs of `N` remote machines (1 to 64; -size at most 64MB)")
	fs.Func("damage", "damage the log as real logs are damaged: `KIND`, see above", func(v string) error {
		for _, name := range strings.Split(v, ",") {
			i := indexDamage(name)
			if i < 0 {
				return fmt.Errorf("unknown kind %q (loggen -h lists them)", name)
			}
			if d := damages[i]; d.gz != "" {
				if cfg.gzDamage != "" || strings.Contains(v, ",") {
					return fmt.Errorf("a .gz kind (%s) stands alone", name)
				}
				cfg.gzDamage = d.gz
			} else {
				cfg.damage = append(cfg.damage, d)
			}
		}
		return nil
	})
	fs.BoolVar(&cfg.gz, "gz", false, "gzip-compress the output")
	fs.BoolVar(&cfg.version, "version", false, "print the version and exit")
	fs.Usage = func() {
		fmt.Fprintf(stderr, usageText, damageList(false), damageList(true))
		fs.PrintDefaults()
	}
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		return nil, exitOK
	}
	if err != nil {
		return nil, exitUsage // the flag package has said why
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if err := cfg.check(fs.Args(), set); err != nil {
		fmt.Fprintf(stderr, "loggen: %v\nRun loggen -h for usage.\n", err)
		return nil, exitUsage
	}
	return &cfg, exitOK
}

func indexDamage(name string) int {
	for i, d := range damages {
		if d.name == name {
			return i
		}
	}
	return -1
}

// check validates the values of the flags, before anything is written.
func (cfg *config) check(args []string, set map[string]bool) error {
	switch {
	case len(args) > 0:
		return fmt.Errorf("unexpected argument %q: loggen reads no file", args[0])
	case cfg.ranks < 2 || cfg.ranks > maxRanks:
		return fmt.Errorf("-ranks %d: want 2 to %d", cfg.ranks, maxRanks)
	case cfg.anchors < 0 || cfg.anchors > 0 && cfg.anchors < minAnchors:
		return fmt.Errorf("-anchors %v: want 0 (none), launch, or %v or more", cfg.anchors, minAnchors)
	case cfg.remote > 0 && cfg.size > maxRemoteSize:
		return fmt.Errorf("-size %s: -remote makes its logs in memory: want at most %s", formatSize(cfg.size), formatSize(maxRemoteSize))
	case cfg.gzDamage != "" && cfg.size > maxGzDamageSize:
		return fmt.Errorf("-size %s: a .gz kind of -damage makes the .gz in memory: want at most %s", formatSize(cfg.size), formatSize(maxGzDamageSize))
	case math.IsNaN(cfg.driftPPM) || math.Abs(cfg.driftPPM) > maxPPM:
		return fmt.Errorf("-drift-ppm %v: want -100 to 100 (real counters stay within 100 ppm, as the converter assumes)", cfg.driftPPM)
	case math.IsNaN(cfg.rate.StepPPM) || math.IsNaN(cfg.rate.WanderPPM) || cfg.rate.StepPPM < 0 || cfg.rate.WanderPPM < 0 ||
		cfg.rate.MaxPPM() > maxPPM-max(math.Abs(cfg.driftPPM), stracetest.MaxRankDriftPPM):
		return fmt.Errorf("-rate-steps %v, -rate-wander %v: want each 0 or more, together at most %v ppm (every counter within 100 ppm)",
			cfg.rate.StepPPM, cfg.rate.WanderPPM, maxPPM-max(math.Abs(cfg.driftPPM), stracetest.MaxRankDriftPPM))
	case cfg.rate.StepEvery < 0 || cfg.rate.WanderPeriod < 0:
		return errors.New("-rate-step-every and -rate-wander-period: want more than 0")
	case cfg.remote < 0 || cfg.remote > maxRemote:
		return fmt.Errorf("-remote %d: want 0 to %d machines", cfg.remote, maxRemote)
	case cfg.gzDamage != "" && !cfg.gz:
		return errors.New("-damage of a .gz needs -gz")
	}
	if cfg.remote > 0 {
		for _, f := range []string{"damage", "ranks", "sparse-anchors", "pipelined", "rate-steps", "rate-step-every", "rate-wander", "rate-wander-period"} {
			if set[f] {
				return fmt.Errorf("-%s does not apply with -remote", f)
			}
		}
		if cfg.out == "" || cfg.out == "-" {
			return errors.New("-remote writes several logs: give -o FILE")
		}
	}
	return nil
}

// The bounds that keep a round's bytes, and the memory a log is made in,
// bounded (see the package doc).
const (
	maxRanks        = 64
	minAnchors      = 10 * time.Millisecond
	maxRemote       = 64
	maxRemoteSize   = 64 << 20
	maxGzDamageSize = 512 << 20
)

// formatSize writes n bytes as parseSize reads them, in the largest unit
// it is a whole number of.
func formatSize(n int64) string {
	for _, u := range []struct {
		name string
		size int64
	}{{"TB", 1 << 40}, {"GB", 1 << 30}, {"MB", 1 << 20}, {"KB", 1 << 10}} {
		if n >= u.size && n%u.size == 0 {
			return fmt.Sprintf("%d%s", n/u.size, u.name)
		}
	}
	if n >= 10<<10 {
		return fmt.Sprintf("%d KB", (n+1<<10-1)>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// maxPPM is the largest rate error a generated counter or clock has: real
// ones stay within 100 ppm, the placement model's maximum.
const maxPPM = 100

// durationNs is a flag's value: a duration, as ns, more than 0.
func durationNs(ns *int64) func(string) error {
	return func(v string) error {
		d, err := time.ParseDuration(v)
		if err == nil && d <= 0 {
			err = errors.New("want more than 0")
		}
		*ns = d.Nanoseconds()
		return err
	}
}

// sizeRE is a size: a number and an optional unit.
var sizeRE = regexp.MustCompile(`^([0-9]+(?:\.[0-9]*)?)\s*([kKmMgGtT]?)(i?[bB])?$`)

// parseSize parses a size such as 100MB, 1GB, 512KiB, 0.5GB or 1048576
// (units are powers of 1024).
func parseSize(v string) (int64, error) {
	m := sizeRE.FindStringSubmatch(strings.TrimSpace(v))
	if m == nil || m[2] == "" && strings.HasPrefix(m[3], "i") {
		return 0, errors.New("want bytes, or a number with KB, MB, GB or TB (KiB, MiB, ... alike)")
	}
	unit := int64(1)
	switch strings.ToLower(m[2]) {
	case "k":
		unit = 1 << 10
	case "m":
		unit = 1 << 20
	case "g":
		unit = 1 << 30
	case "t":
		unit = 1 << 40
	}
	if !strings.Contains(m[1], ".") {
		n, err := strconv.ParseInt(m[1], 10, 64)
		if err != nil || n > math.MaxInt64/unit {
			return 0, errors.New("too large")
		}
		return n * unit, nil
	}
	f, err := strconv.ParseFloat(m[1], 64)
	if err != nil || f*float64(unit) >= math.MaxInt64 {
		return 0, errors.New("too large")
	}
	return int64(math.Round(f * float64(unit))), nil
}

func (c *command) run(ctx context.Context, args []string) int {
	cfg, code := parse(args, c.stderr)
	if cfg == nil {
		return code
	}
	if cfg.version {
		fmt.Fprintln(c.stdout, phasetrace.Version("loggen"))
		return exitOK
	}
	toStdout := cfg.out == "" || cfg.out == "-"
	if toStdout && c.terminal != nil && c.terminal() {
		return c.fail(exitUsage, errors.New("standard output is a terminal: give -o FILE, or pipe the log into a command"))
	}
	if cfg.remote > 0 {
		return c.writeRemote(ctx, cfg)
	}
	gen := logConfig(cfg)
	if first := firstRound(gen); cfg.size < first {
		return c.fail(exitUsage, fmt.Errorf("-size %s: a log is whole rounds, and the first round of these flags is %s: want -size %s or more",
			formatSize(cfg.size), formatSize(first), formatSize(first)))
	}
	if toStdout {
		if _, err := c.writeLog(ctx, c.stdout, cfg, cfg.size/2, func(w io.Writer) error { return stracetest.Generate(w, gen) }); err != nil {
			return c.fail(exitFail, err)
		}
		return exitOK
	}
	outs, err := createAll([]string{cfg.out}, cfg.force)
	if err != nil {
		return c.fail(exitFail, err)
	}
	n, err := c.writeLog(ctx, outs[0].f, cfg, cfg.size/2, func(w io.Writer) error { return stracetest.Generate(w, gen) })
	if err = closeAll(outs, err); err != nil {
		return c.fail(exitFail, err)
	}
	fmt.Fprintf(c.stderr, "loggen: wrote %s: %d bytes of log, %d rounds of %d ranks\n", cfg.out, n, gen.Rounds, cfg.ranks)
	return exitOK
}

// logConfig is the generator's configuration of the log cfg asks for.
func logConfig(cfg *config) stracetest.Config {
	gen := stracetest.Realistic(0)
	gen.Seed, gen.Ranks, gen.AnchorEvry = cfg.seed, cfg.ranks, cfg.anchors.Nanoseconds()
	gen.SparseAnchors, gen.DriftPPM, gen.Pipelined = cfg.sparse, cfg.driftPPM, cfg.pipelined
	gen.AnchorPerLaunch, gen.Rate = cfg.perLaunch, cfg.rate
	for _, d := range cfg.damage {
		d.set(&gen)
	}
	gen.Rounds = stracetest.RoundsFor(gen, cfg.size)
	return gen
}

// firstRound is the bytes of the first round of the log gen describes: the
// shortest log it has.
func firstRound(gen stracetest.Config) int64 {
	gen.Rounds = 1
	cw := &countWriter{w: io.Discard}
	stracetest.Generate(cw, gen)
	return cw.n
}

// remoteConfig is the generator's configuration of the logs -remote asks
// for: tasks 1 to 50 ms apart, dealt to the machines in turn, about as
// many as make cfg.size bytes of logs in all.
func remoteConfig(cfg *config) stracetest.RemoteConfig {
	rc := stracetest.RemoteConfig{Seed: cfg.seed, GapMin: 1_000_000, GapMean: 5_000_000, GapMax: 50_000_000, WallErr: 1_000_000,
		AnchorEvry: cfg.anchors.Nanoseconds()}
	for i := range cfg.remote {
		drift := float64(30 + 10*(i/2))
		if cfg.driftPPM != 0 {
			drift = math.Abs(cfg.driftPPM)
		}
		if i%2 == 1 {
			drift = -drift
		}
		rc.Hosts = append(rc.Hosts, stracetest.RemoteHost{Machine: fmt.Sprintf("machine%d", i+1), DriftPPM: drift,
			FwdMin: 30_000, FwdJitter: 20_000, RetMin: 25_000, RetJitter: 20_000})
	}
	sample := 16 * cfg.remote
	rc.Tasks = sample
	logs, _ := stracetest.GenerateRemote(rc)
	var n int64
	for _, l := range logs {
		n += int64(len(l.Log))
	}
	per := max(n/int64(sample), 1)
	rc.Tasks = int(cfg.size/per) + 1
	return rc
}

// writeLog writes the log gen writes to dst as cfg asks (compressed,
// damaged) and returns the bytes of log written (before compression).
//
// -damage corrupt-data is made where it does not cost a search of the
// stream (stracetest.DamageGzip's, which inflates the stream once per byte
// tried): the stream's block is ended after half bytes of log, and the
// next block's header is given block type 3, which no deflate stream has.
func (c *command) writeLog(ctx context.Context, dst io.Writer, cfg *config, half int64, gen func(io.Writer) error) (int64, error) {
	out := &ctxWriter{ctx: ctx, w: dst}
	var z bytes.Buffer
	bw := bufio.NewWriterSize(out, 1<<20)
	var w io.Writer = bw
	var zw *gzip.Writer
	if cfg.gz {
		if cfg.gzDamage != "" {
			bw.Reset(&ctxWriter{ctx: ctx, w: &z})
		}
		zw = gzip.NewWriter(bw)
		w = zw
	}
	cw := &countWriter{w: w}
	mark := -1 // corrupt data: where the block after the middle starts
	if cfg.gzDamage == corruptData {
		cw.half = max(half, 1)
		cw.atHalf = func() error {
			err := zw.Flush() // ends the block: the next starts on a byte of its own
			if err == nil {
				err = bw.Flush()
			}
			mark = z.Len()
			return err
		}
	}
	err := gen(cw)
	if zw != nil && err == nil {
		err = zw.Close()
	}
	if err == nil {
		err = bw.Flush()
	}
	if err == nil && cfg.gzDamage != "" {
		d := z.Bytes()
		if cfg.gzDamage == corruptData {
			if mark < 0 || mark >= len(d)-8 {
				return cw.n, errors.New("-damage corrupt-data: the log is too short to damage")
			}
			d[mark] |= 0b110 // block type 3, which no deflate stream has
		} else {
			d, _ = stracetest.DamageGzip(d, cfg.gzDamage) // every other kind damages any stream
		}
		_, err = out.Write(d)
	}
	return cw.n, err
}

// corruptData is the kind of the .gz -damage corrupt-data names.
const corruptData = "corrupt data"

// ctxWriter writes to w until ctx is done.
type ctxWriter struct {
	ctx context.Context
	w   io.Writer
}

func (c *ctxWriter) Write(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, fmt.Errorf("interrupted: %w", err)
	}
	return c.w.Write(p)
}

// countWriter counts the bytes written through it, and calls atHalf, when
// set, before the first write past half bytes.
type countWriter struct {
	w      io.Writer
	n      int64
	half   int64
	atHalf func() error
}

func (c *countWriter) Write(p []byte) (int, error) {
	if c.atHalf != nil && c.n >= c.half {
		f := c.atHalf
		c.atHalf = nil
		if err := f(); err != nil {
			return 0, err
		}
	}
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// writeRemote writes the dispatching host's log and the remote machines'
// and prints the command that converts them.
func (c *command) writeRemote(ctx context.Context, cfg *config) int {
	rc := remoteConfig(cfg)
	names := remoteNames(cfg.out, cfg.remote, cfg.gz)
	outs, err := createAll(names, cfg.force)
	if err != nil {
		return c.fail(exitFail, err)
	}
	logs, _ := stracetest.GenerateRemote(rc)
	var total int64
	for i, l := range logs {
		var n int64
		n, err = c.writeLog(ctx, outs[i].f, cfg, int64(len(l.Log))/2, func(w io.Writer) error {
			_, err := w.Write(l.Log)
			return err
		})
		total += n
		if err != nil {
			break
		}
	}
	if err = closeAll(outs, err); err != nil {
		return c.fail(exitFail, err)
	}
	fmt.Fprintf(c.stderr, "loggen: wrote %s (the dispatching host) and %s (%s): %d bytes of logs, %d tasks\n",
		names[0], strings.Join(names[1:], ", "), machineRange(cfg.remote), total, rc.Tasks)
	fmt.Fprintf(c.stderr, "convert them with:\n  %s\n", strings.Join(convertCommand(names), " "))
	return exitOK
}

// machineRange names the remote machines.
func machineRange(n int) string {
	if n == 1 {
		return "machine1"
	}
	return fmt.Sprintf("machine1 to machine%d", n)
}

// remoteNames are the files of the dispatching log out and of n remote
// machines' logs: STEM.remote1.log and on, STEM being out less its .gz
// and .log.
func remoteNames(out string, n int, gz bool) []string {
	stem := strings.TrimSuffix(strings.TrimSuffix(out, ".gz"), ".log")
	ext := ".log"
	if gz {
		ext += ".gz"
	}
	names := []string{out}
	for i := 1; i <= n; i++ {
		names = append(names, fmt.Sprintf("%s.remote%d%s", stem, i, ext))
	}
	return names
}

// convertCommand is the strace2perfetto command line that converts the
// logs named, the dispatching host's first, to STEM.pftrace.
func convertCommand(names []string) []string {
	stem := strings.TrimSuffix(strings.TrimSuffix(names[0], ".gz"), ".log")
	args := []string{"go", "run", "./examples/strace2perfetto", "-o", cli.ShellQuote(stem + ".pftrace")}
	for _, n := range names {
		args = append(args, cli.ShellQuote(n))
	}
	return args
}

// output is a file being written.
type output struct {
	f    *os.File
	path string
	// regular: the file is a regular file, removed on failure (a device
	// or a FIFO is not).
	regular bool
}

// createAll creates the files named, none of which may exist unless
// force. On an error it removes the ones it created.
func createAll(names []string, force bool) ([]output, error) {
	flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if force {
		flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	var outs []output
	for _, name := range names {
		f, err := os.OpenFile(name, flags, 0o644)
		if errors.Is(err, os.ErrExist) {
			err = fmt.Errorf("%s exists (-f overwrites it)", name)
		}
		if err != nil {
			closeAll(outs, err)
			return nil, err
		}
		st, err := f.Stat()
		outs = append(outs, output{f: f, path: name, regular: err == nil && st.Mode().IsRegular()})
	}
	return outs, nil
}

// closeAll closes the files; when err (the writing's) or a close fails,
// it removes the regular ones and returns the first error.
func closeAll(outs []output, err error) error {
	for _, o := range outs {
		if cerr := o.f.Close(); err == nil && cerr != nil {
			err = cerr
		}
	}
	if err != nil {
		for _, o := range outs {
			if o.regular {
				os.Remove(o.path)
			}
		}
	}
	return err
}

// fail reports err and returns code.
func (c *command) fail(code int, err error) int {
	fmt.Fprintln(c.stderr, "loggen:", err)
	return code
}
