package result

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// schemaFile is the JSON Schema of the document Report is written as.
const schemaFile = "../docs/results.schema.json"

// TestSchemaDescribesEveryField walks Report's types beside the schema:
// every JSON field of every struct is a property of the schema object at
// the same place, every property is a field, and the fields that are
// never omitted are required. A field added to the model without its
// schema (or the other way round) fails here, whatever the fixtures hold.
func TestSchemaDescribesEveryField(t *testing.T) {
	data, err := os.ReadFile(schemaFile)
	if err != nil {
		t.Fatal(err)
	}
	var root map[string]any
	if err := json.Unmarshal(data, &root); err != nil {
		t.Fatal(err)
	}
	defs, _ := root["$defs"].(map[string]any)
	resolve := func(node map[string]any) map[string]any {
		for {
			ref, ok := node["$ref"].(string)
			if !ok {
				return node
			}
			name := strings.TrimPrefix(ref, "#/$defs/")
			next, ok := defs[name].(map[string]any)
			if !ok {
				t.Fatalf("schema: %s resolves to nothing", ref)
			}
			node = next
		}
	}
	timeType := reflect.TypeFor[time.Time]()
	var walk func(path string, typ reflect.Type, node map[string]any)
	walk = func(path string, typ reflect.Type, node map[string]any) {
		node = resolve(node)
		for typ.Kind() == reflect.Pointer {
			typ = typ.Elem()
		}
		switch {
		case typ == timeType:
			return
		case typ.Kind() == reflect.Slice:
			items, ok := node["items"].(map[string]any)
			if !ok {
				t.Errorf("%s: a list in the model, no items in the schema", path)
				return
			}
			walk(path+"[]", typ.Elem(), items)
			return
		case typ.Kind() == reflect.Map:
			values, ok := node["additionalProperties"].(map[string]any)
			if !ok {
				t.Errorf("%s: a map in the model, no additionalProperties schema", path)
				return
			}
			walk(path+"{}", typ.Elem(), values)
			return
		case typ.Kind() != reflect.Struct:
			return
		}
		props, _ := node["properties"].(map[string]any)
		if node["additionalProperties"] != false {
			t.Errorf("%s: the schema object is open; it must be closed (additionalProperties: false)", path)
		}
		var required []string
		for _, r := range node["required"].([]any) {
			required = append(required, r.(string))
		}
		seen := map[string]bool{}
		for f := range typ.Fields() {
			tag := f.Tag.Get("json")
			name, opts, _ := strings.Cut(tag, ",")
			if name == "-" || !f.IsExported() {
				continue
			}
			seen[name] = true
			prop, ok := props[name].(map[string]any)
			if !ok {
				t.Errorf("%s.%s: written by the tool, missing from the schema", path, name)
				continue
			}
			omitted := strings.Contains(opts, "omitempty")
			if in := slices.Contains(required, name); in == omitted {
				t.Errorf("%s.%s: omitempty=%v but required=%v in the schema", path, name, omitted, in)
			}
			walk(path+"."+name, f.Type, prop)
		}
		for name := range props {
			if !seen[name] {
				t.Errorf("%s.%s: in the schema, never written by the tool", path, name)
			}
		}
	}
	walk("report", reflect.TypeFor[Report](), root)
}

