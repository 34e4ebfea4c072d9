package strace

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A span the filter rejects is counted as skipped, never parsed past its
// name; the accounting identity holds, and the spans it keeps, and every
// other record, read as without the filter.
func TestSpanFilter(t *testing.T) {
	t.Parallel()
	log := strings.Join([]string{
		"[mono_ns=1][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=1 tid=1 inv=1 hid=1 depth=0 name=chip.run ts=1 dur=9",
		"[STRACE] v=1 pid=1 tid=1 inv=1 hid=1 depth=1 name=chip.run.bind ts=1 dur=1 note=bind%20phase=x",
		"[STRACE] v=1 pid=1 tid=1 inv=1 hid=1 depth=1 name=chip.run.bind ts=1 dur=oops [STRACE] v=1 pid=1 tid=1 inv=0 hid=0 depth=3 name=ext.p%2Eq.s ts=1 dur=1",
		"[STRACE] v=1 pid=x tid=1 inv=1 hid=1 depth=0 name=chip.run ts=1 dur=1",
		"[STRACE] v=2 pid=1 tid=1 inv=1 hid=1 depth=1 name=chip.run.bind ts=1 dur=1 [STRACE] v=1 pid=1 tid=1 depth=1 name=chip.run.bind ts=1 dur=1",
		"[mono_ns=2][T0x1][TIMING] clock_anchor: [CLOCK_ANCHOR] v=1 pid=1 mono_ns=1 wall_ns=2",
		"x bind phase=args start_ns=1 dur_ns=2",
		"[STRACE] v=1 pid=1 tid=1 inv=1 hid=1 depth=2 name=chip.run.bind.args ts=1 dur=1",
	}, "\n") // the last line, unterminated, is skipped rather than torn
	var asked []string
	keep := func(depth int32, name string) bool {
		asked = append(asked, strings.Clone(name))
		return depth == 0 || FamilyOf(name) == FamilyExt
	}
	got, st := readAll(t, strings.NewReader(log), WithSpanFilter(keep))
	// The span with a malformed pid is asked about (its pid is not read
	// before), kept, and then found malformed.
	if diff := cmp.Diff([]string{"chip.run", "chip.run.bind", "chip.run.bind", "ext.p.q.s", "chip.run", "chip.run.bind.args"}, asked); diff != "" {
		t.Errorf("names asked (-want +got):\n%s", diff)
	}
	all, _ := readAll(t, strings.NewReader(log))
	var want []Record
	for _, r := range all {
		if r.Kind != KindSpan || keep(r.Span.Depth, r.Span.Name) {
			want = append(want, r)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
	if st.Skipped != 3 || st.Malformed != 2 || st.UnknownVersion != 1 || st.Torn != 0 || st.Records.Spans != 2 || st.Heads.BindPhase != 1 {
		t.Errorf("stats: %+v", st)
	}
}

// WithKinds returns only the records of its kinds, and counts the others.
func TestWithKinds(t *testing.T) {
	t.Parallel()
	log := "[stamp] abc run\n" +
		"[mono_ns=2][T0x1][TIMING] clock_anchor: [CLOCK_ANCHOR] v=1 pid=1 mono_ns=1 wall_ns=2\n" +
		"[STRACE] v=1 pid=1 tid=1 inv=1 hid=1 depth=0 name=chip.run ts=1 dur=9\n" +
		"bind phase=args start_ns=1 dur_ns=2\n" +
		"[STRACE] v=1 pid=1 tid=1 inv=1 hid=1 depth=0 name=chip.run ts=1\n"
	got, st := readAll(t, strings.NewReader(log), WithKinds(KindSpan, KindBindPhase))
	var kinds []Kind
	for _, r := range got {
		kinds = append(kinds, r.Kind)
	}
	if diff := cmp.Diff([]Kind{KindSpan, KindBindPhase}, kinds); diff != "" {
		t.Errorf("kinds (-want +got):\n%s", diff)
	}
	if st.Records.Total() != 4 || st.Torn != 1 {
		t.Errorf("stats: %+v", st)
	}
}

// On a real log the filtered reader returns exactly the records the filter
// keeps, and nothing is lost that was not lost without it.
func TestSpanFilterOnRealisticLog(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("testdata/realistic.log")
	if err != nil {
		t.Fatal(err)
	}
	keep := func(depth int32, name string) bool { return depth == 0 || name == SpanDeviceWall }
	all, whole := readAll(t, bytes.NewReader(b))
	got, st := readAll(t, bytes.NewReader(b), WithSpanFilter(keep))
	var want []Record
	for _, r := range all {
		if r.Kind != KindSpan || keep(r.Span.Depth, r.Span.Name) {
			want = append(want, r)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
	if st.Skipped != int64(len(all)-len(got)) || st.Lost() != whole.Lost() {
		t.Errorf("skipped %d of %d, lost %d (without the filter %d)", st.Skipped, len(all)-len(got), st.Lost(), whole.Lost())
	}
}
