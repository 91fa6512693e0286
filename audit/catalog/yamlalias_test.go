package catalog

import (
	"strings"
	"testing"

	"github.com/fleet-audit/fleet-audit/internal/testtools"
	"github.com/fleet-audit/fleet-audit/result"
)

// A YAML alias may name an anchor of an earlier entry in a waivers file (a
// shared reason, nodes list or date, a << merge), as in the inventory; an alias expansion past
// the budget is refused with file:line, never decoded.
func TestWaiverYAMLAliases(t *testing.T) {
	known := builtin(t).WaivableIDs()
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
		{name: "a YAML bomb", in: testtools.YAMLBomb("check"), want: "YAML aliases expand to more than"},
	}
	for _, tc := range waivers {
		t.Run("waivers/"+tc.name, func(t *testing.T) {
			ws, err := parseWaivers("w.yaml", []byte(tc.in), known)
			testtools.WantError(t, err, tc.want)
			if err == nil && tc.check != nil {
				tc.check(t, ws)
			}
		})
	}

}
