package check_test

// The judge's rules and the checks-file parser's, from outside the
// package, as a checks file meets them.

import (
	"reflect"
	"strings"
	"testing"

	"github.com/fleet-audit/fleet-audit/audit/check"
	"github.com/fleet-audit/fleet-audit/audit/probe"
	"github.com/fleet-audit/fleet-audit/result"
)

func TestConditionOperators(t *testing.T) {
	facts := map[string]string{"k": "6.1.0-28-amd64", "v": "v1.31.4+rke2r1", "n": "90", "m": "100", "ipt": "1.8.4", "word": "x"}
	tests := []struct {
		cond check.Condition
		want result.Outcome
	}{
		{check.Condition{Fact: "k", Op: "version_lt", Value: "5.13"}, result.OutcomePass},
		{check.Condition{Fact: "k", Op: "version_ge", Value: "6.1"}, result.OutcomeFail},
		{check.Condition{Fact: "v", Op: "version_ge", Value: "1.35"}, result.OutcomePass},
		{check.Condition{Fact: "v", Op: "version_lt", Value: "v1.31.5"}, result.OutcomeFail},
		{check.Condition{Fact: "ipt", Op: "version_lt", Value: "1.8.5"}, result.OutcomeFail},
		{check.Condition{Fact: "ipt", Op: "version_le", Value: "1.8.4"}, result.OutcomeFail},
		{check.Condition{Fact: "ipt", Op: "version_gt", Value: "1.8.4"}, result.OutcomePass},
		{check.Condition{Fact: "word", Op: "version_lt", Value: "1"}, result.OutcomeSkip},
		{check.Condition{Fact: "n", Op: "lt", Ref: "m"}, result.OutcomeFail},
		{check.Condition{Fact: "m", Op: "lt", Ref: "n"}, result.OutcomePass},
		{check.Condition{Fact: "n", Op: "eq", Ref: "m"}, result.OutcomePass},
		{check.Condition{Fact: "n", Op: "ge", Ref: "missing"}, result.OutcomeSkip},
		{check.Condition{Fact: "n", Op: "pct_of_ge", Ref: "m", Value: "90"}, result.OutcomeFail},
	}
	for _, tt := range tests {
		c := check.Check{ID: "x", When: []check.Condition{tt.cond}}
		if got, detail := c.Evaluate(facts); got != tt.want {
			t.Errorf("%+v = %s (%s), want %s", tt.cond, got, detail, tt.want)
		}
	}
}

func TestParseChecksNamesFileLineAndField(t *testing.T) {
	tests := []struct {
		name, text, want string
	}{
		{"unknown field", "- id: a\n  title: t\n  severity: info\n  summary: s\n  remediation: r\n  when: [{fact: f, op: eq, value: x}]\n  bogus: 1\n", "c.yaml:7: "},
		{"unknown op", "- id: a\n  title: t\n  severity: info\n  summary: s\n  remediation: r\n  when:\n    - {fact: f, op: like, value: x}\n", `c.yaml:6: check "a": when: condition 1: unknown op "like"`},
		{"missing title on the second check", "- {id: a, title: t, severity: info, summary: s, remediation: r, when: [{fact: f, op: eq}]}\n- id: b\n  severity: info\n  summary: s\n  remediation: r\n  when: [{fact: f, op: eq}]\n", `c.yaml:2: check "b": title: is required`},
		{"bad severity", "- id: a\n  title: t\n  severity: huge\n", "c.yaml:3: "},
		{"numeric op on a word", "- {id: a, title: t, severity: info, summary: s, remediation: r, when: [{fact: f, op: ge, value: lots}]}\n", "needs a numeric value"},
		{"value and ref", "- {id: a, title: t, severity: info, summary: s, remediation: r, when: [{fact: f, op: ge, value: '1', ref: g}]}\n", "value or ref, not both"},
		{"bad scope", "- {id: a, title: t, severity: info, summary: s, remediation: r, scope: galaxy, when: [{fact: f, op: eq}]}\n", "scope: want node or cluster"},
		{"duplicate id", "- {id: a, title: t, severity: info, summary: s, remediation: r, when: [{fact: f, op: eq}]}\n- {id: a, title: t, severity: info, summary: s, remediation: r, when: [{fact: f, op: eq}]}\n", `c.yaml:2: id: "a" is already defined at c.yaml:1`},
		{"not a list", "id: a\n", "c.yaml:1: want a list of checks"},
		{"peers on another op", "- id: a\n  title: t\n  severity: info\n  summary: s\n  remediation: r\n  when:\n    - {fact: f, op: lt, value: '3', peers: g}\n", `c.yaml:6: check "a": when: condition 1: peers applies only to pct_of_median_lt, not lt`},
		{"peers not a fact key", "- id: a\n  title: t\n  severity: info\n  summary: s\n  remediation: r\n  when:\n    - {fact: f, op: pct_of_median_lt, value: '50', peers: 'Kube Proxy'}\n", `c.yaml:6: check "a": when: condition 1: peers: want a fact key, got "Kube Proxy"`},
	}
	for _, tt := range tests {
		_, err := check.ParseChecks("c.yaml", []byte(tt.text))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want it to contain %q", tt.name, err, tt.want)
		}
	}
}

