// Package passes reads a host_phase_records artifact at the passes each
// run needs, whatever order the artifact was written in.
//
// Convert reads an artifact twice. The first pass (the survey) reads it
// whole and notes where each pass is (Index.Add): its (pid, inv), its byte
// offset and its line, 24 bytes a pass, sorted by (pid, inv) and then by
// offset (Index.Sort). The second pass takes, as each run is drawn, only
// the passes of its (pid, inv) (Index.Take), read again at their offsets:
// a run's passes are held only while it is drawn, and a pass is taken
// once.
//
// An input that can seek (a file not compressed, bytes) reaches a pass
// ahead of the last one read by reading on, up to 1 MiB, and any other by
// seeking. One that cannot (a .gz) reads on to a pass ahead, keeping the
// last 8 192 passes it read past and no run took, for the runs that want
// them next: the runtime writes a pass as its bind ends, in about the order
// runs are drawn. It reaches a pass behind those by opening the input
// again and reading on from its start, from 2 MiB before a pass far ahead,
// so that an artifact written in reverse opens again once every few
// thousand passes, not once a pass. A .gz written far out of order costs
// time, never memory.
//
// A pass no run took once every run is drawn — its run has no
// chip.run.bind, or never came — is given back in the order written
// (Index.Untaken), for the conversion to count. The index opens its input
// through an Opener of the conversion's, which says how bytes read are
// counted and where a compressed input is cut.
package passes
