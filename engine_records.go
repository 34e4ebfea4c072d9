package phasetrace

import (
	"fmt"
)

// openRecords hands the second pass the host_phase_records artifacts the
// survey indexed (passIndex): each is opened when a run first needs a
// pass of it, and read at the passes the runs need.
func (c *converter) openRecords() error {
	for _, x := range c.passIndexes {
		x.progress = c.progress
		c.runDrawer.artifacts = append(c.runDrawer.artifacts, x)
	}
	return nil
}

// closeRecords closes the artifacts the second pass opened; an error
// closing one is *err when there was none.
func (c *converter) closeRecords(err *error) {
	for _, x := range c.runDrawer.artifacts {
		if cerr := x.close(); *err == nil && cerr != nil {
			*err = fmt.Errorf("phasetrace: %s: %w", x.in.Name, cerr)
		}
	}
}
