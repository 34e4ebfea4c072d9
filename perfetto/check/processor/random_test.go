package processor_test

import (
	"bytes"
	"cmp"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/phasetrace/phasetrace/perfetto"
	"github.com/phasetrace/phasetrace/perfetto/check"
	"github.com/phasetrace/phasetrace/perfetto/check/processor"
)

var (
	seed   = flag.Uint64("seed", 1, "first seed of TestRandomTraces")
	traces = flag.Int("traces", 200, "how many random traces TestRandomTraces writes")
)

// shell returns the trace processor named by the environment, or skips.
func shell(t testing.TB) *processor.Shell {
	t.Helper()
	sh, ok := processor.FromEnv()
	if !ok {
		t.Skip("set " + processor.EnvVar + " to a trace_processor_shell to compare check with Perfetto's trace processor")
	}
	return sh
}

// TestRandomTraces writes random traces with everything the writer offers
// and requires check and the trace processor to read each one the same
// way, and both to find nothing wrong with it. Trace i is generated from
// the seed -seed+i; a failure names it, and
//
//	go test -run TestRandomTraces -seed N -traces 1
//
// replays it alone.
func TestRandomTraces(t *testing.T) {
	t.Parallel()
	sh := shell(t)
	for i := range uint64(*traces) {
		s := *seed + i
		t.Run(fmt.Sprintf("seed=%d", s), func(t *testing.T) {
			t.Parallel()
			b, desc := randomTrace(t, s)
			tr, err := check.ReadBytes(b)
			if err != nil {
				t.Fatalf("seed %d (%s): check: %v", s, desc, err)
			}
			r, err := sh.Load(b)
			if err != nil {
				t.Fatalf("seed %d (%s): %v", s, desc, err)
			}
			if err := processor.Agree(tr, r); err != nil {
				t.Errorf("seed %d (%s):\n%v", s, desc, err)
			}
		})
	}
}

// gen writes one random trace. Everything it gives the writer is valid, so
// the writer must accept all of it: slices nest (children exactly at their
// parent's bounds, siblings sharing a boundary, identical intervals told
// apart by Depth, zero durations, instants anywhere), Begin/End pairs are
// balanced, and every flow runs forward in time and is terminated.
type gen struct {
	r     *rand.Rand
	w     *perfetto.Writer
	items []*item // slices and instants, for flows
	seq   int     // names
}

// item is a slice, an instant or a Begin waiting to be given to the writer.
type item struct {
	track   perfetto.Track
	s       perfetto.Slice
	instant bool
	begin   bool // a Begin: its End follows at s.TS+s.Dur
}

func randomTrace(t *testing.T, s uint64) ([]byte, string) {
	r := rand.New(rand.NewPCG(s, 0x9e3779b97f4a7c15))
	var opts []perfetto.Option
	var desc []string
	delta := r.IntN(3) != 0
	opts = append(opts, perfetto.WithDeltaTimestamps(delta))
	desc = append(desc, fmt.Sprintf("delta=%v", delta))
	if r.IntN(2) == 0 {
		level := 1 + r.IntN(9)
		opts = append(opts, perfetto.WithCompression(level))
		desc = append(desc, fmt.Sprintf("compression=%d", level))
	}
	if r.IntN(4) == 0 {
		opts = append(opts, perfetto.WithFlushThreshold(1+r.IntN(512)))
		desc = append(desc, "small flush threshold")
	}
	if r.IntN(4) == 0 {
		opts = append(opts, perfetto.WithInternLimit(1+r.IntN(16)))
		desc = append(desc, "small intern limit")
	}
	var buf bytes.Buffer
	g := &gen{r: r, w: perfetto.NewWriter(&buf, opts...)}
	if err := g.write(); err != nil {
		t.Fatalf("seed %d (%s): the writer refused valid input: %v", s, strings.Join(desc, ", "), err)
	}
	if st := g.w.Stats(); st.Dropped != 0 {
		t.Fatalf("seed %d: the writer dropped %d events", s, st.Dropped)
	}
	return buf.Bytes(), strings.Join(desc, ", ")
}

// Bases of time: zero, small, CLOCK_MONOTONIC-like and boot-time-like
// nanoseconds far past the sums' modulus.
var bases = []int64{0, 1_000, 5_000_000_000, 1_700_000_000_000_000}

