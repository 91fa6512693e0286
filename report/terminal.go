package report

import (
	"bytes"
	"fmt"
	"io"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/olekukonko/tablewriter/pkg/twwidth"

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
	defaultWidth = 100
	// minWidth keeps lists legible when the caller passes a tiny width.
	minWidth = 40
	// maxValue caps a single fact value in a list cell; the full value is
	// in the HTML and JSON reports.
	maxValue = 40
)

func (t *Terminal) Format(w io.Writer, r *result.Report) error {
	width := t.Options.Width
	if width == 0 {
		width = defaultWidth
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
	p.line(strings.Join(first, " · "))
	fleet := fleetLine(r)
	if r.Interrupted {
		fleet += " · " + p.paint(sgrRed, "INTERRUPTED")
	}
	// Always counted: a failed probe skips checks, and a skip must not
	// pass unseen; -v lists them (probes).
	if runs, nodes := notOKProbes(r); runs > 0 {
		s := fmt.Sprintf("%s not ok on %s", result.Count(runs, "probe"), result.Count(nodes, "node"))
		if !p.verbose {
			s += " (-v lists them)"
		}
		fleet += " · " + p.paint(sgrRed, s)
	}
	p.line(fleet)
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

// nodes lists only the nodes that are not ok, one a line with the status
// and the message that says what to do: the healthy ones are the count in
// the header, and a long list of "ok" would hide the few that matter.
func (p *termPrinter) nodes(r *result.Report) {
	var rows [][]string
	for _, n := range r.Nodes {
		if n.Status == result.StatusOK {
			continue
		}
		msg := n.Message
		if msg == "" {
			msg = n.Error
		}
		rows = append(rows, []string{oneLine(n.Name), n.Status.String(), oneLine(msg)})
	}
	if len(rows) == 0 {
		return
	}
	p.title(fmt.Sprintf("Nodes not ok (%d)", len(rows)))
	t := p.fit([]column{
		{title: "NODE", min: 10, mode: modeIdent},
		{title: "STATUS", min: 11, mode: modeTrunc, paint: func(string) string { return sgrRed }},
		{title: "MESSAGE", min: 12, mode: modeWords},
	}, 2, false, rows)
	for _, row := range rows {
		p.row(t, row)
	}
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
	if c.Status != result.ClusterOK {
		status = p.paint(sgrYellow, status)
	}
	s := p.paint(sgrBold, "Cluster:") + " " + status
	if c.Node != "" {
		s += " on " + oneLine(c.Node)
	}
	if c.Message != "" {
		s += ": " + oneLine(c.Message)
	}
	for _, k := range []string{"cluster.readyz", "cluster.server_version"} {
		if v, ok := c.Facts[k]; ok {
			s += " · " + k + "=" + truncate(oneLine(v), maxValue)
		}
	}
	if extra := c.UnjoinedK8sNodes(); len(extra) > 0 {
		s += fmt.Sprintf(" · %s %s: %s", result.Count(len(extra), "Kubernetes node"), result.UnjoinedLabel(r.Partial()), oneLine(compressNodes(extra)))
	}
	p.line("")
	p.line(s)
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
		if f.Cause != nil {
			p.line(p.paint(sgrBold, oneLine(f.Cause.Headline())))
			p.line("  " + oneLine(causeStats(f.Cause)))
		} else {
			p.line(p.paint(sgrBold, oneLine(f.Title)))
		}
		if len(f.Nodes) > 0 {
			p.line("  nodes: " + oneLine(compressNodes(f.Nodes)))
		}
		for _, e := range f.Evidence {
			p.line("  - " + oneLine(e))
		}
		if f.Remediation != "" {
			p.line("  fix: " + oneLine(f.Remediation))
		}
		if len(f.Rollout) > 0 {
			p.line("  rollout: " + oneLine(rolloutLine(rolloutSteps(f.Rollout, failing))))
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
		p.line("rollout of " + strings.Join(checks[line], ", ") + ": " + line)
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
		for _, l := range wrapUnits(note, p.width-2, 2, wrapTiers[modeList]) {
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
// not audited (a node each, never folded away), the blockers in the order
// to fix them, what does not block and the waivers in force, by id (their
// titles, fixes, rollouts and reasons are above), then the gate as the very
// last line, where a pipeline's log is read from.
func (p *termPrinter) decision(r *result.Report) {
	d := Decide(r)
	p.line("")
	sgr := map[Tone]string{ToneBlocked: sgrRed, TonePartial: sgrYellow, ToneAllowed: sgrGreen}[d.Tone]
	p.line(p.paint(sgr, "decision: "+d.Headline))
	if len(d.NotAudited) > 0 {
		p.detail(2, 2, fmt.Sprintf("not audited (%d), the decision does not cover them:", len(d.NotAudited)))
		for _, l := range unauditedLines(d.NotAudited) {
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
	p.line(p.paint(sgr, "gate: "+oneLine(Verdict(r.Gate))))
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

// Column modes say how a cell too wide for its column is fitted. Wrapping
// modes break at their first tier of separators, fall back to the next tier
// for a piece still too wide, and cut a piece only as a last resort.
const (
	// modeTrunc cuts each line with "…": short values where a wrapped half
	// reads worse than a cut one.
	modeTrunc = iota
	// modeWords wraps prose at spaces.
	modeWords
	// modeList wraps node sets after commas (and "value: " before them),
	// so that no node name is split while a comma will do.
	modeList
	// modeIdent wraps identifiers (check ids, fact names) after . - _ /,
	// because a cut check id cannot be looked up.
	modeIdent
)

var wrapTiers = map[int][][]string{
	modeWords: {{" "}, {"/", "-", ".", "_", ",", ";"}},
	modeList:  {{",", ": "}, {".", "-", "_", "/"}},
	modeIdent: {{".", "-", "_", "/"}},
}

type column struct {
	title string
	// min is the narrowest the column is squeezed to before the list is
	// allowed to exceed the width. The floors of each list add up to less
	// than minWidth, so no list ever does.
	min    int
	mode   int
	indent int
	// paint returns the SGR for one line of a cell, "" for none.
	paint func(line string) string
}

// softCap bounds how wide a column may insist on being to avoid breaking
// its longest piece.
const softCap = 24

// gap is the space between two columns of an aligned list.
const gap = 2

// layout is a fitted list: where it starts and how wide each column is.
type layout struct {
	cols   []column
	indent int
	widths []int
}

// fit fits the columns of rows to the width, starting at column indent,
// and writes the column titles when header is set. The list is borderless,
// like the output of kubectl get or goss: borders cost a tenth of the width
// and three lines a table. Wrapping is done here so that node sets break
// after commas and identifiers at dots.
func (p *termPrinter) fit(cols []column, indent int, header bool, rows [][]string) *layout {
	widths := make([]int, len(cols))
	soft := make([]int, len(cols))
	for i, c := range cols {
		if header {
			widths[i] = twwidth.Width(c.title)
		}
		soft[i] = max(c.min, widths[i])
		for _, row := range rows {
			for _, l := range strings.Split(row[i], "\n") {
				w := twwidth.Width(l)
				widths[i] = max(widths[i], w)
				if c.mode == modeTrunc {
					soft[i] = max(soft[i], w)
					continue
				}
				for _, u := range splitAfterAny(l, wrapTiers[c.mode][0]) {
					soft[i] = max(soft[i], min(softCap, twwidth.Width(strings.TrimRight(u, " "))+c.indent))
				}
			}
		}
		soft[i] = min(soft[i], widths[i])
	}
	budget := p.width - indent - gap*(len(cols)-1)
	fitWidths(widths, soft, budget)
	mins := make([]int, len(cols))
	for i, c := range cols {
		mins[i] = min(c.min, widths[i])
	}
	fitWidths(widths, mins, budget)
	t := &layout{cols: cols, indent: indent, widths: widths}
	if header {
		titles := make([]string, len(cols))
		for i, c := range cols {
			titles[i] = c.title
		}
		// Titles are ours and never wider than their column.
		p.line(p.paint(sgrDim, strings.TrimRight(strings.Repeat(" ", indent)+padJoin(titles, widths), " ")))
	}
	return t
}

// padJoin pads each cell to its width and joins them with the gap.
func padJoin(cells []string, widths []int) string {
	var b strings.Builder
	for i, c := range cells {
		if i > 0 {
			b.WriteString(strings.Repeat(" ", gap))
		}
		b.WriteString(c)
		if i < len(cells)-1 {
			b.WriteString(strings.Repeat(" ", max(0, widths[i]-twwidth.Width(c))))
		}
	}
	return b.String()
}

// row writes one row of t, as many lines as its tallest cell.
func (p *termPrinter) row(t *layout, row []string) {
	cells := make([][]string, len(t.cols))
	height := 0
	for i, c := range t.cols {
		var lines []string
		for _, l := range strings.Split(row[i], "\n") {
			switch {
			case twwidth.Width(l) <= t.widths[i]:
				lines = append(lines, l)
			case c.mode == modeTrunc:
				lines = append(lines, truncateWidth(l, t.widths[i]))
			default:
				lines = append(lines, wrapUnits(l, t.widths[i], c.indent, wrapTiers[c.mode])...)
			}
		}
		cells[i] = lines
		height = max(height, len(lines))
	}
	pad := strings.Repeat(" ", t.indent)
	for j := 0; j < height; j++ {
		var b strings.Builder
		b.WriteString(pad)
		for i, c := range t.cols {
			l := ""
			if j < len(cells[i]) {
				l = cells[i][j]
			}
			if i > 0 {
				b.WriteString(strings.Repeat(" ", gap))
			}
			// Painted after measuring: an SGR sequence has no width.
			if c.paint != nil && p.color && strings.TrimSpace(l) != "" {
				if sgr := c.paint(l); sgr != "" {
					b.WriteString(sgr + l + sgrReset)
				} else {
					b.WriteString(l)
				}
			} else {
				b.WriteString(l)
			}
			if i < len(t.cols)-1 {
				b.WriteString(strings.Repeat(" ", max(0, t.widths[i]-twwidth.Width(l))))
			}
		}
		p.line(strings.TrimRight(b.String(), " "))
	}
}

// fitWidths shrinks the widest column one cell at a time until the list
// fits the budget or every column is at its floor.
func fitWidths(widths, floor []int, budget int) {
	for {
		sum, widest := 0, -1
		for i, w := range widths {
			sum += w
			if w > floor[i] && (widest < 0 || w > widths[widest]) {
				widest = i
			}
		}
		if sum <= budget || widest < 0 {
			return
		}
		widths[widest]--
	}
}

// splitAfterAny splits s after every occurrence of any separator, keeping
// the separators: "a,b,c" → "a,", "b,", "c". Nothing inside [...] is split,
// so a nodeset range such as worker-[2,4] stays whole.
func splitAfterAny(s string, seps []string) []string {
	var out []string
	start, depth := 0, 0
	for i := 0; i < len(s); {
		switch s[i] {
		case '[':
			depth++
		case ']':
			depth = max(0, depth-1)
		}
		matched := 0
		for _, sep := range seps {
			if depth == 0 && strings.HasPrefix(s[i:], sep) {
				matched = len(sep)
				break
			}
		}
		if matched > 0 {
			i += matched
			out = append(out, s[start:i])
			start = i
			continue
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

// wrapUnits wraps s to width, breaking at the separators of the first tier,
// then of the next tier for a piece still too wide, and cutting a piece
// only when no separator is left. Continuation lines get indent spaces.
func wrapUnits(s string, width, indent int, tiers [][]string) []string {
	width = max(width, 1)
	pad := strings.Repeat(" ", indent)
	if indent >= width {
		pad = ""
	}
	var lines []string
	cur := ""
	flush := func() {
		if strings.TrimSpace(cur) != "" {
			lines = append(lines, strings.TrimRight(cur, " "))
		}
		cur = ""
	}
	// fits: a trailing space may hang over the edge; it is trimmed.
	fits := func(s string) bool { return twwidth.Width(strings.TrimRight(s, " ")) <= width }
	var place func(u string, tier int)
	place = func(u string, tier int) {
		if cur != "" && !fits(cur+u) {
			flush()
		}
		if cur == "" && len(lines) > 0 {
			cur = pad
			u = strings.TrimLeft(u, " ")
		}
		if fits(cur + u) {
			cur += u
			return
		}
		if tier < len(tiers) {
			parts := splitAfterAny(u, tiers[tier])
			if len(parts) == 1 {
				place(u, tier+1)
				return
			}
			for _, part := range parts {
				place(part, tier+1)
			}
			return
		}
		for !fits(cur + u) {
			room := width - twwidth.Width(cur)
			if room < 1 {
				flush()
				cur = pad
				continue
			}
			head := cutWidth(u, room)
			cur += head
			u = u[len(head):]
			flush()
			cur = pad
		}
		cur += u
	}
	place(s, 0)
	flush()
	if len(lines) == 0 {
		lines = []string{""}
	}
	return lines
}

// cutWidth returns the longest prefix of s that is at most width columns
// wide (at least one rune, so callers always make progress).
func cutWidth(s string, width int) string {
	w := 0
	for i, r := range s {
		rw := twwidth.Width(string(r))
		if w+rw > width && i > 0 {
			return s[:i]
		}
		w += rw
	}
	return s
}

// truncateWidth cuts s to width columns, the last one being "…".
func truncateWidth(s string, width int) string {
	if twwidth.Width(s) <= width {
		return s
	}
	if width <= 1 {
		return "…"
	}
	return cutWidth(s, width-1) + "…"
}
