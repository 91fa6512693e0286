package audit

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fleet-audit/fleet-audit/audit/check"
	"github.com/fleet-audit/fleet-audit/audit/probe"
	"github.com/fleet-audit/fleet-audit/internal/nodesim"
	"github.com/fleet-audit/fleet-audit/internal/testtools"
	"github.com/fleet-audit/fleet-audit/result"
)

// kubectlAnswer overrides one answer of the simulated node-local kubectl.
func kubectlAnswer(s *nodesim.State, args, out string, rc int) {
	s.SetCommand(nodesim.Command{Name: "kubectl", Path: nodesim.KubectlPath, Args: args, Out: out, RC: rc})
}

// clusterServer is the first member of WithCluster(fleet), a server node.
func clusterServer(fleet []nodesim.Member) nodesim.State {
	return nodesim.WithCluster(fleet)[0].State
}

func TestClusterProbeOnIncidentFleet(t *testing.T) {
	fleet := nodesim.Incident()
	p := runProbe(t, "cluster", fleet[0].State)
	wantCluster := map[string]string{
		"cluster.kubectl":                       "ok",
		"cluster.api":                           "ok",
		"cluster.server_version":                "v1.31.4+rke2r1",
		"cluster.nodes.count":                   "9",
		"cluster.nodes.not_ready":               "0",
		"cluster.kubeproxy.pods":                "9",
		"cluster.kubeproxy.crashloop":           "4",
		"cluster.kubeproxy.restarted":           "4",
		"cluster.kubeproxy.logs_checked":        "4",
		"cluster.kubeproxy.ds":                  "absent",
		"cluster.kubeproxy.ds.liveness_path":    "absent",
		"cluster.kubeproxy.ds.startup_path":     "absent",
		"cluster.rbac.kube_proxy_can_get_nodes": "yes",
		"cluster.rbac.crb.kube_proxy":           "system:kube-proxy",
		"cluster.rbac.crb.node_proxier":         "system:node-proxier",
	}
	for k, want := range wantCluster {
		if got := p.Facts[k]; got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	var names []string
	for n := range p.NodeFacts {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(names) != 9 {
		t.Fatalf("node facts for %d nodes, want 9 (no coredns or apiserver pod as a node): %v", len(names), names)
	}
	crash := map[string]bool{"etcd-1": true, "etcd-2": true, "worker-2": true, "worker-4": true}
	var crashing, denied []string
	for i, m := range fleet {
		k := nodesim.K8sNodeName(m.Name)
		f := p.NodeFacts[k]
		if f == nil {
			t.Fatalf("no node facts for %s", k)
		}
		if f["k8s.kubeproxy.pod.reason"] == "CrashLoopBackOff" {
			crashing = append(crashing, m.Name)
		}
		if f["k8s.kubeproxy.previous_rbac_denied"] == "yes" {
			denied = append(denied, m.Name)
		}
		want := map[string]string{
			"k8s.node.ready":              "True",
			"k8s.node.kubelet_version":    "v1.31.4+rke2r1",
			"k8s.node.kube_proxy_version": "v1.31.4+rke2r1",
			"k8s.node.roles":              "none",
			"k8s.kubeproxy.pod.name":      "kube-proxy-" + k,
			"k8s.kubeproxy.pod.phase":     "Running",
			"k8s.kubeproxy.pod.ready":     "true",
			"k8s.kubeproxy.pod.restarts":  "0",
			"k8s.kubeproxy.pod.reason":    "Running",
			"k8s.kubeproxy.pod.last_exit": "none",
			"k8s.kubeproxy.liveness_path": "/healthz",
			"k8s.kubeproxy.startup_path":  "/healthz",
		}
		if i < 5 {
			want["k8s.node.roles"] = "control-plane,etcd,master"
		}
		want["k8s.kubeproxy.liveness_503"] = "0"
		// The seed's logs look normal: no failing sync is logged.
		want["k8s.kubeproxy.sync_errors"] = "0"
		if crash[m.Name] {
			want["k8s.kubeproxy.pod.ready"] = "false"
			want["k8s.kubeproxy.pod.reason"] = "CrashLoopBackOff"
			want["k8s.kubeproxy.pod.last_exit"] = "Error/2"
			delete(want, "k8s.kubeproxy.pod.restarts")
			// Eight failed probes before each restart: RKE2 writes its
			// static pods with liveness failureThreshold 8 (rancher/rke2
			// pkg/podtemplate/config.go defaultProbeConf; nodesim.WithCluster).
			if r, err := strconv.Atoi(f["k8s.kubeproxy.pod.restarts"]); err != nil || f["k8s.kubeproxy.liveness_503"] != strconv.Itoa(8*r) {
				t.Errorf("%s: liveness_503 = %q with %q restarts", k, f["k8s.kubeproxy.liveness_503"], f["k8s.kubeproxy.pod.restarts"])
			}
			delete(want, "k8s.kubeproxy.liveness_503")
			if f["k8s.kubeproxy.pod.restarts"] == "0" {
				t.Errorf("%s: a crash-looping pod with 0 restarts", k)
			}
		} else if got := f["k8s.kubeproxy.previous_rbac_denied"]; got != "not-checked" {
			t.Errorf("%s: previous_rbac_denied = %q on a pod that never restarted", k, got)
		}
		for key, w := range want {
			if got := f[key]; got != w {
				t.Errorf("%s: %s = %q, want %q", k, key, got, w)
			}
		}
		if !strings.HasPrefix(f["k8s.node.internal_ip"], "10.0.0.") {
			t.Errorf("%s: internal_ip = %q", k, f["k8s.node.internal_ip"])
		}
	}
	if got := strings.Join(crashing, ","); got != "etcd-1,etcd-2,worker-2,worker-4" {
		t.Errorf("CrashLoopBackOff on %s, want etcd-1,etcd-2,worker-2,worker-4", got)
	}
	if len(denied) != 1 || !crash[denied[0]] {
		t.Errorf("previous-log RBAC denial on %v, want exactly one crash-looping pod (the red herring)", denied)
	}
	// Only server nodes carry RKE2's kubectl and rke2.yaml.
	if got := runProbe(t, "cluster", fleet[5].State).Facts["cluster.kubectl"]; got != "absent" {
		t.Errorf("worker-1: cluster.kubectl = %q, want absent", got)
	}
}

// A custom pods answer, in the field order of the probe's jsonpath: name,
// node, phase, component, k8s-app, ready, restarts, waiting, startedAt,
// terminated, last terminated reason and exit code, liveness, startup.
func podsLine(fields ...string) string { return strings.Join(fields, "\t") + "\n" }

func TestClusterProbeVariants(t *testing.T) {
	clean := func() nodesim.State { return clusterServer(nodesim.Clean(3)) }
	n1 := nodesim.K8sNodeName("node-1")
	tests := []struct {
		name      string
		state     func() nodesim.State
		want      map[string]string
		node      map[string]string // facts of cluster-a-node-1
		noFact    []string
		noNodes   bool
		nodeCount int
	}{
		{
			name:    "kubectl not installed",
			state:   func() nodesim.State { return nodesim.Healthy("srv", true) },
			want:    map[string]string{"cluster.kubectl": "absent"},
			noFact:  []string{"cluster.api", "cluster.server_version"},
			noNodes: true,
		},
		{
			name: "kubeconfig missing",
			state: func() nodesim.State {
				s := clean()
				files := map[string]string{}
				for k, v := range s.Files {
					if k != nodesim.KubeconfigPath {
						files[k] = v
					}
				}
				s.Files = files
				return s
			},
			want:    map[string]string{"cluster.kubectl": "no-kubeconfig"},
			noFact:  []string{"cluster.api"},
			noNodes: true,
		},
		{
			name:      "healthy clean cluster",
			state:     clean,
			want:      map[string]string{"cluster.api": "ok", "cluster.api.error": "none", "cluster.nodes.count": "3", "cluster.kubeproxy.crashloop": "0", "cluster.kubeproxy.logs_checked": "0"},
			node:      map[string]string{"k8s.kubeproxy.pod.reason": "Running", "k8s.kubeproxy.previous_rbac_denied": "not-checked", "k8s.node.roles": "control-plane,etcd,master"},
			nodeCount: 3,
		},
		{
			// The failed checks are the apiserver probe's to report.
			name:   "readyz fails (HTTP 500): the API answered, the view is read",
			state:  func() nodesim.State { return nodesim.WithAPIServerChecksFailing(clean(), "etcd", "etcd-readiness") },
			want:   map[string]string{"cluster.api": "ok", "cluster.api.error": "none", "cluster.nodes.count": "3"},
			noFact: []string{"cluster.readyz", "cluster.readyz.failed"},
		},
		{
			name: "API server refuses connections",
			state: func() nodesim.State {
				s := clean()
				kubectlAnswer(&s, nodesim.KubectlReadyz, "The connection to the server 127.0.0.1:6443 was refused - did you specify the right host or port?\n", 1)
				return s
			},
			want:    map[string]string{"cluster.api": "unreachable", "cluster.api.error": "connection-refused"},
			noFact:  []string{"cluster.server_version", "cluster.nodes.count", "cluster.rbac.kube_proxy_can_get_nodes"},
			noNodes: true,
		},
		{
			name: "API server times out",
			state: func() nodesim.State {
				s := clean()
				kubectlAnswer(&s, nodesim.KubectlReadyz, "Unable to connect to the server: dial tcp 127.0.0.1:6443: i/o timeout\n", 1)
				return s
			},
			want:    map[string]string{"cluster.api": "unreachable", "cluster.api.error": "timeout"},
			noNodes: true,
		},
		{
			name: "API server certificate not trusted",
			state: func() nodesim.State {
				s := clean()
				kubectlAnswer(&s, nodesim.KubectlReadyz, "Unable to connect to the server: tls: failed to verify certificate: x509: certificate signed by unknown authority\n", 1)
				return s
			},
			want:    map[string]string{"cluster.api": "unreachable", "cluster.api.error": "tls"},
			noNodes: true,
		},
		{
			name: "kubeconfig not authorized",
			state: func() nodesim.State {
				s := clean()
				kubectlAnswer(&s, nodesim.KubectlReadyz, "error: You must be logged in to the server (Unauthorized)\n", 1)
				return s
			},
			want: map[string]string{"cluster.api": "unauthorized", "cluster.api.error": "unauthorized"},
		},
		{
			name:  "kube-proxy RBAC really broken",
			state: func() nodesim.State { return nodesim.WithKubeProxyRBACBroken(clean()) },
			want:  map[string]string{"cluster.rbac.kube_proxy_can_get_nodes": "no", "cluster.rbac.crb.kube_proxy": "system:kube-proxy", "cluster.rbac.crb.node_proxier": "absent"},
		},
		{
			name: "bindings unreadable",
			state: func() nodesim.State {
				s := clean()
				kubectlAnswer(&s, nodesim.KubectlCRB, `Error from server (Forbidden): clusterrolebindings.rbac.authorization.k8s.io "system:kube-proxy" is forbidden: User "audit" cannot get resource "clusterrolebindings"`+"\n", 1)
				kubectlAnswer(&s, nodesim.KubectlCanI, "", 1)
				return s
			},
			want: map[string]string{"cluster.rbac.crb.kube_proxy": "unknown", "cluster.rbac.crb.node_proxier": "unknown", "cluster.rbac.kube_proxy_can_get_nodes": "unknown"},
		},
		{
			name: "kube-proxy DaemonSet with both probes",
			state: func() nodesim.State {
				s := clean()
				kubectlAnswer(&s, nodesim.KubectlDS, "/healthz\t/livez", 0)
				return s
			},
			want: map[string]string{"cluster.kubeproxy.ds": "present", "cluster.kubeproxy.ds.liveness_path": "/healthz", "cluster.kubeproxy.ds.startup_path": "/livez"},
		},
		{
			name: "kube-proxy DaemonSet without startup probe",
			state: func() nodesim.State {
				s := clean()
				kubectlAnswer(&s, nodesim.KubectlDS, "/livez\t", 0)
				return s
			},
			want: map[string]string{"cluster.kubeproxy.ds": "present", "cluster.kubeproxy.ds.liveness_path": "/livez", "cluster.kubeproxy.ds.startup_path": "none"},
		},
		{
			name: "DaemonSet pods, a pending one, dual-stack node, unstructured RBAC denial",
			state: func() nodesim.State {
				s := clean()
				kubectlAnswer(&s, nodesim.KubectlNodes,
					n1+"\tTrue\tv1.31.4+rke2r1\tv1.31.4+rke2r1\t10.0.0.11 fd00::11\t{\"kubernetes.io/hostname\":\""+n1+"\",\"node-role.kubernetes.io/worker\":\"true\"}\n"+
						"cluster-a-node-2\tFalse\tv1.31.4+rke2r1\t\t10.0.0.12\t{}\n", 0)
				kubectlAnswer(&s, nodesim.KubectlPods,
					podsLine("kube-proxy-7xk2q", n1, "Running", "", "kube-proxy", "false", "7", "", "", "", "Error", "2", "/healthz", "")+
						podsLine("kube-proxy-p9d4m", "cluster-a-node-2", "Pending", "", "kube-proxy", "", "", "", "", "", "", "", "/healthz", "/healthz")+
						podsLine("kube-proxy-unsched", "", "Pending", "", "kube-proxy", "", "", "", "", "", "", "", "", ""), 0)
				kubectlAnswer(&s, nodesim.KubectlPreviousLogs("kube-proxy-7xk2q"),
					"I1202 09:41:01.902114       1 server_linux.go:66] Using iptables proxy\n"+
						"E1202 09:41:02.118327       1 node.go:152] Failed to retrieve node info: nodes \""+n1+"\" is forbidden: User \"system:kube-proxy\" cannot get resource \"nodes\" in API group \"\" at the cluster scope\n", 0)
				return s
			},
			want: map[string]string{"cluster.nodes.count": "2", "cluster.nodes.not_ready": "1", "cluster.kubeproxy.pods": "3", "cluster.kubeproxy.restarted": "1", "cluster.kubeproxy.logs_checked": "1"},
			node: map[string]string{
				"k8s.node.internal_ip": "10.0.0.11", "k8s.node.roles": "worker", "k8s.kubeproxy.pod.name": "kube-proxy-7xk2q",
				"k8s.kubeproxy.pod.reason": "Running", "k8s.kubeproxy.pod.ready": "false", "k8s.kubeproxy.pod.restarts": "7",
				"k8s.kubeproxy.pod.last_exit": "Error/2", "k8s.kubeproxy.startup_path": "none", "k8s.kubeproxy.previous_rbac_denied": "yes",
			},
			nodeCount: 2,
		},
		{
			name: "previous log unavailable, clean log, no pod",
			state: func() nodesim.State {
				fleet := nodesim.Clean(3)
				fleet[1].State = nodesim.WithUFWActive(fleet[1].State)
				fleet[2].State = nodesim.WithUFWActive(fleet[2].State)
				fleet[2].State.Listening = []int{10250}
				s := clusterServer(fleet)
				kubectlAnswer(&s, nodesim.KubectlPods,
					podsLine("kube-proxy-"+n1, n1, "Running", "kube-proxy", "", "true", "3", "", "2026-12-02T09:12:00Z", "", "Completed", "0", "/healthz", "/healthz")+
						podsLine("kube-proxy-cluster-a-node-2", "cluster-a-node-2", "Running", "kube-proxy", "", "false", "9", "CrashLoopBackOff", "", "", "Error", "2", "/healthz", "/healthz"), 0)
				kubectlAnswer(&s, nodesim.KubectlPreviousLogs("kube-proxy-"+n1), "", 1)
				return s
			},
			want: map[string]string{"cluster.kubeproxy.crashloop": "1", "cluster.kubeproxy.logs_checked": "2"},
			node: map[string]string{"k8s.kubeproxy.previous_rbac_denied": "unavailable", "k8s.kubeproxy.pod.last_exit": "Completed/0", "k8s.kubeproxy.pod.reason": "Running"},
		},
		{
			// The nodes were read and the pods not: each node's kube-proxy
			// pod is unknown, not missing and not fine.
			name: "pod list fails",
			state: func() nodesim.State {
				s := clean()
				kubectlAnswer(&s, nodesim.KubectlPods, "Error from server (Timeout): the server was unable to return a response in the time allotted\n", 1)
				return s
			},
			want: map[string]string{"cluster.kubeproxy.pods": "error", "cluster.nodes.count": "3"},
			node: map[string]string{"k8s.kubeproxy.pod.name": "unknown", "k8s.kubeproxy.pod.reason": "unknown", "k8s.kubeproxy.pod.ready": "unknown", "k8s.kubeproxy.pod.restarts": "unknown"},
		},
		{
			// Another pod's probes, a readiness failure and a liveness
			// failure that is not a 503 are not kube-proxy's 503s; an exec
			// probe's output may span lines.
			name: "liveness 503 events of kube-proxy only",
			state: func() nodesim.State {
				s := clean()
				kubectlAnswer(&s, nodesim.KubectlEvents,
					"kube-proxy-"+n1+"\t7\tLiveness probe failed: HTTP probe failed with statuscode: 503\n"+
						"kube-proxy-"+n1+"\t\tLiveness probe failed: HTTP probe failed with statuscode: 503\n"+
						"kube-proxy-"+n1+"\t2\tLiveness probe failed: Get \"http://127.0.0.1:10256/healthz\": context deadline exceeded\n"+
						"kube-proxy-"+n1+"\t4\tReadiness probe failed: HTTP probe failed with statuscode: 503\n"+
						"rke2-canal-x7k2p\t9\tLiveness probe failed: calico/node is not ready: bird/confd is not live: exit status 1\nbird: unable to connect to BIRDv4 socket\n", 0)
				return s
			},
			node: map[string]string{"k8s.kubeproxy.liveness_503": "8"},
		},
		{
			// Counted, never quoted: the lines may carry rule text.
			name: "sync errors in the current log",
			state: func() nodesim.State {
				s := clean()
				kubectlAnswer(&s, nodesim.KubectlCurrentLogs("kube-proxy-"+n1), kubeProxyLog(
					`E1202 09:51:02.118327       1 proxier.go:1552] "Failed to execute iptables-restore" err="exit status 4: Another app is currently holding the xtables lock. Perhaps you want to use the -w option?"`,
					`I1202 09:51:02.118390       1 proxier.go:816] "Sync failed" retryingTime="30s"`,
					`E1202 09:51:32.2       1 proxier.go:1552] "Failed to execute iptables-restore" err="exit status 1"`), 0)
				kubectlAnswer(&s, nodesim.KubectlCurrentLogs("kube-proxy-cluster-a-node-2"), "", 1)
				return s
			},
			node: map[string]string{"k8s.kubeproxy.sync_errors": "3"},
		},
		{
			name: "current log unavailable",
			state: func() nodesim.State {
				s := clean()
				kubectlAnswer(&s, nodesim.KubectlCurrentLogs("kube-proxy-"+n1), "", 1)
				return s
			},
			node: map[string]string{"k8s.kubeproxy.sync_errors": "unavailable"},
		},
		{
			name: "event list fails",
			state: func() nodesim.State {
				s := clean()
				kubectlAnswer(&s, nodesim.KubectlEvents, "Error from server (Forbidden): events is forbidden\n", 1)
				return s
			},
			node: map[string]string{"k8s.kubeproxy.liveness_503": "unknown", "k8s.kubeproxy.pod.reason": "Running"},
		},
		{
			name: "node list fails",
			state: func() nodesim.State {
				s := clean()
				kubectlAnswer(&s, nodesim.KubectlNodes, "", 1)
				return s
			},
			want: map[string]string{"cluster.nodes.count": "error", "cluster.nodes.not_ready": "error", "cluster.kubeproxy.pods": "3"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := runProbe(t, "cluster", tc.state())
			for k, want := range tc.want {
				if got := p.Facts[k]; got != want {
					t.Errorf("%s = %q, want %q", k, got, want)
				}
			}
			for _, k := range tc.noFact {
				if v, ok := p.Facts[k]; ok {
					t.Errorf("%s = %q, want not reported", k, v)
				}
			}
			if tc.noNodes && len(p.NodeFacts) != 0 {
				t.Errorf("node facts reported: %v", p.NodeFacts)
			}
			if tc.nodeCount != 0 && len(p.NodeFacts) != tc.nodeCount {
				t.Errorf("node facts for %d nodes, want %d: %v", len(p.NodeFacts), tc.nodeCount, p.NodeFacts)
			}
			for k, want := range tc.node {
				if got := p.NodeFacts[n1][k]; got != want {
					t.Errorf("%s: %s = %q, want %q", n1, k, got, want)
				}
			}
		})
	}
}

func TestClusterProbeNodeWithoutKubeProxy(t *testing.T) {
	fleet := nodesim.Clean(3)
	fleet[2].State.Listening = []int{10250}         // kube-proxy never bound its port
	fleet[1].State.Units = map[string]nodesim.Unit{ // kubelet stopped
		"ufw": {Active: "inactive", Enabled: "disabled"}, "rke2-agent": {Active: "failed", Enabled: "enabled"},
	}
	p := runProbe(t, "cluster", clusterServer(fleet))
	if got := p.NodeFacts["cluster-a-node-3"]["k8s.kubeproxy.pod.name"]; got != "absent" {
		t.Errorf("node-3 pod = %q, want absent", got)
	}
	if got := p.NodeFacts["cluster-a-node-2"]["k8s.node.ready"]; got != "Unknown" {
		t.Errorf("node-2 ready = %q, want Unknown", got)
	}
	if got := p.Facts["cluster.nodes.not_ready"]; got != "1" {
		t.Errorf("not_ready = %q, want 1", got)
	}
}

// The probe's raw output (stdout and stderr of the whole bundle) never holds
// the kubeconfig's key or token, nor the join token of config.yaml.
func TestClusterProbeNeverPrintsSecrets(t *testing.T) {
	all, err := probe.BuiltinProbes()
	if err != nil {
		t.Fatal(err)
	}
	var p []probe.Probe
	for _, pr := range all {
		if pr.ID == "cluster" {
			p = append(p, pr)
		}
	}
	root := filepath.Join(t.TempDir(), "node")
	if err := nodesim.Build(root, clusterServer(nodesim.Incident())); err != nil {
		t.Fatal(err)
	}
	nonce := probe.NewNonce()
	res, err := (&shSession{root: root}).Exec(context.Background(), scriptFor(t, p, probe.Become{}, nonce, p[0].Timeout+5e9))
	if err != nil {
		t.Fatal(err)
	}
	out := string(res.Stdout) + string(res.Stderr)
	if !strings.Contains(out, "cluster.kubectl=ok") {
		t.Fatalf("the probe did not use the kubeconfig; output:\n%s", out)
	}
	for _, secret := range []string{nodesim.FakeKubeconfigToken, nodesim.FakeKubeconfigSecret, "s3cr3t-demo-token", "token:", "client-key-data", "is forbidden"} {
		if strings.Contains(out, secret) {
			t.Errorf("output holds %q", secret)
		}
	}
}

// clusterChecks are the checks of checks/cluster.yaml.
func clusterChecks(t *testing.T) []check.Check {
	t.Helper()
	var out []check.Check
	for _, c := range builtinChecks(t) {
		if strings.HasPrefix(c.Source, "checks/cluster.yaml:") {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		t.Fatal("no checks from checks/cluster.yaml")
	}
	return out
}

// healthyK8s is what the cluster probe reports on a healthy node.
func healthyK8s() map[string]string {
	return map[string]string{
		"k8s.node.registered": "yes", "k8s.node.ready": "True", "k8s.node.kubelet_version": "v1.31.4+rke2r1",
		"k8s.kubeproxy.pod.name": "kube-proxy-x", "k8s.kubeproxy.pod.phase": "Running", "k8s.kubeproxy.pod.ready": "true",
		"k8s.kubeproxy.pod.restarts": "0", "k8s.kubeproxy.pod.reason": "Running", "k8s.kubeproxy.pod.last_exit": "none",
		"k8s.kubeproxy.liveness_path": "/healthz", "k8s.kubeproxy.startup_path": "/healthz",
		"k8s.kubeproxy.previous_rbac_denied": "not-checked", "k8s.kubeproxy.previous_rbac_denials": "none",
		"k8s.kubeproxy.previous_rbac_can_i": "none", "k8s.kubeproxy.liveness_503": "0", "k8s.kubeproxy.sync_errors": "0",
		"k8s.node.os": "linux", "k8s.cni.agent": "canal", "k8s.cni.agent.health": "ok", "k8s.cni.multus.health": "none",
		"k8s.cni.agent.problem": "none",
	}
}

func healthyClusterFacts() map[string]string {
	return map[string]string{
		"cluster.kubectl": "ok", "cluster.api": "ok", "cluster.api.error": "none",
		"cluster.server_version": "v1.31.4+rke2r1", "cluster.nodes.count": "3", "cluster.nodes.not_ready": "0",
		"cluster.kubeproxy.pods": "3", "cluster.kubeproxy.crashloop": "0", "cluster.kubeproxy.restarted": "0",
		"cluster.kubeproxy.logs_checked": "0", "cluster.kubeproxy.ds": "absent", "cluster.kubeproxy.ds.liveness_path": "absent",
		"cluster.kubeproxy.ds.startup_path": "absent", "cluster.rbac.kube_proxy_can_get_nodes": "yes",
		"cluster.rbac.crb.kube_proxy": "system:kube-proxy", "cluster.rbac.crb.node_proxier": "system:node-proxier",
		"cluster.cni.agents": "canal", "cluster.cni.agent.unhealthy": "0",
	}
}

func TestClusterChecks(t *testing.T) {
	checks := clusterChecks(t)
	tests := []struct {
		name    string
		node    map[string]string // planted on "bad"; "ok-1" and "ok-2" stay healthy
		cluster map[string]string // changes to the healthy cluster facts
		// fail maps check id → nodes it must fail on ("(cluster)" for a
		// cluster check); every other check of cluster.yaml must not fail.
		fail map[string]string
	}{
		{name: "healthy", fail: map[string]string{}},
		{name: "API unreachable", cluster: map[string]string{"cluster.api": "unreachable"},
			fail: map[string]string{"cluster.api-unavailable": result.ClusterNode}},
		{name: "crash loop", node: map[string]string{"k8s.kubeproxy.pod.reason": "CrashLoopBackOff", "k8s.kubeproxy.pod.ready": "false", "k8s.kubeproxy.pod.restarts": "17", "k8s.kubeproxy.pod.last_exit": "Error/2"},
			cluster: map[string]string{"cluster.kubeproxy.crashloop": "1", "cluster.kubeproxy.restarted": "1"},
			// The 1.31 liveness note is context for a restarting pod.
			fail: map[string]string{"k8s.kubeproxy-crashloop": "bad", "k8s.kubeproxy-liveness-healthz": "bad"}},
		{name: "sync errors in the current log", node: map[string]string{"k8s.kubeproxy.sync_errors": "3"},
			fail: map[string]string{"k8s.kubeproxy-sync-errors": "bad"}},
		{name: "current log not read", node: map[string]string{"k8s.kubeproxy.sync_errors": "unavailable"}, fail: map[string]string{}},
		{name: "restarts below threshold", node: map[string]string{"k8s.kubeproxy.pod.restarts": "4"},
			fail: map[string]string{"k8s.kubeproxy-liveness-healthz": "bad"}},
		{name: "restarts at threshold", node: map[string]string{"k8s.kubeproxy.pod.restarts": "5"},
			fail: map[string]string{"k8s.kubeproxy-restarts": "bad", "k8s.kubeproxy-liveness-healthz": "bad"}},
		{name: "restarts on a pod already in crash loop count once", node: map[string]string{"k8s.kubeproxy.pod.restarts": "30", "k8s.kubeproxy.pod.reason": "CrashLoopBackOff", "k8s.kubeproxy.pod.ready": "false"},
			fail: map[string]string{"k8s.kubeproxy-crashloop": "bad", "k8s.kubeproxy-liveness-healthz": "bad"}},
		// /livez exists since 1.28 (KEP-3836): before that /healthz is the
		// only endpoint, and the note has nothing to point to.
		{name: "restarts on a 1.27 server: no /livez note", node: map[string]string{"k8s.kubeproxy.pod.restarts": "5"}, cluster: map[string]string{"cluster.server_version": "v1.27.16+rke2r1"},
			fail: map[string]string{"k8s.kubeproxy-restarts": "bad"}},
		{name: "restarts on a 1.28 server: the /livez note", node: map[string]string{"k8s.kubeproxy.pod.restarts": "5"}, cluster: map[string]string{"cluster.server_version": "v1.28.15+rke2r1"},
			fail: map[string]string{"k8s.kubeproxy-restarts": "bad", "k8s.kubeproxy-liveness-healthz": "bad"}},
		{name: "restarts with liveness on /livez", node: map[string]string{"k8s.kubeproxy.pod.restarts": "5", "k8s.kubeproxy.liveness_path": "/livez"},
			fail: map[string]string{"k8s.kubeproxy-restarts": "bad"}},
		{name: "no kube-proxy pod", node: map[string]string{"k8s.kubeproxy.pod.name": "absent", "k8s.kubeproxy.pod.phase": "absent", "k8s.kubeproxy.pod.reason": "absent", "k8s.kubeproxy.pod.ready": "absent"},
			fail: map[string]string{"k8s.kubeproxy-pod-missing": "bad"}},
		{name: "node NotReady", node: map[string]string{"k8s.node.ready": "Unknown"},
			fail: map[string]string{"k8s.node-not-ready": "bad"}},
		{name: "inventory node not registered", node: map[string]string{"k8s.node.registered": "no"},
			fail: map[string]string{"k8s.node-not-registered": "bad"}},
		{name: "not registered because kubectl is absent is no finding", node: map[string]string{"k8s.node.registered": "no"},
			cluster: map[string]string{"cluster.kubectl": "absent"}, fail: map[string]string{}},
		{name: "red herring: denial in previous log, can-i yes",
			node:    map[string]string{"k8s.kubeproxy.previous_rbac_denied": "yes", "k8s.kubeproxy.previous_rbac_denials": "get:nodes", "k8s.kubeproxy.previous_rbac_can_i": "yes", "k8s.kubeproxy.pod.restarts": "2"},
			cluster: map[string]string{"cluster.kubeproxy.restarted": "1"},
			fail:    map[string]string{"k8s.kubeproxy-rbac-denial-transient": "bad", "k8s.kubeproxy-liveness-healthz": "bad"}},
		{name: "denial in previous log, can-i no",
			node:    map[string]string{"k8s.kubeproxy.previous_rbac_denied": "yes", "k8s.kubeproxy.previous_rbac_denials": "get:nodes", "k8s.kubeproxy.previous_rbac_can_i": "no", "k8s.kubeproxy.pod.restarts": "2"},
			cluster: map[string]string{"cluster.rbac.kube_proxy_can_get_nodes": "no", "cluster.rbac.crb.node_proxier": "absent"},
			fail:    map[string]string{"cluster.rbac.kube-proxy-cannot-get-nodes": result.ClusterNode, "k8s.kubeproxy-rbac-denied": "bad", "k8s.kubeproxy-liveness-healthz": "bad"}},
		// The denial is judged by can-i for its own verb and resource: get
		// nodes may well be allowed while list endpointslices is not.
		{name: "RBAC red herring: list endpointslices denied before, can-i yes now",
			node: map[string]string{"k8s.kubeproxy.previous_rbac_denied": "yes", "k8s.kubeproxy.previous_rbac_denials": "list:endpointslices.discovery.k8s.io", "k8s.kubeproxy.previous_rbac_can_i": "yes", "k8s.kubeproxy.pod.restarts": "2"},
			fail: map[string]string{"k8s.kubeproxy-rbac-denial-transient": "bad", "k8s.kubeproxy-liveness-healthz": "bad"}},
		{name: "RBAC real: list endpointslices denied, can-i no although get nodes is allowed",
			node: map[string]string{"k8s.kubeproxy.previous_rbac_denied": "yes", "k8s.kubeproxy.previous_rbac_denials": "list:endpointslices.discovery.k8s.io", "k8s.kubeproxy.previous_rbac_can_i": "no", "k8s.kubeproxy.pod.restarts": "2"},
			fail: map[string]string{"k8s.kubeproxy-rbac-denied": "bad", "k8s.kubeproxy-liveness-healthz": "bad"}},
		{name: "RBAC undecided: can-i did not answer, neither transient nor real",
			node: map[string]string{"k8s.kubeproxy.previous_rbac_denied": "yes", "k8s.kubeproxy.previous_rbac_denials": "watch:services", "k8s.kubeproxy.previous_rbac_can_i": "unknown", "k8s.kubeproxy.pod.restarts": "2"},
			fail: map[string]string{"k8s.kubeproxy-liveness-healthz": "bad"}},
		{name: "CNI agent crash-looping", node: map[string]string{"k8s.cni.agent.health": "crashloop", "k8s.cni.agent.problem": "canal kube-system/rke2-canal-x: CrashLoopBackOff (calico-node), 17 restarts"},
			fail: map[string]string{"k8s.cni-agent-unhealthy": "bad"}},
		{name: "CNI agent not ready", node: map[string]string{"k8s.cni.agent.health": "not-ready"},
			fail: map[string]string{"k8s.cni-agent-unhealthy": "bad"}},
		{name: "CNI agent restarting", node: map[string]string{"k8s.cni.agent.health": "restarting"},
			fail: map[string]string{"k8s.cni-agent-unhealthy": "bad"}},
		{name: "Cilium agent crash-looping without kube-proxy",
			node: map[string]string{"k8s.cni.agent": "cilium", "k8s.cni.agent.health": "crashloop", "k8s.kubeproxy.pod.name": "absent", "k8s.kubeproxy.pod.phase": "absent", "k8s.kubeproxy.pod.reason": "absent", "k8s.kubeproxy.pod.ready": "absent"},
			// The missing kube-proxy pod is another check's (kube-proxy-free clusters).
			fail: map[string]string{"k8s.cni-agent-unhealthy-no-kube-proxy": "bad", "k8s.kubeproxy-pod-missing": "bad"}},
		{name: "Multus crash-looping", node: map[string]string{"k8s.cni.multus.health": "crashloop"},
			fail: map[string]string{"k8s.cni-multus-unhealthy": "bad"}},
		{name: "no CNI agent pod while peers have one", node: map[string]string{"k8s.cni.agent": "absent", "k8s.cni.agent.health": "absent"},
			fail: map[string]string{"k8s.cni-agent-missing": "bad"}},
		{name: "no Multus pod while peers have one", node: map[string]string{"k8s.cni.multus.health": "absent"},
			fail: map[string]string{"k8s.cni-multus-unhealthy": "bad"}},
		{name: "a cluster without known CNI agents is no finding", node: map[string]string{"k8s.cni.agent": "none", "k8s.cni.agent.health": "none"},
			cluster: map[string]string{"cluster.cni.agents": "none"}, fail: map[string]string{}},
		{name: "DaemonSet liveness on /healthz, pods restarting",
			cluster: map[string]string{"cluster.kubeproxy.ds": "present", "cluster.kubeproxy.ds.liveness_path": "/healthz", "cluster.kubeproxy.ds.startup_path": "/healthz", "cluster.kubeproxy.restarted": "2"},
			fail:    map[string]string{"cluster.kubeproxy-ds-liveness-healthz": result.ClusterNode}},
		{name: "DaemonSet liveness on /healthz, nothing restarting",
			cluster: map[string]string{"cluster.kubeproxy.ds": "present", "cluster.kubeproxy.ds.liveness_path": "/healthz", "cluster.kubeproxy.ds.startup_path": "/healthz"},
			fail:    map[string]string{}},
		{name: "DaemonSet already on /livez",
			cluster: map[string]string{"cluster.kubeproxy.ds": "present", "cluster.kubeproxy.ds.liveness_path": "/livez", "cluster.kubeproxy.restarted": "2"},
			fail:    map[string]string{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var nodes []result.Node
			for _, name := range []string{"bad", "ok-1", "ok-2"} {
				f := healthyK8s()
				if name == "bad" {
					for k, v := range tc.node {
						f[k] = v
					}
				}
				nodes = append(nodes, result.Node{Name: name, Status: result.StatusOK, Facts: f})
			}
			cf := healthyClusterFacts()
			for k, v := range tc.cluster {
				cf[k] = v
			}
			results := check.Judge(nodes, &result.Cluster{Status: result.ClusterOK, Facts: cf}, checks, nil)
			got := map[string][]string{}
			for _, r := range results {
				if r.Outcome == result.OutcomeFail {
					got[r.Check] = append(got[r.Check], r.Node)
				}
			}
			for id, want := range tc.fail {
				if strings.Join(got[id], ",") != want {
					t.Errorf("%s fails on %v, want %s", id, got[id], want)
				}
			}
			for id, on := range got {
				if _, ok := tc.fail[id]; !ok {
					t.Errorf("%s fails on %v, want it to pass", id, on)
				}
			}
		})
	}
}

// The red herring stays info: with can-i yes no critical finding comes
// from it, whatever the logs say. Only a check that also requires can-i to
// say no may read the previous-log denial above info.
func TestRBACRedHerringIsNeverCritical(t *testing.T) {
	checks := clusterChecks(t)
	for _, c := range checks {
		reads, canINo := false, false
		for _, cond := range c.When {
			reads = reads || cond.Fact == "k8s.kubeproxy.previous_rbac_denied"
			canINo = canINo || cond.Fact == "k8s.kubeproxy.previous_rbac_can_i" && cond.Op == "eq" && cond.Value == "no"
		}
		if reads && !canINo && c.Severity != result.SeverityInfo {
			t.Errorf("%s reads the previous-log denial with severity %s without can-i saying no, want info", c.ID, c.Severity)
		}
	}
	for _, denials := range []string{"get:nodes", "list:endpointslices.discovery.k8s.io", "watch:services,list:nodes"} {
		nodes := []result.Node{{Name: "etcd-1", Status: result.StatusOK, Facts: map[string]string{"k8s.kubeproxy.previous_rbac_denied": "yes",
			"k8s.kubeproxy.previous_rbac_denials": denials, "k8s.kubeproxy.previous_rbac_can_i": "yes", "k8s.kubeproxy.pod.restarts": "3"}}}
		findings := check.CheckFindings(checks, check.Judge(nodes, &result.Cluster{Status: result.ClusterOK, Facts: healthyClusterFacts()}, checks, nil))
		transient := false
		for _, f := range findings {
			if f.Severity == result.SeverityCritical {
				t.Errorf("%s: critical finding %s from a transient denial", denials, f.Check)
			}
			if f.Check == "k8s.kubeproxy-rbac-denial-transient" {
				transient = true
				if !strings.Contains(f.Title, "not the cause") {
					t.Errorf("title %q does not say it is not the cause", f.Title)
				}
				if ev := strings.Join(f.Evidence, " "); !strings.Contains(ev, "k8s.kubeproxy.previous_rbac_denials="+denials) {
					t.Errorf("evidence %q does not name the denied verbs and resources %s", ev, denials)
				}
			}
		}
		if !transient {
			t.Errorf("%s: no transient finding", denials)
		}
	}
}

func TestClusterHealthyAndIncidentEndToEnd(t *testing.T) {
	t.Run("clean", func(t *testing.T) {
		r := judgeFixture(t, "clean-3", nil)
		if r.Cluster == nil || r.Cluster.Facts["cluster.api"] != "ok" {
			t.Fatalf("cluster = %+v", r.Cluster)
		}
		if len(r.Findings) != 0 {
			t.Errorf("findings on a clean fleet: %+v", r.Findings)
		}
		if len(r.Drift) != 0 {
			t.Errorf("drift on a clean fleet: %+v", r.Drift)
		}
		for _, n := range r.Nodes {
			if n.Facts["k8s.node.registered"] != "yes" || n.Facts["k8s.kubeproxy.pod.reason"] != "Running" {
				t.Errorf("%s: registered=%s reason=%s", n.Name, n.Facts["k8s.node.registered"], n.Facts["k8s.kubeproxy.pod.reason"])
			}
		}
	})
	t.Run("incident", func(t *testing.T) {
		r := judgeFixture(t, "incident", nil)
		if len(r.Findings) == 0 || r.Findings[0].Cause == nil || r.Findings[0].Cause.Fact != "ufw.active" || r.Findings[0].Cause.Value != "active" {
			t.Fatalf("first finding is not the UFW cause: %+v", r.Findings)
		}
		byCheck := map[string]result.Finding{}
		for _, f := range r.Findings {
			byCheck[f.Check] = f
			for _, n := range f.Nodes {
				if n == "worker-3" {
					t.Errorf("%s blames worker-3", f.Check)
				}
			}
		}
		if got := strings.Join(byCheck["k8s.kubeproxy-crashloop"].Nodes, ","); got != "etcd-1,etcd-2,worker-2,worker-4" {
			t.Errorf("crash loop finding on %q", got)
		}
		// kubelet's liveness 503 events are the crash loop's evidence,
		// in its own finding and in the probable cause's per-node lines.
		for _, n := range []string{"etcd-1", "etcd-2", "worker-2", "worker-4"} {
			var ev, cause string
			for _, e := range byCheck["k8s.kubeproxy-crashloop"].Evidence {
				if strings.HasPrefix(e, n+": ") {
					ev = e
				}
			}
			for _, e := range r.Findings[0].Evidence {
				if strings.HasPrefix(e, n+": ") {
					cause = e
				}
			}
			for _, line := range []string{ev, cause} {
				_, v, ok := strings.Cut(line, "k8s.kubeproxy.liveness_503=")
				if v, _, _ = strings.Cut(v, " "); !ok || v == "0" || strings.Trim(v, "0123456789") != "" {
					t.Errorf("%s: no liveness 503 count in %q", n, line)
				}
			}
		}
		if f, ok := byCheck["k8s.kubeproxy-rbac-denial-transient"]; !ok || f.Severity != result.SeverityInfo || len(f.Nodes) != 1 {
			t.Errorf("red herring finding = %+v", f)
		}
		if _, ok := byCheck["cluster.rbac.kube-proxy-cannot-get-nodes"]; ok {
			t.Error("RBAC critical on a cluster where can-i says yes")
		}
		if !strings.Contains(r.Findings[0].Title, "ufw.active=active") {
			t.Errorf("title = %q", r.Findings[0].Title)
		}
	})
}

// probeShells are the shells a probe must run under: dash (/bin/sh on
// Debian and Ubuntu), bash in POSIX mode and busybox sh.
var probeShells = [][]string{{"dash"}, {"bash", "--posix"}, {"busybox", "sh"}}

// kubeProxyLog is a kube-proxy 1.31 previous log holding the given lines
// among its normal start.
func kubeProxyLog(lines ...string) string {
	return "I1202 09:41:01.902114       1 server_linux.go:66] \"Using iptables proxy\"\n" + strings.Join(lines, "\n") + "\n" +
		"I1202 09:41:02.134772       1 config.go:328] \"Starting node config controller\"\n"
}

// reflectorDenial is client-go's reflector logging a 403 in klog's
// structured form (inner quotes escaped), as kube-proxy 1.31 prints it: the
// message is apimachinery's NewForbidden("%s is forbidden: %v") around the
// apiserver's forbiddenMessage ("User %q cannot %s resource %q in API group
// %q at the cluster scope", responsewriters/errors.go).
func reflectorDenial(kind, verb, resource, group string) string {
	gr := resource
	if group != "" {
		gr += "." + group
	}
	return fmt.Sprintf(`E1202 09:41:02.2%05d       1 reflector.go:158] "Unhandled Error" err="k8s.io/client-go/informers/factory.go:160: Failed to watch *v1.%s: failed to list *v1.%s: %s is forbidden: User \"system:kube-proxy\" cannot %s resource \"%s\" in API group \"%s\" at the cluster scope" logger="UnhandledError"`,
		len(kind), kind, kind, gr, verb, resource, group)
}

// The transient-RBAC classifier knows every `User "system:kube-proxy"
// cannot VERB resource "RES"` denial, asks can-i for that verb and resource,
// and lets only Kubernetes-shaped names of it reach the output.
func TestClusterProbeRBACDenials(t *testing.T) {
	testtools.SkipShort(t, "runs the cluster probe under dash, bash and busybox for every log")
	n1 := nodesim.K8sNodeName("node-1")
	pod := nodesim.KubeProxyPod("node-1")
	server := func(log string, edit func(*nodesim.State)) nodesim.State {
		s := clusterServer(nodesim.Clean(3))
		kubectlAnswer(&s, nodesim.KubectlPods,
			podsLine(pod, n1, "Running", "kube-proxy", "", "true", "3", "", "2026-12-02T09:12:00Z", "", "Error", "2", "/healthz", "/healthz"), 0)
		kubectlAnswer(&s, nodesim.KubectlPreviousLogs(pod), log, 0)
		if edit != nil {
			edit(&s)
		}
		return s
	}
	endpointslices := reflectorDenial("EndpointSlice", "list", "endpointslices", "discovery.k8s.io")
	tests := []struct {
		name  string
		log   string
		edit  func(*nodesim.State)
		want  [3]string // previous_rbac_denied, previous_rbac_denials, previous_rbac_can_i
		never []string  // never in the raw output
	}{
		{name: "list endpointslices, can-i yes: transient", log: kubeProxyLog(endpointslices),
			want: [3]string{"yes", "list:endpointslices.discovery.k8s.io", "yes"}},
		{name: "list endpointslices, can-i no: real", log: kubeProxyLog(endpointslices),
			edit: func(s *nodesim.State) {
				*s = nodesim.WithKubeProxyCanI(*s, "list", "endpointslices.discovery.k8s.io", false)
			},
			want: [3]string{"yes", "list:endpointslices.discovery.k8s.io", "no"}},
		{name: "seed's get nodes, can-i yes", log: kubeProxyLog(`E1202 09:41:02.118327       1 server.go:666] "Failed to retrieve node info" err="nodes \"` + n1 + `\" is forbidden: User \"system:kube-proxy\" cannot get resource \"nodes\" in API group \"\" at the cluster scope"`),
			want: [3]string{"yes", "get:nodes", "yes"}},
		{name: "unstructured watch services and list nodes, services denied now",
			log: kubeProxyLog(
				`E1202 09:41:02.3 1 reflector.go:138] Failed to watch *v1.Service: services is forbidden: User "system:kube-proxy" cannot watch resource "services" in API group "" at the cluster scope`,
				`E1202 09:41:02.4 1 reflector.go:138] Failed to watch *v1.Node: failed to list *v1.Node: nodes is forbidden: User "system:kube-proxy" cannot list resource "nodes" in API group "" at the cluster scope`,
				`E1202 09:41:03.4 1 reflector.go:138] Failed to watch *v1.Service: services is forbidden: User "system:kube-proxy" cannot watch resource "services" in API group "" at the cluster scope`),
			edit: func(s *nodesim.State) { *s = nodesim.WithKubeProxyCanI(*s, "watch", "services", false) },
			want: [3]string{"yes", "watch:services,list:nodes", "no"}},
		{name: "namespaced denial outside system:node-proxier: RBAC says no",
			log:  kubeProxyLog(`E1202 09:41:02.5 1 x.go:1] configmaps "kube-proxy" is forbidden: User "system:kube-proxy" cannot get resource "configmaps" in API group "" in the namespace "kube-system"`),
			want: [3]string{"yes", "get:configmaps", "no"}},
		{name: "subresource asked with --subresource",
			log:  kubeProxyLog(`E1202 09:41:02.5 1 x.go:1] forbidden: User "system:kube-proxy" cannot get resource "nodes/proxy" in API group "" at the cluster scope`),
			edit: func(s *nodesim.State) { *s = nodesim.WithKubeProxyCanI(*s, "get", "nodes/proxy", true) },
			want: [3]string{"yes", "get:nodes/proxy", "yes"}},
		{name: "can-i does not answer: unknown", log: kubeProxyLog(endpointslices),
			edit: func(s *nodesim.State) {
				kubectlAnswer(s, nodesim.KubectlCanIFor("list", "endpointslices.discovery.k8s.io"), "", 1)
			},
			want: [3]string{"yes", "list:endpointslices.discovery.k8s.io", "unknown"}},
		{name: "one no outweighs an unknown", log: kubeProxyLog(endpointslices, reflectorDenial("Service", "watch", "services", "")),
			edit: func(s *nodesim.State) {
				kubectlAnswer(s, nodesim.KubectlCanIFor("list", "endpointslices.discovery.k8s.io"), "", 1)
				*s = nodesim.WithKubeProxyCanI(*s, "watch", "services", false)
			},
			want: [3]string{"yes", "list:endpointslices.discovery.k8s.io,watch:services", "no"}},
		{name: "clean log", log: kubeProxyLog(), want: [3]string{"no", "none", "none"}},
		{name: "another user's denial is not kube-proxy's",
			log:  kubeProxyLog(`E1202 09:41:02.5 1 x.go:1] endpointslices.discovery.k8s.io is forbidden: User "system:serviceaccount:kube-system:coredns" cannot list resource "endpointslices" in API group "discovery.k8s.io" at the cluster scope`),
			want: [3]string{"no", "none", "none"}},
		{name: "hostile names never get through",
			log: kubeProxyLog(
				`forbidden: User "system:kube-proxy" cannot list resource "nodes$(id)" in API group ""`,
				`forbidden: User "system:kube-proxy" cannot LIST resource "nodes"`,
				`forbidden: User "system:kube-proxy" cannot list resource "no des" at the cluster scope`,
				"forbidden: User \"system:kube-proxy\" cannot list resource \"nodes\x1b[31m\""),
			want:  [3]string{"no", "none", "none"},
			never: []string{"$(id)", "\x1b", "LIST", "no des", "forbidden"}},
		{name: "at most four distinct denials",
			log: kubeProxyLog(reflectorDenial("Service", "list", "services", ""), reflectorDenial("Service", "watch", "services", ""),
				reflectorDenial("Endpoints", "list", "endpoints", ""), reflectorDenial("Service", "list", "services", ""),
				reflectorDenial("Node", "watch", "nodes", ""), reflectorDenial("EndpointSlice", "watch", "endpointslices", "discovery.k8s.io")),
			want: [3]string{"yes", "list:services,watch:services,list:endpoints,watch:nodes", "yes"}},
		{name: "previous log unavailable", log: "", want: [3]string{"unavailable", "none", "none"}},
	}
	for _, sh := range probeShells {
		for _, tc := range tests {
			t.Run(strings.Join(sh, " ")+"/"+tc.name, func(t *testing.T) {
				p, raw := runProbeUnder(t, sh, "cluster", server(tc.log, tc.edit))
				f := p.NodeFacts[n1]
				got := [3]string{f["k8s.kubeproxy.previous_rbac_denied"], f["k8s.kubeproxy.previous_rbac_denials"], f["k8s.kubeproxy.previous_rbac_can_i"]}
				if got != tc.want {
					t.Errorf("denied, denials, can_i = %q, want %q", got, tc.want)
				}
				if p.Facts["cluster.kubeproxy.logs_checked"] != "1" {
					t.Errorf("logs_checked = %q, want 1", p.Facts["cluster.kubeproxy.logs_checked"])
				}
				for _, s := range append([]string{"is forbidden", "system:kube-proxy\""}, tc.never...) {
					if strings.Contains(raw, s) {
						t.Errorf("raw output holds %q", s)
					}
				}
			})
		}
	}
}

// rbacDenialScenario is a clean fleet whose node-2 kube-proxy restarted 3
// times with an EndpointSlice list denial in its previous log, and whose
// can-i answers canI for that verb and resource.
type rbacDenialScenario struct {
	name          string
	canI          bool
	want, notWant string
	severity      result.Severity
}

func (c rbacDenialScenario) fixture() string { return fixtureName("rbac-denial", c.name) }

func (c rbacDenialScenario) fleet() []nodesim.Member {
	line := reflectorDenial("EndpointSlice", "list", "endpointslices", "discovery.k8s.io")
	fleet := nodesim.Clean(3)
	s := &fleet[0].State
	pod := nodesim.KubeProxyPod("node-2")
	var pods strings.Builder
	for _, m := range []string{"node-1", "node-2", "node-3"} {
		restarts, last := "0", ""
		if m == "node-2" {
			restarts, last = "3", "Error"
		}
		pods.WriteString(podsLine(nodesim.KubeProxyPod(m), nodesim.K8sNodeName(m), "Running", "kube-proxy", "", "true", restarts, "", "2026-12-02T09:12:00Z", "", last, "", "/livez", "/livez"))
	}
	kubectlAnswer(s, nodesim.KubectlPods, pods.String(), 0)
	kubectlAnswer(s, nodesim.KubectlPreviousLogs(pod), kubeProxyLog(line), 0)
	*s = nodesim.WithKubeProxyCanI(*s, "list", "endpointslices.discovery.k8s.io", c.canI)
	return fleet
}

var rbacDenialScenarios = []rbacDenialScenario{
	{"can-i yes: red herring", true, "k8s.kubeproxy-rbac-denial-transient", "k8s.kubeproxy-rbac-denied", result.SeverityInfo},
	{"can-i no: real RBAC gap", false, "k8s.kubeproxy-rbac-denied", "k8s.kubeproxy-rbac-denial-transient", result.SeverityCritical},
}

// End to end (on the facts the bundle gave, see TestFactsFixtures): the same `cannot list resource "endpointslices"` line in a
// restarted kube-proxy's previous log is the red herring while can-i says
// yes, and a real RBAC finding, never called transient, when it says no.
// The finding names the verb and resource; the log line itself never
// reaches the report.
func TestRBACEndpointSlicesDenialEndToEnd(t *testing.T) {
	for _, tc := range rbacDenialScenarios {
		t.Run(tc.name, func(t *testing.T) {
			r := judgeFixture(t, tc.fixture(), nil)
			if r.Cluster == nil || r.Cluster.Status != result.ClusterOK {
				t.Fatalf("cluster = %+v", r.Cluster)
			}
			var got *result.Finding
			for i, f := range r.Findings {
				if f.Check == tc.notWant {
					t.Errorf("%s raised: %+v", tc.notWant, f)
				}
				if f.Check == tc.want {
					got = &r.Findings[i]
				}
				for _, text := range append([]string{f.Title, f.Summary}, f.Evidence...) {
					if strings.Contains(text, "endpointslices.discovery.k8s.io is forbidden") || strings.Contains(text, "Unhandled Error") {
						t.Errorf("%s carries the raw log line: %q", f.Check, text)
					}
				}
			}
			if got == nil {
				t.Fatalf("no %s finding in %+v", tc.want, r.Findings)
			}
			if got.Severity != tc.severity || strings.Join(got.Nodes, ",") != "node-2" {
				t.Errorf("%s: severity %s on %v, want %s on node-2", tc.want, got.Severity, got.Nodes, tc.severity)
			}
			if ev := strings.Join(got.Evidence, " "); !strings.Contains(ev, "k8s.kubeproxy.previous_rbac_denials=list:endpointslices.discovery.k8s.io") {
				t.Errorf("evidence %q does not name the verb and resource", ev)
			}
			if n := r.Nodes[1]; n.Facts["k8s.kubeproxy.previous_rbac_denied"] != "yes" {
				t.Errorf("node-2 facts: %v", n.Facts)
			}
		})
	}
}

// Servers are asked in turn for the cluster view until one's node-local API
// answers; a server whose kubectl cannot reach or use its API server is a
// failed attempt, not the view. The Cluster names who answered, who did not
// and why.
func TestClusterViewFromTheServerThatAnswers(t *testing.T) {
	const refused = "The connection to the server 127.0.0.1:6443 was refused - did you specify the right host or port?\n"
	refuse := func(s *nodesim.State) { kubectlAnswer(s, nodesim.KubectlReadyz, refused, 1) }
	tests := []struct {
		name      string
		servers   int
		edit      func(fleet []nodesim.Member, fail map[string]error)
		cancelled bool
		status    result.ClusterStatus
		node      string
		message   string
		attempts  string // node:outcome:reason, comma-separated
		api       string // cluster.api of the kept facts
		findings  string // clusterFindings' checks and nodes
		apiCheck  bool   // cluster.api-unavailable fails on the kept facts
	}{
		{
			name: "first server answers: one attempt, nothing to say", servers: 3,
			status: result.ClusterOK, node: "etcd-1", attempts: "etcd-1:ok:", api: "ok",
		},
		{
			name: "first server API unreachable, second answers", servers: 3,
			edit:   func(f []nodesim.Member, _ map[string]error) { refuse(&f[0].State) },
			status: result.ClusterOK, node: "etcd-2",
			message:  "cluster view from etcd-2; etcd-1: API unreachable (connection refused)",
			attempts: "etcd-1:failed:API unreachable (connection refused),etcd-2:ok:", api: "ok",
			findings: "cluster.server-api-unavailable[etcd-1]",
		},
		{
			name: "no kubeconfig on the first, API timing out on the second, the third answers", servers: 3,
			edit: func(f []nodesim.Member, _ map[string]error) {
				files := map[string]string{}
				for k, v := range f[0].State.Files {
					if k != nodesim.KubeconfigPath {
						files[k] = v
					}
				}
				f[0].State.Files = files
				kubectlAnswer(&f[1].State, nodesim.KubectlReadyz, "Unable to connect to the server: dial tcp 127.0.0.1:6443: i/o timeout\n", 1)
			},
			status: result.ClusterOK, node: "etcd-3",
			message:  "cluster view from etcd-3; etcd-1: no kubeconfig (/etc/rancher/rke2/rke2.yaml); etcd-2: API unreachable (timed out)",
			attempts: "etcd-1:failed:no kubeconfig (/etc/rancher/rke2/rke2.yaml),etcd-2:failed:API unreachable (timed out),etcd-3:ok:", api: "ok",
			findings: "cluster.server-api-unavailable[etcd-1 etcd-2]",
		},
		{
			name: "readyz failing is still a view", servers: 3,
			edit: func(f []nodesim.Member, _ map[string]error) {
				f[0].State = nodesim.WithAPIServerChecksFailing(f[0].State, "etcd")
			},
			status: result.ClusterOK, node: "etcd-1", attempts: "etcd-1:ok:", api: "ok",
		},
		{
			name: "every server fails: every attempt reported", servers: 3,
			edit: func(f []nodesim.Member, fail map[string]error) {
				refuse(&f[0].State)
				// An HTTP 500 on every call: neither unreachable nor denied.
				const internal = `Error from server (InternalError): an error on the server ("") has prevented the request from succeeding` + "\n"
				kubectlAnswer(&f[1].State, nodesim.KubectlReadyz, internal, 1)
				kubectlAnswer(&f[1].State, nodesim.KubectlNodes, internal, 1)
				kubectlAnswer(&f[1].State, nodesim.KubectlPods, internal, 1)
				fail["etcd-3"] = errors.New("dial tcp 10.0.0.13:22: connect: no route to host")
			},
			status: result.ClusterFailed, node: "etcd-1",
			message:  "no server answered: etcd-1: API unreachable (connection refused); etcd-2: every kubectl call failed; etcd-3: dial tcp 10.0.0.13:22: connect: no route to host",
			attempts: "etcd-1:failed:API unreachable (connection refused),etcd-2:failed:every kubectl call failed,etcd-3:failed:dial tcp 10.0.0.13:22: connect: no route to host",
			api:      "unreachable", findings: "cluster.unavailable[]", apiCheck: true,
		},
		{
			name: "more servers than attempts", servers: 4,
			edit: func(f []nodesim.Member, _ map[string]error) {
				for i := 0; i < 4; i++ {
					refuse(&f[i].State)
				}
			},
			status: result.ClusterFailed, node: "etcd-1",
			message:  "no server answered: etcd-1: API unreachable (connection refused); etcd-2: API unreachable (connection refused); etcd-3: API unreachable (connection refused) (1 more not asked: at most 3 servers are)",
			attempts: "etcd-1:failed:API unreachable (connection refused),etcd-2:failed:API unreachable (connection refused),etcd-3:failed:API unreachable (connection refused)",
			api:      "unreachable", findings: "cluster.unavailable[]", apiCheck: true,
		},
		{
			name: "run cancelled before any server was asked", servers: 3, cancelled: true,
			status: result.ClusterFailed, message: "the run ended before any server was asked for the cluster view",
			findings: "cluster.unavailable[]",
		},
	}
	probes, err := probe.BuiltinProbes()
	if err != nil {
		t.Fatal(err)
	}
	_, clusterProbes := probe.SplitScope(probes)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var fleet []nodesim.Member
			for i := 1; i <= tc.servers; i++ {
				name := fmt.Sprintf("etcd-%d", i)
				fleet = append(fleet, nodesim.Member{Name: name, Roles: []string{"etcd"}, State: nodesim.Healthy(name, true)})
			}
			fleet = append(fleet, nodesim.Member{Name: "worker-1", Roles: []string{"worker"}, State: nodesim.Healthy("worker-1", false)})
			fleet = nodesim.WithCluster(fleet)
			fail := map[string]error{}
			if tc.edit != nil {
				tc.edit(fleet, fail)
			}
			inv, tr := simulate(t, fleet)
			tr.fail = fail
			var nodes []result.Node
			for _, m := range fleet {
				active := "inactive"
				if m.Name != "worker-1" {
					active = "active"
				}
				nodes = append(nodes, result.Node{Name: m.Name, Roles: m.Roles, Status: result.StatusOK, Facts: map[string]string{"rke2.server.active": active, "os.hostname": m.Name}})
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.cancelled {
				cancel()
			}
			c := runCluster(ctx, RunOptions{Fleet: inv, Transport: tr, NodeTimeout: time.Minute}, clusterProbes, nodes)
			if c.Status != tc.status || c.Node != tc.node || c.Message != tc.message {
				t.Errorf("status, node, message = %q, %q, %q\nwant %q, %q, %q", c.Status, c.Node, c.Message, tc.status, tc.node, tc.message)
			}
			var attempts []string
			for _, a := range c.Attempts {
				attempts = append(attempts, a.Node+":"+string(a.Outcome)+":"+a.Reason)
			}
			if got := strings.Join(attempts, ","); got != tc.attempts {
				t.Errorf("attempts = %q\nwant %q", got, tc.attempts)
			}
			if got := c.Facts["cluster.api"]; got != tc.api {
				t.Errorf("cluster.api = %q, want %q", got, tc.api)
			}
			var findings []string
			for _, f := range clusterFindings(c, false) {
				if f.Check == "cluster.nodes-not-in-inventory" {
					continue
				}
				findings = append(findings, f.Check+"["+strings.Join(f.Nodes, " ")+"]")
				if ev := strings.Join(append([]string{f.Summary}, f.Evidence...), " "); f.Check == "cluster.server-api-unavailable" && !strings.Contains(ev, "etcd-1: ") {
					t.Errorf("%s does not say why: %q", f.Check, ev)
				}
				if f.Check == "cluster.unavailable" && !strings.Contains(f.Summary, tc.message) {
					t.Errorf("%s summary %q lacks the attempts", f.Check, f.Summary)
				}
			}
			if got := strings.Join(findings, " "); got != tc.findings {
				t.Errorf("findings = %q, want %q", got, tc.findings)
			}
			if tc.status == result.ClusterOK {
				for _, n := range nodes {
					if n.Facts["k8s.node.registered"] != "yes" {
						t.Errorf("%s: node facts not joined from %s: %v", n.Name, c.Node, n.Facts)
					}
				}
			}
			failing := false
			for _, r := range check.Judge(nodes, c, clusterChecks(t), nil) {
				failing = failing || r.Check == "cluster.api-unavailable" && r.Outcome == result.OutcomeFail
			}
			if failing != tc.apiCheck {
				t.Errorf("cluster.api-unavailable failing = %v, want %v", failing, tc.apiCheck)
			}
		})
	}
}

// TestClusterListFailedIsUnjudged: a kubectl list that failed while the
// nodes were read leaves every node's facts from it "unknown". The checks
// on them used to skip (the facts were not collected), so a crash-looping
// kube-proxy or CNI agent passed the gate unseen; they could not judge
// the node now, quoting the cluster count as evidence.
func TestClusterListFailedIsUnjudged(t *testing.T) {
	checks := append(clusterChecks(t), builtinChecksByID(t)["kubeproxy.missing-on-node"])
	unknownPods := map[string]string{"k8s.kubeproxy.pod.name": "unknown", "k8s.kubeproxy.pod.phase": "unknown",
		"k8s.kubeproxy.pod.ready": "unknown", "k8s.kubeproxy.pod.reason": "unknown", "k8s.kubeproxy.pod.restarts": "unknown"}
	unknownAgents := map[string]string{"k8s.cni.agent": "unknown", "k8s.cni.agent.health": "unknown", "k8s.cni.multus.health": "unknown", "k8s.cni.agent.problem": "unknown"}
	tests := []struct {
		name     string
		node     map[string]string
		cluster  map[string]string
		unjudged []string
		evidence string
	}{
		{name: "pod list failed", node: unknownPods, cluster: map[string]string{"cluster.kubeproxy.pods": "error"},
			unjudged: []string{"k8s.kubeproxy-crashloop", "k8s.kubeproxy-pod-missing", "k8s.kubeproxy-restarts"}, evidence: "cluster.kubeproxy.pods=error"},
		{name: "agent list failed", node: unknownAgents, cluster: map[string]string{"cluster.cni.agents": "error"},
			unjudged: []string{"k8s.cni-agent-missing", "k8s.cni-agent-unhealthy", "k8s.cni-multus-unhealthy"}, evidence: "cluster.cni.agents=error"},
		// kube-proxy configured nowhere here, and the cluster's pods not
		// listed: whether it runs elsewhere is not known.
		{name: "pod list failed, node without kube-proxy",
			node: map[string]string{"kubeproxy.healthz.code": "connect-failed", "rke2.service": "rke2-agent", "kubeproxy.mode.configured": "absent",
				"cni.kube_proxy_replaced": "no"},
			cluster:  map[string]string{"cluster.kubeproxy.pods": "error"},
			unjudged: []string{"kubeproxy.missing-on-node"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var nodes []result.Node
			for _, name := range []string{"bad", "ok-1", "ok-2"} {
				f := healthyK8s()
				if name == "bad" {
					maps.Copy(f, tc.node)
				}
				nodes = append(nodes, result.Node{Name: name, Status: result.StatusOK, Facts: f})
			}
			cf := healthyClusterFacts()
			maps.Copy(cf, tc.cluster)
			got := map[string]string{}
			for _, r := range check.Judge(nodes, &result.Cluster{Status: result.ClusterOK, Facts: cf}, checks, nil) {
				if r.Node == "bad" && r.Outcome == result.OutcomeUnjudged {
					got[r.Check] = r.Detail
				}
				if r.Node != "bad" && r.Outcome == result.OutcomeUnjudged && !slices.Contains(tc.unjudged, r.Check) {
					t.Errorf("%s unjudged on %s: %s", r.Check, r.Node, r.Detail)
				}
			}
			if ids := slices.Sorted(maps.Keys(got)); !slices.Equal(ids, tc.unjudged) {
				t.Errorf("unjudged on bad: %v, want %v", ids, tc.unjudged)
			}
			for id, d := range got {
				if !strings.Contains(d, tc.evidence) {
					t.Errorf("%s: %q, want %q in it", id, d, tc.evidence)
				}
			}
		})
	}
}
