package audit

import (
	"slices"
	"testing"

	"github.com/fleet-audit/fleet-audit/audit/catalog"
	"github.com/fleet-audit/fleet-audit/result"
)

// BuildPlan groups the findings that ask for a change by the check that
// fixes them, in the order of the findings, plans each rollout again over
// the fix's nodes, and names what it leaves out.
func TestBuildPlan(t *testing.T) {
	checks := builtinChecks(t)
	nodes := []result.Node{
		{Name: "etcd-1", Roles: []string{"etcd"}}, {Name: "cp-1", Roles: []string{"control-plane"}},
		{Name: "worker-1", Roles: []string{"worker"}}, {Name: "worker-2", Roles: []string{"worker"}}, {Name: "worker-3", Roles: []string{"worker"}},
	}
	fail := func(check string, nodes ...string) []result.CheckResult {
		var out []result.CheckResult
		for _, n := range nodes {
			out = append(out, result.CheckResult{Check: check, Node: n, Outcome: result.OutcomeFail})
		}
		return out
	}
	finding := func(id string, kind result.Kind, sev result.Severity, nodes ...string) result.Finding {
		return result.Finding{Check: id, Kind: kind, Severity: sev, Title: id + " title", Remediation: id + " fix", Nodes: nodes,
			Rollout: []result.RolloutStep{{Class: result.ClassWorker, Nodes: nodes}}}
	}
	ufwCause := finding("correlation.kubeproxy.healthz-failing", result.KindCorrelation, result.SeverityCritical, "worker-3", "etcd-1")
	ufwCause.Cause = &result.Cause{Fact: "ufw.active", Value: "active", Symptom: "kubeproxy.healthz-failing", Exact: true}
	unexplained := finding("correlation.k8s.kubeproxy-crashloop", result.KindCorrelation, result.SeverityCritical, "worker-1")
	unexplained.Cause = &result.Cause{Fact: "os.kernel", Value: "6.1", Symptom: "k8s.kubeproxy-crashloop"}
	waived := finding("sysctl.ip-forward", result.KindCheck, result.SeverityCritical, "cp-1")
	waived.Waived = &result.Waiver{Check: "sysctl.ip-forward", Reason: "r", Expires: "2099-01-01"}
	tests := []struct {
		name     string
		findings []result.Finding
		checks   []result.CheckResult
		// want: per fix, its check, what it resolves and its rollout.
		want   []result.Fix
		waived []string
	}{
		{
			name: "a probable cause and its check are one fix, failing workers first",
			findings: []result.Finding{
				finding("firewall.ufw-active", result.KindCheck, result.SeverityCritical, "etcd-1", "worker-1", "worker-3"), ufwCause,
			},
			checks: slices.Concat(fail("firewall.ufw-active", "etcd-1", "worker-1", "worker-3"), fail("kubeproxy.healthz-failing", "etcd-1", "worker-3")),
			want: []result.Fix{{Check: "firewall.ufw-active", Resolves: []string{"correlation.kubeproxy.healthz-failing", "firewall.ufw-active"},
				Rollout: []result.RolloutStep{{Class: result.ClassEtcd, Nodes: []string{"etcd-1"}, OneAtATime: true}, {Class: result.ClassWorker, Nodes: []string{"worker-3", "worker-1"}}}}},
		},
		{
			name: "a cause no check flags, a Go finding and a waived one",
			findings: []result.Finding{
				unexplained, finding(catalog.SkewServersID, result.KindCheck, result.SeverityCritical, "cp-1"), waived,
				finding("host.load-elevated", result.KindCheck, result.SeverityInfo, "worker-2"),
			},
			checks: fail("k8s.kubeproxy-crashloop", "worker-1"),
			want: []result.Fix{
				{Check: "correlation.k8s.kubeproxy-crashloop", Resolves: []string{"correlation.k8s.kubeproxy-crashloop"},
					Rollout: []result.RolloutStep{{Class: result.ClassWorker, Nodes: []string{"worker-1"}}}, Steps: result.FixSteps{Manual: []string{"correlation.k8s.kubeproxy-crashloop fix"}}},
				{Check: catalog.SkewServersID, Resolves: []string{catalog.SkewServersID},
					Rollout: []result.RolloutStep{{Class: result.ClassControlPlane, Nodes: []string{"cp-1"}, OneAtATime: true}}, Steps: result.FixSteps{Manual: []string{catalog.SkewServersID + " fix"}}},
			},
			waived: []string{"sysctl.ip-forward"},
		},
		{name: "nothing to fix", want: []result.Fix{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &result.Report{Nodes: nodes, Findings: tt.findings, Checks: tt.checks}
			got := BuildPlan(r, checks)
			if len(got.Fixes) != len(tt.want) {
				t.Fatalf("%d fixes %+v, want %d", len(got.Fixes), got.Fixes, len(tt.want))
			}
			for i, w := range tt.want {
				g := got.Fixes[i]
				if g.Check != w.Check || !slices.Equal(g.Resolves, w.Resolves) || !slices.EqualFunc(g.Rollout, w.Rollout, func(a, b result.RolloutStep) bool {
					return a.Class == b.Class && a.OneAtATime == b.OneAtATime && slices.Equal(a.Nodes, b.Nodes)
				}) {
					t.Errorf("fix %d = %s resolving %v, rollout %+v; want %s resolving %v, rollout %+v", i, g.Check, g.Resolves, g.Rollout, w.Check, w.Resolves, w.Rollout)
				}
				if w.Steps.Manual != nil && (!slices.Equal(g.Steps.Manual, w.Steps.Manual) || len(g.Steps.Commands) != 0 || g.Steps.Stop == "") {
					t.Errorf("fix %d steps = %+v, want the remediation as the one manual step, no commands, a stop", i, g.Steps)
				}
				if w.Steps.Manual == nil && len(g.Steps.Commands) == 0 {
					t.Errorf("fix %d (%s) has no commands: its check's plan was not used", i, g.Check)
				}
			}
			if !slices.Equal(got.Waived, tt.waived) {
				t.Errorf("waived = %v, want %v", got.Waived, tt.waived)
			}
		})
	}
}
