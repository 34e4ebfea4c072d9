package phasetrace

import (
	"cmp"
	"errors"
	"maps"
	"math/bits"
	"slices"
	"strconv"
	"strings"

	"github.com/phasetrace/phasetrace/internal/counters"
	"github.com/phasetrace/phasetrace/internal/firstpass"
	"github.com/phasetrace/phasetrace/internal/held"
	"github.com/phasetrace/phasetrace/internal/tracks"
	"github.com/phasetrace/phasetrace/internal/truncation"
	"github.com/phasetrace/phasetrace/perfetto"
	"github.com/phasetrace/phasetrace/reduce"
	"github.com/phasetrace/phasetrace/reduce/analysis"
	"github.com/phasetrace/phasetrace/strace"
)

// effectiveName names the derived orch ∪ sched slice like the phases it
// is derived from (its label: effective). Its category (device,derived),
// its track ("effective (derived)") and its derived_from argument keep it
// from being taken for a phase the device stamped.
const effectiveName = strace.SpanDeviceWall + ".effective"

// deviceDrawer places each run's device phases on the host timeline and
// draws them on their device tracks, with their bounds, through the
// slice drawer; it keeps each device clock domain's summary.
type deviceDrawer struct {
	*sliceDrawer
	placement           []reduce.PlacerOption
	placer, containOnly *reduce.Placer
	counters            *counters.Set
	links               *runLinks // the run's key and arrow, shared with the run drawer
	freq                map[reduce.Domain]reduce.Hz
	devices             map[reduce.Domain]*DeviceSummary
	// anchorAt is where each anchor added to the placer is, by domain in
	// the order added (0 for a calibration sample's); asideSeen how many
	// anchors the placer had set aside at the last run; conflicts the
	// runs whose evidence conflicted, by domain and kind.
	anchorAt  map[reduce.Domain][]held.Pos
	asideSeen int
	conflicts map[conflictKey]*PlacementConflict
	// Reused for each run: its device spans, their lanes and its
	// placement.
	devSpans []reduce.DeviceSpan
	lanes    []string
	placed   reduce.Placement
	// bound is the widest bound_ns of the last run's device slices drawn
	// (valid when some was drawn with one), for the steps table.
	bound analysis.NullInt
}

func (dv *deviceDrawer) buildPlacer(scan *firstpass.ScanResult, cal []firstpass.LoadedCalibration) {
	dv.placer = reduce.NewPlacer(dv.placement...)
	dv.containOnly = reduce.NewPlacer(dv.placement...)
	dv.freq = map[reduce.Domain]reduce.Hz{}
	dv.devices = map[reduce.Domain]*DeviceSummary{}
	dv.anchorAt = map[reduce.Domain][]held.Pos{}
	for _, d := range sortedDomains(scan.Anchors) {
		unconfirmed := dv.unconfirmedJoins(scan, d)
		at := scan.AnchorAt[d]
		for i, a := range scan.Anchors[d] {
			if !unconfirmed[i] && dv.addAnchor(a) && i < len(at) {
				dv.anchorAt[d] = append(dv.anchorAt[d], dv.acct.pos(at[i]))
			}
		}
	}
	for _, ci := range cal {
		if ci.Summary < 0 { // given to a Survey: accounted for here
			dv.acct.sum.Artifacts = append(dv.acct.sum.Artifacts, ArtifactSummary{Name: "calibration of pid " + itoa(int64(ci.Pid)) + " dev " + itoa(ci.Dev), Kind: "calibration", Items: int64(len(ci.Cal.Samples))})
			ci.Summary = len(dv.acct.sum.Artifacts) - 1
		}
		as := &dv.acct.sum.Artifacts[ci.Summary]
		d, err := reduce.DomainOf(ci.Pid, ci.Dev)
		if err != nil {
			as.Note = err.Error()
			continue
		}
		anchors, skipped, err := reduce.CalibrationAnchors(ci.Cal, dv.freq[d])
		as.Skipped += int64(skipped)
		if err != nil {
			as.Note = err.Error()
			continue
		}
		for _, a := range anchors {
			if err := dv.placer.AddAnchor(d, a); err != nil {
				as.Skipped++
				dv.acct.note("anchor", "calibration sample of %v at host %d ns not used: %v", d, a.HostNs, err)
				continue
			}
			dv.freq[d] = a.DevFreq
			dv.deviceSummary(d).Anchors++
		}
	}
}

