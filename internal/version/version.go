// Package version says which satchel this is, from the build information
// the Go toolchain records in every binary: the module's version and, when
// the binary was built from a version-controlled checkout, the commit.
package version

import (
	"runtime/debug"
	"strings"
)

// Info is what the build recorded about the running binary. Fields the
// build did not record are empty (Commit with -buildvcs=false, or when
// built outside a checkout).
type Info struct {
	// Version is the main module's version: a release tag (v1.2.3), a
	// pseudo-version, or "devel" when the build recorded none.
	Version string `json:"version"`
	// Commit is the VCS revision the binary was built from.
	Commit string `json:"commit,omitempty"`
	// Time is the commit's time (RFC 3339), as the VCS recorded it.
	Time string `json:"time,omitempty"`
	// Modified says the checkout had uncommitted changes.
	Modified bool `json:"modified,omitempty"`
	// Go is the toolchain that built the binary.
	Go string `json:"go,omitempty"`
}

// Get returns the running binary's Info.
func Get() Info {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return Info{Version: "devel"}
	}
	return FromBuildInfo(bi)
}

// FromBuildInfo returns the Info that bi records.
func FromBuildInfo(bi *debug.BuildInfo) Info {
	in := Info{Version: bi.Main.Version, Go: bi.GoVersion}
	if in.Version == "" || in.Version == "(devel)" {
		in.Version = "devel"
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			in.Commit = s.Value
		case "vcs.time":
			in.Time = s.Value
		case "vcs.modified":
			in.Modified = s.Value == "true"
		}
	}
	return in
}

// String is the version a client sees (the MCP server's Implementation
// version, `satchel --version`): the module's version, and the short
// commit when the version does not already carry it (a pseudo-version
// ends with the commit's first 12 digits), with "+dirty" for a modified
// checkout unless the version says so already.
func (in Info) String() string {
	s := in.Version
	if c := shortCommit(in.Commit); c != "" && !strings.Contains(s, c) {
		s += "+" + c
	}
	if in.Modified && !strings.Contains(s, "dirty") {
		s += "+dirty"
	}
	return s
}

func shortCommit(c string) string {
	if len(c) > 12 {
		return c[:12]
	}
	return c
}
