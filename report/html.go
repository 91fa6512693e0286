package report

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/fleet-audit/fleet-audit/result"
)

var _ Formatter = (*HTML)(nil)

// HTML writes one self-contained page for a change board or an incident
// review: it is mailed, attached to tickets and opened offline, so it loads
// nothing (no fonts, scripts, images or links out), needs no JavaScript and
// prints. A Content-Security-Policy in the page itself allows only its own
// stylesheet, so even markup that slipped through could not run or fetch.
//
// All node data goes through html/template's contextual escaping as plain
// strings; nothing from the report is ever converted to template.HTML, JS,
// URL or CSS. The one template.CSS value is the constant stylesheet below.
type HTML struct{}

func (h *HTML) Format(w io.Writer, r *result.Report) error {
	var b bytes.Buffer
	if err := htmlTmpl.Execute(&b, buildHTMLView(r)); err != nil {
		return fmt.Errorf("render html: %w", err)
	}
	_, err := w.Write(b.Bytes())
	return err
}

type htmlView struct {
	CSS template.CSS
	CSP string

	Inventory, Tool  string
	TargetVersion    string
	Passed           bool
	ExitCode         int
	Reasons          []string
	FailOn           string
	AllowUnreachable bool
	Interrupted      bool
	NodeCount        int
	Audited, NotAud  int
	RanAt, RanAtISO  string
	RunTime          string
	Causes           []htmlCause
	Down             []htmlNode
	SeverityGroups   []htmlSeverityGroup
	FindingCount     int
	FindingTitle     string
	Drift            []htmlDrift
	Matrix           htmlMatrix
	Nodes            []htmlNode
	HasDriftedMatrix bool
	// DriftNote says how many role rows the drift table folded away.
	DriftNote string
	// Warnings are Report.Warnings.
	Warnings []string
	Cluster  *htmlCluster
}

type htmlCause struct {
	Head, Stats string
	Ranked      []candidateRow
}

type htmlCluster struct {
	Status, Node, Message string
	OK                    bool
	Attempts              []htmlAttempt
	Facts                 []htmlFact
	Probes                []htmlProbe
	Unjoined              []string
}

type htmlAttempt struct {
	Node, Outcome, Reason string
	OK                    bool
}

type htmlWaiver struct{ Expires, Source, Reason, Scope string }

type htmlSeverityGroup struct {
	Severity string
	Findings []htmlFinding
}

type htmlFinding struct {
	Check, Kind, Title, Severity string
	Summary, Remediation         string
	NodeSet                      string
	Nodes                        []string
	Evidence                     []string
	Cause                        *htmlCause
	Rollout                      []rolloutStep
	Waived                       *htmlWaiver
}

type htmlDrift struct {
	Fact, Scope, Majority string
	MajorityCount         int
	Outliers              []htmlGroup
}

type htmlGroup struct {
	Value, NodeSet string
	Count          int
}

type htmlMatrix struct {
	Roles []htmlRole
	Cols  []htmlCol
	Rows  []htmlRow
}

type htmlRole struct {
	Name string
	Span int
}

type htmlCol struct {
	Index        int
	Name, Status string
	OK, HasFacts bool
}

type htmlRow struct {
	Fact    string
	Drifted bool
	Cells   []htmlCell
}

type htmlCell struct {
	Value string
	// State is "" (the value), "drift" (not the majority of a scope),
	// "absent" (fact not reported) or "na" (node not audited).
	State string
	Why   string
}

type htmlNode struct {
	Index                    int
	Name, Address, Roles     string
	Status, Message, Error   string
	OK                       bool
	Duration                 string
	Facts                    []htmlFact
	Probes                   []htmlProbe
	Checks                   []htmlCheck
	FailedChecks, PassChecks int
	WaivedChecks             int
}

type htmlFact struct{ Key, Value, Why string }

type htmlProbe struct {
	ID, Status, Stderr string
	ExitCode           int
}

type htmlCheck struct{ Check, Severity, Outcome, Detail string }

// text is a node string for an element or attribute: control characters
// made visible, line breaks too. html/template does the HTML escaping.
func text(s string) string { return visible(s, "") }

// block is text for a white-space: pre-wrap element, keeping line breaks.
func block(s string) string { return visible(s, "\n\t") }

func texts(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = text(s)
	}
	return out
}

