package strace

// The vocabulary of the runtime's logs, declared once: the names of the
// spans of a chip run and the segments of its bind. Other packages refer to
// these instead of spelling the words again.

// Span names of one L2 chip run. A run's tree is:
//
//	chip.run                                  SpanRun (depth 0, host)
//	├── chip.run.bind                         SpanBind (host)
//	│   └── chip.run.bind.<segment>           see BindSegments
//	├── chip.run.runner_run                   SpanRunnerRun (host)
//	│   └── chip.run.runner_run.device_wall   SpanDeviceWall (clk=dev)
//	│       └── chip.run.runner_run.device_wall.<phase>
//	├── chip.run.claim_release                SpanClaimRelease (host)
//	└── chip.run.validate                     SpanValidate (host)
const (
	// SpanRun is a chip run's root: the host wall of the run.
	SpanRun = "chip.run"
	// SpanBind is the bind stage: arguments in, graph built and uploaded.
	// A runtime with a host build path subdivides it into one
	// SpanBind+"."+segment span per segment (BindSegments).
	SpanBind = "chip.run.bind"
	// SpanRunnerRun is the host side of the device execution.
	SpanRunnerRun = "chip.run.runner_run"
	// SpanDeviceWall is the whole on-device wall of a run, a clk=dev span
	// at depth 2; its children are the device phases
	// (SpanDeviceWall+"."+phase).
	SpanDeviceWall = "chip.run.runner_run.device_wall"
	// SpanClaimRelease is the release of the run's pipeline slot.
	SpanClaimRelease = "chip.run.claim_release"
	// SpanValidate is the check of the run's outputs.
	SpanValidate = "chip.run.validate"
)

// DeviceWallDepth is the depth the runtime logs SpanDeviceWall at.
const DeviceWallDepth = 2

// The device phases, the children of SpanDeviceWall
// (SpanDeviceWall+"."+phase) the runtime logs at depth 3. Package reduce
// holds their table: which buffer record each reduces, the order the
// runtime logs them in, and how a trace draws them.
const (
	PhasePreamble       = "preamble"
	PhaseSoLoad         = "so_load"
	PhaseGraphBuild     = "graph_build"
	PhaseConfigValidate = "config_validate"
	PhaseArenaWire      = "arena_wire"
	PhaseSmReset        = "sm_reset"
	PhasePostOrch       = "post_orch"
	PhaseOrch           = "orch"
	PhaseSched          = "sched"
)

// BindSegments are the segments of a bind (chip.run.bind.<segment>) that
// current runtimes log, in the display order of the runtime's tool (not
// execution order). The slice must not be modified.
var BindSegments = []string{
	"args",
	"arena_build",
	"runtime_init",
	"host_orch",
	"graph_pack",
	"static_arena",
	"shared_mem",
	"gm_heap",
	"arena_h2d",
	"host_view_close",
}

// RetiredBindSegments are bind segments older runtimes logged and current
// ones no longer do: the Graph Definition upload (graph_upload), its
// relocation (relocate) and the shared-memory H2D copy (sm_h2d), folded
// since into graph_pack and arena_h2d. Logs that hold them are still read.
// The slice must not be modified.
var RetiredBindSegments = []string{
	"graph_upload",
	"relocate",
	"sm_h2d",
}

// IsBindSegment reports whether name is a bind segment, current or retired.
func IsBindSegment(name string) bool {
	switch name {
	case "args", "arena_build", "runtime_init", "host_orch", "graph_pack", "static_arena",
		"shared_mem", "gm_heap", "arena_h2d", "host_view_close",
		"graph_upload", "relocate", "sm_h2d":
		return true
	}
	return false
}

// The vocabulary of remote workers: an L4 process (level word network1)
// whose next-level workers are L3 worker daemons on other machines.
//
// On the dispatching host, the L4 scheduler thread logs, per task sent to a
// worker, SpanRemoteDispatch and, once the reply is in, SpanRemoteComplete,
// both carrying the task's identity (AttrRunID, AttrWorkerID,
// AttrDispatchID — which counts per worker from 1 — and AttrEndpointKind =
// EndpointRemoteL3 for a remote worker). On the remote machine the daemon's
// inner L3 worker logs each task as one run of its own, numbered by
// AttrRunID from 1 in arrival order: SpanRemoteRunFirst is its first span
// and SpanRemoteRunLast its last. No record names the other side: the k-th
// task sent to a worker is the k-th run of that worker's session.
const (
	SpanRemoteDispatch = "network1.dispatch"
	SpanRemoteComplete = "network1.complete"
	SpanRemoteRunFirst = "node.graph_build"
	SpanRemoteRunLast  = "node.post_fence_retirement"

	AttrRunID        = "run_id"
	AttrWorkerID     = "worker_id"
	AttrDispatchID   = "dispatch_id"
	AttrEndpointKind = "endpoint_kind"
	EndpointRemoteL3 = "remote_l3"
)

// DaemonBannerPrefix starts the first line of a remote worker daemon's log
// as the runtime's CI writes it: "[network1-daemon] machine1 listening on
// 10.0.0.2:7301".
const DaemonBannerPrefix = "[network1-daemon] "

// DaemonBanner returns the machine a daemon banner line names ("machine1"
// above), and whether line is one.
func DaemonBanner(line []byte) (machine string, ok bool) {
	if len(line) < len(DaemonBannerPrefix) || string(line[:len(DaemonBannerPrefix)]) != DaemonBannerPrefix {
		return "", false
	}
	rest := line[len(DaemonBannerPrefix):]
	n := 0
	for n < len(rest) && rest[n] != ' ' && rest[n] != '\t' && rest[n] != '\r' && rest[n] != '\n' {
		n++
	}
	if n == 0 || n > 64 {
		return "", false
	}
	return string(rest[:n]), true
}
