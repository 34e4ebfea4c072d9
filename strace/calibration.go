package strace

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// Calibration sample positions.
const (
	PositionPreHostOrchestration = "pre_host_orchestration"
	PositionPostDeviceExecution  = "post_device_execution"
)

// Calibration units.
const (
	UnitSyscntCycles   = "syscnt_cycles"
	UnitDeviceUptimeUS = "device_uptime_us"
)

// Calibration is the runtime's clock-calibration artifact: pairs of host
// instants around a device counter read, taken before host orchestration and
// after device execution.
type Calibration struct {
	SchemaVersion          int64
	Provider               string
	DeviceTimestampUnit    string // always "syscnt_cycles" when read without error
	RawDeviceTimestampUnit string // "syscnt_cycles" or "device_uptime_us"
	// QuantizationNS is the device reading's own resolution: 1000 when the
	// raw unit is microseconds (the sub-microsecond part is lost), else 0.
	QuantizationNS int64
	// FreqHz is the counter frequency when the document states it
	// (metadata.clock_freq_hz of the swimlane file), else 0.
	FreqHz  uint64
	Samples []CalibrationSample
}

// CalibrationSample is one host/device pairing.
type CalibrationSample struct {
	Position           string
	SampleIdx          int64
	HostBeforeNS       uint64
	HostAfterNS        uint64
	DeviceCycles       uint64 // 0 when absent (the runtime writes null)
	RawDeviceTimestamp uint64 // 0 when absent
	ErrorStage         string // the error's stage, when the sample carries one
	ErrorCode          int64
	// Invalid is nil for a usable sample; otherwise an error wrapping
	// ErrInvalidSample that says which rule failed.
	Invalid error
}

// Valid reports whether the sample may be used.
func (s *CalibrationSample) Valid() bool { return s.Invalid == nil }

// Window returns the host window's midpoint and the sample's uncertainty:
// half the window, rounded up, plus the device quantisation q.
func (s *CalibrationSample) Window(q int64) (mid uint64, uncertaintyNS uint64) {
	rtt := s.HostAfterNS - s.HostBeforeNS
	return s.HostBeforeNS + rtt/2, (rtt+1)/2 + uint64(max(q, 0))
}

type rawCalibration struct {
	SchemaVersion          *json.Number      `json:"schema_version"`
	Provider               string            `json:"provider"`
	DeviceTimestampUnit    *string           `json:"device_timestamp_unit"`
	RawDeviceTimestampUnit *string           `json:"raw_device_timestamp_unit"`
	Samples                []json.RawMessage `json:"samples"`
}

type rawSample struct {
	Position           *string         `json:"position"`
	SampleIdx          *json.Number    `json:"sample_idx"`
	HostBeforeNS       *json.Number    `json:"host_before_ns"`
	DeviceCycles       *json.Number    `json:"device_cycles"`
	RawDeviceTimestamp *json.Number    `json:"raw_device_timestamp"`
	HostAfterNS        *json.Number    `json:"host_after_ns"`
	Error              json.RawMessage `json:"error"`
}

