package phasetrace

import (
	"runtime/debug"
	"testing"
)

func TestVersionText(t *testing.T) {
	devel := debug.Module{Path: "github.com/phasetrace/phasetrace", Version: "(devel)"}
	tagged := devel
	tagged.Version = "v0.4.1"
	pseudo := devel
	pseudo.Version = "v0.0.0-20261201201603-0f72ee432dbe"
	pseudoDirty := devel
	pseudoDirty.Version = "v0.4.2-0.20261201201603-0f72ee432dbe+dirty"
	rev := []debug.BuildSetting{{Key: "vcs.revision", Value: "1994655"}, {Key: "vcs.modified", Value: "false"}}
	dirty := []debug.BuildSetting{{Key: "vcs.revision", Value: "1994655"}, {Key: "vcs.modified", Value: "true"}}
	for _, c := range []struct {
		info *debug.BuildInfo
		ok   bool
		want string
	}{
		{&debug.BuildInfo{Main: tagged, Settings: rev}, true, "stracestat v0.4.1"},
		{&debug.BuildInfo{Main: devel, Settings: rev}, true, "stracestat " + ModuleVersion + " 1994655"},
		{&debug.BuildInfo{Main: pseudo, Settings: rev}, true, "stracestat " + ModuleVersion + " 1994655"},
		{&debug.BuildInfo{Main: pseudoDirty, Settings: dirty}, true, "stracestat " + ModuleVersion + " 1994655+modified"},
		{&debug.BuildInfo{Main: devel, Settings: dirty}, true, "stracestat " + ModuleVersion + " 1994655+modified"},
		{&debug.BuildInfo{Main: devel}, true, "stracestat " + ModuleVersion},
		{&debug.BuildInfo{}, true, "stracestat " + ModuleVersion},
		{nil, false, "stracestat " + ModuleVersion},
	} {
		if got := versionText("stracestat", c.info, c.ok); got != c.want {
			t.Errorf("versionText = %q, want %q", got, c.want)
		}
	}
}
