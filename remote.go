package phasetrace

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/phasetrace/phasetrace/reduce"
)

// Remote workers. An L4 process (network1) on the dispatching host sends
// tasks to L3 worker daemons on other machines; each machine logs on its own
// CLOCK_MONOTONIC. The first pass learns, from the dispatching log, every
// task's network1.dispatch and network1.complete per worker, and from each
// remote machine's logs its daemon's runs; the k-th task sent to a worker
// is the k-th run of its session. Package reduce decides which session
// served which worker and fits each machine's clock to the brackets the
// tasks make (reduce.FitHost); here the logs are only grouped into machines
// and every remote record is drawn through its machine's mapping, with the
// bound reduce gives, flows joining the dispatch, the remote run and the
// complete. A remote machine whose tasks are not in the logs, or do not
// prove that its runs served them (reduce.HostFit.Proves: a match of a few
// run counts or of evenly spaced tasks, a rate at the edge of the allowed
// range, a run outside its task, a wall clock that disagrees), is moved by
// its wall-clock anchor, marked so, with no bound; one without either, or
// whose anchor would move its spans outside the trace's time range, keeps
// its own times, marked unplaced. Pids that repeat across machines are given trace pids of
// their own (the slices keep the OS pid).

// Transport is how the dispatching host's frames reach remote workers; it
// decides which instant of network1.dispatch the remote run is known to
// follow.
type Transport uint8

// Transports.
const (
	// TransportSocket (the default): the frame is sent after
	// network1.dispatch ends.
	TransportSocket Transport = iota
	// TransportMPI: the frame may leave while network1.dispatch runs; only
	// its start precedes the remote run.
	TransportMPI
)

func (t Transport) String() string {
	if t == TransportMPI {
		return "mpi"
	}
	return "socket"
}

// WithTransport says how frames reached the remote workers (default
// TransportSocket).
func WithTransport(t Transport) Option { return func(c *config) { c.transport = t } }

// WithRemoteWorker names the worker_id whose tasks a remote machine's logs
// served, where the logs do not determine it. name is the machine (as its
// daemon banner names it) or the name of one of its logs.
func WithRemoteWorker(name string, workerID int64) Option {
	return func(c *config) {
		if c.remoteWorkers == nil {
			c.remoteWorkers = map[string]int64{}
		}
		c.remoteWorkers[name] = workerID
	}
}

// WithHostClock passes options to the remote hosts' clock model
// (reduce.FitHost), such as reduce.WithHostMaxRate.
func WithHostClock(opts ...reduce.HostFitOption) Option {
	return func(c *config) { c.hostFit = append(c.hostFit, opts...) }
}

// HostSummary says how one remote machine's logs were placed on the
// dispatching host's axis.
type HostSummary struct {
	Machine string   `json:"machine"`
	Inputs  []string `json:"inputs"`
	// Method is "causal" (by the tasks it ran, which prove its runs served
	// them), "wall" (by its wall-clock anchor: no bound) or "unplaced".
	Method    string `json:"method"`
	Transport string `json:"transport,omitempty"`
	// Workers are the worker_ids it served; Tasks the tasks fitted.
	Workers []int64 `json:"workers,omitempty"`
	Tasks   int     `json:"tasks,omitempty"`
	// OffsetNs is the dispatching host's clock less this machine's, at its
	// first task; Rate the rate error of its clock the map converts with,
	// within [RateLo, RateHi] (ppb).
	OffsetNs int64 `json:"offset_ns,omitempty"`
	RatePPB  int64 `json:"rate_ppb,omitempty"`
	RateLo   int64 `json:"rate_lo_ppb,omitempty"`
	RateHi   int64 `json:"rate_hi_ppb,omitempty"`
	// LimitNs is the information limit: the smallest forward plus the
	// smallest return latency. No bound can be below half of it.
	LimitNs int64 `json:"information_limit_ns,omitempty"`
	// WallShiftNs is what its wall-clock anchor would have moved it by;
	// WallDisagreeNs how far that is from the causal offset, at its first
	// or its last task, whichever is farther.
	WallShiftNs    int64 `json:"wall_shift_ns,omitempty"`
	WallDisagreeNs int64 `json:"wall_disagrees_by_ns,omitempty"`
	// Drawn counts the slices of its spans in the trace (at its own times
	// when Method is "unplaced").
	Drawn int64 `json:"spans_drawn"`
	// Pids are the pids given trace pids of their own, OS pid → trace pid.
	Pids map[int32]int32 `json:"pids,omitempty"`
	// Bound is the distribution of the bounds of its spans drawn.
	Bound BoundStats `json:"bound_ns"`
	// Reason says, when it is not placed by causality, why not: one of
	// the ReasonHost… values (stable, for programs); Note says it in
	// words, with the figures.
	Reason string `json:"reason,omitempty"`
	Note   string `json:"note,omitempty"`
}

// finishHosts puts the machines' summaries in the Summary.
func (c *converter) finishHosts() {
	if c.remote == nil {
		return
	}
	c.sum.Hosts = c.sum.Hosts[:0]
	for _, h := range c.remote.hosts {
		s := h.summary()
		s.Bound.finish()
		c.sum.Hosts = append(c.sum.Hosts, *s)
	}
}

// writeHosts writes how each remote machine was placed.
func writeHosts(b *strings.Builder, hosts []HostSummary) {
	if len(hosts) == 0 {
		return
	}
	b.WriteString("remote machines (on the trace's axis: the dispatching host's clock, else the first log's; bound: the most a drawn instant can be from where it truly was):\n")
	for _, h := range hosts {
		fmt.Fprintf(b, "  %s (%s): %s", h.Machine, strings.Join(h.Inputs, ", "), h.Method)
		switch {
		case h.Method == reduce.HostCausal.String():
			fmt.Fprintf(b, " (%s transport), worker %s, %s\n", h.Transport, joinInts(h.Workers), count(int64(h.Tasks), "task"))
			fmt.Fprintf(b, "    offset %d ns, rate %s ppm in [%s, %s], information limit %d ns (the least forward + return latency)\n",
				h.OffsetNs, ppm(h.RatePPB), ppm(h.RateLo), ppm(h.RateHi), h.LimitNs)
			if h.Bound.Count > 0 {
				fmt.Fprintf(b, "    bound min %d ns, median %d ns, p90 %d ns, max %d ns\n", h.Bound.Min, h.Bound.Median, h.Bound.P90, h.Bound.Max)
			}
			if h.WallShiftNs != 0 {
				fmt.Fprintf(b, "    its wall-clock anchor would have put it up to %d ns away\n", h.WallDisagreeNs)
			}
		case h.Method == reduce.HostWall.String():
			fmt.Fprintf(b, ": moved %d ns by its wall-clock anchor, no bound\n", h.WallShiftNs)
		default:
			fmt.Fprintf(b, ": %s drawn at its own times\n", count(h.Drawn, "span"))
		}
		if h.Note != "" {
			fmt.Fprintf(b, "    %s\n", h.Note)
		}
		for _, os := range sortedPids(h.Pids) {
			fmt.Fprintf(b, "    pid %d, also used on another machine, is trace pid %d\n", os, h.Pids[os])
		}
	}
}

func joinInts(v []int64) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.FormatInt(x, 10)
	}
	return strings.Join(s, ", ")
}

// ppm formats ppb as ppm with three decimals, in integers.
func ppm(v int64) string {
	sign := ""
	if v < 0 {
		sign, v = "-", -v
	}
	return fmt.Sprintf("%s%d.%03d", sign, v/1000, v%1000)
}

func sortedPids(m map[int32]int32) []int32 {
	out := make([]int32, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
