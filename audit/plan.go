package audit

import (
	"maps"
	"slices"

	"github.com/fleet-audit/fleet-audit/audit/catalog"
	"github.com/fleet-audit/fleet-audit/audit/check"
	"github.com/fleet-audit/fleet-audit/result"
)

// PlanFindings builds the runbook of r from the built-in checks' plans,
// for --plan and --plan-ansible. Only the built-in ones, as ExplainFindings:
// `fleet-audit report` and `merge` re-render a saved run without its
// --probes and must write the plan the run wrote; a finding of a user's
// check gets its remediation as a manual step.
func PlanFindings(r *result.Report) (*result.Plan, error) {
	c, err := catalog.Builtin()
	if err != nil {
		return nil, err
	}
	return BuildPlan(r, c.Checks), nil
}

// BuildPlan groups the findings that ask for a change on nodes (those
// wantsRollout gives a rollout) by the check whose fix they need, in the
// order of the findings (most severe first, a probable cause before the
// checks it explains). A probable cause is fixed by the check that flags
// its fact on those nodes, so the correlation and that check share one
// fix. Each fix's rollout is planned again over the union of its nodes,
// by PlanRollout, so nodes reached through several findings keep the one
// order. Waived findings are left out and named.
func BuildPlan(r *result.Report, checks []check.Check) *result.Plan {
	byID := map[string]check.Check{}
	for _, c := range checks {
		byID[c.ID] = c
	}
	symptom := symptomChecks(checks)
	failed := map[string]map[string]bool{} // check → nodes it fails on
	for _, cr := range r.Checks {
		if cr.Outcome == result.OutcomeFail {
			if failed[cr.Check] == nil {
				failed[cr.Check] = map[string]bool{}
			}
			failed[cr.Check][cr.Node] = true
		}
	}
	findings := slices.Clone(r.Findings)
	result.SortFindings(findings)
	plan := &result.Plan{Fixes: []result.Fix{}}
	index := map[string]int{}
	nodes := map[string][]string{}
	for _, f := range findings {
		if !wantsRollout(f, symptom) || len(f.Rollout) == 0 {
			continue
		}
		if f.Waived != nil {
			if !slices.Contains(plan.Waived, f.Check) {
				plan.Waived = append(plan.Waived, f.Check)
			}
			continue
		}
		key, on := f.Check, f.Nodes
		if f.Kind == result.KindCorrelation {
			if c, ok := causeCheck(f, byID, failed); ok {
				key = c
				on = slices.DeleteFunc(slices.Clone(f.Nodes), func(n string) bool { return !failed[c][n] })
			}
		}
		i, ok := index[key]
		if !ok {
			i = len(plan.Fixes)
			index[key] = i
			plan.Fixes = append(plan.Fixes, newFix(key, f, byID))
		}
		fx := &plan.Fixes[i]
		if !slices.Contains(fx.Resolves, f.Check) {
			fx.Resolves = append(fx.Resolves, f.Check)
		}
		fx.Severity = max(fx.Severity, f.Severity)
		for _, n := range on {
			if !slices.Contains(nodes[key], n) {
				nodes[key] = append(nodes[key], n)
			}
		}
	}
	failing := symptomNodes(symptom, r.Checks)
	for i := range plan.Fixes {
		plan.Fixes[i].Rollout = PlanRollout(nodes[plan.Fixes[i].Check], r.Nodes, failing)
	}
	return plan
}

// newFix starts the fix keyed by key (a check id, or the finding's own id
// when no check's plan covers it).
func newFix(key string, f result.Finding, byID map[string]check.Check) result.Fix {
	c, ok := byID[key]
	if ok && c.Plan != nil {
		return result.Fix{Check: key, Title: c.Title, Severity: f.Severity, Remediation: c.Remediation, Steps: c.Plan.Steps()}
	}
	title, remediation := f.Title, f.Remediation
	if ok {
		title, remediation = c.Title, c.Remediation
	}
	// No commands are written for it: a finding built in Go (version
	// skew: which release to install is a decision), a user's check, or a
	// probable cause that no check flags. Its remediation is the step.
	steps := result.FixSteps{Stop: "the next audit still reports " + key + " on the node."}
	if remediation != "" {
		steps.Manual = []string{remediation}
	} else {
		steps.Manual = []string{"fleet-audit has no fix written for " + key + ": find it from the finding's evidence."}
	}
	return result.Fix{Check: key, Title: title, Severity: f.Severity, Remediation: remediation, Steps: steps}
}

// causeCheck is the check that fixes a probable cause: one with a plan that
// judges the cause's fact and fails on the most of the correlation's nodes
// (ties: the more severe, then the first in file order, which byID does not
// keep, so ids break the last tie).
func causeCheck(f result.Finding, byID map[string]check.Check, failed map[string]map[string]bool) (string, bool) {
	if f.Cause == nil {
		return "", false
	}
	best, bestN := "", 0
	var bestSev result.Severity
	for _, id := range slices.Sorted(maps.Keys(byID)) {
		c := byID[id]
		if c.Plan == nil || !slices.Contains(c.JudgedFacts(), f.Cause.Fact) {
			continue
		}
		n := 0
		for _, node := range f.Nodes {
			if failed[id][node] {
				n++
			}
		}
		if n > bestN || n == bestN && n > 0 && c.Severity.Compare(bestSev) > 0 {
			best, bestN, bestSev = id, n, c.Severity
		}
	}
	return best, bestN > 0
}
