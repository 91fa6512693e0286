package audit

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/fleet-audit/fleet-audit/audit/catalog"
	"github.com/fleet-audit/fleet-audit/audit/check"
	"github.com/fleet-audit/fleet-audit/internal/kubefake"
	"github.com/fleet-audit/fleet-audit/internal/nodesim"
	"github.com/fleet-audit/fleet-audit/internal/testtools"
	"github.com/fleet-audit/fleet-audit/result"
)

// upgradeFleet is a healthy server and four agents; plant adds, to the
// named members, the pods and objects a test plants.
func upgradeFleet(plant func(byName map[string]*nodesim.State)) []nodesim.Member {
	fleet := []nodesim.Member{
		{Name: "server-1", State: nodesim.Healthy("server-1", true)},
		{Name: "agent-1", State: nodesim.Healthy("agent-1", false)},
		{Name: "agent-2", State: nodesim.Healthy("agent-2", false)},
		{Name: "agent-3", State: nodesim.Healthy("agent-3", false)},
		{Name: "agent-4", State: nodesim.Healthy("agent-4", false)},
	}
	if plant != nil {
		byName := map[string]*nodesim.State{}
		for i := range fleet {
			byName[fleet[i].Name] = &fleet[i].State
		}
		plant(byName)
	}
	return nodesim.WithCluster(fleet)
}

// plantDrainBlockers puts one drain blocker on each agent, and beside them
// pods and objects kubectl drain lets through, which must count nowhere.
func plantDrainBlockers(m map[string]*nodesim.State) {
	web := map[string]string{"app": "web"}
	// agent-1: a StatefulSet pod its PDB allows no disruption of.
	m["agent-1"].Pods = []nodesim.Pod{{Namespace: "shop", Name: "web-0", OwnerKind: "StatefulSet", OwnerName: "web", Labels: web}}
	m["agent-2"].Pods = []nodesim.Pod{{Namespace: "shop", Name: "web-1", OwnerKind: "StatefulSet", OwnerName: "web", Labels: map[string]string{"app": "web-canary"}}}
	m["server-1"].PDBs = []nodesim.PDB{
		{Namespace: "shop", Name: "web", MatchLabels: web, DisruptionsAllowed: 0},
		// Same labels in another namespace: a PDB selects in its own.
		{Namespace: "other", Name: "web", MatchLabels: web, DisruptionsAllowed: 0},
		{Namespace: "kube-system", Name: "coredns", MatchLabels: map[string]string{"k8s-app": "kube-dns"}, DisruptionsAllowed: 1},
	}
	// agent-2: a bare pod, plus a DaemonSet pod with an emptyDir and a
	// finished bare pod, which drain lets through.
	m["agent-2"].Pods = append(m["agent-2"].Pods,
		nodesim.Pod{Namespace: "default", Name: "debug-shell"},
		nodesim.Pod{Namespace: "monitoring", Name: "node-exporter-x8k2p", OwnerKind: "DaemonSet", OwnerName: "node-exporter", EmptyDir: []string{"tmp"}},
		nodesim.Pod{Namespace: "default", Name: "one-off", Phase: "Succeeded"})
	// agent-3: a pod of a 3-replica Deployment with an emptyDir.
	m["agent-3"].Pods = []nodesim.Pod{{Namespace: "shop", Name: "cache-7d4b9c-abcde", OwnerKind: "ReplicaSet", OwnerName: "cache-7d4b9c",
		EmptyDir: []string{"scratch"}, Labels: map[string]string{"app": "cache", "pod-template-hash": "7d4b9c"}}}
	// agent-4: the only pod of a 1-replica Deployment.
	m["agent-4"].Pods = []nodesim.Pod{{Namespace: "shop", Name: "report-5f6d7e-qwert", OwnerKind: "ReplicaSet", OwnerName: "report-5f6d7e",
		Labels: map[string]string{"app": "report", "pod-template-hash": "5f6d7e"}}}
	m["server-1"].Workloads = []nodesim.Workload{
		{Kind: "StatefulSet", Namespace: "shop", Name: "web", Replicas: 2},
		{Kind: "Deployment", Namespace: "shop", Name: "cache", Replicas: 3},
		{Kind: "Deployment", Namespace: "shop", Name: "report", Replicas: 1},
	}
}

