package result

import (
	"encoding/json"
	"os"
	"reflect"
	"slices"
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

// TestSchemaEnums: the schema's word sets are the model's.
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
	enumAt := func(def string, path ...string) []string {
		var node map[string]any
		if err := json.Unmarshal(root.Defs[def], &node); err != nil {
			t.Fatal(err)
		}
		for _, p := range path {
			node = node["properties"].(map[string]any)[p].(map[string]any)
		}
		var out []string
		for _, v := range node["enum"].([]any) {
			out = append(out, v.(string))
		}
		slices.Sort(out)
		return out
	}
	sorted := func(s []string) []string { slices.Sort(s); return s }
	var statuses, severities []string
	for _, n := range statusNames {
		statuses = append(statuses, n)
	}
	for _, n := range severityNames {
		severities = append(severities, n)
	}
	for _, tc := range []struct {
		name      string
		got, want []string
	}{
		{"node status", enumAt("node", "status"), sorted(statuses)},
		{"severity", enumAt("severity"), sorted(severities)},
		{"outcome", enumAt("check_result", "outcome"), sorted([]string{string(OutcomePass), string(OutcomeFail), string(OutcomeSkip), string(OutcomeNotApplicable), string(OutcomeUnjudged), string(OutcomeWaived)})},
		{"kind", enumAt("finding", "kind"), sorted([]string{string(KindCheck), string(KindCorrelation), string(KindDrift)})},
		{"probe status", enumAt("probe_run", "status"), sorted([]string{string(ProbeOK), string(ProbeFailed), string(ProbeTimeout), string(ProbeTruncated), string(ProbeMissing)})},
		{"cluster status", enumAt("cluster", "status"), sorted([]string{string(ClusterOK), string(ClusterFailed), string(ClusterNoServer)})},
		{"rollout class", enumAt("rollout_step", "class"), sorted([]string{string(ClassEtcd), string(ClassControlPlane), string(ClassInfra), string(ClassWorker), string(ClassServer), string(ClassAgent)})},
	} {
		if !slices.Equal(tc.got, tc.want) {
			t.Errorf("%s: schema enum %q, model %q", tc.name, tc.got, tc.want)
		}
	}
}
