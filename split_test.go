package phasetrace_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/phasetrace/phasetrace"
	"github.com/phasetrace/phasetrace/perfetto/check"
	"github.com/phasetrace/phasetrace/perfetto/check/processor"
	"github.com/phasetrace/phasetrace/strace"
	"github.com/phasetrace/phasetrace/strace/stracetest"
)

// memParts collects a split trace's parts in memory.
type memParts struct {
	parts        []*memPart
	failAt       int // the part whose open fails (0: none)
	open, atOnce int // parts open now, and the most at once
}

type memPart struct {
	bytes.Buffer
	closed bool
	set    *memParts
}

func (p *memPart) Close() error {
	if p.closed {
		return errors.New("closed twice")
	}
	p.closed = true
	p.set.open--
	return nil
}

func (m *memParts) openPart(n int) (io.WriteCloser, string, error) {
	if n != len(m.parts)+1 {
		return nil, "", fmt.Errorf("part %d opened after %d", n, len(m.parts))
	}
	if n == m.failAt {
		return nil, "", errors.New("disk full")
	}
	p := &memPart{set: m}
	m.parts = append(m.parts, p)
	m.open++
	m.atOnce = max(m.atOnce, m.open)
	return p, phasetrace.PartName("run.pftrace", n), nil
}

// loneFlowIDs counts the flow ids of a part with no other end in it: an
// arrow across parts whose end drawn first kept its id (the trace
// processor ignores such an id; perfetto/check reports it).
func loneFlowIDs(tr *check.Trace) int {
	n := 0
	for _, p := range tr.Problems {
		if p.Name == "flow_end_without_start" || p.Name == "flow_without_destination" {
			n++
		}
	}
	return n
}

// splitTrace is a split conversion read back: its parts and its overview.
type splitTrace struct {
	sum      *phasetrace.Summary
	parts    []*check.Trace
	raw      [][]byte
	overview *check.Trace
	ovRaw    []byte
}

func convertSplit(t *testing.T, logs []phasetrace.Input, max int, opts ...phasetrace.Option) *splitTrace {
	t.Helper()
	m := &memParts{}
	var ov bytes.Buffer
	sum, err := phasetrace.Convert(&ov, logs, append(opts, phasetrace.WithSplit(max, m.openPart))...)
	if err != nil {
		t.Fatal(err)
	}
	st := &splitTrace{sum: sum, ovRaw: ov.Bytes()}
	alone := 0
	for i, p := range m.parts {
		if !p.closed {
			t.Errorf("part %d was not closed", i+1)
		}
		tr, err := readTrace(p.Bytes())
		if err != nil {
			t.Fatalf("part %d: %v", i+1, err)
		}
		fullNamed(t, tr)
		if n := loneFlowIDs(tr); n > 0 && n == len(tr.Problems) {
			alone += n
		} else if err := tr.Err(); err != nil {
			t.Errorf("part %d: the trace processor would report: %v", i+1, err)
		}
		st.parts = append(st.parts, tr)
		st.raw = append(st.raw, p.Bytes())
	}
	if across := sum.Unlinked[phasetrace.ReasonArrowAcrossParts]; int64(alone) > across {
		t.Errorf("%d flow ids alone in their parts, %d arrows across parts", alone, across)
	}
	st.overview, err = readTrace(ov.Bytes())
	if err != nil {
		t.Fatalf("overview: %v", err)
	}
	fullNamed(t, st.overview)
	if err := st.overview.Err(); err != nil {
		t.Errorf("overview: the trace processor would report: %v", err)
	}
	return st
}

