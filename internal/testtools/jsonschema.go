package testtools

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"testing"
)

// validateScript validates JSON documents against a JSON Schema (draft
// 2020-12) with python3-jsonschema, the reference implementation's Python
// package. It takes the schema and any number of documents and prints one
// JSON object, each document's path to its errors as "path: message": one
// process for many documents, where a python start costs more than a
// validation.
const validateScript = `
import json, sys
import jsonschema
schema = json.load(open(sys.argv[1]))
jsonschema.Draft202012Validator.check_schema(schema)
v = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())
out = {}
for path in sys.argv[2:]:
    doc = json.load(open(path))
    errors = sorted(v.iter_errors(doc), key=lambda e: list(map(str, e.absolute_path)))
    out[path] = ["/" + "/".join(map(str, e.absolute_path)) + ": " + e.message[:300] for e in errors[:20]]
json.dump(out, sys.stdout)
`

// SchemaErrors validates the JSON file doc against the JSON Schema file
// schema and returns the violations, none when it is valid. Without
// python3 and its jsonschema module it skips t, or fails it when
// RequireEnv is set.
func SchemaErrors(t testing.TB, schema, doc string) []string {
	t.Helper()
	return SchemaErrorsAll(t, schema, doc)[doc]
}

// SchemaErrorsAll is SchemaErrors for many documents in one validator
// process: each document's path to its violations, none when it is valid.
func SchemaErrorsAll(t testing.TB, schema string, docs ...string) map[string][]string {
	t.Helper()
	python := Find(t, "python3")
	if !HasJSONSchema(python) {
		Require(t, "python3-jsonschema")
	}
	errs, err := ValidateJSONAll(python, schema, docs...)
	if err != nil {
		t.Fatal(err)
	}
	return errs
}

// HasJSONSchema reports whether python has the jsonschema module.
func HasJSONSchema(python string) bool {
	return exec.Command(python, "-c", "import jsonschema").Run() == nil
}

// ValidateJSON is SchemaErrors for callers that are not a testing.TB (a
// testscript command); err is a validator that could not run at all.
func ValidateJSON(python, schema, doc string) ([]string, error) {
	errs, err := ValidateJSONAll(python, schema, doc)
	return errs[doc], err
}

// ValidateJSONAll is ValidateJSON for many documents in one process.
func ValidateJSONAll(python, schema string, docs ...string) (map[string][]string, error) {
	cmd := exec.Command(python, append([]string{"-c", validateScript, schema}, docs...)...)
	var stderr []byte
	out, err := cmd.Output()
	if ee, ok := err.(*exec.ExitError); ok {
		stderr = ee.Stderr
	}
	if err != nil {
		return nil, fmt.Errorf("validate %v against %s: %w\n%s", docs, schema, err, stderr)
	}
	errs := map[string][]string{}
	if err := json.Unmarshal(out, &errs); err != nil {
		return nil, fmt.Errorf("validate %v against %s: the validator's answer: %w\n%s", docs, schema, err, out)
	}
	return errs, nil
}
