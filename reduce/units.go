package reduce

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
)

// Cycles is a raw reading (or a difference of readings) of the device's
// system counter.
type Cycles uint64

// Hz is a counter frequency in cycles per second. It always comes from the
// data (an anchor's dev_freq, a caller who knows the platform); this package
// never assumes one.
type Hz uint64

// Nanos is a time or a duration in nanoseconds: host CLOCK_MONOTONIC times,
// device-domain offsets from a run's origin, durations and bounds.
type Nanos int64

// PPB is a rate error in parts per billion (1 ppm = 1000 ppb).
type PPB int64

const nsPerSecond = 1_000_000_000

// ErrRange reports a conversion whose exact result does not fit the
// destination type, or a zero frequency.
var ErrRange = errors.New("reduce: value out of range")

// Nanos converts a cycle count to nanoseconds at frequency f, rounding down
// (the exact floor of c·1e9/f). The product is formed in 128 bits, so no
// uint64 cycle count can overflow it; the result is an error only when f is
// zero or the exact value exceeds the largest Nanos.
//
// The runtime converts with floating point ((double)c/f·1e6·1000, then
// truncated), which can land 1 ns away from the exact floor; this conversion
// is always the exact floor.
func (f Hz) Nanos(c Cycles) (Nanos, error) {
	if f == 0 {
		return 0, fmt.Errorf("%w: zero frequency", ErrRange)
	}
	hi, lo := bits.Mul64(uint64(c), nsPerSecond)
	if hi >= uint64(f) {
		return 0, fmt.Errorf("%w: %d cycles at %d Hz exceed the nanosecond range", ErrRange, uint64(c), uint64(f))
	}
	q, _ := bits.Div64(hi, lo, uint64(f))
	if q > math.MaxInt64 {
		return 0, fmt.Errorf("%w: %d cycles at %d Hz exceed the nanosecond range", ErrRange, uint64(c), uint64(f))
	}
	return Nanos(q), nil
}

// NanosCeil is Nanos rounded up instead of down.
func (f Hz) NanosCeil(c Cycles) (Nanos, error) {
	if f == 0 {
		return 0, fmt.Errorf("%w: zero frequency", ErrRange)
	}
	hi, lo := bits.Mul64(uint64(c), nsPerSecond)
	if hi >= uint64(f) {
		return 0, fmt.Errorf("%w: %d cycles at %d Hz exceed the nanosecond range", ErrRange, uint64(c), uint64(f))
	}
	q, r := bits.Div64(hi, lo, uint64(f))
	if r != 0 {
		q++
	}
	if q > math.MaxInt64 {
		return 0, fmt.Errorf("%w: %d cycles at %d Hz exceed the nanosecond range", ErrRange, uint64(c), uint64(f))
	}
	return Nanos(q), nil
}

// Cycles converts a non-negative duration to cycles at frequency f, rounding
// down (the exact floor of ns·f/1e9).
func (f Hz) Cycles(ns Nanos) (Cycles, error) {
	if ns < 0 {
		return 0, fmt.Errorf("%w: negative duration %d ns", ErrRange, int64(ns))
	}
	hi, lo := bits.Mul64(uint64(ns), uint64(f))
	if hi >= nsPerSecond {
		return 0, fmt.Errorf("%w: %d ns at %d Hz exceed the cycle range", ErrRange, int64(ns), uint64(f))
	}
	q, _ := bits.Div64(hi, lo, nsPerSecond)
	return Cycles(q), nil
}

// tick is the length of one counter cycle in ns, rounded up (at least 1).
func (f Hz) tick() Nanos {
	if f == 0 {
		return 0
	}
	t := (nsPerSecond + uint64(f) - 1) / uint64(f)
	if t == 0 {
		t = 1
	}
	return Nanos(t)
}

// mulDiv returns a·b/c for c > 0, rounded towards −∞ (floor) or +∞ (ceil),
// with a 128-bit intermediate. ok is false when the result does not fit int64.
func mulDiv(a, b, c int64, ceil bool) (r int64, ok bool) {
	if c <= 0 {
		return 0, false
	}
	neg := (a < 0) != (b < 0)
	ua, ub := absU(a), absU(b)
	hi, lo := bits.Mul64(ua, ub)
	if hi >= uint64(c) {
		return 0, false
	}
	q, rem := bits.Div64(hi, lo, uint64(c))
	// Magnitude q with remainder rem; round the signed value.
	if neg {
		if rem != 0 && !ceil {
			q++
		}
		if q > 1<<63 {
			return 0, false
		}
		return int64(-q), true // -q wraps correctly for q == 1<<63
	}
	if rem != 0 && ceil {
		q++
	}
	if q > math.MaxInt64 {
		return 0, false
	}
	return int64(q), true
}

func absU(a int64) uint64 {
	if a < 0 {
		return uint64(-(a + 1)) + 1
	}
	return uint64(a)
}

// satAdd adds two Nanos, saturating at the int64 limits.
func satAdd(a, b Nanos) Nanos {
	s := a + b
	if (b > 0 && s < a) || (b < 0 && s > a) {
		if b > 0 {
			return math.MaxInt64
		}
		return math.MinInt64
	}
	return s
}
