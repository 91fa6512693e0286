package main

import (
	"runtime"
	"runtime/debug"
)

// release is the release this source is, or the one it heads for between
// releases: the one home of the number (the Makefile reads it from here).
// A build of a release tag is that tag (v0.1.0); any other build is a
// development build of this release and names its commit
// (v0.1.0-dev+2a971a8c1234, semver: a pre-release with build metadata), so
// that a report or --version never shows a bare commit hash. Raise it
// right after tagging a release.
const release = "0.1.0"

// version is what the Makefile stamps with -ldflags "-X main.version=..."
// (make version prints it); it is empty in a binary built by go install or
// a plain go build, which describes itself from its build info instead.
var version string

// buildVersion is this binary's version, in the app's --version, the
// reports and the JSON results.
var buildVersion = func() string {
	info, _ := debug.ReadBuildInfo()
	return versionOf(version, info)
}()

// shortRevisionLen is as long as the commit in a Go pseudo-version
// (golang.org/ref/mod#pseudo-versions), so that the two spellings of one
// build can be compared by eye.
const shortRevisionLen = 12

// versionOf is a binary's version from what its build knew, best first:
// the version the Makefile stamped; the module version the go command
// recorded (the tag of a `go install ...@v1.2.3`, or a pseudo-version,
// "+dirty" when the tree was modified); a development build of release
// with the VCS revision when the go command recorded a commit but no
// version; a development build of release alone when it recorded neither
// (a test binary, or -buildvcs=false outside a module download).
func versionOf(stamped string, info *debug.BuildInfo) string {
	if stamped != "" {
		return stamped
	}
	dev := "v" + release + "-dev"
	if info == nil {
		return dev
	}
	// "(devel)" is what the go command writes for a main module it has no
	// version for (runtime/debug.Module).
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var revision string
	var modified bool
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			revision = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if revision == "" {
		return dev
	}
	if len(revision) > shortRevisionLen {
		revision = revision[:shortRevisionLen]
	}
	if modified {
		revision += "-dirty"
	}
	return dev + "+" + revision
}

// versionLine is what --version prints: the version and the Go release
// that built it, since a bug report needs both.
func versionLine(v string, info *debug.BuildInfo) string {
	goVersion := runtime.Version()
	if info != nil && info.GoVersion != "" {
		goVersion = info.GoVersion
	}
	return "fleet-audit " + v + " (" + goVersion + ")"
}