func buildHTMLView(r *result.Report) htmlView {
	v := htmlView{
		CSS:              template.CSS(htmlCSS),
		CSP:              htmlCSP,
		Inventory:        text(r.Inventory),
		Tool:             text(strings.TrimSpace(r.Tool.Name + " " + r.Tool.Version)),
		TargetVersion:    text(r.TargetVersion),
		Passed:           r.Gate.Passed,
		ExitCode:         r.Gate.ExitCode,
		Reasons:          texts(r.Gate.Reasons),
		FailOn:           r.Gate.FailOn.String(),
		AllowUnreachable: r.Gate.AllowUnreachable,
		Interrupted:      r.Interrupted,
		NodeCount:        len(r.Nodes),
		RanAt:            ranAt(r),
		RunTime:          runTime(r),
		FindingCount:     len(r.Findings),
		Warnings:         texts(r.Warnings),
	}
	v.Audited, v.NotAud = counts(r)
	if !r.StartedAt.IsZero() {
		v.RanAtISO = r.StartedAt.UTC().Format("2006-01-02T15:04:05Z")
	}

	fs := orderFindings(r.Findings)
	v.FindingTitle = findingsTitle(fs)
	failing := failingNodes(r)
	// Waived findings form their own group after every severity: they are
	// shown, but must not sit among the findings that fail the gate.
	var active, waived []result.Finding
	for _, f := range fs {
		if f.Waived != nil {
			waived = append(waived, f)
		} else {
			active = append(active, f)
		}
	}
	for _, sev := range severityOrder {
		g := htmlSeverityGroup{Severity: sev.String()}
		for _, f := range active {
			if f.Severity == sev {
				g.Findings = append(g.Findings, newHTMLFinding(f, failing))
			}
		}
		if len(g.Findings) > 0 {
			v.SeverityGroups = append(v.SeverityGroups, g)
		}
	}
	// Severities outside the known set still get shown, last.
	var other []htmlFinding
	for _, f := range active {
		known := false
		for _, sev := range severityOrder {
			known = known || f.Severity == sev
		}
		if !known {
			other = append(other, newHTMLFinding(f, failing))
		}
	}
	if len(other) > 0 {
		v.SeverityGroups = append(v.SeverityGroups, htmlSeverityGroup{Severity: "other", Findings: other})
	}
	if len(waived) > 0 {
		g := htmlSeverityGroup{Severity: "waived"}
		for _, f := range waived {
			g.Findings = append(g.Findings, newHTMLFinding(f, failing))
		}
		v.SeverityGroups = append(v.SeverityGroups, g)
	}
	for _, f := range active {
		if f.Cause != nil {
			v.Causes = append(v.Causes, htmlCause{Head: text(f.Cause.Headline()), Stats: text(causeStats(f.Cause))})
		}
	}
	if c := r.Cluster; c != nil {
		hc := &htmlCluster{Status: text(string(c.Status)), Node: text(c.Node), Message: block(c.Message), OK: c.Status == result.ClusterOK, Unjoined: texts(c.UnjoinedK8sNodes())}
		for _, a := range clusterAttempts(c) {
			hc.Attempts = append(hc.Attempts, htmlAttempt{Node: text(a.Node), Outcome: text(string(a.Outcome)), Reason: text(a.Reason), OK: a.Outcome == result.ClusterOK})
		}
		for _, k := range clusterFacts(c) {
			hc.Facts = append(hc.Facts, htmlFact{Key: text(k), Value: text(c.Facts[k])})
		}
		for _, p := range c.Probes {
			if p.Status != "ok" {
				hc.Probes = append(hc.Probes, htmlProbe{ID: text(p.ID), Status: text(string(p.Status)), ExitCode: p.ExitCode, Stderr: block(p.Stderr)})
			}
		}
		v.Cluster = hc
	}

	folded := foldDrift(r.Drift)
	v.DriftNote = foldedNote(folded)
	for _, dr := range folded {
		d := dr.d
		hd := htmlDrift{Fact: text(d.Fact), Scope: text(string(d.Scope)), Majority: text(d.Majority), MajorityCount: majorityCount(d)}
		for _, g := range d.Groups {
			if g.Value != d.Majority {
				hd.Outliers = append(hd.Outliers, htmlGroup{Value: text(g.Value), NodeSet: text(compressNodes(g.Nodes)), Count: len(g.Nodes)})
			}
		}
		v.Drift = append(v.Drift, hd)
	}

	odd := outliers(r.Drift)
	v.Matrix = buildMatrix(r, odd)
	for _, row := range v.Matrix.Rows {
		v.HasDriftedMatrix = v.HasDriftedMatrix || row.Drifted
	}

	checks := checksByNode(r)
	for i, n := range r.Nodes {
		hn := htmlNode{
			Index: i + 1, Name: text(n.Name), Address: text(n.Address), Roles: text(strings.Join(n.Roles, ", ")),
			Status: n.Status.String(), Message: block(n.Message), Error: block(n.Error), OK: n.Status == result.StatusOK,
			Duration: fmt.Sprintf("%.1fs", n.DurationSeconds),
		}
		for _, k := range slices.Sorted(maps.Keys(n.Facts)) {
			hn.Facts = append(hn.Facts, htmlFact{Key: text(k), Value: text(n.Facts[k]), Why: text(strings.Join(odd[k][n.Name], "; "))})
		}
		for _, p := range n.Probes {
			hn.Probes = append(hn.Probes, htmlProbe{ID: text(p.ID), Status: text(string(p.Status)), ExitCode: p.ExitCode, Stderr: block(p.Stderr)})
		}
		for _, ci := range checks[n.Name] {
			c := r.Checks[ci]
			switch c.Outcome {
			case result.OutcomePass:
				hn.PassChecks++
				continue
			case result.OutcomeFail:
				hn.FailedChecks++
			case result.OutcomeWaived:
				hn.WaivedChecks++
			}
			hn.Checks = append(hn.Checks, htmlCheck{Check: text(c.Check), Severity: c.Severity.String(), Outcome: text(string(c.Outcome)), Detail: text(c.Detail)})
		}
		if !hn.OK {
			v.Down = append(v.Down, hn)
		}
		v.Nodes = append(v.Nodes, hn)
	}
	return v
}

