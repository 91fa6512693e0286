package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleet-audit/fleet-audit/report"
)

// TestOutputFitsColumns: with COLUMNS=80 (a pipe, as here, would give
// report.DefaultWidth, also 80) every line a person reads fits 80 display
// columns: the catalogue and inventory tables, the help, explain, diff and
// the terminal report of a run with a long probable cause.
func TestOutputFitsColumns(t *testing.T) {
	t.Setenv("COLUMNS", "80")
	lablabs := filepath.Join("..", "..", "inventory", "testdata", "ansible", "lablabs", "hosts.ini")
	incident := filepath.Join("..", "..", "report", "testdata", "incident.1.json")
	for _, tc := range []struct {
		name string
		argv []string
		// want is a line the output must hold, so that an empty output
		// cannot pass.
		want string
	}{
		{"probes", []string{"probes"}, "firewall.ufw-active"},
		{"inventory", []string{"inventory", "-i", lablabs, "-F", "none"}, "master-01"},
		{"run --help", []string{"run", "--help"}, "--inventory FILE, -i FILE"},
		{"--help", []string{"--help"}, "COMMANDS:"},
		{"merge --help", []string{"merge", "--help"}, "EXIT STATUS:"},
		{"report with a probable cause", []string{"report", incident}, "probable cause of kubeproxy.healthz-failing"},
		{"diff", []string{"diff", filepath.Join("..", "..", "report", "testdata", "clean.0.json"), incident}, "diff gate: FAILED"},
		{"explain", []string{"explain", "firewall.ufw-active"}, "WHY IT MATTERS FOR AN UPGRADE"},
		{"explain's list", []string{"explain"}, "firewall.ufw-active"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, stdout, stderr := runOut(tc.argv...)
			if !strings.Contains(stdout, tc.want) {
				t.Fatalf("output lacks %q; stderr %q:\n%s", tc.want, stderr, stdout)
			}
			for _, l := range strings.Split(stdout, "\n") {
				// explain's commands are copied into a shell, where a line
				// break would end them: kept whole on purpose.
				if strings.HasPrefix(l, "      $ ") && tc.argv[0] == "explain" {
					continue
				}
				if w := report.DisplayWidth(l); w > 80 {
					t.Errorf("line is %d columns wide: %q", w, l)
				}
			}
		})
	}
}
