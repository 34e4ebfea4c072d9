package compareplan

import "github.com/phasetrace/phasetrace/internal/repeats"

// Repeats is repeats.Repeats within each side of a comparison, the first
// baseLogs of the logs named names base's: a capture of the measure side
// that repeats one of base's is the other run, not a repeat. With
// baseLogs 0 (no comparison) it is repeats.Repeats over every log.
func Repeats(names []string, caps [][]repeats.Capture, baseLogs int) [][]repeats.Repeat {
	if baseLogs == 0 {
		return repeats.Repeats(names, caps)
	}
	nb := baseLogs
	b, m := repeats.Repeats(names[:nb], caps[:nb]), repeats.Repeats(names[nb:], caps[nb:])
	if b == nil && m == nil {
		return nil
	}
	out := make([][]repeats.Repeat, len(caps))
	copy(out, b)
	if m != nil {
		copy(out[nb:], m)
	}
	return out
}

// NearRepeats is repeats.NearRepeats within each side of a comparison of
// logs logs, the first baseLogs base's; with baseLogs 0, over every log.
func NearRepeats(names []string, all []repeats.Sketched, logs, baseLogs int) [][]repeats.NearRepeat {
	nb := baseLogs
	if nb == 0 {
		return repeats.NearRepeats(names, all, logs)
	}
	var b, m []repeats.Sketched
	for _, s := range all {
		if s.Log < nb {
			b = append(b, s)
		} else {
			m = append(m, s)
		}
	}
	nb1, nm := repeats.NearRepeats(names, b, logs), repeats.NearRepeats(names, m, logs)
	switch {
	case nb1 == nil:
		return nm
	case nm == nil:
		return nb1
	}
	for i := nb; i < logs; i++ {
		nb1[i] = nm[i]
	}
	return nb1
}
