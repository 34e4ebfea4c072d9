package phasetrace_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/phasetrace/phasetrace"
	"github.com/phasetrace/phasetrace/perfetto/check"
	"github.com/phasetrace/phasetrace/strace/stracetest"
)

// memParts collects a split trace's parts in memory.
type memParts struct {
	parts  []*memPart
	failAt int // the part whose open fails (0: none)
}

type memPart struct {
	bytes.Buffer
	closed bool
}

func (p *memPart) Close() error {
	if p.closed {
		return errors.New("closed twice")
	}
	p.closed = true
	return nil
}

func (m *memParts) open(n int) (io.WriteCloser, string, error) {
	if n != len(m.parts)+1 {
		return nil, "", fmt.Errorf("part %d opened after %d", n, len(m.parts))
	}
	if n == m.failAt {
		return nil, "", errors.New("disk full")
	}
	p := &memPart{}
	m.parts = append(m.parts, p)
	return p, phasetrace.PartName("run.pftrace", n), nil
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
	sum, err := phasetrace.Convert(&ov, logs, append(opts, phasetrace.WithSplit(max, m.open))...)
	if err != nil {
		t.Fatal(err)
	}
	st := &splitTrace{sum: sum, ovRaw: ov.Bytes()}
	for i, p := range m.parts {
		if !p.closed {
			t.Errorf("part %d was not closed", i+1)
		}
		tr, err := check.ReadBytes(p.Bytes())
		if err != nil {
			t.Fatalf("part %d: %v", i+1, err)
		}
		if err := tr.Err(); err != nil {
			t.Errorf("part %d: the trace processor would report: %v", i+1, err)
		}
		st.parts = append(st.parts, tr)
		st.raw = append(st.raw, p.Bytes())
	}
	st.overview, err = check.ReadBytes(ov.Bytes())
	if err != nil {
		t.Fatalf("overview: %v", err)
	}
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
	logs := map[string][]byte{
		"realistic":                  generated(stracetest.Realistic(400 << 10)),
		"four ranks, prewarm, exact": generated(genConfig{Ranks: 4, Rounds: 60, Seed: 7, Pipelined: true, Legacy: true, Ext: true, Prewarm: true, HostExact: true, RuntimeNs: true, AnchorEvry: 50_000_000}),
	}
	for name, log := range logs {
		in := []phasetrace.Input{phasetrace.Bytes("run.log", log)}
		full, fullSum, _ := convert(t, in)
		for _, max := range []int{1, 25, 100, 1000, 5000, 1 << 30} {
			t.Run(fmt.Sprintf("%s/%d", name, max), func(t *testing.T) {
				st := convertSplit(t, in, max)
				checkSplit(t, full, fullSum, st, max)
			})
		}
	}
}

// checkSplit checks a split conversion against the whole one.
func checkSplit(t *testing.T, full *check.Trace, fullSum *phasetrace.Summary, st *splitTrace, max int) {
	t.Helper()
	sum := st.sum
	if sum.Split == nil || len(sum.Split.Parts) != len(st.parts) {
		t.Fatalf("the summary lists %v parts, %d were written", sum.Split, len(st.parts))
	}
	if err := sum.Spans.Check(); err != nil {
		t.Error(err)
	}
	union := map[string]int{}
	var arrowsIn int64
	partOf := map[string]int{} // invocation (pid, inv) → part
	for i, tr := range st.parts {
		ps := sum.Split.Parts[i]
		if ps.Part != i+1 || ps.Name != phasetrace.PartName("run.pftrace", i+1) || ps.Slices != int64(len(tr.Slices)) {
			t.Errorf("part %d: the summary says %+v; it holds %d slices", i+1, ps, len(tr.Slices))
		}
		invs := invocationsOf(tr)
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
	}
	if diff := cmp.Diff(sliceSetNoDepth(full), union); diff != "" {
		t.Errorf("the parts' slices differ from the whole trace's (-whole +parts):\n%s", diff)
	}
	if sum.Output.Slices != int64(len(full.Slices)) || sum.Spans.Drawn != fullSum.Spans.Drawn {
		t.Errorf("the summary says %d slices (%d spans) drawn, the whole trace %d (%d)", sum.Output.Slices, sum.Spans.Drawn, len(full.Slices), fullSum.Spans.Drawn)
	}
	across := sum.Unlinked[phasetrace.ReasonArrowAcrossParts]
	if arrowsIn+across != int64(len(full.Flows)) || arrows(sum) != arrowsIn {
		t.Errorf("%d arrows in parts, %d across parts; the whole trace has %d; the summary says %d drawn", arrowsIn, across, len(full.Flows), arrows(sum))
	}
	if max >= 100 && across != 0 {
		// A hand-off's spans and its run go by one start, and its run
		// holds room for them: only parts too small for a run and its
		// hand-off cut arrows.
		t.Errorf("%d arrows across parts of %d slices", across, max)
	}
	if handOffs(sum) != handOffs(fullSum) {
		t.Errorf("%d hand-offs, the whole trace %d", handOffs(sum), handOffs(fullSum))
	}

	// The overview: each invocation's root, naming its part.
	ov := st.overview
	var roots, listed int64
	for _, s := range ov.Slices {
		tk, _ := ov.Track(s.Track)
		if strings.HasPrefix(tk.Name, phasetrace.PartsTrack) {
			listed++
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
	if diff := cmp.Diff(counterSet(full, -1<<63, 1<<63-1), counterSet(ov, -1<<63, 1<<63-1)); diff != "" {
		t.Errorf("the overview's counters differ from the whole trace's (-whole +overview):\n%s", diff)
	}
	if sum.Split.Overview.Slices != int64(len(ov.Slices)) || sum.Split.Overview.Counters != int64(len(ov.Counters)) {
		t.Errorf("the summary says the overview holds %+v; it holds %d slices, %d counter values", sum.Split.Overview, len(ov.Slices), len(ov.Counters))
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
		if name := s.Name; strings.HasPrefix(name, "node.") || strings.HasPrefix(name, "ext.") {
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
