package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/phasetrace/phasetrace"
)

// sides reads -compare's two arguments, BASE and MEASURE, each a log or
// logs joined by commas, into the logs, base's first.
func (cfg *config) sides() error {
	if !cfg.compare {
		return nil
	}
	if len(cfg.logs) != 2 {
		return fmt.Errorf("-compare takes two arguments, BASE MEASURE (each a log or logs joined by commas), not %d", len(cfg.logs))
	}
	if len(cfg.records) > 0 || len(cfg.calibration) > 0 || len(cfg.workers) > 0 || cfg.mpi {
		return errors.New("-compare takes no -records, -calibration, -worker or -mpi")
	}
	var logs []string
	for i, side := range cfg.logs {
		for _, l := range strings.Split(side, ",") {
			if l == "" {
				return fmt.Errorf("-compare: an empty log name in %s %q", []string{"BASE", "MEASURE"}[i], side)
			}
			logs = append(logs, l)
		}
		if i == 0 {
			cfg.baseLogs = len(logs)
		}
	}
	cfg.logs = logs
	return nil
}

// convert converts the inputs, or compares the two sides with -compare.
func (cfg *config) convert(w io.Writer, inputs []phasetrace.Input, opts []phasetrace.Option) (*phasetrace.Summary, error) {
	if !cfg.compare {
		return phasetrace.Convert(w, inputs, opts...)
	}
	return phasetrace.Compare(w, inputs[:cfg.baseLogs], inputs[cfg.baseLogs:], opts...)
}
