package phasetrace

import (
	"regexp"
	"runtime/debug"
)

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

// pseudoVersion matches the version the go command makes up for a build
// from a clone (v0.0.0-20261201201603-0f72ee432dbe, +dirty when the work
// tree had changes): it names no release, so -version prints
// ModuleVersion and the revision instead.
var pseudoVersion = regexp.MustCompile(`-(0\.)?[0-9]{14}-[0-9a-f]{12}(\+dirty)?$`)

// modulePath is this module's path, as a build's dependencies name it.
const modulePath = "github.com/phasetrace/phasetrace"

// libraryVersion is the version of phasetrace this program was built
// with, as a trace says it (about): Version's, when phasetrace is the
// main module (its commands, its tests), else the version the user's
// module requires, or ModuleVersion and the directory a replace points at.
func libraryVersion() string {
	info, ok := debug.ReadBuildInfo()
	return libraryVersionText(info, ok)
}

func libraryVersionText(info *debug.BuildInfo, ok bool) string {
	if ok && info != nil && info.Main.Path != modulePath {
		for _, d := range info.Deps {
			if d.Path != modulePath {
				continue
			}
			if d.Replace != nil {
				return "phasetrace " + ModuleVersion + " (" + d.Replace.Path + ")"
			}
			if d.Version != "" && !pseudoVersion.MatchString(d.Version) {
				return "phasetrace " + d.Version
			}
			return "phasetrace " + ModuleVersion + " " + d.Version
		}
	}
	return versionText("phasetrace", info, ok)
}

func versionText(name string, info *debug.BuildInfo, ok bool) string {
	if !ok || info == nil {
		return name + " " + ModuleVersion
	}
	v := info.Main.Version
	if v != "" && v != "(devel)" && !pseudoVersion.MatchString(v) {
		return name + " " + v // a release, as go install fetched it
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
