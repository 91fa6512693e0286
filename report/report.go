package report

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/fleet-audit/fleet-audit/result"
)

// The helpers below are shared by several formats; each returns fresh data
// and never reorders a slice of the report in place.

// orderFindings returns the findings in the one order of findings,
// result.SortFindings: severity, waived ones last, a correlation before the
// checks it explains (it carries the highest severity of its symptoms, so
// the probable cause stays the headline). audit writes them in that order
// already; a saved report may be older or edited by hand, so the formats
// sort a copy rather than trust the file or keep an order of their own.
func orderFindings(fs []result.Finding) []result.Finding {
	out := slices.Clone(fs)
	result.SortFindings(out)
	return out
}

// waivedCount is how many findings a waiver accepted.
func waivedCount(fs []result.Finding) int {
	n := 0
	for _, f := range fs {
		if f.Waived != nil {
			n++
		}
	}
	return n
}

// findingsTitle is "Findings (5)" or "Findings (5, 1 waived)": a count that
// hides the waived ones would make an accepted risk look fixed.
func findingsTitle(fs []result.Finding) string {
	if w := waivedCount(fs); w > 0 {
		return fmt.Sprintf("Findings (%d, %d waived)", len(fs), w)
	}
	return fmt.Sprintf("Findings (%d)", len(fs))
}

// waiverText is "until 2026-12-31 (waivers.yaml:4): reason", the words every
// human format uses for an accepted finding; the caller escapes it.
func waiverText(w *result.Waiver) string {
	s := "until " + w.Expires
	if w.Source != "" {
		s += " (" + w.Source + ")"
	}
	return s + ": " + w.Reason
}

// rolloutStep is one step of a finding's rollout, ready to print.
type rolloutStep struct {
	N          int
	Class      string
	Nodes      []string
	OneAtATime bool
	// FailingFirst marks a parallel step that starts with nodes showing the
	// symptom, so the reader knows the order is deliberate and not the
	// inventory's.
	FailingFirst bool
}

// rolloutSteps numbers a finding's rollout. The node order is the plan's
// and is kept: it is the order to act in, so names are never sorted or
// folded into a nodeset here.
func rolloutSteps(steps []result.RolloutStep, failing map[string]bool) []rolloutStep {
	out := make([]rolloutStep, 0, len(steps))
	for i, s := range steps {
		out = append(out, rolloutStep{
			N: i + 1, Class: string(s.Class), Nodes: append([]string(nil), s.Nodes...), OneAtATime: s.OneAtATime,
			FailingFirst: !s.OneAtATime && len(s.Nodes) > 0 && failing[s.Nodes[0]],
		})
	}
	return out
}

// label is "etcd, one at a time" or "worker".
func (s rolloutStep) label() string {
	if s.OneAtATime {
		return s.Class + ", one at a time"
	}
	return s.Class
}

// rolloutLine is the whole rollout on one line, unescaped:
// "1. etcd, one at a time: etcd-1, etcd-2 → 2. worker: worker-2 (failing first)".
func rolloutLine(steps []rolloutStep) string {
	parts := make([]string, len(steps))
	for i, s := range steps {
		parts[i] = fmt.Sprintf("%d. %s: %s", s.N, s.label(), strings.Join(s.Nodes, ", "))
		if s.FailingFirst {
			parts[i] += " (failing first)"
		}
	}
	return strings.Join(parts, " → ")
}

// failingNodes are the nodes with a symptom: those of the correlation
// findings, which audit builds from exactly the symptom checks that failed.
// The rollout puts them first; this only lets the formats say so.
func failingNodes(r *result.Report) map[string]bool {
	out := map[string]bool{}
	for _, f := range r.Findings {
		if f.Kind == result.KindCorrelation {
			for _, n := range f.Nodes {
				out[n] = true
			}
		}
	}
	return out
}

// candidateRow is one ranked candidate cause with its counts in words.
type candidateRow struct {
	Pair             string
	Failing, Healthy string
	Score            string
}

