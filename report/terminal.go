package report

import (
	"bytes"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/fleet-audit/fleet-audit/result"
)

var _ Formatter = (*Terminal)(nil)

// Terminal is the summary printed after a run: what is wrong, where, the
// probable cause, how the nodes differ and the verdict, fitted to
// Options.Width, with one line per finding and per drifted fact so that an
// incident reads at a glance; Options.Verbose adds the summaries. It is the
// only format that may colour its output, and only with the SGR sequences
// defined here: every string that came from a node is passed through
// visible first, so a fact value cannot carry an escape sequence to the
// operator's terminal.
type Terminal struct {
	Options Options
}

// SGR sequences, the only escape sequences this formatter ever writes.
const (
	sgrReset  = "\x1b[0m"
	sgrBold   = "\x1b[1m"
	sgrRed    = "\x1b[1;31m"
	sgrYellow = "\x1b[33m"
	sgrCyan   = "\x1b[36m"
	sgrGreen  = "\x1b[1;32m"
	sgrDim    = "\x1b[2m"
)

const (
	// minWidth keeps lists legible when the caller passes a tiny width.
	minWidth = 40
	// maxValue caps a single fact value in a list cell; the full value is
	// in the HTML and JSON reports.
	maxValue = 40
)

func (t *Terminal) Format(w io.Writer, r *result.Report) error {
	width := t.Options.Width
	if width == 0 {
		width = DefaultWidth
	}
	if width < minWidth {
		width = minWidth
	}
	p := &termPrinter{color: t.Options.Color, width: width, verbose: t.Options.Verbose}
	p.header(r)
	p.nodes(r)
	p.probes(r)
	p.cluster(r)
	p.findings(r)
	p.drift(r, t.Options.MaxDriftRows)
	p.decision(r)
	// Written in one piece so that a write error is reported once and a
	// reader of a pipe never sees half a list.
	_, err := w.Write(p.buf.Bytes())
	return err
}

type termPrinter struct {
	buf     bytes.Buffer
	color   bool
	width   int
	verbose bool
}

func (p *termPrinter) paint(sgr, s string) string {
	if !p.color || s == "" {
		return s
	}
	return sgr + s + sgrReset
}

func (p *termPrinter) line(s string) { p.buf.WriteString(s + "\n") }

// header is two lines: what ran against what and when, then the fleet.
func (p *termPrinter) header(r *result.Report) {
	var first []string
	if tool := strings.TrimSpace(r.Tool.Name + " " + r.Tool.Version); tool != "" {
		first = append(first, oneLine(tool))
	}
	if r.Inventory != "" {
		first = append(first, "inventory "+oneLine(r.Inventory))
	}
	if r.TargetVersion != "" {
		first = append(first, "target "+oneLine(r.TargetVersion))
	}
	for _, part := range r.Change.Parts() {
		first = append(first, oneLine(part))
	}
	for _, part := range r.Parts() {
		first = append(first, oneLine(part))
	}
	if at := ranAt(r); at != "" {
		if d := runTime(r); d != "" {
			at += " (" + d + ")"
		}
		first = append(first, at)
	}
	p.wrapped(0, 2, wrapTiers[modeParts], strings.Join(first, " · "))
	fleet := fleetLine(r)
	var red []string
	if r.Interrupted {
		red = append(red, "INTERRUPTED")
	}
	// Always counted: a failed probe skips checks, and a skip must not
	// pass unseen; -v lists them (probes).
	if runs, nodes := notOKProbes(r); runs > 0 {
		s := fmt.Sprintf("%s not ok on %s", result.Count(runs, "probe"), result.Count(nodes, "node"))
		if !p.verbose {
			s += " (-v lists them)"
		}
		red = append(red, s)
	}
	for _, s := range red {
		fleet += " · " + s
	}
	p.wrapped(0, 2, wrapTiers[modeParts], fleet, paintIf{sgrRed, red})
	for _, w := range r.Warnings {
		for _, l := range wrapUnits("WARNING: "+oneLine(w), p.width, 2, wrapTiers[modeWords]) {
			p.line(p.paint(sgrRed, l))
		}
	}
}

func (p *termPrinter) title(s string) {
	p.line("")
	p.line(p.paint(sgrBold, s))
}

