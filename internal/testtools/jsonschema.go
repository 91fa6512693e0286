package testtools

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
)

// validateScript validates a JSON document against a JSON Schema (draft
// 2020-12) with python3-jsonschema, the reference implementation's Python
// package, printing each error as "path: message".
const validateScript = `
import json, sys
import jsonschema
schema = json.load(open(sys.argv[1]))
jsonschema.Draft202012Validator.check_schema(schema)
doc = json.load(open(sys.argv[2]))
v = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())
errors = sorted(v.iter_errors(doc), key=lambda e: list(map(str, e.absolute_path)))
for e in errors[:20]:
    print("/" + "/".join(map(str, e.absolute_path)) + ": " + e.message[:300])
sys.exit(1 if errors else 0)
`

// SchemaErrors validates the JSON file doc against the JSON Schema file
// schema and returns the violations, none when it is valid. Without
// python3 and its jsonschema module it skips t, or fails it when
// RequireEnv is set.
func SchemaErrors(t testing.TB, schema, doc string) []string {
	t.Helper()
	python := Find(t, "python3")
	if !HasJSONSchema(python) {
		Require(t, "python3-jsonschema")
	}
	errs, err := ValidateJSON(python, schema, doc)
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
	out, err := exec.Command(python, "-c", validateScript, schema, doc).CombinedOutput()
	if err == nil {
		return nil, nil
	}
	if _, ok := err.(*exec.ExitError); !ok || len(out) == 0 {
		return nil, fmt.Errorf("validate %s against %s: %w\n%s", doc, schema, err, out)
	}
	return strings.Split(strings.TrimSpace(string(out)), "\n"), nil
}