// candidateRows lays out c.Ranked: "fact=value", failing nodes with it,
// healthy nodes with it, score.
func candidateRows(c *result.Cause) []candidateRow {
	out := make([]candidateRow, 0, len(c.Ranked))
	for _, cd := range c.Ranked {
		out = append(out, candidateRow{
			Pair:    cd.Fact + "=" + cd.Value,
			Failing: fmt.Sprintf("%d of %d", cd.Matched, cd.Matched+cd.Missed),
			Healthy: fmt.Sprintf("%d of %d", cd.Extra, c.Healthy),
			Score:   fmt.Sprintf("%.2f", cd.Score),
		})
	}
	return out
}

// clusterAttempts are the servers asked for the cluster view, worth a list
// of their own only when one of them did not answer; the first answering
// is all the cluster status line needs to say.
func clusterAttempts(c *result.Cluster) []result.ClusterAttempt {
	for _, a := range c.Attempts {
		if a.Outcome != result.ClusterOK {
			return c.Attempts
		}
	}
	return nil
}

// clusterFacts are the cluster.* facts, sorted; a fact of another name in
// Cluster.Facts (a saved report from a probe that broke the rule) is shown
// too rather than hidden.
func clusterFacts(c *result.Cluster) []string { return slices.Sorted(maps.Keys(c.Facts)) }

// fleetLine counts the nodes by how far they were audited, e.g. "6 nodes:
// 4 audited, 1 partly audited, 1 not audited". Audited is ok alone: a node
// whose facts were judged in part (partial, probe_timeout, a sudo that
// failed) is one the decision lists as not covered, and the header must
// not call it audited above that list. The partly and not-applicable
// counts are shown when there are any.
func fleetLine(r *result.Report) string {
	var audited, partly, none, notApplicable int
	for _, n := range r.Nodes {
		switch {
		case n.Status == result.StatusOK:
			audited++
		case n.Status == result.StatusNotApplicable:
			notApplicable++
		case n.Status.HasFacts():
			partly++
		default:
			none++
		}
	}
	parts := []string{fmt.Sprintf("%d audited", audited)}
	if partly > 0 {
		parts = append(parts, fmt.Sprintf("%d partly audited", partly))
	}
	parts = append(parts, fmt.Sprintf("%d not audited", none))
	if notApplicable > 0 {
		parts = append(parts, fmt.Sprintf("%d not applicable", notApplicable))
	}
	return result.Count(len(r.Nodes), "node") + ": " + strings.Join(parts, ", ")
}

// Verdict is the gate in one line, e.g. "FAILED (exit 1): 3 critical findings".
// It prints the gate; it never recomputes it.
func Verdict(g result.Gate) string {
	if g.Passed {
		// A pass can still carry reasons worth a line: waived findings,
		// nodes let through by --allow-unreachable.
		if len(g.Reasons) > 0 {
			return "passed (" + strings.Join(g.Reasons, "; ") + ")"
		}
		return "passed"
	}
	s := fmt.Sprintf("FAILED (exit %d)", g.ExitCode)
	if len(g.Reasons) > 0 {
		s += ": " + strings.Join(g.Reasons, "; ")
	}
	return s
}

// explains reports whether the cause explains the symptom check id.
func explains(c *result.Cause, check string) bool {
	for _, s := range c.SymptomChecks() {
		if s == check {
			return true
		}
	}
	return false
}

// causeStats explains how well the cause splits the fleet, in the words an
// SRE would use to a change board.
func causeStats(c *result.Cause) string {
	failing := c.Matched + c.Missed
	s := fmt.Sprintf("on %d of %d failing nodes and %d of %d healthy ones", c.Matched, failing, c.Extra, c.Healthy)
	if c.Exact {
		s += " (exact match)"
	}
	if len(c.Also) > 0 {
		s += "; equally explained by " + strings.Join(c.Also, ", ")
	}
	return s
}

// runTime is FinishedAt-StartedAt rounded for people, or "" when unknown.
func runTime(r *result.Report) string {
	if r.StartedAt.IsZero() || r.FinishedAt.Before(r.StartedAt) {
		return ""
	}
	return r.FinishedAt.Sub(r.StartedAt).Round(100 * time.Millisecond).String()
}

