package report

import (
	"cmp"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/fleet-audit/fleet-audit/result"
)

var _ Formatter = (*MarkdownSummary)(nil)

// SummaryBudget is the most characters a Markdown summary holds. GitHub
// refuses a comment body over 65,536 characters ("Body is too long") and
// GitLab's notes are larger; the margin leaves room for a CI job's own
// header around the summary.
const SummaryBudget = 60_000

// Bounds on single parts of the summary, so one long value cannot eat the
// budget that the rows after it need.
const (
	summaryNodesMax    = 300 // a folded node list in a cell or a line
	summaryValueMax    = 120 // a fact value
	summaryLineMax     = 400 // a warning, a summary sentence, a fix
	summaryStepNodes   = 10  // rollout steps longer than this are folded
	summaryMoreReserve = 200 // room kept for a "… N more" line
)

// MarkdownSummary is the report cut to fit a merge-request or pull-request
// comment whatever the fleet's size: the verdict, the probable causes, the
// findings table, the nodes not audited and the drift table folded by
// value, each row added while it fits in SummaryBudget, and a line that
// says where the full report is. Node data is escaped as in Markdown.
type MarkdownSummary struct {
	// FullReport names the full report written by the same run (the HTML
	// file, which CI keeps as an artifact); "" when there is none.
	FullReport string
}

func (m *MarkdownSummary) Format(w io.Writer, r *result.Report) error {
	footer := "\n**Full report** (every node, fact and fix): " + mdCode(m.FullReport, false) + ", kept with this job's artifacts.\n"
	if m.FullReport == "" {
		footer = "\n**Full report:** it has every node, fact and fix; write it with `--html FILE` in the same run.\n"
	}
	s := &mdSummary{left: SummaryBudget - utf8.RuneCountInString(footer)}
	fs := orderFindings(r.Findings)
	failing := failingNodes(r)

	var head strings.Builder
	d := Decide(r)
	mdHeader(func(format string, args ...any) { fmt.Fprintf(&head, format, args...) }, r, d)
	s.put(head.String())
	s.put(mdReadiness(r))
	var warnings []string
	for _, warn := range r.Warnings {
		warnings = append(warnings, "\n> **Warning:** "+mdText(truncate(warn, summaryLineMax))+"\n")
	}
	s.items("", warnings, "warning")
	var causes []string
	for _, f := range fs {
		if f.Kind == result.KindCorrelation && f.Waived == nil {
			causes = append(causes, summaryCause(f, failing))
		}
	}
	s.items("", causes, "probable cause")

	s.put("\n## Findings\n\n")
	if len(fs) == 0 {
		s.put("No findings.\n")
	} else {
		rows := make([]string, len(fs))
		for i, f := range fs {
			rows[i] = summaryFindingRow(f)
		}
		s.items(mdTableHead("Severity", "Check", "Nodes", "Title"), rows, "finding")
	}

	if groups := nodesByStatus(d.NotAudited); len(groups) > 0 {
		s.put("\n## Nodes not audited\n\n")
		var rows []string
		for _, g := range groups {
			rows = append(rows, mdRow(mdCode(g.status, true), mdCode(truncate(compressNodes(g.nodes), summaryNodesMax), true), fmt.Sprint(len(g.nodes))))
		}
		s.items(mdTableHead("Status", "Nodes", "Count"), rows, "status")
	}
	if len(d.NotApplicable) > 0 {
		s.put("\n## Nodes not applicable\n\n")
		rows := make([]string, len(d.NotApplicable))
		for i, l := range d.NotApplicable {
			rows[i] = "- " + mdText(l) + "\n"
		}
		s.items("", rows, "node")
	}

	s.put("\n## Drift\n\n")
	if len(r.Drift) == 0 {
		s.put("Every audited node has the same value for every compared fact.\n")
	} else {
		folded := foldDrift(r.Drift)
		rows := make([]string, len(folded))
		for i, dr := range folded {
			rows[i] = mdRow(mdDriftRow(dr.d, true)...)
		}
		s.items(mdTableHead("Fact", "Majority value", "Outliers"), rows, "drifting fact")
	}

	_, err := io.WriteString(w, s.b.String()+footer)
	return err
}

// mdSummary is the summary being written and the characters it has left.
type mdSummary struct {
	b    strings.Builder
	left int
}

// put appends text when it fits in what is left, and says whether it did.
func (s *mdSummary) put(text string) bool {
	n := utf8.RuneCountInString(text)
	if n > s.left {
		return false
	}
	s.b.WriteString(text)
	s.left -= n
	return true
}

