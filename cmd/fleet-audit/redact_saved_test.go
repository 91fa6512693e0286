package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fleet-audit/fleet-audit/audit"
	"github.com/fleet-audit/fleet-audit/report"
	"github.com/fleet-audit/fleet-audit/result"
)

// TestReportRedactsSavedSecrets: a results file written before a secret's
// shape was redacted still holds the secret in a fact, a drift value, a
// cause and a finding's evidence. report, diff and merge render such files;
// none of their outputs may carry it again.
func TestReportRedactsSavedSecrets(t *testing.T) {
	// An RKE2 join token (K10<ca-hash>::<user>:<secret>), which the
	// redactor knows today.
	const secret = "K10a1b2c3d4e5f6a7b8c9d0::server:9f8e7d6c5b4a"
	dir := t.TempDir()
	node := func(name, token string) result.Node {
		return result.Node{Name: name, Address: name + ".example", Roles: []string{"server"}, Status: result.StatusOK,
			Facts: map[string]string{"os.kernel": "6.1.0", "rke2.config.server_url": token}, Probes: []result.ProbeRun{}}
	}
	r := &result.Report{
		SchemaVersion: result.SchemaVersion, Tool: result.Tool{Name: "fleet-audit", Version: buildVersion}, Inventory: "inv.yaml",
		StartedAt: time.Date(2025, 5, 1, 2, 0, 0, 0, time.UTC), FinishedAt: time.Date(2025, 5, 1, 2, 1, 0, 0, time.UTC),
		Nodes: []result.Node{node("cp-1", secret), node("cp-2", "https://cp-1:9345")},
		Findings: []result.Finding{{Check: "rke2.config", Severity: result.SeverityWarning, Kind: result.KindCheck, Title: "server_url differs",
			Nodes: []string{"cp-1"}, Summary: "cp-1 joins with " + secret, Evidence: []string{"cp-1: rke2.config.server_url=" + secret},
			Cause: &result.Cause{Fact: "rke2.config.server_url", Value: secret, Symptom: "rke2.config", Symptoms: []string{"rke2.config"},
				Ranked: []result.Candidate{{Fact: "rke2.config.server_url", Value: secret}}}}},
		Drift: []result.Drift{{Fact: "rke2.config.server_url", Scope: result.ScopeFleet, Majority: secret,
			Groups: []result.DriftGroup{{Value: secret, Nodes: []string{"cp-1"}}, {Value: "https://cp-1:9345", Nodes: []string{"cp-2"}}}}},
		Cluster: &result.Cluster{Node: "cp-1", Status: result.ClusterOK, Facts: map[string]string{"cluster.api": "ok", "cluster.join_hint": secret},
			Probes: []result.ProbeRun{}, Joined: map[string]string{"cp-1": "cp-1", "cp-2": "cp-2"}},
		Checks: []result.CheckResult{{Check: "rke2.config", Node: "cp-1", Severity: result.SeverityWarning, Outcome: result.OutcomeFail, Detail: "server_url " + secret}},
	}
	r.Gate = audit.EvaluateGate(r, audit.GatePolicy{FailOn: result.SeverityCritical})
	save := func(name string, r *result.Report) string {
		var buf bytes.Buffer
		f, err := report.New("json", report.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Format(&buf, r); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, buf.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	saved := save("old.json", r)
	// The next run, clean: diff shows what cp-1's value was.
	r.Nodes[0] = node("cp-1", "https://cp-1:9345")
	r.Findings, r.Drift, r.Checks = []result.Finding{}, []result.Drift{}, []result.CheckResult{}
	r.Gate = audit.EvaluateGate(r, audit.GatePolicy{FailOn: result.SeverityCritical})
	later := save("new.json", r)
	ctx := context.Background()
	for _, sub := range []string{"report", "diff"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, cmd := range [][]string{
		append([]string{"fleet-audit", "report", saved, "-v"}, everyReport(filepath.Join(dir, "report"))...),
		{"fleet-audit", "diff", saved, later, "--json", filepath.Join(dir, "diff", "diff.json"), "--markdown", filepath.Join(dir, "diff", "diff.md")},
	} {
		var stdout, stderr bytes.Buffer
		code := run(ctx, cmd, &stdout, &stderr)
		if code != int(exitOK) {
			t.Errorf("%s exited %d: %s", cmd[1], code, stderr.String())
		}
		if strings.Contains(stdout.String()+stderr.String(), secret) {
			t.Errorf("%s printed the saved secret:\n%s", cmd[1], stdout.String())
		}
	}
	for _, sub := range []string{"report", "diff"} {
		entries, _ := os.ReadDir(filepath.Join(dir, sub))
		if len(entries) == 0 {
			t.Errorf("%s wrote nothing", sub)
		}
		for _, e := range entries {
			b, err := os.ReadFile(filepath.Join(dir, sub, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(b, []byte(secret)) || bytes.Contains(b, []byte("9f8e7d6c5b4a")) {
				t.Errorf("%s/%s re-publishes the saved secret", sub, e.Name())
			}
		}
	}
	out, err := os.ReadFile(filepath.Join(dir, "report", "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	// encoding/json writes < and > as \u003c and \u003e.
	if !bytes.Contains(out, []byte(`"rke2.config.server_url": "\u003credacted\u003e"`)) {
		t.Errorf("results.json does not say the fact was redacted:\n%s", out)
	}
}
