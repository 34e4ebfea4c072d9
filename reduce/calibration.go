package reduce

import (
	"errors"
	"fmt"

	"github.com/phasetrace/phasetrace/strace"
)

// ErrCalibration reports a calibration artifact that cannot be used.
var ErrCalibration = errors.New("invalid calibration artifact")

// CalibrationAnchors turns the valid samples of the runtime's
// clock-calibration artifact (read by strace.ReadCalibration) into anchors at
// counter frequency f: the artifact's own clock_freq_hz when it states one,
// else f, which the caller takes from the domain's anchors or the platform.
// Invalid samples (an error, a zero reading, after < before, ...) are
// skipped and counted. Samples whose raw unit was device_uptime_us carry its
// 1 µs quantisation into the anchor.
func CalibrationAnchors(c *strace.Calibration, f Hz) (anchors []Anchor, skipped int, err error) {
	if c.DeviceTimestampUnit != strace.UnitSyscntCycles {
		return nil, 0, fmt.Errorf("reduce: %w: device_timestamp_unit %q, want %q", ErrCalibration, c.DeviceTimestampUnit, strace.UnitSyscntCycles)
	}
	if c.FreqHz != 0 {
		f = Hz(c.FreqHz)
	}
	if f == 0 {
		return nil, 0, fmt.Errorf("reduce: %w: no counter frequency", ErrCalibration)
	}
	for i := range c.Samples {
		s := &c.Samples[i]
		if !s.Valid() || s.HostBeforeNS > maxNanos || s.HostAfterNS > maxNanos {
			skipped++
			continue
		}
		anchors = append(anchors, Anchor{
			HostNs:   HostNanos(s.HostBeforeNS),
			WindowNs: HostNanos(s.HostAfterNS - s.HostBeforeNS),
			DevCyc:   Cycles(s.DeviceCycles),
			DevFreq:  f,
			QuantNs:  HostNanos(c.QuantizationNS),
		})
	}
	return anchors, skipped, nil
}

const maxNanos = 1<<63 - 1
