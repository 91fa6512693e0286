//go:build linux

package main

import (
	"strings"
	"testing"

	"github.com/fleet-audit/fleet-audit/audit"
	"github.com/fleet-audit/fleet-audit/result"
)

// TestReportRefusesForgedGate: `report` exits with the saved gate, so the
// gate in the file must be the one its findings, node statuses and policy
// give. A file whose exit_code, passed or fail_on disagree with them (256,
// which a shell sees as 0; a pass over a critical finding) is refused with
// exit 2 naming the field, never obeyed; genuine files exit as saved.
func TestReportRefusesForgedGate(t *testing.T) {
	critical := audit.GatePolicy{FailOn: result.SeverityCritical}
	unreachable := func(r *result.Report) {
		r.Findings = []result.Finding{}
		r.Nodes[1].Status = result.StatusUnreachable
	}
	for _, tc := range []struct {
		name      string
		policy    audit.GatePolicy
		edit      func(*result.Report)
		forge     func(*result.Report)
		wantCode  int
		wantField string // named in the error when the file is refused
	}{
		{"genuine failure", critical, nil, nil, 1, ""},
		{"genuine pass", critical, noFindings, nil, 0, ""},
		{"genuine unreachable", critical, unreachable, nil, 3, ""},
		{"unreachable allowed", audit.GatePolicy{FailOn: result.SeverityCritical, AllowUnreachable: true}, unreachable, nil, 0, ""},
		{"exit code 256", critical, nil, func(r *result.Report) { r.Gate.ExitCode = 256 }, 2, "gate.exit_code"},
		{"pass over a critical finding", critical, nil, func(r *result.Report) {
			r.Gate.ExitCode, r.Gate.Passed, r.Gate.Reasons = 0, true, []string{}
		}, 2, "gate.exit_code"},
		{"passed but exit 1", critical, nil, func(r *result.Report) { r.Gate.Passed = true }, 2, "gate.passed"},
		{"exit 3 with every node audited", critical, noFindings, func(r *result.Report) {
			r.Gate.ExitCode, r.Gate.Passed = 3, false
		}, 2, "gate.exit_code"},
		{"allow_unreachable flipped", critical, unreachable, func(r *result.Report) { r.Gate.AllowUnreachable = true }, 2, "gate.exit_code"},
		{"interrupted run that passed", critical, noFindings, func(r *result.Report) { r.Interrupted = true }, 2, "gate.exit_code"},
		{"unknown fail_on", critical, noFindings, func(r *result.Report) { r.Gate.FailOn = result.SeverityUnknown }, 2, "gate.fail_on"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var forge []func(*result.Report)
			if tc.forge != nil {
				forge = append(forge, tc.forge)
			}
			saved := writeSavedRun(t, t.TempDir(), tc.policy, tc.edit, forge...)
			code, stdout, stderr := runCLI(t, "report", "-q", saved)
			if code != tc.wantCode {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.wantCode, stdout, stderr)
			}
			if tc.wantField != "" && (!strings.Contains(stderr, tc.wantField) || stdout != "") {
				t.Errorf("stdout %q, stderr %q: want nothing rendered and an error naming %s", stdout, stderr, tc.wantField)
			}
		})
	}
}

// TestReportFailOn: report --fail-on re-judges a saved run with run's own
// gate at another severity, the run's other policy kept, and the reports
// say it was re-judged; without it the saved gate stands.
func TestReportFailOn(t *testing.T) {
	warningOnly := func(r *result.Report) { r.Findings[0].Severity = result.SeverityWarning }
	unreachable := func(r *result.Report) {
		warningOnly(r)
		r.Nodes[1].Status = result.StatusUnreachable
	}
	for _, tc := range []struct {
		name     string
		policy   audit.GatePolicy
		edit     func(*result.Report)
		args     []string
		wantCode int
		wantOut  string
	}{
		{"saved gate stands", audit.GatePolicy{FailOn: result.SeverityCritical}, warningOnly, nil, 0, "gate: passed"},
		{"stricter", audit.GatePolicy{FailOn: result.SeverityCritical}, warningOnly, []string{"--fail-on", "warning"}, 1,
			"gate: FAILED (exit 1): 1 warning finding; re-judged at --fail-on warning by fleet-audit report (the run gated at critical)"},
		{"laxer", audit.GatePolicy{FailOn: result.SeverityWarning}, warningOnly, []string{"--fail-on=critical"}, 0, "gate: passed"},
		{"same as saved", audit.GatePolicy{FailOn: result.SeverityCritical}, nil, []string{"--fail-on", "critical"}, 1, "gate: FAILED (exit 1): 1 critical finding"},
		{"unreachable still allowed", audit.GatePolicy{FailOn: result.SeverityCritical, AllowUnreachable: true}, unreachable, []string{"--fail-on", "info"}, 1, "1 warning finding"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			saved := writeSavedRun(t, dir, tc.policy, tc.edit)
			out := dir + "/again.json"
			code, stdout, stderr := runCLI(t, append([]string{"report", "-q", saved, "--json", out}, tc.args...)...)
			if code != tc.wantCode || !strings.Contains(stdout, tc.wantOut) {
				t.Errorf("exit %d, stdout %q (stderr %q); want %d and %q", code, stdout, stderr, tc.wantCode, tc.wantOut)
			}
			// The re-judged file is consistent: report reads it back and
			// exits with its new gate.
			if code, _, stderr := runCLI(t, "report", "-q", out); code != tc.wantCode {
				t.Errorf("the re-judged file exits %d (stderr %q); want %d", code, stderr, tc.wantCode)
			}
		})
	}
	if code, _, stderr := runCLI(t, "report", "--fail-on", "fatal", writeSavedRun(t, t.TempDir(), audit.GatePolicy{FailOn: result.SeverityCritical}, nil)); code != 2 || !strings.Contains(stderr, "--fail-on") {
		t.Errorf("--fail-on fatal: exit %d, stderr %q; want 2 naming --fail-on", code, stderr)
	}
}
