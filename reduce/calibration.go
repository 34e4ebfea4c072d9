package reduce

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// Calibration sample positions the runtime writes.
const (
	PositionPreHostOrchestration = "pre_host_orchestration"
	PositionPostDeviceExecution  = "post_device_execution"
)

// Units of a calibration artifact.
const (
	UnitSyscntCycles   = "syscnt_cycles"
	UnitDeviceUptimeUS = "device_uptime_us"
)

// ErrCalibration reports a calibration artifact that cannot be used.
var ErrCalibration = errors.New("invalid calibration artifact")

// Sample is one calibration sample of the runtime's clock-correlation
// artifact: the device timestamp (normalised to counter cycles) read
// between two host readings.
type Sample struct {
	Position     string
	Index        int64
	HostBeforeNs Nanos
	HostAfterNs  Nanos
	DeviceCycles Cycles
	// Error is the sample's error field as text; empty when it had none
	// (absent, null, 0 or "").
	Error string
}

// Valid reports whether the sample can serve as an anchor: no error,
// nonzero readings, after ≥ before, and a known position.
func (s Sample) Valid() bool {
	return s.Error == "" && s.HostBeforeNs > 0 && s.DeviceCycles != 0 && s.HostAfterNs >= s.HostBeforeNs && s.Index >= 0 &&
		(s.Position == PositionPreHostOrchestration || s.Position == PositionPostDeviceExecution)
}

// Calibration is the runtime's clock-correlation artifact.
type Calibration struct {
	DeviceUnit string // device_timestamp_unit; must be syscnt_cycles
	RawUnit    string // raw_device_timestamp_unit; syscnt_cycles or device_uptime_us
	Samples    []Sample
}

// QuantNs returns the extra quantisation of the raw device timestamp: 1 µs
// for device_uptime_us, 0 for counter cycles.
func (c *Calibration) QuantNs() (Nanos, error) {
	switch c.RawUnit {
	case "", UnitSyscntCycles:
		return 0, nil
	case UnitDeviceUptimeUS:
		return 1000, nil
	}
	return 0, fmt.Errorf("reduce: %w: raw_device_timestamp_unit %q", ErrCalibration, c.RawUnit)
}

// Anchors returns the valid samples as anchors at counter frequency f (the
// artifact does not carry it). Invalid samples are skipped and counted.
func (c *Calibration) Anchors(f Hz) (anchors []Anchor, skipped int, err error) {
	if c.DeviceUnit != UnitSyscntCycles {
		return nil, 0, fmt.Errorf("reduce: %w: device_timestamp_unit %q, want %q", ErrCalibration, c.DeviceUnit, UnitSyscntCycles)
	}
	if f == 0 {
		return nil, 0, fmt.Errorf("reduce: %w: zero counter frequency", ErrCalibration)
	}
	q, err := c.QuantNs()
	if err != nil {
		return nil, 0, err
	}
	for _, s := range c.Samples {
		if !s.Valid() {
			skipped++
			continue
		}
		anchors = append(anchors, Anchor{HostNs: s.HostBeforeNs, WindowNs: s.HostAfterNs - s.HostBeforeNs, DevCyc: s.DeviceCycles, DevFreq: f, QuantNs: q})
	}
	return anchors, skipped, nil
}

type jsonSample struct {
	Position     string          `json:"position"`
	SampleIdx    json.Number     `json:"sample_idx"`
	HostBeforeNs json.Number     `json:"host_before_ns"`
	DeviceCycles json.Number     `json:"device_cycles"`
	HostAfterNs  json.Number     `json:"host_after_ns"`
	Error        json.RawMessage `json:"error"`
}

type jsonCalibration struct {
	DeviceUnit string            `json:"device_timestamp_unit"`
	RawUnit    string            `json:"raw_device_timestamp_unit"`
	Samples    []json.RawMessage `json:"samples"`
}

// ParseCalibration decodes the runtime's calibration JSON. A sample that
// does not decode (a missing or non-integer field) is kept with an Error so
// it counts as invalid; a malformed document is an error.
func ParseCalibration(data []byte) (*Calibration, error) {
	var jc jsonCalibration
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	if err := d.Decode(&jc); err != nil {
		return nil, fmt.Errorf("reduce: %w: %v", ErrCalibration, err)
	}
	c := &Calibration{DeviceUnit: jc.DeviceUnit, RawUnit: jc.RawUnit}
	for i, raw := range jc.Samples {
		var js jsonSample
		sd := json.NewDecoder(bytes.NewReader(raw))
		sd.UseNumber()
		if err := sd.Decode(&js); err != nil {
			c.Samples = append(c.Samples, Sample{Index: -1, Error: fmt.Sprintf("sample %d: %v", i, err)})
			continue
		}
		s := Sample{Position: js.Position, Error: sampleError(js.Error)}
		var errs []string
		num := func(n json.Number, name string) int64 {
			v, err := strconv.ParseInt(string(n), 10, 64)
			if err != nil {
				errs = append(errs, name)
			}
			return v
		}
		s.Index = num(js.SampleIdx, "sample_idx")
		s.HostBeforeNs = Nanos(num(js.HostBeforeNs, "host_before_ns"))
		s.HostAfterNs = Nanos(num(js.HostAfterNs, "host_after_ns"))
		cyc, err := strconv.ParseUint(string(js.DeviceCycles), 10, 64)
		if err != nil {
			errs = append(errs, "device_cycles")
		}
		s.DeviceCycles = Cycles(cyc)
		if len(errs) > 0 && s.Error == "" {
			s.Error = fmt.Sprintf("sample %d: bad %v", i, errs)
		}
		c.Samples = append(c.Samples, s)
	}
	return c, nil
}

func sampleError(raw json.RawMessage) string {
	t := string(bytes.TrimSpace(raw))
	switch t {
	case "", "null", "0", `""`, "false":
		return ""
	}
	return t
}
