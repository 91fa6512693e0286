package report

import (
	"bytes"
	"cmp"
	"encoding/xml"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/fleet-audit/fleet-audit/result"
)

var _ Formatter = (*JUnit)(nil)

// JUnit writes JUnit XML for CI (Jenkins junit, GitLab artifacts:reports:junit).
//
// Its failures are the gate's: one failing test case for each finding the
// gate counts (result.Gate.Fails), so the CI page and the exit code never
// disagree. A check failing on four nodes is one finding, one line of the
// gate and one failure, not four; a warning under --fail-on critical fails
// neither. The document has three suites:
//
//	findings  one test case per finding, named by its check, in the
//	          report's order of findings:
//	            counted by the gate → <failure type="<severity>">: title
//	              and nodes, then summary, probable cause, evidence,
//	              remediation and rollout;
//	            below --fail-on → passed, the finding in <system-out>;
//	            waived → <skipped message="waived: reason (until date)">.
//	checks    one test case per check that raised no finding: passed, or
//	          skipped (with why) when no node could be judged; and one
//	          skipped case "<check> (<kind>)" per kind of gap on audited
//	          nodes: could not be judged, not applicable, skipped.
//	nodes     one test case per node: passed, with its findings and facts
//	          in <system-out>, or <error> when it was not fully audited (the
//	          gate's "not fully audited"), or <skipped> with the reason
//	          when the audit does not apply to it (not_applicable, a
//	          Windows node); and "(cluster)", the cluster's
//	          own view: <error> when it failed (the gate counts it as a
//	          node not audited), skipped when no server was there to ask.
//
// A finding below --fail-on is a passed case rather than a skipped one:
// the gate judged it and let it through, while CI pages count skips as
// "not run", a number operators learn to ignore. Its text stays one click
// away in the case's output. The per-node view ("what is wrong with
// worker-2") is the node's case output.
//
// The document is valid against the Jenkins xunit plugin's junit-10.xsd
// (report/testdata/junit, checked by TestJUnitSchema), which is what
// Jenkins validates and a superset of what GitLab reads. It does not
// follow the Ant schema (windyroad JUnit.xsd): that one forbids the totals
// on <testsuites>, and requires a hostname and a timestamp on every suite,
// which would have to be invented. Classnames are the suite names, fixed
// words: Jenkins splits a classname at its last dot into package and class,
// which would scatter check ids and node FQDNs.
type JUnit struct{}

// junitSuites has no skipped total: junit-10.xsd allows none on
// <testsuites>, and Jenkins and GitLab count from the cases anyway.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Timestamp  string          `xml:"timestamp,attr,omitempty"`
	Hostname   string          `xml:"hostname,attr,omitempty"`
	Properties []junitProperty `xml:"properties>property,omitempty"`
	Cases      []junitCase     `xml:"testcase"`
	SystemOut  *junitText      `xml:"system-out,omitempty"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr,omitempty"`
	Failure   *junitProblem `xml:"failure,omitempty"`
	Error     *junitProblem `xml:"error,omitempty"`
	Skipped   *junitSkipped `xml:"skipped,omitempty"`
	SystemOut *junitText    `xml:"system-out,omitempty"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",cdata"`
}

// junitText is multi-line element text. CDATA keeps it readable in the raw
// file (chardata would write every newline as &#xA;); encoding/xml splits a
// "]]>" in the text, so node data cannot end the section.
type junitText struct {
	Text string `xml:",cdata"`
}

type junitSkipped struct {
	Message string `xml:"message,attr,omitempty"`
}

