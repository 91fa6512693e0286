package report

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/fleet-audit/fleet-audit/result"
)

// Tone is how a decision reads at a glance. An upgrade allowed while
// nodes went unaudited is neither green nor a pass: it is a warning, so
// the colour never says more than the audit saw.
type Tone string

const (
	ToneBlocked Tone = "blocked"
	// TonePartial: allowed, with nodes not (fully) audited.
	TonePartial Tone = "partial"
	ToneAllowed Tone = "allowed"
)

// Mark is the tone's sign before the headline.
func (t Tone) Mark() string {
	switch t {
	case ToneBlocked:
		return "✘"
	case TonePartial:
		return "⚠"
	}
	return "✔"
}

// Decision is what a change board reads first: may the upgrade go ahead,
// what blocks it, what does not, what was accepted and what nobody looked
// at. It is derived from the report alone (the gate is never recomputed)
// and every human format renders it at the top, so no format can say
// "allowed" while another lists an unaudited node.
type Decision struct {
	// Tone is the decision at a glance: one mark and one colour in every
	// format. ToneBlocked: the gate failed or the run was interrupted.
	Tone Tone
	// Headline is the decision in words: "upgrade BLOCKED", "upgrade
	// allowed", or "upgrade allowed with N nodes NOT audited"; never a bare
	// "allowed" while NotAudited is not empty.
	Headline string
	// Blockers are the findings the gate fails on (Gate.Fails), in the
	// order to fix them: a probable cause before the symptoms it explains.
	Blockers []result.Finding
	// Warnings are the unwaived findings below the gate.
	Warnings []result.Finding
	// Waived are the findings a waiver accepts.
	Waived []result.Finding
	// NotAudited are the nodes that were not fully audited: no facts, or
	// some probes that did not finish ok.
	NotAudited []Unaudited
	// NotApplicable are the nodes the audit does not apply to (Windows
	// nodes: the probes are POSIX sh), each "name: reason", the
	// Kubernetes nodes no inventory host names among them: not failures
	// and not unaudited, but never silently left out.
	NotApplicable []string
	// Skipped are the checks skipped on nodes that were audited, because
	// a fact they need was not reported, grouped by the nodes they were
	// skipped on: in a large fleet most skips share one node set, and a
	// line per check would bury the decision.
	Skipped []SkippedGroup
	// NotApplicableChecks are the checks that do not apply to audited
	// nodes by design (result.OutcomeNotApplicable: a server-only setting
	// on an agent), grouped as Skipped: counted, never a gap.
	NotApplicableChecks []SkippedGroup
	// Unjudged are the checks that apply but could not be judged on
	// audited nodes (result.OutcomeUnjudged), grouped as Skipped: what
	// made those nodes partial.
	Unjudged []SkippedGroup
	// ClusterNotAudited says why the cluster view failed ("" when it did
	// not): the Kubernetes checks were not judged, and the gate counts it
	// as it counts a node not audited.
	ClusterNotAudited string
}

// Unaudited is one node the audit did not fully see.
type Unaudited struct {
	Node   string
	Status result.NodeStatus
	// Partial: the node delivered some facts and they were judged.
	Partial bool
	// Message says why, with the fix where there is one.
	Message string
	// Probes are "id: status" of every probe that did not finish ok.
	Probes []string
}

// SkippedGroup are checks skipped on the same audited nodes.
type SkippedGroup struct {
	// NodeSet is the nodes, compressed (compressNodes).
	NodeSet string
	// Checks are sorted.
	Checks []string
}

// skippedGroups groups the checks with outcome o on audited nodes by the
// nodes they had it on, in the order of their first check.
func skippedGroups(checks []result.CheckResult, audited map[string]bool, o result.Outcome) []SkippedGroup {
	nodes := map[string][]string{}
	for _, c := range checks {
		if c.Outcome == o && audited[c.Node] {
			nodes[c.Check] = append(nodes[c.Check], c.Node)
		}
	}
	var out []SkippedGroup
	sameNodes := func(id string) string { return strings.Join(nodes[id], "\x00") }
	for _, ids := range inFirstSeenGroups(slices.Sorted(maps.Keys(nodes)), sameNodes) {
		out = append(out, SkippedGroup{NodeSet: compressNodes(nodes[ids[0]]), Checks: ids})
	}
	return out
}

// CheckGap is one kind of check left without a pass or a fail on audited
// nodes, as every human format heads and lists it.
type CheckGap struct {
	// Head is "<what> (N)", Why the half sentence after it.
	Head, Why string
	Groups    []SkippedGroup
	// Always: listed even where a format folds the others away (the
	// terminal without -v), because the gate counts it.
	Always bool
}

