package strace

import (
	"fmt"
	"strconv"
)

// Kind says which record a [Record] holds.
type Kind uint8

// The record kinds, in the order [Counts] lists them.
const (
	KindSpan         Kind = iota + 1 // a [STRACE] v=1 span
	KindWallAnchor                   // a [CLOCK_ANCHOR] v=1 monotonic-to-wall mapping
	KindDeviceAnchor                 // a [CLOCK_ANCHOR] v=2 host-to-device-counter pairing
	KindBindPhase                    // a legacy "bind phase=" segment line
	KindStamp                        // a "[stamp]" first line
	KindAutoload                     // a torch_backend_autoload record
)

var kindNames = [...]string{
	KindSpan:         "span",
	KindWallAnchor:   "wall-anchor",
	KindDeviceAnchor: "device-anchor",
	KindBindPhase:    "bind-phase",
	KindStamp:        "stamp",
	KindAutoload:     "autoload",
}

func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Pos is where a record starts in its input.
type Pos struct {
	File   string // the name given with [WithName], or ""
	Line   int64  // 1-based physical line
	Offset int64  // 0-based byte offset of the record head (the '[' of its marker, the 'b' of "bind phase=" or the 't' of "torch_backend_autoload")
}

func (p Pos) String() string {
	file := p.File
	if file == "" {
		file = "<input>"
	}
	return fmt.Sprintf("%s:%d (byte %d)", file, p.Line, p.Offset)
}

// Prefix is the runtime's log prefix "[mono_ns=<ns>][T0x<hex>][<LEVEL>] <func>: "
// when it directly precedes a record.
type Prefix struct {
	Present bool
	MonoNS  int64  // when the line was written, CLOCK_MONOTONIC ns
	Thread  uint64 // the writing thread's pthread handle (not an OS tid)
	Level   string // TIMING, INFO, ...
	Func    string // the emitting function, e.g. emit_host_span
}

// ValueType says how an attribute value reads.
type ValueType uint8

// Attribute value types. Only canonical decimal text ("0", "42", "-7": no
// sign on zero, no leading zeros) is typed as an integer, so the text and the
// number always say the same thing and a value is written back byte for byte.
const (
	TypeString ValueType = iota // any other text
	TypeInt                     // fits int64; the number is in Attr.Int
	TypeUint                    // non-negative, above the int64 range; the number is in Attr.Uint
)

// Attr is one attribute of a span or a bind phase line.
type Attr struct {
	Key   string
	Value string // decoded text, a trailing '~' kept
	Int   int64  // the value when Type == TypeInt
	Uint  uint64 // the value when Type == TypeUint
	// Type is derived from Value by the reader and by the constructors.
	// (The small fields come last, so that an Attr takes 56 bytes, not 64:
	// a log holds millions.)
	Type ValueType

	// Bare marks a token without '=' (the whole token is in Key), as left by
	// a cut in the middle of a key.
	Bare bool
	// Truncated marks the last attribute of a record whose attribute text the
	// emitter cut at its length cap: its text ends in '~'.
	Truncated bool
	// MaybeCut marks the last attribute of a record that ended the input on
	// a last line without a line end, after its fixed fields: the log may
	// have been cut inside it, so its value (or key) may lack its end, and
	// attributes after it may be missing (Stats.MaybeCut counts them).
	MaybeCut bool
}

// String returns an attribute with text value, typed as the reader types it
// (String("n", "42") is TypeInt 42).
func String(key, value string) Attr {
	a := Attr{Key: key, Value: value}
	a.retype()
	return a
}

// Int returns an integer attribute.
func Int(key string, v int64) Attr {
	return Attr{Key: key, Value: strconv.FormatInt(v, 10), Type: TypeInt, Int: v}
}

// Uint returns an unsigned integer attribute. Values in the int64 range are
// typed TypeInt, as the reader types them.
func Uint(key string, v uint64) Attr {
	if v <= maxInt64 {
		return Int(key, int64(v))
	}
	return Attr{Key: key, Value: strconv.FormatUint(v, 10), Type: TypeUint, Uint: v}
}

// Int64 returns the value as an int64 when it is an integer in that range.
func (a Attr) Int64() (int64, bool) {
	if a.Type == TypeInt {
		return a.Int, true
	}
	return 0, false
}

// Uint64 returns the value as a uint64 when it is a non-negative integer.
func (a Attr) Uint64() (uint64, bool) {
	switch a.Type {
	case TypeInt:
		if a.Int >= 0 {
			return uint64(a.Int), true
		}
	case TypeUint:
		return a.Uint, true
	}
	return 0, false
}

// retype derives Type, Int and Uint from Value.
func (a *Attr) retype() {
	a.Type, a.Int, a.Uint = typeValue([]byte(a.Value))
}

// Span is one [STRACE] v=1 record.
type Span struct {
	Pid   int32
	Tid   int64
	Inv   uint64 // invocation id; (Pid, Inv) groups one run's spans
	Hid   uint64 // callable hash, printed in hex
	Depth int32
	Name  string // decoded; a trailing '~' kept when NameTruncated
	TS    int64  // host spans: CLOCK_MONOTONIC ns; device spans: ns from the run's device origin
	Dur   int64

	// Attrs in input order. The reader reuses this slice on the next Read;
	// use Clone to keep it.
	Attrs []Attr

	NameTruncated  bool // the emitter cut the name at its cap: it ends in '~'
	AttrsTruncated bool // the emitter cut the attribute text at its cap
}

