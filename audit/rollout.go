package audit

import (
	"sort"

	"github.com/fleet-audit/fleet-audit/audit/check"
	"github.com/fleet-audit/fleet-audit/result"
)

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
	steps := map[result.RolloutClass][]string{}
	for _, name := range names {
		n, ok := byName[name]
		if !ok {
			continue
		}
		steps[nodeClass(n)] = append(steps[nodeClass(n)], name)
	}
	var out []result.RolloutStep
	for _, class := range result.RolloutOrder {
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
		out = append(out, result.RolloutStep{Class: class, Nodes: members, OneAtATime: class != result.ClassWorker})
	}
	return out
}

// addRollouts attaches a rollout plan to every finding that asks operators
// to change nodes: failing checks of warning or worse, and probable causes.
func addRollouts(findings []result.Finding, nodes []result.Node, checks []check.Check, results []result.CheckResult) {
	symptom := symptomChecks(checks)
	failing := symptomNodes(symptom, results)
	for i := range findings {
		f := &findings[i]
		if wantsRollout(*f, symptom) && len(f.Nodes) > 0 {
			f.Rollout = PlanRollout(f.Nodes, nodes, failing)
		}
	}
}

// wantsRollout says whether a finding asks operators to change nodes: a
// failing check of warning or worse that is not a symptom (its cause is
// what gets changed), or a probable cause. The runbook (BuildPlan) takes
// the findings this rule gives a rollout.
func wantsRollout(f result.Finding, symptom map[string]bool) bool {
	return (f.Kind == result.KindCheck && f.Severity.AtLeast(result.SeverityWarning) && !symptom[f.Check]) ||
		(f.Kind == result.KindCorrelation && f.Cause != nil)
}

func symptomChecks(checks []check.Check) map[string]bool {
	out := map[string]bool{}
	for _, c := range checks {
		out[c.ID] = c.Symptom
	}
	return out
}

// symptomNodes are the nodes where a symptom check fails: the rollout
// puts them first among the workers.
func symptomNodes(symptom map[string]bool, results []result.CheckResult) map[string]bool {
	failing := map[string]bool{}
	for _, r := range results {
		if symptom[r.Check] && r.Outcome == result.OutcomeFail {
			failing[r.Node] = true
		}
	}
	return failing
}
