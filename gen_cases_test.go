package phasetrace_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/phasetrace/phasetrace/strace"
	"github.com/phasetrace/phasetrace/strace/stracetest"
)

// genCase is a generated log made to hold one case real logs can hold.
type genCase = stracetest.Case

// generatedCases returns small generated logs: one without any knob
// ("base"), one per knob of genConfig, and one with every knob ("all").
// Each case is checked to occur by TestGeneratorMakesEveryCase, so a test
// can iterate over them to see every case at least once.
func generatedCases() []genCase { return stracetest.Cases() }

// readBack is a generated log as strace reads it.
type readBack struct {
	log   []byte
	recs  []strace.Record
	stats strace.Stats
}

func readGenerated(t *testing.T, log []byte) *readBack {
	t.Helper()
	r := strace.NewReader(bytes.NewReader(log), strace.WithMaxProblems(1<<20))
	rb := &readBack{log: log}
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		rb.recs = append(rb.recs, rec.Clone())
	}
	rb.stats = r.Stats()
	if err := rb.stats.Check(); err != nil {
		t.Fatal(err)
	}
	return rb
}

// runKey names one run: its process and invocation.
type runKey struct {
	pid int32
	inv uint64
}

// spanAt is a span and where its record starts in the log.
type spanAt struct {
	strace.Span
	off int64
}

// runs returns each run's host or device spans by name.
func (rb *readBack) runs(device bool) map[runKey]map[string]spanAt {
	out := map[runKey]map[string]spanAt{}
	for _, r := range rb.recs {
		if r.Kind != strace.KindSpan || r.Span.IsDevice() != device || !strings.HasPrefix(r.Span.Name, "chip.") {
			continue
		}
		k := runKey{r.Span.Pid, r.Span.Inv}
		if out[k] == nil {
			out[k] = map[string]spanAt{}
		}
		out[k][r.Span.Name] = spanAt{r.Span, r.Pos.Offset}
	}
	return out
}

// deviceAnchors returns the intact device anchors by dev, in host order.
func (rb *readBack) deviceAnchors() map[int32][]strace.DeviceAnchor {
	out := map[int32][]strace.DeviceAnchor{}
	for _, r := range rb.recs {
		if r.Kind == strace.KindDeviceAnchor {
			out[r.DeviceAnchor.Dev] = append(out[r.DeviceAnchor.Dev], r.DeviceAnchor)
		}
	}
	for _, as := range out {
		slices.SortFunc(as, func(a, b strace.DeviceAnchor) int { return int(a.HostNS - b.HostNS) })
	}
	return out
}

const devicePrefix = "chip.run.runner_run.device_wall"

// parentOf returns the name a dotted name's parent has.
func parentOf(name string) string {
	if i := strings.LastIndexByte(name, '.'); i > 0 {
		return name[:i]
	}
	return ""
}

// caseCheck finds a case in a log read back: how often it occurs, and a
// line that says so.
type caseCheck struct {
	knob string
	// find counts the occurrences. zeroInBase: the base log has none.
	find       func(rb *readBack, cfg genConfig) (int, string)
	zeroInBase bool
}

var caseChecks = []caseCheck{
	{"runtime_ns", findRuntimeNs, true},
	{"host_exact", findHostExact, true},
	{"host_parents_first", findHostParentsFirst, true},
	{"device_children_first", findDeviceChildrenFirst, true},
	{"sparse_anchors", findSparseAnchors, true},
	{"torn_anchors", findTornAnchors, true},
	{"drift", findDrift, false},
	{"huge_ids", findHugeIDs, true},
	{"shared_line", findSharedLine, true},
	{"cut_at_end", findCutAtEnd, true},
	{"joins", findJoins, true},
	{"wall_ns", findWallNS, true},
	{"impossible_phase", findImpossiblePhase, true},
}

// findWallNS counts wall-clock anchors whose wall_ns is not the
// generator's wall time (its epoch plus mono_ns).
func findWallNS(rb *readBack, _ genConfig) (int, string) {
	n := 0
	for _, r := range rb.recs {
		if r.Kind == strace.KindWallAnchor && r.WallAnchor.WallNS != 1_767_225_600_000_000_000+r.WallAnchor.MonoNS {
			n++
		}
	}
	return n, fmt.Sprintf("%d wall-clock anchors off the wall time", n)
}

