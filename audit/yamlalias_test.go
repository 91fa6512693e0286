package audit

import (
	"strings"
	"testing"

	"github.com/fleet-audit/fleet-audit/audit/check"
	"github.com/fleet-audit/fleet-audit/result"
)

// A YAML alias may name an anchor of an earlier entry in a waivers or a
// checks file (a shared reason, a shared condition list, a << merge), as
// in the inventory; an alias expansion past the budget is refused with
// file:line, never decoded.
func TestYAMLAliasesAcrossEntries(t *testing.T) {
	bomb := "- check: &a0 [x, x, x, x, x, x, x, x, x, x]\n"
	for i := 1; i <= 8; i++ {
		bomb += "  k" + string(rune('0'+i)) + ": &a" + string(rune('0'+i)) + " [" + strings.Repeat("*a"+string(rune('0'+i-1))+", ", 9) + "*a" + string(rune('0'+i-1)) + "]\n"
	}
	known := WaivableIDs(builtinChecks(t))
	waivers := []struct {
		name  string
		in    string
		want  string // error substring, "" for success
		check func(t *testing.T, ws []result.Waiver)
	}{
		{
			name: "aliased reason, expires and nodes",
			in: `- check: firewall.ufw-active
  nodes: &nodes [worker-2, worker-4]
  reason: &why "NET-1, accepted by J. Doe"
  expires: &until 2026-09-30
- check: "firewall.*"
  nodes: *nodes
  reason: *why
  expires: *until
`,
			check: func(t *testing.T, ws []result.Waiver) {
				if len(ws) != 2 {
					t.Fatalf("got %d waivers: %+v", len(ws), ws)
				}
				w := ws[1]
				if w.Check != "firewall.*" || strings.Join(w.Nodes, ",") != "worker-2,worker-4" || w.Reason != "NET-1, accepted by J. Doe" ||
					w.Expires != "2026-09-30" || w.Source != "w.yaml:5" {
					t.Errorf("second waiver = %+v", w)
				}
			},
		},
		{
			name: "merge of an earlier entry",
			in: `- &base
  check: firewall.ufw-active
  reason: shared
  expires: 2026-09-30
- <<: *base
  check: cluster.unavailable
`,
			check: func(t *testing.T, ws []result.Waiver) {
				if len(ws) != 2 || ws[1].Check != "cluster.unavailable" || ws[1].Reason != "shared" || ws[1].Expires != "2026-09-30" {
					t.Errorf("waivers = %+v", ws)
				}
			},
		},
		{name: "an aliased value is still validated", in: "- check: firewall.ufw-active\n  reason: r\n  expires: &d 2026-13-40\n- check: cluster.unavailable\n  reason: r\n  expires: *d\n",
			want: "w.yaml:6: waiver 2: expires: want a date"},
		{name: "a YAML bomb", in: bomb, want: "YAML aliases expand to more than"},
	}
	for _, tc := range waivers {
		t.Run("waivers/"+tc.name, func(t *testing.T) {
			ws, err := ParseWaivers("w.yaml", []byte(tc.in), known)
			checkAliasResult(t, err, tc.want)
			if err == nil && tc.check != nil {
				tc.check(t, ws)
			}
		})
	}

	checks := []struct {
		name  string
		in    string
		want  string
		check func(t *testing.T, cs []check.Check)
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
			check: func(t *testing.T, cs []check.Check) {
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
			check: func(t *testing.T, cs []check.Check) {
				if len(cs) != 2 || cs[1].ID != "site.b" || cs[1].Title != "a" || len(cs[1].When) != 1 {
					t.Errorf("checks = %+v", cs)
				}
			},
		},
		{name: "a misspelt field behind an alias is still refused", in: "- id: site.a\n  title: a\n  summary: s\n  severity: warning\n  remediation: r\n  when: &c [{fact: site.x, op: eq, valu: \"1\"}]\n",
			want: "field valu not found"},
		{name: "a YAML bomb", in: strings.Replace(bomb, "- check:", "- id:", 1), want: "YAML aliases expand to more than"},
	}
	for _, tc := range checks {
		t.Run("checks/"+tc.name, func(t *testing.T) {
			cs, err := check.ParseChecks("c.yaml", []byte(tc.in))
			checkAliasResult(t, err, tc.want)
			if err == nil && tc.check != nil {
				tc.check(t, cs)
			}
		})
	}
}

func checkAliasResult(t *testing.T, err error, want string) {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Fatalf("error: %v", err)
	case want != "" && err == nil:
		t.Fatalf("no error, want %q", want)
	case want != "" && !strings.Contains(err.Error(), want):
		t.Fatalf("error %q, want %q", err, want)
	}
}
