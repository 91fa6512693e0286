package report

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/fleet-audit/fleet-audit/result"
)

// maxDiffValue bounds a fact value in the terminal and Markdown views; JSON
// keeps it whole.
const maxDiffValue = 80

// diffRunLine is "results.json: inventory x · 2026-12-01 10:00:00 UTC · gate FAILED (exit 1)".
func diffRunLine(r result.DiffRun) string {
	parts := []string{}
	if r.Inventory != "" {
		parts = append(parts, "inventory "+r.Inventory)
	}
	if r.StartedAt != "" {
		parts = append(parts, r.StartedAt)
	}
	parts = append(parts, "gate "+Verdict(r.Gate))
	return r.Source + ": " + strings.Join(parts, " · ")
}

// factValue shows an absent fact as "(absent)" and an empty one as "(empty)",
// so neither reads like the other.
func factValue(change, v string, before bool) string {
	if (before && change == result.FactAdded) || (!before && change == result.FactRemoved) {
		return "(absent)"
	}
	if v == "" {
		return "(empty)"
	}
	return truncate(oneLine(v), maxDiffValue)
}

func diffSeverity(f result.DiffFinding) string {
	s := f.Severity.String()
	if f.Was != result.SeverityUnknown {
		s += " (was " + f.Was.String() + ")"
	}
	if f.Now != result.SeverityUnknown {
		s += " (now " + f.Now.String() + ")"
	}
	return s
}

// diffNodes lists nodes in nodeset notation; "(cluster)" stands for the
// fleet-wide findings and facts.
func diffNodes(nodes []string) string {
	if len(nodes) == 1 && nodes[0] == result.ClusterNode {
		return "fleet"
	}
	return compressNodes(nodes)
}

func nothingChanged(d *result.Diff) bool {
	return len(d.NodesAdded)+len(d.NodesRemoved)+len(d.StatusChanges)+len(d.FactChanges)+
		len(d.NewFindings)+len(d.ResolvedFindings) == 0
}

// diffText is the terminal view, fitted to width with the terminal
// report's column engine.
func diffText(b *bytes.Buffer, d *result.Diff, width int) {
	if width <= 0 {
		width = DefaultWidth
	}
	tp := &termPrinter{width: max(width, minWidth)}
	words := wrapTiers[modeWords]
	tp.line("fleet-audit diff")
	tp.wrapped(2, 7, wrapTiers[modeParts], "before "+oneLine(diffRunLine(d.Before)))
	tp.wrapped(2, 7, wrapTiers[modeParts], "after  "+oneLine(diffRunLine(d.After)))
	tp.line("")
	for _, w := range d.Warnings {
		tp.wrapped(0, 2, words, "WARNING: "+oneLine(w))
	}
	if len(d.Warnings) > 0 {
		tp.line("")
	}
	if nothingChanged(d) {
		tp.wrapped(0, 2, words, "No change: same nodes, statuses, facts and findings.")
		tp.line("")
	}
	findings := func(title string, fs []result.DiffFinding) {
		if len(fs) == 0 {
			return
		}
		tp.line(fmt.Sprintf("%s (%d)", title, len(fs)))
		rows := make([][]string, len(fs))
		for i, f := range fs {
			rows[i] = []string{diffSeverity(f), oneLine(f.Check), oneLine(diffNodes(f.Nodes)), oneLine(f.Title)}
		}
		t := tp.fit([]column{
			{min: 8, mode: modeWords},
			{min: 12, mode: modeIdent},
			{min: 10, mode: modeList},
			{min: 12, mode: modeWords},
		}, 2, false, rows)
		for _, row := range rows {
			tp.row(t, row)
		}
		tp.line("")
	}
	findings("New findings", d.NewFindings)
	findings("Resolved findings", d.ResolvedFindings)
	if len(d.NodesAdded)+len(d.NodesRemoved) > 0 {
		tp.line("Nodes")
		if len(d.NodesAdded) > 0 {
			tp.wrapped(2, 8, wrapTiers[modeList], "added   "+oneLine(compressNodes(d.NodesAdded)))
		}
		if len(d.NodesRemoved) > 0 {
			tp.wrapped(2, 8, wrapTiers[modeList], "removed "+oneLine(compressNodes(d.NodesRemoved)))
		}
		tp.line("")
	}
	if len(d.StatusChanges) > 0 {
		tp.line(fmt.Sprintf("Status changes (%d)", len(d.StatusChanges)))
		for _, s := range d.StatusChanges {
			line := fmt.Sprintf("%s: %s → %s", s.Node, s.Before, s.After)
			if s.Message != "" {
				line += ": " + s.Message
			}
			tp.wrapped(2, 2, words, oneLine(line))
		}
		tp.line("")
	}
	if len(d.FactChanges) > 0 {
		title := "Fact changes"
		if !d.VolatileIncluded {
			title += ", volatile facts left out"
		}
		tp.line(fmt.Sprintf("%s (%d)", title, len(d.FactChanges)))
		rows := make([][]string, len(d.FactChanges))
		for i, f := range d.FactChanges {
			rows[i] = []string{oneLine(f.Fact), factValue(f.Change, f.Before, true) + " → " + factValue(f.Change, f.After, false),
				"on " + oneLine(diffNodes(f.Nodes))}
		}
		t := tp.fit([]column{
			{min: 10, mode: modeIdent},
			{min: 12, mode: modeWords},
			{min: 10, mode: modeList},
		}, 2, false, rows)
		for _, row := range rows {
			tp.row(t, row)
		}
		tp.line("")
	}
	tp.wrapped(0, 2, words, "diff gate: "+oneLine(Verdict(d.Gate)))
	b.Write(tp.buf.Bytes())
}

