package reduce

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
)

// MinHostTasks is the fewest tasks, each bounded on both sides, from which
// a causal placement is claimed by a match the logs made (see "Remote
// hosts", the evidence a causal placement needs). The clock model has two
// free parameters, an offset and a rate: any one run fits inside any task
// wide enough, and any two runs fit any two tasks at some rate, so the
// first two tasks test nothing. Each further task tests the match once;
// four make two tests.
const MinHostTasks = 4

// MinHostEvidence is the least evidence, in bits, from which a causal
// placement is claimed by a match the logs made: the chance that runs
// which did not serve the tasks fit them anyway is taken as at most
// 2^−MinHostEvidence (see HostFit.Proves).
const MinHostEvidence = 16

// Why a fit is not proof that the runs served the tasks (HostFit.Proves).
var (
	// ErrHostFewTasks: fewer than MinHostTasks tasks bounded on both sides
	// were matched; so few runs fit a session's tasks by coincidence.
	ErrHostFewTasks = errors.New("reduce: too few tasks to tell the match from a coincidence of run counts")
	// ErrHostRegular: the tasks were sent at so steady a pace that another
	// session of the same pace would fit them as well: less than
	// MinHostEvidence bits.
	ErrHostRegular = errors.New("reduce: the tasks are too evenly spaced to tell the match from a coincidence")
	// ErrHostRateAtLimit: the rates at which the runs fit the tasks lie
	// against the edge of the allowed range: only a clock as fast or slow
	// as the model allows, or faster, fits them, which is evidence of a
	// wrong match rather than of a clock.
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
	// theirs, not a coincidence to rule out: neither MinHostTasks,
	// MinHostEvidence nor the wall-clock anchors are asked for.
	Named bool
}

// Proves reports whether the fit of brackets (those it was fitted to, in
// task order) proves that the runs served the tasks, so that its bounds
// may be published: nil, or an error wrapping ErrHostFewTasks,
// ErrHostRegular, ErrHostRateAtLimit, ErrHostOutsideTasks or
// ErrHostWallDisagrees, with the figures. The rule, checked in this order:
//
//   - (unless Named) at least MinHostTasks brackets bounded on both
//     sides, and at least MinHostEvidence bits of evidence (HostEvidence);
//   - the drawn line's rate lies strictly inside the model's range (−max,
//     +max), and the constant rates at which a line carries every run
//     inside its task, sought within ±4·max, are not pinned against its
//     edge: their middle lies strictly inside (−max, +max), or they
//     include the whole range (the tasks leave the rate to the model);
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
	if bits := HostEvidence(brackets); bits < MinHostEvidence && !c.Named {
		return fmt.Errorf("%w: %d bits of evidence from %d tasks, %d needed", ErrHostRegular, bits, two, MinHostEvidence)
	}
	inside := func(r PPB) bool { return -f.maxRate < r && r < f.maxRate }
	mid := f.dataLo + (f.dataHi-f.dataLo)/2
	pinned := f.dataFits && !inside(mid) && (f.dataLo > -f.maxRate || f.dataHi < f.maxRate)
	if r := f.line.ratePPB(); !inside(r) || pinned {
		search := ppmString(hostPinSearch * f.maxRate)
		data := "no constant rate within ±" + search + " ppm carries every run inside its task"
		if f.dataFits {
			data = "the constant rates within ±" + search + " ppm that carry every run inside its task are " + ppmString(f.dataLo) + " to " + ppmString(f.dataHi) + " ppm"
		}
		return fmt.Errorf("%w: drawn with %s ppm, the model's range ±%s ppm; %s", ErrHostRateAtLimit, ppmString(r), ppmString(f.maxRate), data)
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

// HostEvidence returns how strongly the brackets (in task order) tell a
// match of runs to tasks from a coincidence, in bits: the sum, over every
// task bounded on both sides after the first two such, of
// log2(|D| / room), each term within [0, 30]. Here room is how far the
// run may slide inside its task (Received − Sent less the run's length),
// and D the second difference of the Sent times there: how far the task
// was sent from where the two before it, continued at their spacing, put
// it. The offset and the rate absorb any two tasks; a run that did not
// serve a task lands inside it only where the spacing of its own session
// happens to bend as the tasks' did, to within room: about room/|D| of
// the time. A steady loop (D near 0) gives next to nothing, however many
// tasks: another session of the same pace would fit it too.
func HostEvidence(brackets []HostBracket) int {
	var sent []HostNanos
	total := 0
	for _, b := range brackets {
		if b.Sent == math.MinInt64 || b.Received == math.MaxInt64 {
			continue
		}
		sent = append(sent, b.Sent)
		n := len(sent)
		if n < 3 {
			continue
		}
		d1, ok1 := subHost(sent[n-1], sent[n-2])
		d0, ok2 := subHost(sent[n-2], sent[n-3])
		w, ok3 := subHost(b.Received, b.Sent)
		l, ok4 := subHost(b.End, b.Start)
		if !ok1 || !ok2 || !ok3 || !ok4 {
			continue // no evidence from a task past the int64 range
		}
		room := uint64(0)
		if w > l {
			room = dist(int64(w), int64(l))
		}
		total += min(max(bits.Len64(dist(int64(d1), int64(d0)))-bits.Len64(max(room, 1)), 0), 30)
	}
	return total
}
