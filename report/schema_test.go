package report

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleet-audit/fleet-audit/internal/testtools"
)

// resultsSchema is the JSON Schema of the JSON report.
const resultsSchema = "../docs/results.schema.json"

// TestJSONMatchesSchema validates the JSON of every report fixture a run
// can produce (the hostile one is crafted, not written by a run) against
// docs/results.schema.json with a real validator, and proves with broken
// documents that the validator applies the schema.
func TestJSONMatchesSchema(t *testing.T) {
	dir := t.TempDir()
	// One validator process for every document: a python start costs
	// more than a validation.
	valid := map[string]string{}
	var docs []string
	for name, r := range allReports() {
		if name == "hostile" {
			continue
		}
		path := filepath.Join(dir, name+".json")
		if err := os.WriteFile(path, render(t, "json", Options{}, r), 0o644); err != nil {
			t.Fatal(err)
		}
		valid[path] = name
		docs = append(docs, path)
	}

	incident := string(render(t, "json", Options{}, incidentReport()))
	broken := []struct{ name, from, to, want string }{
		{"a field the schema does not describe", `"schema_version": 1,`, `"schema_version": 1, "surprise": true,`, "Additional properties are not allowed"},
		{"a node status the tool never writes", `"status": "ok"`, `"status": "fine"`, "is not one of"},
		{"a required field left out", `"exit_code": 1,`, ``, "'exit_code' is a required property"},
	}
	for i, tc := range broken {
		doc := strings.Replace(incident, tc.from, tc.to, 1)
		if doc == incident {
			t.Fatalf("%s: %q not in the document", tc.name, tc.from)
		}
		path := filepath.Join(dir, fmt.Sprintf("broken-%d.json", i))
		if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		docs = append(docs, path)
	}

	errs := testtools.SchemaErrorsAll(t, resultsSchema, docs...)
	for path, name := range valid {
		if len(errs[path]) > 0 {
			t.Errorf("%s: the JSON report breaks the schema:\n%s", name, strings.Join(errs[path], "\n"))
		}
	}
	for i, tc := range broken {
		got := errs[filepath.Join(dir, fmt.Sprintf("broken-%d.json", i))]
		if !strings.Contains(strings.Join(got, "\n"), tc.want) {
			t.Errorf("%s: validator said %q, want %q", tc.name, got, tc.want)
		}
	}
}
