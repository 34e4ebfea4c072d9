package reduce

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/phasetrace/phasetrace/strace"
)

const calibrationJSON = `{
  "device_timestamp_unit": "syscnt_cycles",
  "raw_device_timestamp_unit": "device_uptime_us",
  "samples": [
    {"position": "pre_host_orchestration", "sample_idx": 0, "host_before_ns": 1000, "device_cycles": 50000, "host_after_ns": 1400, "error": null},
    {"position": "pre_host_orchestration", "sample_idx": 1, "host_before_ns": 2000, "device_cycles": 0, "host_after_ns": 2100},
    {"position": "post_device_execution", "sample_idx": 0, "host_before_ns": 9000, "device_cycles": 18446744073709551615, "host_after_ns": 9100},
    {"position": "post_device_execution", "sample_idx": 1, "host_before_ns": 9500, "device_cycles": 90000, "host_after_ns": 9400},
    {"position": "post_device_execution", "sample_idx": 2, "host_before_ns": 9600, "device_cycles": 90500, "host_after_ns": 9700, "error": {"stage": "GetTimestamp", "code": 3}},
    {"position": "elsewhere", "sample_idx": 3, "host_before_ns": 9600, "device_cycles": 90500, "host_after_ns": 9700}
  ]
}`

func readCalibration(t *testing.T, doc string) *strace.Calibration {
	t.Helper()
	c, err := strace.ReadCalibration(strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestCalibration(t *testing.T) {
	t.Parallel()
	c := readCalibration(t, calibrationJSON)
	as, skipped, err := CalibrationAnchors(c, 50_000_000)
	if err != nil {
		t.Fatal(err)
	}
	// zero cycles, after < before, an error and an unknown position are
	// skipped; microsecond raw units add 1 µs of quantisation.
	want := []Anchor{
		{HostNs: 1000, WindowNs: 400, DevCyc: 50000, DevFreq: 50_000_000, QuantNs: 1000},
		{HostNs: 9000, WindowNs: 100, DevCyc: 1<<64 - 1, DevFreq: 50_000_000, QuantNs: 1000},
	}
	if diff := cmp.Diff(want, as); diff != "" || skipped != 4 {
		t.Errorf("anchors (-want +got), skipped %d:\n%s", skipped, diff)
	}
}

func TestCalibrationFrequency(t *testing.T) {
	t.Parallel()
	c := readCalibration(t, `{"device_timestamp_unit": "syscnt_cycles", "samples": []}`)
	if _, _, err := CalibrationAnchors(c, 0); !errors.Is(err, ErrCalibration) {
		t.Errorf("no frequency: %v, want ErrCalibration", err)
	}
	c.FreqHz = 1_000_000_000 // the swimlane file states it
	c.Samples = []strace.CalibrationSample{{Position: strace.PositionPreHostOrchestration, HostBeforeNS: 10, HostAfterNS: 30, DeviceCycles: 7}}
	as, _, err := CalibrationAnchors(c, 50_000_000)
	if err != nil || len(as) != 1 || as[0].DevFreq != 1_000_000_000 {
		t.Errorf("anchors %+v, %v: the artifact's own frequency wins", as, err)
	}
	c.DeviceTimestampUnit = "us"
	if _, _, err := CalibrationAnchors(c, 1e9); !errors.Is(err, ErrCalibration) {
		t.Errorf("wrong unit: %v, want ErrCalibration", err)
	}
}

func TestCalibrationPlaces(t *testing.T) {
	t.Parallel()
	// The runtime's pre/post pair as anchors: a run between them is
	// aligned, with the microsecond quantisation in its bound.
	as, _, err := CalibrationAnchors(readCalibration(t, calibrationJSON), 1e9)
	if err != nil {
		t.Fatal(err)
	}
	p := NewPlacer()
	for _, a := range as[:1] {
		if err := p.AddAnchor(dom, a); err != nil {
			t.Fatal(err)
		}
	}
	pl := mustPlace(t, p, logRun(50_000, 100, 100, nil))
	if pl[1].Method != Aligned || pl[1].Bound < 1200 {
		t.Errorf("%+v: bound must include the 200 ns half-window and 1 µs quantisation", pl[1])
	}
}
