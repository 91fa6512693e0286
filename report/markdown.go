package report

import (
	"bytes"
	"cmp"
	"fmt"
	"html"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/fleet-audit/fleet-audit/result"
)

var _ Formatter = (*Markdown)(nil)

// Markdown is the report pasted into a merge request, an issue or a change
// ticket. It sticks to what GitHub and GitLab both render: pipe tables,
// blockquotes and <details>. Node data is escaped so that it can neither add
// a table column, nor start a link, image, heading or HTML tag, nor leave the
// code span it is shown in.
type Markdown struct{}

func (m *Markdown) Format(w io.Writer, r *result.Report) error {
	var b bytes.Buffer
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	fs := orderFindings(r.Findings)
	failing := failingNodes(r)
	d := Decide(r)
	mdHeader(p, r, d)
	p("%s", mdReadiness(r))
	mdDecision(p, r, d, failing)
	mdWarnings(p, r.Warnings)
	mdCauses(p, fs, failing)
	mdFindings(p, fs, failing)
	mdNodesNotOK(p, r.Nodes)
	if r.Cluster != nil {
		mdCluster(p, r.Cluster, r.Partial())
	}
	mdDrift(p, r.Drift)
	mdNodes(p, r, nodeStates(r, d))
	_, err := w.Write(bytes.TrimRight(b.Bytes(), "\n"))
	if err == nil {
		_, err = io.WriteString(w, "\n")
	}
	return err
}

// mdHeader is the title and the one line a reviewer reads first: the
// decision, the gate, the fleet's size, the target, when the run was and with what.
func mdHeader(p func(string, ...any), r *result.Report, d Decision) {
	if r.Inventory != "" {
		p("# fleet-audit report: %s\n\n", mdText(r.Inventory))
	} else {
		p("# fleet-audit report\n\n")
	}
	gate := "**Gate: passed**"
	if !r.Gate.Passed {
		gate = fmt.Sprintf("**Gate: FAILED (exit %d)**", r.Gate.ExitCode)
		if len(r.Gate.Reasons) > 0 {
			gate += ": " + mdText(strings.Join(r.Gate.Reasons, "; "))
		}
	}
	line := []string{fmt.Sprintf("**%s %s** · %s", d.Tone.Mark(), d.Headline, gate), fleetLine(r)}
	if r.TargetVersion != "" {
		line = append(line, "target "+mdCode(r.TargetVersion, false))
	}
	for _, part := range r.Change.Parts() {
		line = append(line, mdText(part))
	}
	for _, part := range r.Parts() {
		line = append(line, mdText(part))
	}
	if at := ranAt(r); at != "" {
		ran := "ran " + at
		if d := runTime(r); d != "" {
			ran += " (" + d + ")"
		}
		line = append(line, ran)
	}
	line = append(line, mdText(strings.TrimSpace(r.Tool.Name+" "+r.Tool.Version)))
	if r.Interrupted {
		line = append(line, "**interrupted**: not every node was audited")
	}
	p("%s\n", strings.Join(line, " · "))
}