// TestSplitAddsUpToTheWholeTrace converts generated logs whole and split
// into parts of many sizes, and requires: every part at most the size
// asked for (or one invocation alone), readable with no problem; the
// parts' slices together exactly the whole trace's, each invocation in one
// part; the parts' arrows the whole trace's but those counted across
// parts; the overview one slice per invocation naming the part that
// holds it, one per part, and the whole trace's counters; and a summary
// that says what each part holds.
func TestSplitAddsUpToTheWholeTrace(t *testing.T) {
	t.Parallel()
	logs := map[string][]byte{
		"realistic":                  generated(stracetest.Realistic(400 << 10)),
		"four ranks, prewarm, exact": generated(genConfig{Ranks: 4, Rounds: 60, Seed: 7, Pipelined: true, Legacy: true, Ext: true, Prewarm: true, HostExact: true, RuntimeNs: true, AnchorEvry: 50_000_000}),
	}
	for name, log := range logs {
		in := []phasetrace.Input{phasetrace.Bytes("run.log", log)}
		full, fullSum, _ := convert(t, in)
		w := newWhole(full, fullSum)
		sizes := []int{1, 25, 100, 1000, 5000, 1 << 30}
		if len(log) > 1<<20 {
			sizes = []int{1, 100, 5000}
		}
		for _, max := range sizes {
			t.Run(fmt.Sprintf("%s/%d", name, max), func(t *testing.T) {
				t.Parallel()
				st := convertSplit(t, in, max)
				checkSplit(t, w, st, max)
			})
		}
	}
}

// whole is a whole conversion, and its slices and counter values, for
// the split conversions checked against it.
type whole struct {
	tr               *check.Trace
	sum              *phasetrace.Summary
	slices, counters map[string]int
}

func newWhole(tr *check.Trace, sum *phasetrace.Summary) *whole {
	return &whole{tr, sum, sliceSetNoDepth(tr), counterSet(tr, -1<<63, 1<<63-1)}
}

// checkSplit checks a split conversion against the whole one.
func checkSplit(t *testing.T, w *whole, st *splitTrace, max int) {
	t.Helper()
	full, fullSum := w.tr, w.sum
	sum := st.sum
	if sum.Split == nil || len(sum.Split.Parts) != len(st.parts) {
		t.Fatalf("the summary lists %v parts, %d were written", sum.Split, len(st.parts))
	}
	if err := sum.Spans.Check(); err != nil {
		t.Error(err)
	}
	partOf, arrowsIn := checkParts(t, w, st, max)
	if sum.Output.Slices != int64(len(full.Slices)) || sum.Spans.Drawn != fullSum.Spans.Drawn {
		t.Errorf("the summary says %d slices (%d spans) drawn, the whole trace %d (%d)", sum.Output.Slices, sum.Spans.Drawn, len(full.Slices), fullSum.Spans.Drawn)
	}
	across := sum.Unlinked[phasetrace.ReasonArrowAcrossParts]
	if arrowsIn+across != int64(len(full.Flows)) || arrows(sum) != arrowsIn {
		t.Errorf("%d arrows in parts, %d across parts; the whole trace has %d; the summary says %d drawn", arrowsIn, across, len(full.Flows), arrows(sum))
	}
	if max >= 100 && len(st.parts) <= 64 && across != 0 {
		// A hand-off's spans and its run go by one start, and its run
		// holds room for them: only parts too small for a run and its
		// hand-off cut arrows, or parts written out early, past the 64
		// open at once (these logs are shorter than the flow horizon
		// their node spans wait).
		t.Errorf("%d arrows across parts of %d slices", across, max)
	}
	if handOffs(sum) != handOffs(fullSum) {
		t.Errorf("%d hand-offs, the whole trace %d", handOffs(sum), handOffs(fullSum))
	}
	checkOverview(t, w, st, partOf)
}

// checkParts checks a split conversion's parts: each as the summary says,
// at most max slices or one invocation, each invocation in one part, no
// counter and no bare track, and their slices together the whole
// trace's. It returns the part of each invocation (pid/inv) and the
// arrows the parts hold.
func checkParts(t *testing.T, w *whole, st *splitTrace, max int) (partOf map[string]int, arrowsIn int64) {
	t.Helper()
	sum := st.sum
	union := map[string]int{}
	partOf = map[string]int{} // invocation (pid, inv) → part
	for i, tr := range st.parts {
		ps := sum.Split.Parts[i]
		if ps.Part != i+1 || ps.Name != phasetrace.PartName("run.pftrace", i+1) || ps.Slices != int64(len(tr.Slices)) {
			t.Errorf("part %d: the summary says %+v; it holds %d slices", i+1, ps, len(tr.Slices))
		}
		invs := invocationsOf(tr)
		if ps.Invocations != int64(len(invs)) {
			t.Errorf("part %d: the summary says %d invocations; it holds slices of %d", i+1, ps.Invocations, len(invs))
		}
		if len(tr.Slices) > max && len(invs) != 1 {
			t.Errorf("part %d holds %d slices, over %d, and %d invocations", i+1, len(tr.Slices), max, len(invs))
		}
		for inv := range invs {
			if j, ok := partOf[inv]; ok {
				t.Errorf("invocation %s is in parts %d and %d", inv, j, i+1)
			}
			partOf[inv] = i + 1
		}
		for k, n := range sliceSetNoDepth(tr) {
			union[k] += n
		}
		arrowsIn += int64(len(tr.Flows))
		if len(tr.Counters) != 0 {
			t.Errorf("part %d holds %d counter values", i+1, len(tr.Counters))
		}
		if bare := tracksWithout(tr); len(bare) > 0 {
			t.Errorf("part %d: tracks with nothing drawn on them: %q", i+1, bare)
		}
	}
	if diff := quickDiff(w.slices, union); diff != "" {
		t.Errorf("the parts' slices differ from the whole trace's (-whole +parts):\n%s", diff)
	}
	return partOf, arrowsIn
}

