package analysis

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/phasetrace/phasetrace/strace"
)

// Errors of the native-overlap proof. Every failure is an [*OverlapError]
// that unwraps both to ErrOverlap and to the sentinel naming what failed.
var (
	ErrOverlap = errors.New("native overlap not proved")
	// ErrTooFewRuns: no process lane holds two complete native runs, so
	// there is nothing to prove (distinct from a proof that failed).
	ErrTooFewRuns = errors.New("need at least two complete native runs on one process lane")
	// ErrRunIdentity: a root carries some but not all identity fields, a
	// non-integer one, or the same identity as another run.
	ErrRunIdentity = errors.New("bad native run identity")
	// ErrRunIncomplete: a native run lacks chip.run.bind,
	// chip.run.runner_run or chip.run.claim_release.
	ErrRunIncomplete = errors.New("native run is missing spans")
	// ErrLaunchOrder: ordered by device start, a lane's sequence numbers
	// do not increase.
	ErrLaunchOrder = errors.New("launch order is not monotonic")
	// ErrPrepareNotOverlapped: bind(N+1) does not intersect runner_run(N).
	ErrPrepareNotOverlapped = errors.New("preparation did not overlap")
	// ErrPrepareNotHidden: bind(N+1) ends after runner_run(N) (checked
	// only when a fully hidden prepare is required).
	ErrPrepareNotHidden = errors.New("preparation was not fully hidden")
	// ErrDeviceBeforeRelease: runner_run(N+1) starts before
	// claim_release(N).
	ErrDeviceBeforeRelease = errors.New("device execution reordered before the claim release")
)

// Span names of one native run that the proof reads.
const (
	spanBind    = strace.SpanBind
	spanRunner  = strace.SpanRunnerRun
	spanRelease = strace.SpanClaimRelease
)

// identityFields are the attributes that make a root a phased native run.
var identityFields = [...]string{"run_id", "dispatch_id", "run_epoch", "slot_id", "generation"}

// RunIdentity is the identity a phased native run carries on its root
// span.
type RunIdentity struct {
	Pid        int32
	Inv        uint64
	RunID      int64
	DispatchID int64
	RunEpoch   int64
	SlotID     int64
	Generation int64
}

// Sequence is the run's submission order within its process: the
// scheduler's dispatch_id, or run_epoch on the direct-chip lane, which
// allocates no dispatch id.
func (id RunIdentity) Sequence() int64 {
	if id.DispatchID != 0 {
		return id.DispatchID
	}
	return id.RunEpoch
}

// Interval is a host time window [Start, End) in CLOCK_MONOTONIC ns.
type Interval struct{ Start, End int64 }

func (iv Interval) String() string { return fmt.Sprintf("[%d,%d]", iv.Start, iv.End) }

func intervalOf(s *strace.Span) Interval { return Interval{s.TS, s.End()} }

// OverlapPair is one pair of adjacent native runs on a process lane and the
// windows the proof compared.
type OverlapPair struct {
	Predecessor, Successor RunIdentity
	PredecessorDevice      Interval // runner_run(N)
	PredecessorRelease     int64    // claim_release(N) start
	SuccessorPrepare       Interval // bind(N+1)
	SuccessorDevice        Interval // runner_run(N+1)
	Err                    error    // nil when the pair proves the overlap
}

// OverlapProof is the result of [ProveOverlap]: every adjacent pair
// checked, in lane order.
type OverlapProof struct {
	RequireHidden bool
	Pairs         []OverlapPair
}

// Verified returns how many pairs proved the overlap.
func (p *OverlapProof) Verified() int {
	n := 0
	for _, pr := range p.Pairs {
		if pr.Err == nil {
			n++
		}
	}
	return n
}

// OverlapError is one failure of the proof, naming the runs (by sequence
// number) and the intervals involved.
type OverlapError struct {
	Err         error // the specific sentinel
	Pid         int32
	Sequence    int64 // the successor (or the run at fault); 0 when none
	Predecessor int64 // 0 when the failure is not about a pair
	Detail      string
}

func (e *OverlapError) Error() string { return e.Err.Error() + e.Detail }

// Unwrap returns ErrOverlap and the specific sentinel.
func (e *OverlapError) Unwrap() []error { return []error{ErrOverlap, e.Err} }

