// Command devicebuffer reads one raw device-phase buffer (the bytes the
// AICPU threads stamp and the host reads back after a run) and prints the
// device spans it reduces to as [STRACE] records, exactly as the runtime
// logs them: clk=dev, the runtime's names and depths, device-domain ts and
// dur in ns (exact integer floors), and on device_wall the origin_cyc= and
// dev= attributes that let a converter place the run on the host timeline.
//
//	go run ./examples/devicebuffer -threads N -freq HZ [-pid P -tid T -inv I -hid H -dev D -mono NS] [-per-thread] FILE
//	go run ./examples/devicebuffer -version
//
// The thread count is required: buffer sizes for different thread counts
// can coincide. -per-thread also lists every thread's raw records. -mono
// sets the CLOCK_MONOTONIC ns written in the log prefixes; by default it is
// the clock read now (where there is no CLOCK_MONOTONIC, ns since the
// program started). Flags may come before or after FILE; -- ends the flags.
// -version prints the module version, or "(devel)" and the VCS revision
// when built from a clone.
//
// A buffer for N threads is at most 16 + 416·N bytes (header, phase
// records, task-timing tail); a larger FILE is refused by its size before
// it is read, and a pipe or a growing file is never read past that size.
// A bad buffer is reported with the byte offset and what was expected
// there.
//
// Exit status, as for every command of this module: 0 the records were
// printed; 1 failure (FILE cannot be read, is too large or is not a valid
// buffer for N threads, or the output cannot be written); 2 usage error (an
// unknown flag, a missing or bad flag value, not exactly one FILE). Nothing
// is dropped silently — a bad buffer is a failure — so there is no -strict
// and no exit status 3.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/phasetrace/phasetrace"
	"github.com/phasetrace/phasetrace/examples/internal/cli"
	"github.com/phasetrace/phasetrace/reduce"
	"github.com/phasetrace/phasetrace/strace"
)

// Exit statuses.
const (
	exitOK    = cli.ExitOK
	exitFail  = cli.ExitFail
	exitUsage = cli.ExitUsage
)

type options struct {
	threads   int
	freq      uint64
	pid       int64
	tid       int64
	inv       uint64
	hid       string
	dev       int64
	perThread bool
	mono      int64 // < 0: CLOCK_MONOTONIC now
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

const usageText = `usage: devicebuffer -threads N -freq HZ [-pid P -tid T -inv I -hid H -dev D -mono NS] [-per-thread] FILE
       devicebuffer -version

Prints the device spans of one raw device-phase buffer as the runtime's
[STRACE] records. Flags may come before or after FILE; -- ends the flags.

Exit status: 0 records printed; 1 failure (unreadable, too large or bad
buffer); 2 usage error.

Flags:
`

// run is the whole command with its streams, returning the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	o := options{tid: -1, mono: -1}
	fs := flag.NewFlagSet("devicebuffer", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&o.threads, "threads", 0, "number of AICPU threads the buffer was written for (required)")
	fs.Uint64Var(&o.freq, "freq", 0, "device counter frequency in `Hz`, e.g. 50000000 on a2a3 (required)")
	fs.Int64Var(&o.pid, "pid", int64(os.Getpid()), "pid written in the records")
	fs.Var(optional{&o.tid}, "tid", "`tid` written in the records (default: the pid)")
	fs.Uint64Var(&o.inv, "inv", 1, "invocation id written in the records")
	fs.StringVar(&o.hid, "hid", "0", "callable hash written in the records (hex)")
	fs.Int64Var(&o.dev, "dev", 0, "device id written on device_wall")
	fs.BoolVar(&o.perThread, "per-thread", false, "also list each thread's raw records")
	fs.Var(optional{&o.mono}, "mono", "CLOCK_MONOTONIC `ns` written in the log prefixes (default: CLOCK_MONOTONIC now)")
	showVersion := fs.Bool("version", false, "print the version and exit")
	fs.Usage = func() {
		fmt.Fprint(stderr, usageText)
		fs.PrintDefaults()
	}
	files, err := cli.ParseAnywhere(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		return exitUsage // the flag package has said why
	}
	if *showVersion {
		fmt.Fprintln(stdout, phasetrace.Version("devicebuffer"))
		return exitOK
	}
	set := make(map[string]bool)
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if err := o.check(files, set); err != nil {
		fmt.Fprintf(stderr, "devicebuffer: %v\nRun devicebuffer -h for usage.\n", err)
		return exitUsage
	}
	raw, err := readBuffer(files[0], o.threads)
	if err == nil {
		err = convert(stdout, files[0], raw, o)
	}
	if err != nil {
		fmt.Fprintln(stderr, "devicebuffer:", err)
		return exitFail
	}
	return exitOK
}

// optional is an int64 flag whose unset value (negative) has a meaning of
// its own, said in the flag's usage: it prints no "(default -1)".
type optional struct{ v *int64 }

func (o optional) String() string {
	if o.v == nil || *o.v < 0 {
		return ""
	}
	return strconv.FormatInt(*o.v, 10)
}

func (o optional) Set(s string) error {
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return errors.New("want an integer")
	}
	if v < 0 {
		return errors.New("want 0 or more")
	}
	*o.v = v
	return nil
}

