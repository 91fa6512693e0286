package result

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzReadJSON feeds saved runs (fleet-audit report and diff read files
// anyone may hand them) to ReadJSON: it never panics, every error says it
// is reading a report, and an accepted report round-trips: written back
// as JSON and read again, it writes the same bytes.
func FuzzReadJSON(f *testing.F) {
	paths, err := filepath.Glob(filepath.Join("..", "report", "testdata", "*.json"))
	if err != nil || len(paths) == 0 {
		f.Fatalf("no seed reports: %v", err)
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"schema_version": 1}`))
	f.Add([]byte(`{"schema_version": 1, "nodes": [{"name": "a", "status": "ok"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := ReadJSON(bytes.NewReader(data))
		if err != nil {
			if r != nil || !strings.HasPrefix(err.Error(), "read report: ") {
				t.Fatalf("report %v with error %v", r != nil, err)
			}
			return
		}
		once, err := json.Marshal(r)
		if err != nil {
			t.Fatalf("an accepted report does not write back: %v", err)
		}
		again, err := ReadJSON(bytes.NewReader(once))
		if err != nil {
			t.Fatalf("a report written back is refused: %v\n%s", err, once)
		}
		twice, err := json.Marshal(again)
		if err != nil || !bytes.Equal(once, twice) {
			t.Fatalf("round trip differs (%v):\n%s\n%s", err, once, twice)
		}
	})
}
