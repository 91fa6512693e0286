package report

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
	"maps"
	"slices"
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
// URL or CSS. The one template.CSS value is the embedded templates/report.css.
type HTML struct {
	// Explain holds, by finding id, the explanation each finding gets as a
	// collapsed section (ExplainSections); a finding without one has none.
	Explain map[string]result.Explanation
}

func (h *HTML) Format(w io.Writer, r *result.Report) error {
	var b bytes.Buffer
	if err := htmlTmpl.Execute(&b, buildHTMLView(r, h.Explain)); err != nil {
		return fmt.Errorf("render html: %w", err)
	}
	_, err := w.Write(b.Bytes())
	return err
}

type htmlView struct {
	CSS template.CSS
	CSP string

	Inventory, Tool string
	TargetVersion   string
	// Change is the change ticket's fields, label and value, as given.
	Change           []htmlFact
	Limit            string
	Passed           bool
	ExitCode         int
	Reasons          []string
	FailOn           string
	AllowUnreachable bool
	Interrupted      bool
	NodeCount        int
	Fleet            string
	RanAt, RanAtISO  string
	RunTime          string
	Decision         htmlDecision
	Readiness        []htmlReadiness
	Down             []htmlNode
	// DownGroups replace Down in a large fleet: the nodes not ok for the
	// same reason in one row.
	DownGroups       []htmlDownGroup
	DownCount        int
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

// htmlDecision is Decide's result laid out for the top of the page.
type htmlDecision struct {
	Tone           Tone
	Headline, Gate string
	// NotAudited are the not audited lines, one per cause (unauditedLines);
	// NotAuditedNodes counts the nodes they name.
	NotAudited        []string
	NotAuditedNodes   int
	ClusterNotAudited string
	NotApplicable     []string
	Blockers          []htmlBlocker
	Warnings, Waivers []string
	Gaps              []htmlGap
}

// htmlGap is a Decision.CheckGaps kind: its head, why and lines.
type htmlGap struct {
	Head, Why string
	Lines     []string
	// Always: the gate counts it, so paper lists it too; the others
	// print as their count alone.
	Always bool
}

type htmlBlocker struct {
	Title, Check, NodeSet, Fix, Rollout string
	// Why is a probable cause's split of the fleet.
	Why string
}

type htmlDownGroup struct {
	NodeSet, Status, Message string
	Count                    int
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
	// Limited: the run had a --limit, so unjoined nodes may be inventory
	// hosts left out of it.
	Limited bool
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
	Explain                      *htmlExplain
}

// htmlExplain is a finding's explanation, laid out by ExplainSections as
// fleet-audit explain prints it.
type htmlExplain struct {
	Meta     string
	Sections []htmlExplainSection
}

type htmlExplainSection struct {
	Title string
	Items []ExplainItem
	List  bool
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
	// Folded: nodes share columns (see buildMatrix).
	Folded bool
	Roles  []htmlRole
	Cols   []htmlCol
	Rows   []htmlRow
	// groups are the columns' nodes (alikeNodes).
	groups alikeGroups
}

type htmlRole struct {
	Name string
	Span int
}

// htmlCol is a matrix column: one node (Index, its place in the report,
// links to its details), or a folded set of Count nodes (Index 0) named
// by their node set, cut to fit, with the whole set as Title when cut.
type htmlCol struct {
	Index               int
	Name, Title, Status string
	Count               int
	OK, HasFacts        bool
	// State is the nodeState of the column's nodes ("ok", "2 findings",
	// "not audited (unreachable)"); StateOK when it is "ok".
	State   string
	StateOK bool
}

type htmlRow struct {
	Fact    string
	Drifted bool
	Cells   []htmlCell
}

type htmlCell struct {
	Value string
	// State is "" (the value), "drift" (not the majority of a scope),
	// "absent" (fact not reported), "na" (node not audited) or "varies"
	// (the nodes of a folded column do not share a value).
	State string
	Why   string
}

type htmlNode struct {
	Index                  int
	Name, Address, Roles   string
	Status, Message, Error string
	OK                     bool
	// State and StateOK: the node's nodeState, which its summary shows.
	State                    string
	StateOK                  bool
	Duration                 string
	Facts                    []htmlFact
	Probes                   []htmlProbe
	Checks                   []htmlCheck
	FailedChecks, PassChecks int
	WaivedChecks             int
	// InMatrix and ProbesOK count the facts and the probes left out of a
	// node's details in a folded report (see htmlNodes).
	InMatrix, ProbesOK int
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

// buildHTMLView lays the report out for the template, section by section
// in the page's order; every string from the report leaves here made
// visible (text, block) for html/template to escape.
func buildHTMLView(r *result.Report, explain map[string]result.Explanation) htmlView {
	v := htmlVerdict(r)
	fs := orderFindings(r.Findings)
	v.FindingTitle = findingsTitle(fs)
	failing := failingNodes(r)
	v.SeverityGroups = htmlFindings(fs, failing, explain)
	d := Decide(r)
	states := nodeStates(r, d)
	v.Decision = newHTMLDecision(r, d, failing)
	for i, c := range readinessCells(r) {
		v.Readiness = append(v.Readiness, htmlReadiness{Area: c[0], Verdict: string(r.Readiness[i].Verdict), Words: c[1], Summary: c[2]})
	}
	if r.Cluster != nil {
		v.Cluster = newHTMLCluster(r.Cluster, r.Partial())
	}
	v.Drift, v.DriftNote = htmlDriftRows(r.Drift)
	odd := outliers(r.Drift)
	v.Matrix = buildMatrix(r, odd, states)
	for _, row := range v.Matrix.Rows {
		v.HasDriftedMatrix = v.HasDriftedMatrix || row.Drifted
	}
	v.Nodes = htmlNodes(r, odd, v.Matrix, states)
	if len(r.Nodes) > foldNodesAbove {
		for _, g := range notOKGroups(r.Nodes) {
			v.DownGroups = append(v.DownGroups, htmlDownGroup{NodeSet: text(compressNodes(g.Nodes)), Count: len(g.Nodes), Status: g.Status.String(), Message: text(g.Text)})
			v.DownCount += len(g.Nodes)
		}
		return v
	}
	for _, hn := range v.Nodes {
		if !hn.OK {
			v.Down = append(v.Down, hn)
		}
	}
	return v
}

// htmlVerdict is the page's head and the verdict box: the gate, its
// reasons, the run's warnings and what the run was.
func htmlVerdict(r *result.Report) htmlView {
	v := htmlView{
		CSS:              template.CSS(htmlCSS),
		CSP:              htmlCSP,
		Inventory:        text(r.Inventory),
		Tool:             text(strings.TrimSpace(r.Tool.Name + " " + r.Tool.Version)),
		TargetVersion:    text(r.TargetVersion),
		Limit:            text(strings.Join(r.Parts(), "; ")),
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
	if c := r.Change; c != nil {
		for _, f := range []htmlFact{{Key: "Change", Value: c.ID}, {Key: "Title", Value: c.Title}, {Key: "Requested by", Value: c.RequestedBy}} {
			if f.Value != "" {
				v.Change = append(v.Change, htmlFact{Key: f.Key, Value: text(f.Value)})
			}
		}
	}
	v.Fleet = fleetLine(r)
	if !r.StartedAt.IsZero() {
		v.RanAtISO = r.StartedAt.UTC().Format("2006-01-02T15:04:05Z")
	}
	return v
}

// htmlFindings groups the findings by severity in result.SeverityOrder (a
// severity with no name goes with unknown, as it ranks), and the waived
// ones in a group of their own after every severity: they are shown, but
// must not sit among the findings that fail the gate.
func htmlFindings(fs []result.Finding, failing map[string]bool, explain map[string]result.Explanation) (groups []htmlSeverityGroup) {
	var active, waived []result.Finding
	for _, f := range fs {
		if f.Waived != nil {
			waived = append(waived, f)
		} else {
			active = append(active, f)
		}
	}
	for _, sev := range result.SeverityOrder {
		g := htmlSeverityGroup{Severity: sev.String()}
		for _, f := range active {
			if f.Severity.Rank() == sev.Rank() {
				g.Findings = append(g.Findings, newHTMLFinding(f, failing, explain))
			}
		}
		if len(g.Findings) > 0 {
			groups = append(groups, g)
		}
	}
	if len(waived) > 0 {
		g := htmlSeverityGroup{Severity: "waived"}
		for _, f := range waived {
			g.Findings = append(g.Findings, newHTMLFinding(f, failing, explain))
		}
		groups = append(groups, g)
	}
	return groups
}

// htmlReadiness is one row of the readiness table (readinessCells);
// Verdict is its CSS class.
type htmlReadiness struct {
	Area, Verdict, Words, Summary string
}

// newHTMLDecision lays out d, Decide(r), for the top of the page; the probable
// cause is the title of its blocker, said there once above the fold.
func newHTMLDecision(r *result.Report, d Decision, failing map[string]bool) htmlDecision {
	hd := htmlDecision{
		Tone: d.Tone, Headline: d.Headline, Gate: text(Verdict(r.Gate)),
		NotAudited: texts(unauditedLines(d.NotAudited, true)), NotAuditedNodes: len(d.NotAudited), NotApplicable: texts(d.NotApplicable), ClusterNotAudited: text(d.ClusterNotAudited),
	}
	for _, f := range d.Blockers {
		b := htmlBlocker{Title: text(f.Title), Check: text(f.Check), NodeSet: text(compressNodes(f.Nodes)), Fix: text(f.Remediation),
			Rollout: text(rolloutLine(rolloutSteps(f.Rollout, failing)))}
		if f.Cause != nil {
			b.Why = text(causeStats(f.Cause))
		}
		hd.Blockers = append(hd.Blockers, b)
	}
	for _, f := range d.Warnings {
		hd.Warnings = append(hd.Warnings, text(f.Severity.String()+": "+findingLine(f)))
	}
	for _, f := range d.Waived {
		hd.Waivers = append(hd.Waivers, text(waiverLine(f)))
	}
	for _, gap := range d.CheckGaps() {
		hg := htmlGap{Head: text(upperFirst(gap.Head)), Why: text(gap.Why), Always: gap.Always}
		for _, g := range gap.Groups {
			hg.Lines = append(hg.Lines, text(skippedLine(g)))
		}
		hd.Gaps = append(hd.Gaps, hg)
	}
	return hd
}

// newHTMLCluster is the cluster section: status, the servers asked when one
// did not answer, the cluster facts, the probes that did not succeed and
// the Kubernetes nodes the inventory lacks.
func newHTMLCluster(c *result.Cluster, limited bool) *htmlCluster {
	hc := &htmlCluster{Status: text(string(c.Status)), Node: text(c.Node), Message: block(c.Message), OK: c.Status == result.ClusterOK, Unjoined: texts(c.UnjoinedK8sNodes()), Limited: limited}
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
	return hc
}

// htmlDriftRows are the drift table's rows, role rows folded into their
// fleet row, and the note that says how many were folded.
func htmlDriftRows(drift []result.Drift) (rows []htmlDrift, note string) {
	folded := foldDrift(drift)
	for _, dr := range folded {
		d := dr.d
		hd := htmlDrift{Fact: text(d.Fact), Scope: text(string(d.Scope)), Majority: text(d.Majority), MajorityCount: majorityCount(d)}
		for _, g := range d.Groups {
			if g.Value != d.Majority {
				hd.Outliers = append(hd.Outliers, htmlGroup{Value: text(g.Value), NodeSet: text(compressNodes(g.Nodes)), Count: len(g.Nodes)})
			}
		}
		rows = append(rows, hd)
	}
	return rows, foldedNote(folded)
}

// htmlNodes is every node's block: its facts (outliers marked with why),
// its probes and the checks it did not pass.
//
// Where the matrix is folded, the blocks would repeat its values once per
// node, tens of thousands of rows for a large fleet: a node's block there
// lists only the facts its column does not show (those that differ inside
// the column) and the probes that did not finish ok, and counts the rest.
func htmlNodes(r *result.Report, odd map[string]map[string][]string, m htmlMatrix, states map[string]nodeState) []htmlNode {
	checks := checksByNode(r)
	var out []htmlNode
	for i, n := range r.Nodes {
		st := states[n.Name]
		hn := htmlNode{
			State: text(st.Word), StateOK: st.OK,
			Index: i + 1, Name: text(n.Name), Address: text(n.Address), Roles: text(strings.Join(n.Roles, ", ")),
			Status: n.Status.String(), Message: block(n.Message), Error: block(n.Error), OK: n.Status == result.StatusOK,
			Duration: fmt.Sprintf("%.1fs", n.DurationSeconds),
		}
		col := m.groups.GroupOf[i]
		fold := len(m.groups.Groups[col]) > 1
		addFact := func(k string) {
			hn.Facts = append(hn.Facts, htmlFact{Key: text(k), Value: text(n.Facts[k]), Why: text(strings.Join(odd[k][n.Name], "; "))})
		}
		switch {
		case !fold:
			for _, k := range slices.Sorted(maps.Keys(n.Facts)) {
				addFact(k)
			}
		default:
			for row, k := range m.groups.Keys {
				if _, ok := n.Facts[k]; !ok {
					continue
				}
				if m.Rows[row].Cells[col].State == "varies" {
					addFact(k)
				} else {
					hn.InMatrix++
				}
			}
		}
		for _, p := range n.Probes {
			if fold && p.Status == result.ProbeOK && p.Stderr == "" {
				hn.ProbesOK++
				continue
			}
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
		out = append(out, hn)
	}
	return out
}

func newHTMLFinding(f result.Finding, failing map[string]bool, explain map[string]result.Explanation) htmlFinding {
	hf := htmlFinding{
		Check: text(f.Check), Kind: text(string(f.Kind)), Title: text(f.Title), Severity: f.Severity.String(),
		Summary: text(f.Summary), Remediation: text(f.Remediation),
		Nodes: texts(f.Nodes), NodeSet: text(compressNodes(f.Nodes)), Evidence: texts(f.Evidence),
	}
	if f.Cause != nil {
		hf.Cause = &htmlCause{Head: text(f.Cause.Headline()), Stats: text(causeStats(f.Cause))}
		if hf.Cause.Head == hf.Title {
			// audit titles a correlation with its headline: said once.
			hf.Cause.Head = ""
		}
		for _, c := range candidateRows(f.Cause) {
			hf.Cause.Ranked = append(hf.Cause.Ranked, candidateRow{Pair: text(c.Pair), Failing: c.Failing, Healthy: c.Healthy, Score: c.Score})
		}
	}
	for _, s := range rolloutSteps(f.Rollout, failing) {
		s.Class, s.Nodes = text(s.Class), texts(s.Nodes)
		hf.Rollout = append(hf.Rollout, s)
	}
	if w := f.Waived; w != nil {
		hf.Waived = &htmlWaiver{Expires: text(w.Expires), Source: text(w.Source), Reason: block(w.Reason), Scope: text(w.Scope())}
	}
	if e, ok := explain[f.Check]; ok {
		hf.Explain = newHTMLExplain(e)
	}
	return hf
}

func newHTMLExplain(e result.Explanation) *htmlExplain {
	_, meta := ExplainHeading(e)
	he := &htmlExplain{Meta: text(meta)}
	for _, s := range ExplainSections(e) {
		hs := htmlExplainSection{Title: text(s.Title), List: s.List}
		for _, it := range s.Items {
			it.Text = text(it.Text)
			hs.Items = append(hs.Items, it)
		}
		he.Sections = append(he.Sections, hs)
	}
	return he
}

// buildMatrix lays out facts (rows) against nodes (columns), the columns
// in alikeNodes' groups: a node each, or, in a large fleet, the nodes that
// differ in nothing the fleet compares, headed by their node set. Facts are
// rows because there are a few dozen of them and they have long names,
// while a column per node keeps a role together. A fact that differs
// inside a folded column shows how many values it has there; each node's
// own value is in its details.
func buildMatrix(r *result.Report, odd map[string]map[string][]string, states map[string]nodeState) htmlMatrix {
	g := alikeNodes(r, odd)
	m := htmlMatrix{Folded: g.Folded, groups: g}
	for _, role := range g.Roles {
		m.Roles = append(m.Roles, htmlRole{Name: text(role.Name), Span: role.Groups})
	}
	for j, members := range g.Groups {
		n := r.Nodes[members[0]]
		col := htmlCol{Name: text(n.Name), Status: n.Status.String(), OK: n.Status == result.StatusOK, HasFacts: len(n.Facts) > 0, Count: len(members)}
		st := states[n.Name]
		for _, k := range members[1:] {
			if states[r.Nodes[k].Name] != st {
				// The nodes of a folded column share their facts, not
				// always their findings; each says its own in its details.
				st = nodeState{Word: "varies"}
				break
			}
		}
		col.State, col.StateOK = text(st.Word), st.OK
		if len(members) == 1 {
			col.Index = members[0] + 1
		} else {
			set := g.nodeSet(r.Nodes, j)
			col.Name = text(truncate(set, nodeSetMax))
			if col.Name != text(set) {
				col.Title = text(set)
			}
		}
		m.Cols = append(m.Cols, col)
	}
	for _, k := range g.Keys {
		row := htmlRow{Fact: text(k), Drifted: len(odd[k]) > 0}
		for j := range g.Groups {
			row.Cells = append(row.Cells, matrixCell(r.Nodes, g, j, k, odd[k]))
		}
		m.Rows = append(m.Rows, row)
	}
	return m
}

// matrixCell is fact k in column j, whose outliers (by node name) are odd.
func matrixCell(nodes []result.Node, g alikeGroups, j int, k string, odd map[string][]string) htmlCell {
	n := nodes[g.Groups[j][0]]
	if len(n.Facts) == 0 {
		return htmlCell{State: "na", Value: "n/a", Why: "node not audited: " + n.Status.String()}
	}
	val, ok, values := g.groupValue(nodes, j, k)
	switch {
	case values > 1:
		return htmlCell{State: "varies", Value: result.Count(values, "value"), Why: "differs from node to node in this column; each node's value is in its details"}
	case !ok:
		return htmlCell{State: "absent", Value: "—", Why: "not reported by this node"}
	case len(odd[n.Name]) > 0:
		return htmlCell{State: "drift", Value: text(val), Why: text(strings.Join(odd[n.Name], "; "))}
	}
	return htmlCell{Value: text(val)}
}

// htmlCSP is the page's own Content-Security-Policy: nothing may load and
// nothing may run; the only style allowed is the inline stylesheet, pinned
// by its hash.
var htmlCSP = func() string {
	sum := sha256.Sum256([]byte(htmlCSS))
	return "default-src 'none'; style-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'; base-uri 'none'; form-action 'none'"
}()

// The page, the probe-runs table it uses twice (cluster and every node) and
// the stylesheet are files so that they can be read and edited as HTML and
// CSS. report.css starts with a line break on purpose: it sits inside
// <style> in the page, and the CSP pins the hash of exactly these bytes.
var (
	//go:embed templates/report.html.tmpl
	htmlTemplate string
	//go:embed templates/probe_runs.html.tmpl
	probeRunsTemplate string
	//go:embed templates/report.css
	htmlCSS string
)

var htmlTmpl = template.Must(template.Must(template.New("report").Parse(htmlTemplate)).Parse(probeRunsTemplate))
