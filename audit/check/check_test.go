package check

import (
	"strings"
	"testing"

	"github.com/fleet-audit/fleet-audit/result"
)

func TestCheckEvaluate(t *testing.T) {
	tests := []struct {
		cond  Condition
		facts map[string]string
		want  result.Outcome
	}{
		{Condition{Fact: "f", Op: "eq", Value: "active"}, map[string]string{"f": "active"}, result.OutcomeFail},
		{Condition{Fact: "f", Op: "eq", Value: "active"}, map[string]string{"f": "inactive"}, result.OutcomePass},
		{Condition{Fact: "f", Op: "ne", Value: "1"}, map[string]string{"f": "0"}, result.OutcomeFail},
		{Condition{Fact: "f", Op: "ne", Value: "1"}, map[string]string{}, result.OutcomeSkip},
		{Condition{Fact: "f", Op: "not_in", Value: "200,absent"}, map[string]string{"f": "503"}, result.OutcomeFail},
		{Condition{Fact: "f", Op: "in", Value: "a, b"}, map[string]string{"f": "b"}, result.OutcomeFail},
		{Condition{Fact: "f", Op: "ge", Value: "10"}, map[string]string{"f": "abc"}, result.OutcomeSkip},
		{Condition{Fact: "f", Op: "lt", Value: "10"}, map[string]string{"f": "9"}, result.OutcomeFail},
		{Condition{Fact: "c", Op: "pct_of_ge", Ref: "m", Value: "80"}, map[string]string{"c": "110000", "m": "131072"}, result.OutcomeFail},
		{Condition{Fact: "c", Op: "pct_of_ge", Ref: "m", Value: "80"}, map[string]string{"c": "817", "m": "131072"}, result.OutcomePass},
		{Condition{Fact: "c", Op: "pct_of_ge", Ref: "m", Value: "80"}, map[string]string{"c": "817", "m": "absent"}, result.OutcomeSkip},
	}
	for _, tt := range tests {
		c := Check{ID: "x", When: []Condition{tt.cond}}
		if got, detail := c.Evaluate(tt.facts); got != tt.want {
			t.Errorf("%+v on %v = %s (%s), want %s", tt.cond, tt.facts, got, detail, tt.want)
		}
	}
}