// checkOverview checks a split conversion's overview: each invocation's
// root, naming its part (partOf), a slice per part on the parts track, and
// the whole trace's counters; and the summary's account of it.
func checkOverview(t *testing.T, w *whole, st *splitTrace, partOf map[string]int) {
	t.Helper()
	fullSum, sum := w.sum, st.sum
	ov := st.overview
	var roots, listed int64
	for _, s := range ov.Slices {
		tk, _ := ov.Track(s.Track)
		if strings.HasPrefix(tk.Name, phasetrace.PartsTrack) {
			listed++
			n, _ := argOf(s, "part")
			if i, ok := n.(int64); !ok || i < 1 || int(i) > len(sum.Split.Parts) {
				t.Errorf("the parts track names part %v", n)
			} else if p := sum.Split.Parts[i-1]; p.Name != s.Name || p.Start != s.TS || p.End != s.TS+s.Dur {
				t.Errorf("the parts track shows %s [%d, %d]; the summary says %+v", s.Name, s.TS, s.TS+s.Dur, p)
			}
			continue
		}
		roots++
		part, _ := argOf(s, "part_number")
		name, _ := argOf(s, "part")
		inv, _ := argOf(s, "inv")
		key := fmt.Sprintf("%d/%v", pidOf(ov, s.Track), inv)
		if n, ok := part.(int64); !ok || int(n) != partOf[key] || name != phasetrace.PartName("run.pftrace", int(n)) {
			t.Errorf("the overview puts invocation %s (%s) in part %v %v; it is in part %d", key, s.Name, part, name, partOf[key])
		}
	}
	if roots != fullSum.Invocations-fullSum.Incomplete || roots != sum.Invocations-sum.Incomplete {
		t.Errorf("the overview has %d invocations; %d were drawn whole (%d whole)", roots, sum.Invocations-sum.Incomplete, fullSum.Invocations-fullSum.Incomplete)
	}
	if nonEmpty := countNonEmpty(sum.Split.Parts); listed != nonEmpty {
		t.Errorf("the parts track lists %d parts, %d hold slices", listed, nonEmpty)
	}
	if diff := quickDiff(w.counters, counterSet(ov, -1<<63, 1<<63-1)); diff != "" {
		t.Errorf("the overview's counters differ from the whole trace's (-whole +overview):\n%s", diff)
	}
	if sum.Split.Overview.Slices != int64(len(ov.Slices)) || sum.Split.Overview.Counters != int64(len(ov.Counters)) {
		t.Errorf("the summary says the overview holds %+v; it holds %d slices, %d counter values", sum.Split.Overview, len(ov.Slices), len(ov.Counters))
	}
	// The text's wrote line counts the counter values the overview holds.
	var text strings.Builder
	sum.WriteText(&text)
	if want := fmt.Sprintf(" %d counter values (in the overview)", len(ov.Counters)); len(ov.Counters) > 0 && !strings.Contains(text.String(), want) {
		t.Errorf("the summary text lacks %q:\n%s", want, text.String())
	}
}

func countNonEmpty(ps []phasetrace.PartSummary) int64 {
	var n int64
	for _, p := range ps {
		if p.Slices > 0 {
			n++
		}
	}
	return n
}

