package audit

import (
	"strings"
	"testing"

	"github.com/fleet-audit/fleet-audit/audit/check"
	"github.com/fleet-audit/fleet-audit/audit/probe"
	"github.com/fleet-audit/fleet-audit/result"
)

func TestCorrelateNearMatchAndNoMatch(t *testing.T) {
	probes := []probe.Probe{{ID: "k", Facts: []string{"hz"}}, {ID: "f", Facts: []string{"fw", "kern"}}}
	checks := []check.Check{{ID: "hz", Title: "healthz", Severity: result.SeverityCritical, Symptom: true, When: []check.Condition{{Fact: "hz", Op: "ne", Value: "200"}}}}
	mk := func(name, hz, fw, kern string) result.Node {
		return result.Node{Name: name, Status: result.StatusOK, Facts: map[string]string{"hz": hz, "fw": fw, "kern": kern}}
	}
	// fw=on explains 4 of 4 sick nodes plus one healthy node: a near match.
	nodes := []result.Node{mk("a", "503", "on", "1"), mk("b", "503", "on", "2"), mk("c", "503", "on", "1"), mk("d", "503", "on", "2"),
		mk("e", "200", "on", "1"), mk("f", "200", "off", "2"), mk("g", "200", "off", "1"), mk("h", "200", "off", "2"), mk("i", "200", "off", "1")}
	fs := Correlate(nodes, checks, check.Judge(nodes, nil, checks, nil), probes)
	if len(fs) != 1 || fs[0].Cause == nil || fs[0].Cause.Fact != "fw" || fs[0].Cause.Exact || fs[0].Cause.Extra != 1 {
		t.Fatalf("near match: %+v", fs)
	}
	// Nothing splits like the symptom: an info finding that says so.
	nodes[4].Facts["fw"], nodes[0].Facts["fw"], nodes[1].Facts["fw"] = "off", "off", "off"
	fs = Correlate(nodes, checks, check.Judge(nodes, nil, checks, nil), probes)
	if len(fs) != 1 || fs[0].Cause != nil || fs[0].Severity != result.SeverityInfo {
		t.Fatalf("no match: %+v", fs)
	}
	// Every node sick: cluster-wide, not drift.
	for i := range nodes {
		nodes[i].Facts["hz"] = "503"
	}
	fs = Correlate(nodes, checks, check.Judge(nodes, nil, checks, nil), probes)
	if len(fs) != 1 || !strings.Contains(fs[0].Summary, "cluster-wide") {
		t.Fatalf("all sick: %+v", fs)
	}
}

func TestEvaluateGate(t *testing.T) {
	crit := result.Finding{Severity: result.SeverityCritical}
	warn := result.Finding{Severity: result.SeverityWarning}
	info := result.Finding{Severity: result.SeverityInfo}
	unknown := result.Finding{Severity: result.SeverityUnknown}
	ok := result.Node{Status: result.StatusOK}
	down := result.Node{Status: result.StatusUnreachable}
	tests := []struct {
		name        string
		r           result.Report
		p           GatePolicy
		want        int
		interrupted bool
	}{
		{"clean", result.Report{Nodes: []result.Node{ok}}, GatePolicy{FailOn: result.SeverityCritical}, 0, false},
		{"critical", result.Report{Nodes: []result.Node{ok}, Findings: []result.Finding{crit}}, GatePolicy{FailOn: result.SeverityCritical}, 1, false},
		{"warning below fail-on", result.Report{Nodes: []result.Node{ok}, Findings: []result.Finding{warn}}, GatePolicy{FailOn: result.SeverityCritical}, 0, false},
		{"warning at fail-on", result.Report{Nodes: []result.Node{ok}, Findings: []result.Finding{warn}}, GatePolicy{FailOn: result.SeverityWarning}, 1, false},
		{"info below fail-on warning", result.Report{Nodes: []result.Node{ok}, Findings: []result.Finding{info}}, GatePolicy{FailOn: result.SeverityWarning}, 0, false},
		// A finding nobody graded fails at every --fail-on (result.Severity).
		{"unknown at fail-on critical", result.Report{Nodes: []result.Node{ok}, Findings: []result.Finding{unknown}}, GatePolicy{FailOn: result.SeverityCritical}, 1, false},
		{"unknown at fail-on info", result.Report{Nodes: []result.Node{ok}, Findings: []result.Finding{unknown}}, GatePolicy{FailOn: result.SeverityInfo}, 1, false},
		{"unreachable", result.Report{Nodes: []result.Node{ok, down}}, GatePolicy{FailOn: result.SeverityCritical}, 3, false},
		{"unreachable allowed", result.Report{Nodes: []result.Node{ok, down}}, GatePolicy{FailOn: result.SeverityCritical, AllowUnreachable: true}, 0, false},
		{"both", result.Report{Nodes: []result.Node{ok, down}, Findings: []result.Finding{crit}}, GatePolicy{FailOn: result.SeverityCritical}, 1, false},
		{"interrupted", result.Report{Nodes: []result.Node{ok}, Interrupted: true}, GatePolicy{FailOn: result.SeverityCritical}, 130, true},
	}
	for _, tt := range tests {
		g := EvaluateGate(&tt.r, tt.p)
		if g.ExitCode != tt.want || g.Passed != (tt.want == 0) {
			t.Errorf("%s: gate = %+v, want exit %d", tt.name, g, tt.want)
		}
		if tt.want == 1 && len(g.Reasons) == 0 {
			t.Errorf("%s: a failing gate without a reason", tt.name)
		}
		if tt.name == "both" && len(g.Reasons) != 2 {
			t.Errorf("both: reasons = %v, want the finding and the unaudited node", g.Reasons)
		}
	}
}