func newHTMLFinding(f result.Finding, failing map[string]bool) htmlFinding {
	hf := htmlFinding{
		Check: text(f.Check), Kind: text(string(f.Kind)), Title: text(f.Title), Severity: f.Severity.String(),
		Summary: text(f.Summary), Remediation: text(f.Remediation),
		Nodes: texts(f.Nodes), NodeSet: text(compressNodes(f.Nodes)), Evidence: texts(f.Evidence),
	}
	if f.Cause != nil {
		hf.Cause = &htmlCause{Head: text(f.Cause.Headline()), Stats: text(causeStats(f.Cause))}
		for _, c := range candidateRows(f.Cause) {
			hf.Cause.Ranked = append(hf.Cause.Ranked, candidateRow{Pair: text(c.Pair), Failing: c.Failing, Healthy: c.Healthy, Score: c.Score})
		}
	}
	for _, s := range rolloutSteps(f.Rollout, failing) {
		s.Class, s.Nodes = text(s.Class), texts(s.Nodes)
		hf.Rollout = append(hf.Rollout, s)
	}
	if w := f.Waived; w != nil {
		hf.Waived = &htmlWaiver{Expires: text(w.Expires), Source: text(w.Source), Reason: block(w.Reason), Scope: text(waiverScope(w))}
	}
	return hf
}

// buildMatrix lays out facts (rows) against nodes (columns), the columns
// grouped by role set so that a worker that differs from the other workers
// stands next to them. Facts are rows because there are a few dozen of them
// and they have long names, while a column per node keeps a role together.
func buildMatrix(r *result.Report, odd map[string]map[string][]string) htmlMatrix {
	var m htmlMatrix
	var order []string
	byRole := map[string][]int{}
	for i, n := range r.Nodes {
		role := strings.Join(n.Roles, "+")
		if role == "" {
			role = "no role"
		}
		if _, ok := byRole[role]; !ok {
			order = append(order, role)
		}
		byRole[role] = append(byRole[role], i)
	}
	var idx []int
	for _, role := range order {
		m.Roles = append(m.Roles, htmlRole{Name: text(role), Span: len(byRole[role])})
		idx = append(idx, byRole[role]...)
	}
	facts := map[string]bool{}
	for _, i := range idx {
		n := r.Nodes[i]
		m.Cols = append(m.Cols, htmlCol{Index: i + 1, Name: text(n.Name), Status: n.Status.String(), OK: n.Status == result.StatusOK, HasFacts: len(n.Facts) > 0})
		for k := range n.Facts {
			facts[k] = true
		}
	}
	keys := make([]string, 0, len(facts))
	for k := range facts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		row := htmlRow{Fact: text(k), Drifted: len(odd[k]) > 0}
		for _, i := range idx {
			n := r.Nodes[i]
			val, ok := n.Facts[k]
			switch {
			case len(n.Facts) == 0:
				row.Cells = append(row.Cells, htmlCell{State: "na", Value: "n/a", Why: "node not audited: " + n.Status.String()})
			case !ok:
				row.Cells = append(row.Cells, htmlCell{State: "absent", Value: "—", Why: "not reported by this node"})
			case len(odd[k][n.Name]) > 0:
				row.Cells = append(row.Cells, htmlCell{State: "drift", Value: text(val), Why: text(strings.Join(odd[k][n.Name], "; "))})
			default:
				row.Cells = append(row.Cells, htmlCell{Value: text(val)})
			}
		}
		m.Rows = append(m.Rows, row)
	}
	return m
}