// mdDecision is the rest of the decision block under the summary line,
// which opens with the decision (Decide) and the gate: the nodes not
// audited right under it, the blockers with fix
// and rollout, then what does not block, waivers in force and skipped
// checks. A probable cause is its blocker's title, said here once.
func mdDecision(p func(string, ...any), r *result.Report, d Decision, failing map[string]bool) {
	list := func(head string, items []string) {
		if len(items) == 0 {
			return
		}
		p("\n%s\n\n", head)
		for _, it := range items {
			p("- %s\n", it)
		}
	}
	var na []string
	for _, l := range unauditedLines(d.NotAudited, true) {
		na = append(na, mdText(l))
	}
	list(fmt.Sprintf("**Not audited (%d)**: the decision does not cover what the audit did not see", len(d.NotAudited)), na)
	if d.ClusterNotAudited != "" {
		p("\n**Cluster NOT audited**: %s\n", mdText(d.ClusterNotAudited))
	}
	var napp []string
	for _, l := range d.NotApplicable {
		napp = append(napp, mdText(l))
	}
	list(fmt.Sprintf("**Not applicable (%d)**: not audited on purpose", len(d.NotApplicable)), napp)
	if len(d.Blockers) > 0 {
		p("\n**Blockers (%d)**, in the order to fix them:\n\n", len(d.Blockers))
		for i, f := range d.Blockers {
			title := "**" + mdText(f.Title) + "**"
			if f.Cause != nil {
				title = mdCauseHeadline(f.Cause, 0)
			}
			p("%d. %s %s", i+1, title, mdCode(f.Check, false))
			if len(f.Nodes) > 0 {
				p(" on %s", mdCode(compressNodes(f.Nodes), false))
			}
			if f.Cause != nil {
				p("  \n   %s", mdText(causeStats(f.Cause)))
			}
			if f.Remediation != "" {
				p("  \n   Fix: %s", mdText(f.Remediation))
			}
			if len(f.Rollout) > 0 {
				p("  \n   Rollout: %s", mdText(rolloutLine(rolloutSteps(f.Rollout, failing))))
			}
			p("\n")
		}
	}
	var warn, waived []string
	for _, f := range d.Warnings {
		warn = append(warn, mdText(f.Severity.String()+": "+findingLine(f)))
	}
	for _, f := range d.Waived {
		waived = append(waived, mdText(waiverLine(f)))
	}
	list(fmt.Sprintf("**Not blocking (%d):**", len(warn)), warn)
	list(fmt.Sprintf("**Waivers in force (%d):**", len(waived)), waived)
	for _, gap := range d.CheckGaps() {
		var lines []string
		for _, g := range gap.Groups {
			lines = append(lines, mdText(skippedLine(g)))
		}
		list(fmt.Sprintf("**%s**, %s:", mdText(upperFirst(gap.Head)), mdText(gap.Why)), lines)
	}
}

// mdReadiness is the readiness table (Report.Readiness), "" without one.
func mdReadiness(r *result.Report) string {
	if len(r.Readiness) == 0 {
		return ""
	}
	var rows [][]string
	for _, c := range readinessCells(r) {
		verdict := mdText(c[1])
		if c[1] != strings.ToLower(c[1]) {
			verdict = "**" + verdict + "**"
		}
		rows = append(rows, []string{mdText(c[0]), verdict, mdText(c[2])})
	}
	return "\n" + strings.Join(mdTable(readinessHead, rows), "\n") + "\n"
}

// mdWarnings sets each of the run's warnings apart as its own blockquote.
func mdWarnings(p func(string, ...any), warnings []string) {
	for _, w := range warnings {
		p("\n> **Warning:** %s\n", mdText(w))
	}
}

// mdCauses writes a blockquote above the findings table for every unwaived
// correlation finding: the cause is what a reviewer must read even if they
// read nothing else. A waived one was accepted and is in the details under
// the table instead.
func mdCauses(p func(string, ...any), fs []result.Finding, failing map[string]bool) {
	for _, f := range fs {
		if f.Kind == result.KindCorrelation && f.Waived == nil {
			mdCause(p, f, failing)
		}
	}
}

// mdCauseHeadline is a cause's bold line, "**Probable cause of `check`:
// `fact=value`**", the pair cut to max runes when max is positive.
func mdCauseHeadline(c *result.Cause, max int) string {
	verdict := "Probable"
	if !c.Exact {
		verdict = "Likely"
	}
	var symptoms []string
	for _, s := range c.SymptomChecks() {
		symptoms = append(symptoms, mdCode(s, false))
	}
	return fmt.Sprintf("**%s cause of %s: %s**", verdict, strings.Join(symptoms, " and "), mdCode(truncate(c.Fact+"="+c.Value, max), false))
}