// nodes lists only the nodes that are not ok, a line for each cause
// (notOKGroups) with the status and the message that says what to do, under
// the node set it concerns: the healthy ones are the count in the header,
// a long list of "ok" would hide the few that matter, and forty nodes with
// unknown host keys need the instruction once. Where the nodes' own errors
// differ, -v lists them.
func (p *termPrinter) nodes(r *result.Report) {
	groups := notOKGroups(r.Nodes)
	if len(groups) == 0 {
		return
	}
	rows := make([][]string, len(groups))
	count := 0
	for i, g := range groups {
		text := g.Text
		if !g.Same && !p.verbose {
			text += " (-v lists each node's error)"
		}
		rows[i] = []string{oneLine(nodesList(g.Nodes)), g.Status.String(), oneLine(text)}
		count += len(g.Nodes)
	}
	p.title(fmt.Sprintf("Nodes not ok (%d)", count))
	t := p.fit([]column{
		{title: "NODE", min: 10, mode: modeList},
		{title: "STATUS", min: 11, mode: modeTrunc, paint: func(string) string { return sgrRed }},
		{title: "MESSAGE", min: 12, mode: modeWords},
	}, 2, false, rows)
	for i, g := range groups {
		p.row(t, rows[i])
		if g.Same || !p.verbose {
			continue
		}
		// Under the row at full width: an error is a sentence with paths
		// and fingerprints, too long for the message column.
		for j, name := range g.Nodes {
			e := g.Errors[j]
			if !strings.HasPrefix(e, "ssh "+name+" ") {
				e = name + ": " + e
			}
			p.detail(4, 2, "- "+e)
		}
	}
}

// nodesList is a node set as the lists name it: the node alone, or the
// folded set and its size.
func nodesList(nodes []string) string {
	if len(nodes) == 1 {
		return nodes[0]
	}
	return nodesHead(nodes)
}

// notOKProbes counts the node probe runs that did not finish ok and the
// nodes they ran on.
func notOKProbes(r *result.Report) (runs, nodes int) {
	for _, n := range r.Nodes {
		before := runs
		for _, pr := range n.Probes {
			if pr.Status != result.ProbeOK {
				runs++
			}
		}
		if runs > before {
			nodes++
		}
	}
	return runs, nodes
}

// probes is --verbose's list of every node probe run that did not finish
// ok, one a line: the node's status says that something failed, this says
// which probe and how.
func (p *termPrinter) probes(r *result.Report) {
	if !p.verbose {
		return
	}
	var rows [][]string
	for _, n := range r.Nodes {
		for _, pr := range n.Probes {
			if pr.Status != result.ProbeOK {
				rows = append(rows, []string{oneLine(n.Name), oneLine(pr.ID), oneLine(string(pr.Status)), fmt.Sprint(pr.ExitCode), oneLine(pr.Stderr)})
			}
		}
	}
	if len(rows) == 0 {
		return
	}
	p.title(fmt.Sprintf("Probes not ok (%d)", len(rows)))
	t := p.fit([]column{
		{title: "NODE", min: 10, mode: modeIdent},
		{title: "PROBE", min: 5, mode: modeIdent},
		{title: "STATUS", min: 6, mode: modeTrunc, paint: func(string) string { return sgrRed }},
		{title: "EXIT", min: 4, mode: modeTrunc},
		{title: "STDERR", min: 6, mode: modeWords},
	}, 2, false, rows)
	for _, row := range rows {
		p.row(t, row)
	}
}

// cluster is one line: where the cluster-scoped probes ran and how it
// went, the two facts an operator asks first, and the Kubernetes nodes the
// audit could not see. The full set is in the other formats.
func (p *termPrinter) cluster(r *result.Report) {
	c := r.Cluster
	if c == nil {
		return
	}
	status := oneLine(string(c.Status))
	paints := []paintIf{{sgrBold, []string{"Cluster:"}}}
	if c.Status != result.ClusterOK {
		paints = append(paints, paintIf{sgrYellow, []string{"Cluster: " + status}})
	}
	s := "Cluster: " + status
	if c.Node != "" {
		s += " on " + oneLine(c.Node)
	}
	if c.Message != "" {
		s += ": " + oneLine(c.Message)
	}
	for _, k := range []string{"cluster.api", "cluster.server_version"} {
		if v, ok := c.Facts[k]; ok {
			s += " · " + k + "=" + truncate(oneLine(v), maxValue)
		}
	}
	if extra := c.UnjoinedK8sNodes(); len(extra) > 0 {
		s += fmt.Sprintf(" · %s %s: %s", result.Count(len(extra), "Kubernetes node"), result.UnjoinedLabel(r.Partial()), oneLine(compressNodes(extra)))
	}
	p.line("")
	p.wrapped(0, 2, wrapTiers[modeParts], s, paints...)
}

