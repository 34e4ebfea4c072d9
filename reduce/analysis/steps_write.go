package analysis

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/parquet-go/parquet-go"
)

// StepFormat is how a [StepWriter] writes its table.
type StepFormat uint8

// The formats of the steps and binds tables.
const (
	FormatText    StepFormat = iota // aligned columns for a terminal, "-" for empty
	FormatCSV                       // RFC 4180 with a header line, empty for null
	FormatJSON                      // JSON Lines: one object per row, null for empty
	FormatParquet                   // Parquet, the columns typed (int64, uint64, string, bool), empty as null
)

var formatNames = [...]string{"text", "csv", "json", "parquet"}

// String returns the format's name: text, csv, json or parquet.
func (f StepFormat) String() string {
	if int(f) < len(formatNames) {
		return formatNames[f]
	}
	return fmt.Sprintf("StepFormat(%d)", int(f))
}

// ErrStepFormat is wrapped by the error of [ParseStepFormat].
var ErrStepFormat = errors.New("analysis: unknown format")

// ParseStepFormat reads a format's name.
func ParseStepFormat(s string) (StepFormat, error) {
	for i, n := range formatNames {
		if n == s {
			return StepFormat(i), nil
		}
	}
	return 0, fmt.Errorf("%w %q: want %s", ErrStepFormat, s, strings.Join(formatNames[:], ", "))
}

// parquetRowGroup is how many rows a Parquet row group holds: the rows a
// StepWriter holds at most before it writes them out.
const parquetRowGroup = 1 << 14

// StepWriter writes the steps or binds table a row at a time, as the runs
// come: it holds no row once written (Parquet: at most a row group of
// 16 384 rows). Like encoding/csv's Writer it keeps the first error of
// the output, and every later Write and Close returns it.
type StepWriter struct {
	w      io.Writer
	table  StepTable
	format StepFormat
	header bool // written
	buf    []byte
	err    error
	steps  *parquet.GenericWriter[stepRecord]
	binds  *parquet.GenericWriter[bindRecord]
	srow   [1]stepRecord
	brow   [1]bindRecord
}

// NewStepWriter returns a writer of table t in format f to w.
func NewStepWriter(w io.Writer, t StepTable, f StepFormat) *StepWriter {
	sw := &StepWriter{w: w, table: t, format: f}
	if f == FormatParquet {
		opts := []parquet.WriterOption{parquet.MaxRowsPerRowGroup(parquetRowGroup), parquet.Compression(&parquet.Zstd)}
		if t == TableBinds {
			sw.binds = parquet.NewGenericWriter[bindRecord](w, opts...)
		} else {
			sw.steps = parquet.NewGenericWriter[stepRecord](w, opts...)
		}
	}
	return sw
}

// Write writes the run's row (steps) or its bind segments' rows (binds).
func (sw *StepWriter) Write(s *Step) error {
	if sw.err != nil {
		return sw.err
	}
	sw.writeHeader()
	if sw.table == TableBinds {
		for i := range s.Binds {
			sw.bindRow(s, &s.Binds[i])
		}
		return sw.err
	}
	if sw.format == FormatParquet {
		sw.srow[0] = stepRecordOf(s)
		_, err := sw.steps.Write(sw.srow[:])
		sw.fail(err)
		return sw.err
	}
	b := sw.buf[:0]
	for i := range stepColumns {
		b = sw.appendCell(b, i, stepColumns[i].Name, stepColumns[i].get(s))
	}
	sw.line(b)
	return sw.err
}

func (sw *StepWriter) bindRow(s *Step, seg *StepSegment) {
	if sw.err != nil {
		return
	}
	if sw.format == FormatParquet {
		sw.brow[0] = bindRecordOf(s, seg)
		_, err := sw.binds.Write(sw.brow[:])
		sw.fail(err)
		return
	}
	b := sw.buf[:0]
	for i := range bindColumns {
		b = sw.appendCell(b, i, bindColumns[i].Name, bindColumns[i].get(s, seg))
	}
	sw.line(b)
}

// Close writes what is held (the header of a table without rows, Parquet's
// last row group and footer) and returns the first error. It does not
// close the underlying writer.
func (sw *StepWriter) Close() error {
	sw.writeHeader()
	switch {
	case sw.steps != nil:
		sw.fail(sw.steps.Close())
	case sw.binds != nil:
		sw.fail(sw.binds.Close())
	}
	return sw.err
}

func (sw *StepWriter) fail(err error) {
	if err != nil && sw.err == nil {
		sw.err = err
	}
}

// writeHeader writes the header line of a text or CSV table, once.
func (sw *StepWriter) writeHeader() {
	if sw.header || sw.err != nil {
		return
	}
	sw.header = true
	if sw.format != FormatText && sw.format != FormatCSV {
		return
	}
	b := sw.buf[:0]
	for i, c := range sw.table.Columns() {
		if sw.format == FormatCSV {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, c.Name...)
			continue
		}
		b = pad(b, i, textWidth(c.Name), c.Name)
	}
	sw.line(b)
}

// line writes one line in one Write.
func (sw *StepWriter) line(b []byte) {
	b = append(b, '\n')
	sw.buf = b
	if sw.err == nil {
		_, err := sw.w.Write(b)
		sw.fail(err)
	}
}

// appendCell appends the i-th cell of a row in the writer's format.
func (sw *StepWriter) appendCell(b []byte, i int, name string, c cell) []byte {
	switch sw.format {
	case FormatCSV:
		if i > 0 {
			b = append(b, ',')
		}
		if c.kind == cellString && strings.ContainsAny(c.s, ",\"\r\n") {
			return append(append(b, '"'), strings.ReplaceAll(c.s, `"`, `""`)+`"`...)
		}
		return c.appendTo(b)
	case FormatJSON:
		if i == 0 {
			b = append(b, '{')
		} else {
			b = append(b, ',')
		}
		b = append(append(append(b, '"'), name...), `":`...)
		switch {
		case !c.ok:
			b = append(b, "null"...)
		case c.kind == cellString || c.kind == cellHex:
			q, _ := json.Marshal(string(c.appendTo(nil)))
			b = append(b, q...)
		default:
			b = c.appendTo(b)
		}
		if i == len(sw.table.Columns())-1 {
			b = append(b, '}')
		}
		return b
	}
	v := c.appendTo(nil)
	if !c.ok {
		v = []byte("-")
	}
	return pad(b, i, textWidth(name), string(v))
}

// textWidth is the width of a text column: its name's, at least 12 (19
// for times, which are that long).
func textWidth(name string) int {
	switch name {
	case "start_ns", "wall_ns":
		return 19
	case "hid", "segment", "source":
		return max(len(name), 18)
	}
	return max(len(name), 12)
}

// pad appends v right-aligned in width, two spaces after the column before.
func pad(b []byte, i, width int, v string) []byte {
	if i > 0 {
		b = append(b, "  "...)
	}
	for range width - len(v) {
		b = append(b, ' ')
	}
	return append(b, v...)
}
