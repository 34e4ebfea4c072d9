// Package repeats finds the records a conversion was given twice. A log is sometimes handed over twice (the same file
// named twice) or holds two captures one after the other (a second capture
// appended to the first, so the log's write time runs backwards where the
// second begins). Drawn twice, such records pile up on overflow lanes and
// their hand-offs connect to the wrong ends. The converter finds them
// and counts them, in three ways:
//
//   - Captures. The first pass cuts every log into captures where its write
//     time (the log prefixes' mono_ns) runs backwards by more than a gap,
//     and hashes each capture's bytes. A capture whose bytes equal an
//     earlier capture's (of the same log or an earlier one) is left out of
//     both passes; its records are counted as duplicates with the lines
//     they repeat.
//   - Captures in part. The captures of a log cut into several are
//     compared by their spans' keys (pid, tid, inv, name, ts, dur), in
//     sketches of a fixed size (see nearRepeats): a span of a capture whose
//     key an earlier capture holds is counted as a duplicate, with the
//     lines of the capture it repeats, and not drawn; the spans the later
//     capture holds on its own (changed, added) are drawn.
//   - Records. A span equal in (pid, tid, inv, name, ts, dur) to one of
//     the last RecentSpanCount (4096) spans is counted as a duplicate and not
//     drawn again.
//
// Repeats that are none of these (a capture that repeats only part of an
// earlier one — more spans differ between them than a sketch gives back —,
// a capture past the first maxSketched, a record repeated far apart within
// one capture) are drawn; where they cannot nest on their track they are
// moved to an overflow lane and counted there.
package repeats