// htmlCSP is the page's own Content-Security-Policy: nothing may load and
// nothing may run; the only style allowed is the inline stylesheet, pinned
// by its hash.
var htmlCSP = func() string {
	sum := sha256.Sum256([]byte(htmlCSS))
	return "default-src 'none'; style-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'; base-uri 'none'; form-action 'none'"
}()

// probeRunsTemplate is the table of how each probe went, shown for the
// cluster probes and for every node.
const probeRunsTemplate = `{{define "probeRuns"}}<div class="scroll"><table>
<thead><tr><th scope="col">Probe</th><th scope="col">Status</th><th scope="col">Exit</th><th scope="col">Stderr</th></tr></thead>
<tbody>
{{- range .}}
<tr><th scope="row"><code>{{.ID}}</code></th><td>{{.Status}}</td><td>{{.ExitCode}}</td><td>{{if .Stderr}}<pre>{{.Stderr}}</pre>{{end}}</td></tr>
{{- end}}
</tbody>
</table></div>{{end}}`

var htmlTmpl = template.Must(template.Must(template.New("report").Parse(htmlTemplate)).Parse(probeRunsTemplate))

const htmlCSS = `
:root { --fg: #1a1a1a; --muted: #4d4d4d; --line: #c8c8c8; --bg: #ffffff; --soft: #f4f4f4;
  --crit: #a50021; --warn: #7a4d00; --warnbg: #ffe08a; --info: #0b5394; --unk: #5b2a86;
  --pass: #17652f; --passbg: #e3f3e7; --failbg: #fbe4e7; --drift: #fff0a8; --driftfg: #6b3a00; }
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 90rem; padding: 1rem; color: var(--fg); background: var(--bg);
  font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
code, pre, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace; font-size: 0.92em; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; margin: 0.3rem 0; background: var(--soft); padding: 0.4rem 0.6rem; }
h1 { font-size: 1.5rem; margin: 0.2rem 0 0.8rem; }
h2 { font-size: 1.25rem; margin: 1.8rem 0 0.6rem; border-bottom: 2px solid var(--line); padding-bottom: 0.2rem; }
h3 { font-size: 1.08rem; margin: 1.2rem 0 0.5rem; }
h4 { font-size: 1rem; margin: 0; display: inline; }
nav { margin: 0.5rem 0 1rem; }
nav a { margin-right: 1rem; }
a { color: #0a4a8f; }
.verdict { border: 2px solid; border-left-width: 10px; padding: 0.8rem 1rem; margin: 0.5rem 0 1rem; }
.verdict.failed { border-color: var(--crit); background: var(--failbg); }
.verdict.passed { border-color: var(--pass); background: var(--passbg); }
.verdict h2 { border: 0; margin: 0 0 0.4rem; font-size: 1.35rem; }
.verdict ul { margin: 0.2rem 0 0.6rem; }
.verdict .cause { margin: 0.4rem 0; }
.verdict .warning { margin: 0.4rem 0; padding: 0.3rem 0.6rem; border: 2px dashed var(--crit); background: var(--bg); color: var(--crit); }
dl.meta { display: grid; grid-template-columns: max-content 1fr; gap: 0.15rem 1rem; margin: 0.4rem 0 0; }
dl.meta dt { font-weight: 600; }
dl.meta dd { margin: 0; overflow-wrap: anywhere; }
.badge { display: inline-block; padding: 0 0.45rem; border-radius: 3px; font-weight: 700; font-size: 0.85rem;
  text-transform: uppercase; letter-spacing: 0.02em; border: 1px solid transparent; }
.badge.sev-critical { background: var(--crit); color: #fff; }
.badge.sev-warning { background: var(--warnbg); color: #000; border-color: var(--warn); }
.badge.sev-info { background: var(--info); color: #fff; }
.badge.sev-unknown, .badge.sev-other { background: var(--unk); color: #fff; }
.badge.sev-waived { background: var(--soft); color: var(--muted); border-color: var(--muted); }
.status { font-weight: 700; }
.status.bad { color: var(--crit); }
.status.good { color: var(--pass); }
.finding { border: 1px solid var(--line); border-left: 6px solid var(--line); padding: 0.6rem 0.9rem; margin: 0.6rem 0; break-inside: avoid; }
.finding.sev-critical { border-left-color: var(--crit); }
.finding.sev-warning { border-left-color: var(--warn); }
.finding.sev-info { border-left-color: var(--info); }
.finding.sev-unknown, .finding.sev-other { border-left-color: var(--unk); }
.finding.correlation { background: #fff7f8; border-width: 2px 2px 2px 8px; }
.finding.waived { border-style: dashed; border-left-style: solid; border-left-color: var(--muted); background: var(--soft); }
.finding .waiver { border-left: 3px solid var(--muted); padding-left: 0.6rem; }
ol.rollout { margin: 0.3rem 0; padding-left: 1.6rem; }
ol.rollout li { overflow-wrap: anywhere; }
table.ranked { font-size: 0.9rem; }
.finding p { margin: 0.35rem 0; }
.finding .kind, th .scope { color: var(--muted); font-size: 0.85rem; font-weight: normal; }
ul.evidence { margin: 0.3rem 0; padding-left: 1.2rem; }
ul.evidence li { overflow-wrap: anywhere; }
table { border-collapse: collapse; margin: 0.4rem 0; }
th, td { border: 1px solid var(--line); padding: 0.25rem 0.5rem; text-align: left; vertical-align: top; overflow-wrap: break-word; }
thead th { background: var(--soft); }
/* Positioned, so that the screen-reader notes (position: absolute) inside a
   wide table stay in its scroll box instead of widening the whole page. */
.scroll { overflow-x: auto; max-width: 100%; position: relative; }
table.matrix { font-size: 0.85rem; }
table.matrix td { max-width: 16rem; }
table.matrix th[scope=row] { position: sticky; left: 0; background: var(--bg); z-index: 1; white-space: nowrap; }
table.matrix th[scope=colgroup] { text-align: center; background: #e6e6e6; }
.mark { font-weight: 900; }
td.absent, td.na { color: var(--muted); }
th.drifted::after { content: " ◆"; color: var(--driftfg); }
.legend { font-size: 0.9rem; color: var(--muted); }
.legend .swatch { display: inline-block; padding: 0 0.4rem; border: 1px solid var(--line); margin-right: 0.2rem; color: var(--fg); }
.legend .swatch.drift, td.drift { background: var(--drift); color: var(--driftfg); font-weight: 700; outline: 2px solid var(--driftfg); outline-offset: -2px; }
.legend .swatch.na, td.na { background: repeating-linear-gradient(45deg, #eeeeee, #eeeeee 4px, #f8f8f8 4px, #f8f8f8 8px); }
.fhead { margin-bottom: 0.3rem; }
.filter-box { margin: 0.4rem 0; }
#only-drift:checked ~ .scroll tr.same { display: none; }
details.node { border: 1px solid var(--line); margin: 0.4rem 0; padding: 0.3rem 0.7rem; }
details.node summary { cursor: pointer; font-weight: 600; }
details.node[open] summary { margin-bottom: 0.4rem; }
.sr { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
.print-only { display: none; }
footer { margin-top: 2rem; color: var(--muted); font-size: 0.85rem; }
@media (max-width: 40rem) {
  body { padding: 0.5rem; font-size: 14px; }
  dl.meta { grid-template-columns: 1fr; }
  dl.meta dd { margin-bottom: 0.3rem; }
  /* The sticky fact column would otherwise take most of a phone's width. */
  table.matrix th[scope=row] { white-space: normal; overflow-wrap: anywhere; min-width: 8rem; max-width: 10rem; }
}
@page wide { size: landscape; }
@media print {
  body { max-width: none; font-size: 10pt; padding: 0; }
  /* The control only: the matrix sits inside .filter-box. */
  nav, .filter-box > input, .filter-box > label { display: none; }
  * { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
  .scroll { overflow: visible; }
  table.matrix th[scope=row] { position: static; }
  h2 { break-after: avoid; }
  details.node { break-inside: avoid; }
  /* Paper cannot be expanded: the per-node details print open, without
     the raw facts (every node's facts would be dozens of pages). */
  details::details-content { content-visibility: visible; display: block; }
  .raw-facts { display: none; }
  .print-only { display: block; }
  /* The matrix goes on landscape sheets, squeezed to the sheet's width,
     and keeps only the rows that differ: a column per node cannot scroll
     on paper, and the rows that agree are the bulk of it. */
  .matrix-section { page: wide; }
  table.matrix { table-layout: fixed; width: 100%; font-size: 7.5pt; }
  table.matrix col.fact { width: 11rem; }
  table.matrix th, table.matrix td { overflow-wrap: anywhere; max-width: none; padding: 0.15rem 0.25rem; }
  table.matrix th[scope=row] { white-space: normal; }
  table.matrix tr.same { display: none; }
  a { color: inherit; text-decoration: none; }
}
`

