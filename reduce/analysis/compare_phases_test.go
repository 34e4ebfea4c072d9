package analysis

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/phasetrace/phasetrace/strace"
	"github.com/phasetrace/phasetrace/strace/stracetest"
)

// decodeTrees streams a log through PhaseRepetitions.
func decodeTrees(t *testing.T, log []byte) []*Tree {
	t.Helper()
	r := NewPhaseRepetitions()
	if err := r.ReadFrom(strace.NewReader(bytes.NewReader(log))); err != nil {
		t.Fatal(err)
	}
	return r.Trees()
}

// TestComparePhasesGolden compares the phases of compare_base.log and
// compare_measure.log, two repetitions each, as stracestat compare prints
// them after the control plane.
func TestComparePhasesGolden(t *testing.T) {
	t.Parallel()
	var arms [2][]*Tree
	for i, name := range []string{"compare_base.log", "compare_measure.log"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		arms[i] = decodeTrees(t, b)
	}
	c, err := ComparePhases(arms[0], arms[1])
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := WritePhaseComparison(&out, c); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, filepath.Join("testdata", "compare_phases.golden"), out.String())
}

// TestComparePhasesFindsTheSlowerPhase compares generated runs, two
// repetitions, whose measure arm's sm_reset is 1 ms longer in every run
// and is the same otherwise: sm_reset is slower by exactly 1 ms (device
// phases are logged in device ns), the stages that hold it slower too, the
// other phases unchanged.
func TestComparePhasesFindsTheSlowerPhase(t *testing.T) {
	t.Parallel()
	const slower = 1_000_000
	var base, measure []*Tree
	for seed := range uint64(2) {
		cfg := stracetest.Config{Seed: 20 + seed, Rounds: 9, AnchorPerLaunch: true}
		var b, m bytes.Buffer
		if err := stracetest.Generate(&b, cfg); err != nil {
			t.Fatal(err)
		}
		cfg.Slower = stracetest.Slower{Phase: "sm_reset", Ns: slower}
		if err := stracetest.Generate(&m, cfg); err != nil {
			t.Fatal(err)
		}
		base, measure = append(base, decodeTrees(t, b.Bytes())...), append(measure, decodeTrees(t, m.Bytes())...)
	}
	c, err := ComparePhases(base, measure)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Verdict{}
	for _, row := range c.Rows {
		got[row.Name] = row.Verdict
		for i, r := range row.Reps {
			switch d := r.DeltaNs(); {
			case !r.OK:
				t.Errorf("%s: not in both arms of repetition %d", row.Name, i+1)
			case row.Name == strace.SpanDeviceWall+".sm_reset" && d != slower:
				t.Errorf("sm_reset, repetition %d: delta %v ns, want %d", i+1, d, slower)
			}
		}
	}
	dev := strace.SpanDeviceWall
	want := map[string]Verdict{
		dev + ".sm_reset": MeasureSlower, dev: MeasureSlower, dev + ".graph_build": MeasureSlower, strace.SpanRun: MeasureSlower,
		strace.SpanRunnerRun: MeasureSlower, dev + ".preamble": NoChange, dev + ".config_validate": NoChange, dev + ".arena_wire": NoChange,
		dev + ".post_orch": NoChange, dev + ".task_slot_0": NoChange, dev + ".orch": NoChange, dev + ".sched": NoChange, "Effective": NoChange,
	}
	for name, v := range want {
		if got[name] != v {
			t.Errorf("%s: %v, want %v", name, got[name], v)
		}
	}
	var out bytes.Buffer
	if err := WritePhaseComparison(&out, c); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(out.Bytes(), []byte("      sm_reset [dev]")) || !bytes.Contains(out.Bytes(), []byte("+1000.0  measure slower\n")) {
		t.Errorf("the table does not show sm_reset's delta:\n%s", out.String())
	}

	// One repetition shows the delta, decides nothing.
	one, _ := ComparePhases(base[:1], measure[:1])
	if diff := cmp.Diff([]string{"one repetition"}, reasons(one, dev+".sm_reset")); diff != "" {
		t.Error(diff)
	}
	if _, err := ComparePhases(base, measure[:1]); err == nil {
		t.Error("unequal arms compared")
	}
}

func reasons(c *PhaseComparison, name string) []string {
	for _, r := range c.Rows {
		if r.Name == name {
			return []string{r.Reason}
		}
	}
	return nil
}