// drainFacts are the k8s.drain.* facts of a cluster probe run, "node
// key=value" sorted.
func drainFacts(nodes map[string]map[string]string) []string {
	var out []string
	for n, facts := range nodes {
		for k, v := range facts {
			if strings.HasPrefix(k, "k8s.drain.") {
				out = append(out, n+" "+k+"="+v)
			}
		}
	}
	sort.Strings(out)
	return out
}

var plantedDrainFacts = func() []string {
	var out []string
	planted := map[string]map[string]string{
		"agent-1": {"pdb_blocked": "shop/web-0 (PDB web)"},
		"agent-2": {"unmanaged": "default/debug-shell"},
		"agent-3": {"emptydir": "shop/cache-7d4b9c-abcde"},
		"agent-4": {"single_replica": "Deployment shop/report"},
	}
	for _, n := range []string{"server-1", "agent-1", "agent-2", "agent-3", "agent-4"} {
		for _, k := range []string{"pdb_blocked", "unmanaged", "emptydir", "single_replica"} {
			count, pods := "0", "none"
			if v, ok := planted[n][k]; ok {
				count, pods = "1", v
			}
			node := nodesim.K8sNodeName(n)
			out = append(out, node+" k8s.drain."+k+"="+count, node+" k8s.drain."+k+".pods="+pods)
		}
	}
	sort.Strings(out)
	return out
}()

func TestClusterProbeDrainBlockers(t *testing.T) {
	tests := []struct {
		name  string
		plant func(map[string]*nodesim.State)
		want  []string
	}{
		{name: "planted", plant: plantDrainBlockers, want: plantedDrainFacts},
		{name: "healthy", want: func() []string {
			var out []string
			for _, n := range []string{"server-1", "agent-1", "agent-2", "agent-3", "agent-4"} {
				for _, k := range []string{"pdb_blocked", "unmanaged", "emptydir", "single_replica"} {
					out = append(out, nodesim.K8sNodeName(n)+" k8s.drain."+k+"=0", nodesim.K8sNodeName(n)+" k8s.drain."+k+".pods=none")
				}
			}
			sort.Strings(out)
			return out
		}()},
	}
	for _, tt := range tests {
		for _, sh := range probeShells {
			t.Run(tt.name+"/"+sh[0], func(t *testing.T) {
				testtools.Find(t, sh[0])
				fleet := upgradeFleet(tt.plant)
				p, _ := runProbeOn(t, "cluster", fleet[0].State, nil, sh)
				if got := drainFacts(p.NodeFacts); strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
					t.Errorf("facts:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
				}
			})
		}
	}
}

// TestClusterProbeDrainListsFailedIsUnknown: a list kubectl could not get
// leaves its facts unknown on every node, never 0.
func TestClusterProbeDrainListsFailedIsUnknown(t *testing.T) {
	fleet := upgradeFleet(plantDrainBlockers)
	s := fleet[0].State
	kubectlAnswer(&s, nodesim.KubectlPDBs, "Error from server (Forbidden): poddisruptionbudgets.policy is forbidden\n", 1)
	p := runProbe(t, "cluster", s)
	node := nodesim.K8sNodeName("agent-1")
	for k, want := range map[string]string{"k8s.drain.pdb_blocked": "unknown", "k8s.drain.pdb_blocked.pods": "unknown", "k8s.drain.unmanaged": "0"} {
		if got := p.NodeFacts[node][k]; got != want {
			t.Errorf("%s %s = %q, want %q", node, k, got, want)
		}
	}
}