const htmlTemplate = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{{.CSP}}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>fleet-audit{{with .Inventory}}: {{.}}{{end}} — {{if .Passed}}passed{{else}}FAILED{{end}}</title>
<style>{{.CSS}}</style>
</head>
<body>
<header>
<h1>fleet-audit report{{with .Inventory}}: <span class="mono">{{.}}</span>{{end}}</h1>
<nav aria-label="sections"><a href="#findings">Findings ({{.FindingCount}})</a><a href="#drift">Drift ({{len .Drift}})</a><a href="#matrix">Fact matrix</a>{{if .Cluster}}<a href="#cluster">Cluster</a>{{end}}<a href="#nodes">Nodes ({{.NodeCount}})</a></nav>
</header>
<main>
<section class="verdict {{if .Passed}}passed{{else}}failed{{end}}" aria-labelledby="verdict">
<h2 id="verdict">{{if .Passed}}✔ Gate passed{{else}}✘ Gate FAILED — exit {{.ExitCode}}{{end}}</h2>
{{- if .Reasons}}
<ul>{{range .Reasons}}<li>{{.}}</li>{{end}}</ul>
{{- end}}
{{- range .Warnings}}
<p class="warning" role="alert"><strong>Warning:</strong> {{.}}</p>
{{- end}}
{{- range .Causes}}
<p class="cause"><strong>{{.Head}}</strong><br>{{.Stats}}</p>
{{- end}}
<dl class="meta">
{{- with .Inventory}}<dt>Inventory</dt><dd class="mono">{{.}}</dd>{{end}}
{{- with .TargetVersion}}<dt>Target</dt><dd class="mono">{{.}}</dd>{{end}}
<dt>Fleet</dt><dd>{{.NodeCount}} nodes: {{.Audited}} audited, {{.NotAud}} not audited{{if .Interrupted}} — <strong>run interrupted</strong>{{end}}</dd>
{{- if .RanAt}}<dt>Ran</dt><dd><time datetime="{{.RanAtISO}}">{{.RanAt}}</time></dd>{{end}}
{{- if .RunTime}}<dt>Took</dt><dd>{{.RunTime}}</dd>{{end}}
<dt>Gate</dt><dd>fails on {{.FailOn}} and above{{if .AllowUnreachable}}, unreachable nodes allowed{{end}}</dd>
<dt>Tool</dt><dd>{{.Tool}}</dd>
</dl>
</section>
{{- if .Down}}
<section aria-labelledby="down">
<h2 id="down">Nodes not ok ({{len .Down}})</h2>
<div class="scroll"><table>
<thead><tr><th scope="col">Node</th><th scope="col">Status</th><th scope="col">Message</th></tr></thead>
<tbody>
{{- range .Down}}
<tr><th scope="row"><a href="#node-{{.Index}}">{{.Name}}</a></th><td class="status bad">{{.Status}}</td><td>{{if .Message}}{{.Message}}{{else}}{{.Error}}{{end}}</td></tr>
{{- end}}
</tbody>
</table></div>
</section>
{{- end}}

