package phasetrace

import "runtime/debug"

// Version is the line a command prints for -version: the command's name
// and the module version it was built from, or "(devel)" and the VCS
// revision (+modified when the work tree had changes) for a build from a
// clone.
func Version(command string) string {
	info, ok := debug.ReadBuildInfo()
	return versionText(command, info, ok)
}

func versionText(name string, info *debug.BuildInfo, ok bool) string {
	if !ok || info == nil {
		return name + " (unknown version: built without module information)"
	}
	v := info.Main.Version
	if v == "" {
		v = "(devel)"
	}
	if v != "(devel)" {
		return name + " " + v
	}
	var rev string
	modified := false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if rev == "" {
		return name + " " + v
	}
	if modified {
		rev += "+modified"
	}
	return name + " " + v + " " + rev
}
