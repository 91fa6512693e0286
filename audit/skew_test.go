package audit

import (
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

func versionNode(name, svc, version string) Node {
	return Node{Name: name, Status: StatusOK, Facts: map[string]string{"rke2.service": svc, "rke2.version": version}}
}

func TestVersionSkew(t *testing.T) {
	const s, a = "rke2-server", "rke2-agent"
	tests := []struct {
		name   string
		nodes  []Node
		target string
		// want maps finding id → its nodes.
		want map[string][]string
	}{
		{"uniform fleet", []Node{versionNode("s1", s, "v1.31.4+rke2r1"), versionNode("w1", a, "v1.31.4+rke2r1")}, "", map[string][]string{}},
		{"one agent a patch behind is drift, within policy",
			[]Node{versionNode("s1", s, "v1.31.4+rke2r1"), versionNode("w1", a, "v1.31.4+rke2r1"), versionNode("w2", a, "v1.31.2+rke2r1")}, "",
			map[string][]string{"skew.mixed-versions": {"w2"}}},
		{"servers two minors apart",
			[]Node{versionNode("s1", s, "v1.29.1+rke2r1"), versionNode("s2", s, "v1.31.4+rke2r1"), versionNode("s3", s, "v1.31.4+rke2r1")}, "",
			map[string][]string{"skew.servers": {"s1", "s2", "s3"}, "skew.mixed-versions": {"s1"}}},
		{"agent newer than the oldest server",
			[]Node{versionNode("s1", s, "v1.30.5+rke2r1"), versionNode("w1", a, "v1.31.4+rke2r1"), versionNode("w2", a, "v1.30.5+rke2r1")}, "",
			map[string][]string{"skew.kubelet-newer": {"w1"}, "skew.mixed-versions": {"w1"}}},
		// kube-apiserver instances 1.27 and 1.28 with every kubelet at 1.28:
		// the kubelets are newer than the 1.27 API server, and the outlier
		// is that server, not the nine agents that match the other two.
		{"one server lagging behind the other servers and every agent",
			append([]Node{versionNode("s1", s, "v1.27.16+rke2r1"), versionNode("s2", s, "v1.28.15+rke2r1"), versionNode("s3", s, "v1.28.15+rke2r1")}, agentsAt(9, "v1.28.15+rke2r1")...), "",
			map[string][]string{"skew.kubelet-newer": {"s1"}, "skew.mixed-versions": {"s1"}}},
		{"agents newer than every server",
			append([]Node{versionNode("s1", s, "v1.27.16+rke2r1"), versionNode("s2", s, "v1.27.16+rke2r1")}, agentsAt(3, "v1.28.15+rke2r1")...), "",
			map[string][]string{"skew.kubelet-newer": {"w1", "w2", "w3"}, "skew.mixed-versions": {"s1", "s2"}}},
		{"agents at the lagging server's minor: mid-upgrade, within policy",
			append([]Node{versionNode("s1", s, "v1.27.16+rke2r1"), versionNode("s2", s, "v1.28.15+rke2r1"), versionNode("s3", s, "v1.28.15+rke2r1")}, agentsAt(3, "v1.27.16+rke2r1")...), "",
			map[string][]string{"skew.mixed-versions": {"s2", "s3"}}},
		{"agent four minors behind",
			[]Node{versionNode("s1", s, "v1.31.4+rke2r1"), versionNode("s2", s, "v1.31.4+rke2r1"), versionNode("w1", a, "v1.27.9+rke2r1")}, "",
			map[string][]string{"skew.kubelet-too-old": {"w1"}, "skew.mixed-versions": {"w1"}}},
		{"target one minor up: only the order",
			[]Node{versionNode("s1", s, "v1.31.4+rke2r1"), versionNode("w1", a, "v1.31.4+rke2r1")}, "v1.32.1+rke2r1",
			map[string][]string{"skew.upgrade-order": {"s1", "w1"}}},
		{"target skips a minor for the node left behind",
			[]Node{versionNode("s1", s, "v1.31.4+rke2r1"), versionNode("w1", a, "v1.31.4+rke2r1"), versionNode("w2", a, "v1.30.2+rke2r1")}, "v1.32.1+rke2r1",
			map[string][]string{"skew.mixed-versions": {"w2"}, "skew.target-skips-minor": {"w2"}, "skew.upgrade-order": {"s1", "w1", "w2"}}},
		{"target older than the fleet",
			[]Node{versionNode("s1", s, "v1.31.4+rke2r1")}, "v1.30.9+rke2r1",
			map[string][]string{"skew.target-downgrade": {"s1"}}},
		{"unaudited and versionless nodes are ignored",
			[]Node{versionNode("s1", s, "v1.31.4+rke2r1"), {Name: "down", Status: StatusUnreachable}, versionNode("w1", a, "absent")}, "",
			map[string][]string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := map[string][]string{}
			for _, f := range VersionSkew(tt.nodes, tt.target) {
				if !slices.Contains(nonCheckFindingIDs, f.Check) {
					t.Errorf("%s is not in nonCheckFindingIDs: a waiver naming it would be rejected", f.Check)
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
func agentsAt(n int, v string) []Node {
	var out []Node
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
		nodes []Node
		// nodes the finding names, and words its text must carry.
		want     []string
		evidence []string
		mustSay  []string
		critical []string // every node a critical skew finding may name
	}{
		{"one server lagging: the server is the outlier, upgraded first",
			append([]Node{versionNode("s1", s, "v1.27.16+rke2r1"), versionNode("s2", s, "v1.28.15+rke2r1"), versionNode("s3", s, "v1.28.15+rke2r1")}, agentsAt(9, "v1.28.15+rke2r1")...),
			[]string{"s1"},
			[]string{"s1: server at v1.27.16+rke2r1, behind the other servers (v1.28.15+rke2r1) and 9 agents up to 1.28"},
			[]string{"Upgrade s1", "v1.28.15+rke2r1", "one server at a time", "agents are not at fault", "version-skew-policy"},
			[]string{"s1"}},
		{"agents ahead of every server: the agents are at fault",
			append([]Node{versionNode("s1", s, "v1.27.16+rke2r1"), versionNode("s2", s, "v1.27.16+rke2r1")}, agentsAt(2, "v1.28.15+rke2r1")...),
			[]string{"w1", "w2"},
			[]string{"w1: agent at v1.28.15+rke2r1, newest server at 1.27", "w2: agent at v1.28.15+rke2r1, newest server at 1.27"},
			[]string{"newer than every API server", "Upgrade the servers", "one server at a time", "version-skew-policy"},
			[]string{"w1", "w2"}},
		{"both: a lagging server and an agent ahead of every server",
			append([]Node{versionNode("s1", s, "v1.27.16+rke2r1"), versionNode("s2", s, "v1.28.15+rke2r1"), versionNode("s3", s, "v1.28.15+rke2r1"), versionNode("w3", "rke2-agent", "v1.29.10+rke2r1")}, agentsAt(2, "v1.28.15+rke2r1")...),
			[]string{"s1", "w3"},
			[]string{"s1: server at v1.27.16+rke2r1, behind the other servers (v1.28.15+rke2r1) and 2 agents up to 1.28", "w3: agent at v1.29.10+rke2r1, newest server at 1.28"},
			[]string{"Upgrade s1", "newer than every API server"},
			[]string{"s1", "w3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got *Finding
			fs := VersionSkew(tt.nodes, "")
			for i, f := range fs {
				if f.Check == "skew.kubelet-newer" {
					got = &fs[i]
				}
				if f.Severity == SeverityCritical {
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
			if got.Severity != SeverityCritical || !reflect.DeepEqual(got.Nodes, tt.want) {
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

func TestUpgradeOrderPutsServersFirst(t *testing.T) {
	nodes := []Node{versionNode("w1", "rke2-agent", "v1.31.4+rke2r1"), versionNode("s1", "rke2-server", "v1.31.4+rke2r1"), versionNode("s2", "rke2-server", "v1.31.4+rke2r1")}
	for _, f := range VersionSkew(nodes, "v1.32.0+rke2r1") {
		if f.Check != "skew.upgrade-order" {
			continue
		}
		want := []RolloutStep{{Class: "server", Nodes: []string{"s1", "s2"}, OneAtATime: true}, {Class: "agent", Nodes: []string{"w1"}}}
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
