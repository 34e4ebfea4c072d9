package phasetrace_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/phasetrace/phasetrace"
	"github.com/phasetrace/phasetrace/perfetto/check"
	"github.com/phasetrace/phasetrace/strace"
	"github.com/phasetrace/phasetrace/strace/stracetest"
)

// buildFromValues reads a log into Go values and gives them to a Survey and
// a Builder, as a program holding its values in memory would.
func buildFromValues(t *testing.T, log []byte, opts ...phasetrace.Option) ([]byte, *phasetrace.Summary) {
	t.Helper()
	return buildFrom(t, log, false, opts...)
}

// buildFromRecords is buildFromValues giving the records whole, with their
// log prefixes (Builder.Record).
func buildFromRecords(t *testing.T, log []byte, opts ...phasetrace.Option) ([]byte, *phasetrace.Summary) {
	t.Helper()
	return buildFrom(t, log, true, opts...)
}

func buildFrom(t *testing.T, log []byte, byRecord bool, opts ...phasetrace.Option) ([]byte, *phasetrace.Summary) {
	t.Helper()
	var recs []strace.Record
	rd := strace.NewReader(bytes.NewReader(log))
	for {
		rec, err := rd.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rec.Clone())
	}
	survey := phasetrace.NewSurvey()
	for _, r := range recs {
		switch r.Kind {
		case strace.KindSpan:
			survey.Span(r.Span)
		case strace.KindWallAnchor:
			survey.WallAnchor(r.WallAnchor)
		case strace.KindDeviceAnchor:
			survey.DeviceAnchor(r.DeviceAnchor)
		}
	}
	var out bytes.Buffer
	b, err := phasetrace.NewBuilder(&out, survey, opts...)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		switch {
		case byRecord && (r.Kind == strace.KindSpan || r.Kind == strace.KindBindPhase):
			if err := b.Record(r); err != nil {
				t.Fatal(err)
			}
		case r.Kind == strace.KindSpan:
			b.Span(r.Span)
		case r.Kind == strace.KindBindPhase:
			b.BindPhase(r.BindPhase, r.Prefix.Thread)
		}
	}
	sum, err := b.Close()
	if err != nil {
		t.Fatal(err)
	}
	return out.Bytes(), sum
}

// TestBuilderIsConvert: Convert is the log front end of the Builder, so
// the same values give the same trace, byte for byte, and the same account
// — the records given whole (Builder.Record) for every log, and the spans
// alone (Builder.Span) for logs whose legacy bind phase lines lie in no
// other thread's bind (a span alone does not say the thread that wrote
// it, which is what tells whose bind a line is in).
func TestBuilderIsConvert(t *testing.T) {
	t.Parallel()
	logs := map[string][]byte{}
	for _, gc := range generatedCases() {
		logs[gc.Name] = gc.Log
	}
	logs["realistic"] = generated(stracetest.Realistic(200 << 10))
	for name, log := range logs {
		for _, byRecord := range []bool{true, false} {
			if name == "realistic" && !byRecord {
				continue
			}
			t.Run(fmt.Sprintf("%s/records=%v", name, byRecord), func(t *testing.T) {
				t.Parallel()
				var want bytes.Buffer
				wantSum, err := phasetrace.Convert(&want, []phasetrace.Input{phasetrace.Bytes("gen.log", log)})
				if err != nil {
					t.Fatal(err)
				}
				got, gotSum := buildFrom(t, log, byRecord)
				tr, err := check.ReadBytes(got) // once, for sameTrace and wholeTrace both
				if err != nil {
					t.Fatalf("the trace does not decode: %v", err)
				}
				sameTraceAs(want.Bytes())(t, got, tr) // -Convert +Builder
				if diff := cmp.Diff(wantSum.Spans, gotSum.Spans); diff != "" {
					t.Errorf("span account (-convert +builder):\n%s", diff)
				}
				wholeTraceOf(t, got, tr, gotSum)
			})
		}
	}
}

// TestBuilderRecordKinds: a wall-clock anchor, or a record of no kind,
// given to Record is misuse.
func TestBuilderRecordKinds(t *testing.T) {
	t.Parallel()
	b, err := phasetrace.NewBuilder(io.Discard, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []strace.Kind{strace.KindWallAnchor, 0} {
		if err := b.Record(strace.Record{Kind: k}); !errors.Is(err, phasetrace.ErrInvalidInput) {
			t.Errorf("Record of kind %v: %v, want ErrInvalidInput", k, err)
		}
	}
	if _, err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.Record(strace.Record{Kind: strace.KindSpan}); !errors.Is(err, phasetrace.ErrBuilderClosed) {
		t.Errorf("Record after Close: %v", err)
	}
}
