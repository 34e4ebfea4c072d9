// Command strace2perfetto converts an NPU runtime's logs into one Perfetto
// trace (.pftrace) where host stages, device phases, scheduler hand-offs and
// bind segments sit on one timeline. Open the result in ui.perfetto.dev.
//
//	go run ./examples/strace2perfetto [flags] [LOG ...]
//
// LOG may be - (standard input) or a .gz file. With no LOG it converts an
// embedded, real-shaped sample — an L3 parent and two chip ranks with
// device phases, clock anchors, hand-offs and bind segments — to
// phasetrace-sample.pftrace.
//
// Flags:
//
//	-o FILE                    output (default: the first log's name with .pftrace)
//	-records FILE              host_phase_records.jsonl (repeatable)
//	-calibration PID:DEV=FILE  clock-calibration samples of a device (repeatable)
//	-summary-json FILE         the conversion summary, machine-readable
//	-compress N                deflate the trace at zlib level N (0: off)
//	-q                         no summary on stderr
//
// It prints a short summary to stderr — what was read, what was lost and
// why, how device spans were placed, where the trace is — shows progress on
// large inputs when stderr is a terminal, and exits non-zero with a clear
// message for unreadable input.
package main

import (
	_ "embed"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/phasetrace/phasetrace"
	"github.com/phasetrace/phasetrace/perfetto"
)

//go:embed sample.log
var sample []byte

// sampleOut is where the embedded sample is converted to.
const sampleOut = "phasetrace-sample.pftrace"

type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stderr))
}

func run(args []string, stdin io.Reader, stderr io.Writer) int {
	fs := flag.NewFlagSet("strace2perfetto", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "", "output trace `file` (default: the first log's name with .pftrace)")
	var records, calibration listFlag
	fs.Var(&records, "records", "host_phase_records.jsonl `file` (repeatable)")
	fs.Var(&calibration, "calibration", "clock-calibration samples of a device, as `PID:DEV=FILE` (repeatable)")
	summaryJSON := fs.String("summary-json", "", "write the conversion summary as JSON to `file`")
	compress := fs.Int("compress", 5, "deflate the trace at zlib `level`, 1 (fastest) to 9 (smallest); 0: off")
	quiet := fs.Bool("q", false, "print no summary")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: strace2perfetto [flags] [LOG ...]\n\nConverts runtime logs (- for stdin, .gz accepted) to a Perfetto trace.\nWith no LOG, converts an embedded sample to %s.\n\n", sampleOut)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if err := convert(fs.Args(), *out, records, calibration, *summaryJSON, *compress, *quiet, stdin, stderr); err != nil {
		fmt.Fprintln(stderr, "strace2perfetto:", err)
		return 1
	}
	return 0
}

func convert(logs []string, out string, records, calibration []string, summaryJSON string, compress int, quiet bool, stdin io.Reader, stderr io.Writer) error {
	var opts []phasetrace.Option
	for _, r := range records {
		if _, err := os.Stat(r); err != nil {
			return err
		}
		opts = append(opts, phasetrace.WithPhaseRecords(phasetrace.File(r)))
	}
	for _, c := range calibration {
		pid, dev, file, err := parseCalibration(c)
		if err != nil {
			return err
		}
		if _, err := os.Stat(file); err != nil {
			return err
		}
		opts = append(opts, phasetrace.WithCalibration(pid, dev, phasetrace.File(file)))
	}
	var inputs []phasetrace.Input
	var cleanup []func()
	defer func() {
		for _, f := range cleanup {
			f()
		}
	}()
	for _, l := range logs {
		if l != "-" {
			if _, err := os.Stat(l); err != nil {
				return err
			}
			inputs = append(inputs, phasetrace.File(l))
			continue
		}
		// The converter reads its input twice: keep stdin in a file.
		in, done, err := spool(stdin)
		if err != nil {
			return fmt.Errorf("reading standard input: %w", err)
		}
		cleanup = append(cleanup, done)
		inputs = append(inputs, in)
	}
	if len(inputs) == 0 {
		inputs = append(inputs, phasetrace.Bytes("embedded sample", sample))
		if out == "" {
			out = sampleOut
		}
	}
	if out == "" {
		out = outputName(logs[0])
	}
	if compress != 0 {
		opts = append(opts, phasetrace.WithWriterOptions(perfetto.WithCompression(compress)))
	}
	if isTerminal(stderr) && !quiet {
		total := int64(0)
		for _, l := range logs {
			if st, err := os.Stat(l); err == nil {
				total += 2 * st.Size() // two passes
			}
		}
		if total > 64<<20 {
			opts = append(opts, phasetrace.WithProgress(func(read int64) {
				fmt.Fprintf(stderr, "\rconverting: %3d%%", min(100, read*100/total))
			}))
			defer fmt.Fprint(stderr, "\r               \r")
		}
	}

	tmp, err := os.CreateTemp(filepath.Dir(out), ".strace2perfetto-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	sum, convErr := phasetrace.Convert(tmp, inputs, opts...)
	if cerr := tmp.Close(); convErr == nil && cerr != nil {
		convErr = cerr
	}
	if sum != nil && summaryJSON != "" {
		b, err := json.MarshalIndent(sum, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(summaryJSON, append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	if convErr != nil {
		if sum != nil && !quiet {
			sum.WriteText(stderr)
		}
		return convErr
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), out); err != nil {
		return err
	}
	if !quiet {
		sum.WriteText(stderr)
		fmt.Fprintf(stderr, "trace: %s (open it in https://ui.perfetto.dev)\n", out)
	}
	return nil
}

// outputName is the log's name with .pftrace instead of its extension(s).
func outputName(log string) string {
	if log == "-" {
		return "stdin.pftrace"
	}
	base := strings.TrimSuffix(log, ".gz")
	if ext := filepath.Ext(base); ext == ".log" || ext == ".txt" {
		base = strings.TrimSuffix(base, ext)
	}
	return base + ".pftrace"
}

// parseCalibration parses PID:DEV=FILE.
func parseCalibration(v string) (pid int32, dev int64, file string, err error) {
	key, file, ok := strings.Cut(v, "=")
	p, d, ok2 := strings.Cut(key, ":")
	if !ok || !ok2 || file == "" {
		return 0, 0, "", fmt.Errorf("-calibration %q: want PID:DEV=FILE", v)
	}
	pv, err1 := strconv.ParseInt(p, 10, 32)
	dv, err2 := strconv.ParseInt(d, 10, 64)
	if err1 != nil || err2 != nil {
		return 0, 0, "", fmt.Errorf("-calibration %q: PID and DEV must be integers", v)
	}
	return int32(pv), dv, file, nil
}

// spool copies r to a temporary file, so that it can be read twice.
func spool(r io.Reader) (phasetrace.Input, func(), error) {
	f, err := os.CreateTemp("", "strace2perfetto-stdin-*")
	if err != nil {
		return phasetrace.Input{}, nil, err
	}
	done := func() { os.Remove(f.Name()) }
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		done()
		return phasetrace.Input{}, nil, err
	}
	if err := f.Close(); err != nil {
		done()
		return phasetrace.Input{}, nil, err
	}
	in := phasetrace.File(f.Name())
	in.Name = "stdin"
	return in, done, nil
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
