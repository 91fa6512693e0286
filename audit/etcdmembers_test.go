package audit

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/fleet-audit/fleet-audit/audit/catalog"
	"github.com/fleet-audit/fleet-audit/internal/nodesim"
	"github.com/fleet-audit/fleet-audit/internal/testtools"
	"github.com/fleet-audit/fleet-audit/result"
)

// etcdFleet is three etcd servers, a control-plane-only server and an
// agent, with plant applied to the etcd server named planted.
func etcdFleet(planted string, plant func(nodesim.State) nodesim.State) []nodesim.Member {
	var fleet []nodesim.Member
	for i := 1; i <= 3; i++ {
		name := fmt.Sprintf("etcd-%d", i)
		s := nodesim.Healthy(name, true)
		if name == planted {
			s = plant(s)
		}
		fleet = append(fleet, nodesim.Member{Name: name, Roles: []string{"etcd"}, State: s})
	}
	return nodesim.WithCluster(append(fleet,
		nodesim.Member{Name: "cp-1", Roles: []string{"control-plane"}, State: nodesim.WithoutEtcd(nodesim.Healthy("cp-1", true))},
		nodesim.Member{Name: "worker-1", Roles: []string{"worker"}, State: nodesim.Healthy("worker-1", false)}))
}

// TestEtcdMembersCompared plants membership problems on one etcd server of
// a healthy fleet: each raises exactly its etcd.members* findings, on the
// planted node (or the whole cluster for what no node owns), and the
// healthy fleet raises none.
func TestEtcdMembersCompared(t *testing.T) {
	for _, tc := range []struct {
		name  string
		plant func(nodesim.State) nodesim.State
		// want maps a finding to the nodes it names ("" for none).
		want map[string]string
	}{
		{"healthy", func(s nodesim.State) nodesim.State { return s }, map[string]string{}},
		// The reset server runs a cluster of its own under a new name;
		// the others still list its old member, which nobody is now.
		{"cluster-reset alone", nodesim.WithEtcdClusterReset, map[string]string{
			catalog.EtcdMembersDisagreeID: "etcd-3", catalog.EtcdMemberNotListedID: "etcd-3", catalog.EtcdMembersUnauditedID: "",
		}},
		{"stale member", func(s nodesim.State) nodesim.State {
			return nodesim.WithEtcdStaleMember(s, "cluster-a-etcd-9-0badf00d")
		}, map[string]string{
			catalog.EtcdMembersUnauditedID: "", catalog.EtcdMembersCountID: "",
		}},
		{"learner", func(s nodesim.State) nodesim.State { s.EtcdLearner = true; return s }, map[string]string{catalog.EtcdMembersCountID: ""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inv, tr := simulate(t, etcdFleet("etcd-3", tc.plant))
			r := runSim(t, inv, tr)
			got := map[string]string{}
			for _, f := range r.Findings {
				if f.Severity >= result.SeverityWarning {
					got[f.Check] = strings.Join(f.Nodes, ",")
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("loud findings (check: nodes) = %v, want %v", got, tc.want)
				for _, f := range r.Findings {
					t.Logf("%s: %s %v", f.Check, f.Summary, f.Evidence)
				}
			}
		})
	}
}

// TestEtcdMembersProbe pins what the etcd probe reads of RKE2's /db/info
// and the member's name file, under every shell: the sorted member names
// with learners marked, the member the node is, and nothing off etcd.
func TestEtcdMembersProbe(t *testing.T) {
	fleet := etcdFleet("etcd-3", func(s nodesim.State) nodesim.State { s.EtcdLearner = true; return s })
	name := regexp.MustCompile(`^cluster-a-etcd-[123]-[0-9a-f]{8}$`)
	for _, tc := range []struct {
		node   int
		tweak  func(root string)
		status string
		check  func(t *testing.T, members []string, self string)
	}{
		{0, nil, "ok", func(t *testing.T, members []string, self string) {
			if len(members) != 3 || !slices.IsSorted(members) || !slices.Contains(members, self) {
				t.Errorf("members %v (self %s): want 3 sorted, holding self", members, self)
			}
			for _, m := range members {
				if !name.MatchString(strings.TrimSuffix(m, ":learner")) || strings.HasSuffix(m, ":learner") != strings.HasPrefix(m, "cluster-a-etcd-3-") {
					t.Errorf("member %q: want <node>-<8 hex>, a learner marked on etcd-3 only", m)
				}
			}
		}},
		// RKE2's server CA unreadable: TLS cannot be verified, nothing read.
		{1, func(root string) { removeFile(t, root, "var/lib/rancher/rke2/server/tls/server-ca.crt") }, "connect-failed", func(t *testing.T, members []string, self string) {
			if members != nil || !name.MatchString(self) {
				t.Errorf("members %v, self %q: want unknown, and the name file read", members, self)
			}
		}},
		{3, nil, "absent", func(t *testing.T, members []string, self string) {
			if members != nil || self != "absent" {
				t.Errorf("members %v, self %q on a server without etcd: want absent", members, self)
			}
		}},
	} {
		for _, sh := range probeShells {
			t.Run(fleet[tc.node].Name+"/"+strings.Join(sh, "-"), func(t *testing.T) {
				shell := append([]string{testtools.Find(t, sh[0])}, sh[1:]...)
				p, _ := runProbeOn(t, "etcd", fleet[tc.node].State, tc.tweak, shell)
				if got := p.Facts["etcd.members.status"]; got != tc.status {
					t.Errorf("etcd.members.status = %q, want %q", got, tc.status)
				}
				members, _ := etcdMemberList(p.Facts[EtcdMembersFact])
				tc.check(t, members, p.Facts[EtcdMemberSelfFact])
			})
		}
	}
}

func removeFile(t *testing.T, root, rel string) {
	t.Helper()
	if err := os.Remove(filepath.Join(root, rel)); err != nil {
		t.Fatal(err)
	}
}

// TestEtcdMembersJudgement judges recorded facts: lists that could not be
// read are left out, a tie names every server and holds nothing against
// the fleet, and members are matched against the fleet only when every
// host was audited.
func TestEtcdMembersJudgement(t *testing.T) {
	node := func(name, members, self string) result.Node {
		return result.Node{Name: name, Status: result.StatusOK, Facts: map[string]string{EtcdMembersFact: members, EtcdMemberSelfFact: self}}
	}
	three := "a-1,b-1,c-1"
	for _, tc := range []struct {
		name  string
		nodes []result.Node
		limit *result.Limit
		shard *result.Shard
		want  map[string]string
	}{
		{"agree", []result.Node{node("a", three, "a-1"), node("b", three, "b-1"), node("c", three, "c-1")}, nil, nil, map[string]string{}},
		{"unread lists are left out", []result.Node{node("a", three, "a-1"), node("b", "unknown", "b-1"), node("c", three, "c-1"), node("w", "absent", "absent")}, nil, nil, map[string]string{}},
		{"a tie names both and nothing else", []result.Node{node("a", "a-1,b-1", "a-1"), node("b", "b-1", "b-1")}, nil, nil,
			map[string]string{catalog.EtcdMembersDisagreeID: "a,b"}},
		// Not listed although its own list was not read.
		{"a member the others dropped", []result.Node{node("a", "a-1,b-1", "a-1"), node("b", "a-1,b-1", "b-1"), node("c", "unknown", "c-1")}, nil, nil,
			map[string]string{catalog.EtcdMemberNotListedID: "c"}},
		{"an unaudited member", []result.Node{node("a", three, "a-1"), node("b", three, "b-1")}, nil, nil, map[string]string{catalog.EtcdMembersUnauditedID: ""}},
		{"not matched under --limit", []result.Node{node("a", three, "a-1"), node("b", three, "b-1")}, &result.Limit{Pattern: "a,b"}, nil, map[string]string{}},
		{"not matched in a shard", []result.Node{node("a", three, "a-1"), node("b", three, "b-1")}, nil, &result.Shard{Index: 1, Count: 2}, map[string]string{}},
		{"not matched with a host unreachable", []result.Node{node("a", three, "a-1"), node("b", three, "b-1"), {Name: "c", Status: result.StatusUnreachable}}, nil, nil, map[string]string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := map[string]string{}
			for _, f := range EtcdMembers(&result.Report{Nodes: tc.nodes, Limit: tc.limit, Shard: tc.shard}) {
				got[f.Check] = strings.Join(f.Nodes, ",")
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("findings %v, want %v", got, tc.want)
			}
		})
	}
}
