package audit

import (
	"reflect"
	"sort"
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
