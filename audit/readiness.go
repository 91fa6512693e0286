package audit

import (
	"slices"
	"strings"

	"github.com/fleet-audit/fleet-audit/audit/catalog"
	"github.com/fleet-audit/fleet-audit/audit/check"
	"github.com/fleet-audit/fleet-audit/audit/probe"
	"github.com/fleet-audit/fleet-audit/result"
)

// Readiness breaks the report's verdict down by result.Areas, so that the
// board sees which part of the upgrade is blocked, which is ready and
// which the run could not judge, instead of one word for all of it. A
// check counts in its own area, a finding built in Go in its GoFindings
// row's, a correlation in its symptom check's. The results on audited
// nodes and the cluster view are counted; a node not audited leaves every
// area its checks would have judged not judged (NotAudited), never ready.
// It sets r.Readiness and returns it; the verdicts read r.Gate
// (JudgeReadiness), so it runs after EvaluateGate.
func Readiness(r *result.Report, rules Rules) []result.AreaReadiness {
	areaOf := map[string]result.Area{}
	for _, c := range rules.Checks {
		areaOf[c.ID] = c.Area
	}
	for _, f := range catalog.GoFindings {
		if f.Area != "" {
			areaOf[f.ID] = f.Area
		}
	}
	area := func(id string) result.Area {
		if symptom, ok := strings.CutPrefix(id, catalog.CorrelationPrefix); ok {
			id = symptom
		}
		if a := areaOf[id]; a != "" {
			return a
		}
		return result.AreaOther
	}
	// notAudited are the nodes no check could look at: each area they
	// would have been judged on is not judged, since "ready" would speak
	// for a node nobody saw. A node the audit does not apply to (not
	// Linux) is neither audited nor missing.
	audited := map[string]bool{result.ClusterNode: true}
	notAudited := map[string]bool{}
	for _, n := range r.Nodes {
		audited[n.Name] = n.Status.HasFacts()
		notAudited[n.Name] = !n.Status.HasFacts() && n.Status != result.StatusNotApplicable
	}
	if !slices.ContainsFunc(r.Nodes, func(n result.Node) bool { return n.Status.HasFacts() }) {
		// Nothing was judged: the decision's not audited list is the
		// whole answer, and eight areas "not checked" would bury it.
		r.Readiness = nil
		return nil
	}
	by := map[result.Area]*result.AreaReadiness{}
	get := func(a result.Area) *result.AreaReadiness {
		if by[a] == nil {
			by[a] = &result.AreaReadiness{Area: a, Findings: []string{}, NotJudged: []string{}, NotAudited: []string{}}
		}
		return by[a]
	}
	unjudged, skipped := map[result.Area][]string{}, map[result.Area][]string{}
	seen := map[string]bool{}
	once := func(key string) bool {
		first := !seen[key]
		seen[key] = true
		return first
	}
	tally := func(c result.CheckResult) {
		a := get(area(c.Check))
		switch {
		case notAudited[c.Node]:
			a.Unjudged++
			if once(string(a.Area) + "\x00" + c.Node) {
				a.NotAudited = append(a.NotAudited, c.Node)
			}
			return
		case !audited[c.Node]:
			return
		}
		switch c.Outcome {
		case result.OutcomePass:
			a.Passed++
		case result.OutcomeFail:
			if !c.Severity.AtLeast(result.SeverityWarning) {
				a.Passed++ // a note, not a fault, as the node states count it
				break
			}
			a.Failed++
		case result.OutcomeUnjudged:
			a.Unjudged++
			if once(c.Check + "\x00unjudged") {
				unjudged[a.Area] = append(unjudged[a.Area], notJudgedWhy(c))
			}
		case result.OutcomeSkip:
			a.Skipped++
			if once(c.Check + "\x00skip") {
				skipped[a.Area] = append(skipped[a.Area], notJudgedWhy(c))
			}
		case result.OutcomeNotApplicable:
			a.NotApplicable++
		}
	}
	for _, c := range r.Checks {
		tally(c)
	}
	for _, c := range goJudged(r, rules.Selection) {
		tally(c)
	}
	for _, f := range r.Findings {
		if f.Waived != nil || !f.Severity.AtLeast(result.SeverityWarning) {
			continue
		}
		if a := get(area(f.Check)); !slices.Contains(a.Findings, f.Check) {
			a.Findings = append(a.Findings, f.Check)
		}
	}
	var out []result.AreaReadiness
	for _, name := range result.Areas {
		a := by[name]
		switch {
		case a == nil && name == result.AreaOther:
			continue
		case a == nil:
			a = get(name)
		case len(unjudged[name]) > 0:
			a.NotJudged = unjudged[name]
		case a.Passed == 0 && a.Failed == 0 && len(skipped[name]) > 0:
			// Nothing passed: every check that applies was skipped.
			a.NotJudged = skipped[name]
		}
		if name == result.AreaOther && a.Passed+a.Failed+a.Unjudged+a.Skipped+len(a.Findings) == 0 {
			continue
		}
		out = append(out, *a)
	}
	r.Readiness = out
	JudgeReadiness(r)
	return out
}