// TestClusterProbeThroughRealKubectl runs the cluster probe's kubectl calls
// with a real kubectl against kubefake serving the same fleet's objects:
// the facts must be those the simulated kubectl's answers give, so the
// stub's jsonpath output is kubectl's.
func TestClusterProbeThroughRealKubectl(t *testing.T) {
	kubectl := testtools.Find(t, "kubectl")
	fleet := upgradeFleet(plantDrainBlockers)
	objs := nodesim.ClusterAPIObjects(fleet)
	nodes := `{"kind":"NodeList","apiVersion":"v1","metadata":{},"items":[`
	for i, m := range fleet {
		if i > 0 {
			nodes += ","
		}
		nodes += `{"metadata":{"name":"` + nodesim.K8sNodeName(m.Name) + `"},"status":{"conditions":[{"type":"Ready","status":"True"}]}}`
	}
	nodes += "]}"
	srv := kubefake.StartCluster(kubefake.Cluster{Nodes: []byte(nodes), Pods: objs.Pods, PDBs: objs.PDBs,
		Deployments: objs.Deployments, StatefulSets: objs.StatefulSets})
	defer srv.Close()
	t.Setenv("HOME", t.TempDir())
	p := runProbeTweaked(t, "cluster", fleet[0].State, func(root string) {
		bin := filepath.Join(root, nodesim.KubectlPath)
		if err := os.Remove(bin); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(kubectl, bin); err != nil {
			t.Fatal(err)
		}
		if err := srv.WriteKubeconfig(filepath.Join(root, nodesim.KubeconfigPath)); err != nil {
			t.Fatal(err)
		}
	})
	if got := drainFacts(p.NodeFacts); strings.Join(got, "\n") != strings.Join(plantedDrainFacts, "\n") {
		t.Errorf("facts through kubectl %s:\n%s\nwant:\n%s\nrequests: %q", kubectl, strings.Join(got, "\n"), strings.Join(plantedDrainFacts, "\n"), srv.Requests())
	}
}

// TestUpgradeChecks judges the planted and the healthy facts: each drain
// finding on exactly its node, with or without --target-version (the
// deprecated APIs are apiserver.yaml's, TestAPIServerPlantedOnItsServerOnly).
func TestUpgradeChecks(t *testing.T) {
	var checks []check.Check
	for _, c := range builtinChecks(t) {
		if strings.HasPrefix(c.Source, "checks/upgrade.yaml:") {
			checks = append(checks, c)
		}
	}
	if len(checks) == 0 {
		t.Fatal("no checks from checks/upgrade.yaml")
	}
	planted := upgradeFleet(plantDrainBlockers)
	healthy := upgradeFleet(nil)
	pp := runProbe(t, "cluster", planted[0].State)
	hp := runProbe(t, "cluster", healthy[0].State)
	tests := []struct {
		name   string
		probe  map[string]string
		nodes  map[string]map[string]string
		target string
		fail   string // check[node] sorted, comma-separated
	}{
		{name: "planted, with a target", probe: pp.Facts, nodes: pp.NodeFacts, target: "v1.32.5+rke2r1",
			fail: "k8s.drain-emptydir-pods[agent-3],k8s.drain-pdb-blocked[agent-1],k8s.drain-single-replica[agent-4],k8s.drain-unmanaged-pods[agent-2]"},
		{name: "planted, no target", probe: pp.Facts, nodes: pp.NodeFacts,
			fail: "k8s.drain-emptydir-pods[agent-3],k8s.drain-pdb-blocked[agent-1],k8s.drain-single-replica[agent-4],k8s.drain-unmanaged-pods[agent-2]"},
		{name: "healthy", probe: hp.Facts, nodes: hp.NodeFacts, target: "v1.32.5+rke2r1"},
		{name: "unknown is unjudged, not passed", target: "v1.32.5+rke2r1",
			nodes: map[string]map[string]string{nodesim.K8sNodeName("agent-1"): {"k8s.drain.pdb_blocked": "unknown", "k8s.drain.pdb_blocked.pods": "unknown"}},
			fail:  "k8s.drain-pdb-blocked[agent-1]?"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var nodes []result.Node
			for _, m := range planted {
				nodes = append(nodes, result.Node{Name: m.Name, Status: result.StatusOK, Facts: tt.nodes[nodesim.K8sNodeName(m.Name)]})
			}
			globals := map[string]string{}
			if tt.target != "" {
				globals[catalog.TargetVersionFact] = tt.target
			}
			var got []string
			for _, r := range check.Judge(nodes, &result.Cluster{Status: result.ClusterOK, Facts: tt.probe}, checks, globals) {
				switch r.Outcome {
				case result.OutcomeFail:
					got = append(got, r.Check+"["+r.Node+"]")
				case result.OutcomeUnjudged:
					got = append(got, r.Check+"["+r.Node+"]?")
				}
			}
			sort.Strings(got)
			if g := strings.Join(got, ","); g != tt.fail {
				t.Errorf("failed:\n%s\nwant:\n%s", g, tt.fail)
			}
		})
	}
}