// findingGroup is the findings of one tier (a severity, or waived) that
// concern the same nodes.
type findingGroup struct {
	nodes    []string
	findings []result.Finding
}

// groupFindings groups findings the way clush -b groups identical output:
// by node set, so that a cause, its symptom and the check that names it,
// which fail on the same nodes, read as one block under one node set. The
// tier is part of the key so that no warning is listed above a critical
// finding of another node set, and an accepted risk stays after every
// finding that counts. Groups keep the order of their first finding.
func groupFindings(fs []result.Finding) []findingGroup {
	var groups []findingGroup
	index := map[string]int{}
	for _, f := range fs {
		tier := f.Severity.String()
		if f.Waived != nil {
			tier = "waived"
		}
		sorted := append([]string(nil), f.Nodes...)
		sort.Strings(sorted)
		// NUL cannot occur in a tier; node names are compared whole.
		key := tier + "\x00" + strings.Join(sorted, "\x00")
		i, ok := index[key]
		if !ok {
			i = len(groups)
			index[key] = i
			groups = append(groups, findingGroup{nodes: f.Nodes})
		}
		groups[i].findings = append(groups[i].findings, f)
	}
	return groups
}

// nodesHead is a group's header: the node set and its size, as clush -b
// prints it, or "fleet" for findings about no node in particular.
func nodesHead(nodes []string) string {
	if len(nodes) == 0 {
		return "fleet"
	}
	return fmt.Sprintf("%s (%d)", compressNodes(nodes), len(nodes))
}

// findingTitle is the check's short title; the summary is a paragraph and
// is for --verbose and the long formats. A finding without a title (a
// saved report of an older version, a site check) falls back to it.
func findingTitle(f result.Finding) string {
	if f.Title != "" {
		return f.Title
	}
	return f.Summary
}

// findingCells are a finding's severity, check and title.
func findingCells(f result.Finding) []string {
	sev := f.Severity.String()
	if f.Waived != nil {
		// The severity it would have had is on the line below; the column
		// says at a glance that it does not count.
		sev = "waived"
	}
	return []string{sev, oneLine(f.Check), oneLine(findingTitle(f))}
}

// findings prints one line per finding (severity, check, title) under the
// node set it concerns, then the probable-cause blocks, then the rollouts
// of the critical checks.
func (p *termPrinter) findings(r *result.Report) {
	if len(r.Findings) == 0 {
		p.title("Findings: none")
		return
	}
	fs := orderFindings(r.Findings)
	p.title(findingsTitle(fs))
	rows := make([][]string, len(fs))
	for i, f := range fs {
		rows[i] = findingCells(f)
	}
	t := p.fit([]column{
		{min: 8, mode: modeTrunc, paint: severitySGR},
		{min: 12, mode: modeIdent},
		{min: 12, mode: modeWords},
	}, 2, false, rows)
	// Details start under the check column: wide enough for prose, and
	// clearly part of the finding above.
	detail := t.indent + t.widths[0] + gap
	for _, g := range groupFindings(fs) {
		for _, l := range wrapUnits(oneLine(nodesHead(g.nodes)), p.width, 2, wrapTiers[modeList]) {
			p.line(l)
		}
		for _, f := range g.findings {
			p.row(t, findingCells(f))
			if f.Waived != nil {
				// Who accepted the risk and until when is part of the
				// compact view: a waiver nobody sees is a hidden failure.
				p.detail(detail, 0, fmt.Sprintf("waived %s %s", f.Severity, waiverText(f.Waived)))
			}
			if p.verbose {
				p.details(detail, f)
			}
		}
	}
	// The cause and its evidence follow the list as whole lines, never
	// wrapped: the terminal wraps them if it must, and scripts grep them.
	// A waived cause was accepted; its line in the list says so and why.
	failing := failingNodes(r)
	for _, f := range fs {
		if f.Kind != result.KindCorrelation || f.Waived != nil {
			continue
		}
		p.line("")
		head := f.Title
		if f.Cause != nil {
			head = f.Cause.Headline()
		}
		for _, l := range wrapUnits(oneLine(head), p.width, 2, wrapTiers[modeWords]) {
			p.line(p.paint(sgrBold, l))
		}
		if f.Cause != nil {
			p.detail(2, 2, causeStats(f.Cause))
		}
		if len(f.Nodes) > 0 {
			p.wrapped(2, 2, wrapTiers[modeList], "nodes: "+oneLine(compressNodes(f.Nodes)))
		}
		for _, e := range f.Evidence {
			p.detail(2, 2, "- "+e)
		}
		if f.Remediation != "" {
			p.detail(2, 2, "fix: "+f.Remediation)
		}
		if len(f.Rollout) > 0 {
			p.detail(2, 2, "rollout: "+rolloutLine(rolloutSteps(f.Rollout, failing)))
		}
	}
	p.rollouts(fs, failing)
}

