package analysis

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/phasetrace/phasetrace/strace"
)

type stringsBuilder = strings.Builder

// TestRounds works through testdata/rounds.log: hid a1 (three
// rounds) outnumbers the once-seen hid bb.
func TestRounds(t *testing.T) {
	t.Parallel()
	got := AnalyzeRounds(testLog(t, "rounds.log").Spans)
	want := &Rounds{Hid: 0xa1, Role: strace.RoleDecode, Rows: []Round{
		// orch [100,640) and sched [90,1020) on the device clock:
		// Effective = max(640, 1020) − min(100, 90) = 930.
		{Pid: 300, Inv: 1, Values: [NumRoundsColumns]int64{100050, 20050, 930, 540, 930}},
		// orch [0,560), sched [10,960): 960 − 0.
		{Pid: 300, Inv: 2, Values: [NumRoundsColumns]int64{120250, 24250, 960, 560, 950}},
		// No device_wall, no orch: Effective is sched alone.
		{Pid: 300, Inv: 3, Values: [NumRoundsColumns]int64{110350, 0, 900, 0, 900}},
	}}
	want.Columns = [NumRoundsColumns]RoundsStats{
		{Shown: true, N: 3, Mean: 110216}, // Host over every round: 330650/3
		{Shown: true, N: 2, Mean: 22150},  // Device over its 2 captures: 44300/2
		{Shown: true, N: 3, Mean: 930},    // (930+960+900)/3
		{Shown: true, N: 2, Mean: 550},    // (540+560)/2
		{Shown: true, N: 3, Mean: 926},    // 2780/3 = 926.67
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("AnalyzeRounds (-want +got):\n%s", diff)
	}
	var b strings.Builder
	if err := WriteRounds(&b, got); err != nil {
		t.Fatal(err)
	}
	// The reference averages floats: (20.05 + 24.25) / 2 is 22.149999...,
	// printed 22.1 although the exact mean is 22.15 µs. Host: 110.2166...
	if !strings.Contains(b.String(), "  Avg Host: 110.2 us  |  Avg Device: 22.1 us [2/3]  |  Avg Effective: 0.9 us  |  Avg Orch: 0.6 us  |  Avg Sched: 0.9 us  (3 rounds)\n") {
		t.Errorf("summary line missing:\n%s", b.String())
	}
	if !strings.HasPrefix(b.String(), "  Round      Host (us)   Device (us)  Effective (us)     Orch (us)    Sched (us)\n  ------") {
		t.Errorf("header:\n%s", b.String())
	}
}

// TestRoundsHiddenColumns: a host_build_graph run stamps no orch / sched,
// so only Host and Device are shown.
func TestRoundsHiddenColumns(t *testing.T) {
	t.Parallel()
	r := AnalyzeRounds(testLog(t, "rounds_hbg.log").Spans)
	for col, shown := range []bool{true, true, false, false, false} {
		if r.Columns[col].Shown != shown {
			t.Errorf("column %v shown = %v", RoundsColumn(col), r.Columns[col].Shown)
		}
	}
	var b strings.Builder
	_ = WriteRounds(&b, r)
	want := "  Round      Host (us)   Device (us)\n" +
		"  ----------------------------------\n" +
		"  0              100.0          20.0\n" +
		"  1              120.0          24.0\n" +
		"  Avg Host: 110.0 us  |  Avg Device: 22.0 us [2/2]  (2 rounds)\n"
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestRoundsTrimmed: 25 rounds, device captured on 22. Host is 1050,
// 2050, …, 25050 ns; dropping the 10 lowest and 10 highest leaves 11050 …
// 15050, mean 13050. Device is 525, 1025, …, 11025 (22 values, 500 apart):
// dropping 10 each side leaves 5525 and 6025, mean 5775.
func TestRoundsTrimmed(t *testing.T) {
	t.Parallel()
	r := AnalyzeRounds(testLog(t, "rounds_trim.log").Spans)
	host, dev := r.Columns[ColHost], r.Columns[ColDevice]
	if !host.Trimmed || host.TrimmedMean != 13050 || host.Mean != 13050 {
		t.Errorf("host %+v", host)
	}
	// All 22: (525 + 11025) / 2 = 5775 as well; trimmed likewise.
	if !dev.Trimmed || dev.TrimmedMean != 5775 || dev.N != 22 {
		t.Errorf("device %+v", dev)
	}
	var b strings.Builder
	_ = WriteRounds(&b, r)
	if !strings.Contains(b.String(), "  Trimmed Avg Host: 13.1 us  |  Trimmed Avg Device: 5.8 us  (dropped 10 low + 10 high, 5 rounds used)\n") {
		t.Errorf("trimmed line missing:\n%s", b.String())
	}
	// Rows follow inv order, not duration order.
	if r.Rows[0].Values[ColHost] != 25050 || r.Rows[24].Values[ColHost] != 1050 {
		t.Errorf("rows out of inv order")
	}
}

func TestRoundsEmpty(t *testing.T) {
	t.Parallel()
	if r := AnalyzeRounds(nil); r != nil {
		t.Errorf("AnalyzeRounds(nil) = %+v", r)
	}
	var b strings.Builder
	if err := WriteRounds(&b, nil); err != nil || b.String() != noMarkers+"\n" {
		t.Errorf("empty rounds = %q", b.String())
	}
	if RoundsColumn(9).String() != "RoundsColumn(9)" || ColSched.String() != "Sched" {
		t.Error("RoundsColumn.String")
	}
}
