// Command devicebuffer reads one raw device-phase buffer (the bytes the
// AICPU threads stamp and the host reads back after a run) and prints the
// device spans it reduces to as [STRACE] records, exactly as the runtime
// logs them: clk=dev, the runtime's names and depths, device-domain ts and
// dur in ns (exact integer floors), and on device_wall the origin_cyc= and
// dev= attributes that let a converter place the run on the host timeline.
//
//	go run ./examples/devicebuffer -threads N -freq HZ [-pid P -tid T -inv I -hid H -dev D] [-per-thread] FILE
//
// The thread count is required: buffer sizes for different thread counts
// can coincide. -per-thread also lists every thread's raw records. A bad
// buffer exits non-zero with the byte offset and what was expected there.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/phasetrace/phasetrace/reduce"
	"github.com/phasetrace/phasetrace/strace"
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
	mono      int64
}

func main() {
	var o options
	flag.IntVar(&o.threads, "threads", 0, "number of AICPU threads the buffer was written for (required)")
	flag.Uint64Var(&o.freq, "freq", 0, "device counter frequency in Hz, e.g. 50000000 on a2a3 (required)")
	flag.Int64Var(&o.pid, "pid", int64(os.Getpid()), "pid written in the records")
	flag.Int64Var(&o.tid, "tid", -1, "tid written in the records (default: the pid)")
	flag.Uint64Var(&o.inv, "inv", 1, "invocation id written in the records")
	flag.StringVar(&o.hid, "hid", "0", "callable hash written in the records (hex)")
	flag.Int64Var(&o.dev, "dev", 0, "device id written on device_wall")
	flag.BoolVar(&o.perThread, "per-thread", false, "also list each thread's raw records")
	flag.Int64Var(&o.mono, "mono", -1, "CLOCK_MONOTONIC ns written in the log prefixes (default: now)")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: devicebuffer -threads N -freq HZ [-pid P -tid T -inv I -hid H -dev D] [-per-thread] FILE\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 || o.threads <= 0 || o.freq == 0 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(os.Stdout, flag.Arg(0), o); err != nil {
		fmt.Fprintln(os.Stderr, "devicebuffer:", err)
		os.Exit(1)
	}
}

func run(out io.Writer, path string, o options) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return convert(out, path, raw, o)
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
	mono := func() int64 { return time.Now().UnixNano() }
	if o.mono >= 0 {
		mono = func() int64 { return o.mono }
	}
	w := strace.NewWriter(out, strace.WithProcess(int32(o.pid), o.tid), strace.WithClock(mono, mono))
	w.SetInvocation(o.inv, hid)
	for _, s := range spans {
		var attrs []strace.Attr // DeviceSpan writes clk=dev first
		if s.Name == reduce.WallName {
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