// findImpossiblePhase counts device phases logged more than a day past
// their run's origin.
func findImpossiblePhase(rb *readBack, _ genConfig) (int, string) {
	n := 0
	for _, r := range rb.recs {
		if r.Kind == strace.KindSpan && r.Span.IsDevice() && r.Span.TS > 86_400_000_000_000 {
			n++
		}
	}
	return n, fmt.Sprintf("%d device phases more than a day past their origin", n)
}

// findRuntimeNs counts device phases of one run that abut on the device but
// are logged overlapping by exactly 1 ns, and children logged ending 1 ns
// past graph_build, the parent they end with. It needs both, at least one
// overlap per 100 runs, and config_validate starting with graph_build.
func findRuntimeNs(rb *readBack, _ genConfig) (int, string) {
	runs := rb.runs(true)
	overlaps, past, sameStart := 0, 0, 0
	for _, ph := range runs {
		get := func(n string) (spanAt, bool) { s, ok := ph[devicePrefix+"."+n]; return s, ok }
		for _, p := range [][2]string{{"preamble", "graph_build"}, {"config_validate", "arena_wire"}, {"arena_wire", "sm_reset"}, {"sm_reset", "orch"}} {
			a, ok1 := get(p[0])
			b, ok2 := get(p[1])
			if ok1 && ok2 && a.End()-b.TS == 1 {
				overlaps++
			}
		}
		gb, ok := get("graph_build")
		if !ok {
			continue
		}
		for _, c := range []string{"config_validate", "arena_wire", "sm_reset", "orch", "sched"} {
			if s, ok := get(c); ok && s.End()-gb.End() == 1 {
				past++
			}
		}
		if cv, ok := get("config_validate"); ok && cv.TS == gb.TS {
			sameStart++
		}
	}
	what := fmt.Sprintf("%d runs: %d abutting phase pairs overlap by 1 ns, %d children end 1 ns past graph_build, %d config_validate start with it", len(runs), overlaps, past, sameStart)
	if past == 0 || sameStart == 0 || overlaps*100 < len(runs) {
		return 0, what
	}
	return overlaps + past, what
}

// findHostExact counts host children with their parent's ts and dur, and
// depth-1 siblings of one run where one ends at the ns the next begins.
func findHostExact(rb *readBack, _ genConfig) (int, string) {
	same, abut := 0, 0
	for _, sp := range rb.runs(false) {
		for name, s := range sp {
			if p, ok := sp[parentOf(name)]; ok && s.TS == p.TS && s.Dur == p.Dur {
				same++
			}
		}
		order := []string{"chip.run.runner_run", "chip.run.claim_release", "chip.run.validate"}
		for i := 1; i < len(order); i++ {
			a, ok1 := sp[order[i-1]]
			b, ok2 := sp[order[i]]
			if ok1 && ok2 && a.End() == b.TS {
				abut++
			}
		}
	}
	what := fmt.Sprintf("%d host children with their parent's ts and dur, %d depth-1 siblings abutting", same, abut)
	if same == 0 || abut == 0 {
		return 0, what
	}
	return same + abut, what
}

// hostOrder counts host parent/child pairs of a run by which is written
// first.
func hostOrder(rb *readBack) (parentsFirst, childrenFirst int) {
	for _, sp := range rb.runs(false) {
		for name, s := range sp {
			if p, ok := sp[parentOf(name)]; ok {
				if p.off < s.off {
					parentsFirst++
				} else {
					childrenFirst++
				}
			}
		}
	}
	return parentsFirst, childrenFirst
}

// findHostParentsFirst counts host parents written before their children;
// none may be written after them.
func findHostParentsFirst(rb *readBack, _ genConfig) (int, string) {
	pf, cf := hostOrder(rb)
	what := fmt.Sprintf("host parents written before their children %d times, after %d times", pf, cf)
	if cf > 0 {
		return 0, what
	}
	return pf, what
}

