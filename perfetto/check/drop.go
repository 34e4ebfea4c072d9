package check

// WithoutTrack returns tr without the top-level custom track named name
// and the slices and instants on it: the other slices keep their order,
// and their parents and the flows' ends are renumbered to match. A trace
// whose own track says what wrote it (phasetrace's "phasetrace" track)
// reads, without it, as the slices its inputs gave. The slices dropped are
// returned; tr is not changed.
func (tr *Trace) WithoutTrack(name string) (*Trace, []Slice) {
	var own uint64
	out := *tr
	out.Tracks = make([]Track, 0, len(tr.Tracks))
	for _, t := range tr.Tracks {
		if own == 0 && t.Kind == "track" && t.Parent == 0 && t.Name == name {
			own = t.UUID
			continue
		}
		out.Tracks = append(out.Tracks, t)
	}
	if own == 0 {
		out.Tracks = tr.Tracks
		return &out, nil
	}
	var dropped []Slice
	index := make([]int, len(tr.Slices))
	out.Slices = make([]Slice, 0, len(tr.Slices))
	for i, s := range tr.Slices {
		if s.Track == own {
			index[i] = -1
			dropped = append(dropped, s)
			continue
		}
		index[i] = len(out.Slices)
		out.Slices = append(out.Slices, s)
	}
	for i := range out.Slices {
		if p := out.Slices[i].Parent; p >= 0 {
			out.Slices[i].Parent = index[p]
		}
	}
	out.Flows = make([]Flow, 0, len(tr.Flows))
	for _, f := range tr.Flows {
		if f.From >= 0 {
			f.From = index[f.From]
		}
		if f.To >= 0 {
			f.To = index[f.To]
		}
		out.Flows = append(out.Flows, f)
	}
	return &out, dropped
}