// ranAt is the start time in UTC: reports are compared across time zones.
func ranAt(r *result.Report) string {
	if r.StartedAt.IsZero() {
		return ""
	}
	return r.StartedAt.UTC().Format("2006-01-02 15:04:05 UTC")
}

// outliers maps fact → node → the scope in which that node's value is not
// the majority, e.g. "fleet majority: inactive". Nodes in the majority group
// are absent. Role rows folded into a fleet row (foldDrift) mark nothing:
// marking the healthy etcd-3 because the other two etcd nodes run UFW would
// point the reader at the wrong node.
func outliers(drift []result.Drift) map[string]map[string][]string {
	out := map[string]map[string][]string{}
	for _, dr := range foldDrift(drift) {
		d := dr.d
		for _, g := range d.Groups {
			if g.Value == d.Majority {
				continue
			}
			if out[d.Fact] == nil {
				out[d.Fact] = map[string][]string{}
			}
			for _, n := range g.Nodes {
				out[d.Fact][n] = append(out[d.Fact][n], fmt.Sprintf("%s majority: %s", d.Scope, d.Majority))
			}
		}
	}
	return out
}

// foldedNote says how many drift rows foldDrift folded away, or nothing.
func foldedNote(rows []driftRow) string {
	folded := 0
	for _, dr := range rows {
		folded += len(dr.scopes) - 1
	}
	if folded == 0 {
		return ""
	}
	return result.Count(folded, "role row") + " of facts that drift fleet-wide folded into their fleet row"
}

// driftRow is one line of the drift list: a fleet drift and the role
// scopes folded into it, or a role drift of its own.
type driftRow struct {
	d      result.Drift
	scopes []string
}

// foldDrift folds each role-scope drift into the fleet drift of the same
// fact. Within one run a role row is the fleet row restricted to the role's
// nodes, so it adds no node and no value; it only changes which value is
// called normal, and in the seed incident that misleads: "ufw.active
// (role:etcd): active (2), inactive: etcd-3" names the one healthy etcd
// node as the odd one. A role-scoped fact has no fleet row and stays a row
// of its own.
// The JSON report and the verbose terminal keep every scope.
func foldDrift(ds []result.Drift) []driftRow {
	var rows []driftRow
	fleet := map[string]int{}
	for _, d := range ds {
		if i, ok := fleet[d.Fact]; ok && d.Scope != result.ScopeFleet && restricts(rows[i].d, d) {
			rows[i].scopes = append(rows[i].scopes, string(d.Scope))
			continue
		}
		if d.Scope == result.ScopeFleet {
			fleet[d.Fact] = len(rows)
		}
		rows = append(rows, driftRow{d: d, scopes: []string{string(d.Scope)}})
	}
	return rows
}

// restricts reports whether every node of the role drift has the same value
// in the fleet drift, which always holds within one run; it is checked so
// that an edited saved report cannot hide a row.
func restricts(fleet, role result.Drift) bool {
	value := map[string]string{}
	for _, g := range fleet.Groups {
		for _, n := range g.Nodes {
			value[n] = g.Value
		}
	}
	for _, g := range role.Groups {
		for _, n := range g.Nodes {
			if v, ok := value[n]; !ok || v != g.Value {
				return false
			}
		}
	}
	return true
}

// majorityCount is the size of the majority group of d.
func majorityCount(d result.Drift) int {
	for _, g := range d.Groups {
		if g.Value == d.Majority {
			return len(g.Nodes)
		}
	}
	return 0
}

// checksByNode indexes the check results by node (an inventory name, or
// result.ClusterNode): the positions in r.Checks of each node's results, in
// the report's order. HTML and JUnit list every node's results; looking them
// up by scanning every result for each node made them quadratic in the
// fleet's size.
func checksByNode(r *result.Report) map[string][]int {
	out := make(map[string][]int, len(r.Nodes)+1)
	for i, c := range r.Checks {
		out[c.Node] = append(out[c.Node], i)
	}
	return out
}
