package testtools

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// A Tier is the tests that need one thing a machine with only Go and
// /bin/sh lacks: a program, or a precondition such as root. Without it
// they skip, and make test names the tier at its end (SkippedDirEnv), so
// that nobody reads a skip as a pass; under the tier's require variable
// (.ci/run sets them) they fail instead.
type Tier struct {
	// Needs are the names tests ask Find or Require for, the first the one
	// the summary names ("no chromium" for any of the browsers).
	Needs []string
	// Tests says what skips, as a reader of make test's output knows it.
	Tests string
	// Package is the Debian package that provides it, or "" with Fix
	// saying what to do instead.
	Package string
	Fix     string
	// RequireEnv, set to "1", turns the skip into a failure; "" is
	// the package's RequireEnv.
	RequireEnv string
}

// RequireSSHDEnv, set to "1", turns a missing sshd into a failure. It is
// apart from RequireEnv because the real-sshd tier came first and .ci/run
// and the README name it.
const RequireSSHDEnv = "FLEET_AUDIT_REQUIRE_SSHD"

// Tiers is every tier a test may skip for want of a tool: Find and Require
// refuse a name that is not here, so a new skip cannot be a silent one.
// Debian's package names, as .ci/run installs them.
var Tiers = []Tier{
	{Needs: []string{"sshd"}, Tests: "real-sshd end-to-end tests", Package: "openssh-server", RequireEnv: RequireSSHDEnv},
	{Needs: []string{"ssh"}, Tests: "ProxyCommand and route choice held to OpenSSH's own client", Package: "openssh-client"},
	{Needs: []string{"chromium", "chromium-browser", "google-chrome"}, Tests: "the HTML report in a real headless browser", Package: "chromium"},
	{Needs: []string{"pdftotext"}, Tests: "the printed HTML report read back as text", Package: "poppler-utils"},
	{Needs: []string{"xmllint"}, Tests: "JUnit output validated against its XSD", Package: "libxml2-utils"},
	{Needs: []string{"cmark-gfm"}, Tests: "Markdown output rendered as GitHub renders it", Package: "cmark-gfm"},
	{Needs: []string{"python3-jsonschema", "python3"}, Tests: "the JSON report validated against docs/results.schema.json", Package: "python3-jsonschema"},
	{Needs: []string{"promtool"}, Tests: "the Prometheus textfile and example rules under promtool", Package: "prometheus"},
	{Needs: []string{"systemd-analyze"}, Tests: "the example timer and service under systemd-analyze verify", Package: "systemd"},
	{Needs: []string{"kubectl"}, Tests: "--from-cluster and discover through a real kubectl", Package: "kubernetes-client"},
	{Needs: []string{"ansible", "ansible-inventory", "ansible-playbook"}, Tests: "inventories, --limit and playbooks held to Ansible's own reading", Package: "ansible-core"},
	{Needs: []string{"zsh"}, Tests: "completion loaded into a real zsh", Package: "zsh"},
	{Needs: []string{"fish"}, Tests: "completion loaded into a real fish", Package: "fish"},
	{Needs: []string{"bash"}, Tests: "probes and completion under bash", Package: "bash"},
	{Needs: []string{"sh"}, Tests: "probes under this machine's /bin/sh", Package: "dash"},
	{Needs: []string{"dash"}, Tests: "probes under dash, Debian's /bin/sh", Package: "dash"},
	{Needs: []string{"busybox"}, Tests: "probes under busybox sh and awk", Package: "busybox"},
	{Needs: []string{"gawk"}, Tests: "the RHEL and SUSE shapes under GNU awk", Package: "gawk"},
	{Needs: []string{"unshare"}, Tests: "the ground truth with each shell bound over /bin/sh", Package: "util-linux"},
	{Needs: []string{"curl"}, Tests: "the curl stub held to the real curl, and the GitLab example's note step", Package: "curl"},
	{Needs: []string{"jq"}, Tests: "the GitLab example's merge request note, updated in place", Package: "jq"},
	// Without cc Go turns cgo off, and make test runs without -race.
	{Needs: []string{"cc"}, Tests: "the race detector, and simulated nodes' procfs shim (proc/sys as the kernel serves it)", Package: "gcc libc6-dev"},
	{Needs: []string{"sudo", "visudo"}, Tests: "become: sudo through a real login", Package: "sudo"},
	{Needs: []string{"useradd", "userdel"}, Tests: "tests that create a throw-away login", Package: "passwd"},
	{Needs: []string{"root"}, Tests: "tests that log in as another user, run probes as another uid or plant files in a private mount namespace", Fix: "run make test as root"},
	{Needs: []string{"newer-mawk"}, Tests: "probes under Debian 13's mawk (nanosecond srand)", Fix: ".ci/newer-mawk.sh DIR, then FLEET_AUDIT_NEWER_MAWK=DIR/bin/awk"},
	{Needs: []string{"make", "git"}, Tests: "make version and the CI examples' install step against this git checkout", Package: "make git"},
}

// tierOf returns the tier that needs name.
func tierOf(name string) (Tier, bool) {
	for _, t := range Tiers {
		for _, n := range t.Needs {
			if n == name {
				return t, true
			}
		}
	}
	return Tier{}, false
}

// requireEnv is the variable that makes t's skip a failure.
func (t Tier) requireEnv() string {
	if t.RequireEnv != "" {
		return t.RequireEnv
	}
	return RequireEnv
}

// Line is the tier's line in make test's summary.
func (t Tier) Line() string {
	fix := t.Fix
	if t.Package != "" {
		fix = "apt-get install " + t.Package
	}
	lack := "no " + t.Needs[0]
	if t.Needs[0] == "root" {
		lack = "not root"
	}
	return fmt.Sprintf("skipped: %s — %s (%s)", t.Tests, lack, fix)
}

// SkippedDirEnv names a directory where a skipped tier leaves a file
// holding its Line, one file per tier whatever the number of tests and
// processes that skip for it. make test sets it and prints the lines after
// go test: go test shows nothing of a passing package, skips included.
const SkippedDirEnv = "FLEET_AUDIT_SKIPPED_DIR"

// Absent is the lack of need (a name in Tiers) outside a test (a TestMain,
// a testscript condition): an error when the tier's require variable is
// set, else nil once the tier is recorded as skipped.
func Absent(need string) error {
	tier, ok := tierOf(need)
	if !ok {
		return fmt.Errorf("testtools: %q is in no tier of testtools.Tiers: add it there, with the package that provides it", need)
	}
	if env := tier.requireEnv(); os.Getenv(env) == "1" {
		return fmt.Errorf("%s is missing and %s=1 requires it (%s)", need, env, strings.TrimPrefix(tier.Line(), "skipped: "))
	}
	return record(tier)
}

// record leaves tier's line under SkippedDirEnv, when it is set. Several
// processes may record one tier at once: each writes its own file and
// renames it into place, so the reader sees one whole line.
func record(tier Tier) error {
	dir := os.Getenv(SkippedDirEnv)
	if dir == "" {
		return nil
	}
	f, err := os.CreateTemp(dir, ".tier-")
	if err != nil {
		return fmt.Errorf("testtools: record a skipped tier: %w", err)
	}
	_, err = f.WriteString(tier.Line() + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), filepath.Join(dir, tier.Needs[0]))
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("testtools: record a skipped tier: %w", err)
	}
	return nil
}
