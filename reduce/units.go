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

// HostNanos is a host CLOCK_MONOTONIC time or a duration on that clock, in
// nanoseconds: host windows, anchors' host readings, placed spans and
// their bounds.
type HostNanos int64

// DeviceNanos is a device-domain time in nanoseconds: an offset from a
// run's origin (device ts, which may be negative) or a duration, both
// measured by the device counter at its nominal frequency. It becomes a
// HostNanos only through a run's [Mapping].
type DeviceNanos int64

// PPB is a rate error in parts per billion (1 ppm = 1000 ppb).
type PPB int64

const nsPerSecond = 1_000_000_000

// ErrRange reports a conversion whose exact result does not fit the
// destination type, or a zero frequency.
var ErrRange = errors.New("reduce: value out of range")

// Nanos converts a cycle count to device-domain nanoseconds at frequency f,
// rounding down (the exact floor of c·1e9/f). The product is formed in 128
// bits, so no uint64 cycle count can overflow it; the result is an error
// only when f is zero or the exact value exceeds the largest DeviceNanos.
//
// The runtime converts with floating point ((double)c/f·1e6·1000, then
// truncated), which can land 1 ns away from the exact floor; this conversion
// is always the exact floor.
func (f Hz) Nanos(c Cycles) (DeviceNanos, error) {
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
	return DeviceNanos(q), nil
}

// NanosCeil is Nanos rounded up instead of down.
func (f Hz) NanosCeil(c Cycles) (DeviceNanos, error) {
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
	return DeviceNanos(q), nil
}

// Cycles converts a non-negative device-domain duration to cycles at
// frequency f, rounding down (the exact floor of ns·f/1e9).
func (f Hz) Cycles(ns DeviceNanos) (Cycles, error) {
	if ns < 0 {
		return 0, fmt.Errorf("%w: negative duration %d ns", ErrRange, int64(ns))
	}
	hi, lo := bits.Mul64(uint64(ns), uint64(f))
	if hi == 0 {
		return Cycles(lo / nsPerSecond), nil // a product under 2^64 (most): a constant divisor's multiply
	}
	if hi >= nsPerSecond {
		return 0, fmt.Errorf("%w: %d ns at %d Hz exceed the cycle range", ErrRange, int64(ns), uint64(f))
	}
	q, _ := bits.Div64(hi, lo, nsPerSecond)
	return Cycles(q), nil
}

// tick is the length of one counter cycle in ns, rounded up (at least 1),
// as a host-time allowance.
func (f Hz) tick() HostNanos {
	if f == 0 {
		return 0
	}
	t := (nsPerSecond + uint64(f) - 1) / uint64(f)
	if t == 0 {
		t = 1
	}
	return HostNanos(t)
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
	return quotient(hi, lo, uint64(c), neg, ceil)
}

// quotient divides the magnitude hi:lo (hi < d) by d and rounds the
// value of that sign (negative when neg) down, or up with ceil; ok is
// false when the result does not fit int64.
func quotient(hi, lo, d uint64, neg, ceil bool) (int64, bool) {
	q, rem := bits.Div64(hi, lo, d)
	// Rounding away from zero adds one to the magnitude: a negative value
	// rounded down, a positive one rounded up.
	if rem != 0 && neg != ceil {
		if q == math.MaxUint64 {
			return 0, false
		}
		q++
	}
	if neg {
		if q > 1<<63 {
			return 0, false
		}
		return int64(-q), true // -q wraps correctly for q == 1<<63
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

// abs is |v| (−MinInt64 stays MinInt64; callers keep values far from it).
func abs[T ~int64](v T) T {
	if v < 0 {
		return -v
	}
	return v
}

// satAdd adds two values, saturating at the int64 limits.
func satAdd[T ~int64](a, b T) T {
	s := a + b
	if (b > 0 && s < a) || (b < 0 && s > a) {
		if b > 0 {
			return math.MaxInt64
		}
		return math.MinInt64
	}
	return s
}

// Extent is the half-open interval [Start, End) on one axis: raw counter
// cycles, device-domain ns or host ns. An extent with End ≤ Start is
// empty.
type Extent[T Cycles | DeviceNanos | HostNanos] struct {
	Start, End T
}

// HostWindow is a host span's extent on CLOCK_MONOTONIC, such as a
// chip.run.runner_run window.
type HostWindow = Extent[HostNanos]

// DeviceWindow is an extent in device-domain offsets from a run's origin,
// such as RunWall's true extent known from a buffer.
type DeviceWindow = Extent[DeviceNanos]

// Empty reports whether the extent holds no instant.
func (iv Extent[T]) Empty() bool { return iv.End <= iv.Start }

// Len returns End − Start, or 0 for an empty extent; a signed length past
// the largest int64 saturates there.
func (iv Extent[T]) Len() T {
	if iv.Empty() {
		return 0
	}
	if d := iv.End - iv.Start; d > 0 {
		return d
	}
	return math.MaxInt64
}

// Effective returns the merged window of the concurrent orchestrator and
// scheduler, orch ∪ sched: from min(orch start, sched start) to
// max(orch end, sched end). An empty window contributes nothing, so one
// valid window is its own Effective; both empty give the zero Extent.
// It is a derived window: the device never stamps it.
func Effective[T Cycles | DeviceNanos | HostNanos](orch, sched Extent[T]) Extent[T] {
	switch {
	case orch.Empty() && sched.Empty():
		return Extent[T]{}
	case orch.Empty():
		return sched
	case sched.Empty():
		return orch
	}
	return Extent[T]{Start: min(orch.Start, sched.Start), End: max(orch.End, sched.End)}
}
