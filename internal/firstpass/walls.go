package firstpass

import (
	"cmp"
	"math"
	"slices"

	"github.com/phasetrace/phasetrace/strace"
)

// WallTolerance is how far apart two wall-clock anchors' offsets (wall −
// mono) may be and still describe one clock: NTP slews the wall clock by far
// less; a larger gap means a clock that was set, or a log from another boot.
const WallTolerance = HostGap

// Wall-clock anchors ([CLOCK_ANCHOR] v=1): which of them describe the
// trace's wall clock. Each says wall − mono for its process; on one host
// they agree to within clock slewing (wallTolerance). When they do not, no
// anchor is trusted for being first: the largest set that agrees wins, and
// the others are set aside.

// The wall-clock anchors set aside are counted under ReasonWallDisagrees,
// ReasonWallBefore1970 and ReasonWallOffAxis (reasons.go).

// WallOffset is an anchor's wall − mono, saturated at the int64 range.
func WallOffset(a *strace.WallAnchor) int64 { return SatSub(a.WallNS, a.MonoNS) }

// SatSub returns a − b, saturated at the int64 range, so that a difference
// the summary prints never wraps around.
func SatSub(a, b int64) int64 {
	d := a - b
	switch {
	case b > 0 && d > a:
		return math.MinInt64
	case b < 0 && d < a:
		return math.MaxInt64
	}
	return d
}

// SatAdd returns a + b, saturated at the int64 range.
func SatAdd(a, b int64) int64 {
	s := a + b
	switch {
	case b > 0 && s < a:
		return math.MaxInt64
	case b < 0 && s > a:
		return math.MinInt64
	}
	return s
}

// Agreeing returns the index into offs of the offset that the most others
// lie within tol of (itself included), the earliest of those that tie: the
// centre of the largest set of anchors that agree. It returns -1 for no
// offsets. Time O(n log n).
func Agreeing(offs []int64, tol int64) int {
	order := make([]int, len(offs))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Or(cmp.Compare(offs[a], offs[b]), cmp.Compare(a, b)) })
	best, most := -1, 0
	lo, hi := 0, 0
	for k, i := range order {
		o := offs[i]
		for offs[order[lo]] < SatSub(o, tol) {
			lo++
		}
		hi = max(hi, k)
		for hi+1 < len(order) && offs[order[hi+1]] <= SatAdd(o, tol) {
			hi++
		}
		if n := hi - lo + 1; n > most || n == most && i < best {
			best, most = i, n
		}
	}
	return best
}

// WallAgrees reports whether offset o agrees with the reference offset ref,
// and by how much it differs (saturated).
func WallAgrees(o, ref int64) (int64, bool) {
	d := SatSub(o, ref)
	return d, d >= -WallTolerance && d <= WallTolerance
}

// LogWalls sets each log's wall-clock anchor (firstWall), the one its
// clock is compared by, to the centre of the largest set of its anchors
// that agree (agreeing), the earliest in the log of sets as large: a
// log's first anchor is not trusted for being first.
func (s *ScanResult) LogWalls() {
	type anchor struct {
		line int64
		a    *strace.WallAnchor
	}
	logs := 0
	for _, w := range s.FirstWall {
		if w != nil {
			logs++
		}
	}
	if logs < 2 {
		return // no log's clock is compared with another's
	}
	per := make([][]anchor, len(s.FirstWall))
	for pid, p := range s.Procs {
		for j := range p.Wall {
			if in := s.WallInput[pid][j]; in < len(per) {
				per[in] = append(per[in], anchor{p.WallAt[j].Line, &p.Wall[j]})
			}
		}
	}
	for i, as := range per {
		if len(as) < 3 {
			continue // two disagree: the first stands
		}
		slices.SortFunc(as, func(a, b anchor) int { return cmp.Compare(a.line, b.line) })
		offs := make([]int64, len(as))
		for k, a := range as {
			offs[k] = WallOffset(a.a)
		}
		w := *as[Agreeing(offs, WallTolerance)].a
		s.FirstWall[i] = &w
	}
}