// mdCause is one correlation finding's blockquote.
func mdCause(p func(string, ...any), f result.Finding, failing map[string]bool) {
	const q = "> "
	p("\n")
	if f.Cause != nil {
		// The headline is the blocker's title in the decision above.
		p("> **Evidence of the %s** %s\n", f.Cause.Verdict(), mdCode(f.Cause.Fact+"="+f.Cause.Value, false))
		p(">\n> %s\n", mdLine(causeStats(f.Cause)))
		if cands := candidateRows(f.Cause); len(cands) > 0 {
			rows := make([][]string, len(cands))
			for i, c := range cands {
				rows[i] = []string{mdCode(c.Pair, true), c.Failing, c.Healthy, c.Score}
			}
			mdBlock(p, q, mdTable([]string{"Candidate", "Failing nodes with it", "Healthy nodes with it", "Score"}, rows)...)
		}
	} else {
		p("> **%s**\n", mdText(f.Title))
	}
	if len(f.Nodes) > 0 {
		mdBlock(p, q, "Nodes: "+mdCode(compressNodes(f.Nodes), false))
	}
	if len(f.Evidence) > 0 {
		var items []string
		for _, e := range f.Evidence {
			items = append(items, "- "+mdLine(e))
		}
		mdBlock(p, q, items...)
	}
	mdFixRollout(p, q, f, failing)
}

// mdFindings is the findings table and, under it, the details a row cannot
// carry.
func mdFindings(p func(string, ...any), fs []result.Finding, failing map[string]bool) {
	p("\n## Findings\n")
	if len(fs) == 0 {
		mdBlock(p, "", "No findings.")
		return
	}
	rows := make([][]string, 0, len(fs))
	for _, f := range fs {
		rows = append(rows, mdFindingRow(f))
	}
	mdBlock(p, "", mdTable([]string{"Severity", "Check", "Nodes", "Summary"}, rows)...)
	for _, f := range fs {
		mdFindingDetails(p, f, failing)
	}
}

// mdFindingRow is a finding's row of the findings table.
func mdFindingRow(f result.Finding) []string {
	nodes := "fleet"
	if len(f.Nodes) > 0 {
		nodes = mdCode(compressNodes(f.Nodes), true)
	}
	sev := f.Severity.String()
	if f.Severity.AtLeast(result.SeverityCritical) { // unknown too: see result.Severity
		sev = "**" + sev + "**"
	}
	summary := mdText(f.Summary)
	if f.Title != "" && f.Title != f.Summary {
		summary = "**" + mdText(f.Title) + "**<br>" + summary
	}
	if f.Waived != nil {
		sev = "*waived* (" + f.Severity.String() + ")"
		summary = "**Waived** " + mdText(waiverText(f.Waived)) + "<br>" + summary
	}
	return []string{sev, mdCode(f.Check, true), nodes, summary}
}

// mdNodesNotOK lists the nodes whose status is not ok, with why; it is left
// out when every node is ok. The nodes not ok for the same cause share a
// row (notOKGroups), in a fleet of more than foldNodesAbove nodes and
// wherever two nodes share a cause; each node's own error is in its
// section below.
func mdNodesNotOK(p func(string, ...any), nodes []result.Node) {
	groups := notOKGroups(nodes)
	if len(groups) == 0 {
		return
	}
	p("\n## Nodes not ok\n")
	folded := len(nodes) > foldNodesAbove
	for _, g := range groups {
		folded = folded || len(g.Nodes) > 1
	}
	var rows [][]string
	for _, g := range groups {
		if folded {
			rows = append(rows, []string{mdCode(compressNodes(g.Nodes), true), fmt.Sprint(len(g.Nodes)), mdCode(g.Status.String(), true), mdText(g.Text)})
		} else {
			rows = append(rows, []string{mdText(g.Nodes[0]), mdCode(g.Status.String(), true), mdText(g.Text)})
		}
	}
	head := []string{"Node", "Status", "Message"}
	if folded {
		head = []string{"Nodes", "Count", "Status", "Message"}
	}
	mdBlock(p, "", mdTable(head, rows)...)
}