// OverlapOption configures [ProveOverlap].
type OverlapOption func(*overlapConfig)

type overlapConfig struct{ requireHidden bool }

// WithRequireHidden also requires bind(N+1) to end inside runner_run(N):
// the preparation fully hidden, not merely overlapping. It is a claim about
// pipeline depth, sensitive to host scheduling.
func WithRequireHidden() OverlapOption { return func(c *overlapConfig) { c.requireHidden = true } }

type nativeRun struct {
	id    RunIdentity
	spans map[string]*strace.Span
}

// ProveOverlap checks, for every pair of adjacent phased native runs on
// one process lane (ordered by runner_run start), that the successor's
// chip.run.bind overlaps the predecessor's chip.run.runner_run and that the
// successor's runner_run does not start before the predecessor's
// chip.run.claim_release. A native run is an invocation whose root carries
// run_id, dispatch_id, run_epoch, slot_id and generation with a non-zero
// sequence; other invocations are skipped.
//
// Structural problems (an incomplete identity, a duplicate, a run missing
// one of the three spans) fail the whole proof with one error. Otherwise
// every pair is checked and the error joins one [*OverlapError] per failed
// pair; the proof lists every pair either way. With no pair at all the
// error unwraps to ErrTooFewRuns.
func ProveOverlap(spans []strace.Span, opts ...OverlapOption) (*OverlapProof, error) {
	var cfg overlapConfig
	for _, o := range opts {
		o(&cfg)
	}
	proof := &OverlapProof{RequireHidden: cfg.requireHidden}
	runs, err := nativeRuns(strace.GroupInvocations(spans))
	if err != nil {
		return proof, err
	}
	var lanes [][]nativeRun
	lane := make(map[int32]int)
	for _, r := range runs {
		for _, name := range []string{spanBind, spanRunner, spanRelease} {
			if r.spans[name] == nil {
				var missing []string
				for _, n := range []string{spanBind, spanRunner, spanRelease} {
					if r.spans[n] == nil {
						missing = append(missing, n)
					}
				}
				return proof, &OverlapError{Err: ErrRunIncomplete, Pid: r.id.Pid, Sequence: r.id.Sequence(),
					Detail: fmt.Sprintf(": pid=%d sequence=%d is missing span(s): %s", r.id.Pid, r.id.Sequence(), strings.Join(missing, ", "))}
			}
		}
		i, ok := lane[r.id.Pid]
		if !ok {
			i = len(lanes)
			lane[r.id.Pid] = i
			lanes = append(lanes, nil)
		}
		lanes[i] = append(lanes[i], r)
	}
	var errs []error
	for _, l := range lanes {
		sort.SliceStable(l, func(i, j int) bool { return l[i].spans[spanRunner].TS < l[j].spans[spanRunner].TS })
		for k := 1; k < len(l); k++ {
			p := checkPair(l[k-1], l[k], cfg.requireHidden)
			proof.Pairs = append(proof.Pairs, p)
			if p.Err != nil {
				errs = append(errs, p.Err)
			}
		}
	}
	if len(proof.Pairs) == 0 {
		return proof, &OverlapError{Err: ErrTooFewRuns, Detail: fmt.Sprintf(" (%d native run(s) found)", len(runs))}
	}
	return proof, errors.Join(errs...)
}