// CheckGaps are the checks that could not be judged, those that do not
// apply and those skipped for a fact not reported, in that order, each
// kept apart and counted (only the first lowers the coverage); the kinds
// with no check are left out.
func (d Decision) CheckGaps() []CheckGap {
	all := []CheckGap{
		{Head: "checks that could not be judged", Why: "a fact they read could not be read, so these nodes are partial", Groups: d.Unjudged, Always: true},
		{Head: "checks not applicable", Why: "by design: they read a setting of RKE2 servers only, on nodes that are not servers", Groups: d.NotApplicableChecks},
		{Head: "checks skipped on audited nodes", Why: "a fact they need was not reported", Groups: d.Skipped},
	}
	var out []CheckGap
	for _, g := range all {
		if n := skippedCount(g.Groups); n > 0 {
			g.Head = fmt.Sprintf("%s (%d)", g.Head, n)
			out = append(out, g)
		}
	}
	return out
}

// skippedCount is how many checks the groups hold.
func skippedCount(gs []SkippedGroup) int {
	n := 0
	for _, g := range gs {
		n += len(g.Checks)
	}
	return n
}

// Blocked says the upgrade may not go ahead: the gate failed or the run
// was interrupted.
func (d Decision) Blocked() bool { return d.Tone == ToneBlocked }

// Decide derives the decision from r. Interrupted runs are never allowed:
// a run cut short has not seen what it did not reach.
func Decide(r *result.Report) Decision {
	var d Decision
	for _, f := range orderFindings(r.Findings) {
		switch {
		case f.Waived != nil:
			d.Waived = append(d.Waived, f)
		case r.Gate.Fails(f):
			d.Blockers = append(d.Blockers, f)
		default:
			d.Warnings = append(d.Warnings, f)
		}
	}
	audited := map[string]bool{}
	for _, n := range r.Nodes {
		audited[n.Name] = n.Status.HasFacts()
		var probes []string
		for _, pr := range n.Probes {
			if pr.Status != result.ProbeOK {
				probes = append(probes, pr.ID+": "+string(pr.Status))
			}
		}
		if n.Status == result.StatusNotApplicable {
			d.NotApplicable = append(d.NotApplicable, n.Name+": "+n.Message)
			continue
		}
		if n.Status == result.StatusOK && len(probes) == 0 {
			continue
		}
		msg := n.Message
		if msg == "" {
			msg = n.Status.Meaning()
		}
		if msg == "" {
			msg = n.Error
		}
		d.NotAudited = append(d.NotAudited, Unaudited{Node: n.Name, Status: n.Status, Partial: n.Status.HasFacts(), Message: msg, Probes: probes})
	}
	if r.Cluster != nil {
		for _, l := range r.Cluster.NotApplicableK8sNodes() {
			d.NotApplicable = append(d.NotApplicable, l+" (not in the inventory)")
		}
	}
	d.Skipped = skippedGroups(r.Checks, audited, result.OutcomeSkip)
	d.NotApplicableChecks = skippedGroups(r.Checks, audited, result.OutcomeNotApplicable)
	d.Unjudged = skippedGroups(r.Checks, audited, result.OutcomeUnjudged)
	if c := r.Cluster; c != nil && c.Status == result.ClusterFailed {
		d.ClusterNotAudited = "the cluster view failed, the Kubernetes checks were not judged: " + c.Message
	}
	var gaps []string
	if len(d.NotAudited) > 0 {
		gaps = append(gaps, result.Count(len(d.NotAudited), "node"))
	}
	if d.ClusterNotAudited != "" {
		gaps = append(gaps, "the cluster view")
	}
	switch {
	case r.Interrupted:
		d.Tone, d.Headline = ToneBlocked, "upgrade BLOCKED: the run was interrupted"
	case !r.Gate.Passed:
		d.Tone, d.Headline = ToneBlocked, "upgrade BLOCKED"
	case len(gaps) > 0:
		d.Tone, d.Headline = TonePartial, fmt.Sprintf("upgrade allowed with %s NOT audited", strings.Join(gaps, " and "))
	default:
		d.Tone, d.Headline = ToneAllowed, "upgrade allowed"
	}
	return d
}

// unauditedLine is "name: status: message" plus the probes that did not
// finish ok, unescaped.
func unauditedLine(u Unaudited) string {
	s := u.Node + ": " + u.Status.String()
	if u.Partial {
		s += " (partially audited)"
	}
	if u.Message != "" {
		s += ": " + u.Message
	}
	if len(u.Probes) > 0 {
		s += "; probes not ok: " + strings.Join(u.Probes, ", ")
	}
	return s
}