// unconfirmedJoins returns the anchors of domain d, by index, that were
// read joined to the next record on their line and whose dev_freq the
// domain's whole (unjoined) anchors contradict, and counts each as not
// drawn. The runtime writes a record whole, so a joined anchor is complete;
// its dev_freq, the value a cut would shorten, is checked all the same: a
// shortened value reads smaller than the device's frequency. A joined
// anchor of a domain without a whole anchor to check it against is used,
// and noted.
func (dv *deviceDrawer) unconfirmedJoins(scan *firstpass.ScanResult, d reduce.Domain) map[int]bool {
	joined := scan.Joined[d]
	if len(joined) == 0 {
		return nil
	}
	anchors := scan.Anchors[d]
	isJoined := make(map[int]bool, len(joined))
	for _, j := range joined {
		isJoined[j.I] = true
	}
	whole := map[uint64]bool{}
	for i, a := range anchors {
		if !isJoined[i] {
			whole[a.DevFreq] = true
		}
	}
	if len(whole) == 0 {
		dv.acct.note("anchor", "the %d clock anchors of %v were all read joined to the next record on their line (%s first): their dev_freq has no other anchor to be confirmed by",
			len(joined), d, dv.acct.fileLine(dv.acct.pos(joined[0].Pos)))
		return nil
	}
	var out map[int]bool
	for _, j := range joined {
		if f := anchors[j.I].DevFreq; !whole[f] {
			if out == nil {
				out = map[int]bool{}
			}
			out[j.I] = true
			dv.acct.notDrawn(ReasonDeviceAnchorJoined,
				dv.acct.pos(j.Pos), d.String()+": dev_freq="+strconv.FormatUint(f, 10), 1)
		}
	}
	return out
}

// addAnchor adds a device clock anchor to the placer and reports whether
// it took it.
func (dv *deviceDrawer) addAnchor(a strace.DeviceAnchor) bool {
	d := reduce.Domain{Pid: a.Pid, Dev: a.Dev}
	err := dv.placer.AddAnchor(d, reduce.Anchor{
		HostNs: reduce.HostNanos(a.HostNS), WindowNs: reduce.HostNanos(a.WindowNS),
		DevCyc: reduce.Cycles(a.DevCyc), DevFreq: reduce.Hz(a.DevFreq),
	})
	if err != nil {
		dv.acct.note("anchor", "clock anchor of %v at host %d ns not used: %v", d, a.HostNS, err)
		return false
	}
	dv.freq[d] = reduce.Hz(a.DevFreq)
	dv.deviceSummary(d).Anchors++
	return true
}

func sortedDomains[V any](m map[reduce.Domain]V) []reduce.Domain {
	ds := make([]reduce.Domain, 0, len(m))
	for d := range m {
		ds = append(ds, d)
	}
	slices.SortFunc(ds, func(a, b reduce.Domain) int {
		return cmp.Or(cmp.Compare(a.Pid, b.Pid), cmp.Compare(a.Dev, b.Dev))
	})
	return ds
}

func (dv *deviceDrawer) deviceSummary(d reduce.Domain) *DeviceSummary {
	ds := dv.devices[d]
	if ds == nil {
		ds = &DeviceSummary{Pid: d.Pid, Dev: d.Dev}
		dv.devices[d] = ds
	}
	return ds
}

