package audit

import (
	"sort"
	"strings"

	"github.com/fleet-audit/fleet-audit/audit/check"
	"github.com/fleet-audit/fleet-audit/result"
)

// Rollout classes, in the order a fix is rolled out across an HA RKE2
// cluster (the seed incident's recovery): etcd quorum members first and one
// at a time so quorum is never lost, then the other servers one at a time,
// then infra nodes, then workers with the failing ones first.
var rolloutOrder = []string{"etcd", "control-plane", "infra", "worker"}

// rolloutClass maps an inventory role name to its rollout class.
func rolloutClass(role string) string {
	switch strings.ToLower(role) {
	case "etcd":
		return "etcd"
	case "control-plane", "controlplane", "control_plane", "master", "server", "cp", "rke2-server":
		return "control-plane"
	case "infra", "infrastructure", "monitor", "monitoring", "ingress", "storage", "logging":
		return "infra"
	}
	return "worker"
}

// nodeClass is the earliest rollout class of a node's roles; without roles,
// a node running rke2-server is control-plane and any other is a worker.
func nodeClass(n result.Node) string {
	best := len(rolloutOrder)
	for _, r := range n.Roles {
		for i, c := range rolloutOrder {
			if c == rolloutClass(r) && i < best {
				best = i
			}
		}
	}
	if best < len(rolloutOrder) {
		return rolloutOrder[best]
	}
	if n.Facts["rke2.service"] == "rke2-server" || n.Facts["rke2.server.active"] == "active" {
		return "control-plane"
	}
	return "worker"
}

// PlanRollout orders the given nodes into rollout steps. Workers in failing
// (those with a symptom) come first within their step; the order is
// otherwise the inventory's.
func PlanRollout(names []string, nodes []result.Node, failing map[string]bool) []result.RolloutStep {
	byName := map[string]result.Node{}
	order := map[string]int{}
	for i, n := range nodes {
		byName[n.Name] = n
		order[n.Name] = i
	}
	steps := map[string][]string{}
	for _, name := range names {
		n, ok := byName[name]
		if !ok {
			continue
		}
		steps[nodeClass(n)] = append(steps[nodeClass(n)], name)
	}
	var out []result.RolloutStep
	for _, class := range rolloutOrder {
		members := steps[class]
		if len(members) == 0 {
			continue
		}
		sort.SliceStable(members, func(i, j int) bool {
			if failing[members[i]] != failing[members[j]] {
				return failing[members[i]]
			}
			return order[members[i]] < order[members[j]]
		})
		out = append(out, result.RolloutStep{Class: class, Nodes: members, OneAtATime: class != "worker"})
	}
	return out
}

// addRollouts attaches a rollout plan to every finding that asks operators
// to change nodes: failing checks of warning or worse, and probable causes.
func addRollouts(findings []result.Finding, nodes []result.Node, checks []check.Check, results []result.CheckResult) {
	symptom := map[string]bool{}
	for _, c := range checks {
		symptom[c.ID] = c.Symptom
	}
	failing := map[string]bool{}
	for _, r := range results {
		if symptom[r.Check] && r.Outcome == result.OutcomeFail {
			failing[r.Node] = true
		}
	}
	for i := range findings {
		f := &findings[i]
		wants := (f.Kind == result.KindCheck && f.Severity >= result.SeverityWarning && !symptom[f.Check]) ||
			(f.Kind == result.KindCorrelation && f.Cause != nil)
		if wants && len(f.Nodes) > 0 {
			f.Rollout = PlanRollout(f.Nodes, nodes, failing)
		}
	}
}
