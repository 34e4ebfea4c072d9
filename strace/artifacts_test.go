package strace

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestPhaseRecords(t *testing.T) {
	t.Parallel()
	r := NewPhaseRecordsReader(openFile(t, "testdata/artifacts/host_phase_records.jsonl"), WithName("host_phase_records.jsonl"))
	var passes []PhasePass
	for {
		p, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		passes = append(passes, p)
	}
	want := []PhasePass{
		{Pos: Pos{File: "host_phase_records.jsonl", Line: 1, Offset: 0}, Pid: 3200, Inv: 7, Clock: "host_monotonic_ns", Records: []PhaseRecord{
			{Phase: "args", StartNS: 1000, EndNS: 1008, Tid: 3200, HasTid: true, Detail: 26, HasDetail: true},
			{Phase: "submit_task", StartNS: 1011, EndNS: 1012, Tid: 3200, HasTid: true, HasDetail: true},
			{Phase: "record_node", StartNS: 1013, EndNS: 1020, Tid: 3205, HasTid: true, Detail: 3, HasDetail: true},
		}},
		{Pos: Pos{File: "host_phase_records.jsonl", Line: 3}, Pid: 3200, Inv: 8, Clock: "host_monotonic_ns", Dropped: 2,
			Records: []PhaseRecord{{Phase: "host_orch", StartNS: 2000, EndNS: 2040}}, BadRecords: 3},
	}
	if diff := cmp.Diff(want, passes, cmpopts.IgnoreFields(Pos{}, "Offset")); diff != "" {
		t.Errorf("passes (-want +got):\n%s", diff)
	}
	st := r.Stats()
	if st.Lines != 6 || st.Passes != 2 || st.Blank != 1 || st.Malformed != 2 || st.Torn != 1 {
		t.Errorf("stats %+v", st)
	}
	var kinds []error
	for _, p := range st.Problems {
		kinds = append(kinds, p.Err)
	}
	if diff := cmp.Diff([]error{ErrMalformed, ErrMalformed, ErrTorn}, kinds, cmpopts.EquateErrors()); diff != "" {
		t.Errorf("problems (-want +got):\n%s\n%v", diff, st.Problems)
	}
	if st.Problems[2].Line != 6 {
		t.Errorf("torn line at %d", st.Problems[2].Line)
	}
}

func TestPhaseRecordsCutMidLineIsMalformedNotTorn(t *testing.T) {
	t.Parallel()
	r := NewPhaseRecordsReader(strings.NewReader("{\"pid\": 1, \"inv\": 2, \"rec\n{\"pid\": 1, \"inv\": 3, \"records\": []}\n"))
	p, err := r.Read()
	if err != nil || p.Inv != 3 {
		t.Fatalf("%+v %v", p, err)
	}
	if _, err := r.Read(); err != io.EOF {
		t.Fatal(err)
	}
	if st := r.Stats(); st.Malformed != 1 || st.Torn != 0 {
		t.Errorf("%+v", st)
	}
}

func TestCalibration(t *testing.T) {
	t.Parallel()
	c, err := ReadCalibration(openFile(t, "testdata/artifacts/swimlane.json"), WithName("swimlane.json"))
	if err != nil {
		t.Fatal(err)
	}
	if c.FreqHz != 50_000_000 || c.QuantizationNS != 1000 || c.Provider != "acl_event" || c.SchemaVersion != 1 || c.RawDeviceTimestampUnit != UnitDeviceUptimeUS {
		t.Errorf("calibration %+v", c)
	}
	var valid []int64
	var invalid []string
	for i := range c.Samples {
		s := &c.Samples[i]
		if s.Valid() {
			valid = append(valid, s.SampleIdx)
			continue
		}
		if !errors.Is(s.Invalid, ErrInvalidSample) {
			t.Errorf("sample %d: %v does not unwrap to ErrInvalidSample", i, s.Invalid)
		}
		invalid = append(invalid, s.Invalid.Error())
	}
	if diff := cmp.Diff([]int64{0, 1}, valid); diff != "" {
		t.Errorf("valid samples (-want +got):\n%s", diff)
	}
	wantInvalid := []string{
		"invalid calibration sample: device_cycles missing or zero",
		"invalid calibration sample: carries an error",
		"invalid calibration sample: host_after_ns before host_before_ns",
		`invalid calibration sample: unknown position "somewhere_else"`,
		"invalid calibration sample: host_before_ns missing or zero",
	}
	if diff := cmp.Diff(wantInvalid, invalid); diff != "" {
		t.Errorf("invalid samples (-want +got):\n%s", diff)
	}
	if s := c.Samples[2]; s.ErrorStage != "synchronize_event" || s.ErrorCode != 507011 {
		t.Errorf("error of sample 2: %+v", s)
	}
	mid, unc := c.Samples[0].Window(c.QuantizationNS)
	if mid != 1300 || unc != 1300 {
		t.Errorf("Window = %d ± %d", mid, unc)
	}
}

func TestCalibrationForms(t *testing.T) {
	t.Parallel()
	bare := `{"device_timestamp_unit": "syscnt_cycles", "samples": [{"position": "post_device_execution", "sample_idx": 0, "host_before_ns": 5, "device_cycles": 7, "host_after_ns": 6, "error": ""}]}`
	c, err := ReadCalibration(strings.NewReader(bare))
	if err != nil || len(c.Samples) != 1 || !c.Samples[0].Valid() || c.QuantizationNS != 0 || c.RawDeviceTimestampUnit != UnitSyscntCycles {
		t.Fatalf("bare object: %+v, %v", c, err)
	}
	top := `{"clock_anchors": ` + bare + `}`
	if c, err := ReadCalibration(strings.NewReader(top)); err != nil || len(c.Samples) != 1 {
		t.Fatalf("top-level clock_anchors: %+v, %v", c, err)
	}
	for _, doc := range []string{
		`{"device_timestamp_unit": "ticks", "samples": []}`,
		`{"device_timestamp_unit": "syscnt_cycles", "raw_device_timestamp_unit": "device_uptime_ms", "samples": []}`,
		`{"samples": []}`,
	} {
		if _, err := ReadCalibration(strings.NewReader(doc)); !errors.Is(err, ErrUnsupportedUnit) {
			t.Errorf("%s: err %v, want ErrUnsupportedUnit", doc, err)
		}
	}
	if _, err := ReadCalibration(strings.NewReader(`{"metadata": {}}`)); err == nil {
		t.Error("a document without samples was accepted")
	}
	if _, err := ReadCalibration(strings.NewReader(`{"samples": [`)); err == nil {
		t.Error("a cut document was accepted")
	}
}
