package audit

import (
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/fleet-audit/fleet-audit/internal/nodesim"
	"github.com/fleet-audit/fleet-audit/result"
)

// plantedWant is, for each planted node of nodesim.Planted, the warning or
// critical findings that must name it; no other node may be named by any
// warning or critical finding.
var plantedWant = map[string][]string{
	"worker-2": {"critical sysctl.ip-forward"},
	"worker-3": {"warning conntrack.pressure"},
	"worker-4": {"critical firewall.firewalld-active", "critical network.firewalld-with-canal"},
	"worker-5": {"warning skew.mixed-versions"},
	"worker-6": {"critical kubeproxy.mode-mixed"},
	// Without the module the bridge sysctls do not exist, as on a real
	// kernel; the IPv6 one is judged only on a cluster with IPv6 pods.
	"worker-7": {"critical module.br-netfilter", "critical sysctl.bridge-nf-call-iptables"},
	// The cluster view agrees: no kube-proxy pod on that node.
	"worker-8": {"critical kubeproxy.down", "warning k8s.kubeproxy-pod-missing"},
}

// plantedInfo is, for the planted nodes whose drift is worth knowing but no
// gate, the info finding that must name exactly that node. A legacy node
// beside nf_tables ones is info: RKE2's kube-proxy and CNIs run their
// image's iptables, which picks each node's own backend (k3s-root
// iptables-detect); what breaks is both backends on one node.
var plantedInfo = map[string]string{
	"worker-1": "iptables.backend-mixed",
}

// TestPlantedDriftsAreFoundOnTheirNodesOnly is the catalogue's acceptance
// test: one drift per node, each found on exactly that node and nothing
// found anywhere else.
func TestPlantedDriftsAreFoundOnTheirNodesOnly(t *testing.T) {
	r := judgeFixture(t, "planted", nil)
	for _, n := range r.Nodes {
		if n.Status != result.StatusOK {
			t.Fatalf("node %s: status %s (%s)", n.Name, n.Status, n.Message)
		}
	}
	if r.Cluster == nil || r.Cluster.Status != result.ClusterOK {
		t.Fatalf("cluster = %+v", r.Cluster)
	}
	got := warningsByNode(t, r)
	drifts := nodesim.PlantedDrifts()
	for n, fs := range got {
		t.Logf("%s (%s): %s", n, drifts[n], strings.Join(fs, ", "))
	}
	if !reflect.DeepEqual(got, plantedWant) {
		t.Errorf("findings by node =\n%v\nwant\n%v", got, plantedWant)
	}
	info := map[string][]string{}
	for _, f := range r.Findings {
		if f.Severity == result.SeverityInfo {
			for _, n := range f.Nodes {
				info[n] = append(info[n], f.Check)
			}
		}
	}
	for n, c := range plantedInfo {
		for _, f := range r.Findings {
			if f.Check == c && (f.Severity != result.SeverityInfo || !reflect.DeepEqual(f.Nodes, []string{n})) {
				t.Errorf("%s: %s on %v, want info on %s only", n, c, f.Nodes, n)
			}
		}
		if !slices.Contains(info[n], c) {
			t.Errorf("%s: planted %q, info %s not found", n, drifts[n], c)
		}
	}
	for n := range drifts {
		if _, isInfo := plantedInfo[n]; len(got[n]) == 0 && !isInfo {
			t.Errorf("%s: planted %q, nothing found", n, drifts[n])
		}
	}
}

// warningsByNode lists the warning and critical findings of r by node
// ("severity check"), and fails on one that names no node.
func warningsByNode(t *testing.T, r *result.Report) map[string][]string {
	t.Helper()
	got := map[string][]string{}
	for _, f := range r.Findings {
		if f.Severity < result.SeverityWarning {
			continue
		}
		if len(f.Nodes) == 0 {
			t.Errorf("fleet-level %s finding %s: %s", f.Severity, f.Check, f.Summary)
		}
		for _, n := range f.Nodes {
			got[n] = append(got[n], f.Severity.String()+" "+f.Check)
		}
	}
	for n := range got {
		sort.Strings(got[n])
	}
	return got
}
