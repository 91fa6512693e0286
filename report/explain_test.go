package report

import (
	"strings"
	"testing"

	"github.com/fleet-audit/fleet-audit/result"
)

// TestWriteExplanation: the sections come in a change board's order, a
// command is never wrapped, a missing why says so, and text from a user's
// --probes file cannot drive the terminal.
func TestWriteExplanation(t *testing.T) {
	long := "curl -s " + strings.Repeat("x", 150)
	for _, tc := range []struct {
		name string
		e    result.Explanation
		want []string
		not  []string
	}{
		{
			name: "check",
			e: result.Explanation{ID: "a.b", Kind: "check", Title: "t", Severity: "critical", Scope: "node", Source: "builtin",
				Summary: "s", Why: "w", Remediation: "r", References: []string{"ref"},
				Facts: []result.FactHow{{Facts: []string{"f.x", "f.y"}, On: result.CollectOnServer, Commands: []string{long}}}},
			want: []string{"a.b: t\n   severity critical · scope node · check (builtin)\n",
				"\nWHAT IT MEANS\n   s\n\nWHY IT MATTERS FOR AN UPGRADE\n   w\n\nFACTS IT READS, AND HOW TO COLLECT THEM BY HAND\n   f.x, f.y (on any RKE2 server node)\n      $ " + long + "\n\nREMEDIATION\n   r\n\nREFERENCES\n   - ref\n"},
		},
		{
			name: "user check without why",
			e: result.Explanation{ID: "site.c", Kind: "check", Title: "\x1b[31mred", Severity: "warning", Scope: "node", Source: "site/x.yaml:1",
				Summary: "line1\nline2", Facts: []result.FactHow{{Facts: []string{"site.f"}, Commands: []string{}}}},
			want: []string{"WHY IT MATTERS FOR AN UPGRADE\n   (not given)", "site.f (no command known for this fact)", "REFERENCES\n   (not given)"},
			not:  []string{"\x1b", "line1\nline2"},
		},
		{
			name: "correlation",
			e:    result.Explanation{ID: "correlation.x", Kind: "finding", Scope: "fleet", Source: "builtin (Go)", Summary: "s", Facts: []result.FactHow{}},
			want: []string{"severity: its symptom's when a fact explains it, info otherwise", "none of its own"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			if err := WriteExplanation(&b, tc.e); err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, b.String())
				}
			}
			for _, n := range tc.not {
				if strings.Contains(b.String(), n) {
					t.Errorf("output holds %q:\n%s", n, b.String())
				}
			}
		})
	}
}
