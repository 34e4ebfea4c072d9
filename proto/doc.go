// Package proto holds the Go types of the subset of Perfetto's trace
// schema that phasetrace writes: Trace, TracePacket, track descriptors,
// track events, debug annotations, interned data and clock snapshots.
//
// The message and field names and numbers are Perfetto's own, so these types
// decode any Perfetto trace (fields outside the subset are kept as unknown
// fields) and what phasetrace writes opens in ui.perfetto.dev.
//
// perfetto_trace.pb.go is generated from perfetto_trace.proto and committed;
// building phasetrace needs neither protoc nor protoc-gen-go. To regenerate,
// install the pinned versions and run go generate:
//
//	protoc          3.21.12 (Debian package protobuf-compiler)
//	protoc-gen-go   v1.36.11 (go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.11)
//
// TestGeneratedIsCurrent regenerates into a temporary directory and fails
// when the committed file differs; it skips, saying so, when protoc or
// protoc-gen-go is missing.
package proto

//go:generate protoc --proto_path=. --go_out=. --go_opt=paths=source_relative perfetto_trace.proto
