package audit

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/fleet-audit/fleet-audit/audit/check"
	"github.com/fleet-audit/fleet-audit/audit/probe"
	"github.com/fleet-audit/fleet-audit/result"
)

// markNotRoot fills in "not-root" for every fact a root probe declares and
// did not print, when the root probes ran as a login user that is not
// root (no become, or sudo refused: meta.sudo not ok). Such a probe prints
// what it could see without root and leaves the rest out, and a fact left
// out reads as "does not apply here": the checks on it would skip as not
// applicable on a node where they were never looked at.
func markNotRoot(facts, meta map[string]string, probes []probe.Probe) {
	if meta[probe.MetaUID] == "" || meta[probe.MetaUID] == "0" || meta[probe.MetaSudo] == "ok" {
		return
	}
	for _, p := range probes {
		if !p.NeedsRoot {
			continue
		}
		for _, f := range p.Facts {
			if _, ok := facts[f]; !ok {
				facts[f] = probe.NotRoot
			}
		}
	}
}

// markPartial gives every node whose probes all ran but on which some
// check could not be judged (result.OutcomeUnjudged) StatusPartial, with a
// message naming those checks and the fix. A node already partial from an
// earlier judgement (a saved run re-judged, merge) starts again from ok,
// so the status always says what these rules could not judge.
func markPartial(nodes []result.Node, checks []result.CheckResult) {
	unjudged := map[string][]result.CheckResult{}
	for _, c := range checks {
		if c.Outcome == result.OutcomeUnjudged && c.Node != result.ClusterNode {
			unjudged[c.Node] = append(unjudged[c.Node], c)
		}
	}
	for i := range nodes {
		n := &nodes[i]
		if n.Status != result.StatusOK && n.Status != result.StatusPartial {
			continue
		}
		cs := unjudged[n.Name]
		if len(cs) == 0 {
			n.Status, n.Message = result.StatusOK, ""
			continue
		}
		n.Status, n.Message = result.StatusPartial, partialMessage(cs)
	}
}

// partialMessage says which checks could not be judged on a node and
// what to do about it: each distinct reason once, in the order of their
// words (not-root, the fix that judges the most, first).
func partialMessage(cs []result.CheckResult) string {
	ids := make([]string, 0, len(cs))
	for _, c := range cs {
		ids = append(ids, c.Check)
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	msg := fmt.Sprintf("%s could not be judged: %s", result.Count(len(ids), "check"), strings.Join(ids, ", "))
	var whys []string
	for _, word := range slices.Sorted(maps.Keys(probe.Unjudgeable)) {
		why := probe.Unjudgeable[word]
		if slices.ContainsFunc(cs, func(c result.CheckResult) bool { return strings.Contains(c.Detail, why) }) {
			whys = append(whys, word+": "+why)
		}
	}
	if slices.ContainsFunc(cs, func(c result.CheckResult) bool { return strings.Contains(c.Detail, check.UnknownWhy) }) {
		whys = append(whys, "unknown: "+check.UnknownWhy+"; the check's detail says what it saw")
	}
	if len(whys) > 0 {
		msg += " (" + strings.Join(whys, "; ") + ")"
	}
	return msg
}

// markNotApplicable turns the skips of checks that read a server_only fact
// on a node that is not an RKE2 server into OutcomeNotApplicable: the fact
// was dropped there on purpose (dropServerOnly), so the check does not
// apply, which is neither "a fact was not reported" nor "could not judge".
func markNotApplicable(nodes []result.Node, results []result.CheckResult, checks []check.Check, probes []probe.Probe) {
	serverOnly := map[string]bool{}
	for _, p := range probes {
		for _, f := range p.ServerOnly {
			serverOnly[f] = true
		}
	}
	if len(serverOnly) == 0 {
		return
	}
	reads := map[string][]string{}
	for _, c := range checks {
		reads[c.ID] = c.Facts()
	}
	byName := map[string]result.Node{}
	for _, n := range nodes {
		byName[n.Name] = n
	}
	for i := range results {
		r := &results[i]
		n, ok := byName[r.Node]
		if r.Outcome != result.OutcomeSkip || !ok || !n.Status.HasFacts() || isServer(n) {
			continue
		}
		for _, f := range reads[r.Check] {
			if _, present := n.Facts[f]; serverOnly[f] && !present {
				r.Outcome, r.Detail = result.OutcomeNotApplicable, f+" is a setting of RKE2 servers only (server_only), and this node is not one"
				break
			}
		}
	}
}
