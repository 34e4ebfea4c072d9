package reduce

import (
	"errors"
	"fmt"
	"math"
)

// MinHostTasks is the fewest tasks, each bounded on both sides, from which
// a causal placement is claimed by a match the logs made (see "Remote
// hosts", the evidence a causal placement needs). The clock model has two
// free parameters, an offset and a rate: any one run fits inside any task
// wide enough, and any two runs fit any two tasks at some rate, so the
// first two tasks test nothing. Each further task tests the match once;
// four make two tests.
const MinHostTasks = 4

// Why a fit is not proof that the runs served the tasks (HostFit.Proves).
var (
	// ErrHostFewTasks: fewer than MinHostTasks tasks bounded on both sides
	// were matched; so few runs fit a session's tasks by coincidence.
	ErrHostFewTasks = errors.New("reduce: too few tasks to tell the match from a coincidence of run counts")
	// ErrHostRateAtLimit: the rates the tasks allow reach the edge of the
	// allowed range; the tasks do not determine the rate, or only a clock
	// as fast or slow as the model allows fits them, which is evidence of
	// a wrong match rather than of a clock.
	ErrHostRateAtLimit = errors.New("reduce: the tasks fit the remote clock only with a rate at the edge of the allowed range")
	// ErrHostOutsideTasks: the drawn map puts a run's start before its
	// task was sent or its end after the reply: no clock of the model
	// carries every run inside its task.
	ErrHostOutsideTasks = errors.New("reduce: no clock of the model carries every run inside its task")
	// ErrHostWallDisagrees: the wall-clock anchors put the remote clock
	// more than DefaultWallAgreement from where the tasks do.
	ErrHostWallDisagrees = errors.New("reduce: the wall-clock anchors disagree with the clock the tasks give")
)

// HostClaim is what a causal claim is judged with, besides the brackets.
type HostClaim struct {
	// Wall is what the hosts' wall-clock anchors say of the remote clock,
	// nil when either host wrote none.
	Wall *WallPrior
	// Named: the user named the worker the runs served, so the match is
	// theirs, not a coincidence to rule out: neither MinHostTasks nor the
	// wall-clock anchors are asked for.
	Named bool
}

// Proves reports whether the fit of brackets (those it was fitted to)
// proves that the runs served the tasks, so that its bounds may be
// published: nil, or an error wrapping ErrHostFewTasks,
// ErrHostRateAtLimit, ErrHostOutsideTasks or ErrHostWallDisagrees, with
// the figures. The rule, checked in this order:
//
//   - at least MinHostTasks brackets bounded on both sides (unless Named);
//   - the rates the brackets allow, and the drawn line's, lie strictly
//     inside the model's range (−max, +max);
//   - the drawn map puts every run's start at or after its Sent and its
//     end at or before its Received, and gives both a bound;
//   - where there is a wall-clock prior (and not Named), the drawn map
//     puts its instant within DefaultWallAgreement of where it says.
func (f *HostFit) Proves(brackets []HostBracket, c HostClaim) error {
	two := 0
	for _, b := range brackets {
		if b.Sent != math.MinInt64 && b.Received != math.MaxInt64 {
			two++
		}
	}
	if two < MinHostTasks && !c.Named {
		return fmt.Errorf("%w: %d tasks bounded on both sides, %d needed", ErrHostFewTasks, two, MinHostTasks)
	}
	if r := f.line.ratePPB(); f.allowLo <= -f.maxRate || f.allowHi >= f.maxRate || r <= -f.maxRate || r >= f.maxRate {
		return fmt.Errorf("%w: rates %s to %s ppm allowed, %s ppm drawn, the model's range ±%s ppm",
			ErrHostRateAtLimit, ppmString(f.allowLo), ppmString(f.allowHi), ppmString(r), ppmString(f.maxRate))
	}
	for i, b := range brackets {
		ys, _, err1 := f.Map(b.Start)
		ye, _, err2 := f.Map(b.End)
		if err1 != nil || err2 != nil {
			return fmt.Errorf("%w: task %d: its run has no bound", ErrHostOutsideTasks, i)
		}
		if ys < b.Sent || ye > b.Received {
			return fmt.Errorf("%w: task %d: its run drawn at [%d, %d] ns, the task [%d, %d] ns", ErrHostOutsideTasks, i, ys, ye, b.Sent, b.Received)
		}
	}
	if w := c.Wall; w != nil && !c.Named {
		y, ok := f.at(int64(w.At))
		if d := dist(y, int64(satAdd(w.At, w.Offset))); !ok || d > uint64(DefaultWallAgreement) {
			return fmt.Errorf("%w: by %d ns (at most %d ns)", ErrHostWallDisagrees, d, int64(DefaultWallAgreement))
		}
	}
	return nil
}

// dist is |a − b|, exact.
func dist(a, b int64) uint64 {
	if a < b {
		a, b = b, a
	}
	return uint64(a) - uint64(b)
}

// ppmString formats ppb as ppm with three decimals, in integers.
func ppmString(v PPB) string {
	sign := ""
	u := uint64(v)
	if v < 0 {
		sign, u = "-", -u
	}
	return fmt.Sprintf("%s%d.%03d", sign, u/1000, u%1000)
}
