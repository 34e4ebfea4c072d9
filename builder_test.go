package phasetrace_test

import (
	"bytes"
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/phasetrace/phasetrace"
	"github.com/phasetrace/phasetrace/perfetto/check"
	"github.com/phasetrace/phasetrace/strace"
)

// buildFromValues reads a log into Go values and gives them to a Survey and
// a Builder, as a program holding its values in memory would.
func buildFromValues(t *testing.T, log []byte, opts ...phasetrace.Option) ([]byte, *phasetrace.Summary) {
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
		switch r.Kind {
		case strace.KindSpan:
			b.Span(r.Span)
		case strace.KindBindPhase:
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
// the same values give the same trace, byte for byte, and the same account.
func TestBuilderIsConvert(t *testing.T) {
	logs := map[string][]byte{}
	for _, gc := range generatedCases() {
		logs[gc.Name] = gc.Log
	}
	for name, log := range logs {
		t.Run(name, func(t *testing.T) {
			var want bytes.Buffer
			wantSum, err := phasetrace.Convert(&want, []phasetrace.Input{phasetrace.Bytes("gen.log", log)})
			if err != nil {
				t.Fatal(err)
			}
			got, gotSum := buildFromValues(t, log)
			if !bytes.Equal(want.Bytes(), got) {
				wt, _ := check.ReadBytes(want.Bytes())
				gt, _ := check.ReadBytes(got)
				var wd, gd bytes.Buffer
				wt.Dump(&wd)
				gt.Dump(&gd)
				t.Errorf("the Builder's trace differs from Convert's (-convert +builder):\n%s", cmp.Diff(wd.String(), gd.String()))
			}
			if diff := cmp.Diff(wantSum.Spans, gotSum.Spans); diff != "" {
				t.Errorf("span account (-convert +builder):\n%s", diff)
			}
			wholeTrace(t, got, gotSum)
		})
	}
}