// TestSchemaEnums: the schema's word sets, and the words the prose of
// docs/json-schema.md lists for the same field, are the model's. The
// model's words are read from this package's source (every constant of the
// type) or its name tables, so a word added to the model fails here until
// both documents have it, without anyone editing this test.
func TestSchemaEnums(t *testing.T) {
	data, err := os.ReadFile(schemaFile)
	if err != nil {
		t.Fatal(err)
	}
	var root struct {
		Defs map[string]json.RawMessage `json:"$defs"`
	}
	if err := json.Unmarshal(data, &root); err != nil {
		t.Fatal(err)
	}
	prose, err := os.ReadFile(proseFile)
	if err != nil {
		t.Fatal(err)
	}
	enumAt := func(def string, path ...string) []string {
		var node map[string]any
		if err := json.Unmarshal(root.Defs[def], &node); err != nil {
			t.Fatal(err)
		}
		for _, p := range path {
			if p == "[]" {
				node = node["items"].(map[string]any)
				continue
			}
			node = node["properties"].(map[string]any)[p].(map[string]any)
		}
		var out []string
		for _, v := range node["enum"].([]any) {
			out = append(out, v.(string))
		}
		slices.Sort(out)
		return out
	}
	consts := constsByType(t)
	names := func(m map[string]string) []string { return slices.Sorted(maps.Values(m)) }
	statuses, severities := map[string]string{}, map[string]string{}
	for s, n := range statusNames {
		statuses[s.String()] = n
	}
	for s, n := range severityNames {
		severities[s.String()] = n
	}
	for _, tc := range []struct {
		name   string
		schema []string
		// row is the prose table's row that lists the words: its first
		// cell.
		row   string
		model []string
	}{
		{"node status", enumAt("node", "status"), "`nodes[].status`", names(statuses)},
		{"severity", enumAt("severity"), "`findings[].severity`", names(severities)},
		{"outcome", enumAt("check_result", "outcome"), "`checks[]`", consts["Outcome"]},
		{"kind", enumAt("finding", "kind"), "`findings[].kind`", consts["Kind"]},
		{"probe status", enumAt("probe_run", "status"), "`nodes[].probes[]`", consts["ProbeStatus"]},
		{"cluster status", enumAt("cluster", "status"), "`cluster`", consts["ClusterStatus"]},
		// An attempt's outcome is a ClusterStatus, ok or failed alone
		// (ClusterAttempt.Outcome).
		{"cluster attempt outcome", enumAt("cluster", "attempts", "[]", "outcome"), "`cluster.attempts[]`", []string{string(ClusterFailed), string(ClusterOK)}},
		{"rollout class", enumAt("rollout_step", "class"), "`findings[].rollout[]`", consts["RolloutClass"]},
		{"area", enumAt("area_readiness", "area"), "`readiness[]`", consts["Area"]},
		{"verdict", enumAt("area_readiness", "verdict"), "`readiness[]`", consts["Verdict"]},
	} {
		if len(tc.model) == 0 {
			t.Errorf("%s: no word found in the model", tc.name)
		}
		if !slices.Equal(tc.schema, tc.model) {
			t.Errorf("%s: schema enum %q, model %q", tc.name, tc.schema, tc.model)
		}
		row := proseRow(string(prose), tc.row)
		if row == "" {
			t.Errorf("%s: %s has no row %s", tc.name, proseFile, tc.row)
			continue
		}
		for _, w := range tc.model {
			if !strings.Contains(row, "`"+w+"`") {
				t.Errorf("%s: %s's row %s does not list `%s`", tc.name, proseFile, tc.row, w)
			}
		}
	}
}

// proseFile is the human description of the JSON report.
const proseFile = "../docs/json-schema.md"

// proseRow is the line of the prose's field table whose first cell is
// cell, or "".
func proseRow(prose, cell string) string {
	for line := range strings.Lines(prose) {
		if strings.HasPrefix(line, "| "+cell+" |") {
			return line
		}
	}
	return ""
}

// constsByType reads this package's non-test source and returns, per
// named type, the sorted values of its string constants.
func constsByType(t *testing.T) map[string][]string {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	out := map[string][]string{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				typ, ok := vs.Type.(*ast.Ident)
				if !ok {
					continue
				}
				for _, v := range vs.Values {
					lit, ok := v.(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						continue
					}
					w, err := strconv.Unquote(lit.Value)
					if err != nil {
						t.Fatal(err)
					}
					out[typ.Name] = append(out[typ.Name], w)
				}
			}
		}
	}
	for _, ws := range out {
		slices.Sort(ws)
	}
	return out
}
