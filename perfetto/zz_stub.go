package perfetto

import "errors"

const DefaultMaxTracks = 1 << 16
const MaxDepth = 512

var ErrWrite = errors.New("perfetto: writing the trace")
var ErrTooDeep = errors.New("too deep")
var ErrUnverifiable = errors.New("unverifiable")

type Overflow struct {
	Track string
	Lane  int
	Name  string
	TS    int64
	Dur   int64
	Ref   uint64
	Err   error
}

func WithMaxTracks(n int) Option              { return func(*config) {} }
func WithOverflowFunc(f func(Overflow)) Option { return func(*config) {} }
func (w *Writer) TracksLeft() int              { return 1 << 20 }