// details are what --verbose adds under a finding's line: the summary, the
// per-node evidence and the fix. A correlation's evidence and fix are in
// its cause block already.
func (p *termPrinter) details(indent int, f result.Finding) {
	if f.Summary != "" && f.Summary != f.Title {
		p.detail(indent, 0, f.Summary)
	}
	if f.Kind == result.KindCorrelation && f.Waived == nil {
		return
	}
	for _, e := range f.Evidence {
		if f.Waived != nil && strings.Contains(e, f.Waived.Reason) {
			// audit records the waiver as evidence; it is printed above.
			continue
		}
		p.detail(indent, 2, "- "+e)
	}
	if f.Remediation != "" {
		p.detail(indent, 2, "fix: "+f.Remediation)
	}
}

// paintIf paints, in a wrapped line, each phrase of phrases that the line
// holds whole.
type paintIf struct {
	sgr     string
	phrases []string
}

// wrapped writes s wrapped to the width from column indent at the
// separators of tiers, continuation lines hanging further in, then paints
// the phrases of paints: painted after wrapping, since an SGR sequence
// has no width.
func (p *termPrinter) wrapped(indent, hang int, tiers [][]string, s string, paints ...paintIf) {
	pad := strings.Repeat(" ", indent)
	for _, l := range wrapUnits(s, p.width-indent, hang, tiers) {
		if p.color {
			for _, pi := range paints {
				for _, ph := range pi.phrases {
					if ph != "" && strings.Contains(l, ph) {
						l = strings.Replace(l, ph, p.paint(pi.sgr, ph), 1)
					}
				}
			}
		}
		p.line(pad + l)
	}
}

// detail writes s wrapped at words from column indent to the width, its
// continuation lines hang more spaces further in.
func (p *termPrinter) detail(indent, hang int, s string) {
	pad := strings.Repeat(" ", indent)
	for _, l := range wrapUnits(oneLine(s), p.width-indent, hang, wrapTiers[modeWords]) {
		p.line(pad + l)
	}
}

// rollouts prints the rollout of each critical check finding, the ones that
// block the upgrade; warnings keep theirs in the other formats so that the
// terminal stays short. Findings with the same plan share one line.
func (p *termPrinter) rollouts(fs []result.Finding, failing map[string]bool) {
	var order []string
	checks := map[string][]string{}
	for _, f := range fs {
		if f.Kind == result.KindCorrelation || f.Waived != nil || f.Severity != result.SeverityCritical || len(f.Rollout) == 0 {
			continue
		}
		line := oneLine(rolloutLine(rolloutSteps(f.Rollout, failing)))
		if _, ok := checks[line]; !ok {
			order = append(order, line)
		}
		checks[line] = append(checks[line], oneLine(f.Check))
	}
	if len(order) == 0 {
		return
	}
	p.line("")
	for _, line := range order {
		p.detail(0, 2, "rollout of "+strings.Join(checks[line], ", ")+": "+line)
	}
}

