package phasetrace_test

import (
	"strconv"
	"testing"

	"github.com/phasetrace/phasetrace"
	"github.com/phasetrace/phasetrace/perfetto/check"
	"github.com/phasetrace/phasetrace/perfetto/check/processor"
	"github.com/phasetrace/phasetrace/strace/stracetest"
)

// fullNamed checks that every slice of tr (but a split trace's parts, named
// as their files) keeps its span's full name in its full_name argument and
// shows its label, then names each slice by its full name, as the tests
// that read traces back compare them with the logs.
func fullNamed(t testing.TB, tr *check.Trace) *check.Trace {
	t.Helper()
	bad := 0
	for i := range tr.Slices {
		s := &tr.Slices[i]
		v, ok := argOf(*s, "full_name")
		full, isString := v.(string)
		switch {
		case !ok && s.Category == "overview" && onPartsTrack(tr, s.Track):
			continue
		case !ok || !isString:
			t.Errorf("slice %q at %d on %q has no full_name", s.Name, s.TS, trackName(tr, s.Track))
		case s.Name != phasetrace.SliceLabel(full):
			t.Errorf("slice %q at %d is labelled %q, want %q", full, s.TS, s.Name, phasetrace.SliceLabel(full))
		default:
			s.Name = full
			continue
		}
		if bad++; bad == 10 {
			t.Fatal("...")
		}
	}
	return tr
}

// onPartsTrack reports whether track uuid is a split trace's parts track
// or one of its overflow lanes.
func onPartsTrack(tr *check.Trace, uuid uint64) bool {
	name := trackName(tr, uuid)
	return name == phasetrace.PartsTrack || len(name) > len(phasetrace.PartsTrack) && name[:len(phasetrace.PartsTrack)+1] == phasetrace.PartsTrack+" "
}

// labelsSQL counts, in the trace processor, the slices, those without
// debug.full_name, those whose name is not the label of their full name —
// the rule written again in SQL: the last dotted word, but for a root (at
// most two words, three for ext.<producer>.<span>) and a name ending in a
// dot — and the labels that name more than one full name.
const labelsSQL = `with named as (
  select name, extract_arg(arg_set_id, 'debug.full_name') as full from slice
), ruled as (
  select name, full,
    length(full) - length(replace(full, '.', '')) as dots,
    case when full glob 'ext.*' then 3 else 2 end as root_words,
    rtrim(full, replace(full, '.', '')) as through_last_dot
  from named where full is not null
), labelled as (
  select name, full,
    case when dots < root_words or through_last_dot = full then full
      else substr(full, length(through_last_dot) + 1) end as label
  from ruled
)
select
  (select count(*) from slice),
  (select count(*) from named where full is null),
  (select count(*) from labelled where name != label),
  (select count(*) from (select name from labelled group by name having count(distinct full) > 1)),
  (select ifnull(group_concat(name || ' ' || full || ' ' || label, '; '), '') from (select * from labelled where name != label limit 3));
`

// TestLabelsInTheTraceProcessor: in Perfetto's trace processor every slice
// of a conversion has debug.full_name, its name is the label of it, and a
// label names one kind of slice (a query of slice.name = 'graph_build'
// finds the device phase and nothing else).
func TestLabelsInTheTraceProcessor(t *testing.T) {
	t.Parallel()
	sh, ok := processor.FromEnv()
	if !ok {
		t.Skipf("%s is not set: Perfetto's trace processor is not run", processor.EnvVar)
	}
	logs, _ := stracetest.GenerateRemote(stracetest.RemoteConfig{Seed: 11, Tasks: 8, GapMin: 5e8, GapMean: 5e8, GapMax: 2e9, WallErr: 1e6, SamePids: true, AnchorEvry: 2e8,
		Hosts: []stracetest.RemoteHost{{Machine: "machine1", DriftPPM: 30, FwdMin: 30e3, FwdJitter: 20e3, RetMin: 25e3, RetJitter: 20e3}}})
	for _, c := range []struct {
		name   string
		inputs []phasetrace.Input
	}{
		{"sample", []phasetrace.Input{sampleInput(t)}},
		{"remote", remoteInputs(logs)},
		{"pipelined, prewarm, legacy bind lines, ext, 2 ranks", []phasetrace.Input{phasetrace.Bytes("gen.log", generated(counterLogs[1].cfg))}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, _, out := convert(t, c.inputs)
			tr, err := check.ReadBytes(out) // the conversion instant and the anomalies too
			if err != nil {
				t.Fatal(err)
			}
			rows, err := sh.Query(out, labelsSQL)
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != 2 || len(rows[1]) != 5 {
				t.Fatalf("the trace processor printed %q", rows)
			}
			r := rows[1]
			if r[0] != strconv.Itoa(len(tr.Slices)) || r[1] != "0" || r[2] != "0" || r[3] != "0" {
				t.Errorf("%s slices (check reads %d), %s without debug.full_name, %s not labelled by the rule (%s), %s labels of several full names",
					r[0], len(tr.Slices), r[1], r[2], r[4], r[3])
			}
		})
	}
}
