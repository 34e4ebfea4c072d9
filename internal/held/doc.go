// Package held keeps the spans a conversion holds past the record it read
// them in, and where each was read.
//
// The second pass reads its records from a Merger that recycles their
// memory (strace.WithRecycledMemory): a record's attributes and its
// non-canonical strings are valid only until the next Read. What the
// converter keeps longer — the ring's recent spans, node spans
// in the hand-offs, bind phase lines waiting for their bind — it copies
// into a Store of the holder's own, which the holder reuses once it
// has let go of what the store held. A run's spans, waiting for their
// root, are the recent spans' copies, shared (RecentSpans.Admit): a run
// copies them into a store of its own only before the ring lets go of
// them (the root's runCollector.CopyOut). The canonical strings (names, keys, short text
// values) are shared: they stay valid for good, and the trace writer may
// remember them by address.
package held
