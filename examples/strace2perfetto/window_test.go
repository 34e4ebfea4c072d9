package main

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestWindow: -window A:B writes the slices of the whole trace that meet
// the window, says in the summary how many spans were outside it, and
// -strict does not count them as lost; a window that is not A:B is a usage
// error, before anything is read or written.
func TestWindow(t *testing.T) {
	chdir(t)
	os.WriteFile("clean.log", cleanLog(), 0o644)
	if code, _, stderr := runArgs([]string{"-o", "full.pftrace", "clean.log"}, strings.NewReader("")); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	full := readTrace(t, "full.pftrace")
	lo, hi := full.Slices[0].TS, full.Slices[0].TS
	for _, s := range full.Slices {
		lo, hi = min(lo, s.TS), max(hi, s.TS+s.Dur)
	}
	mid := lo + (hi-lo)/2
	a, b := strconv.FormatInt(mid, 10), strconv.FormatInt(hi+1, 10)
	want := 0
	for _, s := range full.Slices {
		if s.TS+s.Dur >= mid {
			want++
		}
	}
	code, _, stderr := runArgs([]string{"-strict", "-o", "w.pftrace", "-window", a + ":" + b, "clean.log"}, strings.NewReader(""))
	if code != exitOK {
		t.Fatalf("-window %s:%s -strict: exit %d: %s", a, b, code, stderr)
	}
	if got := len(readTrace(t, "w.pftrace").Slices); got != want || got == 0 || got == len(full.Slices) {
		t.Errorf("-window %s:%s: %d slices, want %d of %d", a, b, got, want, len(full.Slices))
	}
	if !strings.Contains(stderr, "outside the window asked for") || !strings.Contains(stderr, "window ["+a+", "+b+") ns") {
		t.Errorf("the summary does not say what was outside the window:\n%s", stderr)
	}

	// Durations after the first slice, and open sides.
	for _, w := range []string{"0s:1h", ":1h", "0s:", ":", "-1s:1ms"} {
		if code, _, stderr := runArgs([]string{"-q", "-o", "d.pftrace", "-window", w, "clean.log"}, strings.NewReader("")); code != exitOK {
			t.Errorf("-window %s: exit %d: %s", w, code, stderr)
		}
		readTrace(t, "d.pftrace")
	}
	whole, _ := os.ReadFile("full.pftrace")
	runArgs([]string{"-q", "-o", "d.pftrace", "-window", ":", "clean.log"}, strings.NewReader(""))
	if got, _ := os.ReadFile("d.pftrace"); !bytes.Equal(got, whole) {
		t.Error("-window : (open on both sides) does not write the whole trace")
	}

	for _, w := range []string{"", "12s", "1s:2s:3s", "12,5s:14s", "a:b", "1x:"} {
		os.Remove("bad.pftrace")
		code, _, stderr := runArgs([]string{"-o", "bad.pftrace", "-window", w, "clean.log"}, strings.NewReader(""))
		if code != exitUsage || !strings.Contains(stderr, "want A:B") {
			t.Errorf("-window %q: exit %d, stderr %q; want a usage error", w, code, stderr)
		}
		if _, err := os.Stat("bad.pftrace"); err == nil {
			t.Errorf("-window %q: a trace was written", w)
		}
	}
	// A window that holds no time is a usage error too.
	for _, w := range []string{"2s:1s", "5s:5s", "2000:1000", "7:7"} {
		code, _, stderr := runArgs([]string{"-o", "bad.pftrace", "-window", w, "clean.log"}, strings.NewReader(""))
		if code != exitUsage || !strings.Contains(stderr, "the window is empty") {
			t.Errorf("-window %q: exit %d, stderr %q; want a usage error", w, code, stderr)
		}
		if _, err := os.Stat("bad.pftrace"); err == nil {
			t.Errorf("-window %q: a trace was written", w)
		}
	}
	// A bound at the end of the int64 range is a time, not an open side.
	_, _, stderr = runArgs([]string{"-o", "far.pftrace", "-window", "9223372036854775807:", "clean.log"}, strings.NewReader(""))
	if !strings.Contains(stderr, "window [9223372036854775807, open) ns") {
		t.Errorf("-window 9223372036854775807: is not said as such:\n%s", stderr)
	}
	_, _, stderr = runArgs([]string{"-o", "far.pftrace", "-window", ":-9223372036854775808", "clean.log"}, strings.NewReader(""))
	if !strings.Contains(stderr, "window [open, -9223372036854775808) ns") {
		t.Errorf("-window :-9223372036854775808 is not said as such:\n%s", stderr)
	}
}