func diffMarkdown(b *bytes.Buffer, d *result.Diff) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	gate := "**Diff gate: passed**"
	if !d.Gate.Passed {
		gate = fmt.Sprintf("**Diff gate: FAILED (exit %d)**", d.Gate.ExitCode)
		if len(d.Gate.Reasons) > 0 {
			gate += ": " + mdText(strings.Join(d.Gate.Reasons, "; "))
		}
	}
	p("# fleet-audit diff\n\n")
	p("%s · %s new, %s resolved · %s added, %s removed · %s\n\n", gate,
		result.Count(len(d.NewFindings), "finding"), result.Count(len(d.ResolvedFindings), "finding"),
		result.Count(len(d.NodesAdded), "node"), result.Count(len(d.NodesRemoved), "node"),
		result.Count(len(d.FactChanges), "fact change"))
	p("- before: %s\n- after: %s\n\n", mdText(diffRunLine(d.Before)), mdText(diffRunLine(d.After)))
	for _, w := range d.Warnings {
		p("> **Warning:** %s\n\n", mdText(w))
	}
	if nothingChanged(d) {
		p("No change: same nodes, statuses, facts and findings.\n\n")
	}
	findings := func(title string, fs []result.DiffFinding) {
		if len(fs) == 0 {
			return
		}
		p("## %s (%d)\n\n| Severity | Check | Nodes | Title |\n|---|---|---|---|\n", title, len(fs))
		for _, f := range fs {
			p("| %s | %s | %s | %s |\n", mdText(diffSeverity(f)), mdCode(f.Check, true), mdText(diffNodes(f.Nodes)), mdText(oneLine(f.Title)))
		}
		p("\n")
	}
	findings("New findings", d.NewFindings)
	findings("Resolved findings", d.ResolvedFindings)
	if len(d.NodesAdded)+len(d.NodesRemoved) > 0 {
		p("## Nodes\n\n")
		if len(d.NodesAdded) > 0 {
			p("- added: %s\n", mdText(compressNodes(d.NodesAdded)))
		}
		if len(d.NodesRemoved) > 0 {
			p("- removed: %s\n", mdText(compressNodes(d.NodesRemoved)))
		}
		p("\n")
	}
	if len(d.StatusChanges) > 0 {
		p("## Status changes (%d)\n\n| Node | Before | After | Message |\n|---|---|---|---|\n", len(d.StatusChanges))
		for _, s := range d.StatusChanges {
			p("| %s | %s | %s | %s |\n", mdText(s.Node), s.Before, s.After, mdText(oneLine(s.Message)))
		}
		p("\n")
	}
	if len(d.FactChanges) > 0 {
		note := ""
		if !d.VolatileIncluded {
			note = " (volatile facts left out)"
		}
		p("## Fact changes (%d)%s\n\n| Fact | Before | After | Nodes |\n|---|---|---|---|\n", len(d.FactChanges), note)
		cell := func(change, v string, before bool) string {
			s := factValue(change, v, before)
			if s == "(absent)" || s == "(empty)" {
				return "*" + s + "*"
			}
			return mdCode(s, true)
		}
		for _, f := range d.FactChanges {
			p("| %s | %s | %s | %s |\n", mdCode(f.Fact, true), cell(f.Change, f.Before, true), cell(f.Change, f.After, false), mdText(diffNodes(f.Nodes)))
		}
		p("\n")
	}
}
