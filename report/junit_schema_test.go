package report

import (
	"bytes"
	gocontext "context" // format_test.go has a func context
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fleet-audit/fleet-audit/internal/testtools"
	"github.com/fleet-audit/fleet-audit/result"
)

// junitXSD is the Jenkins xunit plugin's schema, committed verbatim (see
// testdata/junit/README.txt). Its digest is pinned so that the schema is
// not loosened to let our output through; an upstream update changes both.
const (
	junitXSD       = "testdata/junit/junit-10.xsd"
	junitXSDSHA256 = "62ca5a7bd8a6b8268818a64192bd8f94dbf38b63eb85a19c159deba08244f1fd"
)

// xmllintExitInvalid is xmllint's exit status for a well-formed document
// that breaks the schema; 1 is a parse error and 5 a schema that does not
// compile, neither of which proves the schema was applied.
const xmllintExitInvalid = 3

// TestJUnitSchema validates the JUnit of every report fixture against
// junit-10.xsd with xmllint, and proves with broken documents that the
// validator rejects what the schema forbids.
func TestJUnitSchema(t *testing.T) {
	xmllint := testtools.Find(t, "xmllint")
	xsd, err := os.ReadFile(junitXSD)
	if err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256(xsd); hex.EncodeToString(sum[:]) != junitXSDSHA256 {
		t.Fatalf("%s is not the committed upstream schema (sha256 %x); update README.txt and junitXSDSHA256 together", junitXSD, sum)
	}

	reports := allReports()
	// The smallest report: no nodes, no cluster, no clock.
	reports["empty"] = &result.Report{}
	// A saved report read back may carry durations no run produces.
	odd := cleanReport()
	odd.Nodes[0].DurationSeconds, odd.Nodes[1].DurationSeconds = -2.5, 1e21
	reports["odd durations"] = odd
	for name, r := range reports {
		t.Run(name, func(t *testing.T) {
			doc := render(t, "junit", Options{}, r)
			if out, err := xmllintValidate(t, xmllint, doc); err != nil {
				t.Errorf("junit is not valid against %s: %v\n%s", junitXSD, err, out)
			}
		})
	}

	// Each control breaks the real incident document in one way the schema
	// forbids, so a validator that accepted anything would fail here.
	incident := string(render(t, "junit", Options{}, incidentReport()))
	controls := []struct {
		name string
		edit func(string) string
		want string // in xmllint's message
	}{
		{"testcase without name", func(s string) string {
			return replaceFirst(s, regexp.MustCompile(`<testcase name="[^"]*"`), "<testcase")
		}, "'name' is required but missing"},
		{"stray element", func(s string) string {
			return strings.Replace(s, "<testsuite ", "<verdict/><testsuite ", 1)
		}, "Element 'verdict': This element is not expected"},
		{"skipped on testsuites", func(s string) string {
			return strings.Replace(s, `<testsuites name="fleet-audit"`, `<testsuites name="fleet-audit" skipped="1"`, 1)
		}, "attribute 'skipped' is not allowed"},
		{"suite without failures", func(s string) string {
			return replaceFirst(s, regexp.MustCompile(`(<testsuite [^>]*) failures="[0-9]+"`), "$1")
		}, "'failures' is required but missing"},
		{"time with a unit", func(s string) string {
			return replaceFirst(s, regexp.MustCompile(`(<testsuite [^>]*time=")([0-9.]+)"`), `${1}${2}s"`)
		}, "attribute 'time'"},
	}
	for _, c := range controls {
		t.Run("rejects "+c.name, func(t *testing.T) {
			bad := c.edit(incident)
			if bad == incident {
				t.Fatal("the edit changed nothing, so the control proves nothing")
			}
			out, err := xmllintValidate(t, xmllint, []byte(bad))
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != xmllintExitInvalid {
				t.Fatalf("want a schema violation (exit %d), got %v\n%s", xmllintExitInvalid, err, out)
			}
			if !strings.Contains(string(out), c.want) {
				t.Errorf("xmllint rejected it for another reason; want %q in:\n%s", c.want, out)
			}
		})
	}
}

// xmllintValidate runs xmllint on doc against junitXSD and returns its
// messages; err is nil only when the document is valid.
func xmllintValidate(t *testing.T, xmllint string, doc []byte) ([]byte, error) {
	t.Helper()
	ctx, cancel := gocontext.WithTimeout(gocontext.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, xmllint, "--noout", "--schema", junitXSD, "-")
	cmd.Stdin = bytes.NewReader(doc)
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("xmllint did not finish: %v\n%s", ctx.Err(), out)
	}
	return out, err
}

// replaceFirst replaces the first match of re in s, expanding $1 in repl.
func replaceFirst(s string, re *regexp.Regexp, repl string) string {
	m := re.FindStringSubmatchIndex(s)
	if m == nil {
		return s
	}
	return s[:m[0]] + string(re.ExpandString(nil, repl, s, m)) + s[m[1]:]
}
