package result

import (
	"strings"
	"testing"
)

// TestReadJSONRejects: an old, future or foreign document fails with what is wrong with it.
func TestReadJSONRejects(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"schema_version": 2, "nodes": []}`, "schema_version 2 is not supported"},
		{`{"nodes": []}`, "no schema_version"},
		{`[1,2]`, "not a fleet-audit JSON report"},
		{`not json`, "not a fleet-audit JSON report"},
		{`{"schema_version": 1, "nodes": "x"}`, "read report"},
		{`{"schema_version": 1} {"schema_version": 1}`, "read report"},
	} {
		_, err := ReadJSON(strings.NewReader(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ReadJSON(%s) error = %v, want %q", tc.in, err, tc.want)
		}
	}
}
