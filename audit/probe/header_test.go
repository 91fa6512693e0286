package probe_test

// The probe header's rules and the output parser's, from outside the
// package, as a probe script meets them.

import (
	"reflect"
	"testing"

	"github.com/fleet-audit/fleet-audit/audit/probe"
)

func TestProbeHeaderScope(t *testing.T) {
	ok := "# id: c\n# description: d\n# needs_root: true\n# timeout: 5s\n# scope: cluster\n# facts: cluster.readyz\n# node_facts: k8s.pod.phase k8s.pod.restarts\n# volatile: k8s.pod.restarts\necho\n"
	p, err := probe.ParseProbe("c.sh", ok)
	if err != nil || p.Scope != probe.ScopeCluster || len(p.NodeFacts) != 2 {
		t.Fatalf("ParseProbe = %+v, %v", p, err)
	}
	for name, text := range map[string]string{
		"node facts on a node probe": "# id: c\n# description: d\n# needs_root: false\n# timeout: 5s\n# facts: a.b\n# node_facts: k8s.x\n",
		"cluster fact not cluster.*": "# id: c\n# description: d\n# needs_root: false\n# timeout: 5s\n# scope: cluster\n# facts: readyz\n",
		"node probe with cluster.*":  "# id: c\n# description: d\n# needs_root: false\n# timeout: 5s\n# facts: cluster.x\n",
		"node fact not k8s.*":        "# id: c\n# description: d\n# needs_root: false\n# timeout: 5s\n# scope: cluster\n# facts: cluster.x\n# node_facts: pod.phase\n",
		"bad scope":                  "# id: c\n# description: d\n# needs_root: false\n# timeout: 5s\n# scope: fleet\n# facts: a\n",
	} {
		if _, err := probe.ParseProbe("c.sh", text); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestParseNodeFactsFromClusterProbe(t *testing.T) {
	p := probe.Probe{ID: "cluster", Scope: probe.ScopeCluster, Facts: []string{"cluster.readyz"}, NodeFacts: []string{"k8s.pod.phase"}}
	out := "@@FA:n1:begin:cluster\ncluster.readyz=ok\n@cluster-a-etcd-1 k8s.pod.phase=CrashLoopBackOff\n@Bad_Name k8s.pod.phase=x\n@n2 k8s.undeclared=x\n@n3 cluster.readyz=forged\n@@FA:n1:end:cluster:0\n"
	got := probe.ParseOutput([]byte(out), "n1", []probe.Probe{p})
	if got.Facts["cluster.readyz"] != "ok" {
		t.Fatalf("facts = %v", got.Facts)
	}
	want := map[string]map[string]string{"cluster-a-etcd-1": {"k8s.pod.phase": "CrashLoopBackOff"}}
	if !reflect.DeepEqual(got.NodeFacts, want) {
		t.Fatalf("node facts = %v, want %v", got.NodeFacts, want)
	}
}
