package audit

import (
	"reflect"
	"strings"
	"testing"

	"github.com/fleet-audit/fleet-audit/result"
)

func TestJoinNodeFacts(t *testing.T) {
	nodes := []result.Node{
		{Name: "etcd-1", Address: "10.0.0.1", Status: result.StatusOK, Facts: map[string]string{"os.hostname": "cluster-a-etcd-1"}},
		{Name: "worker-1", Address: "10.0.0.5", Status: result.StatusOK, Facts: map[string]string{"os.hostname": "ip-10-0-0-5"}},
		{Name: "worker-2", Address: "10.0.0.6", Status: result.StatusOK, Facts: map[string]string{}},
		{Name: "worker-3", Address: "10.0.0.7", Status: result.StatusOK, Facts: map[string]string{}},
		{Name: "down", Status: result.StatusUnreachable, Facts: map[string]string{}},
	}
	perNode := map[string]map[string]string{
		"cluster-a-etcd-1":   {"k8s.kubeproxy.pod.reason": "CrashLoopBackOff"}, // by hostname
		"ip-10-0-0-5":        {"k8s.kubeproxy.pod.reason": "Running"},          // by hostname
		"node-x":             {"k8s.node.internal_ip": "10.0.0.6"},             // by address
		"cluster-a-worker-3": {"k8s.kubeproxy.pod.reason": "Running"},          // by unique suffix
		"stranger":           {"k8s.kubeproxy.pod.reason": "Running"},
	}
	c := &result.Cluster{Joined: map[string]string{}}
	joinNodeFacts(c, perNode, nodes)
	want := map[string]string{"cluster-a-etcd-1": "etcd-1", "ip-10-0-0-5": "worker-1", "node-x": "worker-2", "cluster-a-worker-3": "worker-3", "stranger": ""}
	if !reflect.DeepEqual(c.Joined, want) {
		t.Fatalf("joined = %v, want %v", c.Joined, want)
	}
	if nodes[0].Facts["k8s.kubeproxy.pod.reason"] != "CrashLoopBackOff" || nodes[0].Facts["k8s.node.registered"] != "yes" {
		t.Fatalf("etcd-1 facts = %v", nodes[0].Facts)
	}
	if _, ok := nodes[4].Facts["k8s.node.registered"]; ok {
		t.Fatalf("an unreachable node got a registration fact: %v", nodes[4].Facts)
	}
	if got := c.UnjoinedK8sNodes(); !reflect.DeepEqual(got, []string{"stranger"}) {
		t.Fatalf("unjoined = %v", got)
	}
}

