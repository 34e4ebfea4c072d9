package phasetrace

import (
	"fmt"
	"io"

	"github.com/phasetrace/phasetrace/strace"
)

func (c *converter) withInput(in Input, fn func(io.Reader) error) error {
	_, err := c.withInputCut(in, fn)
	return err
}

// withInputCut is withInput that also says why the input ended early when
// its stream was cut or damaged ("" when it was not): fn reads the bytes
// before the cut.
func (c *converter) withInputCut(in Input, fn func(io.Reader) error) (cut string, err error) {
	rc, err := openInput(in)
	if err != nil {
		return "", fmt.Errorf("phasetrace: %s: %w", in.Name, err)
	}
	err = fn(c.progress.wrap(rc))
	if cerr := rc.Close(); err == nil && cerr != nil {
		err = cerr
	}
	cut, _ = rc.Cut()
	if err != nil {
		return cut, fmt.Errorf("phasetrace: %s: %w", in.Name, err)
	}
	return cut, nil
}

func inputSummary(name string, st strace.Stats, cut *CutReader) InputSummary {
	s := InputSummary{
		Name: name, Bytes: st.Bytes, Lines: st.Lines,
		Records: map[string]int64{
			"span": st.Records.Spans, "wall-anchor": st.Records.WallAnchors, "device-anchor": st.Records.DeviceAnchors,
			"bind-phase": st.Records.BindPhases, "stamp": st.Records.Stamps, "autoload": st.Records.Autoloads,
		},
		Torn: st.Torn, UnknownVersion: st.UnknownVersion, Malformed: st.Malformed, LongLines: st.LongLines, InLongLines: st.InLongLines,
		Joined: st.Joined, MaybeCut: st.MaybeCut,
	}
	for _, p := range st.Problems {
		s.Problems = append(s.Problems, p.Error())
	}
	s.ProblemsOmitted = st.ProblemsOmitted
	if cut != nil {
		if why, after := cut.Cut(); why != "" {
			s.Cut, s.CutAfter = why, after
		}
	}
	return s
}

// openInput opens in, to be read through a CutReader.
func openInput(in Input) (*CutReader, error) {
	rc, err := in.Open()
	if err != nil {
		return nil, err
	}
	return NewCutReader(rc), nil
}
