// Package testtools finds external programs that some tests drive (a real
// browser, an XML schema validator, a Markdown renderer). On a developer
// machine a missing program skips the test; in CI, where .ci/run installs
// them and sets RequireEnv, a missing program fails it, so a broken install
// can never turn the browser or schema tests into silent passes. It also
// holds what golden and fixture tests share to say how output differs.
package testtools

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
)

// RequireEnv, set to "1", turns a missing tool into a test failure.
const RequireEnv = "FLEET_AUDIT_REQUIRE_TOOLS"

// Find returns the path of the first of names found in PATH. Without one it
// skips t, or fails it when RequireEnv is set.
func Find(t testing.TB, names ...string) string {
	t.Helper()
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	if os.Getenv(RequireEnv) == "1" {
		t.Fatalf("none of %v is installed and %s=1 requires it (.ci/run installs it)", names, RequireEnv)
	}
	t.Skipf("none of %v is installed (set %s=1 to fail instead)", names, RequireEnv)
	return ""
}

// Require skips t, or fails it when RequireEnv is set, for a precondition
// other than a program (root, a kernel feature) that CI provides.
func Require(t testing.TB, what string) {
	t.Helper()
	if os.Getenv(RequireEnv) == "1" {
		t.Fatalf("this test needs %s and %s=1 requires it", what, RequireEnv)
	}
	t.Skipf("this test needs %s (set %s=1 to fail instead)", what, RequireEnv)
}

// WithCompiler calls enable with the path of the C compiler (cc), for a
// TestMain that builds a test helper library. Without a compiler it does
// nothing and returns nil, or an error when RequireEnv is set.
func WithCompiler(enable func(cc string) error) error {
	cc, err := exec.LookPath("cc")
	if err != nil {
		if os.Getenv(RequireEnv) == "1" {
			return fmt.Errorf("no C compiler (cc) and %s=1 requires one (.ci/run installs gcc)", RequireEnv)
		}
		fmt.Fprintln(os.Stderr, "testtools: no C compiler: simulated nodes read proc/sys as plain files")
		return nil
	}
	return enable(cc)
}
