package testtools

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// unrequired clears the require variables, which .ci/run sets for the
// whole suite, for a test of what a developer's machine does.
func unrequired(t *testing.T) {
	t.Helper()
	t.Setenv(RequireEnv, "")
	t.Setenv(RequireSSHDEnv, "")
}

func TestTierLine(t *testing.T) {
	for _, tc := range []struct{ need, want string }{
		{"sshd", "skipped: real-sshd end-to-end tests — no sshd (apt-get install openssh-server)"},
		{"google-chrome", "skipped: the HTML report in a real headless browser — no chromium (apt-get install chromium)"},
		{"python3", "skipped: the JSON report validated against docs/results.schema.json — no python3-jsonschema (apt-get install python3-jsonschema)"},
		{"root", "skipped: tests that log in as another user, run probes as another uid or plant files in a private mount namespace — not root (run make test as root)"},
		{"newer-mawk", "skipped: probes under Debian 13's mawk (nanosecond srand) — no newer-mawk (.ci/newer-mawk.sh DIR, then FLEET_AUDIT_NEWER_MAWK=DIR/bin/awk)"},
	} {
		tier, ok := tierOf(tc.need)
		if !ok {
			t.Errorf("%s: in no tier", tc.need)
			continue
		}
		if got := tier.Line(); got != tc.want {
			t.Errorf("%s:\ngot  %q\nwant %q", tc.need, got, tc.want)
		}
	}
}

// TestTiersAreOneEach: a need belongs to one tier, whose file name under
// SkippedDirEnv is its first need, and every tier says how to get it.
func TestTiersAreOneEach(t *testing.T) {
	seen := map[string]bool{}
	for _, tier := range Tiers {
		if len(tier.Needs) == 0 || tier.Tests == "" || (tier.Package == "") == (tier.Fix == "") {
			t.Errorf("%+v: wants needs, tests and one of package and fix", tier)
		}
		for _, n := range tier.Needs {
			if seen[n] {
				t.Errorf("%s is in two tiers", n)
			}
			seen[n] = true
			if n == "" || strings.ContainsAny(n, "/ ") || strings.HasPrefix(n, ".") {
				t.Errorf("%q cannot name a file", n)
			}
		}
	}
}

func TestAbsentRecordsATierOnce(t *testing.T) {
	for _, tc := range []struct {
		name     string
		require  string // the variable set to 1, if any
		needs    []string
		wantErr  string
		wantFile map[string]string
	}{
		{"one tier by two of its names", "", []string{"chromium", "google-chrome", "chromium"}, "",
			map[string]string{"chromium": "skipped: the HTML report in a real headless browser — no chromium (apt-get install chromium)\n"}},
		{"two tiers", "", []string{"xmllint", "sshd"}, "", map[string]string{
			"xmllint": "skipped: JUnit output validated against its XSD — no xmllint (apt-get install libxml2-utils)\n",
			"sshd":    "skipped: real-sshd end-to-end tests — no sshd (apt-get install openssh-server)\n"}},
		{"required tools fail", RequireEnv, []string{"xmllint"}, "xmllint is missing and FLEET_AUDIT_REQUIRE_TOOLS=1 requires it", map[string]string{}},
		{"sshd has its own variable", RequireSSHDEnv, []string{"sshd"}, "FLEET_AUDIT_REQUIRE_SSHD=1 requires it", map[string]string{}},
		{"the sshd variable leaves the others skipping", RequireSSHDEnv, []string{"cmark-gfm"}, "",
			map[string]string{"cmark-gfm": "skipped: Markdown output rendered as GitHub renders it — no cmark-gfm (apt-get install cmark-gfm)\n"}},
		{"a need in no tier", "", []string{"frobnicate"}, `"frobnicate" is in no tier`, map[string]string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			unrequired(t)
			if tc.require != "" {
				t.Setenv(tc.require, "1")
			}
			dir := t.TempDir()
			t.Setenv(SkippedDirEnv, dir)
			var err error
			for _, n := range tc.needs {
				err = errors.Join(err, Absent(n))
			}
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("err = %v, want %q", err, tc.wantErr)
			}
			got := map[string]string{}
			entries, _ := os.ReadDir(dir)
			for _, e := range entries {
				b, _ := os.ReadFile(filepath.Join(dir, e.Name()))
				got[e.Name()] = string(b)
			}
			if len(got) != len(tc.wantFile) {
				t.Errorf("recorded %q, want %q", got, tc.wantFile)
			}
			for name, want := range tc.wantFile {
				if got[name] != want {
					t.Errorf("%s holds %q, want %q", name, got[name], want)
				}
			}
		})
	}
}

// needRefs finds the needs the repository's tests name literally: the
// arguments of Find, Require and Absent, and scripts' [have:TOOL].
var needRefs = []*regexp.Regexp{
	regexp.MustCompile(`\b(?:Find|Require)\(t, ((?:"[^"]+"(?:, )?)+)\)`),
	regexp.MustCompile(`\bAbsent\(((?:"[^"]+"))\)`),
	regexp.MustCompile(`\[!?have:([a-z0-9-]+)\]`),
}

