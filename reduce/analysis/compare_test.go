package analysis

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCompare works through compare_base.log and compare_measure.log:
// each holds two repetitions (two stamps), three binds per repetition, the
// first cold. Minimum of per-bind sums (host_orch + graph_pack +
// arena_h2d), µs:
//
//	rep 1  base min(300+200+50, 280+210+60) = 550   measure min(250+200+50, 260+205+60) = 500   delta −50
//	rep 2  base min(310+190+50, 290+220+45) = 550   measure min(300+170+50, 295+180+48) = 520   delta −30
//
// Both deltas are negative: measure is faster.
func TestCompare(t *testing.T) {
	t.Parallel()
	base, measure := testLog(t, "compare_base.log"), testLog(t, "compare_measure.log")
	c, err := CompareBinds(base.Repetitions(), measure.Repetitions())
	if err != nil {
		t.Fatal(err)
	}
	if c.Verdict != MeasureFaster || len(c.Reasons) != 0 {
		t.Errorf("verdict %v, reasons %v", c.Verdict, c.Reasons)
	}
	var got [][3]int64
	for _, r := range c.Reps {
		got = append(got, [3]int64{r.BaseMin, r.MeasureMin, r.Delta})
	}
	if diff := cmp.Diff([][3]int64{{550000, 500000, -50000}, {550000, 520000, -30000}}, got); diff != "" {
		t.Errorf("repetitions (-want +got):\n%s", diff)
	}
	if !c.Stamps.CommitOnly || c.Stamps.Same || !cmp.Equal(c.Stamps.Removed, []string{"4d31f482"}) || !cmp.Equal(c.Stamps.Added, []string{"5e6f7a8b"}) {
		t.Errorf("stamps %+v", c.Stamps)
	}

	// One repetition decides nothing.
	c, _ = CompareBinds(base.Repetitions()[:1], measure.Repetitions()[:1])
	if c.Verdict != NoVerdict || !hasReason(c, "interleave at least two") {
		t.Errorf("one repetition: %v %v", c.Verdict, c.Reasons)
	}
	// Swapping the second pair's arms makes rep 2's delta +30: the signs disagree.
	c, _ = CompareBinds([]*Log{base.Repetitions()[0], measure.Repetitions()[1]}, []*Log{measure.Repetitions()[0], base.Repetitions()[1]})
	if c.Verdict != NoVerdict || !hasReason(c, "disagrees across repetitions (up in 2, down in 1, equal in none)") {
		t.Errorf("disagreeing: %v %v", c.Verdict, c.Reasons)
	}
	if _, err := CompareBinds(base.Repetitions(), measure.Repetitions()[:1]); !errors.Is(err, ErrRepetitions) {
		t.Errorf("unequal arms: %v", err)
	}
}

func hasReason(c *Comparison, s string) bool {
	for _, r := range c.Reasons {
		if strings.Contains(r, s) {
			return true
		}
	}
	return false
}

func TestCompareRefusals(t *testing.T) {
	t.Parallel()
	arm := func(stamp, autoload string, sums ...[3]int64) *Log {
		var lines []string
		if stamp != "" {
			lines = append(lines, "[stamp] "+stamp+"\n")
		}
		if autoload != "" {
			lines = append(lines, "[mono_ns=1][T0x1][TIMING] r: torch_backend_autoload setting="+autoload+" effective=x torch_imported=true torch_npu_loaded=false\n")
		}
		for i, s := range sums {
			lines = append(lines, bindLines(1, i+1, int64(i+1)*1e6, s[0], s[1], s[2])...)
		}
		return logOf(t, stamp, lines...)
	}
	cold := [3]int64{9000, 900, 90}
	slow, fast := [3]int64{300, 200, 50}, [3]int64{250, 200, 50}
	for _, c := range []struct {
		name          string
		base, measure []*Log
		reason        string
		verdict       Verdict
	}{
		{"no stamp", []*Log{arm("", "0", cold, slow), arm("", "0", cold, slow)}, []*Log{arm("b cmd", "0", cold, fast), arm("b cmd", "0", cold, fast)},
			"an arm with no [stamp] line", NoVerdict},
		{"stamps differ beyond the commit", []*Log{arm("a cmd --rounds 6", "0", cold, slow), arm("a cmd --rounds 6", "0", cold, slow)},
			[]*Log{arm("b cmd --rounds 3", "0", cold, fast), arm("b cmd --rounds 3", "0", cold, fast)}, "differ in more than the commit", NoVerdict},
		{"autoload differs", []*Log{arm("a cmd", "0", cold, slow), arm("a cmd", "0", cold, slow)}, []*Log{arm("b cmd", "1", cold, fast), arm("b cmd", "1", cold, fast)},
			"torch_backend_autoload records differ", NoVerdict},
		{"no autoload", []*Log{arm("a cmd", "", cold, slow), arm("a cmd", "", cold, slow)}, []*Log{arm("b cmd", "", cold, fast), arm("b cmd", "", cold, fast)},
			"neither arm has a torch_backend_autoload record", MeasureFaster},
		{"segment sets differ", []*Log{arm("a cmd", "0", cold, slow), arm("a cmd", "0", cold, slow)},
			[]*Log{arm("b cmd", "0", [3]int64{9000, 0, 90}, [3]int64{250, 0, 50}), arm("b cmd", "0", cold, fast)}, "segment set differs", NoVerdict},
		{"a repetition without warm binds", []*Log{arm("a cmd", "0", cold), arm("a cmd", "0", cold, slow)}, []*Log{arm("b cmd", "0", cold, fast), arm("b cmd", "0", cold, fast)},
			"repetition 1 has no control-plane total in the base arm", NoVerdict},
		{"no change", []*Log{arm("a cmd", "0", cold, slow), arm("a cmd", "0", cold, slow)}, []*Log{arm("b cmd", "0", cold, slow), arm("b cmd", "0", cold, slow)},
			"", NoChange},
		{"slower", []*Log{arm("a cmd", "0", cold, fast), arm("a cmd", "0", cold, fast)}, []*Log{arm("b cmd", "0", cold, slow), arm("b cmd", "0", cold, slow)},
			"", MeasureSlower},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmpn, err := CompareBinds(c.base, c.measure)
			if err != nil {
				t.Fatal(err)
			}
			if cmpn.Verdict != c.verdict || (c.reason != "" && !hasReason(cmpn, c.reason)) {
				t.Errorf("verdict %v, reasons %q", cmpn.Verdict, cmpn.Reasons)
			}
			var b strings.Builder
			if err := WriteComparison(&b, cmpn); err != nil || !strings.Contains(b.String(), "verdict: "+c.verdict.String()) {
				t.Errorf("rendering %v:\n%s", err, b.String())
			}
		})
	}
}

func TestDiffStamps(t *testing.T) {
	t.Parallel()
	d := diffStamps("a env X=1 python main.py --rounds 6", "b env X=1 Y=2 python main.py --rounds 3")
	if d.CommitOnly || d.Same || !cmp.Equal(d.Removed, []string{"a", "6"}) || !cmp.Equal(d.Added, []string{"b", "Y=2", "3"}) {
		t.Errorf("diff %+v", d)
	}
	if d := diffStamps("x", "x"); !d.Same {
		t.Errorf("same %+v", d)
	}
}