<section aria-labelledby="findings">
<h2 id="findings">{{.FindingTitle}}</h2>
{{- if not .SeverityGroups}}
<p>No findings.</p>
{{- end}}
{{- range .SeverityGroups}}
<h3><span class="badge sev-{{.Severity}}">{{.Severity}}</span> {{len .Findings}}</h3>
{{- range .Findings}}
<article class="finding sev-{{.Severity}}{{if .Cause}} correlation{{end}}{{if .Waived}} waived{{end}}">
<div class="fhead">{{if .Waived}}<span class="badge sev-waived">waived</span> {{end}}<span class="badge sev-{{.Severity}}">{{.Severity}}</span> <h4>{{.Title}}</h4> <code>{{.Check}}</code> <span class="kind">{{.Kind}}</span></div>
{{- with .Waived}}
<p class="waiver"><strong>Waived</strong> until <code>{{.Expires}}</code> by <code>{{.Source}}</code>{{if .Scope}} (covers {{.Scope}}){{end}}; it does not fail the gate. Reason:</p>
<pre>{{.Reason}}</pre>
{{- end}}
{{- with .Cause}}
<p><strong>{{.Head}}</strong><br>{{.Stats}}</p>
{{- if .Ranked}}
<div class="scroll"><table class="ranked">
<thead><tr><th scope="col">Candidate cause</th><th scope="col">Failing nodes with it</th><th scope="col">Healthy nodes with it</th><th scope="col">Score</th></tr></thead>
<tbody>
{{- range .Ranked}}
<tr><th scope="row"><code>{{.Pair}}</code></th><td>{{.Failing}}</td><td>{{.Healthy}}</td><td>{{.Score}}</td></tr>
{{- end}}
</tbody>
</table></div>
{{- end}}
{{- end}}
{{- if .Summary}}
<p>{{.Summary}}</p>
{{- end}}
<p><strong>Nodes ({{len .Nodes}}):</strong> {{if .Nodes}}<span class="mono" title="{{range $i, $n := .Nodes}}{{if $i}}, {{end}}{{$n}}{{end}}">{{.NodeSet}}</span>{{else}}the whole fleet{{end}}</p>
{{- if .Evidence}}
<p><strong>Evidence</strong></p>
<ul class="evidence">{{range .Evidence}}<li><code>{{.}}</code></li>{{end}}</ul>
{{- end}}
{{- if .Remediation}}
<p><strong>Remediation:</strong> {{.Remediation}}</p>
{{- end}}
{{- if .Rollout}}
<p><strong>Rollout</strong> (apply the fix in this order)</p>
<ol class="rollout">{{range .Rollout}}<li>{{.Class}}{{if .OneAtATime}}, <strong>one at a time</strong>{{end}}: <span class="mono">{{range $i, $n := .Nodes}}{{if $i}}, {{end}}{{$n}}{{end}}</span>{{if .FailingFirst}} (failing first){{end}}</li>{{end}}</ol>
{{- end}}
</article>
{{- end}}
{{- end}}
</section>

