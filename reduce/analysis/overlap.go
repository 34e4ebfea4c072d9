package analysis

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
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

// nativeRun is what the proof keeps of one phased native run: its
// identity and the three intervals it compares.
type nativeRun struct {
	id                    RunIdentity
	has                   [3]bool // bind, runner_run, claim_release seen
	bind, runner, release Interval
}

// proofSpans are the span names of a native run the proof reads, in the
// order of nativeRun.has.
var proofSpans = [3]string{spanBind, spanRunner, spanRelease}

// ovInv is an open invocation of an [Overlap]: its root's identity (once
// the root has come) and the earliest-starting span of each name the proof
// reads.
type ovInv struct {
	key     invKey
	hasRoot bool
	run     nativeRun
	status  idStatus
	err     error // status == idBad
}

type idStatus uint8

const (
	idNone   idStatus = iota // not a phased native run
	idNative                 // a phased native run
	idBad                    // a root with a bad identity: the proof fails
)

// Overlap proves the native overlap ([ProveOverlap]) over a stream of spans
// in input order ([Overlap.Add], [Overlap.ReadFrom]), keeping no span. What
// it keeps grows as follows: per open invocation (at most [DefaultMaxOpen])
// a small fixed-size entry; per invocation its key (to tell a late span);
// per phased native run its identity and three intervals (about 100 bytes,
// as much as the proof's pair for it). An invocation is closed once
// [DefaultMaxOpen] newer ones have begun; a span arriving after that is
// counted by [Overlap.Late] and left out.
type Overlap struct {
	cfg     overlapConfig
	maxOpen int
	open    map[invKey]*ovInv
	queue   arrivals[invKey]
	closed  map[invKey]struct{}
	runs    []nativeRun
	bad     *ovInv // the least (pid, inv) with a bad identity
	late    int64
	done    bool
}

// NewOverlap returns an empty [Overlap].
func NewOverlap(opts ...OverlapOption) *Overlap {
	o := &Overlap{maxOpen: DefaultMaxOpen, open: make(map[invKey]*ovInv), closed: make(map[invKey]struct{})}
	for _, opt := range opts {
		opt(&o.cfg)
	}
	return o
}

// Add adds a span, in input order. s is not kept: its Attrs may be the
// reader's. Adding after the proof was taken panics.
func (o *Overlap) Add(s *strace.Span) {
	if o.done {
		panic("analysis: Overlap.Add after the proof was taken")
	}
	if !strace.FamilyOf(s.Name).HasInvocation() {
		return
	}
	k := invKey{s.Pid, s.Inv}
	v := o.open[k]
	if v == nil {
		if _, ok := o.closed[k]; ok {
			o.late++
			return
		}
		if len(o.open) >= o.maxOpen {
			o.closeOldest()
		}
		v = &ovInv{key: k}
		o.open[k] = v
		o.queue.push(k)
	}
	if s.Depth == 0 && !v.hasRoot {
		v.hasRoot = true
		v.status, v.err = identityOf(s, &v.run.id)
	}
	for i, name := range proofSpans {
		if s.Name == name {
			if iv := intervalOf(s); !v.run.has[i] || iv.Start < v.run.intervals()[i].Start {
				v.run.has[i] = true
				*v.run.interval(i) = iv
			}
		}
	}
}

func (r *nativeRun) intervals() [3]Interval { return [3]Interval{r.bind, r.runner, r.release} }

func (r *nativeRun) interval(i int) *Interval {
	switch i {
	case 0:
		return &r.bind
	case 1:
		return &r.runner
	}
	return &r.release
}

// ReadFrom adds every span of rd until io.EOF and returns the reader's
// error otherwise.
func (o *Overlap) ReadFrom(rd *strace.Reader) error {
	return eachRecord(rd, func(rec *strace.Record) {
		if rec.Kind == strace.KindSpan {
			o.Add(&rec.Span)
		}
	})
}

// Late returns how many spans arrived after their invocation was closed;
// the proof leaves them out.
func (o *Overlap) Late() int64 { return o.late }

func (o *Overlap) closeOldest() {
	closeOldest(&o.queue, o.open, o.closeInv)
}

func (o *Overlap) closeInv(v *ovInv) {
	delete(o.open, v.key)
	o.closed[v.key] = struct{}{}
	switch v.status {
	case idNative:
		o.runs = append(o.runs, v.run)
	case idBad:
		if o.bad == nil || v.key.less(o.bad.key) {
			o.bad = v
		}
	}
}

