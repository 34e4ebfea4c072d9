package phasetrace

import (
	"runtime/debug"
	"strings"
)

// Version describes the build of the running program for a command's
// -version flag: the command's name, the main module and its version, the
// source revision it was built from (with +modified when the work tree had
// changes) and the Go version.
func Version(command string) string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return command + " (no build information)"
	}
	v := []string{command, info.Main.Path, info.Main.Version}
	var rev, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = "+modified"
			}
		}
	}
	if rev != "" {
		v = append(v, "revision "+rev+modified)
	}
	return strings.Join(append(v, info.GoVersion), " ")
}
