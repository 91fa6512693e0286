package audit

import (
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/fleet-audit/fleet-audit/audit/catalog"
	"github.com/fleet-audit/fleet-audit/result"
)

func versionNode(name, svc, version string) result.Node {
	return result.Node{Name: name, Status: result.StatusOK, Facts: map[string]string{"rke2.service": svc, "rke2.version": version}}
}

func TestVersionSkew(t *testing.T) {
	const s, a = "rke2-server", "rke2-agent"
	tests := []struct {
		name   string
		nodes  []result.Node
		target string
		// want maps finding id → its nodes.
		want map[string][]string
	}{
		{"uniform fleet", []result.Node{versionNode("s1", s, "v1.31.4+rke2r1"), versionNode("w1", a, "v1.31.4+rke2r1")}, "", map[string][]string{}},
		{"one agent a patch behind is drift, within policy",
			[]result.Node{versionNode("s1", s, "v1.31.4+rke2r1"), versionNode("w1", a, "v1.31.4+rke2r1"), versionNode("w2", a, "v1.31.2+rke2r1")}, "",
			map[string][]string{"skew.mixed-versions": {"w2"}}},
		{"servers two minors apart",
			[]result.Node{versionNode("s1", s, "v1.29.1+rke2r1"), versionNode("s2", s, "v1.31.4+rke2r1"), versionNode("s3", s, "v1.31.4+rke2r1")}, "",
			map[string][]string{"skew.servers": {"s1", "s2", "s3"}, "skew.mixed-versions": {"s1"}}},
		{"agent newer than the oldest server",
			[]result.Node{versionNode("s1", s, "v1.30.5+rke2r1"), versionNode("w1", a, "v1.31.4+rke2r1"), versionNode("w2", a, "v1.30.5+rke2r1")}, "",
			map[string][]string{"skew.kubelet-newer": {"w1"}, "skew.mixed-versions": {"w1"}}},
		// kube-apiserver instances 1.27 and 1.28 with every kubelet at 1.28:
		// the kubelets are newer than the 1.27 API server, and the outlier
		// is that server, not the nine agents that match the other two.
		{"one server lagging behind the other servers and every agent",
			append([]result.Node{versionNode("s1", s, "v1.27.16+rke2r1"), versionNode("s2", s, "v1.28.15+rke2r1"), versionNode("s3", s, "v1.28.15+rke2r1")}, agentsAt(9, "v1.28.15+rke2r1")...), "",
			map[string][]string{"skew.kubelet-newer": {"s1"}, "skew.mixed-versions": {"s1"}}},
		{"agents newer than every server",
			append([]result.Node{versionNode("s1", s, "v1.27.16+rke2r1"), versionNode("s2", s, "v1.27.16+rke2r1")}, agentsAt(3, "v1.28.15+rke2r1")...), "",
			map[string][]string{"skew.kubelet-newer": {"w1", "w2", "w3"}, "skew.mixed-versions": {"s1", "s2"}}},
		{"agents at the lagging server's minor: mid-upgrade, within policy",
			append([]result.Node{versionNode("s1", s, "v1.27.16+rke2r1"), versionNode("s2", s, "v1.28.15+rke2r1"), versionNode("s3", s, "v1.28.15+rke2r1")}, agentsAt(3, "v1.27.16+rke2r1")...), "",
			map[string][]string{"skew.mixed-versions": {"s2", "s3"}}},
		{"agent four minors behind",
			[]result.Node{versionNode("s1", s, "v1.31.4+rke2r1"), versionNode("s2", s, "v1.31.4+rke2r1"), versionNode("w1", a, "v1.27.9+rke2r1")}, "",
			map[string][]string{"skew.kubelet-too-old": {"w1"}, "skew.mixed-versions": {"w1"}}},
		// kube-apiserver at 1.31 and 1.30: a kubelet may be three minors
		// older than each, so 1.28 is the oldest allowed and 1.27 is not,
		// although it is only three behind the older server.
		{"agent four minors behind the newest of split servers",
			[]result.Node{versionNode("s1", s, "v1.30.8+rke2r1"), versionNode("s2", s, "v1.31.4+rke2r1"), versionNode("s3", s, "v1.31.4+rke2r1"),
				versionNode("w1", a, "v1.27.9+rke2r1"), versionNode("w2", a, "v1.28.15+rke2r1"), versionNode("w3", a, "v1.31.4+rke2r1")}, "",
			map[string][]string{"skew.kubelet-too-old": {"w1"}, "skew.kubelet-newer": {"s1"}, "skew.mixed-versions": {"s1", "w1", "w2"}}},
		{"target one minor up: only the order",
			[]result.Node{versionNode("s1", s, "v1.31.4+rke2r1"), versionNode("w1", a, "v1.31.4+rke2r1")}, "v1.32.1+rke2r1",
			map[string][]string{"skew.upgrade-order": {"s1", "w1"}}},
		{"target skips a minor for the node left behind",
			[]result.Node{versionNode("s1", s, "v1.31.4+rke2r1"), versionNode("w1", a, "v1.31.4+rke2r1"), versionNode("w2", a, "v1.30.2+rke2r1")}, "v1.32.1+rke2r1",
			map[string][]string{"skew.mixed-versions": {"w2"}, "skew.target-skips-minor": {"w2"}, "skew.upgrade-order": {"s1", "w1", "w2"}}},
		{"target older than the fleet",
			[]result.Node{versionNode("s1", s, "v1.31.4+rke2r1")}, "v1.30.9+rke2r1",
			map[string][]string{"skew.target-downgrade": {"s1"}}},
		{"unaudited and versionless nodes are ignored",
			[]result.Node{versionNode("s1", s, "v1.31.4+rke2r1"), {Name: "down", Status: result.StatusUnreachable}, versionNode("w1", a, "absent")}, "",
			map[string][]string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := map[string][]string{}
			for _, f := range VersionSkew(tt.nodes, tt.target) {
				if !slices.Contains(catalog.GoSelectableIDs(), f.Check) {
					t.Errorf("%s is not among the catalog.GoFindings: a waiver or --skip naming it would be rejected", f.Check)
				}
				nodes := append([]string{}, f.Nodes...)
				sort.Strings(nodes)
				got[f.Check] = nodes
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("findings = %v, want %v", got, tt.want)
			}
		})
	}
}