// findDeviceChildrenFirst counts device phases written before their
// device_wall; none may be written after it.
func findDeviceChildrenFirst(rb *readBack, _ genConfig) (int, string) {
	before, after := 0, 0
	for _, ph := range rb.runs(true) {
		wall, ok := ph[devicePrefix]
		if !ok {
			continue
		}
		for name, s := range ph {
			switch {
			case name == devicePrefix:
			case s.off < wall.off:
				before++
			default:
				after++
			}
		}
	}
	what := fmt.Sprintf("device phases written before their device_wall %d times, after %d times", before, after)
	if after > 0 {
		return 0, what
	}
	return before, what
}

// findSparseAnchors counts runs whose runner_run starts a second or more
// from the nearest device anchor of their device.
func findSparseAnchors(rb *readBack, _ genConfig) (int, string) {
	anchors := rb.deviceAnchors()
	far := 0
	var farthest int64
	for _, sp := range rb.runs(false) {
		rr, ok1 := sp["chip.run.runner_run"]
		dev, ok2 := rb.deviceWallOf(rr.Pid, rr.Inv)
		if !ok1 || !ok2 {
			continue
		}
		nearest := int64(math.MaxInt64)
		for _, a := range anchors[dev] {
			d := rr.TS - a.HostNS
			nearest = min(nearest, max(d, -d))
		}
		farthest = max(farthest, nearest)
		if nearest >= 1e9 {
			far++
		}
	}
	return far, fmt.Sprintf("%d runs a second or more from the nearest anchor, the farthest %.2f s", far, float64(farthest)/1e9)
}

// deviceWallOf returns the device of a run's device_wall.
func (rb *readBack) deviceWallOf(pid int32, inv uint64) (int32, bool) {
	for _, r := range rb.recs {
		if r.Kind == strace.KindSpan && r.Span.Pid == pid && r.Span.Inv == inv && r.Span.Name == devicePrefix {
			a, ok := r.Span.Attr("dev")
			return int32(a.Int), ok
		}
	}
	return 0, false
}

// findTornAnchors counts torn device anchors the reader counted, away from
// the end of the log.
func findTornAnchors(rb *readBack, _ genConfig) (int, string) {
	n := 0
	for _, p := range rb.stats.Problems {
		if errors.Is(p, strace.ErrTorn) && !errors.Is(p, strace.ErrUnterminated) &&
			bytes.HasPrefix(rb.log[p.Offset:], []byte("[CLOCK_ANCHOR]")) && p.Line < rb.stats.Lines {
			n++
		}
	}
	return n, fmt.Sprintf("%d torn device anchors counted in the middle of the log", n)
}

// findDrift measures each device's counter rate against the host over
// pairs of anchors 1.5 s or more apart (error at most 40 µs / 1.5 s, under
// 27 ppm): device 0 must run DriftPPM fast throughout, device 1's rate must
// vary by DriftPPM/10 or more (it wanders slowly, by under 5 ppm a
// second, as a real clock can).
func findDrift(rb *readBack, cfg genConfig) (int, string) {
	rates := map[int32][]float64{}
	for dev, as := range rb.deviceAnchors() {
		for i, a := range as {
			for _, b := range as[i+1:] {
				ma, _ := a.Mid()
				mb, _ := b.Mid()
				if mb-ma < 1_500_000_000 {
					continue
				}
				devNs := float64(b.DevCyc-a.DevCyc) * 1e9 / float64(a.DevFreq)
				rates[dev] = append(rates[dev], (devNs/float64(mb-ma)-1)*1e6)
				break
			}
		}
	}
	r0, r1 := rates[0], rates[1]
	if len(r0) == 0 || len(r1) < 2 {
		return 0, fmt.Sprintf("too few anchors for a rate: %d and %d pairs", len(r0), len(r1))
	}
	what := fmt.Sprintf("device 0 runs %.0f..%.0f ppm fast, device 1 %.0f..%.0f ppm (%d, %d anchor pairs)",
		slices.Min(r0), slices.Max(r0), slices.Min(r1), slices.Max(r1), len(r0), len(r1))
	if math.Abs(slices.Min(r0)-cfg.DriftPPM) > 30 || math.Abs(slices.Max(r0)-cfg.DriftPPM) > 30 ||
		slices.Max(r1)-slices.Min(r1) < cfg.DriftPPM/10 || math.Max(-slices.Min(r1), slices.Max(r1)) > cfg.DriftPPM+30 {
		return 0, what
	}
	return 1, what
}