// Proof closes every open invocation and returns the proof of the spans
// added (see [ProveOverlap]). No span can be added after it.
func (o *Overlap) Proof() (*OverlapProof, error) {
	if !o.done {
		o.done = true
		closeAll(&o.queue, o.open, o.closeInv)
		o.open, o.closed = nil, nil
	}
	return o.prove()
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
// error unwraps to ErrTooFewRuns. [Overlap] is the same proof over a
// stream of spans.
func ProveOverlap(spans []strace.Span, opts ...OverlapOption) (*OverlapProof, error) {
	o := NewOverlap(opts...)
	o.maxOpen = max(len(spans), 1)
	for i := range spans {
		o.Add(&spans[i])
	}
	return o.Proof()
}

func (o *Overlap) prove() (*OverlapProof, error) {
	cfg := o.cfg
	proof := &OverlapProof{RequireHidden: cfg.requireHidden}
	slices.SortFunc(o.runs, func(a, b nativeRun) int {
		return cmp.Or(cmp.Compare(a.id.Pid, b.id.Pid), cmp.Compare(a.id.Inv, b.id.Inv))
	})
	// The first structural problem in (pid, inv) order: a bad identity or
	// a duplicate one.
	seen := make(map[RunIdentity]bool, len(o.runs))
	for _, r := range o.runs {
		if o.bad != nil && o.bad.key.less(invKey{r.id.Pid, r.id.Inv}) {
			break
		}
		key := r.id
		key.Inv = 0 // two invocations carrying the same identity are duplicates
		if seen[key] {
			return proof, &OverlapError{Err: ErrRunIdentity, Pid: r.id.Pid, Sequence: r.id.Sequence(),
				Detail: fmt.Sprintf(": duplicate identity for pid=%d sequence=%d (inv=%d)", r.id.Pid, r.id.Sequence(), r.id.Inv)}
		}
		seen[key] = true
	}
	if o.bad != nil {
		return proof, o.bad.err
	}
	runs := o.runs
	for _, r := range runs {
		for i := range proofSpans {
			if !r.has[i] {
				var missing []string
				for j, n := range proofSpans {
					if !r.has[j] {
						missing = append(missing, n)
					}
				}
				return proof, &OverlapError{Err: ErrRunIncomplete, Pid: r.id.Pid, Sequence: r.id.Sequence(),
					Detail: fmt.Sprintf(": pid=%d sequence=%d is missing span(s): %s", r.id.Pid, r.id.Sequence(), strings.Join(missing, ", "))}
			}
		}
	}
	// The lanes in pid order, each by runner_run start (equal starts in
	// inv order), sorted in place.
	slices.SortStableFunc(runs, func(a, b nativeRun) int {
		return cmp.Or(cmp.Compare(a.id.Pid, b.id.Pid), cmp.Compare(a.runner.Start, b.runner.Start))
	})
	proof.Pairs = make([]OverlapPair, 0, len(runs))
	var errs []error
	for k := 1; k < len(runs); k++ {
		if runs[k].id.Pid != runs[k-1].id.Pid {
			continue
		}
		p := checkPair(runs[k-1], runs[k], cfg.requireHidden)
		proof.Pairs = append(proof.Pairs, p)
		if p.Err != nil {
			errs = append(errs, p.Err)
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
		PredecessorDevice:  pred.runner,
		PredecessorRelease: pred.release.Start,
		SuccessorPrepare:   succ.bind,
		SuccessorDevice:    succ.runner,
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

// identityOf reads the identity a root span carries into id: idNone when
// it carries none of the fields (or a zero sequence), idBad with the
// proof's error when it carries some but not all or a non-integer one.
func identityOf(root *strace.Span, id *RunIdentity) (idStatus, error) {
	var vals [len(identityFields)]string
	var have [len(identityFields)]bool
	for _, a := range root.Attrs {
		if a.Bare {
			continue
		}
		for i, f := range identityFields {
			if a.Key == f {
				vals[i], have[i] = a.Value, true // the last occurrence wins
			}
		}
	}
	var missing []string
	for i, f := range identityFields {
		if !have[i] {
			missing = append(missing, f)
		}
	}
	if len(missing) == len(identityFields) {
		return idNone, nil
	}
	if len(missing) > 0 {
		return idBad, &OverlapError{Err: ErrRunIdentity, Pid: root.Pid,
			Detail: fmt.Sprintf(": %s (pid=%d inv=%d) is missing identity field(s): %s", root.Name, root.Pid, root.Inv, strings.Join(missing, ", "))}
	}
	var nums [len(identityFields)]int64
	for i, f := range identityFields {
		v, ok := identityInt(vals[i])
		if !ok {
			return idBad, &OverlapError{Err: ErrRunIdentity, Pid: root.Pid,
				Detail: fmt.Sprintf(": %s (pid=%d inv=%d) has a non-integer identity: %s=%s", root.Name, root.Pid, root.Inv, f, vals[i])}
		}
		nums[i] = v
	}
	*id = RunIdentity{Pid: root.Pid, Inv: root.Inv, RunID: nums[0], DispatchID: nums[1], RunEpoch: nums[2], SlotID: nums[3], Generation: nums[4]}
	if id.Sequence() == 0 {
		return idNone, nil
	}
	return idNative, nil
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