// ReadCalibration reads a calibration document: the calibration object
// itself ({"device_timestamp_unit", "raw_device_timestamp_unit", "samples"}),
// or a document holding it as "clock_anchors", at the top or under
// "metadata" (as the runtime's swimlane file does). Each sample is judged
// (see CalibrationSample.Invalid): one with an error, a zero host or device
// value, after < before, a negative index or an unknown position is invalid.
// An unsupported unit is an error wrapping ErrUnsupportedUnit.
func ReadCalibration(r io.Reader, opts ...Option) (*Calibration, error) {
	cfg := newConfig(opts)
	name := cfg.name
	if name == "" {
		name = "<input>"
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	var top map[string]json.RawMessage
	if err := unmarshalNumbers(data, &top); err != nil {
		return nil, fmt.Errorf("%s: strace: calibration: %w", name, err)
	}
	var freq uint64
	obj := data
	if _, ok := top["samples"]; !ok {
		found := false
		if m, ok := top["clock_anchors"]; ok {
			obj, found = m, true
		} else if meta, ok := top["metadata"]; ok {
			var mm map[string]json.RawMessage
			if unmarshalNumbers(meta, &mm) == nil {
				if m, ok := mm["clock_anchors"]; ok {
					obj, found = m, true
				}
				if f, ok := mm["clock_freq_hz"]; ok {
					freq, _ = strconv.ParseUint(string(bytes.TrimSpace(f)), 10, 64)
				}
			}
		}
		if !found {
			return nil, fmt.Errorf("%s: strace: calibration: no samples and no clock_anchors object", name)
		}
	}
	var raw rawCalibration
	if err := unmarshalNumbers(obj, &raw); err != nil {
		return nil, fmt.Errorf("%s: strace: calibration: %w", name, err)
	}
	c := &Calibration{Provider: raw.Provider, FreqHz: freq}
	if raw.SchemaVersion != nil {
		c.SchemaVersion, _ = strconv.ParseInt(string(*raw.SchemaVersion), 10, 64)
	}
	if raw.DeviceTimestampUnit == nil || *raw.DeviceTimestampUnit != UnitSyscntCycles {
		got := "missing"
		if raw.DeviceTimestampUnit != nil {
			got = strconv.Quote(*raw.DeviceTimestampUnit)
		}
		return nil, fmt.Errorf("%s: strace: calibration: device_timestamp_unit %s: %w", name, got, ErrUnsupportedUnit)
	}
	c.DeviceTimestampUnit = UnitSyscntCycles
	c.RawDeviceTimestampUnit = UnitSyscntCycles
	if raw.RawDeviceTimestampUnit != nil {
		c.RawDeviceTimestampUnit = *raw.RawDeviceTimestampUnit
	}
	switch c.RawDeviceTimestampUnit {
	case UnitSyscntCycles:
	case UnitDeviceUptimeUS:
		c.QuantizationNS = 1000
	default:
		return nil, fmt.Errorf("%s: strace: calibration: raw_device_timestamp_unit %q: %w", name, c.RawDeviceTimestampUnit, ErrUnsupportedUnit)
	}
	c.Samples = make([]CalibrationSample, 0, len(raw.Samples))
	for _, m := range raw.Samples {
		c.Samples = append(c.Samples, judgeSample(m))
	}
	return c, nil
}

func unmarshalNumbers(data []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return errors.New("text after the JSON value")
	}
	return nil
}

func invalid(reason string) error { return fmt.Errorf("%w: %s", ErrInvalidSample, reason) }

func judgeSample(m json.RawMessage) CalibrationSample {
	var s CalibrationSample
	var raw rawSample
	if err := unmarshalNumbers(m, &raw); err != nil {
		s.Invalid = invalid("not a sample object")
		return s
	}
	if raw.Position != nil {
		s.Position = *raw.Position
	}
	var okIdx, okBefore, okAfter bool
	s.SampleIdx, okIdx = numI64(raw.SampleIdx)
	s.HostBeforeNS, okBefore = numU64(raw.HostBeforeNS)
	s.HostAfterNS, okAfter = numU64(raw.HostAfterNS)
	s.DeviceCycles, _ = numU64(raw.DeviceCycles)
	s.RawDeviceTimestamp, _ = numU64(raw.RawDeviceTimestamp)
	hasErr := sampleError(raw.Error, &s)
	switch {
	case hasErr:
		s.Invalid = invalid("carries an error")
	case s.Position != PositionPreHostOrchestration && s.Position != PositionPostDeviceExecution:
		s.Invalid = invalid("unknown position " + strconv.Quote(s.Position))
	case !okIdx || s.SampleIdx < 0:
		s.Invalid = invalid("sample_idx missing or negative")
	case !okBefore || s.HostBeforeNS == 0:
		s.Invalid = invalid("host_before_ns missing or zero")
	case !okAfter || s.HostAfterNS == 0:
		s.Invalid = invalid("host_after_ns missing or zero")
	case s.DeviceCycles == 0:
		s.Invalid = invalid("device_cycles missing or zero")
	case s.HostAfterNS < s.HostBeforeNS:
		s.Invalid = invalid("host_after_ns before host_before_ns")
	}
	return s
}

// sampleError reads a sample's error: null, absent, 0 and "" mean none.
func sampleError(m json.RawMessage, s *CalibrationSample) bool {
	t := bytes.TrimSpace(m)
	if len(t) == 0 || string(t) == "null" || string(t) == "0" || string(t) == `""` {
		return false
	}
	var e struct {
		Stage string       `json:"stage"`
		Code  *json.Number `json:"code"`
	}
	if unmarshalNumbers(t, &e) == nil {
		s.ErrorStage = e.Stage
		s.ErrorCode, _ = numI64(e.Code)
	} else {
		s.ErrorStage = string(t)
	}
	return true
}
