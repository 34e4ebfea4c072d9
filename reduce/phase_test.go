package reduce

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/phasetrace/phasetrace/strace"
)

var word = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// TestPhaseTable checks phaseTable whole: every phase has an enumerator
// name and (but RunWall) a word of its own, the order the runtime logs
// them in is RunWall first and then each phase once, the lanes of their
// own are numbered from 1 without a gap, each described, and PhaseNamed
// finds each phase by its span name.
func TestPhaseTable(t *testing.T) {
	enums, words, logged, lanes := map[string]bool{}, map[string]bool{}, map[int]Phase{}, map[int]Phase{}
	for p := range Phase(NumPhases) {
		row := phaseTable[p]
		if row.enum == "" || enums[row.enum] {
			t.Errorf("phase %d: enumerator name %q empty or twice", p, row.enum)
		}
		enums[row.enum] = true
		if (row.word == "") != (p == RunWall) || row.word != "" && (!word.MatchString(row.word) || words[row.word]) {
			t.Errorf("%v: word %q: want a word of its own (none for RunWall, logged as device_wall)", p, row.word)
		}
		words[row.word] = true
		if o, dup := logged[row.logged]; dup || row.logged < 0 || row.logged >= NumPhases {
			t.Errorf("%v: logged %d, out of range or %v's", p, row.logged, o)
		}
		logged[row.logged] = p
		if row.lane != 0 {
			if o, dup := lanes[row.lane]; dup {
				t.Errorf("%v: lane %d is %v's", p, row.lane, o)
			}
			lanes[row.lane] = p
		}
		if (row.lane == 0) != (row.about == "") {
			t.Errorf("%v: lane %d described %q: want a lane of its own described, the others not", p, row.lane, row.about)
		}
		if got, ok := PhaseNamed(p.SpanName()); !ok || got != p {
			t.Errorf("PhaseNamed(%q) = %v, %v", p.SpanName(), got, ok)
		}
		if leaf := p.Leaf(); p.SpanName() != strace.SpanDeviceWall+"."+leaf && (p != RunWall || leaf != "device_wall") {
			t.Errorf("%v: leaf %q of %q", p, leaf, p.SpanName())
		}
	}
	if loggedOrder[0] != RunWall {
		t.Errorf("the runtime logs %v first, want RunWall (device_wall)", loggedOrder[0])
	}
	for l := 1; l <= len(lanes); l++ {
		if _, ok := lanes[l]; !ok {
			t.Errorf("no phase has lane %d of %d", l, len(lanes))
		}
	}
	for _, name := range []string{"", strace.SpanDeviceWall + ".", strace.SpanDeviceWall + "x", strace.SpanDeviceWall + ".task_slot_0", strace.SpanRunnerRun, strace.PhaseOrch} {
		if p, ok := PhaseNamed(name); ok {
			t.Errorf("PhaseNamed(%q) = %v", name, p)
		}
	}
}

// The package doc's lists of the phases are the table's: their wire order
// and the order the runtime logs device_wall's children in.
func TestPhaseDoc(t *testing.T) {
	b, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(string(b), "\n") {
		lines = append(lines, strings.TrimPrefix(l, "//"))
	}
	doc := strings.Join(strings.Fields(strings.Join(lines, " ")), " ")
	var wire, children []string
	for p := range Phase(NumPhases) {
		wire = append(wire, strconv.Itoa(int(p))+" "+p.String())
	}
	for _, p := range loggedOrder[1:] {
		children = append(children, p.Leaf())
	}
	for _, want := range []string{
		"Phase wire order: " + strings.Join(wire, ", ") + ".",
		"with its names: " + strace.SpanDeviceWall + " at depth 2, ts 0, with RunWall's duration (the runtime's bracket: RunWall really starts a little before the origin), then " +
			strace.SpanDeviceWall + ".{" + strings.Join(children, ", ") + "} at depth 3",
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("doc.go does not say (as phaseTable does):\n%s", want)
		}
	}
}