func (j *JUnit) Format(w io.Writer, r *result.Report) error {
	doc := junitSuites{Name: "fleet-audit", Time: "0.000"}
	if !r.StartedAt.IsZero() && !r.FinishedAt.Before(r.StartedAt) {
		doc.Time = junitSeconds(r.FinishedAt.Sub(r.StartedAt).Seconds())
	}
	// The schema has no properties on <testsuites>, so every suite carries
	// what the run was judged against.
	props := []junitProperty{
		{Name: "fail_on", Value: r.Gate.FailOn.String()},
		{Name: "gate", Value: xmlText(Verdict(r.Gate), false)},
		{Name: "decision", Value: Decide(r).Headline},
	}
	if c := r.Change; c != nil {
		for _, p := range []junitProperty{{"change_id", c.ID}, {"change_title", c.Title}, {"requested_by", c.RequestedBy}} {
			if p.Value != "" {
				props = append(props, junitProperty{Name: p.Name, Value: xmlText(p.Value, false)})
			}
		}
	}
	// The readiness by area as properties, not cases: the failures are
	// exactly the findings the gate counts, and a blocked area is those
	// findings again.
	for _, c := range readinessCells(r) {
		props = append(props, junitProperty{Name: "readiness", Value: xmlText(c[0]+": "+c[1]+": "+c[2], false)})
	}
	if r.Inventory != "" {
		props = append(props, junitProperty{Name: "inventory", Value: xmlText(r.Inventory, false)})
	}
	props = append(props, junitProperty{Name: "nodes", Value: fmt.Sprint(len(r.Nodes))})
	if v := strings.TrimSpace(r.Tool.Name + " " + r.Tool.Version); v != "" {
		props = append(props, junitProperty{Name: "tool", Value: xmlText(v, false)})
	}
	if r.TargetVersion != "" {
		props = append(props, junitProperty{Name: "target_version", Value: xmlText(r.TargetVersion, false)})
	}
	for _, part := range r.Parts() {
		props = append(props, junitProperty{Name: "limit", Value: xmlText(part, false)})
	}
	// The run's warnings (host keys not verified...) likewise: a CI page
	// showing a green suite must still carry them.
	for _, w := range r.Warnings {
		props = append(props, junitProperty{Name: "warning", Value: xmlText(w, false)})
	}
	timestamp := ""
	if !r.StartedAt.IsZero() {
		// The JUnit schema's timestamp has no zone; it is UTC.
		timestamp = r.StartedAt.UTC().Format("2006-01-02T15:04:05")
	}
	suite := func(name string) junitSuite {
		return junitSuite{Name: name, Time: "0.000", Timestamp: timestamp, Properties: props}
	}
	findings, checks, nodes := suite("findings"), suite("checks"), suite("nodes")
	nodes.Time = doc.Time

	fs := orderFindings(r.Findings)
	failing := failingNodes(r)
	for i := range fs {
		findings.add(findingCase(r, fs, i, failing))
	}
	for _, c := range checkCases(r) {
		checks.add(c)
	}
	byNode := findingsByNode(fs)
	for _, n := range r.Nodes {
		nodes.add(nodeCase(n, fs, byNode[n.Name]))
	}
	if r.Cluster != nil {
		nodes.add(clusterCase(r, fs, byNode[result.ClusterNode]))
	}

	for _, s := range []junitSuite{findings, checks, nodes} {
		doc.Suites = append(doc.Suites, s)
		doc.Tests += s.Tests
		doc.Failures += s.Failures
		doc.Errors += s.Errors
	}
	var b bytes.Buffer
	b.WriteString(xml.Header)
	enc := xml.NewEncoder(&b)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("encode junit: %w", err)
	}
	b.WriteString("\n")
	_, err := w.Write(b.Bytes())
	return err
}

// add appends a case and counts it.
func (s *junitSuite) add(c junitCase) {
	c.Classname = s.Name
	s.Cases = append(s.Cases, c)
	s.Tests++
	switch {
	case c.Failure != nil:
		s.Failures++
	case c.Error != nil:
		s.Errors++
	case c.Skipped != nil:
		s.Skipped++
	}
}

