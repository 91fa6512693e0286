package audit

import (
	"reflect"
	"testing"

	"github.com/fleet-audit/fleet-audit/internal/nodesim"
	"github.com/fleet-audit/fleet-audit/result"
)

// kubeProxyFreeFleet is an RKE2 cluster started with disable-kube-proxy:
// true, one server and four agents, each node of the given shape (its CNI
// serving Services), with plants applied by node name; the cluster view is
// derived from the nodes as they end up.
func kubeProxyFreeFleet(shape func(nodesim.State) nodesim.State, plants map[string]func(nodesim.State) nodesim.State) []nodesim.Member {
	fleet := nodesim.Clean(5)
	for i := range fleet {
		fleet[i].State = shape(fleet[i].State)
		if p, ok := plants[fleet[i].Name]; ok {
			fleet[i].State = p(fleet[i].State)
		}
	}
	return nodesim.WithCluster(fleet)
}

// kubeProxyFreePlants are the problems that matter on a cluster without
// kube-proxy, one per node.
var kubeProxyFreePlants = map[string]func(nodesim.State) nodesim.State{
	"node-3": nodesim.WithCiliumAgentDown,
	"node-4": nodesim.WithStaleKubeProxyChains,
	"node-5": nodesim.WithNFTKubeProxy,
}

// TestKubeProxyFreeFleets: a healthy cluster whose CNI replaces kube-proxy
// passes the gate with no warning and no critical finding (kube-proxy is
// not meant to run there), and on Cilium a crash-looping agent, kube-proxy's
// iptables chains and its nftables tables left behind are each found on
// exactly their node.
func TestKubeProxyFreeFleets(t *testing.T) {
	for _, tc := range []struct {
		fixture string
		want    map[string][]string
	}{
		{"kpfree-cilium", map[string][]string{}},
		{"kpfree-calico-ebpf", map[string][]string{}},
		{"kpfree-cilium-planted", map[string][]string{
			// The cluster view sees the same agent crash-looping.
			"node-3": {"critical k8s.cni-agent-unhealthy-no-kube-proxy", "critical kubeproxy.cilium-agent-down"},
			"node-4": {"warning kubeproxy.stale-iptables-chains"},
			"node-5": {"warning kubeproxy.stale-nftables-table"},
		}},
	} {
		t.Run(tc.fixture, func(t *testing.T) {
			r := judgeFixture(t, tc.fixture, nil)
			for _, n := range r.Nodes {
				if n.Status != result.StatusOK {
					t.Fatalf("node %s: status %s (%s)", n.Name, n.Status, n.Message)
				}
			}
			if r.Cluster == nil || r.Cluster.Status != result.ClusterOK {
				t.Fatalf("cluster = %+v", r.Cluster)
			}
			if got := warningsByNode(t, r); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("findings by node =\n%v\nwant\n%v", got, tc.want)
			}
			// The gate fails on criticals: only the agent that is down does.
			if pass := len(tc.want) == 0; r.Gate.Passed != pass {
				t.Errorf("gate passed = %v, want %v (%v)", r.Gate.Passed, pass, r.Gate.Reasons)
			}
		})
	}
}