// IsDevice reports whether the span carries clk=dev: its TS and Dur are on
// the device clock, as an offset from the invocation's device origin.
func (s *Span) IsDevice() bool {
	for i := range s.Attrs {
		if a := &s.Attrs[i]; a.Key == "clk" && !a.Bare {
			return a.Value == "dev"
		}
	}
	return false
}

// Attr returns the first attribute named key.
func (s *Span) Attr(key string) (Attr, bool) {
	for _, a := range s.Attrs {
		if a.Key == key && !a.Bare {
			return a, true
		}
	}
	return Attr{}, false
}

// End returns TS + Dur, saturating instead of overflowing.
func (s *Span) End() int64 {
	return satAdd(s.TS, s.Dur)
}

// Clone returns a copy that owns its Attrs.
func (s Span) Clone() Span {
	if s.Attrs != nil {
		s.Attrs = append([]Attr(nil), s.Attrs...)
	}
	return s
}

// WallAnchor is the per-process [CLOCK_ANCHOR] v=1 record mapping
// CLOCK_MONOTONIC to wall time: wall = WallNS + (mono - MonoNS).
type WallAnchor struct {
	Pid    int32
	MonoNS int64
	WallNS int64
}

// Wall maps a monotonic instant of the anchor's process to wall-clock ns
// since the Unix epoch; ok is false when the result overflows.
func (a WallAnchor) Wall(mono int64) (wall int64, ok bool) {
	d, ok1 := subInt64(mono, a.MonoNS)
	w, ok2 := addInt64(a.WallNS, d)
	return w, ok1 && ok2
}

// DeviceAnchor is a [CLOCK_ANCHOR] v=2 record: the device counter of device
// Dev read DevCyc at some host instant inside [HostNS, HostNS+WindowNS].
type DeviceAnchor struct {
	Pid      int32
	Tid      int64
	Dev      int32
	HostNS   int64  // CLOCK_MONOTONIC ns before the counter read
	WindowNS int64  // host ns from before to after the read; never negative
	DevCyc   uint64 // the counter value
	DevFreq  uint64 // the counter frequency in Hz; never zero
}

// Mid returns the midpoint of the host window and its half-width, the
// uncertainty of the pairing before counter quantisation.
func (a DeviceAnchor) Mid() (mid, halfWidth int64) {
	return a.HostNS + a.WindowNS/2, (a.WindowNS + 1) / 2
}

// BindPhase is a legacy bind-segment line of a runtime with a host prepare
// path:
//
//	bind phase=<name> start_ns=<ns> dur_ns=<ns> [k=v ...]
//
// Its attributes are raw text (the runtime does not percent-encode them).
type BindPhase struct {
	Source  string // the "[file:line]" tag between the log prefix and the marker, if any
	Phase   string
	StartNS uint64
	DurNS   uint64
	Attrs   []Attr // reused on the next Read; see Clone
}

// Clone returns a copy that owns its Attrs.
func (b BindPhase) Clone() BindPhase {
	if b.Attrs != nil {
		b.Attrs = append([]Attr(nil), b.Attrs...)
	}
	return b
}

// Stamp is the "[stamp] <commit> env ... <command>" line a measurement recipe
// writes first, recording the command and commit behind a log.
type Stamp struct {
	Text string // everything after "[stamp] "
}

// Commit returns the first word of the stamp, the commit the run used.
func (s Stamp) Commit() string {
	for i := 0; i < len(s.Text); i++ {
		if s.Text[i] == ' ' || s.Text[i] == '\t' {
			return s.Text[:i]
		}
	}
	return s.Text
}

// Record is one record read from a log. Kind says which of the kind-specific
// fields is set; the others are zero.
type Record struct {
	Kind   Kind
	Pos    Pos
	Prefix Prefix
	// Joined says that the record's line end is missing: the next record's
	// log prefix or marker follows its last byte directly on its line, as
	// when two ranks writing one stream join their records. The runtime
	// writes each record whole, so a joined record whose grammar completes
	// is complete (Stats.Joined counts them); a device anchor's dev_freq
	// can be confirmed against the other anchors of its device.
	Joined bool

	Span         Span
	WallAnchor   WallAnchor
	DeviceAnchor DeviceAnchor
	BindPhase    BindPhase
	Stamp        Stamp
	Autoload     Autoload
}

// Clone returns a copy that owns every slice, so it stays valid after the
// next Read.
func (r Record) Clone() Record {
	r.Span = r.Span.Clone()
	r.BindPhase = r.BindPhase.Clone()
	return r
}

const maxInt64 = 1<<63 - 1

func satAdd(a, b int64) int64 {
	if s, ok := addInt64(a, b); ok {
		return s
	}
	if b > 0 {
		return maxInt64
	}
	return -maxInt64 - 1
}

func addInt64(a, b int64) (int64, bool) {
	s := a + b
	return s, (s > a) == (b > 0)
}

func subInt64(a, b int64) (int64, bool) {
	d := a - b
	return d, (d < a) == (b > 0)
}