func (g *gen) write() error {
	r := g.r
	base := bases[r.IntN(len(bases))] + r.Int64N(1000)
	for range r.IntN(3) {
		g.w.WallClock(base+r.Int64N(100_000), 1_764_400_000_000_000_000+r.Int64N(1e12))
	}

	// Tracks: processes, their threads (and threads of undescribed
	// processes, and a tid reused in two processes), custom tracks under
	// any of them or at the top, same-named siblings, counters.
	var parents, sliceTracks, streamTracks, counters []perfetto.Track
	parents = append(parents, perfetto.Track{})
	for i := range 1 + r.IntN(3) {
		pid := int32(100 + 10*i)
		if r.IntN(4) != 0 {
			p := g.w.Process(perfetto.ProcessSpec{Pid: pid, Name: g.pick("proc", "chip rank 0", ""),
				Labels: g.labels(), SortIndex: int32(r.IntN(3)), ChildOrder: perfetto.ChildOrder(r.IntN(4))})
			parents = append(parents, p)
		}
		for j := range 1 + r.IntN(3) {
			tid := int64(pid) + int64(j)
			if j == 2 {
				tid = 7 // the same tid in several processes
			}
			th := g.w.Thread(perfetto.ThreadSpec{Pid: pid, Tid: tid, Name: g.pick("main", "worker", ""), SortIndex: int32(r.IntN(3))})
			parents = append(parents, th)
		}
	}
	for range r.IntN(6) {
		parent := parents[r.IntN(len(parents))]
		tr := g.w.Track(parent, perfetto.TrackSpec{
			Name: g.pick("lane", "device 0", "orch", "sched"), Key: g.pick("", "k1", "k2"),
			Description: g.pick("", "placed by anchors"), Rank: int32(r.IntN(4)),
			ChildOrder: perfetto.ChildOrder(r.IntN(4)), Merge: perfetto.Merge(r.IntN(4)),
		})
		parents = append(parents, tr)
	}
	seen := map[uint64]bool{}
	for _, p := range parents[1:] {
		if seen[p.UUID()] {
			continue // the same name and key under the same parent: the same track
		}
		seen[p.UUID()] = true
		if r.IntN(5) == 0 {
			streamTracks = append(streamTracks, p)
		} else {
			sliceTracks = append(sliceTracks, p)
		}
	}
	for range r.IntN(4) {
		counters = append(counters, g.w.CounterTrack(parents[r.IntN(len(parents))], perfetto.CounterSpec{
			Name: g.pick("bytes", "occupancy", "bytes"), Key: g.pick("", "a", "b"), Rank: int32(r.IntN(3)),
			Unit: perfetto.Unit(r.IntN(4)), UnitName: g.pick("", "%"),
		}))
	}

	// Rounds of slices, each in its own window of time and flushed after
	// it; the windows touch.
	const window = 400
	rounds := 1 + r.IntN(3)
	var byRound [][]*item
	for k := range rounds {
		lo, hi := base+int64(k)*window, base+int64(k+1)*window
		var round []*item
		for _, tr := range sliceTracks {
			if r.IntN(4) == 0 {
				continue // an empty track
			}
			var out []*item
			g.forest(tr, lo+r.Int64N(3), hi, 0, &out)
			for range r.IntN(4) {
				// Not at hi: a later round's slice starting there would
				// have to enclose it, which a flush forbids. Two at one
				// time stack, one inside the other, in both readers.
				ts := lo + r.Int64N(hi-lo)
				it := &item{track: tr, instant: true, s: g.slice(ts, 0, 0)}
				out = append(out, it)
				g.items = append(g.items, it)
			}
			r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
			round = append(round, out...)
		}
		for _, tr := range streamTracks {
			var out []*item
			g.forest(tr, lo, hi, 0, &out)
			for _, it := range out {
				it.begin = true
			}
			round = append(round, out...)
		}
		byRound = append(byRound, round)
	}
	// After the last flush, a wrapper around everything on a track, which
	// starts before all of it (a producer's span logged after the runs it
	// wrapped), with an identical inner wrapper told apart by Depth.
	var wrappers []*item
	if len(sliceTracks) > 0 && base > 50 && r.IntN(3) == 0 {
		tr := sliceTracks[r.IntN(len(sliceTracks))]
		ts, end := base-1-r.Int64N(50), base+int64(rounds)*window+r.Int64N(3)
		outer := g.slice(ts, end-ts, 0)
		inner := g.slice(ts, end-ts, 1)
		wrappers = []*item{{track: tr, s: inner}, {track: tr, s: outer}}
		g.items = append(g.items, wrappers...)
	}
	g.flows()

	var errs []error
	for _, round := range byRound {
		g.emit(round)
		g.counters(counters, base, base+int64(rounds)*window)
		errs = append(errs, g.w.Flush())
	}
	g.emit(wrappers)
	return errors.Join(append(errs, g.w.Close())...)
}

// forest appends a random well-nested forest of slices within [lo, hi] on
// tr: siblings often touch, children often start or end exactly with their
// parent or fill it exactly (an identical interval, nested by Depth), and
// some slices last zero.
func (g *gen) forest(tr perfetto.Track, lo, hi int64, depth int32, out *[]*item) {
	r := g.r
	t := lo
	for i := 0; t <= hi && i < 4; i++ {
		start := t + r.Int64N(3) // often 0: siblings touch
		if start > hi || depth == 0 && start == hi {
			break // no top-level slice at hi, where the next round may start
		}
		end := start + r.Int64N(hi-start+1)
		switch r.IntN(6) {
		case 0:
			end = hi // ends with its parent
		case 1:
			if depth > 0 && t == lo {
				start, end = lo, hi // fills its parent exactly
			}
		}
		it := &item{track: tr, s: g.slice(start, end-start, depth)}
		*out = append(*out, it)
		g.items = append(g.items, it)
		if depth < 5 && r.IntN(3) != 0 {
			g.forest(tr, start, end, depth+1, out)
		}
		t = end
		if end == start {
			t++ // a zero-length sibling after it would be ambiguous
		}
	}
}

