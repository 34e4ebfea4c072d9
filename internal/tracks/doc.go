// Package tracks lays out a trace's tracks as the first pass planned them:
// a process track per pid, named as its users know it; a thread track per
// tid, or pipeline-slot lanes for a thread that drove several runs at once;
// and per device a group holding a lane per phase.
//
// A TrackSet belongs to one writer (the trace's, or one part's of a split
// trace). It creates a track the first time a slice is drawn on it, its
// process's first, and none past the writer's track limit: a zero Track
// then, which the drawing counts.
package tracks
