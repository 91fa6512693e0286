package report

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/pkg/twwidth"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/fleet-audit/fleet-audit/audit"
)

var _ Formatter = (*Terminal)(nil)

// Terminal is the summary printed after a run: what is wrong, where, the
// probable cause, how the nodes differ and the verdict, fitted to
// Options.Width. It is the only format that may colour its output, and only
// with the SGR sequences defined here: every string that came from a node
// is passed through visible first, so a fact value cannot carry an escape
// sequence to the operator's terminal.
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
	// minWidth keeps tables legible when the caller passes a tiny width.
	minWidth = 40
	// maxValue caps a single fact value in a table cell; the full value is
	// in the HTML and JSON reports.
	maxValue = 40
)

func (t *Terminal) Format(w io.Writer, r *audit.Report) error {
	width := t.Options.Width
	if width == 0 {
		width = defaultWidth
	}
	if width < minWidth {
		width = minWidth
	}
	p := &termPrinter{color: t.Options.Color, width: width}
	p.header(r)
	if err := p.nodes(r); err != nil {
		return err
	}
	p.cluster(r)
	if err := p.findings(r); err != nil {
		return err
	}
	if err := p.drift(r, t.Options.MaxDriftRows); err != nil {
		return err
	}
	p.gate(r)
	// Written in one piece so that a write error is reported once and a
	// reader of a pipe never sees half a table.
	_, err := w.Write(p.buf.Bytes())
	return err
}

type termPrinter struct {
	buf   bytes.Buffer
	color bool
	width int
}

func (p *termPrinter) paint(sgr, s string) string {
	if !p.color || s == "" {
		return s
	}
	return sgr + s + sgrReset
}

func (p *termPrinter) line(s string) { p.buf.WriteString(s + "\n") }

// header is two lines: what ran against what and when, then the fleet.
func (p *termPrinter) header(r *audit.Report) {
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
	if at := ranAt(r); at != "" {
		if d := runTime(r); d != "" {
			at += " (" + d + ")"
		}
		first = append(first, at)
	}
	p.line(strings.Join(first, " · "))
	audited, notAudited := counts(r)
	fleet := fmt.Sprintf("%s: %d audited, %d not audited", plural(len(r.Nodes), "node", "nodes"), audited, notAudited)
	if r.Interrupted {
		fleet += " · " + p.paint(sgrRed, "INTERRUPTED")
	}
	p.line(fleet)
}

func (p *termPrinter) title(s string) {
	p.line("")
	p.line(p.paint(sgrBold, s))
}

// nodes lists only the nodes that are not ok: the healthy ones are the
// count in the header, and a long list of "ok" would hide the few that matter.
func (p *termPrinter) nodes(r *audit.Report) error {
	var rows [][]string
	for _, n := range r.Nodes {
		if n.Status == audit.StatusOK {
			continue
		}
		msg := n.Message
		if msg == "" {
			msg = n.Error
		}
		rows = append(rows, []string{oneLine(n.Name), n.Status.String(), oneLine(msg)})
	}
	if len(rows) == 0 {
		return nil
	}
	p.title(fmt.Sprintf("Nodes not ok (%d)", len(rows)))
	return p.table([]column{
		{title: "NODE", min: 12, mode: modeIdent},
		{title: "STATUS", min: 11, mode: modeTrunc, paint: func(string) string { return sgrRed }},
		{title: "MESSAGE", min: 16, mode: modeWords},
	}, rows)
}

// cluster is one line: where the cluster-scoped probes ran and how it
// went, the two facts an operator asks first, and the Kubernetes nodes the
// audit could not see. The full set is in the other formats.
func (p *termPrinter) cluster(r *audit.Report) {
	c := r.Cluster
	if c == nil {
		return
	}
	status := oneLine(c.Status)
	if c.Status != audit.ClusterOK {
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
		s += fmt.Sprintf(" · %s not in the inventory: %s", plural(len(extra), "Kubernetes node", "Kubernetes nodes"), oneLine(compressNodes(extra)))
	}
	p.line("")
	p.line(s)
}