func (g *gen) slice(ts, dur int64, depth int32) perfetto.Slice {
	g.seq++
	s := perfetto.Slice{Name: fmt.Sprintf("%s.%d", g.pick("chip.run", "bind", "orch"), g.seq%7), TS: ts, Dur: dur, Depth: depth}
	if g.r.IntN(3) == 0 {
		s.Category = g.pick("host", "device", "host,device")
	}
	for range g.r.IntN(4) {
		s.Args = append(s.Args, g.arg(2))
	}
	return s
}

// arg is a random argument of any type, nested up to depth levels.
func (g *gen) arg(depth int) perfetto.Arg {
	r := g.r
	name := g.pick("inv", "hid", "bound_ns", "placement", "rate")
	kinds := 5
	if depth > 0 {
		kinds = 7
	}
	switch r.IntN(kinds) {
	case 0:
		return perfetto.Int(name, r.Int64()-math.MaxInt64/2)
	case 1:
		return perfetto.Uint(name, r.Uint64())
	case 2:
		return perfetto.Bool(name, r.IntN(2) == 0)
	case 3:
		return perfetto.Float(name, r.NormFloat64()*1e6)
	case 4:
		if r.IntN(8) == 0 {
			return perfetto.String(name, strings.Repeat("x", 300)) // not interned
		}
		return perfetto.String(name, g.pick("aligned", "contained", "9f3c", ""))
	case 5:
		var kids []perfetto.Arg
		for range 1 + r.IntN(3) {
			kids = append(kids, g.arg(depth-1))
		}
		return perfetto.Dict(name, kids...)
	default:
		var kids []perfetto.Arg
		for range 1 + r.IntN(3) {
			kids = append(kids, g.arg(depth-1))
		}
		return perfetto.Array(name, kids...)
	}
}

// flows links a few slices and instants by flows that run forward in time:
// started, maybe stepped, then terminated.
func (g *gen) flows() {
	r := g.r
	if len(g.items) < 2 {
		return
	}
	for f := range r.IntN(4) {
		id := perfetto.FlowID(r.Uint64() | 1)
		if f == 0 {
			id = perfetto.FlowIDOf("100/run 7/slot 0")
		}
		n := 2 + r.IntN(3)
		var chain []*item
		seen := map[int64]bool{}
		for range 4 * n {
			it := g.items[r.IntN(len(g.items))]
			if !seen[it.s.TS] {
				seen[it.s.TS] = true
				chain = append(chain, it)
			}
			if len(chain) == n {
				break
			}
		}
		if len(chain) < 2 {
			continue
		}
		slices.SortFunc(chain, func(a, b *item) int { return cmp.Compare(a.s.TS, b.s.TS) })
		for _, it := range chain[:len(chain)-1] {
			it.s.Flows = append(it.s.Flows, id)
		}
		last := chain[len(chain)-1]
		last.s.EndFlows = append(last.s.EndFlows, id)
	}
}

// emit gives a round's items to the writer: Begin/End pairs in the order
// forest made them (each slice before its children), ended by depth;
// complete slices and instants as they come.
func (g *gen) emit(items []*item) {
	var open []*item
	closeTo := func(depth int32) {
		for len(open) > 0 && open[len(open)-1].s.Depth >= depth {
			e := open[len(open)-1]
			g.w.End(e.track, e.s.TS+e.s.Dur)
			open = open[:len(open)-1]
		}
	}
	for _, it := range items {
		switch {
		case it.begin:
			if len(open) > 0 && open[0].track != it.track {
				closeTo(0)
			}
			closeTo(it.s.Depth)
			g.w.Begin(it.track, it.s)
			open = append(open, it)
		case it.instant:
			g.w.Instant(it.track, perfetto.Instant{Name: it.s.Name, Category: it.s.Category, TS: it.s.TS, Args: it.s.Args, Flows: it.s.Flows, EndFlows: it.s.EndFlows})
		default:
			g.w.Slice(it.track, it.s)
		}
	}
	closeTo(0)
}

// counters writes a few values on each counter track, integers and
// doubles, at times in any order, some equal.
func (g *gen) counters(tracks []perfetto.Track, lo, hi int64) {
	r := g.r
	for _, c := range tracks {
		for range r.IntN(5) {
			ts := lo + r.Int64N(hi-lo+1)
			if r.IntN(2) == 0 {
				g.w.Counter(c, ts, r.Int64N(1<<40)-1<<39)
			} else {
				g.w.CounterFloat(c, ts, r.NormFloat64()*100)
			}
		}
	}
}

func (g *gen) pick(s ...string) string { return s[g.r.IntN(len(s))] }

func (g *gen) labels() []string {
	if g.r.IntN(2) == 0 {
		return nil
	}
	return []string{g.pick("dev 0", "dev 1")}
}
