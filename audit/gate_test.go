package audit

import (
	"strings"
	"testing"

	"github.com/fleet-audit/fleet-audit/result"
)

func TestEvaluateGateWaivers(t *testing.T) {
	w := &result.Waiver{Check: "x", Reason: "r", Expires: "2026-12-31", Source: "w.yaml:1"}
	crit := result.Finding{Check: "a", Severity: result.SeverityCritical}
	critWaived := result.Finding{Check: "b", Severity: result.SeverityCritical, Waived: w}
	warn := result.Finding{Check: "c", Severity: result.SeverityWarning}
	warnWaived := result.Finding{Check: "d", Severity: result.SeverityWarning, Waived: w}
	ok := result.Node{Name: "n1", Status: result.StatusOK}
	down := result.Node{Name: "n2", Status: result.StatusUnreachable}
	tests := []struct {
		name     string
		findings []result.Finding
		nodes    []result.Node
		policy   GatePolicy
		code     int
		reasons  string
	}{
		{"clean", nil, []result.Node{ok}, GatePolicy{FailOn: result.SeverityCritical}, result.ExitOK, ""},
		{"critical fails", []result.Finding{crit}, []result.Node{ok}, GatePolicy{FailOn: result.SeverityCritical}, result.ExitGateFailed, "1 critical finding"},
		{"waived critical passes and says so", []result.Finding{critWaived}, []result.Node{ok}, GatePolicy{FailOn: result.SeverityCritical}, result.ExitOK, "1 finding waived"},
		{"waived and live", []result.Finding{crit, critWaived, warnWaived}, []result.Node{ok}, GatePolicy{FailOn: result.SeverityCritical}, result.ExitGateFailed,
			"1 critical finding; 2 findings waived"},
		{"fail-on warning counts the live warning only", []result.Finding{warn, warnWaived}, []result.Node{ok}, GatePolicy{FailOn: result.SeverityWarning}, result.ExitGateFailed,
			"1 warning finding; 1 finding waived"},
		{"waived below fail-on is still counted as waived", []result.Finding{warnWaived}, []result.Node{ok}, GatePolicy{FailOn: result.SeverityCritical}, result.ExitOK, "1 finding waived"},
		{"unaudited node still gates 3", []result.Finding{critWaived}, []result.Node{ok, down}, GatePolicy{FailOn: result.SeverityCritical}, result.ExitUnaudited,
			"1 finding waived; 1 of 2 nodes not fully audited"},
		{"allowed unaudited", []result.Finding{critWaived}, []result.Node{ok, down}, GatePolicy{FailOn: result.SeverityCritical, AllowUnreachable: true}, result.ExitOK,
			"1 finding waived; 1 of 2 nodes not fully audited (allowed by --allow-unreachable)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := EvaluateGate(&result.Report{Findings: tt.findings, Nodes: tt.nodes}, tt.policy)
			if g.ExitCode != tt.code || g.Passed != (tt.code == result.ExitOK) {
				t.Errorf("exit %d passed %v, want %d", g.ExitCode, g.Passed, tt.code)
			}
			if got := strings.Join(g.Reasons, "; "); got != tt.reasons {
				t.Errorf("reasons %q, want %q", got, tt.reasons)
			}
		})
	}
}
