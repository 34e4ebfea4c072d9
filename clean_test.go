package phasetrace_test

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/phasetrace/phasetrace"
	"github.com/phasetrace/phasetrace/strace"
	"github.com/phasetrace/phasetrace/strace/stracetest"
)

// cleanConfigs are generated logs that are clean, each in a shape real
// logs take — records of every kind joined to the next on their line, a
// last line without its line end, alone and with the other clean knobs —
// across seeds.
func cleanConfigs() []genConfig {
	var out []genConfig
	for seed := uint64(1); seed <= 6; seed++ {
		base := genConfig{Seed: seed, Rounds: 8, AnchorEvry: 2_000_000}
		for _, set := range []func(*genConfig){
			func(c *genConfig) { c.JoinRate, c.Legacy = 0.05, true },
			func(c *genConfig) { c.Unterminated = true },
			func(c *genConfig) { c.JoinRate, c.Unterminated, c.Legacy, c.Ext = 0.3, true, true, true },
			func(c *genConfig) {
				c.JoinRate, c.Unterminated, c.Legacy, c.Ext, c.Pipelined = 0.1, true, true, true, true
				c.HostExact, c.HostParentsFirst, c.DeviceChildrenFirst, c.HugeIDs = true, true, true, true
			},
			func(c *genConfig) {
				c.JoinRate, c.Unterminated, c.SparseAnchors, c.DriftPPM, c.Rounds = 0.2, true, true, 50, 12
			},
			// The runtime's truncating ns conversion (neighbours may
			// overlap by 1 ns: repaired exactly, which is clean), long
			// early prewarm spans, pipelined.
			func(c *genConfig) {
				c.RuntimeNs, c.Prewarm, c.Pipelined, c.JoinRate, c.Unterminated, c.Rounds = true, true, true, 0.1, true, 40
			},
			func(c *genConfig) { c.Prewarm, c.Ranks, c.Legacy, c.Ext, c.Rounds = true, 4, true, true, 40 },
		} {
			cfg := base
			set(&cfg)
			out = append(out, cfg)
		}
	}
	return out
}

// TestCleanLogsAreLossless: -strict passes on every clean log the
// generator makes, joins and unterminated endings included. The reader
// loses nothing (stracestat's rule), the conversion is lossless
// (strace2perfetto's), every device anchor read reaches the placer, joined
// ones too, and a last attribute the end of the log may have cut is marked
// on its slice.
func TestCleanLogsAreLossless(t *testing.T) {
	t.Parallel()
	for _, cfg := range cleanConfigs() {
		t.Run(fmt.Sprintf("seed%d_join%v_unterminated%v", cfg.Seed, cfg.JoinRate, cfg.Unterminated), func(t *testing.T) {
			t.Parallel()
			var b bytes.Buffer
			generate(&b, cfg)
			log := b.Bytes()
			rd := strace.NewReader(bytes.NewReader(log))
			for {
				if _, err := rd.Read(); err == io.EOF {
					break
				} else if err != nil {
					t.Fatal(err)
				}
			}
			st := rd.Stats()
			if st.Lost() != 0 {
				t.Errorf("the reader lost %d records: %v", st.Lost(), st.Problems)
			}
			if (st.Joined > 0) != (cfg.JoinRate > 0) || (st.MaybeCut > 0) != cfg.Unterminated {
				t.Errorf("joined %d, maybe cut %d", st.Joined, st.MaybeCut)
			}
			var out bytes.Buffer
			sum, err := phasetrace.Convert(&out, []phasetrace.Input{phasetrace.Bytes("clean.log", log)})
			if err != nil {
				t.Fatal(err)
			}
			if !sum.Clean() || !cfg.RuntimeNs && !sum.Lossless() {
				t.Errorf("not clean: inputs %+v, not drawn %v, spans not drawn %v, repaired %v, moved %v, examples %v",
					sum.Inputs, sum.NotDrawn, sum.Spans.NotDrawn, sum.Repaired, sum.Moved, sum.Examples)
			}
			if in := sum.Inputs[0]; in.Joined != st.Joined || in.MaybeCut != st.MaybeCut {
				t.Errorf("the summary says %d joined and %d maybe cut, the reader %d and %d", in.Joined, in.MaybeCut, st.Joined, st.MaybeCut)
			}
			placed := int64(0)
			for _, d := range sum.Devices {
				placed += d.Anchors
			}
			if placed != st.Records.DeviceAnchors {
				t.Errorf("%d device anchors read, %d given to the placer", st.Records.DeviceAnchors, placed)
			}
			tr := wholeTrace(t, out.Bytes(), sum)
			var marked []string
			for _, s := range tr.Slices {
				if v, ok := argOf(s, "maybe_cut_by_log_end"); ok {
					marked = append(marked, s.Name+": "+fmt.Sprint(v))
				}
			}
			if want := int(st.MaybeCut); len(marked) != want {
				t.Errorf("slices marked maybe cut: %v; want %d", marked, want)
			}
			t.Logf("%d records joined, %d device anchors placed; marked %s", st.Joined, placed, strings.Join(marked, ", "))
		})
	}
}

