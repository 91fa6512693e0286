package report

import (
	"fmt"
	"io"
	"reflect"
	"testing"

	"github.com/fleet-audit/fleet-audit/result"
)

// largeReport is the seed incident at fleet scale: n nodes in three roles,
// UFW active (and kube-proxy /healthz failing) on every tenth, a newer
// kernel on every hundredth, with the findings, evidence lines and drift
// rows an audit of such a fleet produces: each of them names its nodes, so
// a renderer that looks nodes up by scanning them is quadratic here.
func largeReport(n int) *result.Report {
	r := newReport("inventories/large.yaml")
	roles := []string{"etcd", "control-plane", "worker"}
	var ufw, healthy, kernel, oldKernel []string
	var ufwEvidence, healthzEvidence, kernelEvidence []string
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("node-%05d", i)
		role := roles[2]
		if i < 3 {
			role = roles[i]
		}
		f := baseFacts("rke2-agent")
		f["conntrack.count"] = fmt.Sprint(700 + i%1000)
		if i%10 == 0 {
			f["ufw.active"], f["ufw.enabled"], f["kubeproxy.healthz.code"] = "active", "enabled", "503"
			ufw = append(ufw, name)
			ufwEvidence = append(ufwEvidence, name+": ufw.active=active")
			healthzEvidence = append(healthzEvidence, name+": kubeproxy.healthz.code=503, kubeproxy.livez.code=200")
		} else {
			healthy = append(healthy, name)
		}
		if i%100 == 0 {
			f["os.kernel"] = "6.8.0-51-generic"
			kernel = append(kernel, name)
			kernelEvidence = append(kernelEvidence, name+": os.kernel=6.8.0-51-generic")
		} else {
			oldKernel = append(oldKernel, name)
		}
		r.Nodes = append(r.Nodes, node(name, fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255), []string{role}, f, 1.5))
	}
	judge(r)
	// A real audit judges some 60 checks per node; the fixture's few are
	// padded with passing ones, in audit's order (node, then check id).
	checks := r.Checks[:0:0]
	for i, c := range r.Checks {
		checks = append(checks, c)
		if i+1 == len(r.Checks) || r.Checks[i+1].Node != c.Node {
			for j := 0; j < 50; j++ {
				checks = append(checks, result.CheckResult{Check: fmt.Sprintf("x.check-%02d", j), Node: c.Node, Severity: result.SeverityWarning, Outcome: result.OutcomePass, Detail: "x.fact=ok"})
			}
		}
	}
	r.Checks = checks
	cause := &result.Cause{
		Fact: "ufw.active", Value: "active", Symptom: "kubeproxy.healthz-failing", Symptoms: []string{"kubeproxy.healthz-failing"},
		Matched: len(ufw), Healthy: len(healthy), Score: 1, Exact: true, Also: []string{"ufw.enabled"},
		Ranked: []result.Candidate{{Fact: "ufw.active", Value: "active", Matched: len(ufw), Score: 1}},
	}
	rollout := []result.RolloutStep{{Class: "worker", Nodes: ufw}}
	r.Findings = []result.Finding{
		{Check: "correlation.kubeproxy.healthz-failing", Kind: result.KindCorrelation, Title: "probable cause: ufw.active=active",
			Severity: result.SeverityCritical, Nodes: ufw, Summary: "kube-proxy /healthz fails on exactly the nodes where UFW is active.",
			Evidence: []string{"ufw.active=active on every failing node"}, Cause: cause, Rollout: rollout},
		{Check: "firewall.ufw-active", Kind: result.KindCheck, Title: "UFW is active on a Kubernetes node", Severity: result.SeverityCritical,
			Nodes: ufw, Summary: "UFW breaks Service rules.", Evidence: ufwEvidence, Remediation: "Disable UFW.", Rollout: rollout},
		{Check: "kubeproxy.healthz-failing", Kind: result.KindCheck, Title: "kube-proxy /healthz fails", Severity: result.SeverityCritical,
			Nodes: ufw, Summary: "kube-proxy reports its dataplane unhealthy.", Evidence: healthzEvidence, Remediation: "See the probable cause."},
		{Check: "drift.os.kernel", Kind: result.KindDrift, Title: "os.kernel differs", Severity: result.SeverityWarning,
			Nodes: kernel, Summary: "a newer kernel", Evidence: kernelEvidence},
	}
	r.Drift = []result.Drift{
		{Fact: "kubeproxy.healthz.code", Scope: "fleet", Majority: "200", Groups: []result.DriftGroup{{Value: "200", Nodes: healthy}, {Value: "503", Nodes: ufw}}},
		{Fact: "os.kernel", Scope: "fleet", Majority: "6.8.0-49-generic", Groups: []result.DriftGroup{{Value: "6.8.0-49-generic", Nodes: oldKernel}, {Value: "6.8.0-51-generic", Nodes: kernel}}},
		{Fact: "ufw.active", Scope: "fleet", Majority: "inactive", Groups: []result.DriftGroup{{Value: "inactive", Nodes: healthy}, {Value: "active", Nodes: ufw}}},
		{Fact: "ufw.enabled", Scope: "fleet", Majority: "disabled", Groups: []result.DriftGroup{{Value: "disabled", Nodes: healthy}, {Value: "enabled", Nodes: ufw}}},
	}
	r.Gate = result.Gate{FailOn: result.SeverityCritical, Passed: false, ExitCode: 1, Reasons: []string{"3 critical findings"}}
	return r
}

// BenchmarkFormat renders each format of largeReport at 1,000 and 10,000
// nodes: the time per node must not grow with the fleet.
func BenchmarkFormat(b *testing.B) {
	for _, format := range []string{"html", "junit", "markdown", "terminal", "json"} {
		for _, n := range []int{1000, 10000} {
			r := largeReport(n)
			b.Run(fmt.Sprintf("%s/nodes=%d", format, n), func(b *testing.B) {
				f, err := New(format, Options{})
				if err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					if err := f.Format(io.Discard, r); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// TestJUnitNodeEvidence: the indexed evidence keeps, in their order, the
// lines about the fleet and about this node, and drops those about other
// inventory nodes; a prefix that names no inventory node is fleet text.
func TestJUnitNodeEvidence(t *testing.T) {
	r := newReport("inv")
	r.Nodes = []result.Node{{Name: "n1"}, {Name: "n2"}}
	r.Findings = []result.Finding{{Check: "c", Nodes: []string{"n1", "n2"}, Evidence: []string{
		"fleet: first", "n1: a", "n2: b", "healthy on 3 nodes", "n1: c", "cluster-x: not in the inventory", "n2: d",
	}}}
	ix := newJUnitIndex(r)
	for _, tc := range []struct {
		node string
		want []string
	}{
		{"n1", []string{"fleet: first", "n1: a", "healthy on 3 nodes", "n1: c", "cluster-x: not in the inventory"}},
		{"n2", []string{"fleet: first", "n2: b", "healthy on 3 nodes", "cluster-x: not in the inventory", "n2: d"}},
		{result.ClusterNode, []string{"fleet: first", "healthy on 3 nodes", "cluster-x: not in the inventory"}},
	} {
		if got := ix.nodeEvidence(0, tc.node); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: evidence = %q, want %q", tc.node, got, tc.want)
		}
	}
}