<section aria-labelledby="drift">
<h2 id="drift">Drift ({{len .Drift}})</h2>
{{- if .Drift}}
<div class="scroll"><table>
<thead><tr><th scope="col">Fact</th><th scope="col">Majority</th><th scope="col">Outliers</th></tr></thead>
<tbody>
{{- range .Drift}}
<tr><th scope="row"><code>{{.Fact}}</code>{{if ne .Scope "fleet"}} <span class="scope">({{.Scope}})</span>{{end}}</th><td><code>{{.Majority}}</code> ({{.MajorityCount}} nodes)</td><td>{{range $i, $g := .Outliers}}{{if $i}}<br>{{end}}<span class="mark" aria-hidden="true">≠</span> <code>{{$g.Value}}</code> ({{$g.Count}}): <span class="mono">{{$g.NodeSet}}</span>{{end}}</td></tr>
{{- end}}
</tbody>
</table></div>
{{- with .DriftNote}}
<p class="legend">{{.}}; the JSON report keeps every scope.</p>
{{- end}}
{{- else}}
<p>No drift: every audited node has the same value for every compared fact.</p>
{{- end}}
</section>

<section aria-labelledby="matrix" class="matrix-section">
<h2 id="matrix">Fact matrix</h2>
<p class="print-only">On paper the matrix lists only the facts that differ{{if not .HasDriftedMatrix}}, and none does{{end}}; the HTML file lists every fact.</p>
<p class="legend">Legend: <span class="swatch drift"><span class="mark">≠</span> 503</span> differs from the majority of its scope (fleet or role) · <span class="swatch">◆</span> after a fact: it differs somewhere · <span class="swatch">—</span> not reported by the node · <span class="swatch na">n/a</span> node not audited</p>
{{- if .Matrix.Rows}}
<div class="filter-box">
<input type="checkbox" id="only-drift"{{if not .HasDriftedMatrix}} disabled{{end}}> <label for="only-drift">show only facts that differ</label>
<div class="scroll"><table class="matrix">
<colgroup><col class="fact"></colgroup>
<thead>
<tr><th scope="col" rowspan="2">Fact</th>{{range .Matrix.Roles}}<th scope="colgroup" colspan="{{.Span}}">{{.Name}}</th>{{end}}</tr>
<tr>{{range .Matrix.Cols}}<th scope="col"><a href="#node-{{.Index}}">{{.Name}}</a>{{if not .OK}}<br><span class="status bad">{{.Status}}</span>{{end}}</th>{{end}}</tr>
</thead>
<tbody>
{{- range .Matrix.Rows}}
<tr class="{{if .Drifted}}differs{{else}}same{{end}}"><th scope="row"{{if .Drifted}} class="drifted"{{end}}><code>{{.Fact}}</code></th>
{{- range .Cells}}{{if eq .State "drift"}}<td class="drift" title="{{.Why}}"><span class="mark" aria-hidden="true">≠</span><span class="sr">differs ({{.Why}}): </span> {{.Value}}</td>{{else if .State}}<td class="{{.State}}" title="{{.Why}}">{{.Value}}</td>{{else}}<td>{{.Value}}</td>{{end}}{{end}}</tr>
{{- end}}
</tbody>
</table></div>
</div>
{{- else}}
<p>No facts were gathered.</p>
{{- end}}
</section>