// invocationsOf is the set of invocations (pid/inv) a trace has slices of.
func invocationsOf(tr *check.Trace) map[string]bool {
	m := map[string]bool{}
	for _, s := range tr.Slices {
		inv, ok := argOf(s, "inv")
		if !ok {
			continue
		}
		if _, ok := inv.(uint64); !ok {
			continue
		}
		if !strace.FamilyOf(s.Name).HasInvocation() { // drawn one by one, never grouped into runs
			continue
		}
		m[fmt.Sprintf("%d/%v", pidOf(tr, s.Track), inv)] = true
	}
	return m
}

// sliceSetNoDepth is the multiset of a trace's slices by their track's
// path, name, time and arguments: a slice's depth is among the slices of
// its own trace (a part does not hold an ext. span of another part that
// encloses its run).
func sliceSetNoDepth(tr *check.Trace) map[string]int {
	m := map[string]int{}
	for _, s := range tr.Slices {
		m[fmt.Sprintf("%s | %s [%d +%d] %v", trackPath(tr, s.Track), s.Name, s.TS, s.Dur, s.Args)]++
	}
	return m
}

// TestSplitHostileLogs splits every hostile log into parts of a few sizes:
// the conversion still accounts for every span, draws as many slices as
// the whole one, and no part is over its size but one holding a single
// invocation; the summary says the parts as they are, and survives JSON.
func TestSplitHostileLogs(t *testing.T) {
	t.Parallel()
	for _, tc := range hostileLogs() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var inputs []phasetrace.Input
			size := 0
			for i, l := range tc.logs {
				inputs = append(inputs, phasetrace.Bytes(fmt.Sprintf("log%d", i), []byte(l)))
				size += len(l)
			}
			if size > 4<<20 {
				t.Skip("a log of nesting, not of runs: hostile_test.go converts it")
			}
			whole, err := phasetrace.Convert(io.Discard, inputs, tc.opts...)
			if err != nil {
				t.Fatal(err)
			}
			sizes := []int{1, 3, 50}
			if whole.Spans.Read > 2_000 {
				sizes = []int{50} // a part per span would take as long as the rest together
			}
			for _, max := range sizes {
				m := &memParts{}
				sum, err := phasetrace.Convert(io.Discard, inputs, append(tc.opts, phasetrace.WithSplit(max, m.openPart))...)
				if err != nil {
					t.Fatal(err)
				}
				if err := sum.Spans.Check(); err != nil {
					t.Errorf("parts of %d: %v", max, err)
				}
				// Each part has the trace writer's limits on tracks and
				// overflow lanes of its own: a log over them draws more
				// in parts.
				over := false
				for _, r := range []phasetrace.Reason{phasetrace.ReasonTrackLimit, phasetrace.ReasonLanesFull, phasetrace.ReasonLanesLimit, phasetrace.ReasonWriterRefused} {
					over = over || whole.Spans.NotDrawn[r] > 0
				}
				if over && sum.Spans.Drawn < whole.Spans.Drawn || !over && (sum.Spans.Drawn != whole.Spans.Drawn || sum.Output.Slices != whole.Output.Slices) {
					t.Errorf("parts of %d: %d spans, %d slices drawn; the whole trace %d, %d", max, sum.Spans.Drawn, sum.Output.Slices, whole.Spans.Drawn, whole.Output.Slices)
				}
				var slices int64
				for i, p := range m.parts {
					tr, err := readTrace(p.Bytes())
					if err != nil {
						t.Fatalf("parts of %d: part %d: %v", max, i+1, err)
					}
					fullNamed(t, tr)
					if len(tr.Slices) > max && len(invocationsOf(tr)) != 1 {
						t.Errorf("parts of %d: part %d holds %d slices", max, i+1, len(tr.Slices))
					}
					if ps := sum.Split.Parts[i]; ps.Slices != int64(len(tr.Slices)) || ps.Invocations != int64(len(invocationsOf(tr))) {
						t.Errorf("parts of %d: part %d holds %d slices of %d invocations, the summary says %+v", max, i+1, len(tr.Slices), len(invocationsOf(tr)), ps)
					}
					slices += int64(len(tr.Slices))
				}
				if slices != sum.Output.Slices {
					t.Errorf("parts of %d: %d slices in the parts, the summary says %d", max, slices, sum.Output.Slices)
				}
				checkSummaryJSON(t, sum)
			}
		})
	}
}