// mdCluster is the cluster section: how the cluster-scoped probes went, on
// which server, the cluster facts and the Kubernetes nodes nobody audited.
func mdCluster(p func(string, ...any), c *result.Cluster, limited bool) {
	p("\n## Cluster\n")
	head := "Cluster-scoped probes: " + mdCode(string(c.Status), false)
	if c.Node != "" {
		head += " on " + mdCode(c.Node, false)
	}
	mdBlock(p, "", head)
	if c.Message != "" {
		mdBlock(p, "", mdLine(c.Message))
	}
	if attempts := clusterAttempts(c); len(attempts) > 0 {
		rows := make([][]string, len(attempts))
		for i, a := range attempts {
			rows[i] = []string{mdCode(a.Node, true), mdCode(string(a.Outcome), true), mdText(a.Reason)}
		}
		mdBlock(p, "", mdTable([]string{"Server asked", "Outcome", "Why no cluster view"}, rows)...)
	}
	if l := mdProbes(c.Probes); len(l) > 0 {
		mdBlock(p, "", l...)
	}
	if keys := clusterFacts(c); len(keys) > 0 {
		rows := make([][]string, len(keys))
		for i, k := range keys {
			rows[i] = []string{mdCode(k, true), mdCode(c.Facts[k], true)}
		}
		mdBlock(p, "", mdTable([]string{"Fact", "Value"}, rows)...)
	}
	if extra := c.UnjoinedK8sNodes(); len(extra) > 0 {
		var names []string
		for _, n := range extra {
			names = append(names, mdCode(n, false))
		}
		label := "not in the inventory (not audited)"
		if limited {
			label = result.UnjoinedLabel(true)
		}
		mdBlock(p, "", "Kubernetes nodes "+label+": "+strings.Join(names, ", "))
	}
}

// mdDrift is the drift table, role rows folded into their fleet row.
func mdDrift(p func(string, ...any), drift []result.Drift) {
	p("\n## Drift\n")
	if len(drift) == 0 {
		mdBlock(p, "", "Every audited node has the same value for every compared fact.")
		return
	}
	folded := foldDrift(drift)
	rows := make([][]string, 0, len(folded))
	for _, dr := range folded {
		rows = append(rows, mdDriftRow(dr.d, false))
	}
	mdBlock(p, "", mdTable([]string{"Fact", "Majority value", "Outliers"}, rows)...)
	if note := foldedNote(folded); note != "" {
		mdBlock(p, "", note+"; the JSON report keeps every scope.")
	}
}

// mdDriftRow is the columns of the issue: fact, majority value, outliers.
// The fleet is the default scope; a narrower one (a role) is named with the
// fact, since the same fact can drift in both. In brief (the summary's
// rows) values and node lists are cut to the summary's bounds and each
// outlier value says how many nodes hold it.
func mdDriftRow(d result.Drift, brief bool) []string {
	valueMax, nodesMax := 0, 0
	if brief {
		valueMax, nodesMax = summaryValueMax, summaryNodesMax
	}
	fact := mdCode(d.Fact, true)
	if d.Scope != "" && d.Scope != result.ScopeFleet {
		fact += " (" + mdText(string(d.Scope)) + ")"
	}
	var out []string
	for _, g := range d.Groups {
		if g.Value != d.Majority {
			o := mdCode(truncate(g.Value, valueMax), true) + ": " + mdCode(truncate(compressNodes(g.Nodes), nodesMax), true)
			if brief {
				o += fmt.Sprintf(" (%d)", len(g.Nodes))
			}
			out = append(out, o)
		}
	}
	majority := fmt.Sprintf("%s (%s)", mdCode(truncate(d.Majority, valueMax), true), result.Count(majorityCount(d), "node"))
	return []string{fact, majority, strings.Join(out, "<br>")}
}