// TestJoinedAnchorContradicted: a device anchor joined to the next record
// whose dev_freq reads short of its device's frequency (the value a cut
// would shorten) is set aside and counted; one whose device has no whole
// anchor to check it against is used, and noted.
func TestJoinedAnchorContradicted(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	generate(&b, genConfig{Seed: 3, Rounds: 8, AnchorEvry: 2_000_000, Damage: stracetest.Damage{JoinRate: 0.05}})
	joined := []byte("dev_freq=50000000[mono_ns=")
	if !bytes.Contains(b.Bytes(), joined) {
		t.Fatal("no device anchor of dev 0 joined")
	}
	log := bytes.Replace(b.Bytes(), joined, []byte("dev_freq=5000[mono_ns="), 1)
	var out bytes.Buffer
	sum, err := phasetrace.Convert(&out, []phasetrace.Input{phasetrace.Bytes("cut.log", log)})
	if err != nil {
		t.Fatal(err)
	}
	const reason = phasetrace.ReasonDeviceAnchorJoined
	if sum.NotDrawn[reason] != 1 || sum.Lossless() || len(sum.Inputs) != 1 || sum.Inputs[0].Torn != 0 {
		t.Errorf("not drawn %v, lossless %v, inputs %+v", sum.NotDrawn, sum.Lossless(), sum.Inputs)
	}
	found := false
	for _, e := range sum.Examples {
		found = found || e.Reason == reason && strings.HasPrefix(e.At, "cut.log:") && strings.HasSuffix(e.Detail, "dev_freq=5000")
	}
	if !found {
		t.Errorf("no example of the contradicted anchor: %v", sum.Examples)
	}
	placed, read := int64(0), int64(bytes.Count(log, []byte("[CLOCK_ANCHOR] v=2")))
	for _, d := range sum.Devices {
		placed += d.Anchors
	}
	if placed != read-1 {
		t.Errorf("%d device anchors placed of %d read; want all but the contradicted", placed, read)
	}
	wholeTrace(t, out.Bytes(), sum)

	// A device whose only anchor is joined: used, and noted.
	const one = "[mono_ns=100][T0x1][TIMING] clock_anchor: [CLOCK_ANCHOR] v=2 pid=7 tid=7 dev=0 host_ns=80 window_ns=20 dev_cyc=5000 dev_freq=50000000" +
		"[mono_ns=1200][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=7 tid=7 inv=1 hid=1 depth=0 name=chip.run ts=1000 dur=150 run_id=1\n"
	out.Reset()
	sum, err = phasetrace.Convert(&out, []phasetrace.Input{phasetrace.Bytes("one.log", []byte(one))})
	if err != nil {
		t.Fatal(err)
	}
	noted := false
	for _, n := range sum.Notes {
		noted = noted || strings.Contains(n, "no other anchor to be confirmed by")
	}
	if !sum.Lossless() || len(sum.Devices) != 1 || sum.Devices[0].Anchors != 1 || !noted {
		t.Errorf("lossless %v, devices %+v, notes %v", sum.Lossless(), sum.Devices, sum.Notes)
	}
}
