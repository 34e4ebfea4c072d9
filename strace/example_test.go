package strace_test

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/phasetrace/phasetrace/strace"
)

func ExampleReader() {
	log := "[mono_ns=100][T0x7f3a][TIMING] clock_anchor: [CLOCK_ANCHOR] v=1 pid=4242 mono_ns=100 wall_ns=1767225600000000100\n" +
		"[mono_ns=1200][T0x7f3a][TIMING] emit_host_span: [STRACE] v=1 pid=4242 tid=4242 inv=7 hid=9f3c depth=1 name=chip.run.bind ts=1000 dur=150 ntensor=4 note=a%20b\r\n" +
		"[mono_ns=1300][T0x7f3a][TIMING] emit_host_span: [STRACE] v=1 pid=4242 tid=4242 inv=7 hid=9f3c depth=2 name=chip.run.runner_run.dev\n" +
		"[mono_ns=1400][T0x7f3a][TIMING] emit_host_span: [STRACE] v=1 pid=4242 tid=4242 inv=7 hid=9f3c depth=2 name=chip.run.runner_run.device_wall ts=0 dur=900 clk=dev\n"
	r := strace.NewReader(strings.NewReader(log), strace.WithName("run.log"))
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			fmt.Println("read:", err) // only I/O errors end reading early
			return
		}
		switch rec.Kind {
		case strace.KindWallAnchor:
			fmt.Printf("line %d: pid %d wall clock at mono %d\n", rec.Pos.Line, rec.WallAnchor.Pid, rec.WallAnchor.MonoNS)
		case strace.KindSpan:
			s := rec.Span
			n, _ := s.Attr("ntensor")
			note, _ := s.Attr("note")
			fmt.Printf("line %d: %s depth=%d ts=%d dur=%d device=%v ntensor=%d note=%q\n",
				rec.Pos.Line, s.Name, s.Depth, s.TS, s.Dur, s.IsDevice(), n.Int, note.Value)
		}
	}
	st := r.Stats()
	fmt.Printf("%d [STRACE] heads, %d spans, %d torn\n", st.Heads.Strace, st.Records.Spans, st.Torn)
	for _, p := range st.Problems {
		fmt.Println(p)
	}
	// Output:
	// line 1: pid 4242 wall clock at mono 100
	// line 2: chip.run.bind depth=1 ts=1000 dur=150 device=false ntensor=4 note="a b"
	// line 4: chip.run.runner_run.device_wall depth=2 ts=0 dur=900 device=true ntensor=0 note=""
	// 3 [STRACE] heads, 2 spans, 1 torn
	// run.log:3: byte 320: strace: torn record: ts: missing
}

// A log already in memory is read in place: the lines are not copied into
// a buffer of the reader's own.
func ExampleNewBytesReader() {
	log := []byte("[mono_ns=1200][T0x7f3a][TIMING] emit_host_span: [STRACE] v=1 pid=4242 tid=4242 inv=7 hid=9f3c depth=0 name=chip.run ts=1000 dur=900 slot_id=1\n" +
		"[mono_ns=1300][T0x7f3a][TIMING] emit_host_span: [STRACE] v=1 pid=4242 tid=4242 inv=7 hid=9f3c depth=1 name=chip.run.bind ts=1000 dur=150\n" +
		"[mono_ns=1400][T0x7f3a][TIMING] emit_host_span: [STRACE] v=1 pid=4242 tid=4242 inv=8 hid=9f3c depth=0 name=chip.run ts=2000 dur=8")
	r := strace.NewBytesReader(log, strace.WithName("run.log"), strace.WithKinds(strace.KindSpan))
	for {
		rec, err := r.Read()
		if err != nil { // io.EOF: bytes in memory cannot fail
			break
		}
		slot, _ := rec.Span.Attr("slot_id")
		fmt.Printf("%s: %s depth=%d slot=%d\n", rec.Pos, rec.Span.Name, rec.Span.Depth, slot.Int)
	}
	st := r.Stats()
	fmt.Printf("%d lines, %d bytes, %d torn\n", st.Lines, st.Bytes, st.Torn)
	// Output:
	// run.log:1 (byte 48): chip.run depth=0 slot=1
	// run.log:2 (byte 190): chip.run.bind depth=1 slot=0
	// 3 lines, 408 bytes, 1 torn
}

