// Package testtools finds external programs that some tests drive (a real
// browser, an XML schema validator, a Markdown renderer). On a developer
// machine a missing program skips the test and records its tier (Tiers),
// which make test names at its end with the package to install; in CI,
// where .ci/run installs them and sets RequireEnv, a missing program fails
// it, so a broken install can never turn the browser or schema tests into
// silent passes. It also holds what golden and fixture tests share to say
// how output differs.
package testtools

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// RequireEnv, set to "1", turns a missing tool into a test failure.
const RequireEnv = "FLEET_AUDIT_REQUIRE_TOOLS"

// Find returns the path of the first of names found in PATH. Without one it
// skips t for want of names[0]'s tier (Tiers), or fails it when the tier's
// require variable is set.
func Find(t testing.TB, names ...string) string {
	t.Helper()
	// Checked where the tool is installed too, so that a tool in no tier
	// fails on every machine, not only on one that lacks it.
	if _, ok := tierOf(names[0]); !ok {
		t.Fatalf("testtools: %q is in no tier of testtools.Tiers: add it there, with the package that provides it", names[0])
	}
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	Require(t, names[0])
	return ""
}

// Require skips t for want of need, a name in Tiers (a program, or a
// precondition such as root), recording the tier for make test's summary;
// it fails t instead when the tier's require variable is set, or when need
// is in no tier.
func Require(t testing.TB, need string) {
	t.Helper()
	if err := Absent(need); err != nil {
		t.Fatal(err)
	}
	tier, _ := tierOf(need)
	t.Skipf("%s (set %s=1 to fail instead)", tier.Line(), tier.requireEnv())
}

// WithCompiler calls enable with the path of the C compiler (cc), for a
// TestMain that builds a test helper library. Without a compiler it
// records the cc tier as skipped and returns nil, or an error when
// RequireEnv is set.
func WithCompiler(enable func(cc string) error) error {
	cc, err := exec.LookPath("cc")
	if err != nil {
		if err := Absent("cc"); err != nil {
			return err
		}
		fmt.Fprintln(os.Stderr, "testtools: no C compiler: simulated nodes read proc/sys as plain files")
		return nil
	}
	return enable(cc)
}

// SkipShort skips t under -short (make test-short, the edit loop), saying
// why the test is slow: why completes "-short: ...", e.g. "starts a real
// sshd". The full tier (make test) runs it. One home for the -short rule,
// so that every skipped test says what the fast tier leaves out.
func SkipShort(t testing.TB, why string) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: " + why)
	}
}

// WantError fails the test unless err is nil when want is "", or an error
// whose text holds want.
func WantError(t testing.TB, err error, want string) {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Fatalf("error: %v", err)
	case want != "" && err == nil:
		t.Fatalf("no error, want %q", want)
	case want != "" && !strings.Contains(err.Error(), want):
		t.Fatalf("error %q, want %q", err, want)
	}
}
