package analysis

import (
	"strconv"

	"github.com/parquet-go/parquet-go"
	"github.com/phasetrace/phasetrace/reduce"
)

// stepRecord is a row of the steps table as Parquet stores it: the fields
// in StepColumns' order (TestParquetColumns), an empty value as a null of
// an optional column.
type stepRecord struct {
	Run            int64  `parquet:"run"`
	Pid            int32  `parquet:"pid"`
	Tid            int64  `parquet:"tid"`
	Slot           *int64 `parquet:"slot,optional"`
	Dev            *int64 `parquet:"dev,optional"`
	Hid            string `parquet:"hid"`
	Inv            uint64 `parquet:"inv"`
	StartNs        int64  `parquet:"start_ns"`
	WallNs         *int64 `parquet:"wall_ns,optional"`
	ChipRunNs      int64  `parquet:"chip_run_ns"`
	BindNs         *int64 `parquet:"bind_ns,optional"`
	PrepNs         *int64 `parquet:"prep_ns,optional"`
	GapNs          *int64 `parquet:"gap_ns,optional"`
	DeviceWallNs   *int64 `parquet:"device_wall_ns,optional"`
	PreambleNs     *int64 `parquet:"preamble_ns,optional"`
	SoLoadNs       *int64 `parquet:"so_load_ns,optional"`
	GraphBuildNs   *int64 `parquet:"graph_build_ns,optional"`
	PostOrchNs     *int64 `parquet:"post_orch_ns,optional"`
	OrchNs         *int64 `parquet:"orch_ns,optional"`
	SchedNs        *int64 `parquet:"sched_ns,optional"`
	ConfigValidate *int64 `parquet:"config_validate_ns,optional"`
	ArenaWireNs    *int64 `parquet:"arena_wire_ns,optional"`
	SmResetNs      *int64 `parquet:"sm_reset_ns,optional"`
	EffectiveNs    *int64 `parquet:"effective_ns,optional"`
	BoundNs        *int64 `parquet:"bound_ns,optional"`
	Cold           bool   `parquet:"cold"`
}

// bindRecord is a row of the binds table as Parquet stores it, in
// BindColumns' order.
type bindRecord struct {
	Run      int64  `parquet:"run"`
	Pid      int32  `parquet:"pid"`
	Inv      uint64 `parquet:"inv"`
	Segment  string `parquet:"segment,dict"`
	Source   string `parquet:"source,dict"`
	StartNs  int64  `parquet:"start_ns"`
	DurNs    int64  `parquet:"dur_ns"`
	OnCPUNs  *int64 `parquet:"on_cpu_ns,optional"`
	OffCPUNs *int64 `parquet:"off_cpu_ns,optional"`
}

// The records' schemas, for tests.
var (
	stepSchema = parquet.SchemaOf(stepRecord{})
	bindSchema = parquet.SchemaOf(bindRecord{})
)

func opt(v NullInt) *int64 {
	if !v.Valid {
		return nil
	}
	return &v.Int
}

func stepRecordOf(s *Step) stepRecord {
	ph := func(p reduce.Phase) *int64 { return opt(s.Phases[p]) }
	return stepRecord{
		Run: s.Run, Pid: s.Pid, Tid: s.Tid, Slot: opt(s.Slot), Dev: opt(s.Dev),
		Hid: strconv.FormatUint(s.Hid, 16), Inv: s.Inv, StartNs: s.Start, WallNs: opt(s.Wall),
		ChipRunNs: s.ChipRun, BindNs: opt(s.Bind), PrepNs: opt(s.Prep), GapNs: opt(s.Gap),
		DeviceWallNs: ph(reduce.RunWall), PreambleNs: ph(reduce.Preamble), SoLoadNs: ph(reduce.SoLoad),
		GraphBuildNs: ph(reduce.GraphBuild), PostOrchNs: ph(reduce.PostOrch), OrchNs: ph(reduce.OrchWindow),
		SchedNs: ph(reduce.SchedWindow), ConfigValidate: ph(reduce.ConfigValidate), ArenaWireNs: ph(reduce.ArenaWire),
		SmResetNs: ph(reduce.SmReset), EffectiveNs: opt(s.Effective), BoundNs: opt(s.Bound), Cold: s.Cold,
	}
}

func bindRecordOf(s *Step, b *StepSegment) bindRecord {
	return bindRecord{Run: s.Run, Pid: s.Pid, Inv: s.Inv, Segment: b.Segment, Source: b.Source.String(),
		StartNs: b.Start, DurNs: b.Dur, OnCPUNs: opt(b.CPU), OffCPUNs: opt(b.OffCPU())}
}