// device places one run's device spans on the host timeline and draws them
// on the device's tracks under the run's process.
func (dv *deviceDrawer) run(out sink, k firstpass.InvKey, root, runner *held.Span, spans []held.Span, wall *reduce.DeviceWindow) {
	dv.bound = analysis.NullInt{}
	if len(spans) == 0 {
		return
	}
	lanes := dv.deviceLanes(spans)
	fixes := truncation.Repair(spans, lanes)
	dev, hasDev := int64(tracks.NoDevice), false
	dv.devSpans = slices.Grow(dv.devSpans[:0], len(spans))[:len(spans)]
	run := reduce.Run{Spans: dv.devSpans}
	for i := range spans {
		s := &spans[i]
		run.Spans[i] = reduce.DeviceSpan{Name: s.Name, Depth: int(s.Depth), TS: reduce.DeviceNanos(s.TS), Dur: reduce.DeviceNanos(s.Dur)}
		if s.Name != strace.SpanDeviceWall {
			continue
		}
		if a, ok := s.Attr("dev"); ok && a.Type == strace.TypeInt {
			dev, hasDev = a.Int, true
		}
		if a, ok := s.Attr("origin_cyc"); ok {
			switch a.Type {
			case strace.TypeInt:
				run.Origin, run.HasOrigin = reduce.Cycles(a.Int), a.Int >= 0
			case strace.TypeUint:
				run.Origin, run.HasOrigin = reduce.Cycles(a.Uint), true
			}
		}
	}
	var wallWhy Reason // what is wrong with device_wall's dev=
	d, err := reduce.DomainOf(k.Pid, dev)
	switch {
	case err != nil:
		d, wallWhy = reduce.Domain{Pid: k.Pid, Dev: tracks.NoDevice}, ReasonDeviceWallDevRange
	case !hasDev:
		wallWhy = ReasonDeviceWallNoDev
	}
	run.Domain = d
	run.Wall = wall
	ds := dv.deviceSummary(run.Domain)
	ds.Runs++
	if runner != nil {
		run.RunnerRun = &reduce.HostWindow{Start: reduce.HostNanos(runner.TS), End: reduce.HostNanos(runner.End())}
	}
	if root != nil && root.Name == strace.SpanRun {
		run.Enclosing = []reduce.HostWindow{{Start: reduce.HostNanos(root.TS), End: reduce.HostNanos(root.End())}}
	}
	remote := dv.remote.Placed(k.Pid)
	if remote != nil {
		// A causally placed machine's device runs are placed on its own
		// clock, through its own anchors, then carried across.
		run = remote.NativeRun(run)
	}
	pl := &dv.placed // reused run to run: drawDevice keeps nothing of it
	err = dv.placer.PlaceInto(pl, run)
	if err != nil { // rare: an impossible span costs only itself
		var dropped bool
		if spans, lanes, fixes, dropped = dv.dropMisfits(k, ds, &run, spans, lanes, fixes); dropped {
			err = dv.placer.PlaceInto(pl, run)
		}
	}
	dv.noteSetAside()
	var generic Reason // the summary's reason for reduce's causes, when the slices carry a detailed one
	if errors.Is(err, reduce.ErrInconsistent) {
		ds.Inconsists++
		generic = ReasonAnchorsDisagree
		dv.conflict(run.Domain, k, err, "placed by containment alone")
		why := "clock anchors disagree with containment: " + strings.TrimPrefix(err.Error(), "reduce: ")
		err = dv.containOnly.PlaceInto(pl, run)
		pl.Reason = why
	}
	composed := true
	if err == nil && remote != nil {
		if err = remote.Compose(pl); err != nil {
			composed = false
		}
	}
	if err != nil {
		var ie *reduce.InconsistencyError
		reason := ReasonNoConsistentPlacement
		switch {
		case errors.As(err, &ie):
			dv.conflict(run.Domain, k, err, "its device spans not drawn")
		case !composed:
			reason = ReasonNotCarried
			dv.acct.note("range", "run pid=%d inv=%d: %v; its device spans are not drawn", k.Pid, k.Inv, err)
		default:
			reason = ReasonDeviceOffsetsRange
			dv.acct.note("range", "run pid=%d inv=%d: %v; its device spans are not drawn", k.Pid, k.Inv, err)
		}
		ds.Unaligned += int64(len(spans))
		bump(&ds.Reasons, reason, int64(len(spans)))
		dv.acct.dropSpan(ReasonDeviceUnplaced, spans[0].At, "pid="+itoa(int64(k.Pid))+" inv="+strconv.FormatUint(k.Inv, 10), int64(len(spans)))
		return
	}
	dv.drawDevice(out, k, ds, run, spans, lanes, fixes, pl, wallWhy, generic)
}