// TestSplitInTheTraceProcessor loads every part and the overview of a
// split conversion into Perfetto's trace processor: each loads without an
// error, holds what perfetto/check reads, and the parts' slices and arrows
// add up to the whole trace's as the trace processor counts them.
func TestSplitInTheTraceProcessor(t *testing.T) {
	t.Parallel()
	sh, ok := processor.FromEnv()
	if !ok {
		t.Skipf("%s is not set: Perfetto's trace processor is not run", processor.EnvVar)
	}
	in := []phasetrace.Input{phasetrace.Bytes("run.log", generated(stracetest.Realistic(400<<10)))}
	full, fullSum, fullOut := convert(t, in)
	processorAgrees(t, fullOut, full, fullSum)
	st := convertSplit(t, in, 600)
	if len(st.parts) < 3 {
		t.Fatalf("%d parts: the test wants several", len(st.parts))
	}
	whole, err := sh.Load(fullOut)
	if err != nil {
		t.Fatal(err)
	}
	var slices, flows int64
	for i, raw := range st.raw {
		r, err := sh.Load(raw)
		if err != nil {
			t.Fatalf("part %d: %v", i+1, err)
		}
		if tr, err := check.ReadBytes(raw); err != nil || processor.Agree(tr, r) != nil {
			t.Errorf("part %d: the trace processor disagrees: %v", i+1, processor.Agree(tr, r))
		}
		slices += r.Slices - 1 // but the part's own conversion instant
		flows += r.Flows
	}
	slices++ // the whole trace's conversion instant
	if slices != whole.Slices || flows+st.sum.Unlinked[phasetrace.ReasonArrowAcrossParts] != whole.Flows {
		t.Errorf("the trace processor reads %d slices and %d arrows in the parts, %d and %d in the whole trace", slices, flows, whole.Slices, whole.Flows)
	}
	r, err := sh.Load(st.ovRaw)
	if err != nil {
		t.Fatalf("overview: %v", err)
	}
	if tr, err := check.ReadBytes(st.ovRaw); err != nil || processor.Agree(tr, r) != nil {
		t.Errorf("overview: the trace processor disagrees: %v", processor.Agree(tr, r))
	}
	if r.Counters != whole.Counters || r.Slices != st.sum.Split.Overview.Slices+st.sum.Split.Overview.Instants {
		t.Errorf("the trace processor reads %d counter values and %d slices in the overview; the whole trace has %d counter values, the summary says %d slices", r.Counters, r.Slices, whole.Counters, st.sum.Split.Overview.Slices)
	}
}

// TestSplitOpenFails: a part that cannot be opened fails the conversion
// with the error of open, every part opened is closed, and the overview
// and the other parts are still whole traces.
func TestSplitOpenFails(t *testing.T) {
	t.Parallel()
	in := []phasetrace.Input{phasetrace.Bytes("run.log", generated(stracetest.Realistic(400<<10)))}
	m := &memParts{failAt: 2}
	_, err := phasetrace.Convert(io.Discard, in, phasetrace.WithSplit(500, m.openPart))
	if err == nil || !strings.Contains(err.Error(), "disk full") || !strings.Contains(err.Error(), "part 2") {
		t.Fatalf("Convert returned %v; want the error opening part 2", err)
	}
	if len(m.parts) != 1 {
		t.Fatalf("%d parts opened", len(m.parts))
	}
	for i, p := range m.parts {
		if !p.closed {
			t.Errorf("part %d was not closed", i+1)
		}
	}
}

// TestSplitBuilder: a Builder given WithSplit writes the same parts and
// overview as Convert.
func TestSplitBuilder(t *testing.T) {
	t.Parallel()
	log := generated(stracetest.Realistic(200 << 10))
	conv := &memParts{}
	var convOv bytes.Buffer
	if _, err := phasetrace.Convert(&convOv, []phasetrace.Input{phasetrace.Bytes("values", log)}, phasetrace.WithSplit(400, conv.openPart)); err != nil {
		t.Fatal(err)
	}
	built := &memParts{}
	ov, _ := buildFromRecords(t, log, phasetrace.WithSplit(400, built.openPart))
	if len(built.parts) != len(conv.parts) || len(conv.parts) < 2 {
		t.Fatalf("the Builder wrote %d parts, Convert %d", len(built.parts), len(conv.parts))
	}
	for i := range conv.parts {
		a, _ := readTrace(conv.parts[i].Bytes())
		b, _ := readTrace(built.parts[i].Bytes())
		fullNamed(t, a)
		fullNamed(t, b)
		if diff := quickDiff(sliceSet(a, nil), sliceSet(b, nil)); diff != "" {
			t.Errorf("part %d differs (-Convert +Builder):\n%s", i+1, diff)
		}
	}
	a, _ := readTrace(convOv.Bytes())
	b, _ := readTrace(ov)
	fullNamed(t, a)
	fullNamed(t, b)
	if diff := quickDiff(sliceSet(a, nil), sliceSet(b, nil)); diff != "" {
		t.Errorf("the overview differs (-Convert +Builder):\n%s", diff)
	}
}

