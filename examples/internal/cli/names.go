package cli

import (
	"os"
	"path/filepath"
	"strings"
)

// TraceName is the trace a log converts to by default: its name with
// .pftrace instead of .log or .txt (and .gz); stdin.pftrace for standard
// input ("-"). A split trace's parts are named after it.
func TraceName(log string) string {
	if log == "-" {
		return "stdin.pftrace"
	}
	base := strings.TrimSuffix(log, ".gz")
	if ext := filepath.Ext(base); ext == ".log" || ext == ".txt" {
		base = strings.TrimSuffix(base, ext)
	}
	return base + ".pftrace"
}

// RecordsFile is the name the runtime gives its host_phase_records
// artifact, written beside its log.
const RecordsFile = "host_phase_records.jsonl"

// RecordsBeside is the RecordsFile beside log, a regular file, or "" when
// there is none (or log is standard input).
func RecordsBeside(log string) string {
	if log == "-" {
		return ""
	}
	path := filepath.Join(filepath.Dir(log), RecordsFile)
	if st, err := os.Stat(path); err != nil || !st.Mode().IsRegular() {
		return ""
	}
	return path
}
