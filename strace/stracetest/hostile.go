package stracetest

import (
	"bytes"
	"strconv"

	"github.com/phasetrace/phasetrace/strace"
)

// The hostile shapes: logs that are valid line by line but that a producer
// with a bug, a user or a big machine can write, each made to the size
// asked. Every line is a span as the runtime writes it (strace.AppendRecord),
// logged on scope exit, with the span's tid as its log prefix's thread
// handle, so that the reader reads back every span the function writes.

// hostileHid is the callable hash of the hostile spans.
const hostileHid = 0x9f3c

// appendHostile appends s as the runtime logs it at mono.
func appendHostile(dst []byte, mono int64, s strace.Span) []byte {
	rec := strace.Record{Kind: strace.KindSpan, Span: s,
		Prefix: strace.Prefix{Present: true, MonoNS: mono, Thread: uint64(s.Tid), Level: strace.DefaultLevel, Func: strace.SpanFunc}}
	b, err := strace.AppendRecord(dst, &rec)
	if err != nil {
		panic(err) // a span always has a kind
	}
	return b
}

// appendRun appends a run of two spans starting at ts, as the runtime logs
// them on scope exit: a chip.run.bind of 500 ns, then its chip.run of
// 600 ns.
func appendRun(dst []byte, pid int32, tid int64, inv uint64, ts int64) []byte {
	dst = appendHostile(dst, ts+600, strace.Span{Pid: pid, Tid: tid, Inv: inv, Hid: hostileHid, Depth: 1, Name: "chip.run.bind", TS: ts, Dur: 500})
	return appendHostile(dst, ts+600, strace.Span{Pid: pid, Tid: tid, Inv: inv, Hid: hostileHid, Name: "chip.run", TS: ts, Dur: 600})
}

// OverlappingSpans returns n spans named ext.app.step on one thread (pid 5,
// tid 5), each overlapping the next, as a producer with a bug logs them:
// the ith (from 0) starts at 10^12 + i ns and lasts 10^6 ns. A track of
// the trace holds 65 of them on its lanes (the thread's and 64 overflow
// lanes); the rest fit nowhere.
func OverlappingSpans(n int) []byte {
	var b []byte
	for i := range n {
		ts := int64(1_000_000_000_000 + i)
		b = appendHostile(b, ts+1_000_000, strace.Span{Pid: 5, Tid: 5, Hid: hostileHid, Name: "ext.app.step", TS: ts, Dur: 1_000_000})
	}
	return b
}

// NestedSpans returns a chain of n nested spans named ext.app.level on one
// thread (pid 4300, tid 4300), logged innermost first as the runtime logs
// them on scope exit: the span at depth d (0 to n-1) starts at
// 10^6 + d ns and lasts 2(n-d) ns, so that each span holds the one logged
// before it, 1 ns inside it at both ends. A track of the trace holds 512
// levels on each of its 65 lanes; deeper spans fit nowhere.
func NestedSpans(n int) []byte {
	var b []byte
	for d := n - 1; d >= 0; d-- {
		b = appendHostile(b, int64(3*n-d), strace.Span{Pid: 4300, Tid: 4300, Hid: hostileHid, Depth: int32(d), Name: "ext.app.level",
			TS: int64(1_000_000 + d), Dur: int64(2 * (n - d))})
	}
	return b
}

// Processes returns the log of n processes (pids 10 000 to 10 000+n-1, in
// that order) with one thread (tid = pid) and one run (inv 1) each: a
// chip.run of 600 ns and its chip.run.bind of 500 ns, the bind logged
// first. Process p's run starts at 10^6 + 1000p ns. A converter gives each
// process two tracks: the process's and its thread's.
func Processes(n int) []byte {
	var b []byte
	for p := range n {
		pid := int32(10_000 + p)
		b = appendRun(b, pid, int64(pid), 1, int64(1_000_000+p*1000))
	}
	return b
}

// Threads returns the log of n threads of one process (pid 4100, tids
// 30 000 to 30 000+n-1) with runs runs each, every run as in Processes (a
// chip.run of 600 ns and its chip.run.bind, inv of its own): 2·runs spans
// a thread. The runs come in rounds, each a run of every thread in turn,
// 1000 ns apart; the rounds start 1 s apart (1000n ns past 10^6 threads),
// so that the log is in time order.
func Threads(n, runs int) []byte {
	var b []byte
	round := max(1_000_000_000, int64(n)*1000)
	for r := range runs {
		for th := range n {
			i := r*n + th
			b = appendRun(b, 4100, int64(30_000+th), uint64(i+1), int64(r)*round+int64(th)*1000)
		}
	}
	return b
}