// TestSplitWindow: a window split into parts is the window's trace in
// parts.
func TestSplitWindow(t *testing.T) {
	t.Parallel()
	in := []phasetrace.Input{phasetrace.Bytes("run.log", generated(stracetest.Realistic(400<<10)))}
	win := phasetrace.WithWindowFromStart(200*time.Millisecond, 900*time.Millisecond)
	full, fullSum, _ := convert(t, in, win)
	if len(full.Slices) == 0 {
		t.Fatal("the window draws nothing")
	}
	st := convertSplit(t, in, 300, win)
	checkSplit(t, newWhole(full, fullSum), st, 300)
	if st.sum.Window == nil || st.sum.Spans.NotDrawn[phasetrace.ReasonOutsideWindow] != fullSum.Spans.NotDrawn[phasetrace.ReasonOutsideWindow] {
		t.Errorf("the split window says %+v, %v outside; the window %v", st.sum.Window, st.sum.Spans.NotDrawn, fullSum.Spans.NotDrawn)
	}
}

// TestSplitAcrossMachines splits the logs of several machines: the parts
// add up to the whole trace, and only parts too small for a hand-off cut
// its arrows (those across machines among them).
func TestSplitAcrossMachines(t *testing.T) {
	t.Parallel()
	logs, _ := stracetest.GenerateRemote(remoteScenarios[0].cfg)
	in := remoteInputs(logs)
	full, fullSum, _ := convert(t, in)
	w := newWhole(full, fullSum)
	for _, max := range []int{7, 200, 1000} {
		t.Run(fmt.Sprint(max), func(t *testing.T) {
			t.Parallel()
			st := convertSplit(t, in, max)
			checkSplit(t, w, st, max)
			if len(st.parts) < 2 {
				t.Errorf("%d parts", len(st.parts))
			}
		})
	}
}

// TestSplitMisuse: WithSplit without a function to open the parts is
// misuse, before anything is read.
func TestSplitMisuse(t *testing.T) {
	t.Parallel()
	in := []phasetrace.Input{phasetrace.Bytes("run.log", []byte("x\n"))}
	if _, err := phasetrace.Convert(io.Discard, in, phasetrace.WithSplit(10, nil)); !errors.Is(err, phasetrace.ErrInvalidInput) {
		t.Errorf("Convert: %v, want ErrInvalidInput", err)
	}
	if _, err := phasetrace.NewBuilder(io.Discard, nil, phasetrace.WithSplit(10, nil)); !errors.Is(err, phasetrace.ErrInvalidInput) {
		t.Errorf("NewBuilder: %v, want ErrInvalidInput", err)
	}
}

// TestSplitStrayBindLines: legacy bind phase lines no bind holds wait in
// the converter to the end, but they are not counted in the room each run
// takes: the runs still share parts, and no arrow crosses them.
func TestSplitStrayBindLines(t *testing.T) {
	t.Parallel()
	log := generated(stracetest.Realistic(400 << 10))
	var stray bytes.Buffer
	for i := range 3000 {
		fmt.Fprintf(&stray, "[mono_ns=%d][T0x7f3a2d6ff640][TIMING] bind_phases: [hbg_bind.cpp:88] bind phase=args start_ns=%d dur_ns=1 cpu_ns=1\n", 1000+i, 10+i)
	}
	plain := convertSplit(t, []phasetrace.Input{phasetrace.Bytes("run.log", log)}, 2000)
	st := convertSplit(t, []phasetrace.Input{phasetrace.Bytes("run.log", append(stray.Bytes(), log...))}, 2000)
	if len(st.parts) > len(plain.parts)+1 || st.sum.Unlinked[phasetrace.ReasonArrowAcrossParts] != 0 {
		t.Errorf("with stray bind lines: %d parts, %d arrows across; without: %d parts", len(st.parts), st.sum.Unlinked[phasetrace.ReasonArrowAcrossParts], len(plain.parts))
	}
	if st.sum.NotDrawn[phasetrace.ReasonBindOutsideBind] != 3000 {
		t.Errorf("stray bind lines counted: %v", st.sum.NotDrawn)
	}
}

