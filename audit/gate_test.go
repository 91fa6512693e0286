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

// TestEvaluateGatePartial: a node some checks could not be judged on
// fails the gate with 3, allowed by --allow-partial alone: the flag that
// tolerates a node down must not pass a fleet audited without root.
func TestEvaluateGatePartial(t *testing.T) {
	ok := result.Node{Name: "n1", Status: result.StatusOK}
	partial := result.Node{Name: "n2", Status: result.StatusPartial}
	unjudged := []result.CheckResult{{Check: "a", Node: "n2", Outcome: result.OutcomeUnjudged}, {Check: "b", Node: "n2", Outcome: result.OutcomeUnjudged}}
	crit := result.Finding{Check: "c", Severity: result.SeverityCritical}
	tests := []struct {
		name     string
		findings []result.Finding
		policy   GatePolicy
		code     int
		reasons  string
	}{
		{"partial gates 3", nil, GatePolicy{FailOn: result.SeverityCritical}, result.ExitUnaudited,
			"1 of 2 nodes partially audited: 2 checks could not be judged (see each node)"},
		{"allow-unreachable does not cover it", nil, GatePolicy{FailOn: result.SeverityCritical, AllowUnreachable: true}, result.ExitUnaudited,
			"1 of 2 nodes partially audited: 2 checks could not be judged (see each node)"},
		{"allow-partial passes and says so", nil, GatePolicy{FailOn: result.SeverityCritical, AllowPartial: true}, result.ExitOK,
			"1 of 2 nodes partially audited: 2 checks could not be judged (see each node) (allowed by --allow-partial)"},
		{"a finding still fails 1", []result.Finding{crit}, GatePolicy{FailOn: result.SeverityCritical}, result.ExitGateFailed,
			"1 critical finding; 1 of 2 nodes partially audited: 2 checks could not be judged (see each node)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := EvaluateGate(&result.Report{Findings: tt.findings, Nodes: []result.Node{ok, partial}, Checks: unjudged}, tt.policy)
			if g.ExitCode != tt.code || g.Passed != (tt.code == result.ExitOK) {
				t.Errorf("exit %d passed %v, want %d", g.ExitCode, g.Passed, tt.code)
			}
			if got := strings.Join(g.Reasons, "; "); got != tt.reasons {
				t.Errorf("reasons %q, want %q", got, tt.reasons)
			}
		})
	}
}
