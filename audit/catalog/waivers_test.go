package catalog

import (
	"slices"
	"strings"
	"testing"

	"github.com/fleet-audit/fleet-audit/result"
)

func TestParseWaivers(t *testing.T) {
	known := builtin(t).WaivableIDs()
	tests := []struct {
		name string
		in   string
		// want: one substring per expected error, or nil for success.
		want  []string
		check func(t *testing.T, ws []result.Waiver)
	}{
		{
			name: "valid entries keep their fields and file:line",
			in: `# comment
- check: firewall.ufw-active
  nodes: [worker-2]
  reason: "NET-1, accepted by J. Doe"
  expires: 2026-09-30
- check: "firewall.*"
  roles: [etcd]
  reason: r
  expires: 2026-01-01
- check: correlation.kubeproxy.healthz-failing
  reason: r
  expires: 2026-01-01
- check: cluster.unavailable
  reason: r
  expires: 2026-01-01
`,
			check: func(t *testing.T, ws []result.Waiver) {
				if len(ws) != 4 {
					t.Fatalf("got %d waivers, want 4: %+v", len(ws), ws)
				}
				w := ws[0]
				if w.Check != "firewall.ufw-active" || strings.Join(w.Nodes, ",") != "worker-2" || w.Reason != "NET-1, accepted by J. Doe" ||
					w.Expires != "2026-09-30" || w.Source != "w.yaml:2" {
					t.Errorf("first waiver = %+v", w)
				}
				if ws[1].Source != "w.yaml:6" || strings.Join(ws[1].Roles, ",") != "etcd" {
					t.Errorf("second waiver = %+v", ws[1])
				}
			},
		},
		{name: "empty file", in: "", check: func(t *testing.T, ws []result.Waiver) {
			if len(ws) != 0 {
				t.Errorf("got %+v", ws)
			}
		}},
		{name: "not a list", in: "check: firewall.ufw-active\n", want: []string{"w.yaml:1: want a list of waivers"}},
		{name: "entry not a mapping", in: "- firewall.ufw-active\n", want: []string{"w.yaml:1: waiver 1: want a mapping"}},
		{name: "yaml syntax", in: "- check: [\n", want: []string{"w.yaml:"}},
		{name: "unknown field names its line", in: "- check: firewall.ufw-active\n  reason: r\n  expires: 2026-01-01\n  node: [a]\n",
			want: []string{"w.yaml:4: waiver 1: field node not found"}},
		{name: "missing check", in: "- reason: r\n  expires: 2026-01-01\n", want: []string{"w.yaml:1: waiver 1: check: is required"}},
		{name: "missing and empty reason", in: "- check: firewall.ufw-active\n  reason: '  '\n  expires: 2026-01-01\n",
			want: []string{"w.yaml:2: waiver 1: reason: is required"}},
		{name: "missing expires", in: "- check: firewall.ufw-active\n  reason: r\n", want: []string{"w.yaml:1: waiver 1: expires: is required"}},
		{name: "bad date", in: "- check: firewall.ufw-active\n  reason: r\n  expires: 2026-13-01\n",
			want: []string{`w.yaml:3: waiver 1: expires: want a date YYYY-MM-DD, got "2026-13-01"`}},
		{name: "date with time", in: "- check: firewall.ufw-active\n  reason: r\n  expires: 2026-01-01T00:00:00Z\n",
			want: []string{"w.yaml:3: waiver 1: expires: want a date"}},
		{name: "check matching nothing", in: "- check: firewall.ufw-activ\n  reason: r\n  expires: 2026-01-01\n",
			want: []string{`w.yaml:1: waiver 1: check: "firewall.ufw-activ" matches no known check`}},
		{name: "glob matching nothing", in: "- check: 'fw.*'\n  reason: r\n  expires: 2026-01-01\n",
			want: []string{`check: "fw.*" matches no known check`}},
		{name: "bad glob", in: "- check: 'firewall.['\n  reason: r\n  expires: 2026-01-01\n", want: []string{"check: bad glob"}},
		{name: "waiver findings are not waivable", in: "- check: waiver.expired\n  reason: r\n  expires: 2026-01-01\n",
			want: []string{"check: the waiver findings themselves cannot be waived"}},
		{name: "empty node name", in: "- check: firewall.ufw-active\n  nodes: ['']\n  reason: r\n  expires: 2026-01-01\n",
			want: []string{"w.yaml:2: waiver 1: nodes: empty name"}},
		{name: "every problem at once", in: "- check: nope\n  reason: r\n  expires: 2026-01-01\n- check: firewall.ufw-active\n  expires: soon\n",
			want: []string{"w.yaml:1: waiver 1: check", "w.yaml:4: waiver 2: reason", "w.yaml:5: waiver 2: expires"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws, err := parseWaivers("w.yaml", []byte(tt.in), known)
			if tt.want == nil {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				tt.check(t, ws)
				return
			}
			if err == nil {
				t.Fatalf("no error, want %q; got %+v", tt.want, ws)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if ws != nil {
				t.Errorf("waivers returned with an error: %+v", ws)
			}
		})
	}
}

func TestLoadWaiversMissingFile(t *testing.T) {
	if _, err := builtin(t).LoadWaivers("/nonexistent/waivers.yaml"); err == nil || !strings.Contains(err.Error(), "/nonexistent/waivers.yaml") {
		t.Fatalf("err = %v, want it to name the file", err)
	}
}

func TestWaivableIDs(t *testing.T) {
	ids := builtin(t).WaivableIDs()
	for _, want := range []string{"firewall.ufw-active", "correlation.kubeproxy.healthz-failing", "cluster.unavailable", "skew.mixed-versions", "skew.bundled-component"} {
		if !slices.Contains(ids, want) {
			t.Errorf("WaivableIDs lacks %q", want)
		}
	}
	if slices.Contains(ids, "correlation.firewall.ufw-active") {
		t.Errorf("a correlation id for a non-symptom check: %v", ids)
	}
}
