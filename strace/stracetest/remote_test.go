package stracetest

import (
	"bytes"
	"testing"

	"github.com/phasetrace/phasetrace/strace"
)

// The remote scenario is deterministic, every log reads back whole, and
// every remote run's extent lies between its dispatch and its complete.
func TestGenerateRemote(t *testing.T) {
	t.Parallel()
	cfg := RemoteConfig{Seed: 3, Tasks: 6, GapMin: 1e8, GapMean: 2e8, GapMax: 5e8, WallErr: 1e6, SamePids: true, AnchorEvry: 1e8,
		Hosts: []RemoteHost{{Machine: "machine1", DriftPPM: -46, FwdMin: 30e3, FwdJitter: 30e3, RetMin: 25e3, RetJitter: 20e3},
			{Machine: "machine2", DriftPPM: 20, FwdMin: 40e3, FwdJitter: 30e3, RetMin: 20e3, RetJitter: 20e3}}}
	logs, truth := GenerateRemote(cfg)
	again, _ := GenerateRemote(cfg)
	if len(logs) != 3 {
		t.Fatalf("%d logs, want 3", len(logs))
	}
	for i, l := range logs {
		if !bytes.Equal(l.Log, again[i].Log) {
			t.Errorf("%s: two generations differ", l.Name)
		}
		r := strace.NewReader(bytes.NewReader(l.Log), strace.WithName(l.Name))
		for {
			if _, err := r.Read(); err != nil {
				break
			}
		}
		st := r.Stats()
		if st.Torn+st.Malformed+st.UnknownVersion > 0 || st.Check() != nil {
			t.Errorf("%s: %+v", l.Name, st)
		}
		if i > 0 {
			if m, ok := strace.DaemonBanner(l.Log); !ok || m != l.Machine {
				t.Errorf("%s: banner %q, %v", l.Name, m, ok)
			}
		}
	}
	for _, h := range cfg.Hosts {
		ht := truth.Hosts[h.Machine]
		if ht.FwdMin < h.FwdMin || ht.RetMin < h.RetMin {
			t.Errorf("%s: latencies %+v below their minimum", h.Machine, ht)
		}
		first := truth.Spans[RemoteKey{h.Machine, 3000, 1, strace.SpanRemoteRunFirst}]
		last := truth.Spans[RemoteKey{h.Machine, 3000, 1, strace.SpanRemoteRunLast}]
		if first.TrueStart == 0 || last.TrueEnd <= first.TrueStart {
			t.Errorf("%s: run 1 truly [%d, %d]", h.Machine, first.TrueStart, last.TrueEnd)
		}
	}
}
