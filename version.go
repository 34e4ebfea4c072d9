package phasetrace

import "runtime/debug"

// ModuleVersion is the version of this code: the release it is, or the
// release it leads to with a -dev suffix. -version prints it when the build
// carries no module version (a build from a clone, go run, go build with
// -buildvcs=false).
const ModuleVersion = "v0.1.0-dev"

// Version is the line a command prints for -version: the command's name
// and the module version it was built from or, for a build from a clone,
// ModuleVersion and the VCS revision (+modified when the work tree had
// changes) when the build was stamped with one.
func Version(command string) string {
	info, ok := debug.ReadBuildInfo()
	return versionText(command, info, ok)
}

func versionText(name string, info *debug.BuildInfo, ok bool) string {
	if !ok || info == nil {
		return name + " " + ModuleVersion
	}
	v := info.Main.Version
	if v != "" && v != "(devel)" {
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
		return name + " " + ModuleVersion
	}
	if modified {
		rev += "+modified"
	}
	return name + " " + ModuleVersion + " " + rev
}