func TestUniformCheck(t *testing.T) {
	c := check.Check{ID: "mode-mixed", Severity: result.SeverityCritical, Uniform: "mode", When: []check.Condition{{Fact: "mode", Op: "ne", Value: "unknown"}}}
	mk := func(name, mode string) result.Node {
		return result.Node{Name: name, Status: result.StatusOK, Facts: map[string]string{"mode": mode}}
	}
	failing := func(nodes []result.Node) []string {
		var out []string
		for _, r := range check.Judge(nodes, nil, []check.Check{c}, nil) {
			if r.Outcome == result.OutcomeFail {
				out = append(out, r.Node)
			}
		}
		return out
	}
	tests := []struct {
		name  string
		nodes []result.Node
		want  []string
	}{
		{"all the same", []result.Node{mk("a", "iptables"), mk("b", "iptables")}, nil},
		{"one outlier", []result.Node{mk("a", "iptables"), mk("b", "ipvs"), mk("c", "iptables")}, []string{"b"}},
		{"unknown is not compared", []result.Node{mk("a", "iptables"), mk("b", "unknown"), mk("c", "iptables")}, nil},
		{"a tie fails everyone", []result.Node{mk("a", "iptables"), mk("b", "ipvs")}, []string{"a", "b"}},
		{"unaudited nodes are skipped", []result.Node{mk("a", "iptables"), {Name: "b", Status: result.StatusUnreachable}, mk("c", "iptables")}, nil},
	}
	for _, tt := range tests {
		if got := failing(tt.nodes); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: failing = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestFleetMedianCondition(t *testing.T) {
	c := check.Check{ID: "few-rules", Severity: result.SeverityWarning, When: []check.Condition{{Fact: "rules", Op: "pct_of_median_lt", Value: "50"}}}
	var nodes []result.Node
	for i, v := range []string{"120", "118", "40", "121", "not-root"} {
		nodes = append(nodes, result.Node{Name: string(rune('a' + i)), Status: result.StatusOK, Facts: map[string]string{"rules": v}})
	}
	got := map[string]result.Outcome{}
	for _, r := range check.Judge(nodes, nil, []check.Check{c}, nil) {
		got[r.Node] = r.Outcome
	}
	want := map[string]result.Outcome{"a": result.OutcomePass, "b": result.OutcomePass, "c": result.OutcomeFail, "d": result.OutcomePass, "e": result.OutcomeUnjudged}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("outcomes = %v, want %v", got, want)
	}
	// Two peers are too few to call either an outlier.
	if rs := check.Judge(nodes[:2], nil, []check.Check{c}, nil); rs[0].Outcome != result.OutcomeSkip {
		t.Fatalf("with two nodes: %+v", rs)
	}
}

// TestFleetMedianPeers: with peers, a node is compared with the median of
// the nodes sharing its value of the peers fact, and the 3-node minimum
// holds per value.
func TestFleetMedianPeers(t *testing.T) {
	byPeers := check.Check{ID: "few-rules", Severity: result.SeverityWarning, When: []check.Condition{{Fact: "rules", Op: "pct_of_median_lt", Value: "50", Peers: "mode"}}}
	// The same fact without peers, in the same run: its median is the
	// fleet's and must not leak into the other's.
	fleetWide := check.Check{ID: "few-rules-fleet", Severity: result.SeverityWarning, When: []check.Condition{{Fact: "rules", Op: "pct_of_median_lt", Value: "50"}}}
	mk := func(name, mode, rules string) result.Node {
		f := map[string]string{"rules": rules}
		if mode != "" {
			f["mode"] = mode
		}
		return result.Node{Name: name, Status: result.StatusOK, Facts: f}
	}
	nodes := []result.Node{
		mk("a1", "a", "10"), mk("a2", "a", "11"), mk("a3", "a", "12"), mk("a4", "a", "4"),
		mk("b1", "b", "400"), mk("b2", "b", "410"), mk("b3", "b", "420"), mk("b4", "b", "150"),
		mk("c1", "c", "1"), mk("c2", "c", "500"),
		mk("none", "", "3"),
		mk("b-root", "b", "not-root"),
		{Name: "down", Status: result.StatusUnreachable},
	}
	type want struct {
		outcome result.Outcome
		detail  string
	}
	tests := []struct {
		check check.Check
		want  map[string]want
	}{
		{byPeers, map[string]want{
			"a1": {result.OutcomePass, "rules=10 (median 10.5 of the nodes with mode=a)"},
			"a2": {result.OutcomePass, ""}, "a3": {result.OutcomePass, ""},
			"a4": {result.OutcomeFail, "rules=4 (median 10.5 of the nodes with mode=a)"},
			"b1": {result.OutcomePass, ""}, "b2": {result.OutcomePass, ""}, "b3": {result.OutcomePass, ""},
			"b4": {result.OutcomeFail, "rules=150 (median 405 of the nodes with mode=b)"},
			"c1": {result.OutcomeSkip, "fewer than 3 nodes with mode=c report rules"}, "c2": {result.OutcomeSkip, ""},
			"none":   {result.OutcomeSkip, "mode not collected: no peers to compare rules with"},
			"b-root": {result.OutcomeUnjudged, ""},
			"down":   {result.OutcomeSkip, ""},
		}},
		// Over the whole fleet (median 12 of 11 numeric values) the stale b4
		// passes and whoever is in the small group fails: what peers is for.
		{fleetWide, map[string]want{
			"a1": {result.OutcomePass, "rules=10 (median 12 of the audited nodes)"}, "a2": {result.OutcomePass, ""}, "a3": {result.OutcomePass, ""}, "a4": {result.OutcomeFail, ""},
			"b1": {result.OutcomePass, ""}, "b2": {result.OutcomePass, ""}, "b3": {result.OutcomePass, ""}, "b4": {result.OutcomePass, ""},
			"c1": {result.OutcomeFail, ""}, "c2": {result.OutcomePass, ""},
			"none": {result.OutcomeFail, ""}, "b-root": {result.OutcomeUnjudged, ""}, "down": {result.OutcomeSkip, ""},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.check.ID, func(t *testing.T) {
			for _, r := range check.Judge(nodes, nil, []check.Check{byPeers, fleetWide}, nil) {
				if r.Check != tt.check.ID {
					continue
				}
				w := tt.want[r.Node]
				if r.Outcome != w.outcome || (w.detail != "" && r.Detail != w.detail) {
					t.Errorf("%s: %s (%s), want %s (%s)", r.Node, r.Outcome, r.Detail, w.outcome, w.detail)
				}
			}
		})
	}
}

func TestClusterChecksSeeClusterFactsAndNodeChecksToo(t *testing.T) {
	cluster := &result.Cluster{Status: result.ClusterOK, Facts: map[string]string{"cluster.readyz": "failed", "cluster.rbac.ok": "yes"}}
	checks := []check.Check{
		{ID: "readyz", Scope: probe.ScopeCluster, Severity: result.SeverityCritical, When: []check.Condition{{Fact: "cluster.readyz", Op: "ne", Value: "ok"}}},
		{ID: "transient", Scope: probe.ScopeNode, Severity: result.SeverityInfo, When: []check.Condition{{Fact: "denied", Op: "eq", Value: "yes"}, {Fact: "cluster.rbac.ok", Op: "eq", Value: "yes"}}},
	}
	nodes := []result.Node{{Name: "a", Status: result.StatusOK, Facts: map[string]string{"denied": "yes"}}, {Name: "b", Status: result.StatusOK, Facts: map[string]string{"denied": "no"}}}
	got := map[string]result.Outcome{}
	for _, r := range check.Judge(nodes, cluster, checks, nil) {
		got[r.Check+"@"+r.Node] = r.Outcome
	}
	want := map[string]result.Outcome{"readyz@" + result.ClusterNode: result.OutcomeFail, "transient@a": result.OutcomeFail, "transient@b": result.OutcomePass}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("outcomes = %v, want %v", got, want)
	}
	fs := check.CheckFindings(checks, check.Judge(nodes, cluster, checks, nil))
	if len(fs) != 2 || fs[0].Check != "readyz" || len(fs[0].Nodes) != 0 {
		t.Fatalf("findings = %+v", fs)
	}
	// Without cluster facts, cluster checks skip and say why.
	rs := check.Judge(nodes, &result.Cluster{Status: result.ClusterNoServer, Message: "no reachable RKE2 server node"}, checks[:1], nil)
	if rs[0].Outcome != result.OutcomeSkip || !strings.Contains(rs[0].Detail, "no reachable") {
		t.Fatalf("no cluster: %+v", rs[0])
	}
}