// TestEveryNeedNamedIsInATier: a test that names a tool no tier holds
// would fail only on a machine without that tool; this finds it on any.
func TestEveryNeedNamedIsInATier(t *testing.T) {
	root := filepath.Join("..", "..")
	n := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if err != nil || d.IsDir() || !(strings.HasSuffix(p, "_test.go") || strings.HasSuffix(p, ".txtar") || strings.HasPrefix(p, filepath.Join(root, "internal"))) {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, re := range needRefs {
			for _, m := range re.FindAllSubmatch(b, -1) {
				for _, name := range strings.Split(string(m[1]), ", ") {
					name = strings.Trim(name, `"`)
					n++
					if _, ok := tierOf(name); !ok {
						t.Errorf("%s names %q, which is in no tier of Tiers", p, name)
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 20 {
		t.Errorf("found only %d needs named: the patterns no longer match the calls", n)
	}
}

// helperEnv makes TestSkipsOfAToollessMachine a test that skips for
// want of tools, for TestMakeTestNamesSkippedTiers to run through make.
const helperEnv = "FLEET_AUDIT_TESTTOOLS_HELPER"

func TestSkipsOfAToollessMachine(t *testing.T) {
	mode := os.Getenv(helperEnv)
	if mode == "" {
		t.Skip("a helper: run by TestMakeTestNamesSkippedTiers")
	}
	for _, names := range [][]string{{"chromium", "chromium-browser", "google-chrome"}, {"xmllint"}, {"google-chrome"}, {"make"}} {
		t.Run(names[0], func(t *testing.T) { Find(t, names...) })
	}
	if mode == "fail" {
		t.Error("failing as asked")
	}
}

// TestMakeTestNamesSkippedTiers runs the Makefile's test target, of this
// package's helper, on a machine reduced to Go, /bin/sh and make (and
// the few coreutils the Makefile itself runs): the run passes, names each
// tier it skipped once with the package to install, and keeps go test's
// status; under the require variable the skip is a failure.
func TestMakeTestNamesSkippedTiers(t *testing.T) {
	SkipShort(t, "runs go test through make")
	bin := t.TempDir()
	for _, tool := range []string{"go", "make", "sh", "mktemp", "ls", "cat", "rm", "sed", "date"} {
		// Go, sh and a make run this test; the rest are Debian's essential
		// coreutils and sed.
		p, err := exec.LookPath(tool)
		if err != nil {
			t.Fatal(err)
		}
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		if err := os.Symlink(p, filepath.Join(bin, tool)); err != nil {
			t.Fatal(err)
		}
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	const (
		chromium = "skipped: the HTML report in a real headless browser — no chromium (apt-get install chromium)"
		xmllint  = "skipped: JUnit output validated against its XSD — no xmllint (apt-get install libxml2-utils)"
	)
	for _, tc := range []struct {
		name, mode      string
		require, wantOK bool
		// wantEnd is how the output ends: the summary, after go test's.
		wantEnd string
		want    string
	}{
		{"skips named once", "skip", false, true, chromium + "\n" + xmllint + "\n", ""},
		{"go test's failure kept", "fail", false, false, chromium + "\n" + xmllint + "\n", "failing as asked"},
		{"required tools fail", "skip", true, false, "no test tier skipped for want of a tool\n",
			"chromium is missing and FLEET_AUDIT_REQUIRE_TOOLS=1 requires it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command("make", "-s", "-C", root, "test", "PKGS=./internal/testtools", "TESTFLAGS=-run ^TestSkipsOfAToollessMachine$$")
			require := ""
			if tc.require {
				require = "1"
			}
			// A make of its own, not a sub-make of one running this test.
			env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
				name, _, _ := strings.Cut(kv, "=")
				return name == "MAKEFLAGS" || name == "MAKELEVEL" || name == "MFLAGS"
			})
			cmd.Env = append(env, "PATH="+bin, helperEnv+"="+tc.mode, RequireEnv+"="+require, RequireSSHDEnv+"=", SkippedDirEnv+"=")
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			err := cmd.Run()
			if ok := err == nil; ok != tc.wantOK {
				t.Errorf("make test: %v, want success %v\n%s", err, tc.wantOK, out.String())
			}
			// make's own word on a failed recipe comes last.
			end := regexp.MustCompile(`(?m)^make: \*\*\*.*\n\z`).ReplaceAllString(out.String(), "")
			if !strings.HasSuffix(end, "\n"+tc.wantEnd) {
				t.Errorf("the output does not end in\n%s\n---\n%s", tc.wantEnd, out.String())
			}
			if !strings.Contains(out.String(), tc.want) {
				t.Errorf("no %q in\n%s", tc.want, out.String())
			}
		})
	}
}
