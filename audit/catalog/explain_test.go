package catalog

import (
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/fleet-audit/fleet-audit/audit/check"
	"github.com/fleet-audit/fleet-audit/audit/probe"
	"github.com/fleet-audit/fleet-audit/result"
)

// knownFacts are the facts a built-in probe emits and the Go facts a check
// may read: what a collect.yaml entry or a Go finding's Facts may name.
func knownFacts(t *testing.T) []string {
	t.Helper()
	probes, err := probe.BuiltinProbes()
	if err != nil {
		t.Fatal(err)
	}
	var facts []string
	for _, p := range probes {
		facts = append(append(facts, p.Facts...), p.NodeFacts...)
	}
	return append(facts, CheckableGoFacts()...)
}

// TestEveryBuiltinIsExplained is what makes explain complete: every
// built-in check and every finding built in Go says why it matters for an
// upgrade and where that is written, a Go finding says how to fix it and
// reads only facts that exist, and every fact a check or finding reads,
// and every fact a probe emits, has commands to collect it by hand.
func TestEveryBuiltinIsExplained(t *testing.T) {
	checks, err := check.BuiltinChecks()
	if err != nil {
		t.Fatal(err)
	}
	table, err := probe.CollectTable()
	if err != nil {
		t.Fatal(err)
	}
	known := knownFacts(t)
	read := map[string]string{} // fact → who reads it
	for _, c := range checks {
		if strings.TrimSpace(c.Why) == "" {
			t.Errorf("%s (%s): no why: say why it matters for an upgrade", c.ID, c.Source)
		}
		if len(c.References) == 0 {
			t.Errorf("%s (%s): no references: cite the upstream source or doc", c.ID, c.Source)
		}
		for _, f := range c.Facts() {
			read[f] = "check " + c.ID
		}
	}
	for _, f := range GoFindings {
		if strings.TrimSpace(f.Why) == "" || len(f.References) == 0 || strings.TrimSpace(f.Fix) == "" {
			t.Errorf("Go finding %s: needs Why, References and Fix in builtin.go's GoFindings", f.ID)
		}
		for _, fact := range f.Facts {
			if !slices.Contains(known, fact) {
				t.Errorf("Go finding %s reads %q, which no probe emits and no Go fact is", f.ID, fact)
			}
			read[fact] = "Go finding " + f.ID
		}
	}
	for _, f := range known {
		if _, ok := read[f]; !ok {
			read[f] = "a probe"
		}
	}
	for f, who := range read {
		if _, ok := probe.CollectFor(table, f); !ok {
			t.Errorf("%s, read by %s, has no entry in audit/probe/collect.yaml: say how to collect it by hand", f, who)
		}
	}
	// An entry nothing matches is a renamed fact's leftover.
	for _, c := range table {
		for _, pat := range c.Facts {
			prefix, family := strings.CutSuffix(pat, "*")
			if !slices.ContainsFunc(known, func(f string) bool { return f == pat || (family && strings.HasPrefix(f, prefix)) }) {
				t.Errorf("collect.yaml: %q matches no fact a probe emits or Go computes", pat)
			}
		}
	}
}