func (p *termPrinter) findings(r *audit.Report) error {
	if len(r.Findings) == 0 {
		p.title("Findings: none")
		return nil
	}
	fs := orderFindings(r.Findings)
	p.title(findingsTitle(fs))
	rows := make([][]string, 0, len(fs))
	for _, f := range fs {
		nodes := "fleet"
		if len(f.Nodes) > 0 {
			nodes = oneLine(compressNodes(f.Nodes))
		}
		summary := f.Summary
		if f.Kind == audit.KindCorrelation && f.Title != "" {
			// The cause lines follow the table; the title names it here.
			summary = f.Title
		}
		sev := f.Severity.String()
		if f.Waived != nil {
			// The severity it would have had stays readable in the summary;
			// the column says at a glance that it does not count.
			sev = "waived"
			summary = fmt.Sprintf("waived %s %s", f.Severity, waiverText(f.Waived))
		}
		rows = append(rows, []string{sev, oneLine(f.Check), nodes, oneLine(summary)})
	}
	err := p.table([]column{
		{title: "SEVERITY", min: 8, mode: modeTrunc, paint: severitySGR},
		{title: "CHECK", min: 12, mode: modeIdent},
		{title: "NODES", min: 12, mode: modeList},
		{title: "SUMMARY", min: 16, mode: modeWords},
	}, rows)
	if err != nil {
		return err
	}
	// The cause and its evidence follow the table as whole lines, never
	// wrapped: the terminal wraps them if it must, and scripts grep them.
	// A waived cause was accepted; its row in the table says so and why.
	failing := failingNodes(r)
	for _, f := range fs {
		if f.Kind != audit.KindCorrelation || f.Waived != nil {
			continue
		}
		p.line("")
		if f.Cause != nil {
			p.line(p.paint(sgrBold, oneLine(causeHead(f.Cause))))
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
	return nil
}

// rollouts prints the rollout of each critical check finding, the ones that
// block the upgrade; warnings keep theirs in the other formats so that the
// terminal stays short. Findings with the same plan share one line.
func (p *termPrinter) rollouts(fs []audit.Finding, failing map[string]bool) {
	var order []string
	checks := map[string][]string{}
	for _, f := range fs {
		if f.Kind == audit.KindCorrelation || f.Waived != nil || f.Severity != audit.SeverityCritical || len(f.Rollout) == 0 {
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

func (p *termPrinter) drift(r *audit.Report, max int) error {
	if len(r.Drift) == 0 {
		p.title("Drift: none")
		return nil
	}
	shown := r.Drift
	if max > 0 && len(shown) > max {
		shown = shown[:max]
	}
	p.title(fmt.Sprintf("Drift (%d)", len(r.Drift)))
	rows := make([][]string, 0, len(shown))
	for _, d := range shown {
		var out []string
		for _, g := range d.Groups {
			if g.Value == d.Majority {
				continue
			}
			out = append(out, truncate(oneLine(g.Value), maxValue)+": "+oneLine(compressNodes(g.Nodes)))
		}
		majority := fmt.Sprintf("%s (%s)", truncate(oneLine(d.Majority), maxValue), plural(majorityCount(d), "node", "nodes"))
		rows = append(rows, []string{oneLine(d.Fact), oneLine(d.Scope), majority, strings.Join(out, "\n")})
	}
	err := p.table([]column{
		{title: "FACT", min: 12, mode: modeIdent},
		{title: "SCOPE", min: 6, mode: modeTrunc},
		{title: "MAJORITY", min: 12, mode: modeWords},
		{title: "OUTLIERS", min: 16, mode: modeList, indent: 2, paint: func(string) string { return sgrYellow }},
	}, rows)
	if err != nil {
		return err
	}
	if len(shown) < len(r.Drift) {
		p.line(fmt.Sprintf("… %d more not shown; the HTML and JSON reports list every drifted fact", len(r.Drift)-len(shown)))
	}
	return nil
}

func (p *termPrinter) gate(r *audit.Report) {
	p.line("")
	sgr := sgrGreen
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
	// min is the narrowest the column is squeezed to before the table is
	// allowed to exceed the width.
	min    int
	mode   int
	indent int
	// paint returns the SGR for one line of a cell, "" for none.
	paint func(line string) string
}

// softCap bounds how wide a column may insist on being to avoid breaking
// its longest piece.
const softCap = 24

// table fits the columns to the width and renders them with tablewriter.
// Wrapping is done here, not by tablewriter, so that node sets break after
// commas and identifiers at dots.
func (p *termPrinter) table(cols []column, rows [][]string) error {
	widths := make([]int, len(cols))
	soft := make([]int, len(cols))
	for i, c := range cols {
		widths[i] = twwidth.Width(c.title)
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
	// Each column costs its width plus a space either side and one border.
	budget := p.width - (3*len(cols) + 1)
	fitWidths(widths, soft, budget)
	mins := make([]int, len(cols))
	for i, c := range cols {
		mins[i] = min(c.min, widths[i])
	}
	fitWidths(widths, mins, budget)

	t := tablewriter.NewTable(&p.buf,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{Symbols: tw.NewSymbols(tw.StyleLight)})),
		tablewriter.WithConfig(tablewriter.Config{
			Header: tw.CellConfig{
				Formatting: tw.CellFormatting{AutoWrap: tw.WrapNone, AutoFormat: tw.Off},
				Alignment:  tw.CellAlignment{Global: tw.AlignLeft},
			},
			Row: tw.CellConfig{
				Formatting: tw.CellFormatting{AutoWrap: tw.WrapNone, AutoFormat: tw.Off},
				Alignment:  tw.CellAlignment{Global: tw.AlignLeft},
			},
			// Continuation lines are indented on purpose.
			Behavior: tw.Behavior{TrimSpace: tw.Off},
		}),
	)
	header := make([]any, len(cols))
	for i, c := range cols {
		header[i] = c.title
	}
	t.Header(header...)
	for _, row := range rows {
		cells := make([]string, len(cols))
		for i, c := range cols {
			var lines []string
			for _, l := range strings.Split(row[i], "\n") {
				if twwidth.Width(l) <= widths[i] {
					lines = append(lines, l)
				} else if c.mode == modeTrunc {
					lines = append(lines, truncateWidth(l, widths[i]))
				} else {
					lines = append(lines, wrapUnits(l, widths[i], c.indent, wrapTiers[c.mode])...)
				}
			}
			if c.paint != nil && p.color {
				for j, l := range lines {
					if sgr := c.paint(l); sgr != "" && strings.TrimSpace(l) != "" {
						lines[j] = sgr + l + sgrReset
					}
				}
			}
			cells[i] = strings.Join(lines, "\n")
		}
		if err := t.Append(cells); err != nil {
			return fmt.Errorf("terminal table: %w", err)
		}
	}
	if err := t.Render(); err != nil {
		return fmt.Errorf("terminal table: %w", err)
	}
	return nil
}

// fitWidths shrinks the widest column one cell at a time until the table
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
