package phasetrace

import (
	"strconv"

	"github.com/phasetrace/phasetrace/internal/firstpass"
	"github.com/phasetrace/phasetrace/internal/held"
	"github.com/phasetrace/phasetrace/perfetto"
	"github.com/phasetrace/phasetrace/reduce/analysis"
)

// The anomalies track: one top-level track of instants, each where a run
// deserves a look and saying why (its "why" argument):
//
//   - "slow run", at a warm chip.run that took more than
//     analysis.SlowMADs median absolute deviations above its callable's
//     median in its process (the deviation taken as at least 2 % of the
//     median; among at least analysis.MinRuns runs): the median and the
//     deviation are the survey's, over every run of the callable
//     (analysis.Typical);
//   - "cold bind", at the chip.run.bind of a callable's cold run, the
//     first in its process, which builds what the later runs reuse;
//   - "wide bound", at a run's device_wall when a device slice of the
//     run was drawn with a bound over WideBound: where it is on the host
//     axis is known only that well.
const (
	anomaliesTrack = "anomalies"
	anomalySlowRun = "slow run"
	anomalyColdRun = "cold bind"
	anomalyBound   = "wide bound"
)

// WideBound is the device bound past which a run's device phases are
// marked on the anomalies track (10 µs).
const WideBound = 10_000

// anomaly draws an instant of kind name at ts on the anomalies track of
// out, with args, and counts it. One
// outside the window is not drawn.
func (cv *sliceDrawer) anomaly(out sink, name string, ts int64, args []perfetto.Arg) {
	defer func() { cv.anomalyArgs = args[:0] }() // the writer copied them
	if cv.outside(ts, 0) {
		return
	}
	t := out.w.Track(perfetto.Track{}, perfetto.TrackSpec{Name: anomaliesTrack})
	if t.IsZero() {
		return
	}
	args = append(args, perfetto.String("full_name", name)) // as every slice has
	out.w.Instant(t, perfetto.Instant{Name: name, Category: categoryAnomaly, TS: ts, Args: args})
	a := &cv.acct.sum.Anomalies
	switch name {
	case anomalySlowRun:
		a.SlowRuns++
	case anomalyColdRun:
		a.ColdBinds++
	case anomalyBound:
		a.WideBounds++
	}
}

// runAnomalies marks root, a run's chip.run drawn on a track, when it is
// slow for its callable, and bind when the run is cold.
func (d *runDrawer) runAnomalies(out sink, root, bind *held.Span, cold bool) {
	if cold {
		if bind != nil {
			d.anomaly(out, anomalyColdRun, bind.TS, d.runArgs(root, coldWhy,
				perfetto.Int("dur_ns", bind.Dur)))
		}
		return
	}
	ty, ok := d.scan.TypicalRuns[firstpass.CallableKey{Pid: root.Pid, Hid: root.Hid}]
	if !ok || !ty.Slow(root.Dur) {
		return
	}
	why := "took " + strconv.FormatInt(root.Dur, 10) + " ns, over " + strconv.FormatInt(ty.Threshold, 10) + " ns: its callable's median " +
		strconv.FormatInt(ty.Median, 10) + " ns + " + strconv.Itoa(analysis.SlowMADs) + " × MAD " + strconv.FormatInt(ty.MAD, 10) + " ns (at least 2 % of the median) over " +
		strconv.FormatInt(ty.Runs, 10) + " runs"
	d.anomaly(out, anomalySlowRun, root.TS, d.runArgs(root, why,
		perfetto.Int("dur_ns", root.Dur), perfetto.Int("median_ns", ty.Median), perfetto.Int("mad_ns", ty.MAD), perfetto.Int("threshold_ns", ty.Threshold), perfetto.Int("runs", ty.Runs)))
}

// deviceAnomaly marks a run whose device slices were drawn with a bound
// over WideBound, at its device_wall (ts).
func (dv *deviceDrawer) deviceAnomaly(out sink, k firstpass.InvKey, hid uint64, ts, bound int64, method string) {
	dv.anomaly(out, anomalyBound, ts, append(dv.anomalyArgs[:0], perfetto.String("why", wideBoundWhy), perfetto.Int("pid", int64(k.Pid)), perfetto.Uint("inv", k.Inv),
		perfetto.String("hid", dv.hidString(hid)), perfetto.Int("bound_ns", bound), perfetto.String("placement", method)))
}

// wideBoundWhy says why a run is marked "wide bound"; its bound_ns says
// how wide.
const wideBoundWhy = "a device slice of the run is placed with a bound over 10 µs: where it ran on the host axis is known only that well"

const coldWhy = "the first run of its callable in its process: its bind builds what later runs reuse"

// runArgs are an anomaly's arguments for a run: why, its pid, inv and hid,
// then more.
func (d *runDrawer) runArgs(root *held.Span, why string, more ...perfetto.Arg) []perfetto.Arg {
	return append(append(d.anomalyArgs[:0], perfetto.String("why", why), perfetto.Int("pid", int64(root.Pid)), perfetto.Uint("inv", root.Inv),
		perfetto.String("hid", d.hidString(root.Hid))), more...)
}