func TestPlanRollout(t *testing.T) {
	nodes := []result.Node{
		{Name: "w1", Roles: []string{"worker"}}, {Name: "e1", Roles: []string{"etcd"}}, {Name: "cp1", Roles: []string{"control-plane", "etcd"}},
		{Name: "cp2", Roles: []string{"master"}}, {Name: "mon", Roles: []string{"monitoring"}}, {Name: "w2", Roles: []string{"worker"}},
		{Name: "bare-server", Facts: map[string]string{"rke2.service": "rke2-server"}}, {Name: "bare"},
	}
	got := PlanRollout([]string{"w1", "w2", "e1", "cp1", "cp2", "mon", "bare-server", "bare"}, nodes, map[string]bool{"w2": true})
	want := []result.RolloutStep{
		{Class: "etcd", Nodes: []string{"e1", "cp1"}, OneAtATime: true},
		{Class: "control-plane", Nodes: []string{"cp2", "bare-server"}, OneAtATime: true},
		{Class: "infra", Nodes: []string{"mon"}, OneAtATime: true},
		{Class: "worker", Nodes: []string{"w2", "w1", "bare"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("rollout =\n%+v\nwant\n%+v", got, want)
	}
}

// A Kubernetes node's facts go to the host the inventory names for it, in
// strict priority (name, address, os.hostname, suffix): a hostname a node
// reports for itself never takes another host's name or address, and two
// hosts matching at the same priority get nothing and are named.
func TestJoinNodeFactsPriority(t *testing.T) {
	node := func(name, addr, hostname string) result.Node {
		f := map[string]string{}
		if hostname != "" {
			f["os.hostname"] = hostname
		}
		return result.Node{Name: name, Address: addr, Status: result.StatusOK, Facts: f}
	}
	crash := map[string]string{"k8s.kubeproxy.pod.reason": "CrashLoopBackOff"}
	tests := []struct {
		name      string
		nodes     []result.Node
		perNode   map[string]map[string]string
		joined    map[string]string
		crashing  string // the inventory node that must get CrashLoopBackOff
		ambiguous map[string][]string
		findings  string // cluster findings: check[nodes]
	}{
		{
			name:    "an earlier node's hostname does not take a later node's name",
			nodes:   []result.Node{node("aaa", "10.0.0.1", "victim"), node("victim", "10.0.0.2", "victim-host")},
			perNode: map[string]map[string]string{"victim": crash},
			joined:  map[string]string{"victim": "victim"}, crashing: "victim",
		},
		{
			name:    "a later node's hostname does not take an earlier node's name",
			nodes:   []result.Node{node("victim", "10.0.0.2", "victim-host"), node("zzz", "10.0.0.1", "victim")},
			perNode: map[string]map[string]string{"victim": crash},
			joined:  map[string]string{"victim": "victim"}, crashing: "victim",
		},
		{
			name:    "address beats a hostile hostname",
			nodes:   []result.Node{node("a", "10.0.0.1", "n2"), node("b", "10.0.0.2", "")},
			perNode: map[string]map[string]string{"n2": {"k8s.node.internal_ip": "10.0.0.2", "k8s.kubeproxy.pod.reason": "CrashLoopBackOff"}},
			joined:  map[string]string{"n2": "b"}, crashing: "b",
		},
		{
			name:    "hostname beats the suffix",
			nodes:   []result.Node{node("etcd-1", "10.0.0.1", ""), node("x", "10.0.0.2", "cluster-a-etcd-1")},
			perNode: map[string]map[string]string{"cluster-a-etcd-1": crash},
			joined:  map[string]string{"cluster-a-etcd-1": "x"}, crashing: "x",
		},
		{
			name:    "two hosts claiming one node by hostname: neither gets it, both named",
			nodes:   []result.Node{node("a", "10.0.0.1", "n1"), node("b", "10.0.0.2", "n1")},
			perNode: map[string]map[string]string{"n1": crash},
			joined:  map[string]string{"n1": ""}, ambiguous: map[string][]string{"n1": {"a", "b"}},
			findings: "cluster.node-match-ambiguous[a b]",
		},
		{
			name:    "two hosts at one address: neither gets it",
			nodes:   []result.Node{node("a", "10.0.0.9", ""), node("b", "10.0.0.9", "")},
			perNode: map[string]map[string]string{"k": {"k8s.node.internal_ip": "10.0.0.9"}},
			joined:  map[string]string{"k": ""}, ambiguous: map[string][]string{"k": {"a", "b"}},
			findings: "cluster.node-match-ambiguous[a b]",
		},
		{
			// The issue 27 attack: worker-9 reports the hostname etcd-1's
			// Kubernetes node has, which made the hostname tier a tie and
			// dropped etcd-1's CrashLoopBackOff into an ambiguity warning.
			name:    "a spoofed hostname does not tie with the host the inventory names",
			nodes:   []result.Node{node("etcd-1", "etcd-1.example", "cluster-a-etcd-1"), node("worker-9", "10.0.0.9", "cluster-a-etcd-1")},
			perNode: map[string]map[string]string{"cluster-a-etcd-1": crash},
			joined:  map[string]string{"cluster-a-etcd-1": "etcd-1"}, crashing: "etcd-1",
		},
		{
			name:    "a hostname equal to another host's inventory name takes nothing",
			nodes:   []result.Node{node("worker-9", "10.0.0.9", "etcd-1"), node("etcd-1", "10.0.0.1", "cluster-a-etcd-1")},
			perNode: map[string]map[string]string{"etcd-1": crash},
			joined:  map[string]string{"etcd-1": "etcd-1"}, crashing: "etcd-1",
		},
		{
			// A kubelet sets its own node's InternalIP: a second Kubernetes
			// node claiming etcd-1's address does not unjoin etcd-1's own.
			name:    "a spoofed InternalIP does not tie with the node the inventory names",
			nodes:   []result.Node{node("etcd-1", "10.0.0.1", "")},
			perNode: map[string]map[string]string{"cluster-a-etcd-1": {"k8s.node.internal_ip": "10.0.0.1", "k8s.kubeproxy.pod.reason": "CrashLoopBackOff"}, "evil": {"k8s.node.internal_ip": "10.0.0.1"}},
			joined:  map[string]string{"cluster-a-etcd-1": "etcd-1", "evil": ""}, crashing: "etcd-1",
			findings: "cluster.nodes-not-in-inventory[]",
		},
		{
			name:    "one host the suffix of two Kubernetes nodes: neither joined",
			nodes:   []result.Node{node("etcd-1", "10.0.0.1", "")},
			perNode: map[string]map[string]string{"a-etcd-1": crash, "b-etcd-1": crash},
			joined:  map[string]string{"a-etcd-1": "", "b-etcd-1": ""}, ambiguous: map[string][]string{"a-etcd-1": {"etcd-1"}, "b-etcd-1": {"etcd-1"}},
			findings: "cluster.node-match-ambiguous[etcd-1]",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := &result.Cluster{Status: result.ClusterOK, Joined: map[string]string{}}
			joinNodeFacts(c, tc.perNode, tc.nodes)
			if !reflect.DeepEqual(c.Joined, tc.joined) {
				t.Errorf("joined = %v, want %v", c.Joined, tc.joined)
			}
			if !reflect.DeepEqual(c.Ambiguous, tc.ambiguous) {
				t.Errorf("ambiguous = %v, want %v", c.Ambiguous, tc.ambiguous)
			}
			for _, n := range tc.nodes {
				got := n.Facts["k8s.kubeproxy.pod.reason"] == "CrashLoopBackOff"
				if got != (n.Name == tc.crashing) {
					t.Errorf("%s: CrashLoopBackOff joined = %v, want %v (facts %v)", n.Name, got, !got, n.Facts)
				}
				reg := map[bool]string{true: "yes", false: "no"}[n.Name == tc.crashing]
				if n.Facts["k8s.node.registered"] != reg {
					t.Errorf("%s: k8s.node.registered = %q, want %q", n.Name, n.Facts["k8s.node.registered"], reg)
				}
			}
			var findings []string
			for _, f := range clusterFindings(c, false) {
				findings = append(findings, f.Check+"["+strings.Join(f.Nodes, " ")+"]")
			}
			if got := strings.Join(findings, " "); got != tc.findings {
				t.Errorf("findings = %q, want %q", got, tc.findings)
			}
		})
	}
}
