package phasetrace_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/phasetrace/phasetrace"
)

var snakeCase = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// identifier is a JSON key: snake_case, or a record kind of the log
// grammar ("wall-anchor"), the keys of InputSummary.Records.
var identifier = regexp.MustCompile(`^[a-z][a-z0-9]*([_-][a-z0-9]+)*$`)

// Every declared reason has a snake_case id and a text of its own.
func TestReasonsDeclared(t *testing.T) {
	ids, texts := map[phasetrace.Reason]bool{}, map[string]phasetrace.Reason{}
	for _, r := range phasetrace.Reasons() {
		if !snakeCase.MatchString(string(r)) {
			t.Errorf("reason id %q is not snake_case", r)
		}
		if ids[r] {
			t.Errorf("reason id %q declared twice", r)
		}
		ids[r] = true
		if r.Text() == "" || r.Text() == string(r) {
			t.Errorf("reason %q has no text", r)
		}
		if o, dup := texts[r.Text()]; dup {
			t.Errorf("reasons %q and %q share the text %q", o, r, r.Text())
		}
		texts[r.Text()] = r
	}
	for _, k := range []phasetrace.FlowKind{phasetrace.FlowSubmitToDispatch, phasetrace.FlowDispatchToRun, phasetrace.FlowRemoteDispatchToRun, phasetrace.FlowRemoteRunToComplete} {
		if !snakeCase.MatchString(string(k)) || k.From() == "" || k.To() == "" {
			t.Errorf("flow kind %q: from %q to %q", k, k.From(), k.To())
		}
	}
}

// summaryJSONKeys checks that every key of the JSON v is an identifier,
// never English text.
func summaryJSONKeys(t *testing.T, v any, path string) {
	t.Helper()
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if !identifier.MatchString(k) {
				t.Errorf("%s: JSON key %q is not an identifier", path, k)
			}
			summaryJSONKeys(t, e, path+"."+k)
		}
	case []any:
		for i, e := range v {
			summaryJSONKeys(t, e, fmt.Sprintf("%s[%d]", path, i))
		}
	}
}

// checkSummaryJSON marshals sum, decodes it back into an equal Summary,
// and checks the JSON's keys.
func checkSummaryJSON(t *testing.T, sum *phasetrace.Summary) {
	t.Helper()
	b, err := json.Marshal(sum)
	if err != nil {
		t.Fatal(err)
	}
	var back phasetrace.Summary
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatalf("decoding the summary: %v\n%s", err, b)
	}
	if diff := cmp.Diff(sum, &back, cmpopts.IgnoreUnexported(phasetrace.BoundStats{}), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("summary after a JSON round trip (-want +got):\n%s", diff)
	}
	var generic any
	if err := json.Unmarshal(b, &generic); err != nil {
		t.Fatal(err)
	}
	summaryJSONKeys(t, generic, "summary")
	var text1, text2 bytes.Buffer
	if err := sum.WriteText(&text1); err != nil {
		t.Fatal(err)
	}
	if err := back.WriteText(&text2); err != nil {
		t.Fatal(err)
	}
	if text1.String() != text2.String() {
		t.Errorf("the decoded summary reads otherwise:\n%s\nwant:\n%s", text2.String(), text1.String())
	}
}

// The summary decodes from its JSON into an equal Summary: the embedded
// sample's and those of the hostile logs, which count under most reasons.
func TestSummaryJSONRoundTrip(t *testing.T) {
	sum, err := phasetrace.Convert(io.Discard, []phasetrace.Input{sampleInput(t)})
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Flows) == 0 {
		t.Fatal("the sample draws no flows")
	}
	checkSummaryJSON(t, sum)
	for _, tc := range hostileLogs() {
		t.Run(tc.name, func(t *testing.T) {
			var inputs []phasetrace.Input
			for i, l := range tc.logs {
				inputs = append(inputs, phasetrace.Bytes(fmt.Sprintf("log%d", i), []byte(l)))
			}
			sum, err := phasetrace.Convert(io.Discard, inputs, tc.opts...)
			if err != nil {
				t.Fatal(err)
			}
			checkSummaryJSON(t, sum)
		})
	}
}