// agentsAt returns n agents w1..wn at RKE2 release v.
func agentsAt(n int, v string) []result.Node {
	var out []result.Node
	for i := 1; i <= n; i++ {
		out = append(out, versionNode("w"+strconv.Itoa(i), "rke2-agent", v))
	}
	return out
}

// TestKubeletNewerBlamesTheOutlier pins who skew.kubelet-newer names and
// what it tells the operator to do. Kubernetes' version skew policy
// (kubernetes.io/releases/version-skew-policy): "kubelet must not be newer
// than kube-apiserver", and HA kube-apiserver instances may differ by one
// minor, which narrows the kubelets allowed to those not newer than the
// oldest instance.
func TestKubeletNewerBlamesTheOutlier(t *testing.T) {
	const s = "rke2-server"
	tests := []struct {
		name  string
		nodes []result.Node
		// nodes the finding names, and words its text must carry.
		want     []string
		evidence []string
		mustSay  []string
		critical []string // every node a critical skew finding may name
	}{
		{"one server lagging: the server is the outlier, upgraded first",
			append([]result.Node{versionNode("s1", s, "v1.27.16+rke2r1"), versionNode("s2", s, "v1.28.15+rke2r1"), versionNode("s3", s, "v1.28.15+rke2r1")}, agentsAt(9, "v1.28.15+rke2r1")...),
			[]string{"s1"},
			[]string{"s1: server at v1.27.16+rke2r1, behind the other servers (v1.28.15+rke2r1) and 9 agents up to 1.28"},
			[]string{"Upgrade s1", "v1.28.15+rke2r1", "one server at a time", "agents are not at fault", "version-skew-policy"},
			[]string{"s1"}},
		{"agents ahead of every server: the agents are at fault",
			append([]result.Node{versionNode("s1", s, "v1.27.16+rke2r1"), versionNode("s2", s, "v1.27.16+rke2r1")}, agentsAt(2, "v1.28.15+rke2r1")...),
			[]string{"w1", "w2"},
			[]string{"w1: agent at v1.28.15+rke2r1, newest server at 1.27", "w2: agent at v1.28.15+rke2r1, newest server at 1.27"},
			[]string{"newer than every API server", "Upgrade the servers", "one server at a time", "version-skew-policy"},
			[]string{"w1", "w2"}},
		{"both: a lagging server and an agent ahead of every server",
			append([]result.Node{versionNode("s1", s, "v1.27.16+rke2r1"), versionNode("s2", s, "v1.28.15+rke2r1"), versionNode("s3", s, "v1.28.15+rke2r1"), versionNode("w3", "rke2-agent", "v1.29.10+rke2r1")}, agentsAt(2, "v1.28.15+rke2r1")...),
			[]string{"s1", "w3"},
			[]string{"s1: server at v1.27.16+rke2r1, behind the other servers (v1.28.15+rke2r1) and 2 agents up to 1.28", "w3: agent at v1.29.10+rke2r1, newest server at 1.28"},
			[]string{"Upgrade s1", "newer than every API server"},
			[]string{"s1", "w3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got *result.Finding
			fs := VersionSkew(tt.nodes, "")
			for i, f := range fs {
				if f.Check == "skew.kubelet-newer" {
					got = &fs[i]
				}
				if f.Severity == result.SeverityCritical {
					for _, n := range f.Nodes {
						if !slices.Contains(tt.critical, n) {
							t.Errorf("critical %s names %s", f.Check, n)
						}
					}
				}
			}
			if got == nil {
				t.Fatalf("no skew.kubelet-newer in %+v", fs)
			}
			if got.Severity != result.SeverityCritical || !reflect.DeepEqual(got.Nodes, tt.want) {
				t.Errorf("%s on %v, want critical on %v", got.Severity, got.Nodes, tt.want)
			}
			if !reflect.DeepEqual(got.Evidence, tt.evidence) {
				t.Errorf("evidence = %q\nwant        %q", got.Evidence, tt.evidence)
			}
			text := got.Summary + " " + got.Remediation
			for _, w := range tt.mustSay {
				if !strings.Contains(text, w) {
					t.Errorf("summary and remediation do not say %q: %s", w, text)
				}
			}
		})
	}
}

