package counters

// Kind is a kind of counter track the trace draws under a process.
type Kind int

// The kinds of counter tracks, rows of Table.
const (
	StepTime Kind = iota
	OverMedian
	DeviceWall
	InFlight
	DecodeDelta
)

// Table is the one place the trace's counter tracks are named and
// described: the drawing names each track from its row, and the README's
// list of them is made from the table (TestCounterDocs, -update rewrites
// it; other documents point there).
var Table = [...]Row{
	StepTime: {"chip.run ns · hid 0x", "…", "", "callable (pid, hid)",
		"each invocation's duration (its root span, `chip.run`) at its start: the TPOT table's values, on one y-axis for " +
			"the callable in every process (Display → Min/Max in the track's menu spreads them over the track); a callable " +
			"run once ends with 0 at its run's end"},
	OverMedian: {"chip.run − median ns · hid 0x", "…", "", "callable run more than once",
		"each invocation's duration less the callable's median, at its start: the UI draws counters from 0, so a step's " +
			"few percent show here"},
	DeviceWall: {"device ", "N", " device_wall ns", "device (pid, dev)",
		"the placed duration of each run's `device_wall`, at its placed start"},
	InFlight: {"runs in flight", "", "", "process",
		"how many runs have started and not ended (their root spans), exact at each change; a root read more than the " +
			"flow horizon after it started is left out, and counted (`Summary.CountersNotDrawn`)"},
	DecodeDelta: {"decode Δ ns (measure − base)", "", "", "rank pair of a comparison (`Compare`), under its measure process",
		"at measure's i-th decode step, its `chip.run` duration minus that of base's i-th, exact ns; one y-axis for every pair"},
}

// Row is a row of Table.
type Row struct {
	// A track is named prefix+value+suffix, its value a callable's hid or
	// a device; slot stands for the value in documents.
	Prefix, Slot, Suffix string
	Per                  string // one track per what
	Doc                  string // what it shows, for documents (Markdown)
}

// name is the name of the track of kind k for value v (a hid in hex, a
// device, or "" when the kind has one name).
func (k Kind) name(v string) string {
	r := &Table[k]
	return r.Prefix + v + r.Suffix
}

// DocName is the kind's name as documents write it ("device N
// device_wall ns").
func (k Kind) DocName() string { return k.name(Table[k].Slot) }
