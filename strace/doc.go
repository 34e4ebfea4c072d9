// Package strace reads and writes the runtime's trace log: its [STRACE]
// spans, [CLOCK_ANCHOR] clock anchors, legacy "bind phase=" lines,
// "[stamp]" lines and torch_backend_autoload records, plus the two artifacts
// beside the log (host_phase_records.jsonl and the clock-calibration JSON).
//
// The Reader streams a log with bounded memory and loses nothing silently:
// every record head is either returned as a typed Record or counted as torn,
// of an unknown version, malformed, or inside an over-long line (Stats). The
// Writer emits records byte for byte as the runtime does, so a Go program can
// instrument itself into the same log.
//
// # Grammar
//
// Each line the runtime logs starts with a prefix: the CLOCK_MONOTONIC time
// of the write, the pthread handle, the level and the function:
//
//	[mono_ns=<ns>][T0x<hex>][<LEVEL>] <func>: <payload>
//
// A span is one line, written when its scope exits (children before their
// parents):
//
//	[mono_ns=1200][T0x7f3a][TIMING] emit_host_span: [STRACE] v=1 pid=4242 tid=4242 inv=7 hid=9f3c depth=1 name=chip.run.bind ts=1000 dur=150 ntensor=4
//
// The fields come in this order, separated by blanks:
//
//	v      format version; only 1 is defined (other versions are counted, never guessed)
//	pid    process id (int32)          tid    OS thread id (int64)
//	inv    invocation id (uint64): (pid, inv) groups one run's spans
//	hid    callable hash, hex (uint64)
//	depth  nesting depth (int32)
//	name   dotted name, self-locating: chip.run.bind.args
//	ts     start, ns (int64)           dur    duration, ns (int64)
//	k=v    attributes, in order, to the end of the record
//
// The emitter percent-encodes bytes outside printable ASCII, and '%', '['
// and ']', as %XX; in names also ' ' and '='. The reader decodes them. A
// name is capped at NameCap bytes and the attribute text at AttrsCap bytes
// (encoded); a field cut at its cap ends in '~', which the reader keeps and
// flags (Span.NameTruncated, Span.AttrsTruncated, Attr.Truncated):
//
//	[STRACE] v=1 pid=1 tid=1 inv=1 hid=1 depth=2 name=ext.pypto.decode%20layer ts=5 dur=1 note=a%5Bb%5D path=/very/long/valu~
//
// Attribute values in canonical decimal are integers (Attr.Type, Int, Uint);
// everything else is text. A span with clk=dev is a device span: its ts is
// an offset from the run's device origin, on the device clock, not a host
// time (Span.IsDevice):
//
//	[STRACE] v=1 pid=4242 tid=4242 inv=7 hid=9f3c depth=2 name=chip.run.runner_run.device_wall ts=0 dur=71000000 clk=dev origin_cyc=123456789 dev=0
//
// Each process writes one wall-clock anchor, valid only as this complete
// record with nothing after it on its line (but the next record's head,
// joined to it: see below); wall = wall_ns + (mono - mono_ns):
//
//	[mono_ns=100][T0x7f3a][TIMING] clock_anchor: [CLOCK_ANCHOR] v=1 pid=4242 mono_ns=100 wall_ns=1767225600000000000
//
// A device clock anchor pairs a host window with one device counter reading
// (the counter was read somewhere in [host_ns, host_ns+window_ns]). It is a
// record of its own, never a span, and follows the same prefix and
// nothing-trailing rules:
//
//	[mono_ns=900][T0x7f3a][TIMING] clock_anchor: [CLOCK_ANCHOR] v=2 pid=4242 tid=4242 dev=0 host_ns=880 window_ns=20 dev_cyc=5000000 dev_freq=50000000
//
// A runtime with a host prepare path logs its bind segments as legacy lines,
// with raw (unencoded) attributes:
//
//	[mono_ns=2000][T0x7f3a][TIMING] host_phase_trace_end: [host_phase_trace.cpp:393] bind phase=host_orch start_ns=1010 dur_ns=40 tasks=47
//
// and a measurement recipe writes its command as the first line:
//
//	[stamp] 4d31f482 env SIMPLER_HBG_BIND_BREAKDOWN_ENABLE=1 python main.py --rounds 6
//
// A process that imported torch reports the state of PyTorch's backend
// autoload, after a log prefix or any other text, its fields in this order
// with one space between them (Autoload). raw, null or a JSON string, and
// raw_truncated are absent from older emitters; text after torch_npu_loaded
// is not part of the record:
//
//	torch_backend_autoload setting=0 raw="0" raw_truncated=false effective=disabled torch_imported=true torch_npu_loaded=false
//	torch_backend_autoload setting=1 effective=enabled torch_imported=true torch_npu_loaded=true
//
// # What real logs do
//
// Markers are found anywhere on a line, after any other text. Two records
// can share one physical line: a record ends at the next log prefix, the
// next [STRACE] or [CLOCK_ANCHOR], or the end of the line. Lines may end in
// CRLF. A record cut mid-write (its text ends before its grammar completes)
// is torn: counted, never turned into a measurement. A record whose bytes
// break the grammar (a letter in a number, a value out of its type's range,
// an anchor without its prefix or with text after it) is malformed. A line
// longer than the maximum (WithMaxLine) is skipped and the heads inside it
// are counted as lost. Stats.Check verifies that the counts add up.
//
// Two ranks writing one stream sometimes join their records: one record's
// line end is missing, and the next record's log prefix (or marker)
// follows its last byte directly. The runtime writes each record whole, so
// a joined record whose grammar completes is complete, an anchor too (its
// "nothing after it" rule allows the next record's head, directly after
// its last value, and nothing else): it is returned with Record.Joined
// set and counted in Stats.Joined, never as torn. A device anchor's
// dev_freq can be confirmed against the other anchors of its device (a cut
// value would read smaller), which the converter does:
//
//	[mono_ns=900][T0x7f3a][TIMING] clock_anchor: [CLOCK_ANCHOR] v=2 pid=4242 tid=4242 dev=0 host_ns=880 window_ns=20 dev_cyc=5000000 dev_freq=50000000[mono_ns=1200][T0x7f3b][TIMING] emit_host_span: [STRACE] v=1 pid=4243 ...
//
// The runtime ends every line it writes, so a last line without a line end
// was cut while it was being written, and Stats.Unterminated says so. Its
// last record, of any kind, is counted as torn, at its position, with
// ErrUnterminated, wherever one of its fixed fields may be cut, even where
// its grammar looks complete (dur=62 may be the start of dur=62850). A span
// or bind phase line whose fixed fields are all followed by attribute text
// can only have lost the end of that text: it is returned, its last
// attribute marked Attr.MaybeCut (its value or key may lack its end, and
// attributes after it may be missing), and counted in Stats.MaybeCut.
// Records that the next record head ends on that line are complete and
// kept; text that is no record needs no line end. Here the first span is
// kept and the second counted as torn:
//
//	[mono_ns=1300][T0x7f3a][TIMING] emit_host_span: [STRACE] v=1 pid=4242 tid=4242 inv=7 hid=9f3c depth=0 name=chip.run ts=900 dur=400 [mono_ns=1301][T0x7f3b][TIMING] emit_host_span: [STRACE] v=1 pid=4243 tid=4243 inv=3 hid=9f3c depth=3 name=chip.run.runner_run.device_wall.orch ts=0 dur=62<end of input>
//
// and here both spans are returned, the second with clk marked as possibly
// cut:
//
//	[mono_ns=1300][T0x7f3a][TIMING] emit_host_span: [STRACE] v=1 pid=4242 tid=4242 inv=7 hid=9f3c depth=0 name=chip.run ts=900 dur=400 [mono_ns=1301][T0x7f3b][TIMING] emit_host_span: [STRACE] v=1 pid=4243 tid=4243 inv=3 hid=9f3c depth=3 name=chip.run.runner_run.device_wall.orch ts=0 dur=62850 clk=dev<end of input>
//
// (A failing underlying reader ends the input the same way.) A record torn
// inside its last number in the middle of the log, where the next record on
// its line ends it, cannot be told from a complete one; no reader can.
//
// # Reading less, reading several
//
// WithSpanFilter lets a pass that needs few spans skip the others after
// their depth and name, counted in Stats.Skipped; WithKinds selects the
// kinds of record returned. A Merger reads several logs at once, each
// parsed ahead on its own goroutine, and returns their records in the order
// they were written, owning their memory. With WithRecycledMemory it reuses
// that memory instead, reading without an allocation per record: a record is
// then valid until the next Read, but for its canonical strings (names,
// keys, short text values), which are interned and valid for good. A
// Reader's ResetBytes reads new bytes in the same way, in the reader's
// memory: a pass over a log in chunks reuses one reader per chunk buffer.
// Under the race detector a recycled Merger overwrites a batch's memory as
// soon as Read moves past it, and ResetBytes a reader's chunk, so code that
// keeps a record's strings or attributes past their validity reads garbage
// in go test -race, whatever the log's length or the goroutines' timing.
//
// # Speed
//
// The fields of a span, a log prefix's times, the span filter's skim and
// attributes with nothing to decode are read in one pass in the form the
// runtime writes them (single spaces, at most 18 digits, eight bytes of a
// name at a time); anything else falls back to the grammar. Each fast
// reading is checked against the grammar on mutated texts
// (TestSpanFieldsAsGrammar, TestPrefixTimesAsGrammar,
// TestSkimWrittenAsSkim), and NewBytesReader against NewReader on the same
// bytes (TestBytesReaderReadsAsReader, FuzzReader). The benchmarks
// (BenchmarkRead, BenchmarkMerge, BenchmarkMergeRecycled, BenchmarkReadFile
// with -benchfile) measure it; the repository's README has the figures.
//
// The span names of a chip run (SpanRun, SpanBind, ...) and the segments of
// its bind (BindSegments, RetiredBindSegments) are declared here, once.
//
// # The model
//
// GroupInvocations groups spans by (pid, inv) and rebuilds each run's tree
// from the dotted names (preferring a parent at depth-1), never from
// timestamps, reporting orphans instead of guessing. FamilyOf, NodeLeaf and
// ExtProducer classify names; BucketByHid finds decode and prefill callables.
package strace