// JudgeReadiness sets each area's verdict from its counts and from the
// report's findings under the report's gate, so that a saved run
// re-judged at another --fail-on (fleet-audit report) reads the same in
// its readiness as in its gate, and a file cannot claim an area ready
// while a finding of it fails the gate.
func JudgeReadiness(r *result.Report) {
	fails := map[string]bool{}
	for _, f := range r.Findings {
		if r.Gate.Fails(f) && f.Severity.AtLeast(result.SeverityWarning) {
			fails[f.Check] = true
		}
	}
	for i := range r.Readiness {
		a := &r.Readiness[i]
		switch {
		case slices.ContainsFunc(a.Findings, func(id string) bool { return fails[id] }):
			a.Verdict = result.VerdictBlocked
		case len(a.Findings) > 0:
			a.Verdict = result.VerdictWarnings
		case len(a.NotJudged)+len(a.NotAudited) > 0:
			a.Verdict = result.VerdictNotJudged
		case a.Passed == 0 && a.Failed == 0:
			a.Verdict = result.VerdictNotChecked
		default:
			a.Verdict = result.VerdictReady
		}
	}
}

// goJudged are the judgements the findings built in Go made, as check
// results, which the report does not keep: a Go finding with an area and
// the facts it reads (GoFindings) judged a node that reports its first
// fact, and failed it when a finding of it names the node; one whose first
// fact is the cluster view's judged the cluster once. Without them an area
// judged in Go alone (versions) would read "not checked" on every run.
func goJudged(r *result.Report, sel check.Selection) []result.CheckResult {
	named := map[string]bool{}
	for _, f := range r.Findings {
		if !f.Severity.AtLeast(result.SeverityWarning) {
			continue // a note, not a fault
		}
		named[f.Check] = true
		for _, n := range f.Nodes {
			named[f.Check+"\x00"+n] = true
		}
	}
	var out []result.CheckResult
	for _, g := range catalog.GoFindings {
		if g.Area == "" || len(g.Facts) == 0 || !sel.Selects(g.ID) {
			continue
		}
		if slices.Contains(g.Facts, catalog.TargetVersionFact) && r.TargetVersion == "" {
			out = append(out, result.CheckResult{Check: g.ID, Node: result.ClusterNode, Outcome: result.OutcomeSkip, Detail: catalog.TargetVersionNotGiven})
			continue
		}
		if strings.HasPrefix(g.Facts[0], probe.ClusterFactPrefix) {
			if r.Cluster == nil {
				continue // the run had no cluster probes to judge
			}
			c := result.CheckResult{Check: g.ID, Node: result.ClusterNode, Severity: g.Severity, Outcome: result.OutcomePass}
			switch {
			case named[g.ID]:
				c.Outcome = result.OutcomeFail
			case r.Cluster == nil || len(r.Cluster.Facts) == 0:
				c.Outcome, c.Detail = result.OutcomeSkip, "no cluster facts"
			}
			out = append(out, c)
			continue
		}
		for _, n := range r.Nodes {
			if !n.Status.HasFacts() {
				// Judged on none of its facts; Readiness counts it as
				// not audited, or leaves it out when not applicable.
				out = append(out, result.CheckResult{Check: g.ID, Node: n.Name, Outcome: result.OutcomeSkip})
				continue
			}
			if _, ok := n.Facts[g.Facts[0]]; !ok {
				continue
			}
			c := result.CheckResult{Check: g.ID, Node: n.Name, Severity: g.Severity, Outcome: result.OutcomePass}
			if named[g.ID+"\x00"+n.Name] {
				c.Outcome = result.OutcomeFail
			}
			out = append(out, c)
		}
	}
	return out
}

// notJudgedWhy is "id on node: why", or "id: why" for the cluster.
func notJudgedWhy(c result.CheckResult) string {
	if c.Node == result.ClusterNode {
		return c.Check + ": " + c.Detail
	}
	return c.Check + " on " + c.Node + ": " + c.Detail
}
