package phasetrace

import (
	"github.com/phasetrace/phasetrace/internal/firstpass"
	"github.com/phasetrace/phasetrace/perfetto"
	"github.com/phasetrace/phasetrace/strace"
)

// wallClocks decides the wall-clock anchors the trace holds as REALTIME
// snapshots (writeWalls writes them). The
// anchors that agree form the trace's wall clock: the largest set whose
// offsets (wall − mono) lie within wallTolerance of one of theirs (agreeing;
// of sets as large, the one whose centre comes first by pid, then log
// order). An anchor outside it, one before 1970 (wall_ns < 0) and one of a
// remote machine drawn at its own times are set aside and counted, and a
// process that wrote more than one anchor is noted (the runtime writes one
// per process).
func (cv *sliceDrawer) wallClocks(procs []*firstpass.ProcInfo) {
	type anchor struct {
		p   *firstpass.ProcInfo
		j   int
		off int64
	}
	var as []anchor
	for _, p := range procs {
		// An anchor written again (a log given twice) is the same anchor.
		seen := make(map[strace.WallAnchor]bool, len(p.Wall))
		var distinct []int
		for j, w := range p.Wall {
			if seen[w] {
				cv.acct.notDrawn(ReasonRepeatedWall, cv.acct.pos(p.WallAt[j]), "pid "+itoa(int64(p.Pid)), 1)
				continue
			}
			seen[w] = true
			distinct = append(distinct, j)
		}
		if len(distinct) > 1 {
			cv.acct.note("wall", "%s", SeveralWallAnchors(p.Pid, len(distinct), cv.acct.fileLine(cv.acct.pos(p.WallAt[distinct[0]])), cv.acct.fileLine(cv.acct.pos(p.WallAt[distinct[1]]))))
		}
		for _, j := range distinct {
			switch {
			case p.Side == firstpass.MeasureSide:
				// The measure run is moved onto the base run's time.
				cv.acct.superseded(ReasonCompareWallSuperseded, 1)
			case cv.remote.WallSuperseded(p.Pid):
				// Its wall clock agrees with this host's only to NTP grade.
				cv.acct.superseded(ReasonRemoteWallSuperseded, 1)
			case cv.remote.WallOffAxis(p.Pid):
				cv.acct.notDrawn(ReasonWallOffAxis, cv.acct.pos(p.WallAt[j]), "pid "+itoa(int64(p.Pid)), 1)
			case p.Wall[j].WallNS < 0:
				cv.acct.notDrawn(ReasonWallBefore1970, cv.acct.pos(p.WallAt[j]), "pid "+itoa(int64(p.Pid))+": wall_ns="+itoa(p.Wall[j].WallNS), 1)
			default:
				as = append(as, anchor{p, j, firstpass.WallOffset(&p.Wall[j])})
			}
		}
	}
	offs := make([]int64, len(as))
	for i, a := range as {
		offs[i] = a.off
	}
	if r := firstpass.Agreeing(offs, firstpass.WallTolerance); r >= 0 {
		ref := as[r]
		for _, a := range as {
			if d, ok := firstpass.WallAgrees(a.off, ref.off); !ok {
				cv.acct.notDrawn(ReasonWallDisagrees, cv.acct.pos(a.p.WallAt[a.j]),
					"pid "+itoa(int64(a.p.Pid))+": wall − mono differs by "+itoa(d)+" ns from the anchor of pid "+itoa(int64(ref.p.Pid))+" at "+cv.acct.fileLine(cv.acct.pos(ref.p.WallAt[ref.j])), 1)
				continue
			}
			wa := &a.p.Wall[a.j]
			cv.walls = append(cv.walls, [2]int64{wa.MonoNS, wa.WallNS})
			cv.acct.sum.WallAnchors++
		}
	}
	cv.acct.sum.WallTime = cv.acct.sum.WallAnchors > 0
}

// writeWalls writes the trace's wall-clock snapshots (wallClocks) to w.
func (cv *sliceDrawer) writeWalls(w *perfetto.Writer) {
	for _, wc := range cv.walls {
		w.WallClock(wc[0], wc[1])
	}
}
