package reduce

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const calibrationJSON = `{
  "device_timestamp_unit": "syscnt_cycles",
  "raw_device_timestamp_unit": "device_uptime_us",
  "samples": [
    {"position": "pre_host_orchestration", "sample_idx": 0, "host_before_ns": 1000, "device_cycles": 50000, "host_after_ns": 1400, "error": null},
    {"position": "pre_host_orchestration", "sample_idx": 1, "host_before_ns": 2000, "device_cycles": 0, "host_after_ns": 2100},
    {"position": "post_device_execution", "sample_idx": 0, "host_before_ns": 9000, "device_cycles": 18446744073709551615, "host_after_ns": 9100, "error": 0},
    {"position": "post_device_execution", "sample_idx": 1, "host_before_ns": 9500, "device_cycles": 90000, "host_after_ns": 9400},
    {"position": "post_device_execution", "sample_idx": 2, "host_before_ns": 9600, "device_cycles": 90500, "host_after_ns": 9700, "error": "GetTimestamp"},
    {"position": "elsewhere", "sample_idx": 3, "host_before_ns": 9600, "device_cycles": 90500, "host_after_ns": 9700},
    {"position": "post_device_execution", "sample_idx": "x", "host_before_ns": 9600, "device_cycles": 90500, "host_after_ns": 9700}
  ]
}`

func TestCalibration(t *testing.T) {
	c, err := ParseCalibration([]byte(calibrationJSON))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Samples) != 7 {
		t.Fatalf("%d samples", len(c.Samples))
	}
	var valid []bool
	for _, s := range c.Samples {
		valid = append(valid, s.Valid())
	}
	// zero cycles, after < before, an error, an unknown position and a
	// non-integer field are invalid.
	if diff := cmp.Diff([]bool{true, false, true, false, false, false, false}, valid); diff != "" {
		t.Errorf("validity (-want +got):\n%s", diff)
	}
	as, skipped, err := c.Anchors(50_000_000)
	if err != nil {
		t.Fatal(err)
	}
	want := []Anchor{
		{HostNs: 1000, WindowNs: 400, DevCyc: 50000, DevFreq: 50_000_000, QuantNs: 1000},
		{HostNs: 9000, WindowNs: 100, DevCyc: 1<<64 - 1, DevFreq: 50_000_000, QuantNs: 1000},
	}
	if diff := cmp.Diff(want, as); diff != "" || skipped != 5 {
		t.Errorf("anchors (-want +got), skipped %d:\n%s", skipped, diff)
	}
}

func TestCalibrationUnits(t *testing.T) {
	for _, tt := range []struct {
		doc  string
		want error
	}{
		{`{"device_timestamp_unit": "us", "samples": []}`, ErrCalibration},
		{`{"device_timestamp_unit": "syscnt_cycles", "raw_device_timestamp_unit": "ticks", "samples": []}`, ErrCalibration},
		{`{"device_timestamp_unit": "syscnt_cycles", "samples": []}`, nil},
	} {
		c, err := ParseCalibration([]byte(tt.doc))
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := c.Anchors(1e9); !errors.Is(err, tt.want) {
			t.Errorf("%s: %v, want %v", tt.doc, err, tt.want)
		}
	}
	if _, err := ParseCalibration([]byte(`{"samples": 3}`)); !errors.Is(err, ErrCalibration) {
		t.Errorf("malformed: %v", err)
	}
	c, _ := ParseCalibration([]byte(`{"device_timestamp_unit": "syscnt_cycles"}`))
	if _, _, err := c.Anchors(0); !errors.Is(err, ErrCalibration) {
		t.Errorf("zero frequency: %v", err)
	}
}

func TestCalibrationPlaces(t *testing.T) {
	// The runtime's pre/post pair as anchors: a run between them is
	// aligned, with the microsecond quantisation in its bound.
	c, err := ParseCalibration([]byte(calibrationJSON))
	if err != nil {
		t.Fatal(err)
	}
	as, _, _ := c.Anchors(1e9)
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
