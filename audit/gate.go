package audit

import (
	"fmt"

	"github.com/fleet-audit/fleet-audit/result"
)

// GatePolicy is what the user asked the gate to enforce.
type GatePolicy struct {
	FailOn           result.Severity
	AllowUnreachable bool
	// AllowPartial is --allow-partial: nodes some checks could not be
	// judged on (StatusPartial) do not fail the gate. It is apart from
	// AllowUnreachable on purpose: a node down for maintenance is one
	// known gap, a fleet audited without root is every node judged
	// blind, and a CI that tolerates the first must not pass the second.
	AllowPartial bool
}

// EvaluateGate computes the verdict once from the findings and node
// statuses. A finding at or above FailOn fails with 1 unless a waiver
// accepts it; otherwise a node that was not fully audited fails with 3
// unless allowed (a node the audit does not apply to is not one of them,
// and is counted apart; a partial node, some of whose checks could not be
// judged, is allowed by AllowPartial alone; a failed cluster view is
// unaudited as a node is); an interrupted run is 130 whatever else happened, since
// its picture is incomplete. The reasons say how many findings were waived,
// also when the gate passed, because a pass that rests on waivers is not
// the same statement as a clean fleet.
func EvaluateGate(r *result.Report, p GatePolicy) result.Gate {
	g := result.Gate{FailOn: p.FailOn, AllowUnreachable: p.AllowUnreachable, AllowPartial: p.AllowPartial, Reasons: []string{}}
	counts := map[result.Severity]int{}
	waived := 0
	for _, f := range r.Findings {
		switch {
		case f.Waived != nil:
			waived++
		case g.Fails(f):
			counts[f.Severity]++
		}
	}
	for _, sev := range result.SeverityOrder {
		if counts[sev] > 0 {
			g.Reasons = append(g.Reasons, fmt.Sprintf("%d %s %s", counts[sev], sev, result.Plural(counts[sev], "finding")))
		}
	}
	failing := len(g.Reasons) > 0
	waivedReason := ""
	if waived > 0 {
		waivedReason = fmt.Sprintf("%d %s waived", waived, result.Plural(waived, "finding"))
		g.Reasons = append(g.Reasons, waivedReason)
	}
	unaudited, notApplicable, partial, unjudged := 0, 0, 0, 0
	for _, c := range r.Checks {
		if c.Outcome == result.OutcomeUnjudged && c.Node != result.ClusterNode {
			unjudged++
		}
	}
	for _, n := range r.Nodes {
		switch {
		case n.Status == result.StatusNotApplicable:
			notApplicable++
		case n.Status == result.StatusPartial:
			partial++
		case n.Status.Unaudited():
			unaudited++
		}
	}
	// Said also when the gate passes: a pass that leaves nodes out is not
	// the same statement as one over every node.
	naReason := ""
	if notApplicable > 0 {
		naReason = fmt.Sprintf("%d of %d %s not applicable (not audited: not Linux)", notApplicable, len(r.Nodes), result.Plural(len(r.Nodes), "node"))
		g.Reasons = append(g.Reasons, naReason)
	}
	if unaudited > 0 {
		reason := fmt.Sprintf("%d of %d %s not fully audited", unaudited, len(r.Nodes), result.Plural(len(r.Nodes), "node"))
		if p.AllowUnreachable {
			reason += " (allowed by --allow-unreachable)"
		}
		g.Reasons = append(g.Reasons, reason)
	}
	// A cluster view that failed is an audit of the cluster that did not
	// finish, as a node's is: the same flag lets it through. No server to
	// ask (ClusterNoServer) is not one: either the servers are themselves
	// unaudited nodes, or the run holds none (--limit to agents).
	clusterFailed := r.Cluster != nil && r.Cluster.Status == result.ClusterFailed
	if clusterFailed {
		reason := "the cluster view failed, so the Kubernetes checks were not judged: " + r.Cluster.Message
		if p.AllowUnreachable {
			reason += " (allowed by --allow-unreachable)"
		}
		g.Reasons = append(g.Reasons, reason)
	}
	partialReason := ""
	if partial > 0 {
		partialReason = fmt.Sprintf("%d of %d %s partially audited: %s could not be judged (see each node)",
			partial, len(r.Nodes), result.Plural(len(r.Nodes), "node"), result.Count(unjudged, "check"))
		if p.AllowPartial {
			partialReason += " (allowed by --allow-partial)"
		}
		g.Reasons = append(g.Reasons, partialReason)
	}
	switch {
	case r.Interrupted:
		g.ExitCode = result.ExitInterrupted
		g.Reasons = append(g.Reasons, "the run was interrupted")
	case failing:
		g.ExitCode = result.ExitGateFailed
	case (unaudited > 0 || clusterFailed) && !p.AllowUnreachable, partial > 0 && !p.AllowPartial:
		g.ExitCode = result.ExitUnaudited
	default:
		g.ExitCode = result.ExitOK
	}
	g.Passed = g.ExitCode == result.ExitOK
	if g.Passed && !p.AllowUnreachable {
		g.Reasons = []string{}
		for _, r := range []string{waivedReason, naReason, partialReason} {
			if r != "" {
				g.Reasons = append(g.Reasons, r)
			}
		}
	}
	return g
}