// junitSeconds is a duration as the schema's time: digits, a point and
// digits, never a sign or an exponent. A saved report read back by
// "fleet-audit report" may carry any number, so what cannot be a duration
// is written as 0.
func junitSeconds(s float64) string {
	if !(s >= 0) || math.IsInf(s, 1) {
		return "0.000"
	}
	return strconv.FormatFloat(s, 'f', 3, 64)
}

// findingCase is the test case of finding fs[i]: a failure exactly when
// the gate counts it.
func findingCase(r *result.Report, fs []result.Finding, i int, failing map[string]bool) junitCase {
	f := fs[i]
	tc := junitCase{Name: xmlText(f.Check, false)}
	title := f.Title
	if len(f.Nodes) > 0 {
		title += fmt.Sprintf(" (%s: %s)", result.Count(len(f.Nodes), "node"), compressNodes(f.Nodes))
	}
	var b strings.Builder
	if f.Summary != "" {
		b.WriteString(f.Summary + "\n")
	}
	switch cause := causeOf(fs, f); {
	case cause == nil:
	case cause == f.Cause:
		// Its own cause: the title already names it.
		fmt.Fprintf(&b, "%s\n", causeStats(cause))
	default:
		fmt.Fprintf(&b, "%s\n  %s\n", cause.Headline(), causeStats(cause))
	}
	if len(f.Evidence) > 0 {
		b.WriteString("evidence:\n")
		for _, e := range f.Evidence {
			b.WriteString("  " + e + "\n")
		}
	}
	if f.Remediation != "" {
		b.WriteString("remediation: " + f.Remediation + "\n")
	}
	if len(f.Rollout) > 0 {
		b.WriteString("rollout: " + rolloutLine(rolloutSteps(f.Rollout, failing)) + "\n")
	}
	switch {
	case f.Waived != nil:
		tc.Skipped = &junitSkipped{Message: xmlText(fmt.Sprintf("waived: %s (until %s)", f.Waived.Reason, f.Waived.Expires), false)}
	case r.Gate.Fails(f):
		tc.Failure = &junitProblem{Message: xmlText(title, false), Type: f.Severity.String(), Text: xmlText(b.String(), true)}
	default:
		text := fmt.Sprintf("%s below --fail-on %s: %s\n%s", f.Severity, r.Gate.FailOn, title, b.String())
		tc.SystemOut = &junitText{Text: xmlText(text, true)}
	}
	return tc
}

// causeOf is the probable cause shown with f: its own, for a correlation
// finding, else that of the correlation finding explaining f's check.
func causeOf(fs []result.Finding, f result.Finding) *result.Cause {
	if f.Cause != nil {
		return f.Cause
	}
	for _, c := range fs {
		if c.Cause != nil && c.Waived == nil && explains(c.Cause, f.Check) {
			return c.Cause
		}
	}
	return nil
}

// checkGapKinds are the outcomes that leave a check neither passed nor
// failed on an audited node, each the suffix of its own test case, in the
// order of Decision.CheckGaps.
var checkGapKinds = []struct {
	outcome result.Outcome
	suffix  string
}{
	{result.OutcomeUnjudged, "could not be judged"},
	{result.OutcomeNotApplicable, "not applicable"},
	{result.OutcomeSkip, "skipped"},
}