// drift lists each drifted fact on one line: its majority and, like
// clush -b, the node sets of every other value. Fleet scope needs no label;
// a role scope is named after the fact.
func (p *termPrinter) drift(r *result.Report, max int) {
	if len(r.Drift) == 0 {
		p.title("Drift: none")
		return
	}
	all := foldDrift(r.Drift)
	if p.verbose {
		// Verbose shows every scope as its own row, as the long formats do.
		all = all[:0]
		for _, d := range r.Drift {
			all = append(all, driftRow{d: d, scopes: []string{string(d.Scope)}})
		}
	}
	shown := all
	if max > 0 && len(shown) > max {
		shown = shown[:max]
	}
	p.title(fmt.Sprintf("Drift (%d)", len(r.Drift)))
	rows := make([][]string, 0, len(shown))
	for _, dr := range shown {
		d := dr.d
		var out []string
		for _, g := range d.Groups {
			if g.Value == d.Majority {
				continue
			}
			out = append(out, truncate(oneLine(g.Value), maxValue)+": "+oneLine(compressNodes(g.Nodes)))
		}
		fact := oneLine(d.Fact)
		if d.Scope != result.ScopeFleet {
			fact += " (" + oneLine(string(d.Scope)) + ")"
		}
		majority := fmt.Sprintf("%s (%d)", truncate(oneLine(d.Majority), maxValue), majorityCount(d))
		rows = append(rows, []string{fact, majority, strings.Join(out, "\n")})
	}
	t := p.fit([]column{
		{title: "FACT", min: 10, mode: modeIdent},
		{title: "MAJORITY", min: 10, mode: modeWords},
		{title: "OUTLIERS", min: 12, mode: modeList, indent: 2, paint: func(string) string { return sgrYellow }},
	}, 2, true, rows)
	for _, row := range rows {
		p.row(t, row)
	}
	if note := foldedNote(shown); note != "" {
		// Said, not hidden: the count in the title includes these rows.
		note += " (-v shows every scope)"
		for _, l := range wrapUnits(note, p.width-2, 2, wrapTiers[modeWords]) {
			p.line("  " + l)
		}
	}
	if hidden := len(all) - len(shown); hidden > 0 {
		entries := 0
		for _, dr := range all[len(shown):] {
			entries += len(dr.scopes)
		}
		p.detail(0, 2, fmt.Sprintf("… %d more not shown; the HTML and JSON reports list every drifted fact", entries))
	}
}

// decision is the terminal's last lines (Decide): the decision, what was
// not audited (every node, folded by status: the cause and its fix are in
// the nodes not ok above), the blockers in the order
// to fix them, what does not block and the waivers in force, by id (their
// titles, fixes, rollouts and reasons are above), then the gate as the very
// last line, where a pipeline's log is read from.
func (p *termPrinter) decision(r *result.Report) {
	d := Decide(r)
	p.line("")
	sgr := map[Tone]string{ToneBlocked: sgrRed, TonePartial: sgrYellow, ToneAllowed: sgrGreen}[d.Tone]
	for _, l := range wrapUnits(oneLine("decision: "+d.Headline), p.width, 2, wrapTiers[modeWords]) {
		p.line(p.paint(sgr, l))
	}
	p.readiness(r)
	if len(d.NotAudited) > 0 {
		p.detail(2, 2, fmt.Sprintf("not audited (%d), the decision does not cover them:", len(d.NotAudited)))
		// Each cause's message is in the nodes not ok above.
		for _, l := range unauditedLines(d.NotAudited, false) {
			p.detail(4, 3, l)
		}
	}
	if d.ClusterNotAudited != "" {
		p.detail(2, 2, "cluster NOT audited: "+d.ClusterNotAudited)
	}
	if len(d.NotApplicable) > 0 {
		p.detail(2, 2, fmt.Sprintf("not applicable (%d), not audited on purpose:", len(d.NotApplicable)))
		for _, l := range d.NotApplicable {
			p.detail(4, 3, l)
		}
	}
	ids := func(fs []result.Finding, line func(result.Finding) string) string {
		out := make([]string, len(fs))
		for i, f := range fs {
			out[i] = line(f)
		}
		return strings.Join(out, "; ")
	}
	check := func(f result.Finding) string { return f.Check }
	if len(d.Blockers) > 0 {
		p.detail(2, 2, fmt.Sprintf("blockers (%d), in the order to fix them: %s", len(d.Blockers), ids(d.Blockers, check)))
	}
	if len(d.Warnings) > 0 {
		p.detail(2, 2, fmt.Sprintf("not blocking (%d): %s", len(d.Warnings), ids(d.Warnings, check)))
	}
	if len(d.Waived) > 0 {
		p.detail(2, 2, fmt.Sprintf("waivers in force (%d): %s", len(d.Waived), ids(d.Waived, func(f result.Finding) string {
			return f.Check + " on " + compressNodes(f.Nodes) + " until " + f.Waived.Expires
		})))
	}
	for _, gap := range d.CheckGaps() {
		// Counted, and listed only with -v unless the gate counts them:
		// the others are checks that had nothing to judge, not findings.
		line := gap.Head + ", " + gap.Why
		if !p.verbose && !gap.Always {
			p.detail(2, 2, line+" (-v lists them)")
			continue
		}
		p.detail(2, 2, line+":")
		for _, g := range gap.Groups {
			p.detail(4, 3, skippedLine(g))
		}
	}
	sgr = sgrGreen
	if !r.Gate.Passed {
		sgr = sgrRed
	}
	for _, l := range wrapUnits("gate: "+oneLine(Verdict(r.Gate)), p.width, 2, wrapTiers[modeWords]) {
		p.line(p.paint(sgr, l))
	}
}