// TestExplain: a check, a Go finding and a symptom's correlation each
// explain with their facts grouped by collect entry; anything else is an
// UnknownIDError with the nearest ids.
func TestExplain(t *testing.T) {
	c := builtin(t)
	for _, tc := range []struct {
		id        string
		kind      string
		severity  string
		facts     [][]string
		closest   []string // for an unknown id
		unknownOK bool
	}{
		{id: "firewall.ufw-active", kind: "check", severity: "critical", facts: [][]string{{"ufw.active", "ufw.status", "ufw.config_enabled"}}},
		{id: "iptables.kube-rules-low", kind: "check", severity: "warning", facts: [][]string{{"iptables.kube_rules"}, {"kubeproxy.mode"}}},
		{id: "skew.target-skips-minor", kind: "finding", severity: "critical", facts: [][]string{{"rke2.version"}, {"target.version"}}},
		{id: "waiver.expired", kind: "finding", severity: "warning", facts: [][]string{}},
		{id: "correlation.kubeproxy.healthz-failing", kind: "finding", facts: [][]string{{"kubeproxy.health", "kubeproxy.healthz.code"}}},
		{id: "skew.servrs", unknownOK: true, closest: []string{"skew.servers"}},
		{id: "correlation.<symptom>", unknownOK: true},
		{id: "correlation.firewall.ufw-active", unknownOK: true},
	} {
		t.Run(tc.id, func(t *testing.T) {
			e, err := c.Explain(tc.id)
			var unknown *UnknownIDError
			if tc.unknownOK {
				if !errors.As(err, &unknown) {
					t.Fatalf("err %v; want an UnknownIDError", err)
				}
				if tc.closest != nil && !slices.Equal(unknown.Closest[:min(len(tc.closest), len(unknown.Closest))], tc.closest) {
					t.Errorf("closest %q; want %q first", unknown.Closest, tc.closest)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if e.ID != tc.id || e.Kind != tc.kind || e.Severity != tc.severity {
				t.Errorf("got %s %s %q; want %s %s %q", e.ID, e.Kind, e.Severity, tc.id, tc.kind, tc.severity)
			}
			var groups [][]string
			for _, f := range e.Facts {
				groups = append(groups, f.Facts)
				if len(f.Commands) == 0 {
					t.Errorf("%v: no commands", f.Facts)
				}
			}
			if len(groups) != len(tc.facts) || (len(groups) > 0 && !slices.EqualFunc(groups, tc.facts, slices.Equal[[]string])) {
				t.Errorf("facts %q; want %q", groups, tc.facts)
			}
			if e.Why == "" || e.Remediation == "" || len(e.References) == 0 {
				t.Errorf("why %q, remediation %q, references %q: want all three", e.Why, e.Remediation, e.References)
			}
		})
	}
}

// TestExplainUserCheck: a user's check without why or references is still
// explained (they are optional outside the binary), and a fact collect.yaml
// does not know is listed with no commands rather than dropped.
func TestExplainUserCheck(t *testing.T) {
	user, err := check.ParseChecks("site/x.yaml", []byte(`- id: site.custom
  title: a site rule
  severity: warning
  when:
    - {fact: site.thing, op: eq, value: bad}
  summary: the thing is bad
  remediation: fix the thing
`))
	if err != nil {
		t.Fatal(err)
	}
	e, err := (&Catalog{Checks: user, Probes: []probe.Probe{{ID: "site", Facts: []string{"site.thing"}}}}).Explain("site.custom")
	if err != nil {
		t.Fatal(err)
	}
	if e.Source != "site/x.yaml:1" || e.Why != "" || len(e.References) != 0 {
		t.Errorf("source %q, why %q, references %q", e.Source, e.Why, e.References)
	}
	if len(e.Facts) != 1 || e.Facts[0].Facts[0] != "site.thing" || len(e.Facts[0].Commands) != 0 || e.Facts[0].On != "" || e.Facts[0].Probe != "site" {
		t.Errorf("facts %+v; want site.thing of probe site without commands", e.Facts)
	}
}

// TestExplainFindings: a report's built-in checks, Go findings and
// correlations are explained, once each; a user's check is left out, since
// a re-render without its --probes could not explain it.
func TestExplainFindings(t *testing.T) {
	r := &result.Report{Findings: []result.Finding{
		{Check: "firewall.ufw-active"}, {Check: "firewall.ufw-active"},
		{Check: CorrelationPrefix + "k8s.kubeproxy-crashloop"}, {Check: SkewMixedVersionsID}, {Check: "site.custom"},
	}}
	got, err := ExplainFindings(r)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"correlation.k8s.kubeproxy-crashloop", "firewall.ufw-active", "skew.mixed-versions"}
	if ids := slices.Sorted(maps.Keys(got)); !slices.Equal(ids, want) {
		t.Errorf("explained %q; want %q", ids, want)
	}
	if got["firewall.ufw-active"].Source != "builtin" || got["firewall.ufw-active"].Why == "" {
		t.Errorf("firewall.ufw-active: %+v", got["firewall.ufw-active"])
	}
}

// TestExplainAll: the listing explains every id ExplainableIDs names, in
// its order, with no placeholder among them.
func TestExplainAll(t *testing.T) {
	c := builtin(t)
	all, err := c.ExplainAll()
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range all {
		ids = append(ids, e.ID)
	}
	if want := c.ExplainableIDs(); !slices.Equal(ids, want) {
		t.Errorf("ExplainAll explains %q; want %q", ids, want)
	}
	if slices.ContainsFunc(ids, func(id string) bool { return strings.Contains(id, "<") }) {
		t.Errorf("a placeholder id is listed: %q", ids)
	}
}