func ExampleWriter() {
	now := int64(5000)
	w := strace.NewWriter(os.Stdout,
		strace.WithProcess(4242, 4242), strace.WithThread(0x7f3a),
		strace.WithClock(func() int64 { return now }, func() int64 { return 1_767_225_600_000_000_000 + now }))
	w.BeginInvocation(0x9f3c)

	run := w.Start("chip.run", strace.Int("run_epoch", 1))
	now += 10
	bind := w.Start("chip.run.bind", strace.Int("ntensor", 4))
	now += 150
	bind.End()
	w.DeviceSpan("chip.run.runner_run.device_wall", 0, 900, 2, strace.Uint("origin_cyc", 123456789), strace.Int("dev", 0))
	now += 1000
	run.End()
	w.DeviceAnchor(strace.DeviceAnchor{Dev: 0, HostNS: 6000, WindowNS: 20, DevCyc: 123500000, DevFreq: 50_000_000})
	// Output:
	// [mono_ns=5160][T0x7f3a][TIMING] emit_host_span: [STRACE] v=1 pid=4242 tid=4242 inv=1 hid=9f3c depth=1 name=chip.run.bind ts=5010 dur=150 ntensor=4
	// [mono_ns=5160][T0x7f3a][TIMING] emit_host_span: [STRACE] v=1 pid=4242 tid=4242 inv=1 hid=9f3c depth=2 name=chip.run.runner_run.device_wall ts=0 dur=900 clk=dev origin_cyc=123456789 dev=0
	// [mono_ns=6160][T0x7f3a][TIMING] emit_host_span: [STRACE] v=1 pid=4242 tid=4242 inv=1 hid=9f3c depth=0 name=chip.run ts=5000 dur=1160 run_epoch=1
	// [mono_ns=6160][T0x7f3a][TIMING] clock_anchor: [CLOCK_ANCHOR] v=2 pid=4242 tid=4242 dev=0 host_ns=6000 window_ns=20 dev_cyc=123500000 dev_freq=50000000
}

func ExampleGroupInvocations() {
	log := `[STRACE] v=1 pid=1 tid=1 inv=1 hid=ab depth=2 name=chip.run.bind.args ts=11 dur=2
[STRACE] v=1 pid=1 tid=1 inv=1 hid=ab depth=1 name=chip.run.bind ts=10 dur=5
[STRACE] v=1 pid=1 tid=1 inv=1 hid=ab depth=2 name=chip.run.bind.host_orch.submit_task ts=12 dur=1
[STRACE] v=1 pid=1 tid=1 inv=1 hid=ab depth=0 name=chip.run ts=9 dur=20
[STRACE] v=1 pid=1 tid=1 inv=0 hid=0 depth=0 name=node.dispatch ts=1 dur=2
`
	r := strace.NewReader(strings.NewReader(log))
	var spans []strace.Span
	for {
		rec, err := r.Read()
		if err != nil {
			break
		}
		spans = append(spans, rec.Span.Clone())
	}
	for _, inv := range strace.GroupInvocations(spans) {
		var walk func(n *strace.Node, indent string)
		walk = func(n *strace.Node, indent string) {
			fmt.Println(indent + n.Span.Name)
			for _, c := range n.Children {
				walk(c, indent+"  ")
			}
		}
		fmt.Printf("pid %d inv %d:\n", inv.Pid, inv.Inv)
		for _, root := range inv.Roots {
			walk(root, "  ")
		}
		for _, o := range inv.Orphans {
			fmt.Printf("  orphan %s (no %s)\n", o.Node.Span.Name, o.Parent)
		}
	}
	// Output:
	// pid 1 inv 1:
	//   chip.run
	//     chip.run.bind
	//       chip.run.bind.args
	//   orphan chip.run.bind.host_orch.submit_task (no chip.run.bind.host_orch)
}

// A Merger with recycled memory reads without allocating per record: what
// a caller keeps across Reads is a canonical string (a span's name, an
// attribute's key, a short text value) or a copy.
func ExampleWithRecycledMemory() {
	a := "[mono_ns=100][T0x7f3a][TIMING] emit_host_span: [STRACE] v=1 pid=1 tid=1 inv=1 hid=9f3c depth=0 name=chip.run ts=90 dur=10 role=worker slot_id=0\n" +
		"[mono_ns=300][T0x7f3a][TIMING] emit_host_span: [STRACE] v=1 pid=1 tid=1 inv=2 hid=9f3c depth=0 name=chip.run ts=290 dur=10 role=worker slot_id=1\n"
	b := "[mono_ns=200][T0x7f3b][TIMING] emit_host_span: [STRACE] v=1 pid=2 tid=2 inv=1 hid=51a7 depth=0 name=node.dispatch ts=190 dur=10 role=scheduler slot_id=0\n"
	m := strace.NewMerger([]strace.MergeInput{{Name: "a.log", R: strings.NewReader(a)}, {Name: "b.log", R: strings.NewReader(b)}},
		strace.WithRecycledMemory())
	defer m.Close()
	roles := map[string]string{} // span name → role: canonical strings, kept as they are
	var slots []int64            // the numbers, not the text of the values
	for {
		rec, _, err := m.Read()
		if err != nil { // io.EOF
			break
		}
		role, _ := rec.Span.Attr("role")
		roles[rec.Span.Name] = role.Value
		slot, _ := rec.Span.Attr("slot_id")
		slots = append(slots, slot.Int) // slot.Value is valid until the next Read
	}
	fmt.Println(roles, slots)
	// Output:
	// map[chip.run:worker node.dispatch:scheduler] [0 0 1]
}
