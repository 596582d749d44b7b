package version

import (
	"runtime/debug"
	"testing"
)

func TestFromBuildInfo(t *testing.T) {
	const rev = "4b43058aa1b2c3d4e5f60718293a4b5c6d7e8f90"
	vcs := []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.time", Value: "2026-12-01T20:00:00Z"}}
	for _, tc := range []struct {
		name     string
		bi       debug.BuildInfo
		want     Info
		wantText string
	}{
		{"no version, no VCS (-buildvcs=false)", debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}},
			Info{Version: "devel", Go: "go1.26.8"}, "devel"},
		{"empty version", debug.BuildInfo{}, Info{Version: "devel"}, "devel"},
		{"devel with a commit", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs},
			Info{Version: "devel", Commit: rev, Time: "2026-12-01T20:00:00Z"}, "devel+4b43058aa1b2"},
		{"a release", debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}}, Info{Version: "v1.2.3"}, "v1.2.3"},
		{"a pseudo-version carries its commit", debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261201200000-4b43058aa1b2"}, Settings: vcs},
			Info{Version: "v0.0.0-20261201200000-4b43058aa1b2", Commit: rev, Time: "2026-12-01T20:00:00Z"}, "v0.0.0-20261201200000-4b43058aa1b2"},
		{"modified", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: append(vcs, debug.BuildSetting{Key: "vcs.modified", Value: "true"})},
			Info{Version: "devel", Commit: rev, Time: "2026-12-01T20:00:00Z", Modified: true}, "devel+4b43058aa1b2+dirty"},
		{"a dirty pseudo-version is not marked twice", debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261201200000-4b43058aa1b2+dirty"}, Settings: append(vcs, debug.BuildSetting{Key: "vcs.modified", Value: "true"})},
			Info{Version: "v0.0.0-20261201200000-4b43058aa1b2+dirty", Commit: rev, Time: "2026-12-01T20:00:00Z", Modified: true}, "v0.0.0-20261201200000-4b43058aa1b2+dirty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := FromBuildInfo(&tc.bi)
			if got != tc.want {
				t.Errorf("FromBuildInfo = %+v, want %+v", got, tc.want)
			}
			if s := got.String(); s != tc.wantText {
				t.Errorf("String() = %q, want %q", s, tc.wantText)
			}
		})
	}
}

func TestGetNeverEmpty(t *testing.T) {
	if v := Get(); v.Version == "" || v.String() == "" {
		t.Errorf("Get() = %+v: no version", v)
	}
}
