package phasetrace_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
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
	t.Parallel()
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
	for _, k := range []phasetrace.FlowKind{phasetrace.FlowSubmitToDispatch, phasetrace.FlowDispatchToRun, phasetrace.FlowRemoteDispatchToRun, phasetrace.FlowRemoteRunToComplete, phasetrace.FlowRunToDevice} {
		if !snakeCase.MatchString(string(k)) || k.From() == "" || k.To() == "" {
			t.Errorf("flow kind %q: from %q to %q", k, k.From(), k.To())
		}
	}
}

// summaryJSONKeys checks that every key of the JSON v is an identifier,
// never English text (a host's "pids" are keyed by pid).
func summaryJSONKeys(t *testing.T, v any, path string) {
	t.Helper()
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if _, err := strconv.ParseInt(k, 10, 32); err == nil && strings.HasSuffix(path, ".pids") {
				continue
			}
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
	hosts, _ := generic.(map[string]any)["hosts"].([]any)
	for i, h := range hosts {
		h := h.(map[string]any)
		if sum.Hosts[i].Reason == "" {
			if _, ok := h["reason_text"]; ok {
				t.Errorf("host %d: a reason_text without a reason: %v", i, h)
			}
			continue
		}
		r := phasetrace.Reason(fmt.Sprint(h["reason"]))
		if !slices.Contains(phasetrace.Reasons(), r) || h["reason_text"] != r.Text() {
			t.Errorf("host %d: reason %q, text %q: want a declared reason with its text", i, r, h["reason_text"])
		}
	}
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
	t.Parallel()
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
			t.Parallel()
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

// deviceRun is one run of pid 4100 with a device_wall of the given
// attributes and a preamble, inside runner_run and chip.run when
// contained is true.
func deviceRun(wallAttrs string, contained bool) string {
	const pid, start = 4100, 1_000_000
	var b strings.Builder
	rr := int64(start + 400_000)
	if contained {
		b.WriteString(spanLine(rr+20_000_000, pid, pid, 1, 1, "chip.run.runner_run", rr, 20_000_000, ""))
	}
	b.WriteString(spanLine(rr+20_100_000, pid, pid, 1, 2, "chip.run.runner_run.device_wall", 0, 19_000_000, wallAttrs))
	b.WriteString(spanLine(rr+20_100_000, pid, pid, 1, 3, "chip.run.runner_run.device_wall.preamble", 0, 300_000, "clk=dev"))
	if contained {
		b.WriteString(spanLine(rr+20_200_000, pid, pid, 1, 0, "chip.run", start, 20_700_000, "slot_id=0"))
	}
	return b.String()
}

// deviceAnchor is a device clock anchor of pid 4100's device 0 (1 GHz).
func deviceAnchor(hostNs, cyc int64) string {
	return fmt.Sprintf("[mono_ns=1][T0x1][TIMING] clock_anchor: [CLOCK_ANCHOR] v=2 pid=4100 tid=4100 dev=0 host_ns=%d window_ns=20 dev_cyc=%d dev_freq=1000000000\n", hostNs, cyc)
}

// A run's device spans are counted under each reason they are unaligned
// or only contained: reduce's causes, and the converter's own.
func TestDeviceReasonsCounted(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name                 string
		log                  string
		unaligned, contained phasetrace.ReasonCounts
	}{
		{"no anchors", deviceRun("clk=dev dev=0 origin_cyc=1000", true),
			nil, phasetrace.ReasonCounts{phasetrace.ReasonNoClockAnchors: 2}},
		{"no runner_run, no dev=", deviceRun("clk=dev origin_cyc=1000", false),
			phasetrace.ReasonCounts{phasetrace.ReasonNoClockAnchors: 2, phasetrace.ReasonNoRunnerRun: 2, phasetrace.ReasonDeviceWallNoDev: 2}, nil},
		{"dev= out of range", deviceRun("clk=dev dev=99999999999 origin_cyc=1000", true),
			nil, phasetrace.ReasonCounts{phasetrace.ReasonNoClockAnchors: 2, phasetrace.ReasonDeviceWallDevRange: 2}},
		{"no origin_cyc", deviceAnchor(1_000_000, 1000) + deviceRun("clk=dev dev=0", true),
			nil, phasetrace.ReasonCounts{phasetrace.ReasonNoOrigin: 2}},
		{"origin_cyc far from the anchors", deviceAnchor(1_000_000, 1000) + deviceRun("clk=dev dev=0 origin_cyc=18000000000000000000", true),
			nil, phasetrace.ReasonCounts{phasetrace.ReasonOriginFar: 2}},
		{"anchors disagree with containment", deviceAnchor(100_000_000_000, 1000) + deviceRun("clk=dev dev=0 origin_cyc=1000", true),
			nil, phasetrace.ReasonCounts{phasetrace.ReasonAnchorsDisagree: 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sum, err := phasetrace.Convert(io.Discard, []phasetrace.Input{phasetrace.Bytes("log", []byte(tc.log))})
			if err != nil {
				t.Fatal(err)
			}
			if len(sum.Devices) != 1 {
				t.Fatalf("%d devices: %+v", len(sum.Devices), sum.Devices)
			}
			d := sum.Devices[0]
			if diff := cmp.Diff(tc.unaligned, d.Reasons, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("unaligned reasons (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.contained, d.ContainedReasons, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("contained reasons (-want +got):\n%s", diff)
			}
		})
	}
}