// skippedLine is "nodes: check, check", unescaped.
func skippedLine(g SkippedGroup) string {
	return g.NodeSet + ": " + strings.Join(g.Checks, ", ")
}

// unauditedLines are the decision's not audited lines, unescaped: one per
// cause (status, message and the probes not ok) with the node set, so that
// a fleet with a whole rack down, or forty unknown host keys, still fits
// the first screen. Without withMessage, for a report that lists each
// cause's message above (the terminal's nodes not ok), the lines say the
// status alone and group by it.
func unauditedLines(us []Unaudited, withMessage bool) []string {
	var out []string
	same := func(u Unaudited) string {
		key := u.Status.String() + "\x00" + strings.Join(u.Probes, ",")
		if withMessage {
			key += "\x00" + u.Message
		}
		return key
	}
	for _, g := range inFirstSeenGroups(us, same) {
		if !withMessage {
			for i := range g {
				g[i].Message = ""
			}
		}
		if len(g) == 1 {
			out = append(out, unauditedLine(g[0]))
			continue
		}
		var nodes []string
		for _, u := range g {
			nodes = append(nodes, u.Node)
		}
		u := g[0]
		u.Node = fmt.Sprintf("%s (%d)", compressNodes(nodes), len(nodes))
		out = append(out, unauditedLine(u))
	}
	return out
}

// findingLine is a finding in the decision's short lists: "title (check)
// on nodes", unescaped.
func findingLine(f result.Finding) string {
	s := f.Title + " (" + f.Check + ")"
	if len(f.Nodes) > 0 {
		s += " on " + compressNodes(f.Nodes)
	}
	return s
}

// waiverLine is a waiver in force: what it accepts, where, until when, who
// and why (the reason names who accepted it), unescaped.
func waiverLine(f result.Finding) string {
	return f.Check + " on " + compressNodes(f.Nodes) + ", " + waiverText(f.Waived)
}

// nodeState is how a node reads in the node lists and the matrix, in one
// wording across the formats: "ok" only for a node fully audited with no
// finding on it, "N findings" for the unwaived findings naming it, and
// "not audited (status)" for a node without facts. Info findings do not
// count: the upgrade order names every node and is no fault of any. A node partly audited
// says so before its findings. A green "ok" beside failing checks is what
// this exists to prevent.
type nodeState struct {
	Word string
	OK   bool
}

// nodeStates are the nodes' states by name; d is Decide(r).
func nodeStates(r *result.Report, d Decision) map[string]nodeState {
	findings := map[string]int{}
	for _, f := range r.Findings {
		if f.Waived != nil || f.Severity == result.SeverityInfo {
			continue
		}
		for _, n := range f.Nodes {
			findings[n]++
		}
	}
	partial := map[string]bool{}
	why := map[string]string{}
	for _, u := range d.NotAudited {
		partial[u.Node] = u.Partial
		why[u.Node] = u.Status.String()
		if u.Status == result.StatusOK {
			why[u.Node] = result.Count(len(u.Probes), "probe") + " not ok"
		}
	}
	out := make(map[string]nodeState, len(r.Nodes))
	for _, n := range r.Nodes {
		var words []string
		switch p, listed := partial[n.Name]; {
		case listed && !p:
			out[n.Name] = nodeState{Word: "not audited (" + n.Status.String() + ")"}
			continue
		case listed:
			words = append(words, "partially audited ("+why[n.Name]+")")
		}
		if k := findings[n.Name]; k > 0 {
			words = append(words, result.Count(k, "finding"))
		}
		if len(words) == 0 {
			out[n.Name] = nodeState{Word: "ok", OK: true}
			continue
		}
		out[n.Name] = nodeState{Word: strings.Join(words, ", ")}
	}
	return out
}

// upperFirst is s with its first letter in upper case, for a head that
// starts a sentence in Markdown and HTML.
func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// readinessCells are the readiness rows every format shows, unescaped:
// the verdict's mark and the area, the verdict, and what decided it.
func readinessCells(r *result.Report) [][3]string {
	out := make([][3]string, len(r.Readiness))
	for i, a := range r.Readiness {
		out[i] = [3]string{a.Verdict.Mark() + " " + a.Area.Title(), a.Verdict.Words(), a.Summary()}
	}
	return out
}

// readinessHead is the readiness table's header, in every format.
var readinessHead = []string{"Area", "Verdict", "What decided it"}