// items writes head (a table's header, or nothing) and then the items in
// order while they fit, keeping room for the line that says how many did
// not.
func (s *mdSummary) items(head string, items []string, noun string) {
	if len(items) == 0 {
		return
	}
	s.left -= summaryMoreReserve
	defer func() { s.left += summaryMoreReserve }()
	if !s.put(head) {
		s.more(len(items), noun)
		return
	}
	for i, item := range items {
		if !s.put(item) {
			s.more(len(items)-i, noun)
			return
		}
	}
}

// more says how many items did not fit, out of the reserve items keeps.
func (s *mdSummary) more(n int, noun string) {
	line := fmt.Sprintf("\n… and %d more %s, in the full report.\n", n, result.Plural(n, noun))
	s.b.WriteString(line)
	s.left -= utf8.RuneCountInString(line)
}

// mdTableHead is a pipe table's header and rule lines.
func mdTableHead(header ...string) string {
	lines := mdTable(header, nil)
	return lines[0] + "\n" + lines[1] + "\n"
}

// mdRow is one pipe-table row, newline included, of cells already escaped
// for a table.
func mdRow(cells ...string) string {
	return "| " + strings.Join(cells, " | ") + " |\n"
}

// summaryCause is a correlation finding's blockquote, bounded: the cause,
// its numbers, the nodes folded, the fix and the rollout.
func summaryCause(f result.Finding, failing map[string]bool) string {
	var b strings.Builder
	b.WriteString("\n")
	if f.Cause != nil {
		fmt.Fprintf(&b, "> %s  \n", mdCauseHeadline(f.Cause, summaryLineMax))
		fmt.Fprintf(&b, "> %s\n", mdLine(causeStats(f.Cause)))
	} else {
		fmt.Fprintf(&b, "> **%s**\n", mdText(truncate(f.Title, summaryLineMax)))
	}
	if len(f.Nodes) > 0 {
		fmt.Fprintf(&b, ">\n> Nodes: %s\n", mdCode(truncate(compressNodes(f.Nodes), summaryNodesMax), false))
	}
	if f.Remediation != "" {
		fmt.Fprintf(&b, ">\n> **Fix:** %s\n", mdLine(truncate(f.Remediation, summaryLineMax)))
	}
	if len(f.Rollout) > 0 {
		var steps []string
		for _, st := range rolloutSteps(f.Rollout, failing) {
			nodes := strings.Join(st.Nodes, ", ")
			if len(st.Nodes) > summaryStepNodes {
				nodes = compressNodes(st.Nodes) + fmt.Sprintf(" (%d nodes; their order is in the full report)", len(st.Nodes))
			}
			step := fmt.Sprintf("%d. %s: %s", st.N, mdText(st.label()), mdCode(truncate(nodes, summaryNodesMax), false))
			if st.FailingFirst {
				step += " (failing first)"
			}
			steps = append(steps, step)
		}
		fmt.Fprintf(&b, ">\n> **Rollout:** %s\n", strings.Join(steps, " → "))
	}
	return b.String()
}

// summaryFindingRow is a finding's row: its title, not its summary, which
// the full report carries.
func summaryFindingRow(f result.Finding) string {
	nodes := "fleet"
	if len(f.Nodes) > 0 {
		nodes = mdCode(truncate(compressNodes(f.Nodes), summaryNodesMax), true) + fmt.Sprintf(" (%d)", len(f.Nodes))
	}
	sev := f.Severity.String()
	if f.Severity.AtLeast(result.SeverityCritical) { // unknown too: see result.Severity
		sev = "**" + sev + "**"
	}
	if f.Waived != nil {
		sev = "*waived* (" + f.Severity.String() + ")"
	}
	return mdRow(sev, mdCode(f.Check, true), nodes, mdText(truncate(cmp.Or(f.Title, f.Summary), summaryLineMax)))
}

// statusGroup is the nodes of one status other than ok.
type statusGroup struct {
	status string
	nodes  []string
}

// nodesByStatus groups the nodes the decision does not cover by status,
// in the order the statuses first appear; a node whose status is ok but
// some of whose probes did not finish ok is among them, so an "allowed
// with N nodes NOT audited" always names its N nodes.
func nodesByStatus(us []Unaudited) []statusGroup {
	status := func(u Unaudited) string {
		if u.Status == result.StatusOK {
			return "ok, probes not ok"
		}
		return u.Status.String()
	}
	var out []statusGroup
	for _, g := range inFirstSeenGroups(us, status) {
		sg := statusGroup{status: status(g[0])}
		for _, u := range g {
			sg.nodes = append(sg.nodes, u.Node)
		}
		out = append(out, sg)
	}
	return out
}