// readiness is the decision broken down by area (result.Areas), one row
// each: what blocks, what only warns, what is ready and what the run could
// not judge, so a board sees the etcd or drain answer without reading
// every finding.
func (p *termPrinter) readiness(r *result.Report) {
	if len(r.Readiness) == 0 {
		return
	}
	sgr := map[string]string{}
	for v, c := range map[result.Verdict]string{result.VerdictBlocked: sgrRed, result.VerdictWarnings: sgrYellow, result.VerdictReady: sgrGreen, result.VerdictNotJudged: sgrYellow} {
		sgr[v.Words()] = c
	}
	// The areas with something to say get a row each; the ready ones,
	// those no check ran in, and those not judged only for the nodes not
	// audited (listed below the decision) one line each, so that the
	// decision stays short.
	var rows [][]string
	type fold struct{ head, sgr string }
	var folds []fold
	folded := map[fold][]string{}
	cells := readinessCells(r)
	for i, a := range r.Readiness {
		var f fold
		switch {
		case a.Verdict == result.VerdictReady || a.Verdict == result.VerdictNotChecked:
			f = fold{a.Verdict.Mark() + " " + a.Verdict.Words(), sgr[a.Verdict.Words()]}
		case a.Verdict == result.VerdictNotJudged && len(a.NotJudged) == 0:
			f = fold{a.Verdict.Mark() + " " + a.Verdict.Words() + " (not audited: " + strings.Join(a.NotAudited, ", ") + ")", sgr[a.Verdict.Words()]}
		default:
			rows = append(rows, []string{cells[i][0], cells[i][1], oneLine(cells[i][2])})
			continue
		}
		if _, ok := folded[f]; !ok {
			folds = append(folds, f)
		}
		folded[f] = append(folded[f], a.Area.Title())
	}
	t := p.fit([]column{
		{title: "AREA", min: 10, mode: modeWords},
		{title: "VERDICT", min: 8, mode: modeWords, paint: func(l string) string { return sgr[strings.TrimSpace(l)] }},
		{title: "WHAT DECIDED IT", min: 16, mode: modeList, indent: 2},
	}, 2, false, rows)
	for _, row := range rows {
		p.row(t, row)
	}
	for _, f := range folds {
		for _, l := range wrapUnits(oneLine(f.head+": "+strings.Join(folded[f], ", ")), p.width-2, 4, wrapTiers[modeList]) {
			p.line("  " + p.paint(f.sgr, l))
		}
	}
}

func severitySGR(s string) string {
	switch s {
	case "waived":
		return sgrDim
	case "critical", "unknown":
		return sgrRed
	case "warning":
		return sgrYellow
	case "info":
		return sgrCyan
	}
	return ""
}

// fit fits the columns of rows to the printer's width and writes the
// column titles when header is set.
func (p *termPrinter) fit(cols []column, indent int, header bool, rows [][]string) *layout {
	t := fitColumns(p.width, cols, indent, header, rows)
	if header {
		p.line(p.paint(sgrDim, t.titleLine()))
	}
	return t
}

// row writes one row of t.
func (p *termPrinter) row(t *layout, row []string) {
	for _, l := range t.rowLines(row, p.color) {
		p.line(l)
	}
}