// mdNodes is a collapsed block per node with its facts, outliers marked.
// In a fleet that alikeNodes folds, the groups of alike nodes come first,
// each with the facts its nodes share, listed once (mdGroups), and a
// node's block lists only the facts that differ inside its group: the
// blocks would otherwise repeat the same facts once per node.
func mdNodes(p func(string, ...any), r *result.Report, states map[string]nodeState) {
	p("\n## Nodes\n")
	odd := outliers(r.Drift)
	g := alikeNodes(r, odd)
	var varies []map[string]bool // by group: the facts that differ inside it
	var sets []string            // by group: its node set, cut to fit
	if g.Folded {
		varies = mdGroups(p, r, g, odd)
		for j := range g.Groups {
			sets = append(sets, truncate(g.nodeSet(r.Nodes, j), nodeSetMax))
		}
	}
	// A cause shared by several nodes is said once, in the nodes not ok;
	// a node's block keeps its own error.
	sharedCause := map[string]bool{}
	for _, ng := range notOKGroups(r.Nodes) {
		for _, name := range ng.Nodes {
			sharedCause[name] = len(ng.Nodes) > 1
		}
	}
	for i, n := range r.Nodes {
		var meta []string
		if n.Address != "" {
			meta = append(meta, "address "+mdCode(n.Address, false))
		}
		if len(n.Roles) > 0 {
			meta = append(meta, "roles "+mdText(strings.Join(n.Roles, ", ")))
		}
		meta = append(meta, fmt.Sprintf("%.1fs", n.DurationSeconds))
		keys := slices.Sorted(maps.Keys(n.Facts))
		inGroup := 0
		if j := g.GroupOf[i]; len(g.Groups[j]) > 1 {
			keys = slices.DeleteFunc(keys, func(k string) bool { return !varies[j][k] })
			inGroup = len(n.Facts) - len(keys)
			meta = append(meta, "group "+mdCode(sets[j], false))
		}
		mdDetails(p, oneLine(n.Name)+" ("+states[n.Name].Word+")", func() {
			mdBlock(p, "", "Status: "+mdCode(n.Status.String(), false)+" · "+strings.Join(meta, " · "))
			if n.Message != "" && !sharedCause[n.Name] {
				mdBlock(p, "", mdLine(n.Message))
			}
			if n.Error != "" {
				mdBlock(p, "", "Error: "+mdCode(n.Error, false))
			}
			if l := mdProbes(n.Probes); len(l) > 0 {
				mdBlock(p, "", l...)
			}
			if inGroup > 0 {
				mdBlock(p, "", fmt.Sprintf("%s as in its group above; those that differ inside it:", result.Count(inGroup, "fact")))
			}
			if len(keys) == 0 {
				if inGroup == 0 {
					mdBlock(p, "", "No facts.")
				}
				return
			}
			var rows [][]string
			for _, k := range keys {
				v := mdCode(n.Facts[k], true)
				if why := odd[k][n.Name]; len(why) > 0 {
					v += " ≠ " + mdText(strings.Join(why, "; "))
				}
				rows = append(rows, []string{mdCode(k, true), v})
			}
			mdBlock(p, "", mdTable([]string{"Fact", "Value"}, rows)...)
		})
	}
}

// mdGroups is the table of alikeNodes' groups, what sets each apart (its
// outliers), and a collapsed block per group of more than one node with
// the facts its nodes share. It returns, by group, the facts that differ
// inside it, which the nodes' own blocks list.
func mdGroups(p func(string, ...any), r *result.Report, g alikeGroups, odd map[string]map[string][]string) []map[string]bool {
	mdBlock(p, "", fmt.Sprintf("%s in %s: the nodes of a role with the same status and the same value of every fact that differs are one group. "+
		"A group's shared facts are listed once, below the table; each node's block holds what differs inside its group.",
		result.Count(len(r.Nodes), "node"), result.Count(len(g.Groups), "group")))
	varies := make([]map[string]bool, len(g.Groups))
	var rows [][]string
	for j, members := range g.Groups {
		n := r.Nodes[members[0]]
		var outl []string
		for _, k := range g.Keys {
			if why := odd[k][n.Name]; len(why) > 0 {
				outl = append(outl, mdCode(k, true)+" "+mdCode(n.Facts[k], true)+" ≠ "+mdText(strings.Join(why, "; ")))
			}
		}
		rows = append(rows, []string{mdCode(truncate(g.nodeSet(r.Nodes, j), nodeSetMax), true), fmt.Sprint(len(members)),
			mdText(strings.Join(n.Roles, ", ")), mdCode(n.Status.String(), true), cmp.Or(strings.Join(outl, "<br>"), "—")})
	}
	mdBlock(p, "", mdTable([]string{"Nodes", "Count", "Roles", "Status", "Differs from the majority"}, rows)...)
	for j, members := range g.Groups {
		varies[j] = map[string]bool{}
		if len(members) == 1 {
			continue
		}
		var facts [][]string
		for _, k := range g.Keys {
			val, ok, values := g.groupValue(r.Nodes, j, k)
			switch {
			case values > 1:
				varies[j][k] = true
				facts = append(facts, []string{mdCode(k, true), "*" + result.Count(values, "value") + "*"})
			case ok:
				facts = append(facts, []string{mdCode(k, true), mdCode(val, true)})
			}
		}
		set := g.nodeSet(r.Nodes, j)
		mdDetails(p, fmt.Sprintf("%s (%s, %s)", oneLine(truncate(set, nodeSetMax)), result.Count(len(members), "node"), r.Nodes[members[0]].Status), func() {
			mdBlock(p, "", "Nodes: "+mdCode(set, false))
			if len(facts) > 0 {
				mdBlock(p, "", mdTable([]string{"Fact", "Value"}, facts)...)
			}
		})
	}
	return varies
}