{{- with .Cluster}}
<section aria-labelledby="cluster">
<h2 id="cluster">Cluster</h2>
<dl class="meta">
<dt>Status</dt><dd class="status {{if .OK}}good{{else}}bad{{end}}">{{.Status}}</dd>
{{- if .Node}}<dt>Ran on</dt><dd class="mono">{{.Node}}</dd>{{end}}
{{- if .Message}}<dt>Message</dt><dd><pre>{{.Message}}</pre></dd>{{end}}
{{- if .Attempts}}<dt>Servers asked</dt><dd><ol>{{range .Attempts}}<li><code>{{.Node}}</code>: <span class="status {{if .OK}}good{{else}}bad{{end}}">{{.Outcome}}</span>{{if .Reason}} — {{.Reason}}{{end}}</li>{{end}}</ol></dd>{{end}}
{{- if .Unjoined}}<dt>Not in the inventory</dt><dd>{{len .Unjoined}} Kubernetes {{if eq (len .Unjoined) 1}}node{{else}}nodes{{end}}, not audited: {{range $i, $n := .Unjoined}}{{if $i}}, {{end}}<code>{{$n}}</code>{{end}}</dd>{{end}}
</dl>
{{- if .Facts}}
<div class="scroll"><table>
<thead><tr><th scope="col">Fact</th><th scope="col">Value</th></tr></thead>
<tbody>
{{- range .Facts}}
<tr><th scope="row"><code>{{.Key}}</code></th><td><code>{{.Value}}</code></td></tr>
{{- end}}
</tbody>
</table></div>
{{- end}}
{{- if .Probes}}
{{template "probeRuns" .Probes}}
{{- end}}
</section>
{{- end}}

<section aria-labelledby="nodes">
<h2 id="nodes">Nodes ({{.NodeCount}})</h2>
{{- range .Nodes}}
<details class="node" id="node-{{.Index}}">
<summary>{{.Name}} — <span class="status {{if .OK}}good{{else}}bad{{end}}">{{.Status}}</span>{{if .Roles}} · {{.Roles}}{{end}} · {{.FailedChecks}} failing, {{if .WaivedChecks}}{{.WaivedChecks}} waived, {{end}}{{.PassChecks}} passing checks</summary>
<dl class="meta">
<dt>Status</dt><dd class="status {{if .OK}}good{{else}}bad{{end}}">{{.Status}}</dd>
{{- if .Address}}<dt>Address</dt><dd class="mono">{{.Address}}</dd>{{end}}
{{- if .Roles}}<dt>Roles</dt><dd>{{.Roles}}</dd>{{end}}
<dt>Duration</dt><dd>{{.Duration}}</dd>
{{- if .Message}}<dt>Message</dt><dd><pre>{{.Message}}</pre></dd>{{end}}
{{- if .Error}}<dt>Error</dt><dd><pre>{{.Error}}</pre></dd>{{end}}
</dl>
{{- if .Checks}}
<h3>Checks not passed</h3>
<div class="scroll"><table>
<thead><tr><th scope="col">Check</th><th scope="col">Severity</th><th scope="col">Outcome</th><th scope="col">Detail</th></tr></thead>
<tbody>
{{- range .Checks}}
<tr><th scope="row"><code>{{.Check}}</code></th><td><span class="badge sev-{{.Severity}}">{{.Severity}}</span></td><td>{{.Outcome}}</td><td>{{.Detail}}</td></tr>
{{- end}}
</tbody>
</table></div>
{{- end}}
{{- if .Facts}}
<div class="raw-facts">
<h3>Facts</h3>
<div class="scroll"><table>
<thead><tr><th scope="col">Fact</th><th scope="col">Value</th></tr></thead>
<tbody>
{{- range .Facts}}
<tr><th scope="row"><code>{{.Key}}</code></th>{{if .Why}}<td class="drift" title="{{.Why}}"><span class="mark" aria-hidden="true">≠</span> <code>{{.Value}}</code> <span class="sr">differs: </span>({{.Why}})</td>{{else}}<td><code>{{.Value}}</code></td>{{end}}</tr>
{{- end}}
</tbody>
</table></div>
</div>
<p class="print-only">Raw facts: in the HTML file and the JSON report.</p>
{{- else}}
<p>No facts.</p>
{{- end}}
{{- if .Probes}}
<h3>Probes</h3>
{{template "probeRuns" .Probes}}
{{- end}}
</details>
{{- end}}
</section>
</main>
<footer>Written by {{.Tool}}. This file is self-contained: it loads nothing and runs no script.</footer>
</body>
</html>
`
