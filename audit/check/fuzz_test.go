package check

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/fleet-audit/fleet-audit/internal/testtools"
)

// FuzzParseChecks feeds checks files (a user's --checks file is untrusted
// text) to ParseChecks: it never panics, every error names the file, and
// what it accepts holds distinct, non-empty ids.
func FuzzParseChecks(f *testing.F) {
	paths, err := filepath.Glob("checks/*.yaml")
	if err != nil || len(paths) == 0 {
		f.Fatalf("no seed checks: %v", err)
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("checks:\n- id: x\n"))
	f.Add([]byte("- {"))
	const name = "fuzz.yaml"
	f.Fuzz(func(t *testing.T, data []byte) {
		checks, err := ParseChecks(name, data)
		if err != nil {
			if checks != nil {
				t.Fatal("checks returned with an error")
			}
			testtools.ErrorsNameFile(t, err, name)
			return
		}
		seen := map[string]bool{}
		for _, c := range checks {
			if c.ID == "" || seen[c.ID] {
				t.Fatalf("check id %q empty or twice", c.ID)
			}
			seen[c.ID] = true
		}
	})
}
