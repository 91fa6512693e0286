package audit

import (
	"maps"
	"slices"
	"sort"

	"github.com/fleet-audit/fleet-audit/audit/catalog"
	"github.com/fleet-audit/fleet-audit/audit/probe"
	"github.com/fleet-audit/fleet-audit/result"
)

// factMeta tells the comparator which facts are volatile and which probe
// emitted each, so a symptom is never "explained" by its own probe's facts.
type factMeta struct {
	volatile   map[string]bool
	roleScoped map[string]bool
	probeOf    map[string]string
}

func newFactMeta(probes []probe.Probe) factMeta {
	m := factMeta{volatile: map[string]bool{}, roleScoped: map[string]bool{}, probeOf: map[string]string{}}
	for _, p := range probes {
		for _, f := range append(append([]string{}, p.Facts...), p.NodeFacts...) {
			m.probeOf[f] = p.ID
		}
		for _, f := range p.Volatile {
			m.volatile[f] = true
		}
		for _, f := range p.RoleScoped {
			m.roleScoped[f] = true
		}
	}
	for _, f := range catalog.GoFacts {
		if f.Volatile {
			m.volatile[f.Key] = true
		}
	}
	return m
}

// ComputeDrift groups the audited nodes by value for every non-volatile fact,
// over the whole fleet and within each role, and returns each scope where a
// fact is not uniform. Nodes that did not report a fact are left out of its
// groups rather than counted as a value.
func ComputeDrift(nodes []result.Node, probes []probe.Probe) []result.Drift {
	meta := newFactMeta(probes)
	scopes := []struct {
		name  result.DriftScope
		nodes []result.Node
	}{{result.ScopeFleet, auditedNodes(nodes)}}
	byRole := map[string][]result.Node{}
	for _, n := range auditedNodes(nodes) {
		for _, r := range n.Roles {
			byRole[r] = append(byRole[r], n)
		}
	}
	for _, r := range slices.Sorted(maps.Keys(byRole)) {
		if len(byRole[r]) >= 2 {
			scopes = append(scopes, struct {
				name  result.DriftScope
				nodes []result.Node
			}{result.RoleScope(r), byRole[r]})
		}
	}
	var out []result.Drift
	for _, sc := range scopes {
		keys := map[string]bool{}
		for _, n := range sc.nodes {
			for k := range n.Facts {
				if !meta.volatile[k] && !(sc.name == result.ScopeFleet && meta.roleScoped[k]) {
					keys[k] = true
				}
			}
		}
		for _, k := range slices.Sorted(maps.Keys(keys)) {
			groups := groupBy(sc.nodes, k)
			if len(groups) > 1 {
				out = append(out, result.Drift{Fact: k, Scope: sc.name, Majority: groups[0].Value, Groups: groups})
			}
		}
	}
	return out
}

// groupBy returns the value groups of one fact, largest first, then by value.
func groupBy(nodes []result.Node, fact string) []result.DriftGroup {
	idx := map[string]int{}
	var groups []result.DriftGroup
	for _, n := range nodes {
		v, ok := n.Facts[fact]
		if !ok {
			continue
		}
		i, seen := idx[v]
		if !seen {
			i = len(groups)
			idx[v] = i
			groups = append(groups, result.DriftGroup{Value: v})
		}
		groups[i].Nodes = append(groups[i].Nodes, n.Name)
	}
	for i := range groups {
		sort.Strings(groups[i].Nodes)
	}
	sort.SliceStable(groups, func(i, j int) bool {
		if len(groups[i].Nodes) != len(groups[j].Nodes) {
			return len(groups[i].Nodes) > len(groups[j].Nodes)
		}
		return groups[i].Value < groups[j].Value
	})
	return groups
}

func auditedNodes(nodes []result.Node) []result.Node {
	var out []result.Node
	for _, n := range nodes {
		if n.Status.HasFacts() {
			out = append(out, n)
		}
	}
	return out
}
