package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/fleet-audit/fleet-audit/internal/testtools"
)

// TestVersionOf: what a binary says it is, from each kind of build: the
// Makefile's stamp, a go install of a tag, a go build in a checkout that
// recorded only a commit (clean and modified), and a build with no
// information at all.
func TestVersionOf(t *testing.T) {
	const revision = "fd34f4caf3dded080b570801eca364a8734e726e"
	build := func(mainVersion string, settings ...debug.BuildSetting) *debug.BuildInfo {
		return &debug.BuildInfo{
			GoVersion: "go1.26.3",
			Main:      debug.Module{Path: "github.com/fleet-audit/fleet-audit", Version: mainVersion},
			Settings:  settings,
		}
	}
	vcs := func(modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: revision},
			{Key: "vcs.time", Value: "2026-12-04T04:12:11Z"}, {Key: "vcs.modified", Value: modified}}
	}
	for _, tc := range []struct {
		name    string
		stamped string
		info    *debug.BuildInfo
		want    string
		line    string
	}{
		{name: "the Makefile's stamp wins", stamped: "v1.2.3-4-gabcdef0-dirty", info: build("v1.2.3", vcs("true")...),
			want: "v1.2.3-4-gabcdef0-dirty", line: "fleet-audit v1.2.3-4-gabcdef0-dirty (go1.26.3)"},
		{name: "module version of go install @tag", info: build("v1.2.3"),
			want: "v1.2.3", line: "fleet-audit v1.2.3 (go1.26.3)"},
		{name: "pseudo-version of a modified checkout", info: build("v0.0.0-20261204041211-fd34f4caf3dd+dirty", vcs("true")...),
			want: "v0.0.0-20261204041211-fd34f4caf3dd+dirty", line: "fleet-audit v0.0.0-20261204041211-fd34f4caf3dd+dirty (go1.26.3)"},
		{name: "devel with a clean revision", info: build("(devel)", vcs("false")...),
			want: "v" + release + "-dev+fd34f4caf3dd", line: "fleet-audit v" + release + "-dev+fd34f4caf3dd (go1.26.3)"},
		{name: "devel with a modified revision", info: build("(devel)", vcs("true")...),
			want: "v" + release + "-dev+fd34f4caf3dd-dirty", line: "fleet-audit v" + release + "-dev+fd34f4caf3dd-dirty (go1.26.3)"},
		{name: "devel without vcs", info: build("(devel)"),
			want: "v" + release + "-dev", line: "fleet-audit v" + release + "-dev (go1.26.3)"},
		{name: "no build info", info: nil,
			want: "v" + release + "-dev", line: "fleet-audit v" + release + "-dev (" + runtime.Version() + ")"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := versionOf(tc.stamped, tc.info)
			if got != tc.want {
				t.Errorf("versionOf = %q, want %q", got, tc.want)
			}
			if line := versionLine(got, tc.info); line != tc.line {
				t.Errorf("versionLine = %q, want %q", line, tc.line)
			}
		})
	}
}

// TestMakeVersion: the Makefile's version is this source's release, as a
// development build with its commit or as the release's tag, never a bare
// commit hash; the release is a semver release number.
func TestMakeVersion(t *testing.T) {
	if !regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+$`).MatchString(release) {
		t.Fatalf("release %q is not MAJOR.MINOR.PATCH", release)
	}
	for _, tool := range []string{"make", "git"} {
		testtools.Find(t, tool)
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, ".git")); err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	out, err := exec.Command("make", "-s", "-C", root, "version").Output()
	if err != nil {
		t.Fatalf("make version: %v", err)
	}
	got := strings.TrimSpace(string(out))
	want := regexp.MustCompile(`^v` + regexp.QuoteMeta(release) + `(-dev\+[0-9a-f]{12})?(-dirty)?$`)
	if !want.MatchString(got) {
		t.Errorf("make version = %q, want v%s or v%s-dev+COMMIT", got, release, release)
	}
}