// check validates the flags' values and the file arguments; set holds the
// flags given.
func (o *options) check(files []string, set map[string]bool) error {
	switch {
	case len(files) != 1:
		return fmt.Errorf("want one FILE, have %d", len(files))
	case !set["threads"]:
		return fmt.Errorf("-threads missing: give the number of AICPU threads the buffer was written for, 1 to %d", reduce.MaxThreads)
	case o.threads < 1 || o.threads > reduce.MaxThreads:
		return fmt.Errorf("-threads %d: want 1 to %d", o.threads, reduce.MaxThreads)
	case !set["freq"]:
		return errors.New("-freq missing: give the device counter frequency in Hz, e.g. 50000000 on a2a3")
	case o.freq == 0:
		return errors.New("-freq 0: the device counter frequency must be positive (Hz, e.g. 50000000 on a2a3)")
	case o.pid < 0 || o.pid > 1<<31-1:
		return fmt.Errorf("-pid %d: out of range", o.pid)
	}
	if _, err := strconv.ParseUint(o.hid, 16, 64); err != nil {
		return fmt.Errorf("-hid %q: want a hex callable hash", o.hid)
	}
	return nil
}

// readBuffer reads the buffer in path, never more than the largest valid
// buffer for threads threads: a regular file is refused by its size before
// it is read, and reading stops past that size in any case (a pipe, a file
// that grows).
func readBuffer(path string, threads int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.IsDir() {
		return nil, fmt.Errorf("%s: is a directory", path)
	}
	limit := int64(reduce.FullSize(threads))
	if st.Mode().IsRegular() && st.Size() > limit {
		return nil, tooLarge(path, threads, fmt.Sprint(st.Size()))
	}
	raw, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(raw)) > limit {
		return nil, tooLarge(path, threads, "more")
	}
	return raw, nil
}

// tooLarge is the error of a buffer with more bytes than threads threads
// can have.
func tooLarge(path string, threads int, have string) error {
	full := reduce.FullSize(threads)
	return fmt.Errorf("%s: %w", path, &reduce.DecodeError{
		Offset: full,
		Want:   fmt.Sprintf("end of buffer (%d threads: %d or %d bytes); have %s bytes", threads, reduce.PrefixSize(threads), full, have),
		Err:    reduce.ErrSize,
	})
}

func convert(out io.Writer, path string, raw []byte, o options) error {
	hid, err := strconv.ParseUint(o.hid, 16, 64)
	if err != nil {
		return fmt.Errorf("-hid %q: want a hex callable hash", o.hid)
	}
	if o.pid < 0 || o.pid > 1<<31-1 {
		return fmt.Errorf("-pid %d: out of range", o.pid)
	}
	if o.tid < 0 {
		o.tid = o.pid
	}
	buf, err := reduce.DecodeBuffer(raw, o.threads)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err) // a *reduce.DecodeError names the byte offset
	}
	red, err := reduce.Reduce(buf, reduce.Hz(o.freq))
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	spans, err := red.Spans()
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	wopts := []strace.WriterOption{strace.WithProcess(int32(o.pid), o.tid)}
	if o.mono >= 0 {
		fixed := func() int64 { return o.mono }
		wopts = append(wopts, strace.WithClock(fixed, fixed))
	} // else the writer's own clock: CLOCK_MONOTONIC now
	w := strace.NewWriter(out, wopts...)
	w.SetInvocation(o.inv, hid)
	for _, s := range spans {
		var attrs []strace.Attr // DeviceSpan writes clk=dev first
		if s.Name == strace.SpanDeviceWall {
			attrs = append(attrs, strace.Uint("origin_cyc", uint64(red.Origin)), strace.Int("dev", o.dev))
		}
		if err := w.DeviceSpan(s.Name, int64(s.TS), int64(s.Dur), int32(s.Depth), attrs...); err != nil {
			return err
		}
	}
	if o.perThread {
		printThreads(out, buf)
	}
	return nil
}

// printThreads lists every thread's raw records, marking the ones the
// reduction ignores.
func printThreads(out io.Writer, buf *reduce.Buffer) {
	cyc := func(c reduce.Cycles) string {
		if c == reduce.Unset {
			return "unset"
		}
		return strconv.FormatUint(uint64(c), 10)
	}
	for t := 0; t < buf.Threads; t++ {
		fmt.Fprintf(out, "# thread %d\n", t)
		for p, r := range buf.ThreadPhases(t) {
			fmt.Fprintf(out, "#   %-15s start=%s end=%s%s\n", reduce.Phase(p), cyc(r.Start), cyc(r.End), ignored(r))
		}
		if buf.TailRead() {
			for s, r := range buf.ThreadSlots(t) {
				if r.Start == reduce.Unset && r.End == 0 {
					continue
				}
				fmt.Fprintf(out, "#   task_slot_%-5d dispatch=%s finish=%s%s\n", s, cyc(r.Start), cyc(r.End), ignored(r))
			}
		}
	}
}

func ignored(r reduce.Record) string {
	if r.Complete() {
		return ""
	}
	return " (incomplete: ignored)"
}