func checkPair(pred, succ nativeRun, requireHidden bool) OverlapPair {
	p := OverlapPair{
		Predecessor:        pred.id,
		Successor:          succ.id,
		PredecessorDevice:  intervalOf(pred.spans[spanRunner]),
		PredecessorRelease: pred.spans[spanRelease].TS,
		SuccessorPrepare:   intervalOf(succ.spans[spanBind]),
		SuccessorDevice:    intervalOf(succ.spans[spanRunner]),
	}
	ps, ss := pred.id.Sequence(), succ.id.Sequence()
	fail := func(sentinel error, format string, args ...any) {
		p.Err = &OverlapError{Err: sentinel, Pid: succ.id.Pid, Sequence: ss, Predecessor: ps, Detail: fmt.Sprintf(format, args...)}
	}
	dev, prep := p.PredecessorDevice, p.SuccessorPrepare
	switch {
	case ss <= ps:
		fail(ErrLaunchOrder, ": pid=%d predecessor=%d successor=%d", succ.id.Pid, ps, ss)
	case prep.Start >= dev.End || prep.End <= dev.Start:
		fail(ErrPrepareNotOverlapped, ": pid=%d sequence=%d prepare=%v predecessor=%d predecessor_device=%v",
			succ.id.Pid, ss, prep, ps, dev)
	case requireHidden && prep.End > dev.End:
		fail(ErrPrepareNotHidden, ": pid=%d sequence=%d prepare_end=%d predecessor=%d predecessor_device_end=%d",
			succ.id.Pid, ss, prep.End, ps, dev.End)
	case p.SuccessorDevice.Start < p.PredecessorRelease:
		fail(ErrDeviceBeforeRelease, ": pid=%d sequence=%d device_start=%d predecessor=%d predecessor_release=%d",
			succ.id.Pid, ss, p.SuccessorDevice.Start, ps, p.PredecessorRelease)
	}
	return p
}

// nativeRuns returns the phased native runs in (pid, inv) order.
func nativeRuns(invs []*strace.Invocation) ([]nativeRun, error) {
	var runs []nativeRun
	seen := make(map[RunIdentity]bool)
	for _, inv := range invs {
		root := rootSpan(inv)
		if root == nil {
			continue
		}
		vals := make(map[string]string)
		for _, a := range root.Attrs {
			if !a.Bare {
				vals[a.Key] = a.Value // the last occurrence wins
			}
		}
		var missing []string
		for _, f := range identityFields {
			if _, ok := vals[f]; !ok {
				missing = append(missing, f)
			}
		}
		if len(missing) == len(identityFields) {
			continue
		}
		if len(missing) > 0 {
			return nil, &OverlapError{Err: ErrRunIdentity, Pid: root.Pid,
				Detail: fmt.Sprintf(": %s (pid=%d inv=%d) is missing identity field(s): %s", root.Name, root.Pid, root.Inv, strings.Join(missing, ", "))}
		}
		var nums [len(identityFields)]int64
		for i, f := range identityFields {
			v, ok := identityInt(vals[f])
			if !ok {
				return nil, &OverlapError{Err: ErrRunIdentity, Pid: root.Pid,
					Detail: fmt.Sprintf(": %s (pid=%d inv=%d) has a non-integer identity: %s=%s", root.Name, root.Pid, root.Inv, f, vals[f])}
			}
			nums[i] = v
		}
		id := RunIdentity{Pid: root.Pid, Inv: inv.Inv, RunID: nums[0], DispatchID: nums[1], RunEpoch: nums[2], SlotID: nums[3], Generation: nums[4]}
		if id.Sequence() == 0 {
			continue
		}
		key := id
		key.Inv = 0 // two invocations carrying the same identity are duplicates
		if seen[key] {
			return nil, &OverlapError{Err: ErrRunIdentity, Pid: id.Pid, Sequence: id.Sequence(),
				Detail: fmt.Sprintf(": duplicate identity for pid=%d sequence=%d (inv=%d)", id.Pid, id.Sequence(), id.Inv)}
		}
		seen[key] = true
		runs = append(runs, nativeRun{id: id, spans: byName(inv)})
	}
	return runs, nil
}

// identityInt reads an optionally signed run of decimal digits (leading
// zeros allowed) that fits an int64.
func identityInt(s string) (int64, bool) {
	digits := strings.TrimPrefix(s, "-")
	if digits == "" {
		return 0, false
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return 0, false
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	return v, err == nil
}

// WriteOverlap prints the outcome of a proof: a verified line when every
// pair holds, otherwise one line per failed pair.
func WriteOverlap(w io.Writer, p *OverlapProof) error {
	ew := &errWriter{w: w}
	if p == nil {
		return nil
	}
	failed := len(p.Pairs) - p.Verified()
	if failed == 0 {
		ew.printf("Native overlap verified for %d adjacent dispatch pair(s).\n", len(p.Pairs))
		return ew.err
	}
	ew.printf("Native overlap failed for %d of %d adjacent dispatch pair(s):\n", failed, len(p.Pairs))
	for _, pr := range p.Pairs {
		if pr.Err != nil {
			ew.printf("  %v\n", pr.Err)
		}
	}
	return ew.err
}
