package audit

import (
	"fmt"

	"github.com/fleet-audit/fleet-audit/result"
)

// GatePolicy is what the user asked the gate to enforce.
type GatePolicy struct {
	FailOn           result.Severity
	AllowUnreachable bool
}

// EvaluateGate computes the verdict once from the findings and node
// statuses. A finding at or above FailOn fails with 1 unless a waiver
// accepts it; otherwise a node that was not fully audited fails with 3
// unless allowed (a node the audit does not apply to is not one of them,
// and is counted apart); an interrupted run is 130 whatever else happened, since
// its picture is incomplete. The reasons say how many findings were waived,
// also when the gate passed, because a pass that rests on waivers is not
// the same statement as a clean fleet.
func EvaluateGate(r *result.Report, p GatePolicy) result.Gate {
	g := result.Gate{FailOn: p.FailOn, AllowUnreachable: p.AllowUnreachable, Reasons: []string{}}
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
	for _, sev := range []result.Severity{result.SeverityCritical, result.SeverityWarning, result.SeverityInfo} {
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
	unaudited, notApplicable := 0, 0
	for _, n := range r.Nodes {
		switch {
		case n.Status == result.StatusNotApplicable:
			notApplicable++
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
	switch {
	case r.Interrupted:
		g.ExitCode = result.ExitInterrupted
		g.Reasons = append(g.Reasons, "the run was interrupted")
	case failing:
		g.ExitCode = result.ExitGateFailed
	case unaudited > 0 && !p.AllowUnreachable:
		g.ExitCode = result.ExitUnaudited
	default:
		g.ExitCode = result.ExitOK
	}
	g.Passed = g.ExitCode == result.ExitOK
	if g.Passed && !p.AllowUnreachable {
		g.Reasons = []string{}
		if waivedReason != "" {
			g.Reasons = append(g.Reasons, waivedReason)
		}
		if naReason != "" {
			g.Reasons = append(g.Reasons, naReason)
		}
	}
	return g
}