func bundledNode(name, version, containerd, kubelet string) result.Node {
	n := versionNode(name, "rke2-agent", version)
	n.Facts["rke2.containerd.version"] = containerd
	n.Facts["rke2.kubelet.version"] = kubelet
	return n
}

// TestBundledComponentSkew: RKE2 ships containerd and the kubelet in its
// release (rancher/rke2 pkg/bootstrap/bootstrap.go Stage extracts them to
// data/<release>/bin and links bin to it), so nodes on one RKE2 release run
// the same builds and a node that does not is named with both values.
func TestBundledComponentSkew(t *testing.T) {
	const r31, r30 = "v1.31.4+rke2r1", "v1.30.8+rke2r1"
	const ctr, kub = "v1.7.23-k3s2", "v1.31.4+rke2r1"
	fleet := func(odd ...result.Node) []result.Node {
		nodes := []result.Node{bundledNode("server-1", r31, ctr, kub)}
		for i := 1; i <= 4; i++ {
			nodes = append(nodes, bundledNode("worker-"+strconv.Itoa(i), r31, ctr, kub))
		}
		for _, o := range odd {
			for i := range nodes {
				if nodes[i].Name == o.Name {
					nodes[i] = o
				}
			}
		}
		return nodes
	}
	tests := []struct {
		name     string
		nodes    []result.Node
		want     []string // nodes named; nil: no finding
		evidence []string
	}{
		{"uniform fleet", fleet(), nil, nil},
		{"one worker's containerd differs on the same release",
			fleet(bundledNode("worker-3", r31, "v1.7.20-k3s1", kub)),
			[]string{"worker-3"},
			[]string{"worker-3: containerd v1.7.20-k3s1, peers on v1.31.4+rke2r1 run v1.7.23-k3s2"}},
		{"one worker's kubelet differs on the same release",
			fleet(bundledNode("worker-1", r31, ctr, "v1.30.8+rke2r1")),
			[]string{"worker-1"},
			[]string{"worker-1: kubelet v1.30.8+rke2r1, peers on v1.31.4+rke2r1 run v1.31.4+rke2r1"}},
		{"both components on one node, one on another",
			fleet(bundledNode("worker-2", r31, "v1.7.11-k3s2", "v1.28.15+rke2r1"), bundledNode("server-1", r31, "v1.7.21-k3s2", kub)),
			[]string{"server-1", "worker-2"},
			[]string{"server-1: containerd v1.7.21-k3s2, peers on v1.31.4+rke2r1 run v1.7.23-k3s2",
				"worker-2: containerd v1.7.11-k3s2, peers on v1.31.4+rke2r1 run v1.7.23-k3s2",
				"worker-2: kubelet v1.28.15+rke2r1, peers on v1.31.4+rke2r1 run v1.31.4+rke2r1"}},
		{"another RKE2 release ships another containerd: not a skew",
			fleet(bundledNode("worker-4", r30, "v1.7.21-k3s2", "v1.30.8+rke2r1")), nil, nil},
		{"peers are compared within each release",
			append(fleet(bundledNode("worker-4", r30, "v1.7.21-k3s2", "v1.30.8+rke2r1")),
				bundledNode("worker-5", r30, "v1.7.21-k3s2", "v1.30.8+rke2r1"), bundledNode("worker-6", r30, "v1.7.17-k3s1", "v1.30.8+rke2r1")),
			[]string{"worker-6"},
			[]string{"worker-6: containerd v1.7.17-k3s1, peers on v1.30.8+rke2r1 run v1.7.21-k3s2"}},
		{"absent and unknown values are not a skew",
			fleet(bundledNode("worker-1", r31, "absent", "unknown"), bundledNode("worker-2", r31, "unknown", "absent")), nil, nil},
		{"no majority on a release names every node of it",
			[]result.Node{bundledNode("a", r31, "v1.7.20-k3s1", kub), bundledNode("b", r31, ctr, kub)},
			[]string{"a", "b"},
			[]string{"a: containerd v1.7.20-k3s1; the 2 nodes on v1.31.4+rke2r1 have no majority (v1.7.20-k3s1 on 1, v1.7.23-k3s2 on 1)",
				"b: containerd v1.7.23-k3s2; the 2 nodes on v1.31.4+rke2r1 have no majority (v1.7.20-k3s1 on 1, v1.7.23-k3s2 on 1)"}},
		{"unaudited nodes are left out",
			append(fleet(), result.Node{Name: "down", Status: result.StatusUnreachable, Facts: map[string]string{"rke2.version": r31, "rke2.containerd.version": "v1.6.0"}}), nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got *result.Finding
			fs := VersionSkew(tt.nodes, "")
			for i := range fs {
				if !slices.Contains(catalog.GoSelectableIDs(), fs[i].Check) {
					t.Errorf("%s is not among the catalog.GoFindings: a waiver or --skip naming it would be rejected", fs[i].Check)
				}
				if fs[i].Check == "skew.bundled-component" {
					got = &fs[i]
				}
			}
			if tt.want == nil {
				if got != nil {
					t.Fatalf("unexpected finding on %v: %q", got.Nodes, got.Evidence)
				}
				return
			}
			if got == nil {
				t.Fatalf("no skew.bundled-component in %+v", fs)
			}
			if got.Severity != result.SeverityWarning || !reflect.DeepEqual(got.Nodes, tt.want) {
				t.Errorf("%s on %v, want warning on %v", got.Severity, got.Nodes, tt.want)
			}
			if !reflect.DeepEqual(got.Evidence, tt.evidence) {
				t.Errorf("evidence = %q\nwant        %q", got.Evidence, tt.evidence)
			}
			for _, w := range []string{"/var/lib/rancher/rke2/bin", "readlink", "INSTALL_RKE2_VERSION", "one node at a time"} {
				if !strings.Contains(got.Remediation, w) {
					t.Errorf("remediation does not say %q: %s", w, got.Remediation)
				}
			}
		})
	}
}