// mdBlock writes one Markdown block (a paragraph, a list, a table) after a
// blank line, every line behind prefix ("> " inside a blockquote). Every
// block is set off by a blank line, even where CommonMark would not need
// one: without it a table right under a list is read as more text of the
// last item (GFM), and GitLab wants tables and the content of <details>
// apart from what surrounds them.
func mdBlock(p func(string, ...any), prefix string, lines ...string) {
	p("%s\n", strings.TrimRight(prefix, " "))
	for _, l := range lines {
		p("%s%s\n", prefix, l)
	}
}

// mdTable is a pipe table's lines; the cells must already be escaped for a
// table (mdText, or mdCode with inTable).
func mdTable(header []string, rows [][]string) []string {
	row := func(cells []string) string { return "| " + strings.Join(cells, " | ") + " |" }
	rule := make([]string, len(header))
	for i := range rule {
		rule[i] = "---"
	}
	out := []string{row(header), row(rule)}
	for _, r := range rows {
		out = append(out, row(r))
	}
	return out
}

// mdDetails writes a collapsed <details> block whose body is Markdown.
// summary is plain text: inside an HTML block Markdown is not parsed, so it
// is escaped as HTML. GitHub renders Markdown inside only after a blank line
// below </summary>, and GitLab only when the body is set off by blank lines
// above and below, which the blocks of body and the blank line before
// </details> provide.
func mdDetails(p func(string, ...any), summary string, body func()) {
	p("\n<details><summary>%s</summary>\n", html.EscapeString(summary))
	body()
	p("\n</details>\n")
}

// mdProbes is a list item for every probe that did not succeed.
func mdProbes(probes []result.ProbeRun) []string {
	var out []string
	for _, pr := range probes {
		if pr.Status == "ok" {
			continue
		}
		l := fmt.Sprintf("- probe %s: %s (exit %d)", mdCode(pr.ID, false), mdText(string(pr.Status)), pr.ExitCode)
		if pr.Stderr != "" {
			l += ": " + mdCode(pr.Stderr, false)
		}
		out = append(out, l)
	}
	return out
}

// mdFixRollout writes a finding's fix and the order to roll it out in, the
// same in the cause's blockquote (prefix "> ") and in a details block
// (prefix "").
func mdFixRollout(p func(string, ...any), prefix string, f result.Finding, failing map[string]bool) {
	if f.Remediation != "" {
		mdBlock(p, prefix, "Fix: "+mdText(f.Remediation))
	}
	if len(f.Rollout) > 0 {
		mdBlock(p, prefix, "Rollout:")
		mdBlock(p, prefix, mdRollout(f.Rollout, failing)...)
	}
}

// mdRollout is a rollout as Markdown ordered-list items, node names in
// code spans; the order is the plan's.
func mdRollout(steps []result.RolloutStep, failing map[string]bool) []string {
	var out []string
	for _, s := range rolloutSteps(steps, failing) {
		names := make([]string, len(s.Nodes))
		for i, n := range s.Nodes {
			names[i] = mdCode(n, false)
		}
		// The label begins the item's content, where "# x" would be a heading.
		l := fmt.Sprintf("%d. %s: %s", s.N, mdLine(s.label()), strings.Join(names, ", "))
		if s.FailingFirst {
			l += " (failing first)"
		}
		out = append(out, l)
	}
	return out
}

// mdFindingDetails writes a collapsed block under the findings table for a
// finding that carries more than its row can: who waived it and why, and
// the order to roll its fix out in, next to the fix itself. Unwaived
// correlation findings have all this in their blockquote already.
func mdFindingDetails(p func(string, ...any), f result.Finding, failing map[string]bool) {
	if f.Waived == nil && (f.Kind == result.KindCorrelation || len(f.Rollout) == 0) {
		return
	}
	what := "rollout"
	if f.Waived != nil {
		what = "waived"
	}
	mdDetails(p, oneLine(f.Check)+": "+what, func() {
		if w := f.Waived; w != nil {
			mdBlock(p, "", fmt.Sprintf("**Waived** until %s by %s: %s", mdCode(w.Expires, false), mdCode(w.Source, false), mdText(w.Reason)))
			if scope := w.Scope(); scope != "" {
				mdBlock(p, "", "The waiver covers "+mdText(scope)+".")
			}
		}
		mdFixRollout(p, "", f, failing)
	})
}