// DistinctPids returns n spans named ext.app.step, each of a process of
// its own (pids 10 000 to 10 000+n-1, tid = pid): a new pid on every line.
// The ith (from 0) starts at 10(i+1) ns and lasts 5 ns.
func DistinctPids(n int) []byte {
	var b []byte
	for i := range n {
		pid := int32(10_000 + i)
		b = appendHostile(b, int64(i+1), strace.Span{Pid: pid, Tid: int64(pid), Hid: hostileHid, Name: "ext.app.step", TS: int64(10 * (i + 1)), Dur: 5})
	}
	return b
}

// DistinctTids returns n spans named ext.app.step of one process (pid
// 4100), each of a thread of its own (tids 30 000 to 30 000+n-1): a new tid
// on every line. The ith (from 0) starts at 10(i+1) ns and lasts 5 ns.
func DistinctTids(n int) []byte {
	var b []byte
	for i := range n {
		b = appendHostile(b, int64(i+1), strace.Span{Pid: 4100, Tid: int64(30_000 + i), Hid: hostileHid, Name: "ext.app.step", TS: int64(10 * (i + 1)), Dur: 5})
	}
	return b
}

// BusyDispatch returns a hand-off (run_id 1) of pid 4000 whose dispatch
// fits no lane of its thread when busy is at least a track's lanes (65):
// its node.submit is on thread 4001, after a span of its own
// (ext.app.first), and its node.dispatch on thread 4002 partially overlaps
// busy spans named ext.app.busy, each overlapping the next, logged before
// it. busy must be at most 500, for the dispatch to start inside each.
func BusyDispatch(busy int) []byte {
	b := appendHostile(nil, 50, strace.Span{Pid: 4000, Tid: 4001, Hid: hostileHid, Name: "ext.app.first", TS: 10, Dur: 5})
	for i := range busy {
		b = appendHostile(b, int64(100+i), strace.Span{Pid: 4000, Tid: 4002, Hid: hostileHid, Name: "ext.app.busy", TS: int64(3000 + i), Dur: 10_000})
	}
	b = appendHostile(b, 5000, strace.Span{Pid: 4000, Tid: 4001, Name: "node.submit", TS: 1000, Dur: 2000,
		Attrs: []strace.Attr{strace.Int("run_id", 1), strace.Int("task_slot", 0), strace.String("role", "facade")}})
	return appendHostile(b, 9000, strace.Span{Pid: 4000, Tid: 4002, Name: "node.dispatch", TS: 3500, Dur: 16_500,
		Attrs: []strace.Attr{strace.Int("run_id", 1), strace.Int("task_slot", 0), strace.String("role", "scheduler"), strace.Int("dispatch_id", 1)}})
}

// ChangeOneDur returns a copy of log with one byte changed: the last digit
// of the dur of its first span named name (as the log writes it, encoded),
// one more modulo 10. It returns the span's new dur too. Appended to log,
// or given as a second log, the copy is a capture given again with one
// span changed. It returns nil and 0 when log holds no such span.
func ChangeOneDur(log []byte, name string) (changed []byte, dur int64) {
	at := bytes.Index(log, []byte(" name="+name+" "))
	if at < 0 {
		return nil, 0
	}
	line := log[at:]
	if end := bytes.IndexByte(line, '\n'); end >= 0 {
		line = line[:end]
	}
	i := bytes.Index(line, []byte(" dur="))
	if i < 0 {
		return nil, 0
	}
	start := at + i + len(" dur=")
	end := at + len(line)
	if j := bytes.IndexAny(log[start:end], " \r"); j >= 0 {
		end = start + j
	}
	last := end - 1
	if last < start || log[last] < '0' || log[last] > '9' {
		return nil, 0
	}
	changed = bytes.Clone(log)
	changed[last] = '0' + (log[last]-'0'+1)%10
	dur, err := strconv.ParseInt(string(changed[start:end]), 10, 64)
	if err != nil {
		return nil, 0
	}
	return changed, dur
}