func TestUpgradeOrderPutsServersFirst(t *testing.T) {
	nodes := []result.Node{versionNode("w1", "rke2-agent", "v1.31.4+rke2r1"), versionNode("s1", "rke2-server", "v1.31.4+rke2r1"), versionNode("s2", "rke2-server", "v1.31.4+rke2r1")}
	for _, f := range VersionSkew(nodes, "v1.32.0+rke2r1") {
		if f.Check != "skew.upgrade-order" {
			continue
		}
		want := []result.RolloutStep{{Class: "server", Nodes: []string{"s1", "s2"}, OneAtATime: true}, {Class: "agent", Nodes: []string{"w1"}}}
		if !reflect.DeepEqual(f.Rollout, want) {
			t.Fatalf("rollout = %+v, want %+v", f.Rollout, want)
		}
		return
	}
	t.Fatal("no skew.upgrade-order finding")
}

func TestTargetVersionForm(t *testing.T) {
	for v, ok := range map[string]bool{"v1.31.4+rke2r1": true, "v1.32.0+rke2r12": true, "1.31.4+rke2r1": false, "v1.31.4": false, "v1.31+rke2r1": false, "v1.31.4+rke2r1;id": false} {
		if TargetVersionRe.MatchString(v) != ok {
			t.Errorf("TargetVersionRe(%q) = %v, want %v", v, !ok, ok)
		}
	}
}
