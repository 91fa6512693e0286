package main

import (
	"bytes"
	"encoding/xml"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/fleet-audit/fleet-audit/internal/testtools"
	"github.com/fleet-audit/fleet-audit/result"
)

// junitAgreesCmd is "junit-agrees JUNIT.xml RESULTS.json": the JUnit file's
// failures are exactly the findings the saved gate fails on, and its errors
// exactly the nodes the gate calls not fully audited, so CI's page and the
// exit code tell the same story. It also checks that the gate's own
// reasons count the same findings.
func junitAgreesCmd(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: junit-agrees JUNIT.xml RESULTS.json")
	}
	var doc struct {
		Failures int `xml:"failures,attr"`
		Errors   int `xml:"errors,attr"`
	}
	ts.Check(xml.Unmarshal([]byte(ts.ReadFile(args[0])), &doc))
	r, err := result.ReadJSON(bytes.NewReader([]byte(ts.ReadFile(args[1]))))
	ts.Check(err)
	failing, unaudited := 0, 0
	bySeverity := map[result.Severity]int{}
	for _, f := range r.Findings {
		if r.Gate.Fails(f) {
			failing++
			bySeverity[f.Severity]++
		}
	}
	for _, n := range r.Nodes {
		if n.Status != result.StatusOK {
			unaudited++
		}
	}
	if doc.Failures != failing || doc.Errors != unaudited {
		ts.Fatalf("JUnit has %d failures and %d errors; the gate (fail_on %s) fails on %d findings with %d nodes not audited",
			doc.Failures, doc.Errors, r.Gate.FailOn, failing, unaudited)
	}
	for sev, n := range bySeverity {
		want := result.Count(n, sev.String()+" finding")
		found := false
		for _, reason := range r.Gate.Reasons {
			found = found || reason == want
		}
		if !found {
			ts.Fatalf("the gate's reasons %q lack %q", r.Gate.Reasons, want)
		}
	}
	ts.Logf("junit: %d failures, %d errors, as the gate: %q", doc.Failures, doc.Errors, r.Gate.Reasons)
}

// schemaValidCmd is "schema-valid RESULTS.json": the JSON report is valid
// against docs/results.schema.json (python3-jsonschema). Without the
// validator it only logs, and records the tier as skipped, or fails under
// FLEET_AUDIT_REQUIRE_TOOLS=1, as testtools.Find does.
func schemaValidCmd(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: schema-valid RESULTS.json")
	}
	python, err := exec.LookPath("python3")
	if err != nil || !testtools.HasJSONSchema(python) {
		ts.Check(testtools.Absent("python3-jsonschema"))
		ts.Logf("schema-valid: no python3 jsonschema, not validated")
		return
	}
	schema, err := filepath.Abs(filepath.Join("..", "..", "docs", "results.schema.json"))
	ts.Check(err)
	errs, err := testtools.ValidateJSON(python, schema, ts.MkAbs(args[0]))
	ts.Check(err)
	if len(errs) > 0 {
		ts.Fatalf("%s breaks docs/results.schema.json:\n%s", args[0], strings.Join(errs, "\n"))
	}
}