// TestSplitOpenPartsBounded: however many parts a flow horizon of log
// time holds, only a few are open at once.
func TestSplitOpenPartsBounded(t *testing.T) {
	t.Parallel()
	in := []phasetrace.Input{phasetrace.Bytes("run.log", generated(stracetest.Realistic(1600<<10)))}
	m := &memParts{}
	sum, err := phasetrace.Convert(io.Discard, in, phasetrace.WithFlowHorizon(1_000_000_000_000), phasetrace.WithSplit(40, m.openPart))
	if err != nil {
		t.Fatal(err)
	}
	if len(m.parts) < 150 || m.atOnce > 66 || m.open != 0 {
		t.Errorf("%d parts, %d open at once, %d left open; want at most 66 at once (64 besides the newest, and one of a single invocation)", len(m.parts), m.atOnce, m.open)
	}
	if err := sum.Spans.Check(); err != nil {
		t.Error(err)
	}
}

// TestSplitSoloArrowReason: a run too large for a part has its arrow
// across parts, unless the arrow is not drawn for a reason of its own (an
// end outside the window), which it is counted under.
func TestSplitSoloArrowReason(t *testing.T) {
	t.Parallel()
	in := []phasetrace.Input{phasetrace.Bytes("run.log", generated(stracetest.Realistic(400<<10)))}
	w := phasetrace.WithWindowFromStart(200*time.Millisecond, 900*time.Millisecond)
	_, whole, _ := convert(t, in, w)
	st := convertSplit(t, in, 3, w)
	for r, n := range whole.Unlinked {
		if st.sum.Unlinked[r] != n {
			t.Errorf("%s: %d in parts, %d in the whole trace", r, st.sum.Unlinked[r], n)
		}
	}
	// Each run is a part of its own; a hand-off's two node spans share one.
	if n, m := st.sum.Unlinked[phasetrace.ReasonArrowAcrossParts], whole.Flows[phasetrace.FlowDispatchToRun]; n != m || arrows(st.sum) != arrows(whole)-m {
		t.Errorf("%d arrows across parts, %v drawn; the whole trace draws %v", n, st.sum.Flows, whole.Flows)
	}
}

// TestSplitGeneratedCases splits every case the generator makes — the
// runtime's ns truncation, exact abutting and enclosing, both emission
// orders, sparse and torn anchors, drift, huge ids, two ranks on one line,
// a cut end, absurd wall clocks — into parts that hold a few runs each:
// the parts add up to the whole trace.
func TestSplitGeneratedCases(t *testing.T) {
	t.Parallel()
	for _, gc := range generatedCases() {
		t.Run(gc.Name, func(t *testing.T) {
			t.Parallel()
			in := []phasetrace.Input{phasetrace.Bytes("gen.log", gc.Log)}
			full, fullSum, _ := convert(t, in)
			w := newWhole(full, fullSum)
			st := convertSplit(t, in, 150)
			checkSplit(t, w, st, 150)
		})
	}
}

// TestPartNumber: PartNumber knows exactly the names PartName gives.
func TestPartNumber(t *testing.T) {
	t.Parallel()
	for _, n := range []int{1, 7, 999, 1000, 123456} {
		name := filepath.Base(phasetrace.PartName("out/run.pftrace", n))
		if got, ok := phasetrace.PartNumber("out/run.pftrace", name); !ok || got != n {
			t.Errorf("PartNumber(%q) = %d, %v; want %d", name, got, ok, n)
		}
	}
	for _, name := range []string{"run.pftrace", "run.part1.pftrace", "run.part0001.pftrace", "run.part000.pftrace", "run.part00x.pftrace", "other.part001.pftrace", "run.part001.pftrace.gz"} {
		if n, ok := phasetrace.PartNumber("out/run.pftrace", name); ok {
			t.Errorf("PartNumber(%q) = %d: not a name PartName gives", name, n)
		}
	}
}