// dropMisfits leaves out the spans of a run that could not be placed
// whose offsets its host windows cannot hold on their own
// (reduce.Placer.Misfits), each counted with its position, and returns
// the others (with their lanes, their repairs and run's spans), and
// whether it left any out.
func (dv *deviceDrawer) dropMisfits(k firstpass.InvKey, ds *DeviceSummary, run *reduce.Run, spans []held.Span, lanes []string, fixes map[int]truncation.Fix) ([]held.Span, []string, map[int]truncation.Fix, bool) {
	bad := dv.containOnly.Misfits(*run)
	if len(bad) == 0 {
		return spans, lanes, fixes, false
	}
	var kept map[int]truncation.Fix
	n := 0
	for i := range spans {
		if len(bad) > 0 && bad[0] == i {
			bad = bad[1:]
			s := &spans[i]
			dv.acct.dropSpan(ReasonDeviceMisfit, s.At, "pid="+itoa(int64(k.Pid))+" inv="+strconv.FormatUint(k.Inv, 10)+": "+s.Name+" ts="+itoa(s.TS)+" dur="+itoa(s.Dur), 1)
			ds.Unaligned++
			bump(&ds.Reasons, ReasonDeviceMisfit, 1)
			continue
		}
		if f, ok := fixes[i]; ok {
			if kept == nil {
				kept = map[int]truncation.Fix{}
			}
			kept[n] = f
		}
		spans[n], lanes[n], run.Spans[n] = spans[i], lanes[i], run.Spans[i]
		n++
	}
	run.Spans = run.Spans[:n]
	return spans[:n], lanes[:n], kept, true
}

// deviceLanes returns the device lane of each span (deviceLane), valid
// until the next call.
func (dv *deviceDrawer) deviceLanes(spans []held.Span) []string {
	dv.lanes = slices.Grow(dv.lanes[:0], len(spans))[:len(spans)]
	for i := range spans {
		dv.lanes[i] = tracks.DeviceLane(spans[i].Name)
	}
	return dv.lanes
}