// checkCases are the cases of the checks suite, in the order the report
// first lists the checks. A check that raised no finding is one case
// named by it: passed where any node passed, skipped with the reason where
// none could be judged. A check left unjudged, not applicable or skipped
// on audited nodes, and passed or failed on others, has one more case per
// kind, "<check> (<kind>)", skipped with the nodes and why, so that no
// node's gap hides behind another node's pass and the kinds are counted
// apart; judged nowhere for one kind of reason, the check's own case says
// it, and the case is not counted twice.
func checkCases(r *result.Report) []junitCase {
	loud := map[string]bool{}
	for _, f := range r.Findings {
		loud[f.Check] = true
	}
	audited := map[string]bool{}
	for _, n := range r.Nodes {
		audited[n.Name] = n.Status.HasFacts()
	}
	type gap struct {
		nodes  []string
		detail string
	}
	type verdict struct {
		passed bool
		detail string
		gaps   map[result.Outcome]*gap
	}
	var order []string
	seen := map[string]*verdict{}
	for _, c := range r.Checks {
		if c.Outcome == result.OutcomeFail || c.Outcome == result.OutcomeWaived {
			// A failure always has its finding; this guards a saved
			// report that lost it from showing the check as passed.
			loud[c.Check] = true
		}
		v := seen[c.Check]
		if v == nil {
			v = &verdict{gaps: map[result.Outcome]*gap{}}
			seen[c.Check] = v
			order = append(order, c.Check)
		}
		switch {
		case c.Outcome == result.OutcomePass:
			v.passed = true
		case audited[c.Node] && c.Outcome != result.OutcomeFail && c.Outcome != result.OutcomeWaived:
			g := v.gaps[c.Outcome]
			if g == nil {
				g = &gap{detail: c.Detail}
				v.gaps[c.Outcome] = g
			}
			g.nodes = append(g.nodes, c.Node)
		}
		if c.Outcome != result.OutcomePass && v.detail == "" {
			v.detail = c.Detail
		}
	}
	var out []junitCase
	for _, id := range order {
		v := seen[id]
		var gaps []junitCase
		for _, k := range checkGapKinds {
			g := v.gaps[k.outcome]
			if g == nil {
				continue
			}
			msg := fmt.Sprintf("%s on %s (%s)", k.suffix, result.Count(len(g.nodes), "node"), compressNodes(g.nodes))
			if g.detail != "" {
				msg += ": " + g.detail
			}
			gaps = append(gaps, junitCase{Name: xmlText(id+" ("+k.suffix+")", false), Skipped: &junitSkipped{Message: xmlText(msg, false)}})
		}
		if loud[id] {
			out = append(out, gaps...)
			continue
		}
		tc := junitCase{Name: xmlText(id, false)}
		switch {
		case v.passed:
			out = append(out, tc)
			out = append(out, gaps...)
		case len(gaps) == 1:
			// Judged nowhere, for one reason: the check's own case says
			// it, under its own name, counted once.
			tc.Skipped = gaps[0].Skipped
			out = append(out, tc)
		case len(gaps) > 1:
			out = append(out, gaps...)
		default:
			tc.Skipped = &junitSkipped{Message: xmlText(cmp.Or(v.detail, "not judged on any node"), false)}
			out = append(out, tc)
		}
	}
	return out
}

// findingsByNode indexes the findings by the nodes they name, a cluster
// finding under result.ClusterNode, so each node's case looks up its own
// instead of scanning them all.
func findingsByNode(fs []result.Finding) map[string][]int {
	out := map[string][]int{}
	for i, f := range fs {
		for _, n := range f.Nodes {
			out[n] = append(out[n], i)
		}
		if len(f.Nodes) == 0 {
			out[result.ClusterNode] = append(out[result.ClusterNode], i)
		}
	}
	return out
}

// findingLines lists the findings at idx, one per line, for a node's
// output: what is wrong here, in the report's order.
func findingLines(b *strings.Builder, fs []result.Finding, idx []int) {
	if len(idx) == 0 {
		return
	}
	b.WriteString("findings:\n")
	for _, i := range idx {
		f := fs[i]
		state := f.Severity.String()
		if f.Waived != nil {
			state += ", waived"
		}
		fmt.Fprintf(b, "  %s (%s): %s\n", f.Check, state, f.Title)
	}
}

// factLines lists facts under a "facts:" line, in the order of keys; it
// writes nothing when there are none.
func factLines(b *strings.Builder, keys []string, facts map[string]string) {
	if len(keys) == 0 {
		return
	}
	b.WriteString("facts:\n")
	for _, k := range keys {
		b.WriteString("  " + k + "=" + facts[k] + "\n")
	}
}

