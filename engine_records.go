package phasetrace

import (
	"fmt"
	"io"

	"github.com/phasetrace/phasetrace/strace"
)

// openRecords opens the host_phase_records artifacts again for the second
// pass, which reads each through a window as the runs are drawn
// (passWindow), so that the passes held do not grow with the artifact.
func (c *converter) openRecords() error {
	for _, in := range c.cfg.records {
		rc, err := openInput(in)
		if err != nil {
			return fmt.Errorf("phasetrace: %s: %w", in.Name, err)
		}
		c.recordFiles = append(c.recordFiles, rc)
		pr := strace.NewPhaseRecordsReader(c.progress.wrap(rc), strace.WithName(in.Name))
		name := in.Name
		c.runDrawer.windows = append(c.runDrawer.windows, newPassWindow(func() (strace.PhasePass, error) {
			p, err := pr.Read()
			if err != nil && err != io.EOF {
				err = fmt.Errorf("phasetrace: %s: %w", name, err)
			}
			return p, err
		}))
	}
	return nil
}

// closeRecords closes the artifacts openRecords opened; an error closing
// one is *err when there was none.
func (c *converter) closeRecords(err *error) {
	for i, rc := range c.recordFiles {
		if cerr := rc.Close(); *err == nil && cerr != nil {
			*err = fmt.Errorf("phasetrace: %s: %w", c.cfg.records[i].Name, cerr)
		}
	}
	c.recordFiles = nil
}