// findHugeIDs counts spans with an inv above 2^63 and pids and tids near
// their types' limits.
func findHugeIDs(rb *readBack, _ genConfig) (int, string) {
	inv, hid, pid, tid := 0, 0, 0, 0
	for _, r := range rb.recs {
		if r.Kind != strace.KindSpan {
			continue
		}
		s := r.Span
		if s.Inv > 1<<63 {
			inv++
		}
		if s.Hid > 1<<63 {
			hid++
		}
		if s.Pid > math.MaxInt32-16 {
			pid++
		}
		if s.Tid > math.MaxInt64-16 {
			tid++
		}
	}
	what := fmt.Sprintf("spans with inv > 2^63: %d, hid > 2^63: %d, pid near 2^31: %d, tid near 2^63: %d", inv, hid, pid, tid)
	if inv == 0 || hid == 0 || pid == 0 || tid == 0 {
		return 0, what
	}
	return inv, what
}

// findSharedLine counts records that start on the line of the one before.
func findSharedLine(rb *readBack, _ genConfig) (int, string) {
	n := 0
	for i := 1; i < len(rb.recs); i++ {
		if rb.recs[i].Pos.Line == rb.recs[i-1].Pos.Line {
			n++
		}
	}
	return n, fmt.Sprintf("%d records on the line of another", n)
}

// findJoins counts records joined to the next on their line, and needs
// every kind the runtime writes (span, wall and device anchor, bind line)
// among them.
func findJoins(rb *readBack, _ genConfig) (int, string) {
	joined := map[strace.Kind]int{}
	for _, r := range rb.recs {
		if r.Joined {
			joined[r.Kind]++
		}
	}
	what := fmt.Sprintf("records joined to the next on their line, by kind: %v (%d counted)", joined, rb.stats.Joined)
	for _, k := range []strace.Kind{strace.KindSpan, strace.KindWallAnchor, strace.KindDeviceAnchor, strace.KindBindPhase} {
		if joined[k] == 0 {
			return 0, what
		}
	}
	return int(rb.stats.Joined), what
}

// findCutAtEnd finds a log without a final line end whose last record the
// reader counted as cut.
func findCutAtEnd(rb *readBack, _ genConfig) (int, string) {
	st := rb.stats
	if bytes.HasSuffix(rb.log, []byte("\n")) || !st.Unterminated || len(st.Problems) == 0 {
		return 0, fmt.Sprintf("unterminated %v", st.Unterminated)
	}
	p := st.Problems[len(st.Problems)-1]
	if !errors.Is(p, strace.ErrUnterminated) || p.Line != st.Lines {
		return 0, fmt.Sprintf("last problem %v", p)
	}
	return 1, fmt.Sprintf("the log ends inside its last record: %v", p)
}

// TestGeneratorMakesEveryCase reads every generated case back and checks
// that its case really occurs, that the base log holds none of them, that
// the log with every knob holds all of them, and that nothing but the
// intended cuts is lost.
func TestGeneratorMakesEveryCase(t *testing.T) {
	t.Parallel()
	for _, c := range generatedCases() {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			rb := readGenerated(t, c.Log)
			for _, chk := range caseChecks {
				if c.Name != chk.knob && c.Name != "all" && (c.Name != "base" || !chk.zeroInBase) {
					continue
				}
				n, what := chk.find(rb, c.Config)
				switch {
				case c.Name == "base" && n != 0:
					t.Errorf("%s occurs in the base log: %s", chk.knob, what)
				case c.Name != "base" && n == 0:
					t.Errorf("%s does not occur: %s", chk.knob, what)
				default:
					t.Logf("%s: %s", chk.knob, what)
				}
			}
			st := rb.stats
			lost := st.Lost()
			switch c.Name {
			case "torn_anchors":
				n, _ := findTornAnchors(rb, c.Config)
				lost -= int64(n)
			case "cut_at_end":
				lost--
			case "all":
				lost = 0 // the quirks lose records of their own
			}
			if lost != 0 {
				t.Errorf("%d records lost besides the intended: %v", lost, st.Problems)
			}
			if st.Records.Spans == 0 || st.Records.DeviceAnchors == 0 {
				t.Errorf("records %+v", st.Records)
			}
		})
	}
}