// nodeCase is a node's test case: an error when the node was not fully
// audited, else passed; its findings, facts and unfinished probes are its
// output either way.
func nodeCase(n result.Node, fs []result.Finding, idx []int) junitCase {
	tc := junitCase{Name: xmlText(n.Name, false), Time: junitSeconds(n.DurationSeconds)}
	var b strings.Builder
	fmt.Fprintf(&b, "address: %s\nroles: %s\nstatus: %s\n", n.Address, strings.Join(n.Roles, ","), n.Status)
	findingLines(&b, fs, idx)
	factLines(&b, slices.Sorted(maps.Keys(n.Facts)), n.Facts)
	// Every probe that did not finish ok, also without stderr: a failed
	// probe's checks skip, and CI shows only this text.
	for _, p := range n.Probes {
		switch {
		case p.Stderr != "":
			fmt.Fprintf(&b, "# probe %s %s (exit %d) stderr: %s\n", p.ID, p.Status, p.ExitCode, p.Stderr)
		case p.Status != result.ProbeOK:
			fmt.Fprintf(&b, "# probe %s %s (exit %d)\n", p.ID, p.Status, p.ExitCode)
		}
	}
	tc.SystemOut = &junitText{Text: xmlText(b.String(), true)}
	if n.Status == result.StatusNotApplicable {
		tc.Skipped = &junitSkipped{Message: xmlText(n.Status.String()+": "+n.Message, false)}
	} else if n.Status != result.StatusOK {
		msg := n.Status.String()
		if n.Message != "" {
			msg += ": " + n.Message
		}
		tc.Error = &junitProblem{Message: xmlText(msg, false), Type: n.Status.String(), Text: xmlText(n.Error, true)}
	}
	return tc
}

// clusterCase is the cluster's own view (result.ClusterNode): passed, an
// error when it failed, or skipped with why when no server was asked.
func clusterCase(r *result.Report, fs []result.Finding, idx []int) junitCase {
	c := r.Cluster
	tc := junitCase{Name: result.ClusterNode}
	var b strings.Builder
	fmt.Fprintf(&b, "status: %s\n", c.Status)
	if c.Node != "" {
		fmt.Fprintf(&b, "asked through: %s\n", c.Node)
	}
	findingLines(&b, fs, idx)
	factLines(&b, clusterFacts(c), c.Facts)
	for _, k := range c.UnjoinedK8sNodes() {
		b.WriteString("# kubernetes node " + result.UnjoinedLabel(r.Partial()) + ": " + k + "\n")
	}
	for _, l := range c.NotApplicableK8sNodes() {
		b.WriteString("# kubernetes node not applicable, not in the inventory: " + l + "\n")
	}
	for _, p := range c.Probes {
		if p.Stderr != "" {
			fmt.Fprintf(&b, "# probe %s %s (exit %d) stderr: %s\n", p.ID, p.Status, p.ExitCode, p.Stderr)
		}
	}
	tc.SystemOut = &junitText{Text: xmlText(b.String(), true)}
	msg := string(c.Status)
	if c.Message != "" {
		msg += ": " + c.Message
	}
	switch c.Status {
	case result.ClusterOK:
	case result.ClusterFailed:
		// A failed view is an audit that did not finish, as a node's is.
		tc.Error = &junitProblem{Message: xmlText(msg, false), Type: string(c.Status)}
	default:
		tc.Skipped = &junitSkipped{Message: xmlText(msg, false)}
	}
	return tc
}

// xmlText makes s safe to carry in XML 1.0. encoding/xml escapes markup but
// replaces the control characters XML 1.0 forbids with U+FFFD, losing what
// they were; they are made visible instead (\x1b), like in the terminal.
// Newlines and tabs are legal and kept in element text (multiline) and
// escaped in attributes, where parsers would normalise them to spaces.
func xmlText(s string, multiline bool) string {
	if multiline {
		return visible(s, "\n\t")
	}
	return visible(s, "")
}
