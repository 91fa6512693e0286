package audit

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/fleet-audit/fleet-audit/audit/catalog"
	"github.com/fleet-audit/fleet-audit/audit/check"
	"github.com/fleet-audit/fleet-audit/audit/probe"
	"github.com/fleet-audit/fleet-audit/result"
)

// The etcd probe's membership facts, which only the comparison across
// etcd servers judges.
const (
	EtcdMembersFact    = "etcd.members"
	EtcdMemberSelfFact = "etcd.member.self"
	// etcdMembersStatusFact says why etcd.members is unknown.
	etcdMembersStatusFact = "etcd.members.status"
	// etcdLearnerSuffix marks a learner in etcd.members (etcd.sh).
	etcdLearnerSuffix = ":learner"
)

// etcdMemberRe is one entry of etcd.members: a member name as k3s makes it
// (<node name>-<8 hex>, pkg/etcd/etcd.go setName), or unstarted-<ID>.
var etcdMemberRe = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)

// etcdMemberList reads etcd.members: the sorted entries, or false when the
// value is no list ("absent" off etcd, "unknown" when the supervisor gave
// no answer, "unreadable", "not-root").
func etcdMemberList(v string) ([]string, bool) {
	if _, bad := probe.Unjudgeable[v]; bad || v == "" || v == "absent" || v == "unknown" {
		return nil, false
	}
	list := strings.Split(v, ",")
	for _, e := range list {
		if !etcdMemberRe.MatchString(strings.TrimSuffix(e, etcdLearnerSuffix)) {
			return nil, false
		}
	}
	return list, true
}

// etcdMemberName is an entry's member name, without its learner mark.
func etcdMemberName(entry string) string { return strings.TrimSuffix(entry, etcdLearnerSuffix) }

// EtcdMembers compares the member list each etcd server's own member
// answers with (etcd.members, from RKE2's /db/info): every member of one
// cluster serves the same list, so a server whose list differs from the
// majority's is in another cluster (a --cluster-reset done on it alone, a
// data directory restored from elsewhere) or sees a membership change the
// others do not. Against the majority's list it also judges the fleet: an
// audited etcd server that is no member of it, members that are no
// audited server's own (a removed server's member left behind counts
// toward quorum), and a voter count other than the etcd Nodes Kubernetes
// lists. Servers whose list could not be read are left out; with --limit,
// in a shard, or with a node not audited, members are not matched against
// the fleet.
func EtcdMembers(r *result.Report) []result.Finding {
	lists := map[string][]string{} // node → its list
	count := map[string]int{}
	var names []string
	for _, n := range r.Nodes {
		if !n.Status.HasFacts() {
			continue
		}
		if l, ok := etcdMemberList(n.Facts[EtcdMembersFact]); ok {
			lists[n.Name] = l
			count[strings.Join(l, ",")]++
			names = append(names, n.Name)
		}
	}
	if len(lists) == 0 {
		return nil
	}
	majority, tie := check.MajorityOf(count)
	var out []result.Finding
	if len(count) > 1 {
		var nodes, evidence []string
		for _, name := range names {
			l := strings.Join(lists[name], ",")
			if tie || l != majority {
				nodes = append(nodes, name)
			}
			evidence = append(evidence, fmt.Sprintf("%s: %s=%s", name, EtcdMembersFact, l))
		}
		sort.Strings(nodes)
		sort.Strings(evidence)
		what := "differs from the one the other etcd servers agree on (" + majority + ")"
		if tie {
			what = "is not the same on every etcd server, and no list has a majority"
		}
		out = append(out, etcdFinding(catalog.EtcdMembersDisagreeID, nodes, evidence,
			fmt.Sprintf("The etcd member list %s on %s: the etcd servers are not all members of one cluster, or do not see one membership.", what, strings.Join(nodes, ", "))))
	}
	if tie {
		return out // no list to hold the fleet against
	}
	listed := map[string]bool{}
	voters := 0
	for _, e := range strings.Split(majority, ",") {
		listed[etcdMemberName(e)] = true
		if !strings.HasSuffix(e, etcdLearnerSuffix) {
			voters++
		}
	}
	// The members the audited servers say they are.
	selves := map[string]bool{}
	var notListed, notListedEv []string
	for _, n := range r.Nodes {
		self := n.Facts[EtcdMemberSelfFact]
		if !n.Status.HasFacts() || !etcdMemberRe.MatchString(self) || self == "absent" || self == "unknown" || self == "unreadable" || self == probe.NotRoot {
			continue
		}
		selves[self] = true
		if !listed[self] {
			notListed = append(notListed, n.Name)
			notListedEv = append(notListedEv, fmt.Sprintf("%s: %s=%s, %s=%s (%s)", n.Name, EtcdMemberSelfFact, self, EtcdMembersFact, n.Facts[EtcdMembersFact], n.Facts[etcdMembersStatusFact]))
		}
	}
	if len(notListed) > 0 {
		out = append(out, etcdFinding(catalog.EtcdMemberNotListedID, notListed, notListedEv,
			fmt.Sprintf("%s %s etcd but %s no member of the etcd cluster the other servers list (%s): %s own member is in another cluster, or was removed from this one.",
				strings.Join(notListed, ", "), pick(len(notListed), "runs", "run"), pick(len(notListed), "is", "are"), majority, pick(len(notListed), "its", "their"))))
	}
	if fleetComplete(r) {
		var strays []string
		for m := range listed {
			if !selves[m] {
				strays = append(strays, m)
			}
		}
		if len(strays) > 0 {
			sort.Strings(strays)
			out = append(out, etcdFinding(catalog.EtcdMembersUnauditedID, []string{}, []string{"etcd cluster: " + EtcdMembersFact + "=" + majority + "; no audited server is " + strings.Join(strays, ", ")},
				fmt.Sprintf("etcd lists %s, which no audited etcd server says it is (%s): a server left out of the inventory, or the member of a removed or reset server that was never removed from etcd. A member that is down still counts toward quorum.",
					strings.Join(strays, ", "), EtcdMemberSelfFact)))
		}
	}
	if r.Cluster != nil {
		if k8s, err := strconv.Atoi(r.Cluster.Facts["cluster.etcd.members"]); err == nil && k8s != voters {
			out = append(out, etcdFinding(catalog.EtcdMembersCountID, []string{}, []string{fmt.Sprintf("etcd cluster: %d voting members (%s); cluster.etcd.members=%d", voters, majority, k8s)},
				fmt.Sprintf("etcd has %d voting members, Kubernetes %d Nodes labelled node-role.kubernetes.io/etcd: quorum is a majority of etcd's count, so a member without a running server (or a server whose member is gone) changes how many failures the cluster survives.", voters, k8s)))
		}
	}
	return out
}

// pick is one for a single node, many for several.
func pick(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// fleetComplete says whether every host of the inventory is a node of the
// report with facts, so that a member no node claims is no server at all:
// not under --limit, nor in one shard's report (the merged one has them all).
func fleetComplete(r *result.Report) bool {
	if r.Limit != nil || r.Shard != nil {
		return false
	}
	return !slices.ContainsFunc(r.Nodes, func(n result.Node) bool { return !n.Status.HasFacts() })
}

func etcdFinding(id string, nodes, evidence []string, summary string) result.Finding {
	g := catalog.GoFindingOf(id)
	return result.Finding{Check: id, Kind: result.KindCheck, Severity: g.Severity, Nodes: nodes, Title: g.About,
		Summary: summary, Evidence: evidence, Remediation: g.Fix}
}