// drawDevice draws placed device spans as reduce placed them: each at
// HostStart..HostEnd through the run's one map, with its Bound (plus the
// shift of a truncation repair).
func (dv *deviceDrawer) drawDevice(out sink, k firstpass.InvKey, ds *DeviceSummary, run reduce.Run, spans []held.Span, lanes []string, fixes map[int]truncation.Fix, pl *reduce.Placement, wallWhy, generic Reason) {
	extraReason := ""
	if wallWhy != "" {
		extraReason = wallWhy.Text()
	}
	if pl.Method == reduce.Unaligned {
		bumpPlacement(&ds.Reasons, pl.Causes, generic, wallWhy, int64(len(spans)))
		ds.Unaligned += int64(len(spans))
		dv.acct.dropSpan(ReasonDeviceNoEvidence, spans[0].At, "pid="+itoa(int64(k.Pid))+" inv="+strconv.FormatUint(k.Inv, 10)+": "+joinReason(pl.Reason, extraReason), int64(len(spans)))
		return
	}
	var group perfetto.Track // created for the first slice drawn (not one outside the window)
	groupAsked := false
	laneTrack := func(lane string) perfetto.Track {
		if !groupAsked {
			group, groupAsked = out.tracks.DeviceGroup(k.Pid, run.Domain.Dev), true
		}
		return out.tracks.Device(k.Pid, run.Domain.Dev, group, lane)
	}
	method := pl.Method.String()
	reason := joinReason(pl.Reason, extraReason)
	freq := dv.freq[run.Domain]
	var orch, sched = -1, -1
	var t perfetto.Track // the track of lastLane
	// A machine that its tasks did not place (moved by its wall clock, or
	// at its own times) is on the trace's axis only as well as its wall
	// clock agrees: a bound against its own clock would not hold there.
	onAxis := dv.remote.OnAxis(k.Pid)
	lastLane := ""
	var widest, wallAt int64 = 0, -1 // the widest bound drawn, and where device_wall is
	for i := range spans {
		s := &spans[i]
		d := pl.Spans[i]
		var fix truncation.Fix
		fixed := false
		if fixes != nil { // nearly every run has none
			fix, fixed = fixes[i]
		}
		bound := int64(d.Bound) + fix.Shift
		lane := lanes[i]
		switch lane {
		case strace.PhaseOrch:
			orch = i
		case strace.PhaseSched:
			sched = i
		}
		ts, dur := int64(d.HostStart), int64(d.HostEnd-d.HostStart)
		if dv.outside(ts, dur) { // counted as hand counts it, its arguments not made
			dv.hand(out, perfetto.Track{}, &perfetto.Slice{TS: ts, Dur: dur}, s.At)
			continue
		}
		args := append(dv.args[:0],
			perfetto.Uint("inv", s.Inv), perfetto.String("hid", dv.hidString(s.Hid)), perfetto.Int("depth", int64(s.Depth)),
		)
		args = appendAttrs(args, s.Attrs)
		args = append(args, perfetto.Int("device_ts", s.TS), perfetto.Int("device_dur", s.Dur), dv.links.key)
		if run.HasOrigin && freq != 0 && s.Name != strace.SpanDeviceWall && s.TS >= 0 {
			if cyc, err := freq.Cycles(reduce.DeviceNanos(s.TS)); err == nil {
				if sum, carry := bits.Add64(uint64(run.Origin), uint64(cyc), 0); carry == 0 {
					args = append(args, perfetto.Uint("start_cyc", sum))
				}
			}
		}
		args = append(args, perfetto.String("placement", method))
		if onAxis {
			args = append(args, perfetto.Int("bound_ns", bound))
		}
		args = dv.remoteArgs(args, k.Pid, 0, 0, false)
		if reason != "" {
			args = append(args, perfetto.String("placement_reason", reason))
		}
		if fixed {
			args = append(args, perfetto.Int("logged_device_ts", fix.TS), perfetto.Int("logged_device_dur", fix.Dur), perfetto.String("repair", fix.What))
		}
		if lane != lastLane || t.IsZero() { // a run's spans come lane by lane
			t, lastLane = laneTrack(lane), lane
		}
		var ends []perfetto.FlowID
		if s.Name == strace.SpanDeviceWall {
			ends = dv.endRunArrow(out, ts)
		}
		if !dv.hand(out, t, &perfetto.Slice{Name: s.Name, Category: categoryDevice, TS: ts, Dur: dur, Depth: s.Depth, Args: args, EndFlows: ends, Ref: uint64(s.At)}, s.At) {
			dv.leaveOut(out, ends, ReasonRunToDeviceUnended)
			continue
		}
		dv.arrows.handed(ends)
		dv.acct.drawn()
		dv.drawnOn(k.Pid)
		if s.Name == strace.SpanDeviceWall {
			dv.counters.DeviceWall(k.Pid, run.Domain.Dev, s.At, ts, dur)
			wallAt = ts
		}
		if onAxis {
			widest = max(widest, bound)
			dv.bound = analysis.Int(widest)
		}
		c := deviceCount{ds: ds, at: s.At, ts: ts, dur: dur, bound: bound, method: pl.Method, onAxis: onAxis,
			wallBound: s.Name == strace.SpanDeviceWall && run.Wall == nil, causes: pl.Causes, generic: generic, wallWhy: wallWhy}
		if fixed {
			c.repair = s.Name + ": " + fix.What
		}
		dv.pendingDevice.add(c)
	}
	if widest > WideBound && wallAt >= 0 {
		dv.deviceAnomaly(out, k, spans[0].Hid, wallAt, widest, method)
	}
	if orch >= 0 && sched >= 0 {
		o, s := run.Spans[orch], run.Spans[sched]
		eff := reduce.Effective(reduce.DeviceWindow{Start: o.TS, End: o.TS + o.Dur}, reduce.DeviceWindow{Start: s.TS, End: s.TS + s.Dur})
		d, err := pl.Place(eff)
		if h := dv.remote.Placed(k.Pid); h != nil && err == nil {
			d, err = h.Fit.Compose(d)
		}
		if err != nil {
			return
		}
		args := append(dv.args[:0],
			perfetto.Uint("inv", spans[orch].Inv), perfetto.String("hid", dv.hidString(spans[orch].Hid)),
			perfetto.Bool("derived", true), perfetto.String("derived_from", "orch ∪ sched"),
			perfetto.Int("device_ts", int64(eff.Start)), perfetto.Int("device_dur", int64(eff.Len())), dv.links.key,
			perfetto.String("placement", method),
		)
		if onAxis {
			args = append(args, perfetto.Int("bound_ns", int64(d.Bound)+max(fixes[orch].Shift, fixes[sched].Shift)))
		}
		args = dv.remoteArgs(args, k.Pid, 0, 0, false)
		ts, dur := int64(d.HostStart), int64(d.HostEnd-d.HostStart)
		var t perfetto.Track
		if !dv.outside(ts, dur) {
			t = laneTrack("effective")
		}
		dv.drawDerived(out, t, perfetto.Slice{Name: effectiveName, Category: categoryDeviceDerived, TS: ts, Dur: dur, Args: args}, spans[orch].At, otherEffective)
	}
}

