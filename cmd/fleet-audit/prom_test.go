package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/fleet-audit/fleet-audit/result"
)

// TestPromWrittenAtomically: node_exporter's textfile collector may read
// the file at any moment, so it must be replaced whole, by a rename, never
// rewritten in place (node_exporter README, "Textfile Collector": "write
// the file atomically"). A hard link to the old file keeps the old
// content only if the path was renamed over; the temporary file is gone,
// and the new file is readable by node_exporter's own user under the
// umask the example unit sets (UMask=0022).
func TestPromWrittenAtomically(t *testing.T) {
	dir := t.TempDir()
	saved := filepath.Join(dir, "results.json")
	r := result.Report{
		SchemaVersion: result.SchemaVersion, Tool: result.Tool{Name: "fleet-audit", Version: "test"}, Inventory: "lab",
		Gate:  result.Gate{FailOn: result.SeverityCritical, Passed: true, Reasons: []string{}},
		Nodes: []result.Node{{Name: "lab-1", Status: result.StatusOK, Facts: map[string]string{}}},
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	textfiles := filepath.Join(dir, "textfile")
	if err := os.Mkdir(textfiles, 0o755); err != nil {
		t.Fatal(err)
	}
	prom := filepath.Join(textfiles, "fleet-audit.prom")
	held := filepath.Join(dir, "held.prom")
	defer syscall.Umask(syscall.Umask(0o022))
	for p, data := range map[string][]byte{saved: b, prom: []byte("# the previous audit\n")} {
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Link(prom, held); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t, "report", "-q", saved, "--prom", prom)
	if code != 0 {
		t.Fatalf("report exited %d\n%s%s", code, stdout, stderr)
	}
	if old, _ := os.ReadFile(held); string(old) != "# the previous audit\n" {
		t.Errorf("the old file was written in place, not replaced: it now holds\n%s", old)
	}
	now, err := os.ReadFile(prom)
	if err != nil || !strings.Contains(string(now), "\nfleet_audit_node_up{inventory=\"lab\",node=\"lab-1\",roles=\"\"} 1\n") {
		t.Errorf("%s: %v\n%s", prom, err, now)
	}
	if st, err := os.Stat(prom); err != nil || st.Mode().Perm() != 0o644 {
		t.Errorf("%s: mode %v (%v), want 0644 for node_exporter's user to read", prom, st.Mode(), err)
	}
	entries, err := os.ReadDir(textfiles)
	if err != nil || len(entries) != 1 {
		t.Errorf("the textfile directory holds %v (%v), want fleet-audit.prom alone", entries, err)
	}
}