// mdText escapes s for a table cell or the middle of a line: one line
// (breaks become <br>), control characters visible, Markdown inert. Every
// piece of inline syntax that could make a link, an image, emphasis, a code
// span, math or a new table cell is backslash-escaped, the backslash itself
// first so that an escape in the input cannot cancel one of ours. < and >
// become entities, so no tag from a node is ever in the file (GitHub and
// GitLab pass some raw HTML through); & is escaped only where it could start
// an entity, so that "a && b" stays readable in the source.
func mdText(s string) string {
	s = visible(s, "\n")
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '\n':
			b.WriteString("<br>")
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '&':
			if i+1 < len(s) && (s[i+1] == '#' || isLetter(s[i+1])) {
				b.WriteByte('\\')
			}
			b.WriteByte(c)
		case '\\', '|', '`', '*', '_', '[', ']', '~', '$':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '@':
			// A bare e-mail address is an autolink too, and no escape
			// stops that one: a zero-width space before the @ does.
			if i > 0 && isEmailLocal(s[i-1]) {
				b.WriteString("&#8203;")
			}
			b.WriteByte(c)
		case ':', '.':
			// GFM turns http://, ftp://, mailto:, xmpp: and www. in plain
			// text into links: a node's text must not become something
			// to click in a change ticket. An escaped : or . renders the
			// same and is no longer an autolink.
			if autolinkAt(s, i) {
				b.WriteByte('\\')
			}
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// autolinkAt reports whether the : or . at s[i] completes a GFM extended
// autolink trigger: a scheme's "://" or "mailto:"/"xmpp:", or "www.".
func autolinkAt(s string, i int) bool {
	before := strings.ToLower(s[:i])
	if s[i] == '.' {
		return strings.HasSuffix(before, "www")
	}
	return strings.HasPrefix(s[i+1:], "/") || strings.HasSuffix(before, "mailto") || strings.HasSuffix(before, "xmpp")
}

// isEmailLocal: c may end the local part of an address GFM autolinks.
func isEmailLocal(c byte) bool {
	return isLetter(c) || c >= '0' && c <= '9' || strings.IndexByte(".+-_", c) >= 0
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// mdLine is mdText for text that begins a line (a list item, a paragraph):
// a leading character that could open a block there (heading, list,
// thematic break) is written as a character reference, which CommonMark
// never reads as structure; a backslash would not do for a digit.
func mdLine(s string) string {
	s = mdText(s)
	if s != "" && strings.ContainsRune("#+-=0123456789", rune(s[0])) {
		s = fmt.Sprintf("&#%d;", s[0]) + s[1:]
	}
	return s
}

// mdCode shows s verbatim in a code span that it cannot close: the fence is
// one backtick longer than the longest run of backticks in s, and line
// breaks are shown as \n so the span (and the table row) stays on one line.
// In a table a pipe still splits the cell even inside a code span (GFM), so
// it is escaped there; GFM removes that backslash before rendering.
//
// A code span shows < literally (entities too), so a value with a < would
// sit in the source as what looks like raw markup; such a value is written
// as <code> around escaped text instead, which renders the same and never
// puts a tag from a node into the file.
func mdCode(s string, inTable bool) string {
	s = visible(s, "")
	if s == "" {
		return "*(empty)*"
	}
	if strings.Contains(s, "<") {
		return "<code>" + mdText(s) + "</code>"
	}
	if inTable {
		s = strings.ReplaceAll(s, "|", `\|`)
	}
	run, longest := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			if run > longest {
				longest = run
			}
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") || strings.HasPrefix(s, " ") || strings.HasSuffix(s, " ") {
		// CommonMark strips one space on each side when both are present.
		s = " " + s + " "
	}
	return fence + s + fence
}
