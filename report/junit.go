package report

import (
	"bytes"
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
// There is one <testsuite> per node, not per check, and classname is the
// node. Jenkins builds its result tree from classname (one row per class
// with its failure count) and GitLab lists each case as classname then
// name, so both show the nodes as the groups; an operator fixes one node at
// a time, and "what is wrong with worker-2" must be one click. Per check,
// the incident would be a row "k8s.kubeproxy-crashloop: 4 failed" with the
// nodes one level down, scattered over every check. What spans nodes (the
// probable cause, the fleet comparison) is in the failure body of every
// affected case and in the other reports. Each suite holds one <testcase
// classname="<node>" name="<check>"> per check result of that node.
//
// The document is valid against the Jenkins xunit plugin's junit-10.xsd
// (report/testdata/junit, checked by TestJUnitSchema), which is what
// Jenkins validates and a superset of what GitLab reads. It does not
// follow the Ant schema (windyroad JUnit.xsd): that one forbids the totals
// on <testsuites>, and requires a hostname and a timestamp on every suite,
// which the cluster suite and a report without a start time do not have
// and which would have to be invented.
//
// Outcomes map as follows (after kube-bench, but a warning is a real
// problem here, so it fails the test case rather than hiding as skipped):
//
//	fail, critical/warning/unknown → <failure type="<severity>">
//	fail, info                     → <skipped message="info: ...">
//	waived                         → <skipped message="waived: reason (until date)">
//	skip                           → <skipped>
//	node not ok                    → an extra test case with <error>
//
// Cluster-scoped checks (CheckResult.Node "(cluster)") are no node's: they
// get a suite of their own, "cluster", with the cluster facts as its
// output; when the cluster probes did not run, a skipped "probes" case
// says why.
//
// JUnit only shows what the report says; the exit code stays the gate's.
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
	Failure   *junitProblem `xml:"failure,omitempty"`
	Error     *junitProblem `xml:"error,omitempty"`
	Skipped   *junitSkipped `xml:"skipped,omitempty"`
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
	ix := newJUnitIndex(r)
	var target []junitProperty
	if r.TargetVersion != "" {
		// The schema has no properties on <testsuites>, so every suite
		// carries the target the run was judged against.
		target = []junitProperty{{Name: "target_version", Value: xmlText(r.TargetVersion, false)}}
	}
	if r.Limit != nil {
		target = append(target, junitProperty{Name: "limit", Value: xmlText(r.Limit.Describe(), false)})
	}
	// The run's warnings (host keys not verified...) likewise: a CI page
	// showing a green suite must still carry them.
	for _, w := range r.Warnings {
		target = append(target, junitProperty{Name: "warning", Value: xmlText(w, false)})
	}
	timestamp := ""
	if !r.StartedAt.IsZero() {
		// The JUnit schema's timestamp has no zone; it is UTC.
		timestamp = r.StartedAt.UTC().Format("2006-01-02T15:04:05")
	}
	for _, n := range r.Nodes {
		s := junitSuite{
			Name:     xmlText(n.Name, false),
			Time:     junitSeconds(n.DurationSeconds),
			Hostname: xmlText(n.Address, false),
			Properties: append([]junitProperty{
				{Name: "status", Value: n.Status.String()},
				{Name: "roles", Value: xmlText(strings.Join(n.Roles, ","), false)},
			}, target...),
			Timestamp: timestamp,
		}
		if n.Status != result.StatusOK {
			name := "connect"
			if len(n.Facts) > 0 {
				// Partial: the facts that arrived were judged below, but
				// the node must not look green.
				name = "probes"
			}
			msg := n.Status.String()
			if n.Message != "" {
				msg += ": " + n.Message
			}
			s.Cases = append(s.Cases, junitCase{
				Name: name, Classname: junitClassname(s.Name),
				Error: &junitProblem{Message: xmlText(msg, false), Type: n.Status.String(), Text: xmlText(n.Error, true)},
			})
			s.Errors++
		}
		addCases(&s, ix, n.Name)
		s.Tests = len(s.Cases)
		var out strings.Builder
		for _, k := range slices.Sorted(maps.Keys(n.Facts)) {
			out.WriteString(k + "=" + n.Facts[k] + "\n")
		}
		// Every probe that did not finish ok, also without stderr: a
		// failed probe's checks skip, and CI shows only this text.
		for _, p := range n.Probes {
			switch {
			case p.Stderr != "":
				fmt.Fprintf(&out, "# probe %s %s (exit %d) stderr: %s\n", p.ID, p.Status, p.ExitCode, p.Stderr)
			case p.Status != result.ProbeOK:
				fmt.Fprintf(&out, "# probe %s %s (exit %d)\n", p.ID, p.Status, p.ExitCode)
			}
		}
		if out.Len() > 0 {
			s.SystemOut = &junitText{Text: xmlText(out.String(), true)}
		}
		doc.Suites = append(doc.Suites, s)
	}
	if s, ok := clusterSuite(ix, target, timestamp); ok {
		doc.Suites = append(doc.Suites, s)
	}
	for _, s := range doc.Suites {
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

// junitIndex is what the suites look up by node, indexed once: a suite per
// node that scanned every check result, finding and evidence line made the
// JUnit report quadratic in the fleet's size.
type junitIndex struct {
	r *result.Report
	// names are the inventory names.
	names  map[string]bool
	checks map[string][]int
	// findings are the indexes in r.Findings of the findings that name a
	// node, in the report's order; a cluster check's findings name no node
	// and are under result.ClusterNode.
	findings map[string][]int
	// evidence indexes a finding's evidence lines, built when first needed.
	evidence map[int]*evidenceIndex
}

// evidenceIndex splits a finding's evidence lines into those about one
// inventory node ("node: ...") and the others, by line number.
type evidenceIndex struct {
	fleet  []int
	byNode map[string][]int
}

func newJUnitIndex(r *result.Report) *junitIndex {
	ix := &junitIndex{r: r, names: map[string]bool{}, checks: checksByNode(r), findings: map[string][]int{}, evidence: map[int]*evidenceIndex{}}
	for _, n := range r.Nodes {
		ix.names[n.Name] = true
	}
	add := func(node string, i int) {
		if l := ix.findings[node]; len(l) == 0 || l[len(l)-1] != i {
			ix.findings[node] = append(l, i)
		}
	}
	for i, f := range r.Findings {
		for _, n := range f.Nodes {
			add(n, i)
		}
		if len(f.Nodes) == 0 {
			add(result.ClusterNode, i)
		}
	}
	return ix
}

// addCases appends one test case per check result of node (an inventory
// name, or result.ClusterNode) to s.
func addCases(s *junitSuite, ix *junitIndex, node string) {
	for _, i := range ix.checks[node] {
		c := ix.r.Checks[i]
		tc := junitCase{Name: xmlText(c.Check, false), Classname: junitClassname(s.Name)}
		switch c.Outcome {
		case result.OutcomePass:
		case result.OutcomeFail:
			msg, text := failureText(ix, c)
			if c.Severity == result.SeverityInfo {
				tc.Skipped = &junitSkipped{Message: xmlText("info: "+msg, false)}
				s.Skipped++
			} else {
				tc.Failure = &junitProblem{Message: xmlText(msg, false), Type: c.Severity.String(), Text: xmlText(text, true)}
				s.Failures++
			}
		case result.OutcomeWaived:
			// Accepted by a waiver: not a failure, and the reason is what
			// CI shows next to the skip.
			tc.Skipped = &junitSkipped{Message: xmlText(waivedMessage(ix, c), false)}
			s.Skipped++
		default:
			// skip, and any outcome this version does not know:
			// not judged, so neither passed nor failed.
			tc.Skipped = &junitSkipped{Message: xmlText(c.Detail, false)}
			s.Skipped++
		}
		s.Cases = append(s.Cases, tc)
	}
}

// clusterSuite is the "cluster" suite: the cluster-scoped check results
// and, when the cluster probes did not run, why. There is none when the
// run had neither.
func clusterSuite(ix *junitIndex, target []junitProperty, timestamp string) (junitSuite, bool) {
	r := ix.r
	s := junitSuite{Name: "cluster", Time: "0.000", Timestamp: timestamp}
	c := r.Cluster
	if c != nil {
		s.Properties = []junitProperty{{Name: "status", Value: xmlText(string(c.Status), false)}}
		if c.Node != "" {
			s.Properties = append(s.Properties, junitProperty{Name: "node", Value: xmlText(c.Node, false)})
		}
		if c.Status != result.ClusterOK {
			msg := string(c.Status)
			if c.Message != "" {
				msg += ": " + c.Message
			}
			s.Cases = append(s.Cases, junitCase{Name: "probes", Classname: junitClassname("cluster"), Skipped: &junitSkipped{Message: xmlText(msg, false)}})
			s.Skipped++
		}
	}
	s.Properties = append(s.Properties, target...)
	addCases(&s, ix, result.ClusterNode)
	if c == nil && len(s.Cases) == 0 {
		return s, false
	}
	s.Tests = len(s.Cases)
	if c != nil {
		var out strings.Builder
		for _, k := range clusterFacts(c) {
			out.WriteString(k + "=" + c.Facts[k] + "\n")
		}
		for _, k := range c.UnjoinedK8sNodes() {
			out.WriteString("# kubernetes node " + result.UnjoinedLabel(r.Limit != nil) + ": " + k + "\n")
		}
		for _, p := range c.Probes {
			if p.Stderr != "" {
				fmt.Fprintf(&out, "# probe %s %s (exit %d) stderr: %s\n", p.ID, p.Status, p.ExitCode, p.Stderr)
			}
		}
		if out.Len() > 0 {
			s.SystemOut = &junitText{Text: xmlText(out.String(), true)}
		}
	}
	return s, true
}

// waivedMessage is "waived: reason (until YYYY-MM-DD)" from the waived
// finding that covers c, or the result's own detail when a saved report
// lost the finding.
func waivedMessage(ix *junitIndex, c result.CheckResult) string {
	for _, i := range ix.findings[c.Node] {
		if f := ix.r.Findings[i]; f.Waived != nil && f.Check == c.Check {
			return fmt.Sprintf("waived: %s (until %s)", f.Waived.Reason, f.Waived.Expires)
		}
	}
	return "waived: " + c.Detail
}

// failureText is the failure message (the finding's summary, or the check's
// detail when no finding names this node) and its body: what was seen, the
// probable cause, the evidence about this node and the fix.
func failureText(ix *junitIndex, c result.CheckResult) (msg, text string) {
	var f *result.Finding
	fIndex := -1
	var cause *result.Finding
	for _, i := range ix.findings[c.Node] {
		fi := &ix.r.Findings[i]
		if fi.Waived != nil {
			// A partly waived finding is split; this node is in the other part.
			continue
		}
		if fi.Check == c.Check && f == nil {
			f, fIndex = fi, i
		}
		if fi.Cause != nil && explains(fi.Cause, c.Check) && cause == nil {
			cause = fi
		}
	}
	var b strings.Builder
	if c.Detail != "" {
		b.WriteString(c.Detail + "\n")
	}
	if cause != nil {
		fmt.Fprintf(&b, "%s\n  %s\n", cause.Cause.Headline(), causeStats(cause.Cause))
	}
	msg = c.Detail
	if f == nil {
		return msg, b.String()
	}
	if f.Summary != "" {
		msg = f.Summary
	}
	if ev := ix.nodeEvidence(fIndex, c.Node); len(ev) > 0 {
		b.WriteString("evidence:\n")
		for _, e := range ev {
			b.WriteString("  " + e + "\n")
		}
	}
	if f.Remediation != "" {
		b.WriteString("remediation: " + f.Remediation + "\n")
	}
	return msg, b.String()
}

// nodeEvidence keeps the evidence lines of finding fi about this node and
// those about the fleet, in their order, dropping "other-node: ..." lines:
// a test case is about one node.
func (ix *junitIndex) nodeEvidence(fi int, node string) []string {
	lines := ix.r.Findings[fi].Evidence
	e := ix.evidence[fi]
	if e == nil {
		e = &evidenceIndex{byNode: map[string][]int{}}
		for i, l := range lines {
			if name, _, ok := strings.Cut(l, ": "); ok && ix.names[name] {
				e.byNode[name] = append(e.byNode[name], i)
			} else {
				e.fleet = append(e.fleet, i)
			}
		}
		ix.evidence[fi] = e
	}
	own := e.byNode[node]
	out := make([]string, 0, len(e.fleet)+len(own))
	for a, b := 0, 0; a < len(e.fleet) || b < len(own); {
		if b == len(own) || a < len(e.fleet) && e.fleet[a] < own[b] {
			out = append(out, lines[e.fleet[a]])
			a++
		} else {
			out = append(out, lines[own[b]])
			b++
		}
	}
	return out
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

// junitClassname is a suite's name as a test case's classname. Jenkins
// reads a classname as package.Class and splits it at the last dot, so
// worker-1.example.com would show as class "com" in package
// "worker-1.example"; dots become underscores there. The suite name and
// hostname keep the node's name exactly.
func junitClassname(suite string) string {
	return strings.ReplaceAll(suite, ".", "_")
}
