package check

import (
	"testing"

	"github.com/fleet-audit/fleet-audit/internal/testtools"
)

// A YAML alias may name an anchor of an earlier entry in a checks file (a
// shared remediation, condition list, a << merge), as in the inventory; an alias expansion past
// the budget is refused with file:line, never decoded.
func TestChecksYAMLAliases(t *testing.T) {
	checks := []struct {
		name  string
		in    string
		want  string
		check func(t *testing.T, cs []Check)
	}{
		{
			name: "aliased remediation and conditions",
			in: `- id: site.a
  title: a
  summary: s
  severity: warning
  remediation: &fix "restart the thing"
  when: &cond
    - {fact: site.x, op: eq, value: "1"}
- id: site.b
  title: b
  summary: s
  severity: critical
  remediation: *fix
  when: *cond
`,
			check: func(t *testing.T, cs []Check) {
				if len(cs) != 2 {
					t.Fatalf("got %d checks", len(cs))
				}
				c := cs[1]
				if c.ID != "site.b" || c.Remediation != "restart the thing" || len(c.When) != 1 || c.When[0].Fact != "site.x" || c.Source != "c.yaml:8" {
					t.Errorf("second check = %+v", c)
				}
			},
		},
		{
			name: "merge of an earlier entry",
			in: `- &base
  id: site.a
  title: a
  summary: s
  severity: warning
  remediation: r
  when: [{fact: site.x, op: eq, value: "1"}]
- <<: *base
  id: site.b
`,
			check: func(t *testing.T, cs []Check) {
				if len(cs) != 2 || cs[1].ID != "site.b" || cs[1].Title != "a" || len(cs[1].When) != 1 {
					t.Errorf("checks = %+v", cs)
				}
			},
		},
		{name: "a misspelt field behind an alias is still refused", in: "- id: site.a\n  title: a\n  summary: s\n  severity: warning\n  remediation: r\n  when: &c [{fact: site.x, op: eq, valu: \"1\"}]\n",
			want: "field valu not found"},
		{name: "a YAML bomb", in: testtools.YAMLBomb("id"), want: "YAML aliases expand to more than"},
	}
	for _, tc := range checks {
		t.Run("checks/"+tc.name, func(t *testing.T) {
			cs, err := ParseChecks("c.yaml", []byte(tc.in))
			testtools.WantError(t, err, tc.want)
			if err == nil && tc.check != nil {
				tc.check(t, cs)
			}
		})
	}
}
