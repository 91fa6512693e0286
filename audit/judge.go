package audit

import (
	"fmt"
	"sort"
	"strings"
)

// Judge runs every check on every node. Nodes without facts get a skip for
// each check so that JUnit still shows them.
func Judge(nodes []Node, checks []Check) []CheckResult {
	var out []CheckResult
	for _, n := range nodes {
		for _, c := range checks {
			r := CheckResult{Check: c.ID, Node: n.Name, Severity: c.Severity}
			if n.Status.HasFacts() {
				r.Outcome, r.Detail = c.Evaluate(n.Facts)
			} else {
				r.Outcome, r.Detail = OutcomeSkip, "node not audited: "+n.Status.String()
			}
			out = append(out, r)
		}
	}
	return out
}

// CheckFindings folds the failing results of each check into one finding
// naming all the nodes it fails on.
func CheckFindings(checks []Check, results []CheckResult) []Finding {
	var out []Finding
	for _, c := range checks {
		f := Finding{Check: c.ID, Kind: KindCheck, Title: c.Title, Severity: c.Severity, Summary: c.Summary, Remediation: c.Remediation}
		for _, r := range results {
			if r.Check == c.ID && r.Outcome == OutcomeFail {
				f.Nodes = append(f.Nodes, r.Node)
				f.Evidence = append(f.Evidence, r.Node+": "+r.Detail)
			}
		}
		if len(f.Nodes) > 0 {
			sort.Strings(f.Nodes)
			sort.Strings(f.Evidence)
			f.Summary = fmt.Sprintf("%s (%d %s: %s)", c.Summary, len(f.Nodes), plural(len(f.Nodes), "node"), strings.Join(f.Nodes, ", "))
			out = append(out, f)
		}
	}
	return out
}

// SortFindings orders findings by severity, correlation findings before the
// checks they explain, then by check id.
func SortFindings(fs []Finding) {
	rank := map[string]int{KindCorrelation: 0, KindCheck: 1, KindDrift: 2}
	sort.SliceStable(fs, func(i, j int) bool {
		a, b := fs[i], fs[j]
		if a.Severity != b.Severity {
			return a.Severity > b.Severity
		}
		if rank[a.Kind] != rank[b.Kind] {
			return rank[a.Kind] < rank[b.Kind]
		}
		return a.Check < b.Check
	})
}