// bumpPlacement counts n spans of a run under each reason it is not
// aligned: reduce's causes (generic instead, when set) and wallWhy, what
// is wrong with its device_wall's dev= (when set).
func bumpPlacement(m *ReasonCounts, causes reduce.Cause, generic, wallWhy Reason, n int64) {
	if generic != "" {
		bump(m, generic, n)
	} else {
		bumpCauses(m, causes, n)
	}
	if wallWhy != "" {
		bump(m, wallWhy, n)
	}
}

// noteSetAside counts the anchors the placer set aside since the last
// run, each with its position.
func (dv *deviceDrawer) noteSetAside() {
	if dv.placer.SetAsideCount() == dv.asideSeen {
		return
	}
	all := dv.placer.SetAside()
	for _, a := range all[dv.asideSeen:] {
		dv.acct.notDrawn(ReasonDeviceAnchorSetAside, dv.anchorPos(a), a.Domain.String()+" dev_cyc="+strconv.FormatUint(uint64(a.DevCyc), 10)+": conflicts with "+a.Conflict.String(), 1)
	}
	dv.asideSeen = len(all)
}

// anchorPos is where an anchor set aside is (0 for a calibration sample).
func (dv *deviceDrawer) anchorPos(a reduce.SetAside) held.Pos {
	if at := dv.anchorAt[a.Domain]; a.Index < len(at) {
		return at[a.Index]
	}
	return 0
}

// conflictKey groups the runs of a domain whose evidence conflicted.
type conflictKey struct {
	d                reduce.Domain
	between, outcome string
}

// conflict counts run k of domain d, whose evidence conflicted (err, an
// *reduce.InconsistencyError), with the others of its kind.
func (dv *deviceDrawer) conflict(d reduce.Domain, k firstpass.InvKey, err error, outcome string) {
	between := "the evidence"
	var ie *reduce.InconsistencyError
	if errors.As(err, &ie) {
		a, b := ie.Low.Kind.String(), ie.High.Kind.String()
		between = min(a, b) + " and " + max(a, b)
	}
	key := conflictKey{d, between, outcome}
	c := dv.conflicts[key]
	if c == nil {
		if dv.conflicts == nil {
			dv.conflicts = map[conflictKey]*PlacementConflict{}
		}
		c = &PlacementConflict{Between: between, Outcome: outcome,
			First: "run pid=" + itoa(int64(k.Pid)) + " inv=" + strconv.FormatUint(k.Inv, 10) + ": " + strings.TrimPrefix(err.Error(), "reduce: "+d.String()+": ")}
		dv.conflicts[key] = c
	}
	c.Runs++
}

// summaries returns the device clock domains' summaries, finished, by
// domain.
func (dv *deviceDrawer) summaries() []DeviceSummary {
	for _, ds := range dv.devices {
		ds.AnchorsSetAside, ds.Conflicts = nil, nil
	}
	for _, a := range dv.placer.SetAside() {
		ds := dv.deviceSummary(a.Domain)
		ds.AnchorsSetAside = append(ds.AnchorsSetAside, AnchorSetAside{At: dv.acct.fileLine(dv.anchorPos(a)), DevCyc: uint64(a.DevCyc), Conflict: a.Conflict.String(), Runs: a.Runs})
	}
	keys := slices.Collect(maps.Keys(dv.conflicts))
	slices.SortFunc(keys, func(a, b conflictKey) int {
		return cmp.Or(cmp.Compare(a.d.Pid, b.d.Pid), cmp.Compare(a.d.Dev, b.d.Dev), cmp.Compare(a.between, b.between), cmp.Compare(a.outcome, b.outcome))
	})
	for _, k := range keys {
		ds := dv.deviceSummary(k.d)
		ds.Conflicts = append(ds.Conflicts, *dv.conflicts[k])
	}
	var out []DeviceSummary
	for _, d := range sortedDomains(dv.devices) {
		ds := dv.devices[d]
		ds.Bound.finish()
		ds.WallBound.finish()
		out = append(out, *ds)
	}
	return out
}
