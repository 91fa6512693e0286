package audit

import (
	"strings"
	"testing"
)

func TestEvaluateGateWaivers(t *testing.T) {
	w := &Waiver{Check: "x", Reason: "r", Expires: "2026-12-31", Source: "w.yaml:1"}
	crit := Finding{Check: "a", Severity: SeverityCritical}
	critWaived := Finding{Check: "b", Severity: SeverityCritical, Waived: w}
	warn := Finding{Check: "c", Severity: SeverityWarning}
	warnWaived := Finding{Check: "d", Severity: SeverityWarning, Waived: w}
	ok := Node{Name: "n1", Status: StatusOK}
	down := Node{Name: "n2", Status: StatusUnreachable}
	tests := []struct {
		name     string
		findings []Finding
		nodes    []Node
		policy   GatePolicy
		code     int
		reasons  string
	}{
		{"clean", nil, []Node{ok}, GatePolicy{FailOn: SeverityCritical}, ExitOK, ""},
		{"critical fails", []Finding{crit}, []Node{ok}, GatePolicy{FailOn: SeverityCritical}, ExitGateFailed, "1 critical finding"},
		{"waived critical passes and says so", []Finding{critWaived}, []Node{ok}, GatePolicy{FailOn: SeverityCritical}, ExitOK, "1 finding waived"},
		{"waived and live", []Finding{crit, critWaived, warnWaived}, []Node{ok}, GatePolicy{FailOn: SeverityCritical}, ExitGateFailed,
			"1 critical finding; 2 findings waived"},
		{"fail-on warning counts the live warning only", []Finding{warn, warnWaived}, []Node{ok}, GatePolicy{FailOn: SeverityWarning}, ExitGateFailed,
			"1 warning finding; 1 finding waived"},
		{"waived below fail-on is still counted as waived", []Finding{warnWaived}, []Node{ok}, GatePolicy{FailOn: SeverityCritical}, ExitOK, "1 finding waived"},
		{"unaudited node still gates 3", []Finding{critWaived}, []Node{ok, down}, GatePolicy{FailOn: SeverityCritical}, ExitUnaudited,
			"1 finding waived; 1 of 2 nodes not fully audited"},
		{"allowed unaudited", []Finding{critWaived}, []Node{ok, down}, GatePolicy{FailOn: SeverityCritical, AllowUnreachable: true}, ExitOK,
			"1 finding waived; 1 of 2 nodes not fully audited (allowed by --allow-unreachable)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := EvaluateGate(&Report{Findings: tt.findings, Nodes: tt.nodes}, tt.policy)
			if g.ExitCode != tt.code || g.Passed != (tt.code == ExitOK) {
				t.Errorf("exit %d passed %v, want %d", g.ExitCode, g.Passed, tt.code)
			}
			if got := strings.Join(g.Reasons, "; "); got != tt.reasons {
				t.Errorf("reasons %q, want %q", got, tt.reasons)
			}
		})
	}
}