func TestParseChecksRejectsBadInput(t *testing.T) {
	for name, text := range map[string]string{
		"unknown field":            "- {id: a, title: t, severity: critical, summary: s, remediation: r, when: [{fact: f, op: eq, value: x}], bogus: 1}",
		"unknown op":               "- {id: a, title: t, severity: critical, summary: s, remediation: r, when: [{fact: f, op: like, value: x}]}",
		"bad severity":             "- {id: a, title: t, severity: huge, summary: s, remediation: r, when: [{fact: f, op: eq, value: x}]}",
		"no when":                  "- {id: a, title: t, severity: critical, summary: s, remediation: r}",
		"duplicate id":             "- {id: a, title: t, severity: info, summary: s, remediation: r, when: [{fact: f, op: eq}]}\n- {id: a, title: t, severity: info, summary: s, remediation: r, when: [{fact: f, op: eq}]}",
		"evidence without unknown": "- {id: a, title: t, severity: info, summary: s, remediation: r, when: [{fact: f, op: eq, value: x, evidence: g}]}",
		"unknown is the value":     "- {id: a, title: t, severity: info, summary: s, remediation: r, when: [{fact: f, op: eq, value: x, unknown: x}]}",
	} {
		if _, err := ParseChecks("t.yaml", []byte(text)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestEvaluateNeverPassesOnUnreadValues: a fact a probe could not read
// (not-root without become, unreadable) decides nothing. Before, an eq
// condition on "not-root" held not, and the check passed blind.
func TestEvaluateNeverPassesOnUnreadValues(t *testing.T) {
	tests := []struct {
		name  string
		when  []Condition
		facts map[string]string
		want  result.Outcome
	}{
		{"eq on not-root", []Condition{{Fact: "f", Op: "eq", Value: "present"}}, map[string]string{"f": "not-root"}, result.OutcomeUnjudged},
		// A value the condition declares unknown: looked at, not known.
		{"eq on a declared unknown", []Condition{{Fact: "f", Op: "eq", Value: "unhealthy", Unknown: "unknown"}}, map[string]string{"f": "unknown"}, result.OutcomeUnjudged},
		{"undeclared unknown is a value like any", []Condition{{Fact: "f", Op: "eq", Value: "unhealthy"}}, map[string]string{"f": "unknown"}, result.OutcomePass},
		{"declared unknown, another condition clears", []Condition{{Fact: "f", Op: "eq", Value: "unhealthy", Unknown: "unknown"}, {Fact: "g", Op: "eq", Value: "x"}}, map[string]string{"f": "unknown", "g": "y"}, result.OutcomePass},
		{"ne on not-root", []Condition{{Fact: "f", Op: "ne", Value: "inactive"}}, map[string]string{"f": "not-root"}, result.OutcomeUnjudged},
		{"numeric on not-root", []Condition{{Fact: "f", Op: "lt", Value: "3"}}, map[string]string{"f": "not-root"}, result.OutcomeUnjudged},
		{"unreadable", []Condition{{Fact: "f", Op: "eq", Value: "yes"}}, map[string]string{"f": "unreadable"}, result.OutcomeUnjudged},
		{"ref unreadable", []Condition{{Fact: "f", Op: "ne", Ref: "g"}}, map[string]string{"f": "enforcing", "g": "unreadable"}, result.OutcomeUnjudged},
		{"named on purpose", []Condition{{Fact: "f", Op: "not_in", Value: "absent,unreadable"}}, map[string]string{"f": "unreadable"}, result.OutcomePass},
		{"another condition clears", []Condition{{Fact: "f", Op: "eq", Value: "x"}, {Fact: "g", Op: "eq", Value: "active"}},
			map[string]string{"f": "not-root", "g": "inactive"}, result.OutcomePass},
		{"another condition holds", []Condition{{Fact: "f", Op: "eq", Value: "x"}, {Fact: "g", Op: "eq", Value: "active"}},
			map[string]string{"f": "not-root", "g": "active"}, result.OutcomeUnjudged},
		{"not collected is not applicable", []Condition{{Fact: "f", Op: "eq", Value: "x"}}, map[string]string{}, result.OutcomeSkip},
	}
	for _, tt := range tests {
		c := Check{ID: "x", When: tt.when}
		got, detail := c.Evaluate(tt.facts)
		if got != tt.want {
			t.Errorf("%s: %s (%s), want %s", tt.name, got, detail, tt.want)
		}
		if got == result.OutcomeUnjudged && !strings.Contains(detail, "=") {
			t.Errorf("%s: detail %q names no fact", tt.name, detail)
		}
	}
}

// TestJudgeUniformOnUnreadValues: a uniform fact every node reads as
// not-root is "the same on all" only in appearance.
func TestJudgeUniformOnUnreadValues(t *testing.T) {
	nodes := []result.Node{
		{Name: "a", Status: result.StatusOK, Facts: map[string]string{"u": "not-root"}},
		{Name: "b", Status: result.StatusOK, Facts: map[string]string{"u": "not-root"}},
	}
	for _, r := range Judge(nodes, nil, []Check{{ID: "x", Uniform: "u", Scope: "node"}}, nil) {
		if r.Outcome != result.OutcomeUnjudged {
			t.Errorf("%s on %s: %s (%s), want unjudged", r.Check, r.Node, r.Outcome, r.Detail)
		}
	}
}

// TestSkipNamesTheFailedClusterView: a node check reading a fact of the
// cluster view is skipped when the view gave none, and its detail says
// why. Before, it read "k8s.kubeproxy.pod.ready not collected", the same
// as a probe that never ran, although the cluster view had failed.
func TestSkipNamesTheFailedClusterView(t *testing.T) {
	nodes := []result.Node{{Name: "a", Status: result.StatusOK, Facts: map[string]string{"host.swap": "off"}}}
	c := Check{ID: "x", Scope: "node", When: []Condition{{Fact: "host.swap", Op: "eq", Value: "off"}, {Fact: "k8s.kubeproxy.pod.ready", Op: "eq", Value: "false"}}}
	own := Check{ID: "y", Scope: "node", When: []Condition{{Fact: "module.br_netfilter", Op: "eq", Value: "absent"}}}
	tests := []struct {
		name    string
		cluster *result.Cluster
		want    string
	}{
		{"failed", &result.Cluster{Status: result.ClusterFailed, Message: "no server answered: a: timeout"},
			"k8s.kubeproxy.pod.ready not collected: the cluster view failed: no server answered: a: timeout"},
		{"no server", &result.Cluster{Status: result.ClusterNoServer, Message: "no node has the server role"},
			"k8s.kubeproxy.pod.ready not collected: no server to ask for the cluster view: no node has the server role"},
		{"not run", nil, "k8s.kubeproxy.pod.ready not collected: the cluster probes did not run"},
		// The view answered and has nothing for this node: nothing failed.
		{"ok", &result.Cluster{Status: result.ClusterOK, Facts: map[string]string{"cluster.api": "ok"}}, "k8s.kubeproxy.pod.ready not collected"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, r := range Judge(nodes, tt.cluster, []Check{c, own}, nil) {
				want := tt.want
				if r.Check == "y" {
					// A node fact's own skip is not the cluster view's.
					want = "module.br_netfilter not collected"
				}
				if r.Outcome != result.OutcomeSkip || r.Detail != want {
					t.Errorf("%s: %s %q, want skip %q", r.Check, r.Outcome, r.Detail, want)
				}
			}
		})
	}
}
